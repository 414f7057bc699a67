//! What kube-apiserver's default admission plugins add to a new pod: its service account and
//! the volume with its token (`ServiceAccount`; a pod whose service account does not exist is
//! refused), the tolerations of a node going not-ready or unreachable
//! (`DefaultTolerationSeconds`), and its priority (`Priority`). A mirror pod (a kubelet's
//! static pod) keeps its spec, as kube-apiserver leaves it.
//!
//! Not done: image pull secrets read from the service account beyond a copy. `LimitRanger` and
//! `RuntimeClass` are plugins of their own (`limit_ranger`, `runtime_class`).

use serde_json::{Value, json};

use crate::admission::context::WriteContext;
use crate::admission::default_service_accounts::DEFAULT_SERVICE_ACCOUNT;
use crate::admission::plugin::Plugin;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::{State, name_suffix};
use crate::storage::store::meta_str;

/// The annotation that marks a mirror pod.
const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// Where every container finds the service account's token, CA and namespace.
const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// How long a pod stays on a node that went not-ready or unreachable.
const TOLERATION_SECONDS: i64 = 300;
/// A pod's preemption policy when no PriorityClass gives one.
const PREEMPT_LOWER: &str = "PreemptLowerPriority";

/// The pod admission plugins, as one write plugin.
pub(crate) struct PodAdmission;

impl Plugin for PodAdmission {
    fn admit_create(
        &self,
        state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        if !rt.is_core("Pod") || !object["spec"].is_object() {
            return Ok(());
        }
        if !is_mirror_pod(object) {
            service_account(state, rt, object)?;
        }
        tolerations(&mut object["spec"]);
        priority(state, rt, object)
    }

    fn admit_update(
        &self,
        _state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        old: &Value,
        new: &mut Value,
    ) -> Result<(), ApiError> {
        if !rt.is_core("Pod") || !new["spec"].is_object() {
            return Ok(());
        }
        // What admission set on create stays when an update leaves it out (these fields of a
        // pod's spec cannot change).
        for field in [
            "serviceAccountName",
            "serviceAccount",
            "priority",
            "preemptionPolicy",
        ] {
            if new["spec"].get(field).is_none_or(Value::is_null)
                && let Some(value) = old["spec"].get(field).filter(|v| !v.is_null())
            {
                new["spec"][field] = value.clone();
            }
        }
        tolerations(&mut new["spec"]);
        Ok(())
    }
}

/// Whether a pod is the mirror of a kubelet's static pod.
fn is_mirror_pod(pod: &Value) -> bool {
    pod["metadata"]["annotations"]
        .get(MIRROR_POD_ANNOTATION)
        .is_some()
}

/// The `default` service account unless the pod names one, which must exist (else kube's
/// `403`); unless automounting is off for the pod or its service account, a projected volume
/// with the token, mounted in every container and init container that has nothing at that
/// path.
fn service_account(state: &State, rt: &ResourceType, pod: &mut Value) -> Result<(), ApiError> {
    let spec = &mut pod["spec"];
    let name = spec["serviceAccountName"]
        .as_str()
        .filter(|n| !n.is_empty())
        .unwrap_or(DEFAULT_SERVICE_ACCOUNT)
        .to_owned();
    spec["serviceAccountName"] = json!(name);
    spec["serviceAccount"] = json!(name);
    let namespace = meta_str(pod, "namespace").unwrap_or("default").to_owned();
    let Some(account) = state
        .registry
        .get("", "v1", "serviceaccounts")
        .and_then(|accounts| state.store.get(accounts, &(namespace.clone(), name.clone())))
        .cloned()
    else {
        let pod_name = meta_str(pod, "name").unwrap_or_default();
        return Err(ApiError::forbidden(
            rt,
            pod_name,
            &format!(
                "error looking up service account {namespace}/{name}: serviceaccount \"{name}\" not found"
            ),
        ));
    };
    let spec = &mut pod["spec"];
    if spec["imagePullSecrets"].as_array().is_none_or(Vec::is_empty)
        && let Some(secrets) = account["imagePullSecrets"].as_array().filter(|s| !s.is_empty())
    {
        spec["imagePullSecrets"] = json!(secrets);
    }
    let automount = spec["automountServiceAccountToken"]
        .as_bool()
        .or_else(|| account["automountServiceAccountToken"].as_bool())
        .unwrap_or(true);
    if automount {
        mount_token(spec);
    }
    Ok(())
}

