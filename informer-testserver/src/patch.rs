//! Patches: JSON merge patch (RFC 7386) and JSON patch (RFC 6902); strategic merge patches are
//! in [`strategic_merge`](crate::strategic_merge), server-side apply in
//! [`field_ownership`](crate::field_ownership).

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
            "application/apply-patch+yaml" | "application/apply-patch+json" => Some(Self::Apply),
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

fn pointer_tokens(pointer: &str) -> Result<Vec<String>, PatchError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(PatchError::Decode(format!("invalid JSON pointer {pointer:?}")));
    };
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn parent_mut<'a>(doc: &'a mut Value, tokens: &[String]) -> Result<&'a mut Value, PatchError> {
    let mut current = doc;
    for t in tokens {
        current = match current {
            Value::Object(m) => m.get_mut(t),
            Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| PatchError::Apply(format!("path element {t:?} does not exist")))?;
    }
    Ok(current)
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), PatchError> {
    let tokens = pointer_tokens(path)?;
    let Some((last, parents)) = tokens.split_last() else {
        *doc = value;
        return Ok(());
    };
    match parent_mut(doc, parents)? {
        Value::Object(m) => {
            m.insert(last.clone(), value);
            Ok(())
        }
        Value::Array(a) => {
            let index = if last == "-" {
                a.len()
            } else {
                last.parse::<usize>()
                    .map_err(|_| PatchError::Apply(format!("invalid index {last:?}")))?
            };
            if index > a.len() {
                return Err(PatchError::Apply(format!("index {index} out of bounds")));
            }
            a.insert(index, value);
            Ok(())
        }
        _ => Err(PatchError::Apply(format!("cannot add at {path:?}"))),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, PatchError> {
    let tokens = pointer_tokens(path)?;
    let Some((last, parents)) = tokens.split_last() else {
        return Err(PatchError::Apply("cannot remove the whole document".into()));
    };
    let missing = || PatchError::Apply(format!("path {path:?} does not exist"));
    match parent_mut(doc, parents)? {
        Value::Object(m) => m.remove(last).ok_or_else(missing),
        Value::Array(a) => {
            let index = last.parse::<usize>().map_err(|_| missing())?;
            if index < a.len() {
                Ok(a.remove(index))
            } else {
                Err(missing())
            }
        }
        _ => Err(missing()),
    }
}

fn get(doc: &Value, path: &str) -> Result<Value, PatchError> {
    doc.pointer(path)
        .cloned()
        .ok_or_else(|| PatchError::Apply(format!("path {path:?} does not exist")))
}

/// Applies a JSON patch (a list of `add`, `remove`, `replace`, `move`, `copy`, `test` operations).
pub(crate) fn json_patch(doc: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let ops = patch
        .as_array()
        .ok_or_else(|| PatchError::Decode("a JSON patch must be a list".into()))?;
    for op in ops {
        let path = op["path"]
            .as_str()
            .ok_or_else(|| PatchError::Decode("operation without path".into()))?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or_else(|| PatchError::Decode("operation without value".into()))
        };
        let from = || {
            op["from"]
                .as_str()
                .ok_or_else(|| PatchError::Decode("operation without from".into()))
        };
        match op["op"].as_str() {
            Some("add") => add(doc, path, value()?)?,
            Some("remove") => {
                remove(doc, path)?;
            }
            Some("replace") => {
                remove(doc, path)?;
                add(doc, path, value()?)?;
            }
            Some("move") => {
                let v = remove(doc, from()?)?;
                add(doc, path, v)?;
            }
            Some("copy") => {
                let v = get(doc, from()?)?;
                add(doc, path, v)?;
            }
            Some("test") => {
                // As in kube-apiserver, a missing member tests equal to `null`, so a patch can
                // assert that a list is still absent before creating it.
                pointer_tokens(path)?;
                let expected = value()?;
                let actual = doc.pointer(path).cloned().unwrap_or(Value::Null);
                if actual != expected {
                    return Err(PatchError::Apply(format!("test failed at {path:?}")));
                }
            }
            other => return Err(PatchError::Decode(format!("unknown operation {other:?}"))),
        }
    }
    Ok(())
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
