//! Garbage collection of dependents, as kube-apiserver and the controller manager's garbage
//! collector do it together: an object whose `metadata.ownerReferences` names an owner's uid is
//! that owner's dependent, and deleting the owner propagates by the delete's
//! `propagationPolicy`:
//!
//! - `Background` (the default, except for `batch/v1` Jobs): the owner goes at once, then each
//!   dependent goes too, unless another of its owners still exists, in which case only its
//!   reference to the deleted owner is dropped.
//! - `Foreground`: the owner stays, with a `deletionTimestamp` and the `foregroundDeletion`
//!   finalizer, while its dependents are deleted (those with `blockOwnerDeletion: true` in
//!   foreground themselves); once no dependent with `blockOwnerDeletion: true` is left, the
//!   finalizer is removed and the owner goes.
//! - `Orphan` (also `orphanDependents: true`, and the default of Jobs): the dependents lose
//!   their reference to the owner and stay.
//!
//! A cluster's garbage collector works in the background; here the dependents go within the
//! delete request (their DELETED events come before the answer), and a dependent held by its
//! own finalizers holds a foreground deletion until they are removed. Objects created with
//! references to owners that do not exist are kept (a cluster's collector deletes them).

use serde_json::{Value, json};

use crate::admission::finalizers::{add_finalizer, has_finalizer, remove_finalizer};
use crate::admission::plugin::{Cascade, Plugin};
use crate::registry::{ResourceType, StorageKey};
use crate::status::ApiError;
use crate::storage::state::{State, begin_deletion, with_type};
use crate::storage::store::{ObjectKey, meta_str, metadata_mut, object_key};

/// The finalizer of an owner whose dependents are being deleted first.
pub(crate) const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// How a delete propagates to the object's dependents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Propagation {
    /// Delete the owner now, its dependents after.
    Background,
    /// Delete the dependents first, then the owner.
    Foreground,
    /// Keep the dependents, without their reference to the owner.
    Orphan,
}

/// The propagation a delete of `rt` with these `DeleteOptions` asks for: `propagationPolicy`,
/// else `orphanDependents`, else the resource's default. Both set, or an unknown policy, is the
/// 422 kube-apiserver answers.
pub(crate) fn propagation(rt: &ResourceType, options: &Value) -> Result<Propagation, ApiError> {
    let policy = options.get("propagationPolicy").filter(|p| !p.is_null());
    let orphan = options.get("orphanDependents").and_then(Value::as_bool);
    if let (Some(_), Some(orphan)) = (policy, orphan) {
        return Err(invalid_options(
            "orphanDependents",
            &format!("Invalid value: {orphan}: orphanDependents and deletionPropagation cannot be both set"),
        ));
    }
    match (policy.map(|p| p.as_str().unwrap_or_default()), orphan) {
        (Some("Background"), _) | (None, Some(false)) => Ok(Propagation::Background),
        (Some("Foreground"), _) => Ok(Propagation::Foreground),
        (Some("Orphan"), _) | (None, Some(true)) => Ok(Propagation::Orphan),
        (Some(other), _) => Err(invalid_options(
            "propagationPolicy",
            &format!(
                "Unsupported value: {other:?}: supported values: \"Foreground\", \"Background\", \"Orphan\""
            ),
        )),
        (None, None) if rt.group == "batch" && rt.plural == "jobs" => Ok(Propagation::Orphan),
        (None, None) => Ok(Propagation::Background),
    }
}

fn invalid_options(field: &str, detail: &str) -> ApiError {
    ApiError::new(
        422,
        "Invalid",
        format!("DeleteOptions.meta.k8s.io \"\" is invalid: {field}: {detail}"),
    )
    .with_details(json!({
        "group": "meta.k8s.io",
        "kind": "DeleteOptions",
        "causes": [{"reason": "FieldValueInvalid", "message": detail, "field": field}],
    }))
}