/// Adds the token volume and its mounts.
fn mount_token(spec: &mut Value) {
    let volume = format!("kube-api-access-{}", name_suffix());
    let mut mounted = false;
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers.iter_mut().filter(|c| c.is_object()) {
            let mounts = &container["volumeMounts"];
            if mounts
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["mountPath"] == TOKEN_MOUNT_PATH))
            {
                continue;
            }
            let mount = json!({"name": volume, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
            if let Some(mounts) = list_of(container, "volumeMounts") {
                mounts.push(mount);
                mounted = true;
            }
        }
    }
    if !mounted {
        return;
    }
    let token_volume = json!({"name": volume, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}});
    if let Some(volumes) = list_of(spec, "volumes") {
        volumes.push(token_volume);
    }
}

/// The list at `parent[field]`, created empty when unset; `None` when it holds something else
/// (a body decoding refuses).
fn list_of<'a>(parent: &'a mut Value, field: &str) -> Option<&'a mut Vec<Value>> {
    if parent[field].is_null() {
        parent[field] = json!([]);
    }
    parent[field].as_array_mut()
}

/// Tolerates `node.kubernetes.io/not-ready` and `unreachable` for five minutes, unless a
/// toleration already covers the taint.
fn tolerations(spec: &mut Value) {
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        let covered = spec["tolerations"].as_array().is_some_and(|list| {
            list.iter().any(|t| {
                let key_matches = t["key"].as_str().is_none_or(|k| k.is_empty() || k == key);
                let effect_matches = t["effect"]
                    .as_str()
                    .is_none_or(|e| e.is_empty() || e == "NoExecute");
                key_matches && effect_matches
            })
        });
        if covered {
            continue;
        }
        let toleration = json!({"key": key, "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": TOLERATION_SECONDS});
        if let Some(list) = list_of(spec, "tolerations") {
            list.push(toleration);
        }
    }
}

/// The priority of the pod's PriorityClass, or of the cluster's default class, else 0; a
/// class that does not exist refuses the pod.
fn priority(state: &State, rt: &ResourceType, pod: &mut Value) -> Result<(), ApiError> {
    let classes = state.registry.get("scheduling.k8s.io", "v1", "priorityclasses");
    let class_of = |name: &str| {
        classes
            .and_then(|classes| state.store.get(classes, &(String::new(), name.to_owned())))
            .cloned()
    };
    let named = pod["spec"]["priorityClassName"]
        .as_str()
        .filter(|n| !n.is_empty())
        .map(str::to_owned);
    let class = match &named {
        Some(name) => Some(class_of(name).ok_or_else(|| {
            let pod_name = meta_str(pod, "name").unwrap_or_default();
            ApiError::forbidden(
                rt,
                pod_name,
                &format!("no PriorityClass with name {name} was found"),
            )
        })?),
        None => classes.and_then(|classes| global_default(state, classes)),
    };
    let value = class.as_ref().and_then(|c| c["value"].as_i64()).unwrap_or(0);
    let policy = class
        .as_ref()
        .and_then(|c| c["preemptionPolicy"].as_str())
        .unwrap_or(PREEMPT_LOWER)
        .to_owned();
    let spec = &mut pod["spec"];
    if let Some(given) = spec["priority"].as_i64()
        && given != value
    {
        let pod_name = meta_str(pod, "name").unwrap_or_default();
        return Err(ApiError::forbidden(
            rt,
            pod_name,
            "the integer value of priority must not be provided in pod spec; priority admission controller computed the priority from the given PriorityClass name",
        ));
    }
    if named.is_none()
        && let Some(name) = class.as_ref().and_then(|c| meta_str(c, "name"))
    {
        spec["priorityClassName"] = json!(name);
    }
    spec["priority"] = json!(value);
    if spec["preemptionPolicy"].is_null() {
        spec["preemptionPolicy"] = json!(policy);
    }
    Ok(())
}

/// The cluster's default PriorityClass (`globalDefault`), the lowest one if several are.
fn global_default(state: &State, classes: &ResourceType) -> Option<Value> {
    state
        .store
        .objects(classes)
        .map(|(_, class)| class)
        .filter(|class| class["globalDefault"] == true)
        .min_by_key(|class| class["value"].as_i64().unwrap_or(0))
        .cloned()
}
