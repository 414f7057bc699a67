//! Services as the endpoint controllers see them: which pods back a service, with which
//! ports, and whether they serve (kube's `endpointutil` and `podutil.FindPort`).

use std::sync::Arc;

use informer_runtime::{ObjectKey, ScopedLister, scope};
use k8s_openapi::{
    api::core::v1::{ObjectReference, Pod, Service, ServicePort},
    apimachinery::pkg::util::intstr::IntOrString,
};
use kube::{ResourceExt, core::Selector};

use crate::{owner, pod};

/// The label of endpoints of a headless service.
pub(crate) const HEADLESS: &str = "service.kubernetes.io/headless";

/// The selector of the service's pods; `None` for a service without one, whose endpoints
/// someone else writes.
pub(crate) fn selector(service: &Service) -> Option<Selector> {
    let labels = service
        .spec
        .as_ref()?
        .selector
        .as_ref()
        .filter(|labels| !labels.is_empty())?;
    Some(owner::selector_from_map(labels))
}

/// The services of `pod`'s namespace whose selector matches it.
pub(crate) fn services_of(services: &ScopedLister<Service>, pod: &Pod) -> Vec<ObjectKey> {
    let namespace = pod.namespace().unwrap_or_default();
    let candidates = services
        .by_namespace(&namespace)
        .list(&Selector::default())
        .unwrap_or_default();
    candidates
        .iter()
        .filter(|service| selector(service).is_some_and(|selector| owner::matches(&selector, &pod.metadata)))
        .map(|service| ObjectKey::new(&namespace, &service.name_any()))
        .collect()
}

/// The pods the service's endpoints list: matching its selector, with an IP, not finished;
/// terminating ones only with `include_terminating` (kube's `ShouldPodBeInEndpoints`).
pub(crate) fn pods(
    pods: &ScopedLister<Pod>,
    service: &Service,
    include_terminating: bool,
) -> Result<Vec<Arc<Pod>>, scope::Error> {
    let Some(selector) = selector(service) else {
        return Ok(Vec::new());
    };
    let namespace = service.namespace().unwrap_or_default();
    let mut found = pods.by_namespace(&namespace).list(&selector)?;
    found.retain(|p| {
        let has_ip = pod_ip(p).is_some();
        let finished = matches!(pod::phase(p), "Succeeded" | "Failed");
        has_ip && !finished && (include_terminating || p.metadata.deletion_timestamp.is_none())
    });
    found.sort_by(|a, b| pod_ip(a).cmp(&pod_ip(b)));
    Ok(found)
}

/// The pod's IP.
pub(crate) fn pod_ip(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.pod_ip.as_deref().filter(|ip| !ip.is_empty())
}

/// Whether the pod serves: ready, or the service publishes addresses that are not ready.
pub(crate) fn serves(service: &Service, pod: &Pod) -> bool {
    let publish = service
        .spec
        .as_ref()
        .and_then(|spec| spec.publish_not_ready_addresses);
    publish == Some(true) || pod::is_ready(pod)
}

/// Whether the service is headless (`clusterIP: None`).
pub(crate) fn is_headless(service: &Service) -> bool {
    service.spec.as_ref().and_then(|spec| spec.cluster_ip.as_deref()) == Some("None")
}

/// The service's ports.
pub(crate) fn ports(service: &Service) -> &[ServicePort] {
    service
        .spec
        .as_ref()
        .and_then(|spec| spec.ports.as_deref())
        .unwrap_or_default()
}

/// The pod's port a service port sends to (kube's `FindPort`): a number as it is, a name
/// looked up among the pod's container ports of the same protocol, the service port itself
/// when no target is set; `None` for a name the pod does not have.
pub(crate) fn target_port(port: &ServicePort, pod: &Pod) -> Option<i32> {
    match port.target_port.as_ref() {
        None => Some(port.port),
        Some(IntOrString::Int(number)) => Some(*number),
        Some(IntOrString::String(name)) => {
            let protocol = port.protocol.as_deref().unwrap_or("TCP");
            let containers = pod
                .spec
                .as_ref()
                .map(|spec| spec.containers.as_slice())
                .unwrap_or_default();
            containers
                .iter()
                .flat_map(|container| container.ports.as_deref().unwrap_or_default())
                .find(|p| {
                    p.name.as_deref() == Some(name.as_str())
                        && p.protocol.as_deref().unwrap_or("TCP") == protocol
                })
                .map(|p| p.container_port)
        }
    }
}

/// A reference to the pod, as endpoints carry it.
pub(crate) fn pod_reference(pod: &Pod) -> ObjectReference {
    ObjectReference {
        kind: Some("Pod".to_owned()),
        namespace: pod.namespace(),
        name: Some(pod.name_any()),
        uid: pod.uid(),
        ..ObjectReference::default()
    }
}

/// The pod's hostname in the service's DNS: its `hostname` when its `subdomain` is the
/// service's name.
pub(crate) fn hostname(service: &Service, pod: &Pod) -> Option<String> {
    let spec = pod.spec.as_ref()?;
    (spec.subdomain.as_deref() == Some(service.name_any().as_str())).then(|| spec.hostname.clone())?
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod() -> Pod {
        serde_json::from_value(json!({"spec": {"containers": [
            {"name": "main", "ports": [{"name": "http", "containerPort": 8080}, {"name": "dns", "containerPort": 53, "protocol": "UDP"}]},
        ]}}))
        .unwrap_or_default()
    }

    fn port(target: Option<IntOrString>, protocol: &str) -> ServicePort {
        ServicePort {
            port: 80,
            protocol: Some(protocol.to_owned()),
            target_port: target,
            ..ServicePort::default()
        }
    }

    // kube: pkg/api/v1/pod/util_test.go, TestFindPort.
    #[test]
    fn ports_resolve_by_name_number_and_protocol() {
        assert_eq!(target_port(&port(None, "TCP"), &pod()), Some(80));
        assert_eq!(
            target_port(&port(Some(IntOrString::Int(9090)), "TCP"), &pod()),
            Some(9090)
        );
        assert_eq!(
            target_port(&port(Some(IntOrString::String("http".into())), "TCP"), &pod()),
            Some(8080)
        );
        assert_eq!(
            target_port(&port(Some(IntOrString::String("dns".into())), "UDP"), &pod()),
            Some(53)
        );
        assert_eq!(
            target_port(&port(Some(IntOrString::String("dns".into())), "TCP"), &pod()),
            None
        );
        assert_eq!(
            target_port(&port(Some(IntOrString::String("grpc".into())), "TCP"), &pod()),
            None
        );
    }

    #[test]
    fn services_without_a_selector_select_nothing() {
        let service: Service = serde_json::from_value(json!({"spec": {"selector": {}}})).unwrap_or_default();
        assert!(selector(&service).is_none());
        assert!(selector(&Service::default()).is_none());
    }
}
