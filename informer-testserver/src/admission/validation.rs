//! Object name validation as kube-apiserver's `ValidateObjectMeta` does it per kind: a DNS-1123
//! label for namespaces, a DNS-1035 label for services, a path segment for RBAC roles and
//! bindings, a DNS-1123 subdomain for everything else (custom resources included). A
//! `generateName` is checked as a prefix (a trailing `-` allowed), at `metadata.generateName`.

use serde_json::Value;

use crate::admission::context::WriteContext;
use crate::admission::plugin::Plugin;
use crate::registry::ResourceType;
use crate::status::{ApiError, FieldCause};
use crate::storage::state::State;
use crate::storage::store::meta_str;

/// The rule a kind's names follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameRule {
    /// `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`, at most 253.
    Dns1123Subdomain,
    /// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63.
    Dns1123Label,
    /// `[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63.
    Dns1035Label,
    /// Anything but `.`, `..` and names containing `/` or `%`.
    PathSegment,
}

fn rule_for(rt: &ResourceType) -> NameRule {
    match (rt.group.as_str(), rt.plural.as_str()) {
        ("", "namespaces") => NameRule::Dns1123Label,
        ("", "services") => NameRule::Dns1035Label,
        ("rbac.authorization.k8s.io", "roles" | "clusterroles" | "rolebindings" | "clusterrolebindings") => {
            NameRule::PathSegment
        }
        _ => NameRule::Dns1123Subdomain,
    }
}

const SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MESSAGE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MESSAGE: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

fn is_label(s: &str, first: impl Fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    b.first().is_some_and(|&c| first(c))
        && b.last()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
}

fn lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// The problems of `name` under `rule` (kube-apiserver's messages, in its order).
fn problems(rule: NameRule, name: &str) -> Vec<String> {
    let too_long = |max: usize| (name.len() > max).then(|| format!("must be no more than {max} characters"));
    let mut out = Vec::new();
    match rule {
        NameRule::Dns1123Subdomain => {
            out.extend(too_long(253));
            if !name.split('.').all(|l| is_label(l, lower_alnum)) {
                out.push(SUBDOMAIN_MESSAGE.to_string());
            }
        }
        NameRule::Dns1123Label => {
            out.extend(too_long(63));
            if !is_label(name, lower_alnum) {
                out.push(LABEL_MESSAGE.to_string());
            }
        }
        NameRule::Dns1035Label => {
            out.extend(too_long(63));
            if !is_label(name, |c| c.is_ascii_lowercase()) {
                out.push(DNS1035_MESSAGE.to_string());
            }
        }
        NameRule::PathSegment => {
            if name == "." || name == ".." {
                out.push(format!("may not be '{name}'"));
            }
            for bad in ["/", "%"] {
                if name.contains(bad) {
                    out.push(format!("may not contain '{bad}'"));
                }
            }
        }
    }
    out
}

/// Checks the `generateName` (as a prefix) and the name of a new object of `rt`: 422 Invalid
/// with one cause per problem.
pub(crate) fn validate_name(
    rt: &ResourceType,
    generate_name: Option<&str>,
    name: &str,
) -> Result<(), ApiError> {
    let rule = rule_for(rt);
    let mut causes = Vec::new();
    if let Some(prefix) = generate_name.filter(|p| !p.is_empty()) {
        // A prefix may end with '-': the generated suffix follows it.
        let masked = match prefix.strip_suffix('-') {
            Some(head) => format!("{head}a"),
            None => prefix.to_string(),
        };
        for problem in problems(rule, &masked) {
            causes.push(FieldCause::invalid("metadata.generateName", prefix, &problem));
        }
    }
    if causes.is_empty() {
        for problem in problems(rule, name) {
            causes.push(FieldCause::invalid("metadata.name", name, &problem));
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid_causes(rt, name, &causes))
    }
}

/// Object names as a write plugin: a new object's name (and `generateName`) must suit its
/// kind.
pub(crate) struct ObjectNames;

impl Plugin for ObjectNames {
    fn admit_create(
        &self,
        _state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        let name = meta_str(object, "name").unwrap_or_default();
        validate_name(rt, meta_str(object, "generateName"), name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(group: &str, plural: &str) -> ResourceType {
        ResourceType::new(group, "v1", "Thing", plural, true)
    }

    #[test]
    fn rules_per_kind() {
        let cm = rt("", "configmaps");
        assert!(validate_name(&cm, None, "a.b-c").is_ok());
        assert!(validate_name(&cm, None, "A").is_err());
        assert!(validate_name(&cm, None, "a_b").is_err());
        assert!(validate_name(&cm, None, &"a".repeat(254)).is_err());
        let ns = rt("", "namespaces");
        assert!(validate_name(&ns, None, "team-1").is_ok());
        assert!(validate_name(&ns, None, "a.b").is_err());
        assert!(validate_name(&ns, None, &"a".repeat(64)).is_err());
        let svc = rt("", "services");
        assert!(validate_name(&svc, None, "web").is_ok());
        assert!(validate_name(&svc, None, "1web").is_err());
        let role = rt("rbac.authorization.k8s.io", "clusterroles");
        assert!(validate_name(&role, None, "system:admin").is_ok());
        assert!(validate_name(&role, None, "a/b").is_err());
    }

    #[test]
    fn errors_have_kube_apiserver_shape() {
        let err = validate_name(&rt("", "configmaps"), None, "Bad_Name").expect_err("invalid");
        assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
        assert_eq!(
            err.message,
            format!(
                "Thing \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": {SUBDOMAIN_MESSAGE}"
            )
        );
        let status = err.to_status();
        assert_eq!(status["details"]["causes"][0]["field"], "metadata.name");
        assert_eq!(status["details"]["causes"][0]["reason"], "FieldValueInvalid");
        let long = "a".repeat(64);
        let err = validate_name(&rt("", "namespaces"), None, &format!("{long}_")).expect_err("two problems");
        assert_eq!(
            err.to_status()["details"]["causes"].as_array().map(Vec::len),
            Some(2)
        );
        assert!(err.message.contains(": [metadata.name: Invalid value:"));
    }

    #[test]
    fn generate_name_is_a_prefix() {
        let cm = rt("", "configmaps");
        assert!(validate_name(&cm, Some("web-"), "web-x7k2p").is_ok());
        let err = validate_name(&cm, Some("Web-"), "Web-x7k2p").expect_err("invalid prefix");
        assert_eq!(
            err.to_status()["details"]["causes"][0]["field"],
            "metadata.generateName"
        );
    }
}
