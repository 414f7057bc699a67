//! `fieldValidation=Ignore|Warn|Strict` on create, update and patch, as kube-apiserver does it:
//! fields the type does not have and fields given twice in one JSON object are refused with
//! 400 (`Strict`, what kubectl asks for), reported in `Warning` headers (`Warn`, the default)
//! or passed over (`Ignore`); unless refused, unknown fields are dropped, as decoding into the
//! type drops them. Built-in types know their fields from the generated
//! [`builtin_schema`](crate::admission::builtin_schema) table; custom resources are checked and pruned
//! by their CRD's schema ([`crd_schema`](crate::admission::crd_schema)).

use std::collections::{HashMap, HashSet};

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::admission::builtin_schema::{self, TypeInfo};
use crate::registry::ResourceType;
use crate::status::ApiError;

/// What to do about unknown and duplicate fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Mode {
    /// Drop them silently.
    Ignore,
    /// Drop them and say so in `Warning` headers.
    #[default]
    Warn,
    /// Refuse the request.
    Strict,
}

impl Mode {
    /// The `fieldValidation` query parameter (`Warn` when absent) of a write whose options are
    /// `options` (`CreateOptions`, `UpdateOptions`, `PatchOptions`); another value is the 422
    /// of invalid options.
    pub(crate) fn of(query: &HashMap<String, String>, options: &str) -> Result<Self, ApiError> {
        match query.get("fieldValidation").map(String::as_str) {
            None | Some("") | Some("Warn") => Ok(Self::Warn),
            Some("Ignore") => Ok(Self::Ignore),
            Some("Strict") => Ok(Self::Strict),
            Some(other) => Err(ApiError::new(
                422,
                "Invalid",
                format!(
                    "{options}.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: {other:?}: supported values: \"Ignore\", \"Strict\", \"Warn\""
                ),
            )),
        }
    }
}

/// The problems found in a body, as kube-apiserver words them (`unknown field "spec.foo"`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Findings(pub(crate) Vec<String>);

impl Findings {
    /// By `mode`: the 400 of `Strict` for an object of `rt`, the warnings of `Warn`, nothing
    /// for `Ignore`.
    pub(crate) fn resolve(self, mode: Mode, rt: &ResourceType) -> Result<Vec<String>, ApiError> {
        match mode {
            _ if self.0.is_empty() => Ok(Vec::new()),
            Mode::Strict => Err(ApiError::bad_request(format!(
                "{kind} in version {version:?} cannot be handled as a {kind}: strict decoding error: {}",
                self.0.join(", "),
                kind = rt.kind,
                version = rt.version,
            ))),
            Mode::Warn => Ok(self.0),
            Mode::Ignore => Ok(Vec::new()),
        }
    }
}

/// The fields a JSON document gives twice in one object (`duplicate field "metadata.name"`).
pub(crate) fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let _ = Duplicates {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut deserializer);
    found
        .into_iter()
        .map(|path| format!("duplicate field {path:?}"))
        .collect()
}

