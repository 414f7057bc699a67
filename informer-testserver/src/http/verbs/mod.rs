//! The verbs of a resource URL, one handler each. Reads lock the state for what they read;
//! writes take the request's write context into a `WriteSession` and answer with what it
//! stored and the warnings it gave.

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod delete_collection;
pub(crate) mod get;
pub(crate) mod list;
pub(crate) mod patch;
pub(crate) mod update;
pub(crate) mod watch;
