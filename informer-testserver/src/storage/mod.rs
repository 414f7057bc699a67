//! Storage: the served types, the objects with their history, and what reads them.
//!
//! [`state::State`] holds the [`registry::Registry`] of served types and the [`store::Store`]
//! of objects, events and resourceVersions. Lists ([`list`]) and watches ([`watch`]) read it
//! with the [`options::ListOptions`] of a request, filtering by the field labels of
//! [`field_labels`]. Nothing here decides what a write may do: that is `admission` and `write`.

pub(crate) mod field_labels;
pub(crate) mod list;
pub(crate) mod options;
pub(crate) mod state;
pub(crate) mod store;
pub(crate) mod watch;
