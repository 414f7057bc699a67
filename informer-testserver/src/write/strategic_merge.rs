//! Strategic merge patches (`application/strategic-merge-patch+json`), as apimachinery's
//! `strategicpatch` applies them to built-in types: objects merge field by field (`null`
//! deletes), lists with a patch merge key merge item by item (`containers` by `name`), lists of
//! unique values (`finalizers`) are unions, other lists are replaced; and the directives
//! `$patch` (`replace`, `merge`, `delete`), `$retainKeys`, `$setElementOrder/<list>` and
//! `$deleteFromPrimitiveList/<list>`.
//!
//! The strategies come from the generated table of [`builtin_schema`](crate::admission::builtin_schema);
//! custom resources have none, and kube-apiserver refuses strategic merge patches for them.

use serde_json::{Map, Value};

use crate::admission::builtin_schema::{self, Strategy, TypeInfo};
use crate::status::ApiError;

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// Errors of a strategic merge patch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Error {
    /// A directive has a value it cannot have.
    #[error("failed to apply the strategic merge patch: {0}")]
    InvalidDirective(String),
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        ApiError::bad_request(error.to_string())
    }
}

/// The 415 kube-apiserver answers a strategic merge patch of a type it has no schema for.
pub(crate) fn unsupported() -> ApiError {
    ApiError::new(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: \
         application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, \
         application/apply-patch+cbor",
    )
}

/// The root type of a built-in kind, or the 415 of a type without a built-in schema.
pub(crate) fn root_type(group: &str, version: &str, kind: &str) -> Result<&'static TypeInfo, ApiError> {
    builtin_schema::root_of(group, version, kind).ok_or_else(unsupported)
}

/// Applies `patch` to `target`, an object of the type `root`.
pub(crate) fn apply(target: &mut Value, patch: &Value, root: &'static TypeInfo) -> Result<(), Error> {
    let Value::Object(patch) = patch else {
        return Err(Error::InvalidDirective("the patch is not an object".into()));
    };
    let original = std::mem::take(target);
    *target = merge_map(original, patch, Some(root))?;
    Ok(())
}

fn field_of(schema: Option<&'static TypeInfo>, name: &str) -> Option<&'static builtin_schema::Field> {
    schema?.fields.iter().find(|f| f.json == name)
}

fn nested(field: Option<&'static builtin_schema::Field>) -> Option<&'static TypeInfo> {
    builtin_schema::type_info(field?.nested?)
}

/// A patch value with its directives removed, for content new to the object.
fn without_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), without_directives(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|item| item.get(PATCH).is_none())
                .map(without_directives)
                .collect(),
        ),
        other => other.clone(),
    }
}

fn merge_map(
    original: Value,
    patch: &Map<String, Value>,
    schema: Option<&'static TypeInfo>,
) -> Result<Value, Error> {
    match patch.get(PATCH).map(|p| p.as_str()) {
        Some(Some("replace")) => return Ok(without_directives(&Value::Object(patch.clone()))),
        Some(Some("delete")) => return Ok(Value::Object(Map::new())),
        Some(Some("merge")) | None => {}
        Some(other) => {
            return Err(Error::InvalidDirective(format!("unknown $patch value {other:?}")));
        }
    }
    let mut result = match original {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let keys: Vec<&str> = retain
            .as_array()
            .ok_or_else(|| Error::InvalidDirective("$retainKeys must be a list of field names".into()))?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        result.retain(|k, _| keys.contains(&k.as_str()));
    }
    for (key, value) in patch {
        if let Some(list) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let removed = value.as_array().cloned().unwrap_or_default();
            if let Some(Value::Array(items)) = result.get_mut(list) {
                items.retain(|item| !removed.contains(item));
            }
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        let field = field_of(schema, key);
        if value.is_null() {
            result.remove(key);
            continue;
        }
        let current = result.remove(key);
        let merged = merge_value(current, value, field)?;
        let deleted = value.get(PATCH).and_then(Value::as_str) == Some("delete");
        if !deleted {
            result.insert(key.clone(), merged);
        }
    }
    for (key, order) in patch {
        if let Some(list) = key.strip_prefix(SET_ELEMENT_ORDER)
            && let (Some(Value::Array(items)), Some(order)) = (result.get_mut(list), order.as_array())
        {
            let merge_key = match field_of(schema, list).map(|f| f.strategy) {
                Some(Strategy::MapList(keys)) => keys.first().copied(),
                _ => None,
            };
            reorder(items, order, merge_key);
        }
    }
    Ok(Value::Object(result))
}

