//! kube-apiserver's `LimitRanger` admission for new pods: each LimitRange of the pod's
//! namespace gives the containers the default requests and limits of its `Container` item
//! where they set none (and records what it set in the `kubernetes.io/limit-ranger`
//! annotation), then checks every container against the item's `min`, `max` and
//! `maxLimitRequestRatio`. A pod outside them is kube's `403`, naming each violation.
//!
//! Not done: the `Pod` and `PersistentVolumeClaim` items (sums over a pod's containers, claim
//! sizes).

use serde_json::{Map, Value, json};

use crate::admission::context::WriteContext;
use crate::admission::plugin::Plugin;
use crate::defaults::quantity;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::State;
use crate::storage::store::meta_str;

/// The annotation that records the defaults a pod got.
const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// The `LimitRanger` plugin for pods.
pub(crate) struct LimitRanger;

impl Plugin for LimitRanger {
    fn admit_create(
        &self,
        state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        if !(rt.is_core("Pod") && object["spec"].is_object()) {
            return Ok(());
        }
        let namespace = meta_str(object, "namespace").unwrap_or_default().to_owned();
        for range in limit_ranges(state, &namespace) {
            let items = container_items(&range);
            set_defaults(object, &items);
            let violations = violations(object, &items);
            if !violations.is_empty() {
                let pod = meta_str(object, "name").unwrap_or_default();
                let message = match violations.as_slice() {
                    [one] => one.clone(),
                    many => format!("[{}]", many.join(", ")),
                };
                return Err(ApiError::forbidden(rt, pod, &message));
            }
        }
        Ok(())
    }
}

/// The LimitRanges of `namespace`, by name.
fn limit_ranges(state: &State, namespace: &str) -> Vec<Value> {
    let Some(rt) = state.registry.get("", "v1", "limitranges") else {
        return Vec::new();
    };
    state
        .store
        .objects(rt)
        .filter(|((ns, _), _)| ns == namespace)
        .map(|(_, range)| range.clone())
        .collect()
}

/// The `Container` items of a LimitRange.
fn container_items(range: &Value) -> Vec<Value> {
    range["spec"]["limits"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == "Container")
        .cloned()
        .collect()
}

/// Gives each container the items' default requests and limits it lacks, and records them in
/// the pod's annotation.
fn set_defaults(pod: &mut Value, items: &[Value]) {
    let mut requests = Map::new();
    let mut limits = Map::new();
    for item in items {
        requests.extend(item["defaultRequest"].as_object().cloned().unwrap_or_default());
        limits.extend(item["default"].as_object().cloned().unwrap_or_default());
    }
    if requests.is_empty() && limits.is_empty() {
        return;
    }
    let mut notes = Vec::new();
    // containers first, then init containers, as kube annotates them
    for (field, word) in [("containers", "container"), ("initContainers", "init container")] {
        let Some(list) = pod["spec"].get_mut(field).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in list.iter_mut().filter(|c| c.is_object()) {
            let name = container["name"].as_str().unwrap_or_default().to_owned();
            let resources = &mut container["resources"];
            if !resources.is_object() {
                *resources = json!({});
            }
            let set_requests = fill(resources, "requests", &requests);
            let set_limits = fill(resources, "limits", &limits);
            if !set_requests.is_empty() {
                notes.push(format!("{} request for {word} {name}", set_requests.join(", ")));
            }
            if !set_limits.is_empty() {
                notes.push(format!("{} limit for {word} {name}", set_limits.join(", ")));
            }
        }
    }
    if notes.is_empty() {
        return;
    }
    let meta = &mut pod["metadata"];
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    meta["annotations"][ANNOTATION] = json!(format!("LimitRanger plugin set: {}", notes.join("; ")));
}

/// Adds to `resources[field]` what `defaults` has and it lacks; the names added, sorted.
fn fill(resources: &mut Value, field: &str, defaults: &Map<String, Value>) -> Vec<String> {
    if defaults.is_empty() {
        return Vec::new();
    }
    if !resources[field].is_object() {
        resources[field] = json!({});
    }
    let mut set = Vec::new();
    if let Some(list) = resources[field].as_object_mut() {
        for (name, quantity) in defaults {
            if !list.contains_key(name) {
                list.insert(name.clone(), quantity.clone());
                set.push(name.clone());
            }
        }
    }
    set.sort();
    set
}

