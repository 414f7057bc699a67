//! Sets of field paths in the `FieldsV1` form of `managedFields`: `f:<field>` for a field of an
//! object, `k:<key fields as JSON>` for an item of a list keyed by fields, `v:<value as JSON>`
//! for an item of a list of unique values; `{}` is a member, and `".": {}` makes the node
//! itself a member beside its children.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::list_types::{ListType, ListTypes};

/// A set of field paths, as a tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldSet {
    /// Whether the path that leads here is a member.
    member: bool,
    children: BTreeMap<String, FieldSet>,
}

/// A path in a field set: its elements, outermost first.
pub(crate) type FieldPath = Vec<String>;

/// The metadata fields the server sets, which no manager owns.
const SERVER_METADATA: [&str; 11] = [
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "generateName",
];

impl FieldSet {
    /// Reads a `fieldsV1` value; anything but an object is the empty set.
    pub(crate) fn from_fields_v1(value: &Value) -> Self {
        let Some(map) = value.as_object() else {
            return Self::default();
        };
        let mut set = Self {
            member: map.is_empty() || map.contains_key("."),
            children: BTreeMap::new(),
        };
        for (key, child) in map.iter().filter(|(k, _)| k.as_str() != ".") {
            set.children.insert(key.clone(), Self::from_fields_v1(child));
        }
        set
    }

    /// The `fieldsV1` form (the root itself is never written as a member).
    pub(crate) fn to_fields_v1(&self) -> Value {
        let mut map = Map::new();
        for (key, child) in &self.children {
            map.insert(key.clone(), child.node_json());
        }
        Value::Object(map)
    }

    fn node_json(&self) -> Value {
        let mut map = Map::new();
        if self.member && !self.children.is_empty() {
            map.insert(".".into(), json!({}));
        }
        for (key, child) in &self.children {
            map.insert(key.clone(), child.node_json());
        }
        Value::Object(map)
    }

    /// Whether the set has no member.
    pub(crate) fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(Self::is_empty)
    }

    /// Every member path.
    pub(crate) fn paths(&self) -> Vec<FieldPath> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut FieldPath, out: &mut Vec<FieldPath>) {
        if self.member && !prefix.is_empty() {
            out.push(prefix.clone());
        }
        for (key, child) in &self.children {
            prefix.push(key.clone());
            child.collect(prefix, out);
            prefix.pop();
        }
    }

    /// Adds a path.
    pub(crate) fn insert(&mut self, path: &[String]) {
        let mut node = self;
        for element in path {
            node = node.children.entry(element.clone()).or_default();
        }
        node.member = true;
    }

    /// Whether a path is a member.
    pub(crate) fn contains(&self, path: &[String]) -> bool {
        let mut node = self;
        for element in path {
            match node.children.get(element) {
                Some(child) => node = child,
                None => return false,
            }
        }
        node.member
    }

    /// Whether a path or anything under it is a member.
    pub(crate) fn touches(&self, path: &[String]) -> bool {
        let mut node = self;
        for element in path {
            match node.children.get(element) {
                Some(child) => node = child,
                None => return false,
            }
        }
        !node.is_empty()
    }

    /// The members of `self` that are not in `other`.
    pub(crate) fn difference(&self, other: &Self) -> Self {
        let mut out = Self::default();
        for path in self.paths() {
            if !other.contains(&path) {
                out.insert(&path);
            }
        }
        out
    }

    /// The members of `self` that are also in `other`.
    pub(crate) fn intersection(&self, other: &Self) -> Self {
        let mut out = Self::default();
        for path in self.paths() {
            if other.contains(&path) {
                out.insert(&path);
            }
        }
        out
    }

    /// The members of either.
    pub(crate) fn union(&self, other: &Self) -> Self {
        let mut out = self.clone();
        for path in other.paths() {
            out.insert(&path);
        }
        out
    }

    /// The fields an object sets, by the list types of its schema: every leaf value, each item
    /// of a keyed list or of a set, and empty objects. Server-set metadata, `apiVersion` and
    /// `kind` are left out, and `status` when `with_status` is false.
    pub(crate) fn of_object(object: &Value, list_types: &dyn ListTypes, with_status: bool) -> Self {
        let mut set = Self::default();
        let Some(map) = object.as_object() else {
            return set;
        };
        for (field, value) in map {
            if matches!(field.as_str(), "apiVersion" | "kind") || (field == "status" && !with_status) {
                continue;
            }
            let mut path = vec![format!("f:{field}")];
            if field == "metadata" {
                let kept: Map<String, Value> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| !SERVER_METADATA.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if !kept.is_empty() {
                    add_value(
                        &mut set,
                        &mut path,
                        &mut vec![field.clone()],
                        &Value::Object(kept),
                        list_types,
                    );
                }
                continue;
            }
            add_value(&mut set, &mut path, &mut vec![field.clone()], value, list_types);
        }
        set
    }
}

