//! Object metadata validation as kube-apiserver's `ValidateObjectMeta` and
//! `ValidateObjectMetaUpdate` do it, for the names and the owner references.
//!
//! Names, on create, per kind: a DNS-1123 label for namespaces, a DNS-1035 label for services,
//! a path segment for RBAC roles and bindings, a DNS-1123 subdomain for everything else
//! (custom resources included). A `generateName` is checked as a prefix (a trailing `-`
//! allowed), at `metadata.generateName`.
//!
//! Owner references, on create and update, as apimachinery's `ValidateOwnerReferences` of
//! Kubernetes 1.37 checks them: each needs an `apiVersion` of the form `<group>/<version>` or
//! `<version>` (split as `schema.ParseGroupVersion` splits it), a `kind`, a `name` and a
//! `uid`; a core `v1` Event cannot be an owner; at most one reference has `controller: true`.

use informer_apimachinery::api_version::parse_group_version;
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
        ("apiregistration.k8s.io", "apiservices") => NameRule::PathSegment,
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
#[cfg(test)]
fn validate_name(rt: &ResourceType, generate_name: Option<&str>, name: &str) -> Result<(), ApiError> {
    let causes = name_causes(rt, generate_name, name);
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid_causes(rt, name, &causes))
    }
}

/// The problems of the `generateName` (as a prefix) and the name of a new object of `rt`, one
/// cause each; the name's are left out when the prefix has some.
fn name_causes(rt: &ResourceType, generate_name: Option<&str>, name: &str) -> Vec<FieldCause> {
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
    causes
}

/// The owners no object may have, as apimachinery's `BannedOwners`: group, version, kind.
const BANNED_OWNERS: &[(&str, &str, &str)] = &[("", "v1", "Event")];

/// The problems of `object`'s `metadata.ownerReferences`, in kube-apiserver's order and with
/// its messages: per reference its apiVersion, kind, name, uid and a banned owner, then a
/// second controller.
fn owner_reference_causes(object: &Value) -> Vec<FieldCause> {
    let Some(references) = object["metadata"]["ownerReferences"].as_array() else {
        return Vec::new();
    };
    let mut causes = Vec::new();
    let mut first_controller: Option<String> = None;
    for (index, reference) in references.iter().enumerate() {
        let path = format!("metadata.ownerReferences[{index}]");
        let text = |field: &str| reference[field].as_str().unwrap_or_default();
        let api_version = text("apiVersion");
        let group_version = parse_group_version(api_version);
        if api_version.is_empty() {
            causes.push(FieldCause::required(
                &format!("{path}.apiVersion"),
                "must not be empty",
            ));
        } else if group_version.is_none_or(|(_, version)| version.is_empty()) {
            causes.push(FieldCause::invalid(
                &format!("{path}.apiVersion"),
                api_version,
                "must be <group>/<version> or <version>",
            ));
        }
        for field in ["kind", "name", "uid"] {
            if text(field).is_empty() {
                causes.push(FieldCause::required(
                    &format!("{path}.{field}"),
                    "must not be empty",
                ));
            }
        }
        let (group, version) = group_version.unwrap_or_default();
        let kind = text("kind");
        if BANNED_OWNERS.contains(&(group, version, kind)) {
            causes.push(FieldCause::invalid_json(
                &path,
                &go_owner_reference(reference),
                &format!("{group}/{version}, Kind={kind} is disallowed from being an owner"),
            ));
        }
        if reference["controller"].as_bool() == Some(true) {
            let controller = format!("{kind}/{}", text("name"));
            match &first_controller {
                Some(first) => {
                    let all: Vec<String> = references.iter().map(go_owner_reference).collect();
                    causes.push(FieldCause::invalid_json(
                        "metadata.ownerReferences",
                        &format!("[{}]", all.join(",")),
                        &format!(
                            "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {controller}"
                        ),
                    ));
                }
                None => first_controller = Some(controller),
            }
        }
    }
    causes
}

/// An owner reference as Go's `encoding/json` writes a `metav1.OwnerReference`: `apiVersion`,
/// `kind`, `name` and `uid` always, then `controller` and `blockOwnerDeletion` when set.
fn go_owner_reference(reference: &Value) -> String {
    let mut fields: Vec<String> = ["apiVersion", "kind", "name", "uid"]
        .iter()
        .map(|field| {
            let value = reference[*field].as_str().unwrap_or_default();
            format!("\"{field}\":{}", go_json_string(value))
        })
        .collect();
    for field in ["controller", "blockOwnerDeletion"] {
        if let Some(flag) = reference[field].as_bool() {
            fields.push(format!("\"{field}\":{flag}"));
        }
    }
    format!("{{{}}}", fields.join(","))
}