/// A dependent found through the owner index.
struct Dependent {
    rt: ResourceType,
    key: ObjectKey,
    object: Value,
}

impl Dependent {
    fn namespace(&self) -> Option<&str> {
        (!self.key.0.is_empty()).then_some(self.key.0.as_str())
    }

    /// Whether its reference to `uid` blocks the owner's foreground deletion.
    fn blocks(&self, uid: &str) -> bool {
        references(&self.object)
            .iter()
            .any(|r| r["uid"] == uid && r["blockOwnerDeletion"] == true)
    }

    fn is_terminating(&self) -> bool {
        self.object["metadata"]["deletionTimestamp"].is_string()
    }
}

fn references(object: &Value) -> Vec<Value> {
    object["metadata"]["ownerReferences"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Garbage collection as a write plugin: a delete's propagation, and the dependents of what
/// was removed.
pub(crate) struct GarbageCollector;

impl Plugin for GarbageCollector {
    fn deleting(
        &self,
        writes: &mut dyn Cascade,
        rt: &ResourceType,
        old: &Value,
        options: &Value,
    ) -> Result<Option<Value>, ApiError> {
        let propagation = propagation(rt, options)?;
        if writes.is_dry_run() || old["metadata"]["deletionTimestamp"].is_string() {
            return Ok(None);
        }
        let uid = meta_str(old, "uid").unwrap_or_default();
        let has_dependents = !writes.state().store.dependents_of(uid).is_empty();
        match propagation {
            Propagation::Orphan => {
                orphan_dependents(writes.state(), old);
                Ok(None)
            }
            Propagation::Foreground if has_dependents => {
                delete_in_foreground(writes, rt, old.clone()).map(Some)
            }
            Propagation::Foreground | Propagation::Background => Ok(None),
        }
    }

    fn removed(&self, writes: &mut dyn Cascade, _rt: &ResourceType, object: &Value) {
        if !writes.is_dry_run() {
            collect_garbage(writes, object);
        }
    }
}

fn type_of_storage(state: &State, storage: &StorageKey) -> Option<ResourceType> {
    state
        .registry
        .iter()
        .find(|rt| &rt.storage_key() == storage)
        .cloned()
}

fn dependents(state: &State, uid: &str) -> Vec<Dependent> {
    state
        .store
        .dependents_of(uid)
        .into_iter()
        .filter_map(|(storage, key)| {
            let rt = type_of_storage(state, &storage)?;
            let object = state.store.get(&rt, &key)?.clone();
            Some(Dependent { rt, key, object })
        })
        .collect()
}

/// Whether the owner a reference of an object in `namespace` names exists with its uid.
fn owner_exists(state: &State, reference: &Value, namespace: &str) -> bool {
    let api_version = reference["apiVersion"].as_str().unwrap_or_default();
    let kind = reference["kind"].as_str().unwrap_or_default();
    let Some(rt) = state.registry.by_kind(api_version, kind) else {
        return false;
    };
    let ns = if rt.namespaced { namespace } else { "" };
    let name = reference["name"].as_str().unwrap_or_default();
    state
        .store
        .get(rt, &(ns.to_owned(), name.to_owned()))
        .is_some_and(|owner| meta_str(owner, "uid") == reference["uid"].as_str())
}

/// Drops a dependent's reference to `uid` (a MODIFIED event).
fn drop_reference(state: &mut State, dependent: &Dependent, uid: &str) {
    let mut object = dependent.object.clone();
    let kept: Vec<Value> = references(&object)
        .into_iter()
        .filter(|r| r["uid"] != uid)
        .collect();
    let meta = metadata_mut(&mut object);
    if kept.is_empty() {
        meta.remove("ownerReferences");
    } else {
        meta.insert("ownerReferences".into(), json!(kept));
    }
    state.store.put(&dependent.rt, object);
}

/// Before an owner is deleted with `Orphan`: its dependents drop their reference to it.
fn orphan_dependents(state: &mut State, owner: &Value) {
    let Some(uid) = meta_str(owner, "uid").map(str::to_owned) else {
        return;
    };
    for dependent in dependents(state, &uid) {
        drop_reference(state, &dependent, &uid);
    }
}

/// A `Foreground` delete of `owner` (which has dependents): marks it with the
/// `foregroundDeletion` finalizer, deletes its dependents, and removes it once none that
/// blocks is left. Returns the owner as marked.
fn delete_in_foreground(
    writes: &mut dyn Cascade,
    rt: &ResourceType,
    owner: Value,
) -> Result<Value, ApiError> {
    let uid = meta_str(&owner, "uid").unwrap_or_default().to_owned();
    let mut marked = owner;
    let meta = metadata_mut(&mut marked);
    if !meta.contains_key("deletionTimestamp") {
        begin_deletion(meta);
    }
    add_finalizer(meta, FOREGROUND_FINALIZER);
    let marked = with_type(writes.state().store.put(rt, marked), rt);
    for dependent in dependents(writes.state(), &uid) {
        if dependent.is_terminating() {
            continue;
        }
        let policy = if dependent.blocks(&uid) {
            "Foreground"
        } else {
            "Background"
        };
        let options = json!({"propagationPolicy": policy});
        match writes.delete(&dependent.rt, dependent.namespace(), &dependent.key.1, &options) {
            Ok(_) => {}
            Err(error) if error.code == 404 => {}
            Err(error) => return Err(error),
        }
    }
    finish_foreground(writes, rt, &object_key(&marked));
    Ok(marked)
}

/// Removes the `foregroundDeletion` finalizer of an owner once no dependent that blocks
/// its deletion is left; the owner goes when no other finalizer holds it.
fn finish_foreground(writes: &mut dyn Cascade, rt: &ResourceType, key: &ObjectKey) {
    let Some(owner) = writes.state().store.get(rt, key).cloned() else {
        return;
    };
    if !has_finalizer(&owner, FOREGROUND_FINALIZER) {
        return;
    }
    let uid = meta_str(&owner, "uid").unwrap_or_default();
    if dependents(writes.state(), uid).iter().any(|d| d.blocks(uid)) {
        return;
    }
    remove_finalizer(writes, rt, key, FOREGROUND_FINALIZER);
}

/// After `removed` is gone: each dependent is deleted unless another owner of it exists
/// (then it only loses the reference), and owners of `removed` waiting in foreground
/// deletion are checked again.
fn collect_garbage(writes: &mut dyn Cascade, removed: &Value) {
    if let Some(uid) = meta_str(removed, "uid").map(str::to_owned) {
        for dependent in dependents(writes.state(), &uid) {
            let namespace = dependent.key.0.clone();
            let other_owner = references(&dependent.object)
                .iter()
                .filter(|r| r["uid"] != uid.as_str())
                .any(|r| owner_exists(writes.state(), r, &namespace));
            if other_owner {
                drop_reference(writes.state(), &dependent, &uid);
            } else if !dependent.is_terminating() {
                let options = json!({"propagationPolicy": "Background"});
                let _ = writes.delete(&dependent.rt, dependent.namespace(), &dependent.key.1, &options);
            }
        }
    }
    let namespace = meta_str(removed, "namespace").unwrap_or_default().to_owned();
    for reference in references(removed) {
        let api_version = reference["apiVersion"].as_str().unwrap_or_default();
        let kind = reference["kind"].as_str().unwrap_or_default();
        let Some(rt) = writes.state().registry.by_kind(api_version, kind).cloned() else {
            continue;
        };
        let ns = if rt.namespaced {
            namespace.clone()
        } else {
            String::new()
        };
        let name = reference["name"].as_str().unwrap_or_default().to_owned();
        finish_foreground(writes, &rt, &(ns, name));
    }
}
