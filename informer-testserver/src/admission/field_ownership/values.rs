//! Objects read, merged and pruned along field paths: what an apply does to the live object.

use serde_json::{Map, Value};

use super::field_set::key_element;
use super::list_types::{ListType, ListTypes};

/// One element of a field path.
enum Element<'a> {
    Field(&'a str),
    Key(Map<String, Value>),
    Value(Value),
}

fn element(text: &str) -> Option<Element<'_>> {
    if let Some(field) = text.strip_prefix("f:") {
        return Some(Element::Field(field));
    }
    if let Some(key) = text.strip_prefix("k:") {
        return serde_json::from_str(key).ok().map(Element::Key);
    }
    text.strip_prefix("v:")
        .and_then(|value| serde_json::from_str(value).ok())
        .map(Element::Value)
}

fn matches_key(item: &Value, key: &Map<String, Value>) -> bool {
    key.iter()
        .all(|(field, value)| item.get(field).unwrap_or(&Value::Null) == value)
}

/// The value at a field path, if the object has one.
pub(crate) fn value_at<'a>(object: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(object, |value, text| match element(text)? {
        Element::Field(field) => value.get(field),
        Element::Key(key) => value.as_array()?.iter().find(|i| matches_key(i, &key)),
        Element::Value(wanted) => value.as_array()?.iter().find(|i| **i == wanted),
    })
}

/// Removes what a field path names: a field, a keyed item or a set item.
pub(crate) fn remove_at(object: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = object;
    for text in parents {
        let next = match element(text) {
            Some(Element::Field(field)) => node.get_mut(field),
            Some(Element::Key(key)) => node
                .as_array_mut()
                .and_then(|items| items.iter_mut().find(|i| matches_key(i, &key))),
            Some(Element::Value(wanted)) => node
                .as_array_mut()
                .and_then(|items| items.iter_mut().find(|i| **i == wanted)),
            None => None,
        };
        match next {
            Some(next) => node = next,
            None => return,
        }
    }
    match element(last) {
        Some(Element::Field(field)) => {
            if let Some(map) = node.as_object_mut() {
                map.remove(field);
            }
        }
        Some(Element::Key(key)) => {
            if let Some(items) = node.as_array_mut() {
                items.retain(|i| !matches_key(i, &key));
            }
        }
        Some(Element::Value(wanted)) => {
            if let Some(items) = node.as_array_mut() {
                items.retain(|i| *i != wanted);
            }
        }
        None => {}
    }
}

/// The live object with an applied configuration merged in: objects field by field, keyed
/// lists item by item (new items appended), sets by value, anything else replaced; a `null`
/// in the configuration removes the field.
pub(crate) fn merge_applied(
    live: &Value,
    config: &Value,
    schema_path: &mut Vec<String>,
    list_types: &dyn ListTypes,
) -> Value {
    match (live, config) {
        (Value::Object(live_map), Value::Object(config_map)) => {
            let mut merged = live_map.clone();
            for (field, value) in config_map {
                if value.is_null() {
                    merged.remove(field);
                    continue;
                }
                schema_path.push(field.clone());
                let current = live_map.get(field).unwrap_or(&Value::Null);
                merged.insert(
                    field.clone(),
                    merge_applied(current, value, schema_path, list_types),
                );
                schema_path.pop();
            }
            Value::Object(merged)
        }
        (Value::Array(live_items), Value::Array(config_items)) => match list_types.list_type(schema_path) {
            ListType::Atomic => config.clone(),
            ListType::Set => {
                let mut merged = live_items.clone();
                for item in config_items {
                    if !merged.contains(item) {
                        merged.push(item.clone());
                    }
                }
                Value::Array(merged)
            }
            ListType::Map(keys) => {
                let mut merged = live_items.clone();
                for item in config_items {
                    let id = key_element(item, &keys);
                    match merged.iter_mut().find(|i| key_element(i, &keys) == id) {
                        Some(existing) => *existing = merge_applied(existing, item, schema_path, list_types),
                        None => merged.push(item.clone()),
                    }
                }
                Value::Array(merged)
            }
        },
        _ => config.clone(),
    }
}

/// Whether two values of a field path differ (a missing value differs from any value).
pub(crate) fn differs(a: &Value, b: &Value, path: &[String]) -> bool {
    value_at(a, path) != value_at(b, path)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::field_ownership::list_types::tests::Fixed;

    fn path(elements: &[&str]) -> Vec<String> {
        elements.iter().map(|e| (*e).to_owned()).collect()
    }

    #[test]
    fn values_are_found_and_removed_by_path() {
        let mut object = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b"}], "tags": ["t1", "t2"]}});
        let image = path(&["f:spec", "f:containers", r#"k:{"name":"a"}"#, "f:image"]);
        assert_eq!(value_at(&object, &image), Some(&json!("x")));
        remove_at(&mut object, &image);
        assert_eq!(value_at(&object, &image), None);
        remove_at(
            &mut object,
            &path(&["f:spec", "f:containers", r#"k:{"name":"b"}"#]),
        );
        remove_at(&mut object, &path(&["f:spec", "f:tags", r#"v:"t1""#]));
        assert_eq!(
            object,
            json!({"spec": {"containers": [{"name": "a"}], "tags": ["t2"]}})
        );
    }

    #[test]
    fn applied_configurations_merge_by_list_type() {
        let list_types = Fixed::new(&[
            ("spec.containers", ListType::Map(vec!["name".into()])),
            ("spec.tags", ListType::Set),
        ]);
        let live = json!({"spec": {"containers": [{"name": "a", "image": "x"}], "tags": ["t1"], "args": ["1", "2"], "keep": 1}});
        let config = json!({"spec": {"containers": [{"name": "a", "image": "y"}, {"name": "b"}], "tags": ["t2"], "args": ["3"], "keep": null}});
        let merged = merge_applied(&live, &config, &mut Vec::new(), &list_types);
        assert_eq!(
            merged,
            json!({"spec": {"containers": [{"name": "a", "image": "y"}, {"name": "b"}], "tags": ["t1", "t2"], "args": ["3"]}})
        );
    }
}