/// What breaks the items' `min`, `max` and `maxLimitRequestRatio`, in kube's words.
fn violations(pod: &Value, items: &[Value]) -> Vec<String> {
    let mut found = Vec::new();
    let spec = &pod["spec"];
    let all = ["containers", "initContainers"]
        .iter()
        .flat_map(|field| spec[field].as_array().into_iter().flatten());
    for container in all {
        let requests = &container["resources"]["requests"];
        let limits = &container["resources"]["limits"];
        for item in items {
            for (name, bound) in item["min"].as_object().into_iter().flatten() {
                found.extend(below_min(name, bound, &requests[name], &limits[name]));
            }
            for (name, bound) in item["max"].as_object().into_iter().flatten() {
                found.extend(above_max(name, bound, &requests[name], &limits[name]));
            }
            for (name, bound) in item["maxLimitRequestRatio"].as_object().into_iter().flatten() {
                found.extend(above_ratio(name, bound, &requests[name], &limits[name]));
            }
        }
    }
    found
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn below_min(name: &str, bound: &Value, request: &Value, limit: &Value) -> Option<String> {
    let min = quantity(bound)?;
    let (bound, request_text) = (text(bound), text(request));
    let Some(request) = quantity(request) else {
        return Some(format!(
            "minimum {name} usage per Container is {bound}.  No request is specified"
        ));
    };
    if request < min {
        return Some(format!(
            "minimum {name} usage per Container is {bound}, but request is {request_text}"
        ));
    }
    match quantity(limit) {
        Some(limit_value) if limit_value < min => Some(format!(
            "minimum {name} usage per Container is {bound}, but limit is {}",
            text(limit)
        )),
        _ => None,
    }
}

fn above_max(name: &str, bound: &Value, request: &Value, limit: &Value) -> Option<String> {
    let max = quantity(bound)?;
    let (bound, limit_text) = (text(bound), text(limit));
    let Some(limit) = quantity(limit) else {
        return Some(format!(
            "maximum {name} usage per Container is {bound}.  No limit is specified"
        ));
    };
    if limit > max {
        return Some(format!(
            "maximum {name} usage per Container is {bound}, but limit is {limit_text}"
        ));
    }
    match quantity(request) {
        Some(request_value) if request_value > max => Some(format!(
            "maximum {name} usage per Container is {bound}, but request is {}",
            text(request)
        )),
        _ => None,
    }
}

fn above_ratio(name: &str, bound: &Value, request: &Value, limit: &Value) -> Option<String> {
    let ratio = quantity(bound)?.to_bytes_f64()?;
    let bound = text(bound);
    let positive = |value: &Value| {
        quantity(value)
            .and_then(|q| q.to_bytes_f64())
            .filter(|v| *v > 0.0)
    };
    let Some(request) = positive(request) else {
        return Some(format!(
            "{name} max limit to request ratio per Container is {bound}, but no request is specified or request is 0"
        ));
    };
    let Some(limit) = positive(limit) else {
        return Some(format!(
            "{name} max limit to request ratio per Container is {bound}, but no limit is specified or limit is 0"
        ));
    };
    let observed = limit / request;
    (observed > ratio).then(|| {
        format!(
            "{name} max limit to request ratio per Container is {bound}, but provided ratio is {observed:.6}"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::namespace_lifecycle::create_test_namespace;
    use crate::registry::{Registry, builtin_types};

    fn state_with_range(limits: Value) -> State {
        let mut s = State::new(Registry::with_types(builtin_types()), 100);
        create_test_namespace(&mut s, "ns");
        let ranges = s.registry.get("", "v1", "limitranges").cloned().expect("served");
        s.write()
            .create(
                &ranges,
                Some("ns"),
                json!({"metadata": {"name": "limits"}, "spec": {"limits": limits}}),
            )
            .expect("range created");
        s
    }

    fn create_pod(s: &mut State, name: &str, containers: Value) -> Result<Value, ApiError> {
        let pods = s.registry.get("", "v1", "pods").cloned().expect("served");
        let pod = json!({"metadata": {"name": name}, "spec": {"containers": containers}});
        s.write().create(&pods, Some("ns"), pod)
    }

    // kube: plugin/pkg/admission/limitranger/admission_test.go, TestMergePodResourceRequirements
    // (defaults where a container sets none, kept where it sets them, and the annotation).
    #[test]
    fn containers_get_the_default_requests_and_limits_they_lack() {
        let mut s = state_with_range(json!([{"type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m"}}]));
        let pod = create_pod(
            &mut s,
            "web",
            json!([{"name": "app", "image": "i"},
            {"name": "sidecar", "image": "i", "resources": {"limits": {"cpu": "1"}}}]),
        )
        .expect("admitted");
        let app = &pod["spec"]["containers"][0]["resources"];
        // the LimitRange's own defaulting made its memory default the request too
        assert_eq!(app["requests"], json!({"cpu": "100m", "memory": "256Mi"}));
        assert_eq!(app["limits"], json!({"cpu": "500m", "memory": "256Mi"}));
        let sidecar = &pod["spec"]["containers"][1]["resources"];
        assert_eq!(sidecar["limits"], json!({"cpu": "1", "memory": "256Mi"}));
        assert_eq!(sidecar["requests"], json!({"cpu": "1", "memory": "256Mi"}));
        assert_eq!(
            pod["metadata"]["annotations"][ANNOTATION],
            "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; \
             memory request for container sidecar; memory limit for container sidecar"
        );
        // the QoS class counts what the LimitRange gave
        assert_eq!(pod["status"]["qosClass"], "Burstable");
    }

    // kube: TestPodLimitFunc: pods outside min, max and maxLimitRequestRatio are refused, each
    // violation named.
    #[test]
    fn a_container_outside_the_range_is_refused() {
        let mut s = state_with_range(json!([{"type": "Container",
            "min": {"cpu": "100m"}, "max": {"memory": "1Gi"}, "maxLimitRequestRatio": {"cpu": "2"}}]));
        let err = create_pod(
            &mut s,
            "small",
            json!([{"name": "app", "image": "i",
            "resources": {"requests": {"cpu": "50m"}, "limits": {"cpu": "500m", "memory": "2Gi"}}}]),
        )
        .expect_err("outside the range");
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message,
            "pods \"small\" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, \
             maximum memory usage per Container is 1Gi, but limit is 2Gi, \
             cpu max limit to request ratio per Container is 2, but provided ratio is 10.000000]"
        );
        // the defaults bring a bare container inside (max gives the default limit, min the
        // default request), as kube's LimitRange defaulting fills them
        let pod = create_pod(
            &mut s,
            "bare",
            json!([{"name": "app", "image": "i",
            "resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "300m"}}}]),
        )
        .expect("inside");
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["limits"]["memory"],
            "1Gi"
        );
    }
}
