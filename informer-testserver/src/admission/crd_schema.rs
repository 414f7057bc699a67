//! Custom resources checked against their CRD version's structural schema
//! (`openAPIV3Schema`), as kube-apiserver does: unknown fields pruned (kept under
//! `x-kubernetes-preserve-unknown-fields: true`; `apiVersion`, `kind` and `metadata` always
//! kept), `default`s of missing fields applied, then types, `nullable`, `required`, `enum`, `minimum`/`maximum`,
//! `minLength`/`maxLength` and `minItems`/`maxItems` validated, and `x-kubernetes-int-or-string`
//! honoured. A CRD whose schema has a property without a `type` is refused: it is not
//! structural.

use serde_json::{Map, Value};

use crate::status::FieldCause;

/// What checking an object found.
#[derive(Debug, Default)]
pub(crate) struct Checked {
    /// The unknown fields, pruned from the object.
    pub(crate) unknown: Vec<String>,
    /// The validation errors.
    pub(crate) invalid: Vec<FieldCause>,
}

/// Prunes and validates a custom resource against `schema` (its version's `openAPIV3Schema`).
pub(crate) fn check(object: &mut Value, schema: &Value) -> Checked {
    let mut checked = Checked::default();
    if let Value::Object(map) = object {
        let metadata = ["apiVersion", "kind", "metadata"];
        let kept: Map<String, Value> = metadata
            .iter()
            .filter_map(|k| map.remove(*k).map(|v| ((*k).to_owned(), v)))
            .collect();
        let mut rest = Value::Object(std::mem::take(map));
        walk(&mut rest, schema, "", &mut checked);
        if let Value::Object(rest) = rest {
            *map = rest;
        }
        map.extend(kept);
    }
    checked
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn invalid(path: &str, value: String, detail: String) -> FieldCause {
    FieldCause {
        field: path.to_owned(),
        cause_type: "Invalid value".into(),
        detail: format!("{value}: {detail}"),
    }
}

fn walk(value: &mut Value, schema: &Value, path: &str, checked: &mut Checked) {
    if schema["x-kubernetes-int-or-string"] == true {
        if !matches!(type_name(value), "integer" | "string") {
            let actual = type_name(value);
            checked.invalid.push(invalid(
                path,
                format!("{actual:?}"),
                format!("{path} in body must be of type integer-or-string: {actual:?}"),
            ));
        }
        return;
    }
    let wanted = schema["type"].as_str().unwrap_or_default();
    let actual = type_name(value);
    let matches = wanted.is_empty() || wanted == actual || (wanted == "number" && actual == "integer");
    if !matches {
        checked.invalid.push(invalid(
            path,
            format!("{actual:?}"),
            format!("{path} in body must be of type {wanted}: {actual:?}"),
        ));
        return;
    }
    check_enum(value, schema, path, checked);
    check_bounds(value, schema, path, checked);
    match value {
        Value::Object(map) => walk_object(map, schema, path, checked),
        Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                walk(item, &schema["items"], &format!("{path}[{index}]"), checked);
            }
        }
        _ => {}
    }
}

fn walk_object(map: &mut Map<String, Value>, schema: &Value, path: &str, checked: &mut Checked) {
    let properties = schema["properties"].as_object();
    let additional = &schema["additionalProperties"];
    let preserve = schema["x-kubernetes-preserve-unknown-fields"] == true;
    let embedded = schema["x-kubernetes-embedded-resource"] == true;
    // defaults of missing fields, as kube-apiserver applies them when it decodes
    for (name, property) in properties.into_iter().flatten() {
        if let Some(default) = property.get("default")
            && !map.contains_key(name)
        {
            map.insert(name.clone(), default.clone());
        }
    }
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let child_path = join(path, &key);
        let child_schema = properties
            .and_then(|p| p.get(&key))
            .or(additional.is_object().then_some(additional));
        match child_schema {
            Some(child_schema) => {
                let nullable = child_schema["nullable"] == true;
                if map[&key].is_null() && !nullable {
                    // nulls of fields that cannot be null are dropped, as pruning does
                    map.remove(&key);
                    continue;
                }
                if let Some(child) = map.get_mut(&key)
                    && !child.is_null()
                {
                    walk(child, child_schema, &child_path, checked);
                }
            }
            None if preserve
                || *additional == true
                || (embedded && matches!(key.as_str(), "apiVersion" | "kind" | "metadata")) => {}
            None => {
                map.remove(&key);
                checked.unknown.push(format!("unknown field {child_path:?}"));
            }
        }
    }
    for required in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !map.contains_key(required) {
            checked.invalid.push(FieldCause {
                field: join(path, required),
                cause_type: "Required value".into(),
                detail: String::new(),
            });
        }
    }
}

fn check_enum(value: &Value, schema: &Value, path: &str, checked: &mut Checked) {
    let Some(allowed) = schema["enum"].as_array() else {
        return;
    };
    if !allowed.contains(value) {
        let listed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        checked.invalid.push(FieldCause {
            field: path.to_owned(),
            cause_type: "Unsupported value".into(),
            detail: format!("{value}: supported values: {}", listed.join(", ")),
        });
    }
}

