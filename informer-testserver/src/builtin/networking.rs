//! The `networking.k8s.io` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const IP_ADDRESS: BuiltinResource =
    BuiltinResource::cluster("networking.k8s.io", "v1", "IPAddress", "ipaddresses").short_names(&["ip"]);

pub(crate) const INGRESS_CLASS: BuiltinResource =
    BuiltinResource::cluster("networking.k8s.io", "v1", "IngressClass", "ingressclasses")
        .generation(Generation::Spec);

pub(crate) const INGRESS: BuiltinResource =
    BuiltinResource::namespaced("networking.k8s.io", "v1", "Ingress", "ingresses")
        .short_names(&["ing"])
        .status()
        .generation(Generation::Spec);

pub(crate) const NETWORK_POLICY: BuiltinResource =
    BuiltinResource::namespaced("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies")
        .short_names(&["netpol"])
        .generation(Generation::Spec);

pub(crate) const SERVICE_CIDR: BuiltinResource =
    BuiltinResource::cluster("networking.k8s.io", "v1", "ServiceCIDR", "servicecidrs").status();
