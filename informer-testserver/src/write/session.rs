//! One request's writes: the state under its lock and the request's [`WriteContext`].
//!
//! Every verb of the write path is a method of [`WriteSession`] (in `create.rs`, `update.rs`,
//! `patch.rs`, `apply.rs`, `delete.rs`); each runs the admission plugins at its steps. A
//! session is dry when its context is: the store answers as if it wrote and keeps nothing.

use serde_json::Value;

use crate::admission::context::WriteContext;
use crate::admission::plugin::Cascade;
use crate::admission::plugins;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::{State, UpdateMode};

/// The writes of one request.
pub(crate) struct WriteSession<'a> {
    /// The state written to, locked for the whole request.
    pub(crate) state: &'a mut State,
    /// Who writes and how.
    pub(crate) context: WriteContext,
}

impl<'a> WriteSession<'a> {
    /// A session writing to `state` in `context`.
    pub(crate) fn new(state: &'a mut State, context: WriteContext) -> Self {
        state.store.set_dry_run(context.dry_run);
        Self { state, context }
    }

    /// Ends the session, giving the warnings its writes gave.
    pub(crate) fn finish(mut self) -> Vec<String> {
        std::mem::take(&mut self.context.warnings)
    }

    /// Runs every plugin's step before a new object is admitted.
    pub(crate) fn before_create(&mut self, rt: &ResourceType, object: &Value) -> Result<(), ApiError> {
        for plugin in plugins() {
            plugin.before_create(self, rt, object)?;
        }
        Ok(())
    }

    /// Runs every plugin's admission of a new object.
    pub(crate) fn admit_create(&mut self, rt: &ResourceType, object: &mut Value) -> Result<(), ApiError> {
        for plugin in plugins() {
            plugin.admit_create(self.state, &mut self.context, rt, object)?;
        }
        Ok(())
    }

    /// Runs every plugin's admission of an object replacing `old`.
    pub(crate) fn admit_update(
        &mut self,
        rt: &ResourceType,
        old: &Value,
        new: &mut Value,
    ) -> Result<(), ApiError> {
        for plugin in plugins() {
            plugin.admit_update(self.state, &mut self.context, rt, old, new)?;
        }
        Ok(())
    }

    /// Whether a plugin keeps a deleted object without finalizers.
    pub(crate) fn held(&self, rt: &ResourceType, object: &Value) -> bool {
        plugins().iter().any(|plugin| plugin.holds(rt, object))
    }

    /// Runs every plugin's step after `object` was stored.
    pub(crate) fn stored(&mut self, rt: &ResourceType, object: &Value) {
        for plugin in plugins() {
            plugin.stored(self, rt, object);
        }
    }

    /// Runs the plugins before `old` is deleted, until one takes the deletion over.
    pub(crate) fn deleting(
        &mut self,
        rt: &ResourceType,
        old: &Value,
        options: &Value,
    ) -> Result<Option<Value>, ApiError> {
        for plugin in plugins() {
            if let Some(answer) = plugin.deleting(self, rt, old, options)? {
                return Ok(Some(answer));
            }
        }
        Ok(None)
    }

    /// Runs every plugin's step after `object` was removed.
    pub(crate) fn removed(&mut self, rt: &ResourceType, object: &Value) {
        for plugin in plugins() {
            plugin.removed(self, rt, object);
        }
    }
}

impl Drop for WriteSession<'_> {
    fn drop(&mut self) {
        self.state.store.set_dry_run(false);
    }
}

impl Cascade for WriteSession<'_> {
    fn state(&mut self) -> &mut State {
        self.state
    }

    fn is_dry_run(&self) -> bool {
        self.context.dry_run
    }

    fn create_as_server(&mut self, rt: &ResourceType, object: Value) -> Result<Value, ApiError> {
        let field_manager = self.context.field_manager.take();
        let ns = object["metadata"]["namespace"].as_str().map(str::to_owned);
        let created = WriteSession::create_with_status(self, rt, ns.as_deref(), object);
        self.context.field_manager = field_manager;
        created
    }

    fn delete(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        options: &Value,
    ) -> Result<Value, ApiError> {
        WriteSession::delete(self, rt, ns, name, options)
    }

    fn update(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        object: Value,
        mode: UpdateMode,
    ) -> Result<Value, ApiError> {
        WriteSession::update(self, rt, ns, name, object, mode)
    }
}

impl State {
    /// A session writing as the Rust API does (no field manager, not dry).
    pub(crate) fn write(&mut self) -> WriteSession<'_> {
        WriteSession::new(self, WriteContext::default())
    }
}
