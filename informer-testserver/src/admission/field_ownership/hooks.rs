//! Where field ownership meets the store: the list types of a served type, and the plugin
//! recording every write over HTTP in `managedFields`.

use serde_json::Value;

use super::list_types::{ListType, ListTypes, SchemaListTypes};
use super::{Writer, record_update};
use crate::admission::builtin_schema::BuiltinListTypes;
use crate::admission::context::WriteContext;
use crate::admission::plugin::Plugin;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::State;
use crate::storage::store::metadata_mut;

/// The list types every object shares: `metadata.finalizers` is a set, `ownerReferences` are
/// keyed by `uid`; the rest comes from the type's own list types.
struct WithMetadata<T> {
    inner: T,
}

impl<T: ListTypes> ListTypes for WithMetadata<T> {
    fn list_type(&self, path: &[String]) -> ListType {
        match path {
            [metadata, field] if metadata == "metadata" && field == "finalizers" => ListType::Set,
            [metadata, field] if metadata == "metadata" && field == "ownerReferences" => {
                ListType::Map(vec!["uid".into()])
            }
            [metadata, ..] if metadata == "metadata" => ListType::Atomic,
            _ => self.inner.list_type(path),
        }
    }
}

/// The list types of a CRD version's schema, owned.
struct CrdListTypes {
    schema: Value,
}

impl ListTypes for CrdListTypes {
    fn list_type(&self, path: &[String]) -> ListType {
        SchemaListTypes::new(&self.schema).list_type(path)
    }
}

impl State {
    /// The list types of `rt`'s objects: a CRD version's schema, the built-in table, or none
    /// (every list atomic) for types registered without a CRD.
    pub(crate) fn list_types(&self, rt: &ResourceType) -> Box<dyn ListTypes> {
        if let Some(builtin) = BuiltinListTypes::of(&rt.group, &rt.version, &rt.kind) {
            return Box::new(WithMetadata { inner: builtin });
        }
        let schema = self
            .crd_version(rt)
            .map(|version| version["schema"]["openAPIV3Schema"].clone())
            .unwrap_or(Value::Null);
        Box::new(WithMetadata {
            inner: CrdListTypes { schema },
        })
    }
}

/// Whether a write of `rt` in this context counts `status` among its fields.
pub(crate) fn writes_status(context: &WriteContext, rt: &ResourceType) -> bool {
    !rt.status_subresource
        || context
            .field_manager
            .as_ref()
            .is_some_and(|w| w.subresource.as_deref() == Some("status"))
}

/// Field ownership as a write plugin: every write over HTTP records its field manager in
/// `managedFields`; a write through the Rust API keeps the old `managedFields` unless it sets
/// its own.
pub(crate) struct ManagedFields;

impl Plugin for ManagedFields {
    fn admit_create(
        &self,
        state: &State,
        context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        record(state, context, rt, None, object);
        Ok(())
    }

    fn admit_update(
        &self,
        state: &State,
        context: &mut WriteContext,
        rt: &ResourceType,
        old: &Value,
        new: &mut Value,
    ) -> Result<(), ApiError> {
        record(state, context, rt, Some(old), new);
        Ok(())
    }
}

/// Records the write from `old` (`None`: a create) to `new` in `new`'s `managedFields`.
fn record(state: &State, context: &WriteContext, rt: &ResourceType, old: Option<&Value>, new: &mut Value) {
    let Some(writer) = &context.field_manager else {
        if new["metadata"].get("managedFields").is_none()
            && let Some(fields) = old.and_then(|o| o["metadata"].get("managedFields"))
        {
            metadata_mut(new).insert("managedFields".into(), fields.clone());
        }
        return;
    };
    let list_types = state.list_types(rt);
    record_update(old, new, writer, list_types.as_ref(), writes_status(context, rt));
}

/// The 422 of an apply without a field manager.
pub(crate) fn required_field_manager() -> ApiError {
    ApiError::new(
        422,
        "Invalid",
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
    )
}

/// The writer of an HTTP write: its `fieldManager` (required for an apply: 422), else the
/// part of its `User-Agent` before the first `/`; `force` is refused for other patches (422).
pub(crate) fn writer_of(
    rt: &ResourceType,
    query: &std::collections::HashMap<String, String>,
    user_agent: &str,
    apply: bool,
    subresource: Option<&str>,
) -> Result<(Writer, bool), ApiError> {
    let force = match query.get("force").map(String::as_str) {
        None => false,
        Some("true") => true,
        Some("false") => false,
        Some(other) => return Err(ApiError::bad_request(format!("invalid force value {other:?}"))),
    };
    if force && !apply {
        return Err(ApiError::new(
            422,
            "Invalid",
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch",
        ));
    }
    let manager = match query.get("fieldManager").filter(|m| !m.is_empty()) {
        Some(manager) if manager.len() > 128 => {
            return Err(ApiError::new(
                422,
                "Invalid",
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes",
            ));
        }
        Some(manager) => manager.clone(),
        None if apply => return Err(required_field_manager()),
        None => user_agent.split('/').next().unwrap_or_default().to_owned(),
    };
    Ok((
        Writer {
            manager,
            api_version: rt.api_version(),
            subresource: subresource.map(str::to_owned),
        },
        force,
    ))
}
