//! Reading and setting the fields of a JSON object the way kube-apiserver's defaulting sees a
//! Go struct: an absent field and a `null` one are both unset, and a value of the wrong shape
//! is left alone (decoding refuses it before defaulting would run).

use kube_quantity::ParsedQuantity;
use serde_json::{Map, Value};

/// Whether `parent[field]` is unset: absent or `null`.
pub(super) fn is_unset(parent: &Value, field: &str) -> bool {
    parent.get(field).is_none_or(Value::is_null)
}

/// Sets `parent[field]` to `value()` when it is unset and `parent` is an object.
pub(super) fn default(parent: &mut Value, field: &str, value: impl FnOnce() -> Value) {
    if let Some(map) = parent.as_object_mut()
        && map.get(field).is_none_or(Value::is_null)
    {
        map.insert(field.to_owned(), value());
    }
}

/// The object at `parent[field]`, created empty when unset (a Go struct field, never nil);
/// `None` when `parent` is no object or the field holds something else.
pub(super) fn object<'a>(parent: &'a mut Value, field: &str) -> Option<&'a mut Value> {
    default(parent, field, || Value::Object(Map::new()));
    parent.get_mut(field).filter(|value| value.is_object())
}

/// The object at `parent[field]` when one is set (a Go pointer field: nil stays nil).
pub(super) fn set_object<'a>(parent: &'a mut Value, field: &str) -> Option<&'a mut Value> {
    parent.get_mut(field).filter(|value| value.is_object())
}

/// The objects in the array at `parent[field]`; none when it is unset or no array.
pub(super) fn items<'a>(parent: &'a mut Value, field: &str) -> impl Iterator<Item = &'a mut Value> {
    parent
        .get_mut(field)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter(|item| item.is_object())
}

/// The text at `parent[field]`, empty when unset or no string.
pub(super) fn text<'a>(parent: &'a Value, field: &str) -> &'a str {
    parent.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// The quantity a field holds (`"500m"`, `"1Gi"`); `None` when it holds none.
pub(crate) fn quantity(value: &Value) -> Option<ParsedQuantity> {
    value
        .as_str()
        .and_then(|text| ParsedQuantity::try_from(text).ok())
}

/// Whether two fields hold the same amount (`1` and `1000m`); as text when one is no
/// quantity.
pub(crate) fn same_quantity(a: &Value, b: &Value) -> bool {
    match (quantity(a), quantity(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_null_field_is_unset_and_gets_the_default() {
        let mut parent = json!({"a": null, "b": "kept"});
        default(&mut parent, "a", || json!(1));
        default(&mut parent, "b", || json!("replaced"));
        default(&mut parent, "c", || json!(true));
        assert_eq!(parent, json!({"a": 1, "b": "kept", "c": true}));
    }

    #[test]
    fn values_of_the_wrong_shape_are_left_alone() {
        let mut parent = json!({"spec": "text", "list": {"not": "an array"}});
        assert!(object(&mut parent, "spec").is_none());
        assert_eq!(items(&mut parent, "list").count(), 0);
        let mut text = json!("no object");
        default(&mut text, "a", || json!(1));
        assert_eq!(text, json!("no object"));
        assert_eq!(parent, json!({"spec": "text", "list": {"not": "an array"}}));
    }

    #[test]
    fn a_struct_field_is_created_and_a_pointer_field_is_not() {
        let mut parent = json!({});
        assert!(set_object(&mut parent, "pointer").is_none());
        assert!(object(&mut parent, "struct").is_some());
        assert_eq!(parent, json!({"struct": {}}));
    }
}
