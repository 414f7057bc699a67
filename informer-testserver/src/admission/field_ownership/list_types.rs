//! How a list merges and which of its items are owned separately: by the schema's
//! `x-kubernetes-list-type` (`atomic`, `set`, `map` with `x-kubernetes-list-map-keys`).

use serde_json::Value;

/// The type of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType {
    /// Replaced and owned as a whole (the default).
    Atomic,
    /// Unique scalar values, each owned on its own.
    Set,
    /// Items identified by these key fields, each owned on its own.
    Map(Vec<String>),
}

/// Where list types come from: a path of field names from the object's root
/// (`spec.template.spec.containers`) to a list.
pub(crate) trait ListTypes {
    /// The type of the list at `path`.
    fn list_type(&self, path: &[String]) -> ListType;
}

/// The list types of a CRD version's `openAPIV3Schema`.
pub(crate) struct SchemaListTypes<'a> {
    schema: &'a Value,
}

impl<'a> SchemaListTypes<'a> {
    /// The list types `schema` (an `openAPIV3Schema`) declares.
    pub(crate) fn new(schema: &'a Value) -> Self {
        Self { schema }
    }
}

impl ListTypes for SchemaListTypes<'_> {
    fn list_type(&self, path: &[String]) -> ListType {
        let mut node = self.schema;
        for field in path {
            // a field of an object, or of the items of a list on the way
            if node["type"] == "array" {
                node = &node["items"];
            }
            let properties = &node["properties"][field.as_str()];
            node = if properties.is_null() {
                &node["additionalProperties"]
            } else {
                properties
            };
            if node.is_null() {
                return ListType::Atomic;
            }
        }
        match node["x-kubernetes-list-type"].as_str() {
            Some("set") => ListType::Set,
            Some("map") => ListType::Map(
                node["x-kubernetes-list-map-keys"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|k| k.as_str().map(str::to_owned))
                    .collect(),
            ),
            _ => ListType::Atomic,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::HashMap;

    use serde_json::json;

    use super::*;

    /// Fixed list types by dotted path, atomic elsewhere.
    pub(crate) struct Fixed(HashMap<String, ListType>);

    impl Fixed {
        pub(crate) fn new(types: &[(&str, ListType)]) -> Self {
            Self(types.iter().map(|(p, t)| ((*p).to_owned(), t.clone())).collect())
        }
    }

    impl ListTypes for Fixed {
        fn list_type(&self, path: &[String]) -> ListType {
            self.0.get(&path.join(".")).cloned().unwrap_or(ListType::Atomic)
        }
    }

    #[test]
    fn crd_schemas_declare_list_types() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
                      "items": {"type": "object", "properties": {"tags": {"type": "array", "x-kubernetes-list-type": "set"}}}},
            "args": {"type": "array", "items": {"type": "string"}},
        }}}});
        let types = SchemaListTypes::new(&schema);
        let path = |p: &str| p.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            types.list_type(&path("spec.ports")),
            ListType::Map(vec!["port".into(), "protocol".into()])
        );
        assert_eq!(types.list_type(&path("spec.ports.tags")), ListType::Set);
        assert_eq!(types.list_type(&path("spec.args")), ListType::Atomic);
        assert_eq!(types.list_type(&path("spec.missing")), ListType::Atomic);
    }
}
