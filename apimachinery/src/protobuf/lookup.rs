//! Finding messages in the generated table: by index, by path, by kind.

use super::{
    Error,
    spec::{FieldSpec, MessageSpec, Wire},
    table::{KINDS, MESSAGES},
};

/// The message at `index` of the table.
pub(crate) fn message_at(index: usize) -> &'static MessageSpec {
    &MESSAGES[index]
}

/// The message at `path`.
pub(crate) fn message(path: &str) -> Option<&'static MessageSpec> {
    MESSAGES
        .binary_search_by(|m| m.path.cmp(path))
        .ok()
        .map(|i| &MESSAGES[i])
}

/// meta/v1's kinds that any group version may carry: errors, options (client-go encodes a
/// `DeleteOptions` body in the group version of the request) and the metadata-only forms.
const META_KINDS: &[&str] = &[
    "Status",
    "DeleteOptions",
    "CreateOptions",
    "UpdateOptions",
    "PatchOptions",
    "GetOptions",
    "ListOptions",
    "PartialObjectMetadata",
    "PartialObjectMetadataList",
    "Table",
    "WatchEvent",
];

/// The message of a built-in kind, of a list of one (`ConfigMapList`), or of meta/v1's
/// `Status`, `PartialObjectMetadata(List)` and `Table`.
pub(crate) fn kind_message(api_version: &str, kind: &str) -> Option<&'static MessageSpec> {
    if META_KINDS.contains(&kind) {
        return message(&format!("apimachinery::pkg::apis::meta::v1::{kind}"));
    }
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let find = |kind: &str| {
        KINDS
            .iter()
            .find(|k| k.group == group && k.version == version && k.kind == kind)
    };
    if let Some(exact) = find(kind) {
        return Some(message_at(exact.message));
    }
    let item = find(kind.strip_suffix("List")?)?;
    message(&format!("{}List", message_at(item.message).path))
}

/// Whether objects of a kind have a protobuf form: the built-in kinds of Kubernetes (k8s-pb's
/// messages). Custom resources have none; kube-apiserver answers them in JSON.
///
/// ```
/// use informer_apimachinery::protobuf::has_form;
///
/// assert!(has_form("apps", "v1", "Deployment"));
/// assert!(!has_form("example.com", "v1", "Widget"));
/// ```
pub fn has_form(group: &str, version: &str, kind: &str) -> bool {
    KINDS
        .iter()
        .any(|k| k.group == group && k.version == version && k.kind == kind)
}

/// Whether a group and version hold built-in kinds with a protobuf form (`""`, `"v1"` for the
/// core group).
pub fn has_group_version(group: &str, version: &str) -> bool {
    KINDS.iter().any(|k| k.group == group && k.version == version)
}

/// The field numbers of the JSON path `fields` from the message of `api_version` `kind` (a
/// message embedded inline in Go adds its own number), and whether the last field is a map.
///
/// # Errors
/// [`Error::UnknownKind`] for a kind without a protobuf form, [`Error::Type`] for a path that
/// names no field.
pub fn field_numbers(api_version: &str, kind: &str, fields: &[String]) -> Result<(Vec<u32>, bool), Error> {
    let mut spec =
        kind_message(api_version, kind).ok_or_else(|| Error::UnknownKind(format!("{api_version} {kind}")))?;
    let mut numbers = Vec::new();
    let mut is_map = false;
    for (at, name) in fields.iter().enumerate() {
        let found = find_field(spec, name, &mut numbers).ok_or_else(|| {
            Error::Type(format!(
                "{api_version} {kind} has no field {} (no {name:?} in {})",
                fields[..=at].join("."),
                spec.path
            ))
        })?;
        is_map = found.wire.is_map();
        match found.wire {
            Wire::Message(index) if !found.repeated => spec = message_at(index),
            _ if at + 1 < fields.len() => {
                return Err(Error::Type(format!(
                    "{api_version} {kind}: {} is not a message, so it has no field {:?}",
                    fields[..=at].join("."),
                    fields[at + 1]
                )));
            }
            _ => {}
        }
    }
    Ok((numbers, is_map))
}

/// The field of `spec` whose JSON name is `name`, its number (and those of the inline messages
/// it is in) pushed onto `numbers`.
fn find_field(spec: &'static MessageSpec, name: &str, numbers: &mut Vec<u32>) -> Option<&'static FieldSpec> {
    if let Some(field) = spec.fields.iter().find(|f| f.json == name) {
        numbers.push(field.tag);
        return Some(field);
    }
    for inline in spec.fields.iter().filter(|f| f.json.is_empty()) {
        let Wire::Message(index) = inline.wire else {
            continue;
        };
        numbers.push(inline.tag);
        if let Some(field) = find_field(message_at(index), name, numbers) {
            return Some(field);
        }
        numbers.pop();
    }
    None
}
