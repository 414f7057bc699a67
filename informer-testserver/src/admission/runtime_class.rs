//! kube-apiserver's `RuntimeClass` admission for new pods: a pod naming a RuntimeClass gets
//! its `overhead.podFixed` as the pod's `spec.overhead` and its `scheduling` node selector and
//! tolerations. Refused with kube's `403`: an unknown class, an overhead that differs from the
//! class's (or is set without one), a node selector that contradicts the class's.
//!
//! The tolerations are merged as kube merges them: one that another covers is left out.

use serde_json::{Value, json};

use crate::admission::context::WriteContext;
use crate::admission::plugin::Plugin;
use crate::admission::tolerations::merge_tolerations;
use crate::defaults::same_quantity;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::State;
use crate::storage::store::meta_str;

/// The `RuntimeClass` plugin for pods.
pub(crate) struct RuntimeClassAdmission;

impl Plugin for RuntimeClassAdmission {
    fn admit_create(
        &self,
        state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        pod: &mut Value,
    ) -> Result<(), ApiError> {
        if !(rt.is_core("Pod") && pod["spec"].is_object()) {
            return Ok(());
        }
        let pod_name = meta_str(pod, "name").unwrap_or_default().to_owned();
        let refuse = |reason: String| ApiError::forbidden(rt, &pod_name, &reason);
        let class = match pod["spec"]["runtimeClassName"].as_str() {
            Some(name) => Some(
                runtime_class(state, name)
                    .ok_or_else(|| refuse(format!("pod rejected: RuntimeClass {name:?} not found")))?,
            ),
            None => None,
        };
        set_overhead(&mut pod["spec"], class.as_ref()).map_err(refuse)?;
        if let Some(class) = &class {
            set_scheduling(&mut pod["spec"], &class["scheduling"]).map_err(refuse)?;
        }
        Ok(())
    }
}

fn runtime_class(state: &State, name: &str) -> Option<Value> {
    let rt = state.registry.get("node.k8s.io", "v1", "runtimeclasses")?;
    state.store.get(rt, &(String::new(), name.to_owned())).cloned()
}

/// The class's fixed overhead becomes the pod's; a pod overhead must equal it.
fn set_overhead(spec: &mut Value, class: Option<&Value>) -> Result<(), String> {
    let given = spec["overhead"].as_object().filter(|o| !o.is_empty()).cloned();
    let fixed = class.and_then(|c| c["overhead"]["podFixed"].as_object()).cloned();
    match (given, fixed) {
        (Some(given), Some(fixed)) if !same_quantities(&given, &fixed) => {
            Err("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead".to_owned())
        }
        (Some(_), None) => Err(
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead".to_owned(),
        ),
        (_, Some(fixed)) => {
            spec["overhead"] = Value::Object(fixed);
            Ok(())
        }
        (None, None) => Ok(()),
    }
}

fn same_quantities(a: &serde_json::Map<String, Value>, b: &serde_json::Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(name, amount)| b.get(name).is_some_and(|other| same_quantity(amount, other)))
}

