//! Object semantics shared by HTTP and the Rust API: what create, update, patch and delete do to
//! metadata (uid, creationTimestamp, generation, resourceVersion, finalizers), their errors, and
//! the CRD hooks that change the set of served resources.

use serde_json::{Value, json};

use crate::crd;
use crate::crd_schema;
use crate::field_ownership::Writer;
use crate::field_validation;
use crate::garbage_collector::{self, Propagation};
use crate::namespace_lifecycle::{has_spec_finalizers, is_namespace_type, prepare_new_namespace};
use crate::patch::{self, PatchType};
use crate::registry::{Registry, ResourceType};
use crate::selector::ObjectFilter;
use crate::status::ApiError;
use crate::storage::{ObjectKey, Store, meta_str, metadata_mut, object_key};
use crate::strategic_merge;
use crate::validation;

/// What an update may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpdateMode {
    /// PUT on the resource: the status of types with a status subresource is kept.
    Main,
    /// PUT on `.../status`: only the status changes.
    Status,
    /// Rust API update: everything changes.
    Full,
}

/// The registry and the store, behind one lock so CRD writes and served types change together.
pub(crate) struct State {
    /// Served resource types.
    pub(crate) registry: Registry,
    /// Objects and history.
    pub(crate) store: Store,
    /// Creating an object in a namespace that does not exist first creates the namespace
    /// (otherwise it is refused with 404, as kube-apiserver refuses it).
    pub(crate) auto_create_namespaces: bool,
    /// Who writes in the current HTTP request (its field manager); `None` for the Rust API,
    /// whose writes leave `managedFields` as they are.
    pub(crate) writer: Option<Writer>,
    /// Whether the current apply takes conflicting fields over (`force=true`).
    pub(crate) force: bool,
    /// What the current write does about unknown fields of custom resources.
    pub(crate) field_validation: field_validation::Mode,
    /// The warnings of the current write, for its `Warning` headers.
    pub(crate) warnings: Vec<String>,
}

/// Current time as RFC 3339 with second precision, like `metav1.Time`.
pub(crate) fn now_rfc3339() -> String {
    jiff::Timestamp::from_second(jiff::Timestamp::now().as_second())
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// Marks an object's metadata as being deleted, as kube-apiserver's graceful deletion does for
/// an object that finalizers keep: a `deletionTimestamp` (now), a grace period of 0, and the
/// generation raised by one where the type keeps one, so that controllers filtering on
/// generation changes see the deletion begin.
pub(crate) fn begin_deletion(meta: &mut serde_json::Map<String, Value>) {
    meta.insert("deletionTimestamp".into(), json!(now_rfc3339()));
    meta.insert("deletionGracePeriodSeconds".into(), json!(0));
    if let Some(generation) = meta.get("generation").and_then(Value::as_i64)
        && generation > 0
    {
        meta.insert("generation".into(), json!(generation + 1));
    }
}

/// A random UUID (version 4 layout).
pub(crate) fn new_uid() -> String {
    let n = fastrand::u128(..);
    let n = (n & !(0xf << 76)) | (0x4 << 76);
    let n = (n & !(0x3 << 62)) | (0x2 << 62);
    let h = format!("{n:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// `generateName` suffix: five characters from the alphabet kube-apiserver uses.
fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5)
        .map(|_| ALPHABET[fastrand::usize(..ALPHABET.len())] as char)
        .collect()
}

/// Sets `apiVersion` and `kind` of an object to those of `rt`.
pub(crate) fn with_type(mut object: Value, rt: &ResourceType) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".into(), json!(rt.api_version()));
        map.insert("kind".into(), json!(rt.kind));
    }
    object
}

/// Everything but `metadata` and `status`: a change there bumps `generation`.
fn spec_part(object: &Value) -> Value {
    let mut v = object.clone();
    if let Some(map) = v.as_object_mut() {
        for field in ["metadata", "status", "apiVersion", "kind"] {
            map.remove(field);
        }
    }
    v
}

