//! Writes: the verbs that change objects, each a method of a [`WriteSession`](session::WriteSession)
//! carrying the request's write context, running the admission plugins at its steps and
//! storing the result.
//!
//! `create.rs`, `update.rs`, `patch.rs` (with `patch_document.rs` and `strategic_merge.rs`),
//! `apply.rs` and `delete.rs` hold the verbs; `scale.rs` the scale subresource, written as an
//! update; `eviction.rs`, `binding.rs` and `ephemeral_containers.rs` the pod subresources that
//! write; `dry_run.rs` reads a request's `dryRun`.

pub(crate) mod apply;
pub(crate) mod approval;
pub(crate) mod binding;
pub(crate) mod body;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod dry_run;
pub(crate) mod ephemeral_containers;
pub(crate) mod eviction;
pub(crate) mod generation;
pub(crate) mod patch;
pub(crate) mod patch_document;
pub(crate) mod resize;
pub(crate) mod scale;
pub(crate) mod session;
pub(crate) mod strategic_merge;
pub(crate) mod update;

#[cfg(test)]
mod tests;
