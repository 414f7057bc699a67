//! Namespaces as kube-apiserver's `NamespaceLifecycle` admission and namespace controller treat
//! them: a new namespace is `Active` with the `kubernetes` finalizer; nothing can be created in
//! a terminating namespace (403), nor in a missing one (404), unless the server creates missing
//! namespaces (`TestServerBuilder::auto_create_namespaces`), which it then does first, as a
//! `kubectl create namespace` would; deleting a namespace marks it `Terminating`, deletes its
//! objects and, once none is left, removes the `kubernetes` finalizer and the namespace.
//! `default`, `kube-system` and `kube-public` cannot be deleted.
//!
//! The namespace controller of a cluster works in the background; here the objects go within
//! the delete request, so the answer (the terminating namespace) comes after their DELETED
//! events. Objects with finalizers stay, terminating, and the namespace with them, until their
//! finalizers are removed.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::admission::context::WriteContext;
use crate::admission::plugin::{Cascade, Plugin};
use crate::registry::{ResourceType, StorageKey};
use crate::status::ApiError;
use crate::storage::state::{State, now_rfc3339, with_type};
use crate::storage::store::{meta_str, metadata_mut, object_key};

/// The finalizer of the namespace controller, in a namespace's `spec.finalizers`.
const KUBERNETES_FINALIZER: &str = "kubernetes";

/// Namespaces kube-apiserver refuses to delete.
const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];

/// Whether `rt` is the core `namespaces` resource.
fn is_namespace_type(rt: &ResourceType) -> bool {
    rt.group.is_empty() && rt.plural == "namespaces"
}

/// Whether a namespace is being deleted.
fn is_terminating(namespace: &Value) -> bool {
    namespace["metadata"]["deletionTimestamp"].is_string() || namespace["status"]["phase"] == "Terminating"
}

/// What a new namespace gets: `status.phase: Active` and the `kubernetes` finalizer.
fn prepare_new_namespace(object: &mut Value) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    map.insert("status".into(), json!({"phase": "Active"}));
    let spec = map.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        *spec = json!({});
    }
    let finalizers = &mut spec["finalizers"];
    match finalizers.as_array_mut() {
        Some(list) if list.iter().any(|f| f == KUBERNETES_FINALIZER) => {}
        Some(list) => list.push(json!(KUBERNETES_FINALIZER)),
        None => *finalizers = json!([KUBERNETES_FINALIZER]),
    }
}

/// The label every namespace carries with its own name, set on each create and update as
/// kube-apiserver's namespace strategy sets it (so `namespaceSelector`s can select by name).
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

fn set_name_label(namespace: &mut Value) {
    let name = meta_str(namespace, "name").unwrap_or_default().to_owned();
    let meta = metadata_mut(namespace);
    let labels = meta.entry("labels").or_insert_with(|| json!({}));
    if !labels.is_object() {
        *labels = json!({});
    }
    labels[NAME_LABEL] = json!(name);
}