/// Walks a document, recording the paths of keys seen twice in one object.
struct Duplicates<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Duplicates<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Duplicates<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = join(&self.path, &key);
            if !seen.insert(key) {
                self.found.push(path.clone());
            }
            map.next_value_seed(Duplicates {
                path,
                found: &mut *self.found,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while seq
            .next_element_seed(Duplicates {
                path: format!("{}[{index}]", self.path),
                found: &mut *self.found,
            })?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

/// The fields of `object` its built-in type does not have, removed from it; `apiVersion` and
/// `kind` are known at the root, keys starting with `$` (patch directives) everywhere.
pub(crate) fn unknown_fields(object: &mut Value, root: &'static TypeInfo) -> Vec<String> {
    let mut found = Vec::new();
    if let Value::Object(map) = object {
        map.retain(|key, value| {
            if key == "apiVersion" || key == "kind" || key.starts_with('$') {
                return true;
            }
            walk_field(root, key, value, key.clone(), &mut found)
        });
    }
    found
        .into_iter()
        .map(|path| format!("unknown field {path:?}"))
        .collect()
}

/// Checks one field of an object of type `owner`; false when the type does not have it.
fn walk_field(
    owner: &'static TypeInfo,
    key: &str,
    value: &mut Value,
    path: String,
    found: &mut Vec<String>,
) -> bool {
    let Some(field) = owner.fields.iter().find(|f| f.json == key) else {
        found.push(path);
        return false;
    };
    if let Some(nested) = field.nested.and_then(builtin_schema::type_info) {
        walk_value(nested, value, &path, field.strategy, found);
    }
    true
}

fn walk_value(
    ty: &'static TypeInfo,
    value: &mut Value,
    path: &str,
    strategy: builtin_schema::Strategy,
    found: &mut Vec<String>,
) {
    match value {
        Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                walk_value(ty, item, &format!("{path}[{index}]"), strategy, found);
            }
        }
        Value::Object(map) if strategy == builtin_schema::Strategy::GranularMap => {
            for (key, item) in map.iter_mut() {
                walk_object(ty, item, &format!("{path}[{key}]"), found);
            }
        }
        object @ Value::Object(_) => walk_object(ty, object, path, found),
        _ => {}
    }
}

fn walk_object(ty: &'static TypeInfo, value: &mut Value, path: &str, found: &mut Vec<String>) {
    if let Value::Object(map) = value {
        map.retain(|key, child| key.starts_with('$') || walk_field(ty, key, child, join(path, key), found));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn duplicates_are_found_at_every_depth() {
        let body = br#"{"metadata": {"name": "a", "name": "b"}, "spec": {"containers": [{"image": "x", "image": "y"}]}}"#;
        assert_eq!(
            duplicate_fields(body),
            [
                "duplicate field \"metadata.name\"",
                "duplicate field \"spec.containers[0].image\""
            ]
        );
        assert!(duplicate_fields(br#"{"a": {"b": 1}, "c": {"b": 2}}"#).is_empty());
    }

    #[test]
    fn unknown_fields_are_reported_and_dropped() {
        let root = builtin_schema::root_of("apps", "v1", "Deployment").expect("built in");
        let mut object = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"any": "label"}, "colour": "blue"},
            "spec": {"replicas": 1, "replicaz": 2, "template": {"spec": {"containers": [{"name": "c", "imagee": "x"}]}}},
            "extra": true,
        });
        let found = unknown_fields(&mut object, root);
        assert_eq!(
            found,
            [
                "unknown field \"extra\"",
                "unknown field \"metadata.colour\"",
                "unknown field \"spec.replicaz\"",
                "unknown field \"spec.template.spec.containers[0].imagee\"",
            ]
        );
        assert_eq!(
            object,
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "labels": {"any": "label"}},
                "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}},
            })
        );
    }

    #[test]
    fn modes_decide() {
        let pods = ResourceType::new("", "v1", "Pod", "pods", true);
        let findings = Findings(vec!["unknown field \"x\"".into()]);
        let error = findings.clone().resolve(Mode::Strict, &pods).expect_err("strict");
        assert_eq!(
            (error.code, error.message.as_str()),
            (
                400,
                "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"x\""
            )
        );
        assert_eq!(
            findings.clone().resolve(Mode::Warn, &pods).expect("warned").len(),
            1
        );
        assert!(findings.resolve(Mode::Ignore, &pods).expect("ignored").is_empty());
        let bad: HashMap<String, String> = [("fieldValidation".to_owned(), "Loose".to_owned())].into();
        let error = Mode::of(&bad, "CreateOptions").expect_err("invalid");
        assert_eq!(error.code, 422);
        assert!(
            error.message.starts_with("CreateOptions.meta.k8s.io"),
            "{}",
            error.message
        );
    }
}
