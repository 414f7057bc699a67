//! The steps of a write at which a feature takes part, and the writes a feature may make on
//! other objects.
//!
//! A write goes through every [`Plugin`] of [`plugins`](super::plugins), in order: each may
//! check or change an object before it is stored, take a deletion over, and act once an
//! object was stored or removed. Every step does nothing unless the plugin says otherwise.

use serde_json::Value;

use crate::admission::context::WriteContext;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::{State, UpdateMode};

/// A feature's part in writes (admission in kube-apiserver's sense, plus the strategies and
/// controllers that act on a write).
pub(crate) trait Plugin: Sync {
    /// Runs before a new object is admitted, when what it needs may have to be written first
    /// (a missing namespace the server creates); an error refuses the create.
    fn before_create(
        &self,
        _writes: &mut dyn Cascade,
        _rt: &ResourceType,
        _object: &Value,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// Checks or changes a new object before it is stored; an error refuses the create.
    fn admit_create(
        &self,
        _state: &State,
        _context: &mut WriteContext,
        _rt: &ResourceType,
        _object: &mut Value,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// Checks or changes the object that replaces `old`; an error refuses the update.
    fn admit_update(
        &self,
        _state: &State,
        _context: &mut WriteContext,
        _rt: &ResourceType,
        _old: &Value,
        _new: &mut Value,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// Whether the feature keeps a deleted object although its `metadata.finalizers` is empty
    /// (a namespace waiting for its `spec.finalizers`).
    fn holds(&self, _rt: &ResourceType, _object: &Value) -> bool {
        false
    }

    /// Runs before `old` is deleted with these `DeleteOptions`; `Some` takes the deletion
    /// over and is what the delete answers.
    fn deleting(
        &self,
        _writes: &mut dyn Cascade,
        _rt: &ResourceType,
        _old: &Value,
        _options: &Value,
    ) -> Result<Option<Value>, ApiError> {
        Ok(None)
    }

    /// Runs once `object` was stored by a create or an update.
    fn stored(&self, _writes: &mut dyn Cascade, _rt: &ResourceType, _object: &Value) {}

    /// Runs once `object` was removed from the store.
    fn removed(&self, _writes: &mut dyn Cascade, _rt: &ResourceType, _object: &Value) {}
}

/// The writes a plugin makes on other objects, through the whole write path (their own
/// plugins included): the dependents of a deleted owner, the contents of a deleted namespace.
pub(crate) trait Cascade {
    /// The state written to.
    fn state(&mut self) -> &mut State;

    /// Whether the request is a dry run (then nothing cascades).
    fn is_dry_run(&self) -> bool;

    /// Creates an object as the server itself (no field manager owns its fields).
    fn create_as_server(&mut self, rt: &ResourceType, object: Value) -> Result<Value, ApiError>;

    /// Deletes an object, as a delete request would.
    fn delete(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        options: &Value,
    ) -> Result<Value, ApiError>;

    /// Replaces an object, as an update would.
    fn update(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        object: Value,
        mode: UpdateMode,
    ) -> Result<Value, ApiError>;
}