/// Whether a namespace still waits for its `spec.finalizers` (then a deleted namespace stays).
fn has_spec_finalizers(rt: &ResourceType, object: &Value) -> bool {
    is_namespace_type(rt)
        && object["spec"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
}

/// Namespace lifecycle as a write plugin: admission of new objects, deletion of a namespace
/// and of its contents, and its end once empty.
pub(crate) struct NamespaceLifecycle;

impl Plugin for NamespaceLifecycle {
    fn before_create(
        &self,
        writes: &mut dyn Cascade,
        rt: &ResourceType,
        object: &Value,
    ) -> Result<(), ApiError> {
        let ns = meta_str(object, "namespace").unwrap_or_default();
        let state = writes.state();
        if !rt.namespaced || ns.is_empty() || !state.auto_create_namespaces || writes.is_dry_run() {
            return Ok(());
        }
        let state = writes.state();
        match (namespace_type(state), namespace_object(state, ns)) {
            (Some(namespaces), None) => {
                let namespace = json!({"metadata": {"name": ns}});
                writes.create_as_server(&namespaces, namespace).map(|_| ())
            }
            _ => Ok(()),
        }
    }

    fn admit_create(
        &self,
        state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        if is_namespace_type(rt) {
            prepare_new_namespace(object);
            set_name_label(object);
        }
        let (ns, name) = object_key(object);
        admit_in_namespace(state, rt, &ns, &name)
    }

    fn admit_update(
        &self,
        _state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        _old: &Value,
        new: &mut Value,
    ) -> Result<(), ApiError> {
        if is_namespace_type(rt) {
            set_name_label(new);
        }
        Ok(())
    }

    fn holds(&self, rt: &ResourceType, object: &Value) -> bool {
        has_spec_finalizers(rt, object)
    }

    fn deleting(
        &self,
        writes: &mut dyn Cascade,
        rt: &ResourceType,
        old: &Value,
        _options: &Value,
    ) -> Result<Option<Value>, ApiError> {
        if !is_namespace_type(rt) {
            return Ok(None);
        }
        terminate_namespace(writes, rt, old.clone()).map(Some)
    }

    fn removed(&self, writes: &mut dyn Cascade, rt: &ResourceType, object: &Value) {
        let ns = meta_str(object, "namespace").unwrap_or_default().to_owned();
        if rt.namespaced && !ns.is_empty() && !writes.is_dry_run() {
            finish_namespace(writes.state(), &ns);
        }
    }
}

fn namespace_type(state: &State) -> Option<ResourceType> {
    state.registry.get("", "v1", "namespaces").cloned()
}

fn namespace_object(state: &State, name: &str) -> Option<(ResourceType, Value)> {
    let rt = namespace_type(state)?;
    let object = state.store.get(&rt, &(String::new(), name.to_string()))?.clone();
    Some((rt, object))
}

/// The admission of a create of `name` of `rt` in namespace `ns`: 403 when the namespace is
/// terminating, 404 when it is missing (unless the server creates missing namespaces: a dry
/// run is answered as if it had).
fn admit_in_namespace(state: &State, rt: &ResourceType, ns: &str, name: &str) -> Result<(), ApiError> {
    if !rt.namespaced {
        return Ok(());
    }
    match namespace_object(state, ns) {
        Some((_, namespace)) if is_terminating(&namespace) => Err(ApiError::forbidden(
            rt,
            name,
            &format!("unable to create new content in namespace {ns} because it is being terminated"),
        )
        .with_cause(
            "NamespaceTerminating",
            &format!("namespace {ns} is being terminated"),
            "metadata.namespace",
        )),
        Some(_) => Ok(()),
        None if state.auto_create_namespaces => Ok(()),
        None => {
            let namespaces = namespace_type(state)
                .unwrap_or_else(|| ResourceType::new("", "v1", "Namespace", "namespaces", false));
            Err(ApiError::not_found(&namespaces, ns))
        }
    }
}

/// Deletes a namespace: marks it terminating (or refuses an immortal one), deletes its
/// objects and removes it once they are gone. Returns the terminating namespace.
fn terminate_namespace(writes: &mut dyn Cascade, rt: &ResourceType, old: Value) -> Result<Value, ApiError> {
    let name = meta_str(&old, "name").unwrap_or_default().to_string();
    if IMMORTAL.contains(&name.as_str()) {
        return Err(ApiError::forbidden(
            rt,
            &name,
            "this namespace may not be deleted",
        ));
    }
    let terminating = if old["metadata"]["deletionTimestamp"].is_string() {
        with_type(old, rt)
    } else {
        let mut new = old;
        let meta = metadata_mut(&mut new);
        meta.insert("deletionTimestamp".into(), json!(now_rfc3339()));
        meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        if let Some(map) = new.as_object_mut() {
            let status = map.entry("status").or_insert_with(|| json!({}));
            if !status.is_object() {
                *status = json!({});
            }
            status["phase"] = json!("Terminating");
        }
        with_type(writes.state().store.put(rt, new), rt)
    };
    if !writes.is_dry_run() {
        delete_namespace_contents(writes, &name)?;
        finish_namespace(writes.state(), &name);
    }
    Ok(terminating)
}

/// One type per storage of every namespaced resource.
fn namespaced_types(state: &State) -> Vec<ResourceType> {
    let mut seen: BTreeSet<StorageKey> = BTreeSet::new();
    state
        .registry
        .iter()
        .filter(|rt| rt.namespaced && seen.insert(rt.storage_key()))
        .cloned()
        .collect()
}

fn delete_namespace_contents(writes: &mut dyn Cascade, ns: &str) -> Result<(), ApiError> {
    for rt in namespaced_types(writes.state()) {
        for name in writes.state().store.names_in_namespace(&rt.storage_key(), ns) {
            let terminating = writes
                .state()
                .store
                .get(&rt, &(ns.to_string(), name.clone()))
                .is_some_and(|o| o["metadata"]["deletionTimestamp"].is_string());
            if !terminating {
                writes.delete(&rt, Some(ns), &name, &Value::Null)?;
            }
        }
    }
    Ok(())
}

/// Removes a terminating namespace once it holds no object: first the `kubernetes`
/// finalizer (a MODIFIED event), then, without other finalizers, the namespace itself.
fn finish_namespace(state: &mut State, ns: &str) {
    let Some((rt, namespace)) = namespace_object(state, ns) else {
        return;
    };
    if !namespace["metadata"]["deletionTimestamp"].is_string() {
        return;
    }
    let storages: Vec<StorageKey> = namespaced_types(state)
        .iter()
        .map(ResourceType::storage_key)
        .collect();
    if storages.iter().any(|s| state.store.has_in_namespace(s, ns)) {
        return;
    }
    let mut finalized = namespace;
    if let Some(list) = finalized["spec"]["finalizers"].as_array_mut()
        && list.iter().any(|f| f == KUBERNETES_FINALIZER)
    {
        list.retain(|f| f != KUBERNETES_FINALIZER);
        finalized = state.store.put(&rt, finalized);
    }
    let done = finalized["metadata"]["finalizers"]
        .as_array()
        .is_none_or(Vec::is_empty)
        && !has_spec_finalizers(&rt, &finalized);
    if done {
        state
            .store
            .remove(&rt.storage_key(), &(String::new(), ns.to_string()));
    }
}

/// Creates the namespace `name` in a state built without the bootstrap objects, for unit tests
/// of other behaviour that write into it (it takes two revisions: the namespace, then its
/// `default` ServiceAccount).
#[cfg(test)]
pub(crate) fn create_test_namespace(state: &mut State, name: &str) {
    let rt = namespace_type(state).expect("namespaces served");
    state
        .write()
        .create(&rt, None, json!({"metadata": {"name": name}}))
        .expect("namespace created");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{Registry, builtin_types};
    use crate::storage::state::UpdateMode;

    fn state() -> (State, ResourceType, ResourceType) {
        let s = State::new(Registry::with_types(builtin_types()), 100);
        let ns = namespace_type(&s).expect("namespaces served");
        let cm = s
            .registry
            .get("", "v1", "configmaps")
            .cloned()
            .expect("configmaps served");
        (s, ns, cm)
    }

    #[test]
    fn new_namespaces_are_active_with_the_kubernetes_finalizer() {
        let (mut s, ns, _) = state();
        let created = s
            .write()
            .create(
                &ns,
                None,
                json!({"metadata": {"name": "a"}, "spec": {"finalizers": ["x"]}}),
            )
            .expect("created");
        assert_eq!(created["status"]["phase"], "Active");
        assert_eq!(created["spec"]["finalizers"], json!(["x", "kubernetes"]));
        assert_eq!(created["metadata"]["labels"]["kubernetes.io/metadata.name"], "a");
        let mut relabelled = created.clone();
        relabelled["metadata"]["labels"] = json!({"team": "x", "kubernetes.io/metadata.name": "other"});
        let updated = s
            .write()
            .update(&ns, None, "a", relabelled, UpdateMode::Main)
            .expect("updated");
        assert_eq!(
            updated["metadata"]["labels"],
            json!({"team": "x", "kubernetes.io/metadata.name": "a"})
        );
    }

    #[test]
    fn deletion_empties_then_removes_the_namespace() {
        let (mut s, ns, cm) = state();
        s.write()
            .create(&ns, None, json!({"metadata": {"name": "a"}}))
            .expect("ns");
        s.write()
            .create(&cm, Some("a"), json!({"metadata": {"name": "one"}}))
            .expect("cm");
        s.write()
            .create(
                &cm,
                Some("a"),
                json!({"metadata": {"name": "held", "finalizers": ["f"]}}),
            )
            .expect("cm with finalizer");
        s.write()
            .create(&ns, None, json!({"metadata": {"name": "b"}}))
            .expect("ns b");
        s.write()
            .create(&cm, Some("b"), json!({"metadata": {"name": "other"}}))
            .expect("elsewhere");
        let terminating = s.write().delete(&ns, None, "a", &Value::Null).expect("deleted");
        assert_eq!(terminating["status"]["phase"], "Terminating");
        assert!(terminating["metadata"]["deletionTimestamp"].is_string());
        assert!(s.get(&cm, Some("a"), "one").is_err());
        assert!(s.get(&cm, Some("b"), "other").is_ok());
        assert!(
            s.get(&ns, None, "a").is_ok(),
            "kept while an object is finalizing"
        );
        let err = s
            .write()
            .create(&cm, Some("a"), json!({"metadata": {"name": "late"}}))
            .expect_err("terminating");
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message,
            "configmaps \"late\" is forbidden: unable to create new content in namespace a because it is being terminated"
        );
        let mut held = s.get(&cm, Some("a"), "held").expect("held");
        held["metadata"]["finalizers"] = json!([]);
        s.write()
            .update(&cm, Some("a"), "held", held, UpdateMode::Main)
            .expect("finalized");
        assert!(s.get(&ns, None, "a").is_err(), "removed once empty");
    }

    #[test]
    fn missing_namespaces_are_not_found_unless_created_on_demand() {
        let (mut s, ns, cm) = state();
        let err = s
            .write()
            .create(&cm, Some("gone"), json!({"metadata": {"name": "x"}}))
            .expect_err("missing namespace");
        assert_eq!(
            (err.code, err.message.as_str()),
            (404, "namespaces \"gone\" not found")
        );
        assert!(s.get(&ns, None, "gone").is_err());
        s.auto_create_namespaces = true;
        let before = s.store.resource_version();
        let created = s
            .write()
            .create(&cm, Some("gone"), json!({"metadata": {"name": "x"}}))
            .expect("namespace created first");
        let namespace = s.get(&ns, None, "gone").expect("created");
        assert_eq!(namespace["status"]["phase"], "Active");
        assert_eq!(
            namespace["metadata"]["resourceVersion"],
            json!((before + 1).to_string())
        );
        // then the namespace's default ServiceAccount, then the object
        assert_eq!(
            created["metadata"]["resourceVersion"],
            json!((before + 3).to_string())
        );
    }

    #[test]
    fn immortal_namespaces_cannot_be_deleted() {
        let (mut s, ns, _) = state();
        for name in ["default", "kube-system", "kube-public"] {
            s.write()
                .create(&ns, None, json!({"metadata": {"name": name}}))
                .expect("created");
            let err = s
                .write()
                .delete(&ns, None, name, &Value::Null)
                .expect_err("immortal");
            assert_eq!(err.code, 403);
        }
    }
}