/// Merges the class's node selector (a different value for a key the pod sets is a conflict)
/// and tolerations into the pod's.
fn set_scheduling(spec: &mut Value, scheduling: &Value) -> Result<(), String> {
    if let Some(selector) = scheduling["nodeSelector"].as_object() {
        if spec["nodeSelector"].is_null() {
            spec["nodeSelector"] = json!({});
        }
        // a selector of the wrong shape is left as it is
        if let Some(own) = spec["nodeSelector"].as_object_mut() {
            for (key, value) in selector {
                match own.get(key) {
                    Some(set) if set != value => {
                        return Err(format!(
                            "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {}; pod.spec.nodeSelector[{key}] = {}",
                            value.as_str().unwrap_or_default(),
                            set.as_str().unwrap_or_default()
                        ));
                    }
                    _ => {
                        own.insert(key.clone(), value.clone());
                    }
                }
            }
        }
    }
    if let Some(tolerations) = scheduling["tolerations"].as_array().filter(|t| !t.is_empty()) {
        let own = match &spec["tolerations"] {
            Value::Null => Vec::new(),
            Value::Array(own) => own.clone(),
            // a list of the wrong shape is left as it is
            _ => return Ok(()),
        };
        spec["tolerations"] = Value::Array(merge_tolerations(&own, tolerations));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::namespace_lifecycle::create_test_namespace;
    use crate::registry::{Registry, builtin_types};

    fn state() -> State {
        let mut s = State::new(Registry::with_types(builtin_types()), 100);
        create_test_namespace(&mut s, "ns");
        let classes = s
            .registry
            .get("node.k8s.io", "v1", "runtimeclasses")
            .cloned()
            .expect("served");
        s.write()
            .create(
                &classes,
                None,
                json!({"metadata": {"name": "kata"}, "handler": "kata",
                "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
                "scheduling": {"nodeSelector": {"runtime": "kata"},
                    "tolerations": [{"key": "kata", "operator": "Exists", "effect": "NoSchedule"}]}}),
            )
            .expect("class created");
        s
    }

    fn create_pod(s: &mut State, name: &str, spec: Value) -> Result<Value, ApiError> {
        let pods = s.registry.get("", "v1", "pods").cloned().expect("served");
        let mut spec = spec;
        spec["containers"] = json!([{"name": "c", "image": "i"}]);
        s.write().create(
            &pods,
            Some("ns"),
            json!({"metadata": {"name": name}, "spec": spec}),
        )
    }

    // kube: plugin/pkg/admission/runtimeclass/admission_test.go, TestSetOverhead,
    // TestSetScheduling and TestValidateOverhead.
    #[test]
    fn a_pod_takes_its_runtime_class_overhead_and_scheduling() {
        let mut s = state();
        let pod = create_pod(
            &mut s,
            "vm",
            json!({"runtimeClassName": "kata", "nodeSelector": {"zone": "a"}}),
        )
        .expect("admitted");
        assert_eq!(pod["spec"]["overhead"], json!({"cpu": "250m", "memory": "120Mi"}));
        assert_eq!(
            pod["spec"]["nodeSelector"],
            json!({"zone": "a", "runtime": "kata"})
        );
        let tolerations = pod["spec"]["tolerations"].as_array().expect("tolerations");
        assert!(tolerations.iter().any(|t| t["key"] == "kata"));

        let refused = |s: &mut State, name: &str, spec: Value| {
            let err = create_pod(s, name, spec).expect_err("refused");
            (err.code, err.message)
        };
        assert_eq!(
            refused(&mut s, "a", json!({"runtimeClassName": "gvisor"})),
            (
                403,
                r#"pods "a" is forbidden: pod rejected: RuntimeClass "gvisor" not found"#.to_owned()
            )
        );
        assert_eq!(
            refused(&mut s, "b", json!({"runtimeClassName": "kata", "overhead": {"cpu": "1"}})),
            (
                403,
                r#"pods "b" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"#
                    .to_owned()
            )
        );
        assert_eq!(
            refused(&mut s, "c", json!({"overhead": {"cpu": "1"}})),
            (
                403,
                r#"pods "c" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"#
                    .to_owned()
            )
        );
        assert_eq!(
            refused(
                &mut s,
                "d",
                json!({"runtimeClassName": "kata", "nodeSelector": {"runtime": "runc"}})
            ),
            (
                403,
                "pods \"d\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; \
                 pod.spec.nodeSelector[runtime] = runc"
                    .to_owned()
            )
        );
        // a toleration of the pod that covers the class's keeps it out
        let wide = create_pod(
            &mut s,
            "f",
            json!({"runtimeClassName": "kata",
            "tolerations": [{"key": "kata", "operator": "Exists"}]}),
        )
        .expect("admitted");
        let kata: Vec<&Value> = wide["spec"]["tolerations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["key"] == "kata")
            .collect();
        assert_eq!(kata, [&json!({"key": "kata", "operator": "Exists"})]);
        // the same overhead, written differently, is the class's
        create_pod(
            &mut s,
            "e",
            json!({"runtimeClassName": "kata", "overhead": {"cpu": "0.25", "memory": "120Mi"}}),
        )
        .expect("same overhead");
    }
}