fn merge_value(
    current: Option<Value>,
    patch: &Value,
    field: Option<&'static builtin_schema::Field>,
) -> Result<Value, Error> {
    let strategy = field.map_or(Strategy::Granular, |f| f.strategy);
    match (current, patch) {
        (Some(current @ Value::Object(_)), Value::Object(patch_map)) if strategy != Strategy::AtomicMap => {
            merge_map(current, patch_map, nested(field))
        }
        (Some(Value::Array(items)), Value::Array(patch_items)) => match strategy {
            Strategy::MapList(keys) => {
                merge_keyed_list(items, patch_items, keys.first().copied(), nested(field))
            }
            Strategy::SetList => Ok(union(items, patch_items)),
            _ => Ok(without_directives(patch)),
        },
        (None, Value::Object(patch_map)) if patch_map.get(PATCH).is_some() => {
            merge_map(Value::Object(Map::new()), patch_map, nested(field))
        }
        _ => Ok(without_directives(patch)),
    }
}

fn union(mut items: Vec<Value>, patch: &[Value]) -> Value {
    for value in patch {
        if !items.contains(value) {
            items.push(value.clone());
        }
    }
    Value::Array(items)
}

fn merge_keyed_list(
    mut items: Vec<Value>,
    patch: &[Value],
    merge_key: Option<&str>,
    item_type: Option<&'static TypeInfo>,
) -> Result<Value, Error> {
    let Some(merge_key) = merge_key else {
        return Ok(without_directives(&Value::Array(patch.to_vec())));
    };
    if patch
        .iter()
        .any(|p| p.get(PATCH).and_then(Value::as_str) == Some("replace"))
    {
        return Ok(without_directives(&Value::Array(patch.to_vec())));
    }
    for patch_item in patch {
        let Some(patch_map) = patch_item.as_object() else {
            return Err(Error::InvalidDirective(format!(
                "an item of a list merged by {merge_key:?} is not an object: {patch_item}"
            )));
        };
        let key = patch_map.get(merge_key).cloned().ok_or_else(|| {
            Error::InvalidDirective(format!(
                "an item of the patch has no merge key {merge_key:?}: {patch_item}"
            ))
        })?;
        let position = items.iter().position(|item| item.get(merge_key) == Some(&key));
        match (patch_map.get(PATCH).and_then(Value::as_str), position) {
            (Some("delete"), Some(at)) => {
                items.remove(at);
            }
            (Some("delete"), None) => {}
            (_, Some(at)) => {
                let current = std::mem::take(&mut items[at]);
                items[at] = merge_map(current, patch_map, item_type)?;
            }
            (_, None) => items.push(without_directives(patch_item)),
        }
    }
    Ok(Value::Array(items))
}