/// A JSON string as Go's `encoding/json` writes it: serde_json's escapes, plus `<`, `>`, `&`,
/// U+2028 and U+2029 as `\u` escapes.
fn go_json_string(value: &str) -> String {
    let json = Value::String(value.to_owned()).to_string();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The object's name for a 422 about it.
fn object_name(object: &Value) -> &str {
    meta_str(object, "name").unwrap_or_default()
}

/// Object metadata as a write plugin: a new object's name (and `generateName`) must suit its
/// kind, and a new or replacing object's owner references must be well-formed; every problem
/// is a cause of one 422 Invalid.
pub(crate) struct ObjectMetadata;

impl Plugin for ObjectMetadata {
    fn admit_create(
        &self,
        _state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        let name = object_name(object);
        let mut causes = name_causes(rt, meta_str(object, "generateName"), name);
        causes.extend(owner_reference_causes(object));
        if causes.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid_causes(rt, name, &causes))
        }
    }

    fn admit_update(
        &self,
        _state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        _old: &Value,
        new: &mut Value,
    ) -> Result<(), ApiError> {
        let causes = owner_reference_causes(new);
        if causes.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid_causes(rt, object_name(new), &causes))
        }
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

    fn owner(api_version: &str, kind: &str, uid: &str, controller: Option<bool>) -> Value {
        let mut reference =
            serde_json::json!({"apiVersion": api_version, "kind": kind, "name": "name", "uid": uid});
        if let Some(controller) = controller {
            reference["controller"] = Value::Bool(controller);
        }
        reference
    }

    /// apimachinery: `TestValidateObjectMetaOwnerReferences` (each case by its description;
    /// the first cause's message holds the expected text).
    #[test]
    fn owner_references_as_validate_object_meta_checks_them() {
        let custom = |uid: &str, controller: Option<bool>| {
            owner("customresourceVersion", "customresourceKind", uid, controller)
        };
        let numbered = |kind: &str, uid: &str, controller: Option<bool>| {
            owner("customresourceVersion", kind, uid, controller)
        };
        let cases: Vec<(&str, Vec<Value>, Option<&str>)> = vec![
            (
                "simple success - third party extension.",
                vec![custom("1", None)],
                None,
            ),
            (
                "simple failures - event shouldn't be set as an owner",
                vec![owner("v1", "Event", "1", None)],
                Some("is disallowed from being an owner"),
            ),
            (
                "simple failures - invalid apiVersion with too many slashes",
                vec![owner("a/b/c", "Pod", "1", None)],
                Some("must be <group>/<version> or <version>"),
            ),
            (
                "simple failures - invalid apiVersion with empty version",
                vec![owner("foo/", "Pod", "1", None)],
                Some("must be <group>/<version> or <version>"),
            ),
            (
                "simple success - apiVersion with no slashes (legacy core group)",
                vec![owner("v1", "Pod", "1", None)],
                None,
            ),
            (
                "simple controller ref success - one reference with Controller set",
                vec![
                    custom("1", Some(false)),
                    custom("2", Some(true)),
                    custom("3", Some(false)),
                    custom("4", None),
                ],
                None,
            ),
            (
                "simple controller ref failure - two references with Controller set",
                vec![
                    numbered("customresourceKind1", "1", Some(false)),
                    numbered("customresourceKind2", "2", Some(true)),
                    numbered("customresourceKind3", "3", Some(true)),
                    numbered("customresourceKind4", "4", None),
                ],
                Some(
                    "Only one reference can have Controller set to true. Found \"true\" in references for customresourceKind2/name and customresourceKind3/name",
                ),
            ),
        ];
        for (description, references, expected) in cases {
            let object = serde_json::json!({"metadata": {"ownerReferences": references}});
            let causes = owner_reference_causes(&object);
            match expected {
                None => assert!(causes.is_empty(), "{description}: {:?}", causes[0].detail),
                Some(text) => {
                    let first = causes
                        .first()
                        .unwrap_or_else(|| panic!("{description}: no error"));
                    assert!(first.detail.contains(text), "{description}: {}", first.detail);
                }
            }
        }
        assert!(owner_reference_causes(&serde_json::json!({"metadata": {}})).is_empty());
    }

    /// The causes' fields: indexed per reference, the list itself for a second controller.
    #[test]
    fn owner_reference_causes_name_their_fields() {
        let object = serde_json::json!({"metadata": {"ownerReferences": [
            owner("v1", "Pod", "1", Some(true)),
            {"kind": "", "controller": true},
        ]}});
        let fields: Vec<String> = owner_reference_causes(&object)
            .into_iter()
            .map(|cause| cause.field)
            .collect();
        assert_eq!(
            fields,
            [
                "metadata.ownerReferences[1].apiVersion",
                "metadata.ownerReferences[1].kind",
                "metadata.ownerReferences[1].name",
                "metadata.ownerReferences[1].uid",
                "metadata.ownerReferences",
            ]
        );
    }

    #[test]
    fn values_are_shown_as_go_encodes_them() {
        assert_eq!(
            go_json_string("a<b>&\u{2028}\"c\n"),
            "\"a\\u003cb\\u003e\\u0026\\u2028\\\"c\\n\""
        );
        let reference = serde_json::json!({"uid": "1", "controller": false, "kind": "Event", "extra": 1});
        assert_eq!(
            go_owner_reference(&reference),
            r#"{"apiVersion":"","kind":"Event","name":"","uid":"1","controller":false}"#
        );
    }
}
