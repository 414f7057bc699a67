//! Patches: JSON merge patch (RFC 7386) and JSON patch (RFC 6902); strategic merge patches are
//! in [`strategic_merge`](crate::write::strategic_merge), server-side apply in
//! [`field_ownership`](crate::admission::field_ownership).

use serde_json::Value;

/// Errors of patch application.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PatchError {
    /// The patch document is not valid for its type.
    #[error("failed to decode the patch: {0}")]
    Decode(String),
    /// An operation of a JSON patch cannot be applied.
    #[error("failed to apply the JSON patch: {0}")]
    Apply(String),
}

/// The patch types kube-apiserver accepts, by `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchType {
    /// `application/merge-patch+json`
    Merge,
    /// `application/strategic-merge-patch+json`
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply)
    Apply,
    /// `application/json-patch+json`
    Json,
}

impl PatchType {
    /// The patch type of a `Content-Type` header.
    pub(crate) fn from_content_type(content_type: &str) -> Option<Self> {
        let mime = content_type.split(';').next().unwrap_or_default().trim();
        match mime {
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/apply-patch+yaml"
            | "application/apply-patch+json"
            | "application/apply-patch+cbor" => Some(Self::Apply),
            "application/json-patch+json" => Some(Self::Json),
            _ => None,
        }
    }
}

/// Applies a merge patch: objects merge recursively, `null` deletes, anything else replaces.
pub(crate) fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(target_map) = target {
        for (k, v) in patch_map {
            if v.is_null() {
                target_map.remove(k);
            } else {
                merge(target_map.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

/// Applies a JSON patch (a list of `add`, `remove`, `replace`, `move`, `copy`, `test` operations)
/// with the `json-patch` crate, one operation at a time.
///
/// As in kube-apiserver, a `test` of a missing member against `null` succeeds, so a patch can
/// assert that a list is still absent before creating it. On error `doc` may hold the
/// operations before the failed one; callers patch a copy.
pub(crate) fn json_patch(doc: &mut Value, patch: &Value) -> Result<(), PatchError> {
    if !patch.is_array() {
        return Err(PatchError::Decode(
            "a JSON patch must be a list of operations".into(),
        ));
    }
    let operations: Vec<json_patch::PatchOperation> =
        serde_json::from_value(patch.clone()).map_err(|e| PatchError::Decode(e.to_string()))?;
    for (index, operation) in operations.iter().enumerate() {
        if let json_patch::PatchOperation::Test(test) = operation
            && test.value.is_null()
            && doc.pointer(test.path.as_str()).is_none()
        {
            continue;
        }
        json_patch::patch(doc, std::slice::from_ref(operation)).map_err(|e| {
            PatchError::Apply(format!(
                "operation {index} ({}) at {:?}: {}",
                operation_name(operation),
                e.path.as_str(),
                e.kind
            ))
        })?;
    }
    Ok(())
}

fn operation_name(operation: &json_patch::PatchOperation) -> &'static str {
    match operation {
        json_patch::PatchOperation::Add(_) => "add",
        json_patch::PatchOperation::Remove(_) => "remove",
        json_patch::PatchOperation::Replace(_) => "replace",
        json_patch::PatchOperation::Move(_) => "move",
        json_patch::PatchOperation::Copy(_) => "copy",
        json_patch::PatchOperation::Test(_) => "test",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_rfc7386() {
        let mut doc = json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]});
        merge(&mut doc, &json!({"a": "z", "c": {"f": null}, "l": [3]}));
        assert_eq!(doc, json!({"a": "z", "c": {"d": "e"}, "l": [3]}));
        merge(&mut doc, &json!({"n": {"x": 1}}));
        assert_eq!(doc["n"], json!({"x": 1}));
    }

    #[test]
    fn json_patch_operations() {
        let mut doc = json!({"metadata": {"labels": {"a": "1"}}, "list": [1, 3]});
        json_patch(
            &mut doc,
            &json!([
                {"op": "add", "path": "/metadata/labels/b~1c", "value": "2"},
                {"op": "add", "path": "/list/1", "value": 2},
                {"op": "add", "path": "/list/-", "value": 4},
                {"op": "replace", "path": "/metadata/labels/a", "value": "x"},
                {"op": "copy", "from": "/metadata/labels/a", "path": "/copied"},
                {"op": "move", "from": "/copied", "path": "/moved"},
                {"op": "remove", "path": "/list/0"},
                {"op": "test", "path": "/moved", "value": "x"},
            ]),
        )
        .expect("patch applies");
        assert_eq!(
            doc,
            json!({"metadata": {"labels": {"a": "x", "b/c": "2"}}, "list": [2, 3, 4], "moved": "x"})
        );
        assert!(json_patch(&mut doc, &json!([{"op": "test", "path": "/moved", "value": "y"}])).is_err());
        assert!(json_patch(&mut doc, &json!([{"op": "remove", "path": "/nope"}])).is_err());
        json_patch(&mut doc, &json!([{"op": "test", "path": "/nope", "value": null}]))
            .expect("a missing member tests equal to null");
        assert!(json_patch(&mut doc, &json!([{"op": "test", "path": "/nope", "value": []}])).is_err());
        assert!(
            json_patch(
                &mut doc,
                &json!([{"op": "test", "path": "/moved", "value": null}])
            )
            .is_err()
        );
        assert!(json_patch(&mut doc, &json!({"op": "add"})).is_err());
    }

    #[test]
    fn content_types() {
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json"),
            Some(PatchType::Merge)
        );
        assert_eq!(
            PatchType::from_content_type("application/strategic-merge-patch+json; charset=utf-8"),
            Some(PatchType::Strategic)
        );
        assert_eq!(PatchType::from_content_type("application/json"), None);
    }
}