/// Orders `items` as `order` lists them (by merge key, or by value for scalars); items it does
/// not list keep their relative order after those it lists.
fn reorder(items: &mut [Value], order: &[Value], merge_key: Option<&str>) {
    let rank = |item: &Value| {
        order.iter().position(|o| match merge_key {
            Some(key) => o.get(key).is_some() && o.get(key) == item.get(key),
            None => o == item,
        })
    };
    items.sort_by_key(|item| rank(item).unwrap_or(usize::MAX));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deployment() -> &'static TypeInfo {
        root_type("apps", "v1", "Deployment").expect("deployments are built in")
    }

    fn patched(original: Value, patch: Value) -> Value {
        let mut target = original;
        apply(&mut target, &patch, deployment()).expect("applied");
        target
    }

    fn pod_spec(containers: Value) -> Value {
        json!({"spec": {"template": {"spec": {"containers": containers}}}})
    }

    /// strategicpatch's TestStrategicMergePatch "Add a new item to a merging list".
    #[test]
    fn keyed_lists_merge_by_their_patch_merge_key() {
        let original = pod_spec(json!([{"name": "a", "image": "x"}]));
        let added = patched(original.clone(), pod_spec(json!([{"name": "b", "image": "y"}])));
        assert_eq!(
            added,
            pod_spec(json!([{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]))
        );
        let changed = patched(original, pod_spec(json!([{"name": "a", "image": "z"}])));
        assert_eq!(changed, pod_spec(json!([{"name": "a", "image": "z"}])));
    }

    /// "Delete an item from a merging list" with `$patch: delete`.
    #[test]
    fn patch_delete_removes_an_item() {
        let original = pod_spec(json!([{"name": "a"}, {"name": "b"}]));
        let patch = pod_spec(json!([{"name": "a", "$patch": "delete"}]));
        assert_eq!(patched(original, patch), pod_spec(json!([{"name": "b"}])));
    }

    /// "Replace a merging list" with a `$patch: replace` item.
    #[test]
    fn patch_replace_replaces_a_list_or_a_map() {
        let original = pod_spec(json!([{"name": "a"}, {"name": "b"}]));
        let patch = pod_spec(json!([{"name": "c"}, {"$patch": "replace"}]));
        assert_eq!(patched(original, patch), pod_spec(json!([{"name": "c"}])));
        let original = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
        let patch = json!({"metadata": {"labels": {"c": "3", "$patch": "replace"}}});
        assert_eq!(
            patched(original, patch),
            json!({"metadata": {"labels": {"c": "3"}}})
        );
    }

    /// `$setElementOrder` keeps the order the client sent (what `kubectl apply` sends).
    #[test]
    fn set_element_order_orders_the_merged_list() {
        let original = pod_spec(json!([{"name": "a"}, {"name": "b"}]));
        let mut patch = pod_spec(json!([{"name": "c"}]));
        patch["spec"]["template"]["spec"]["$setElementOrder/containers"] =
            json!([{"name": "c"}, {"name": "b"}, {"name": "a"}]);
        assert_eq!(
            patched(original, patch),
            pod_spec(json!([{"name": "c"}, {"name": "b"}, {"name": "a"}]))
        );
    }

    /// Sets union; `$deleteFromPrimitiveList` removes values.
    #[test]
    fn primitive_sets_merge_and_lose_values() {
        let original = json!({"metadata": {"finalizers": ["a", "b"]}});
        let merged = patched(original.clone(), json!({"metadata": {"finalizers": ["c"]}}));
        assert_eq!(merged, json!({"metadata": {"finalizers": ["a", "b", "c"]}}));
        let removed = patched(
            original,
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        );
        assert_eq!(removed, json!({"metadata": {"finalizers": ["b"]}}));
    }

    /// `$retainKeys` clears the fields of a union it does not list (a deployment's strategy).
    #[test]
    fn retain_keys_clears_unlisted_fields() {
        let original =
            json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
        assert_eq!(
            patched(original, patch),
            json!({"spec": {"strategy": {"type": "Recreate"}}})
        );
    }

    /// Atomic lists are replaced; nulls delete; nested objects merge.
    #[test]
    fn atomic_lists_are_replaced_and_nulls_delete() {
        let original = pod_spec(json!([{"name": "a", "args": ["1", "2"], "image": "x"}]));
        let patch = pod_spec(json!([{"name": "a", "args": ["3"], "image": null}]));
        assert_eq!(
            patched(original, patch),
            pod_spec(json!([{"name": "a", "args": ["3"]}]))
        );
    }

    #[test]
    fn custom_types_have_no_strategic_merge() {
        assert_eq!(
            root_type("example.com", "v1", "Widget")
                .expect_err("no schema")
                .code,
            415
        );
    }
}
