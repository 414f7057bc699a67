//! The merge strategies of the built-in types' fields (`x-kubernetes-list-type`, list map keys
//! and patch merge keys, map types), generated from k8s-openapi by `cargo xtask codegen` into
//! [`table`]: what strategic merge patches and field ownership need to know about lists.

mod table;
mod types;

pub(crate) use types::{Field, Strategy, TypeInfo};

use crate::admission::field_ownership::list_types::{ListType, ListTypes};

pub(crate) fn type_info(path: &str) -> Option<&'static TypeInfo> {
    table::TYPES
        .binary_search_by(|t| t.path.cmp(path))
        .ok()
        .map(|i| &table::TYPES[i])
}

/// The root type of a built-in kind, if it is one.
pub(crate) fn root_of(group: &str, version: &str, kind: &str) -> Option<&'static TypeInfo> {
    let found = table::KINDS
        .iter()
        .find(|k| k.group == group && k.version == version && k.kind == kind)?;
    type_info(found.root)
}

/// The field at a path of JSON field names from `root` (list items and map values are
/// stepped through), if the schema has it.
pub(crate) fn field_at(root: &'static TypeInfo, path: &[String]) -> Option<&'static Field> {
    let mut current = root;
    let mut found = None;
    for (i, name) in path.iter().enumerate() {
        let field = current.fields.iter().find(|f| f.json == name.as_str())?;
        found = Some(field);
        if i + 1 < path.len() {
            current = type_info(field.nested?)?;
        }
    }
    found
}

/// The list types of a built-in kind's objects.
pub(crate) struct BuiltinListTypes {
    root: &'static TypeInfo,
}

impl BuiltinListTypes {
    /// The list types of `group/version` `kind`, if it is a built-in kind.
    pub(crate) fn of(group: &str, version: &str, kind: &str) -> Option<Self> {
        root_of(group, version, kind).map(|root| Self { root })
    }
}

impl ListTypes for BuiltinListTypes {
    fn list_type(&self, path: &[String]) -> ListType {
        match field_at(self.root, path).map(|f| f.strategy) {
            Some(Strategy::SetList) => ListType::Set,
            Some(Strategy::MapList(keys)) => ListType::Map(keys.iter().map(|k| (*k).to_owned()).collect()),
            _ => ListType::Atomic,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_validation_knows_every_built_in_kind() {
        let unknown: Vec<String> = crate::builtin::ALL
            .iter()
            .filter(|b| root_of(b.group, b.version, b.kind).is_none())
            .map(|b| format!("{} {}", b.api_version(), b.kind))
            .collect();
        assert!(unknown.is_empty(), "{unknown:?}");
    }

    fn path(text: &str) -> Vec<String> {
        text.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn the_table_knows_the_lists_of_workloads() {
        let deployment = BuiltinListTypes::of("apps", "v1", "Deployment").expect("a built-in kind");
        assert_eq!(
            deployment.list_type(&path("spec.template.spec.containers")),
            ListType::Map(vec!["name".into()])
        );
        assert_eq!(
            deployment.list_type(&path("spec.template.spec.containers.env")),
            ListType::Map(vec!["name".into()])
        );
        assert_eq!(
            deployment.list_type(&path("spec.template.spec.containers.ports")),
            ListType::Map(vec!["containerPort".into()])
        );
        assert_eq!(
            deployment.list_type(&path("spec.template.spec.containers.args")),
            ListType::Atomic
        );
        assert_eq!(deployment.list_type(&path("metadata.finalizers")), ListType::Set);
        assert_eq!(
            deployment.list_type(&path("metadata.ownerReferences")),
            ListType::Map(vec!["uid".into()])
        );
        assert!(BuiltinListTypes::of("example.com", "v1", "Widget").is_none());
        let pod = root_of("", "v1", "Pod").expect("pods");
        let volumes = field_at(pod, &path("spec.volumes")).expect("volumes");
        assert_eq!(volumes.strategy, Strategy::MapList(&["name"]));
    }
}
