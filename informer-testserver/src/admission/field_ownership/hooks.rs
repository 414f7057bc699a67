//! Where field ownership meets the store: every write over HTTP records its field manager, and
//! apply patches go through [`apply`](super::apply).

use serde_json::{Value, json};

use super::list_types::{ListType, ListTypes, SchemaListTypes};
use super::{Apply, Writer, apply, record_update};
use crate::admission::builtin_schema::BuiltinListTypes;
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

    /// Runs `write` as `writer` (forcing conflicts when `force`), then forgets the writer.
    pub(crate) fn as_writer<R>(
        &mut self,
        writer: Writer,
        force: bool,
        write: impl FnOnce(&mut Self) -> R,
    ) -> R {
        self.writer = Some(writer);
        self.force = force;
        let result = write(self);
        self.writer = None;
        self.force = false;
        result
    }

    /// Whether the current write counts `status` among its fields.
    fn writes_status(&self, rt: &ResourceType) -> bool {
        !rt.status_subresource
            || self
                .writer
                .as_ref()
                .is_some_and(|w| w.subresource.as_deref() == Some("status"))
    }

    /// Records the current HTTP write from `old` (`None`: a create) to `new` in `new`'s
    /// `managedFields`; a write through the Rust API keeps the old `managedFields` unless it
    /// sets its own.
    pub(crate) fn record_update(&self, rt: &ResourceType, old: Option<&Value>, new: &mut Value) {
        let Some(writer) = &self.writer else {
            if new["metadata"].get("managedFields").is_none()
                && let Some(fields) = old.and_then(|o| o["metadata"].get("managedFields"))
            {
                metadata_mut(new).insert("managedFields".into(), fields.clone());
            }
            return;
        };
        let list_types = self.list_types(rt);
        record_update(old, new, writer, list_types.as_ref(), self.writes_status(rt));
    }

    /// A server-side apply of `config` to the object `name` (created when missing).
    pub(crate) fn server_side_apply(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        config: &Value,
        status: bool,
    ) -> Result<(Value, bool), ApiError> {
        if !config.is_object() {
            return Err(ApiError::bad_request("the apply patch must be an object"));
        }
        let writer = self.writer.clone().ok_or_else(required_field_manager)?;
        let live = self.get(rt, ns, name).ok();
        if live.is_none() && status {
            return Err(ApiError::not_found(rt, name));
        }
        let list_types = self.list_types(rt);
        let options = Apply {
            writer: &writer,
            force: self.force,
            list_types: list_types.as_ref(),
            with_status: self.writes_status(rt),
        };
        let mut merged = apply(live.as_ref().unwrap_or(&json!({})), config, &options)?;
        metadata_mut(&mut merged).insert("name".into(), json!(name));
        // The apply recorded the ownership: the write below must not record it again.
        self.writer = None;
        let written = match live {
            None => self.create(rt, ns, merged).map(|o| (o, true)),
            Some(_) => {
                let mode = if status {
                    crate::storage::state::UpdateMode::Status
                } else {
                    crate::storage::state::UpdateMode::Main
                };
                let mut merged = merged;
                metadata_mut(&mut merged).remove("resourceVersion");
                self.update(rt, ns, name, merged, mode).map(|o| (o, false))
            }
        };
        self.writer = Some(writer);
        written
    }
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