fn without_rv(object: &Value) -> Value {
    let mut v = object.clone();
    metadata_mut(&mut v).remove("resourceVersion");
    v
}

fn is_crd(rt: &ResourceType) -> bool {
    rt.group == "apiextensions.k8s.io" && rt.plural == "customresourcedefinitions"
}

impl State {
    /// State with the given types and history size.
    pub(crate) fn new(registry: Registry, history_limit: usize) -> Self {
        Self {
            registry,
            store: Store::new(history_limit),
            auto_create_namespaces: false,
            writer: None,
            force: false,
            field_validation: field_validation::Mode::Warn,
            warnings: Vec::new(),
        }
    }

    /// Checks the body's `apiVersion`/`kind` and namespace and sets the URL's namespace.
    fn check_body(&self, rt: &ResourceType, ns: Option<&str>, object: &mut Value) -> Result<(), ApiError> {
        if !object.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request must be a JSON object",
            ));
        }
        if let Some(av) = object["apiVersion"].as_str()
            && !av.is_empty()
            && av != rt.api_version()
        {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({})",
                rt.api_version()
            )));
        }
        if let Some(kind) = object["kind"].as_str()
            && !kind.is_empty()
            && kind != rt.kind
        {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({kind}) does not match the expected kind ({})",
                rt.kind
            )));
        }
        let meta = metadata_mut(object);
        if rt.namespaced {
            let ns = ns.unwrap_or("default");
            match meta.get("namespace").and_then(Value::as_str) {
                Some(body_ns) if !body_ns.is_empty() && body_ns != ns => {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
                _ => {
                    meta.insert("namespace".into(), json!(ns));
                }
            }
        } else {
            meta.remove("namespace");
        }
        Ok(())
    }

    /// Current object or 404.
    pub(crate) fn get(&self, rt: &ResourceType, ns: Option<&str>, name: &str) -> Result<Value, ApiError> {
        self.store
            .get(rt, &key(rt, ns, name))
            .map(|o| with_type(o.clone(), rt))
            .ok_or_else(|| ApiError::not_found(rt, name))
    }

    /// Creates an object: name (or generateName), uid, creationTimestamp, generation 1.
    pub(crate) fn create(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        mut object: Value,
    ) -> Result<Value, ApiError> {
        self.check_body(rt, ns, &mut object)?;
        let now = now_rfc3339();
        let meta = metadata_mut(&mut object);
        let name = match meta.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
            Some(name) => name.to_string(),
            None => match meta
                .get("generateName")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
            {
                Some(prefix) => format!("{prefix}{}", name_suffix()),
                None => {
                    return Err(ApiError::invalid(
                        rt,
                        "",
                        "metadata.name",
                        "Required value",
                        "name or generateName is required",
                    ));
                }
            },
        };
        let generate_name = meta.get("generateName").and_then(Value::as_str);
        validation::validate_name(rt, generate_name, &name)?;
        meta.insert("name".into(), json!(name));
        meta.insert("uid".into(), json!(new_uid()));
        meta.insert("creationTimestamp".into(), json!(now));
        meta.insert("generation".into(), json!(1));
        for field in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            meta.remove(field);
        }
        if is_namespace_type(rt) {
            prepare_new_namespace(&mut object);
        }
        let (object_ns, _) = object_key(&object);
        self.admit_in_namespace(rt, &object_ns, &name)?;
        if self.store.get(rt, &object_key(&object)).is_some() {
            return Err(ApiError::already_exists(rt, &name));
        }
        let mut object = with_type(object, rt);
        self.check_custom_resource(rt, &name, &mut object)?;
        self.record_update(rt, None, &mut object);
        if is_crd(rt) {
            let types = crd::resource_types(rt, &object)?;
            let mut object = object;
            crd::set_established(&mut object, &now);
            let stored = self.store.put(rt, object);
            if !self.is_dry_run() {
                for t in types {
                    self.registry.add(t, Some(name.clone()));
                }
            }
            return Ok(stored);
        }
        Ok(self.store.put(rt, object))
    }

    /// Replaces an object, checking the resourceVersion precondition.
    pub(crate) fn update(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        mut object: Value,
        mode: UpdateMode,
    ) -> Result<Value, ApiError> {
        self.check_body(rt, ns, &mut object)?;
        let body_name = meta_str(&object, "name").unwrap_or_default().to_string();
        if body_name.is_empty() {
            metadata_mut(&mut object).insert("name".into(), json!(name));
        } else if body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let Some(old) = self.store.get(rt, &key(rt, ns, name)).cloned() else {
            return Err(ApiError::not_found(rt, name));
        };
        if let Some(rv) = meta_str(&object, "resourceVersion").filter(|rv| !rv.is_empty())
            && Some(rv) != meta_str(&old, "resourceVersion")
        {
            return Err(ApiError::conflict(rt, name));
        }
        let mut new = match mode {
            UpdateMode::Status => {
                let mut new = old.clone();
                if let Some(map) = new.as_object_mut() {
                    map.insert(
                        "status".into(),
                        object.get("status").cloned().unwrap_or(Value::Null),
                    );
                }
                new
            }
            UpdateMode::Main if rt.status_subresource => {
                let mut new = object;
                if let Some(map) = new.as_object_mut() {
                    match old.get("status") {
                        Some(status) => map.insert("status".into(), status.clone()),
                        None => map.remove("status"),
                    };
                }
                new
            }
            _ => object,
        };
        let old_meta = old.get("metadata").cloned().unwrap_or_default();
        let meta = metadata_mut(&mut new);
        for field in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            match old_meta.get(field) {
                Some(v) => meta.insert(field.into(), v.clone()),
                None => meta.remove(field),
            };
        }
        let generation = old_meta.get("generation").and_then(Value::as_i64).unwrap_or(1);
        let generation = if spec_part(&new) != spec_part(&old) {
            generation + 1
        } else {
            generation
        };
        metadata_mut(&mut new).insert("generation".into(), json!(generation));
        let mut new = with_type(new, rt);
        self.check_custom_resource(rt, name, &mut new)?;
        self.record_update(rt, Some(&old), &mut new);
        if without_rv(&new) == without_rv(&old) {
            return Ok(with_type(old, rt));
        }
        let finalized = new["metadata"]["deletionTimestamp"].is_string()
            && new["metadata"]["finalizers"].as_array().is_none_or(Vec::is_empty)
            && !has_spec_finalizers(rt, &new);
        if finalized {
            self.store.put(rt, new.clone());
            return self
                .remove(rt, &object_key(&new))
                .ok_or_else(|| ApiError::not_found(rt, name));
        }
        if is_crd(rt) {
            let types = crd::resource_types(rt, &new)?;
            let stored = self.store.put(rt, new);
            if !self.is_dry_run() {
                self.registry.remove_crd(name);
                for t in types {
                    self.registry.add(t, Some(name.to_string()));
                }
            }
            return Ok(stored);
        }
        Ok(self.store.put(rt, new))
    }

    /// Patches an object; an apply patch creates it when missing. Returns the object and
    /// whether it was created.
    pub(crate) fn patch(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &Value,
        status: bool,
    ) -> Result<(Value, bool), ApiError> {
        if patch_type == PatchType::Apply {
            return self.server_side_apply(rt, ns, name, body, status);
        }
        let strategic_root = match patch_type {
            PatchType::Strategic => Some(strategic_merge::root_type(&rt.group, &rt.version, &rt.kind)?),
            _ => None,
        };
        let Some(old) = self.store.get(rt, &key(rt, ns, name)).cloned() else {
            return Err(ApiError::not_found(rt, name));
        };
        let mut new = with_type(old, rt);
        match patch_type {
            PatchType::Json => {
                patch::json_patch(&mut new, body).map_err(|e| ApiError::new(422, "Invalid", e.to_string()))?
            }
            _ if !body.is_object() => {
                return Err(ApiError::bad_request("the patch must be a JSON object"));
            }
            _ => match strategic_root {
                Some(root) => strategic_merge::apply(&mut new, body, root)?,
                None => patch::merge(&mut new, body),
            },
        }
        let mode = if status {
            UpdateMode::Status
        } else {
            UpdateMode::Main
        };
        self.update(rt, ns, name, new, mode).map(|o| (o, false))
    }

    /// Deletes an object (honouring `preconditions` and finalizers).
    pub(crate) fn delete(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        options: &Value,
    ) -> Result<Value, ApiError> {
        let k = key(rt, ns, name);
        let Some(old) = self.store.get(rt, &k).cloned() else {
            return Err(ApiError::not_found(rt, name));
        };
        let pre = &options["preconditions"];
        if let Some(uid) = pre["uid"].as_str() {
            let actual = meta_str(&old, "uid").unwrap_or_default();
            if uid != actual {
                return Err(ApiError::conflict_with(
                    rt,
                    name,
                    &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"),
                ));
            }
        }
        if let Some(rv) = pre["resourceVersion"].as_str() {
            let actual = meta_str(&old, "resourceVersion").unwrap_or_default();
            if rv != actual {
                return Err(ApiError::conflict_with(
                    rt,
                    name,
                    &format!(
                        "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                    ),
                ));
            }
        }
        if is_namespace_type(rt) {
            return self.terminate_namespace(rt, old);
        }
        let propagation = garbage_collector::propagation(rt, options)?;
        let deleting = old["metadata"]["deletionTimestamp"].is_string();
        if !self.is_dry_run() && !deleting {
            let uid = meta_str(&old, "uid").unwrap_or_default();
            let has_dependents = !self.store.dependents_of(uid).is_empty();
            match propagation {
                Propagation::Orphan => self.orphan_dependents(&old),
                Propagation::Foreground if has_dependents => return self.delete_in_foreground(rt, old),
                Propagation::Foreground | Propagation::Background => {}
            }
        }
        if old["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
        {
            if old["metadata"]["deletionTimestamp"].is_string() {
                return Ok(with_type(old, rt));
            }
            let mut new = old;
            begin_deletion(metadata_mut(&mut new));
            return Ok(with_type(self.store.put(rt, new), rt));
        }
        self.remove(rt, &k).ok_or_else(|| ApiError::not_found(rt, name))
    }

    /// Deletes every object passing `filter`; returns the deleted objects.
    pub(crate) fn delete_collection(
        &mut self,
        rt: &ResourceType,
        filter: &ObjectFilter,
    ) -> Result<Vec<Value>, ApiError> {
        let objects = self.store.snapshot(rt, None)?;
        let mut deleted = Vec::new();
        for (k, object) in objects {
            if filter.matches(&object) {
                let ns = (!k.0.is_empty()).then_some(k.0.as_str());
                deleted.push(self.delete(rt, ns, &k.1, &Value::Null)?);
            }
        }
        Ok(deleted)
    }

    /// Prunes and validates an object of a CRD-defined type against its version's schema:
    /// unknown fields are refused (`Strict`) or dropped (with warnings under `Warn`), invalid
    /// values are a 422.
    fn check_custom_resource(
        &mut self,
        rt: &ResourceType,
        name: &str,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        let Some(version) = self.crd_version(rt) else {
            return Ok(());
        };
        let schema = &version["schema"]["openAPIV3Schema"];
        if schema.is_null() {
            return Ok(());
        }
        let checked = crd_schema::check(object, schema);
        let warnings = field_validation::Findings(checked.unknown).resolve(self.field_validation, rt)?;
        self.warnings.extend(warnings);
        if !checked.invalid.is_empty() {
            return Err(ApiError::invalid_causes(rt, name, &checked.invalid));
        }
        Ok(())
    }

    /// Runs `write` under `mode` and returns its result with the warnings it gave.
    pub(crate) fn with_field_validation<R>(
        &mut self,
        mode: field_validation::Mode,
        write: impl FnOnce(&mut Self) -> R,
    ) -> (R, Vec<String>) {
        self.field_validation = mode;
        self.warnings.clear();
        let result = write(self);
        self.field_validation = field_validation::Mode::Warn;
        (result, std::mem::take(&mut self.warnings))
    }

    /// Removes an object now; its dependents are garbage collected, and a CRD also takes its
    /// resources and their objects away.
    fn remove(&mut self, rt: &ResourceType, k: &ObjectKey) -> Option<Value> {
        let removed = self.store.remove(&rt.storage_key(), k)?;
        self.collect_garbage(&removed);
        if rt.namespaced && !k.0.is_empty() {
            self.finish_namespace(&k.0);
        }
        if is_crd(rt) && !self.is_dry_run() {
            for t in self.registry.remove_crd(&k.1) {
                let storage = t.storage_key();
                if !self.registry.has_storage(&storage) {
                    self.store.remove_all(&storage);
                }
            }
        }
        Some(with_type(removed, rt))
    }
}

/// Storage key of `name` in `ns` (ignored for cluster-scoped types).
fn key(rt: &ResourceType, ns: Option<&str>, name: &str) -> ObjectKey {
    let ns = if rt.namespaced {
        ns.unwrap_or("default")
    } else {
        ""
    };
    (ns.to_string(), name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtin_types;

    /// A state with the namespace `ns` (revision 1).
    fn state() -> State {
        let mut s = State::new(Registry::with_types(builtin_types()), 100);
        crate::namespace_lifecycle::create_test_namespace(&mut s, "ns");
        s
    }

    fn pods() -> ResourceType {
        ResourceType::new("", "v1", "Pod", "pods", true).with_status_subresource(true)
    }

    #[test]
    fn create_sets_server_metadata() {
        let mut s = state();
        let pod = s
            .create(
                &pods(),
                Some("ns"),
                json!({"metadata": {"generateName": "web-"}, "spec": {}}),
            )
            .expect("created");
        let meta = &pod["metadata"];
        assert!(
            meta["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("web-") && n.len() == 9)
        );
        assert_eq!(meta["namespace"], "ns");
        assert_eq!(meta["generation"], 1);
        assert_eq!(meta["resourceVersion"], "2");
        assert_eq!(meta["uid"].as_str().map(str::len), Some(36));
        assert!(
            meta["creationTimestamp"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z') && t.len() == 20)
        );
        assert_eq!(
            (pod["kind"].as_str(), pod["apiVersion"].as_str()),
            (Some("Pod"), Some("v1"))
        );
        let err = s
            .create(&pods(), Some("ns"), json!({"metadata": {}}))
            .expect_err("no name");
        assert_eq!(err.code, 422);
        let err = s
            .create(
                &pods(),
                Some("ns"),
                json!({"metadata": {"name": "x", "namespace": "other"}}),
            )
            .expect_err("namespace mismatch");
        assert_eq!(err.code, 400);
    }

    #[test]
    fn update_conflicts_generation_and_status() {
        let mut s = state();
        let pod = s
            .create(
                &pods(),
                Some("ns"),
                json!({"metadata": {"name": "p"}, "spec": {"a": 1}}),
            )
            .expect("created");
        let mut changed = pod.clone();
        changed["metadata"]["labels"] = json!({"x": "y"});
        changed["status"] = json!({"phase": "Running"});
        let updated = s
            .update(&pods(), Some("ns"), "p", changed, UpdateMode::Main)
            .expect("updated");
        assert_eq!(updated["metadata"]["generation"], 1);
        assert!(
            updated.get("status").is_none(),
            "status is kept from the old object"
        );
        let err = s
            .update(&pods(), Some("ns"), "p", pod.clone(), UpdateMode::Main)
            .expect_err("stale");
        assert_eq!(err.code, 409);
        let mut spec = updated.clone();
        spec["spec"]["a"] = json!(2);
        let updated = s
            .update(&pods(), Some("ns"), "p", spec, UpdateMode::Main)
            .expect("updated");
        assert_eq!(updated["metadata"]["generation"], 2);
        let same = s
            .update(&pods(), Some("ns"), "p", updated.clone(), UpdateMode::Main)
            .expect("no-op");
        assert_eq!(
            same["metadata"]["resourceVersion"],
            updated["metadata"]["resourceVersion"]
        );
        let mut renamed = updated;
        renamed["metadata"]["name"] = json!("q");
        assert_eq!(
            s.update(&pods(), Some("ns"), "p", renamed, UpdateMode::Main)
                .map_err(|e| e.code)
                .err(),
            Some(400)
        );
    }

    #[test]
    fn finalizers_delay_deletion() {
        let mut s = state();
        s.create(
            &pods(),
            Some("ns"),
            json!({"metadata": {"name": "p", "finalizers": ["x"]}}),
        )
        .expect("created");
        let terminating = s.delete(&pods(), Some("ns"), "p", &Value::Null).expect("marked");
        assert!(terminating["metadata"]["deletionTimestamp"].is_string());
        // kube-apiserver's updateForGracefulDeletionAndFinalizers raises the generation
        assert_eq!(terminating["metadata"]["generation"], 2);
        let mut done = terminating;
        done["metadata"]["finalizers"] = json!([]);
        s.update(&pods(), Some("ns"), "p", done, UpdateMode::Main)
            .expect("finalized");
        assert_eq!(
            s.get(&pods(), Some("ns"), "p").map_err(|e| e.code).err(),
            Some(404)
        );
    }

    #[test]
    fn delete_preconditions() {
        let mut s = state();
        s.create(&pods(), Some("ns"), json!({"metadata": {"name": "p"}}))
            .expect("created");
        let err = s
            .delete(
                &pods(),
                Some("ns"),
                "p",
                &json!({"preconditions": {"resourceVersion": "7"}}),
            )
            .expect_err("precondition");
        assert_eq!(err.code, 409);
        s.delete(
            &pods(),
            Some("ns"),
            "p",
            &json!({"preconditions": {"resourceVersion": "2"}}),
        )
        .expect("deleted");
    }

    #[test]
    fn patches() {
        let mut s = state();
        s.create(
            &pods(),
            Some("ns"),
            json!({"metadata": {"name": "p"}, "spec": {"a": 1}}),
        )
        .expect("created");
        let (patched, created) = s
            .patch(
                &pods(),
                Some("ns"),
                "p",
                PatchType::Merge,
                &json!({"metadata": {"labels": {"l": "v"}}}),
                false,
            )
            .expect("patched");
        assert!(!created);
        assert_eq!(patched["metadata"]["labels"]["l"], "v");
        let (patched, _) = s
            .patch(
                &pods(),
                Some("ns"),
                "p",
                PatchType::Merge,
                &json!({"status": {"phase": "Running"}}),
                true,
            )
            .expect("status patched");
        assert_eq!(patched["status"]["phase"], "Running");
        let writer = Writer {
            manager: "test".into(),
            api_version: "v1".into(),
            subresource: None,
        };
        let apply = json!({"spec": {}});
        let (applied, created) = s
            .as_writer(writer, false, |s| {
                s.patch(&pods(), Some("ns"), "new", PatchType::Apply, &apply, false)
            })
            .expect("applied");
        assert!(created);
        assert_eq!(applied["metadata"]["managedFields"][0]["manager"], "test");
        let unnamed = s
            .patch(&pods(), Some("ns"), "other", PatchType::Apply, &apply, false)
            .expect_err("an apply needs a field manager");
        assert_eq!(unnamed.code, 422);
        let stale = json!({"metadata": {"resourceVersion": "1"}, "spec": {"a": 3}});
        let err = s
            .patch(&pods(), Some("ns"), "p", PatchType::Merge, &stale, false)
            .expect_err("stale");
        assert_eq!(err.code, 409);
    }
}
