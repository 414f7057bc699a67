//! Server-side apply: the applied configuration merged into the live object by field
//! ownership (`admission::field_ownership`), then created or written as an update.

use serde_json::{Value, json};

use super::session::WriteSession;
use crate::admission::field_ownership::{Apply, apply, required_field_manager, writes_status};
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::UpdateMode;
use crate::storage::store::metadata_mut;

impl WriteSession<'_> {
    /// A server-side apply of `config` to the object `name` (created when missing). Returns
    /// the object and whether it was created.
    pub(crate) fn apply(
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
        let writer = self
            .context
            .field_manager
            .clone()
            .ok_or_else(required_field_manager)?;
        let live = self.state.get(rt, ns, name).ok();
        if live.is_none() && status {
            return Err(ApiError::not_found(rt, name));
        }
        let list_types = self.state.list_types(rt);
        let options = Apply {
            writer: &writer,
            force: self.context.force,
            list_types: list_types.as_ref(),
            with_status: writes_status(&self.context, rt),
        };
        let mut merged = apply(live.as_ref().unwrap_or(&json!({})), config, &options)?;
        metadata_mut(&mut merged).insert("name".into(), json!(name));
        // The apply recorded the ownership: the write below must not record it again.
        self.context.field_manager = None;
        let written = match live {
            None => self.create(rt, ns, merged).map(|o| (o, true)),
            Some(_) => {
                let mode = if status {
                    UpdateMode::Status
                } else {
                    UpdateMode::Main
                };
                metadata_mut(&mut merged).remove("resourceVersion");
                self.update(rt, ns, name, merged, mode).map(|o| (o, false))
            }
        };
        self.context.field_manager = Some(writer);
        written
    }
}
