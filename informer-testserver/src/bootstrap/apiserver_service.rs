//! The `default/kubernetes` Service through which pods reach the API server, with the
//! Endpoints and the EndpointSlice kube-apiserver's endpoint reconciler keeps for it.
//!
//! kube-apiserver gives the Service the first address of the service range (`10.96.0.1` with
//! kubeadm's default range), port 443 named `https` to its own secure port, and the labels
//! `component=apiserver` and `provider=kubernetes`. Its endpoints hold the address it
//! advertises; here that is the listener's, `127.0.0.1` and the server's port, so a client
//! that follows them reaches this server.

use std::net::SocketAddr;

use serde_json::{Value, json};

use super::object::BootstrapObject;

/// The name of the Service, of its Endpoints and of its EndpointSlice.
const NAME: &str = "kubernetes";

/// The namespace they live in.
const NAMESPACE: &str = "default";

/// The Service's cluster IP: the first address of kubeadm's default service range
/// `10.96.0.0/12`.
pub(crate) const CLUSTER_IP: &str = "10.96.0.1";

/// The port the Service exposes.
const SERVICE_PORT: u16 = 443;

/// The name of the Service's only port.
const PORT_NAME: &str = "https";

/// The Service, its Endpoints and its EndpointSlice, for a server listening on `address`.
pub(super) fn objects(address: SocketAddr) -> Vec<BootstrapObject> {
    vec![
        BootstrapObject::new("", "v1", "services", service(address.port())),
        BootstrapObject::new("", "v1", "endpoints", endpoints(address)),
        BootstrapObject::new(
            "discovery.k8s.io",
            "v1",
            "endpointslices",
            endpoint_slice(address),
        ),
    ]
}

/// The Service as kube-apiserver stores it (defaults set: single-stack IPv4, no session
/// affinity, cluster-wide internal traffic).
fn service(target_port: u16) -> Value {
    json!({
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": CLUSTER_IP,
            "clusterIPs": [CLUSTER_IP],
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
            "sessionAffinity": "None",
            "ports": [{
                "name": PORT_NAME,
                "port": SERVICE_PORT,
                "protocol": "TCP",
                "targetPort": target_port,
            }],
        },
        "status": {"loadBalancer": {}},
    })
}

/// The Endpoints: one subset with the server's address and port. The label tells the
/// EndpointSlice mirroring controller to leave them alone, since kube-apiserver writes the
/// EndpointSlice itself.
fn endpoints(address: SocketAddr) -> Value {
    json!({
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
        },
        "subsets": [{
            "addresses": [{"ip": address.ip().to_string()}],
            "ports": [{"name": PORT_NAME, "port": address.port(), "protocol": "TCP"}],
        }],
    })
}

/// The EndpointSlice: one ready endpoint at the server's address, labelled with the Service
/// it belongs to.
fn endpoint_slice(address: SocketAddr) -> Value {
    let address_type = if address.is_ipv4() { "IPv4" } else { "IPv6" };
    json!({
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"kubernetes.io/service-name": NAME},
        },
        "addressType": address_type,
        "endpoints": [{
            "addresses": [address.ip().to_string()],
            "conditions": {"ready": true},
        }],
        "ports": [{"name": PORT_NAME, "port": address.port(), "protocol": "TCP"}],
    })
}