fn check_bounds(value: &Value, schema: &Value, path: &str, checked: &mut Checked) {
    let mut fail = |detail: String| {
        checked.invalid.push(invalid(
            path,
            value.to_string(),
            format!("{path} in body {detail}"),
        ))
    };
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema["minimum"].as_f64().filter(|min| n < *min) {
            fail(format!("should be greater than or equal to {min}"));
        }
        if let Some(max) = schema["maximum"].as_f64().filter(|max| n > *max) {
            fail(format!("should be less than or equal to {max}"));
        }
    }
    if let Some(text) = value.as_str() {
        let length = text.chars().count() as u64;
        if let Some(min) = schema["minLength"].as_u64().filter(|min| length < *min) {
            fail(format!("should be at least {min} chars long"));
        }
        if let Some(max) = schema["maxLength"].as_u64().filter(|max| length > *max) {
            fail(format!("may not be more than {max} bytes"));
        }
    }
    if let Some(items) = value.as_array() {
        let count = items.len() as u64;
        if let Some(min) = schema["minItems"].as_u64().filter(|min| count < *min) {
            fail(format!("should have at least {min} items"));
        }
        if let Some(max) = schema["maxItems"].as_u64().filter(|max| count > *max) {
            fail(format!("should have at most {max} items"));
        }
    }
}

/// The nodes of a schema missing a `type` where a structural schema needs one: the root and
/// every property, unless `x-kubernetes-int-or-string` or
/// `x-kubernetes-preserve-unknown-fields` stands in for it. Paths as kube-apiserver names them.
pub(crate) fn non_structural(schema: &Value, path: &str) -> Vec<String> {
    let mut missing = Vec::new();
    let exempt = schema["x-kubernetes-int-or-string"] == true
        || schema["x-kubernetes-preserve-unknown-fields"] == true;
    if schema["type"].as_str().is_none_or(str::is_empty) && !exempt {
        missing.push(format!("{path}.type"));
    }
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            missing.extend(non_structural(property, &format!("{path}.properties[{name}]")));
        }
    }
    if schema["items"].is_object() {
        missing.extend(non_structural(&schema["items"], &format!("{path}.items")));
    }
    if schema["additionalProperties"].is_object() {
        missing.extend(non_structural(
            &schema["additionalProperties"],
            &format!("{path}.additionalProperties"),
        ));
    }
    missing
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["size"], "properties": {
            "size": {"type": "integer", "minimum": 1},
            "mode": {"type": "string", "enum": ["fast", "safe"]},
            "port": {"x-kubernetes-int-or-string": true},
            "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        }}}})
    }

    #[test]
    fn unknown_fields_are_pruned_and_metadata_kept() {
        let mut object = json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"size": 2, "colour": "red", "extra": {"anything": [1]}},
            "status": {"ready": true},
        });
        let checked = check(&mut object, &schema());
        assert_eq!(
            checked.unknown,
            ["unknown field \"spec.colour\"", "unknown field \"status\""]
        );
        assert!(checked.invalid.is_empty());
        assert_eq!(
            object,
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                   "spec": {"size": 2, "extra": {"anything": [1]}}})
        );
    }

    #[test]
    fn values_are_validated() {
        let mut object =
            json!({"spec": {"size": "big", "mode": "slow", "port": true, "tags": ["a", "b", "c"]}});
        let checked = check(&mut object, &schema());
        let messages: Vec<String> = checked
            .invalid
            .iter()
            .map(|c| format!("{}: {}: {}", c.field, c.cause_type, c.detail))
            .collect();
        assert_eq!(
            messages,
            [
                "spec.mode: Unsupported value: \"slow\": supported values: \"fast\", \"safe\"",
                "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer-or-string: \"boolean\"",
                "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"",
                "spec.tags: Invalid value: [\"a\",\"b\",\"c\"]: spec.tags in body should have at most 2 items",
            ]
        );
        let mut missing = json!({"spec": {"size": 0}});
        let checked = check(&mut missing, &schema());
        assert_eq!(checked.invalid.len(), 1, "{:?}", checked.invalid);
        let mut no_size = json!({"spec": {}});
        assert_eq!(
            check(&mut no_size, &schema()).invalid[0].cause_type,
            "Required value"
        );
    }

    #[test]
    fn defaults_fill_missing_fields() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 1},
            "policy": {"type": "object", "default": {}, "properties": {"mode": {"type": "string", "default": "safe"}}},
        }}}});
        let mut object = json!({"spec": {}});
        assert!(check(&mut object, &schema).invalid.is_empty());
        assert_eq!(
            object,
            json!({"spec": {"replicas": 1, "policy": {"mode": "safe"}}})
        );
        let mut set = json!({"spec": {"replicas": 3}});
        check(&mut set, &schema);
        assert_eq!(set["spec"]["replicas"], 3, "a value sent is kept");
    }

    #[test]
    fn schemas_without_types_are_not_structural() {
        let schema = json!({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}, "b": {}}}}});
        assert_eq!(
            non_structural(&schema, "spec.validation.openAPIV3Schema"),
            [
                "spec.validation.openAPIV3Schema.properties[spec].type",
                "spec.validation.openAPIV3Schema.properties[spec].properties[b].type",
            ]
        );
        assert!(
            non_structural(
                &json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
                "s"
            )
            .is_empty()
        );
    }
}