/// The element of an item of a keyed list: `k:{"name":"c"}` (key fields sorted).
pub(crate) fn key_element(item: &Value, keys: &[String]) -> String {
    let mut map = Map::new();
    for key in keys {
        map.insert(key.clone(), item.get(key).cloned().unwrap_or(Value::Null));
    }
    format!("k:{}", Value::Object(map))
}

/// The element of an item of a set: `v:"value"`.
pub(crate) fn value_element(item: &Value) -> String {
    format!("v:{item}")
}

/// Adds the fields `value` sets at `path`; `schema_path` is the path of field names that the
/// list types are looked up by.
fn add_value(
    set: &mut FieldSet,
    path: &mut FieldPath,
    schema_path: &mut Vec<String>,
    value: &Value,
    list_types: &dyn ListTypes,
) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (field, child) in map {
                path.push(format!("f:{field}"));
                schema_path.push(field.clone());
                add_value(set, path, schema_path, child, list_types);
                schema_path.pop();
                path.pop();
            }
        }
        Value::Array(items) => match list_types.list_type(schema_path) {
            ListType::Atomic => set.insert(path),
            ListType::Set => {
                for item in items {
                    path.push(value_element(item));
                    set.insert(path);
                    path.pop();
                }
            }
            ListType::Map(keys) => {
                for item in items {
                    path.push(key_element(item, &keys));
                    set.insert(path);
                    add_value(set, path, schema_path, item, list_types);
                    path.pop();
                }
            }
        },
        _ => set.insert(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::field_ownership::list_types::tests::Fixed;

    #[test]
    fn fields_v1_round_trips() {
        let fields = json!({
            "f:data": {".": {}, "f:a": {}},
            "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}}}},
        });
        let set = FieldSet::from_fields_v1(&fields);
        assert_eq!(set.to_fields_v1(), fields);
        assert!(set.contains(&["f:data".into()]));
        assert!(set.contains(&["f:data".into(), "f:a".into()]));
        assert!(!set.contains(&["f:spec".into()]));
        assert!(set.touches(&["f:spec".into()]));
    }

    #[test]
    fn objects_set_their_leaves_and_list_items() {
        let object = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "resourceVersion": "3", "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
            "status": {"replicas": 2},
        });
        let list_types = Fixed::new(&[(
            "spec.template.spec.containers",
            ListType::Map(vec!["name".into()]),
        )]);
        let set = FieldSet::of_object(&object, &list_types, false);
        assert_eq!(
            set.to_fields_v1(),
            json!({
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:template": {"f:spec": {"f:containers": {
                        "k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}}
                    }}},
                },
            })
        );
    }

    #[test]
    fn set_operations() {
        let a = FieldSet::from_fields_v1(&json!({"f:a": {}, "f:b": {"f:c": {}}}));
        let b = FieldSet::from_fields_v1(&json!({"f:b": {"f:c": {}}, "f:d": {}}));
        assert_eq!(a.difference(&b).to_fields_v1(), json!({"f:a": {}}));
        assert_eq!(a.intersection(&b).to_fields_v1(), json!({"f:b": {"f:c": {}}}));
        assert_eq!(a.union(&b).paths().len(), 3);
        assert!(a.difference(&a).is_empty());
    }
}
