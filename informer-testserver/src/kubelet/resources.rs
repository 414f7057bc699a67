//! Resource requests as kube-scheduler's `NodeResourcesFit` filter counts them: what a pod asks
//! for, what a node can allocate, and which resources a node lacks for a pod beside the pods
//! already bound to it.

use std::collections::BTreeMap;

use kube_quantity::ParsedQuantity;
use serde_json::Value;

/// Amounts of resources by name (`cpu`, `memory`, `ephemeral-storage`, extended resources such
/// as `nvidia.com/gpu`); `pods` is counted apart.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Resources(BTreeMap<String, ParsedQuantity>);

/// The order in which kube-scheduler names the resources a node lacks: these first, then the
/// others by name.
const FIRST: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];

impl Resources {
    /// Reads a `ResourceList` (`{"cpu": "500m", ...}`), leaving `pods` out.
    ///
    /// # Errors
    ///
    /// A quantity that is not one, named with its resource.
    pub(crate) fn read(list: &Value) -> Result<Self, String> {
        let mut resources = Self::default();
        for (name, quantity) in list.as_object().into_iter().flatten() {
            if name == "pods" {
                continue;
            }
            resources.0.insert(name.clone(), parse(name, quantity)?);
        }
        Ok(resources)
    }

    /// What `pod` requests: its pod-level requests when it sets them; else, per resource, the
    /// larger of its containers' sum (with the sidecars, init containers that keep running) and
    /// its largest init container (with the sidecars started before it), plus the pod's
    /// overhead. A limit stands for the request a container leaves out, as kube-apiserver's
    /// defaulting copies it.
    ///
    /// # Errors
    ///
    /// A request or limit that is not a quantity.
    pub(crate) fn requested_by(pod: &Value) -> Result<Self, String> {
        let spec = &pod["spec"];
        let mut requested = if spec["resources"]["requests"].is_object() {
            Self::read(&spec["resources"]["requests"])?
        } else {
            let mut containers = Self::default();
            for container in spec["containers"].as_array().into_iter().flatten() {
                containers.add(&container_request(container)?);
            }
            let mut sidecars = Self::default();
            let mut init = Self::default();
            for container in spec["initContainers"].as_array().into_iter().flatten() {
                let request = container_request(container)?;
                if container["restartPolicy"] == "Always" {
                    sidecars.add(&request);
                    continue;
                }
                let mut with_sidecars = request;
                with_sidecars.add(&sidecars);
                init.max(&with_sidecars);
            }
            containers.add(&sidecars);
            containers.max(&init);
            containers
        };
        requested.add(&Self::read(&spec["overhead"])?);
        Ok(requested)
    }

    /// Adds `other`, resource by resource.
    pub(crate) fn add(&mut self, other: &Self) {
        for (name, amount) in &other.0 {
            let sum = match self.0.get(name) {
                Some(held) => held.clone() + amount.clone(),
                None => amount.clone(),
            };
            self.0.insert(name.clone(), sum);
        }
    }

    /// Keeps the larger amount of each resource.
    fn max(&mut self, other: &Self) {
        for (name, amount) in &other.0 {
            if self.0.get(name).is_none_or(|held| held < amount) {
                self.0.insert(name.clone(), amount.clone());
            }
        }
    }

    /// The resources of `request` that these (a node's allocatable) cannot hold beside `used`,
    /// as kube-scheduler names them (`Insufficient cpu`); a resource the request leaves at zero
    /// always fits.
    pub(crate) fn insufficient(&self, used: &Self, request: &Self) -> Vec<String> {
        let zero = ParsedQuantity::default();
        let mut names: Vec<&String> = request.0.keys().collect();
        names.sort_by_key(|name| (FIRST.iter().position(|f| f == name).unwrap_or(FIRST.len()), *name));
        names
            .into_iter()
            .filter(|name| {
                let wanted = &request.0[*name];
                let room =
                    self.0.get(*name).unwrap_or(&zero).clone() - used.0.get(*name).unwrap_or(&zero).clone();
                *wanted > zero && *wanted > room
            })
            .map(|name| format!("Insufficient {name}"))
            .collect()
    }
}

/// What one container asks for: its requests, and its limits where it sets no request.
fn container_request(container: &Value) -> Result<Resources, String> {
    let mut request = Resources::read(&container["resources"]["limits"])?;
    request
        .0
        .extend(Resources::read(&container["resources"]["requests"])?.0);
    Ok(request)
}

fn parse(name: &str, quantity: &Value) -> Result<ParsedQuantity, String> {
    let text = quantity
        .as_str()
        .map_or_else(|| quantity.to_string(), str::to_owned);
    ParsedQuantity::try_from(text.as_str())
        .map_err(|err| format!("failed to read the quantity {text:?} of {name}: {err}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn amounts(pairs: &[(&str, &str)]) -> Resources {
        Resources::read(&json!(pairs.iter().copied().collect::<BTreeMap<_, _>>())).expect("quantities")
    }

    #[test]
    fn a_pod_requests_its_containers_sum_or_its_largest_init_container() {
        let pod = json!({"spec": {
            "initContainers": [
                {"name": "setup", "resources": {"requests": {"cpu": "2", "memory": "64Mi"}}},
                {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
            ],
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}}},
                {"name": "b", "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"memory": "200Mi"}}},
            ],
            "overhead": {"cpu": "10m"},
        }});
        let requested = Resources::requested_by(&pod).expect("requests");
        // cpu: max(250m + 500m (the limit) + 100m (the sidecar), 2 (setup)) + 10m; memory:
        // max(128Mi + 200Mi, 64Mi)
        assert_eq!(requested, amounts(&[("cpu", "2010m"), ("memory", "328Mi")]));
        let sized = json!({"spec": {"resources": {"requests": {"cpu": "1"}}, "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "3"}}}]}});
        assert_eq!(Resources::requested_by(&sized), Ok(amounts(&[("cpu", "1")])));
    }

    #[test]
    fn a_node_lacks_what_its_pods_already_use() {
        let allocatable = amounts(&[("cpu", "4"), ("memory", "16Gi"), ("nvidia.com/gpu", "1")]);
        let used = amounts(&[("cpu", "3500m"), ("memory", "1Gi")]);
        let request = amounts(&[
            ("cpu", "1"),
            ("memory", "1Gi"),
            ("nvidia.com/gpu", "2"),
            ("example.com/fpga", "0"),
        ]);
        assert_eq!(
            allocatable.insufficient(&used, &request),
            ["Insufficient cpu", "Insufficient nvidia.com/gpu"]
        );
        assert!(
            allocatable
                .insufficient(&used, &amounts(&[("cpu", "500m")]))
                .is_empty()
        );
        assert_eq!(
            allocatable.insufficient(&Resources::default(), &amounts(&[("hugepages-2Mi", "2Mi")])),
            ["Insufficient hugepages-2Mi"]
        );
    }

    #[test]
    fn a_quantity_that_is_not_one_is_named() {
        let pod =
            json!({"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "lots"}}}]}});
        let error = Resources::requested_by(&pod).expect_err("not a quantity");
        assert!(error.contains("\"lots\" of cpu"), "{error}");
    }
}
