//! Subresources: what discovery lists of each and which handler answers it. `status` and
//! `scale` are served by custom resources too (a [`ResourceType`](crate::ResourceType) says
//! whether); the others only by the built-in resources whose descriptions list them.

/// A subresource as discovery lists it, and what answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Subresource {
    /// The name after the object's name, e.g. `eviction`.
    pub(crate) name: &'static str,
    /// Group of the kind it takes or answers (empty: the resource's own).
    pub(crate) group: &'static str,
    /// Version of that kind (empty: the resource's own).
    pub(crate) version: &'static str,
    /// The kind it takes or answers (empty: the resource's own).
    pub(crate) kind: &'static str,
    /// Its verbs, as discovery lists them.
    pub(crate) verbs: &'static [&'static str],
    /// What answers it.
    pub(crate) handler: Handler,
}

/// What answers a subresource: the server itself, reading and writing the store, or (for the
/// connect subresources) a kubelet or a backend it would reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handler {
    /// `status`: the object's status, written without its spec.
    Status,
    /// `scale`: an `autoscaling/v1` `Scale` of the object's replicas.
    Scale,
    /// `certificatesigningrequests/approval`: the status's approval conditions.
    Approval,
    /// `pods/eviction`: a delete that honours PodDisruptionBudgets.
    Eviction,
    /// `pods/binding`: assigns a node.
    Binding,
    /// `pods/ephemeralcontainers`: the pod's ephemeral containers.
    EphemeralContainers,
    /// `pods/resize`: the resources of the pod's containers.
    Resize,
    /// `serviceaccounts/token`: a TokenRequest answered with a token.
    Token,
    /// `pods/log`: the simulated kubelet's registered log, else an unreachable kubelet's answer.
    Log,
    /// `pods/exec` and `attach`: the simulated kubelet's streams, else an unreachable kubelet's
    /// answer.
    Stream,
    /// `pods/portforward` and the `proxy` of pods, nodes and services: an unreachable kubelet's
    /// or backend's answer.
    Connect,
}

impl Handler {
    /// Whether a request to it carries an object (or a patch) to decode; connect subresources
    /// pass their bodies on.
    pub(crate) fn decodes_body(self) -> bool {
        matches!(
            self,
            Self::Eviction | Self::Binding | Self::EphemeralContainers | Self::Resize | Self::Token
        )
    }
}

/// Every verb of the status-like subresources (`status`, `scale`, `approval`).
pub(crate) const STATUS_VERBS: &[&str] = &["get", "patch", "update"];
/// The verbs of a connect subresource that proxies any request.
const PROXY_VERBS: &[&str] = &["create", "delete", "get", "patch", "update"];

/// A subresource taking or answering `kind` of the resource's own group version.
const fn own(
    name: &'static str,
    kind: &'static str,
    verbs: &'static [&'static str],
    handler: Handler,
) -> Subresource {
    Subresource {
        name,
        group: "",
        version: "",
        kind,
        verbs,
        handler,
    }
}

/// `status`, of the resource's own kind.
pub(crate) const STATUS: Subresource = own("status", "", STATUS_VERBS, Handler::Status);
/// `scale`.
pub(crate) const SCALE: Subresource = Subresource {
    name: "scale",
    group: "autoscaling",
    version: "v1",
    kind: "Scale",
    verbs: STATUS_VERBS,
    handler: Handler::Scale,
};

/// Those of `pods`, in kube-apiserver's discovery order.
pub(crate) const POD_SUBRESOURCES: &[Subresource] = &[
    own("attach", "PodAttachOptions", &["create", "get"], Handler::Stream),
    own("binding", "Binding", &["create"], Handler::Binding),
    own(
        "ephemeralcontainers",
        "Pod",
        &["get", "patch", "update"],
        Handler::EphemeralContainers,
    ),
    Subresource {
        name: "eviction",
        group: "policy",
        version: "v1",
        kind: "Eviction",
        verbs: &["create"],
        handler: Handler::Eviction,
    },
    own("exec", "PodExecOptions", &["create", "get"], Handler::Stream),
    own("log", "Pod", &["get"], Handler::Log),
    own(
        "portforward",
        "PodPortForwardOptions",
        &["create", "get"],
        Handler::Connect,
    ),
    own("proxy", "PodProxyOptions", PROXY_VERBS, Handler::Connect),
    own("resize", "Pod", &["get", "patch", "update"], Handler::Resize),
];
/// Those of `nodes`.
pub(crate) const NODE_SUBRESOURCES: &[Subresource] =
    &[own("proxy", "NodeProxyOptions", PROXY_VERBS, Handler::Connect)];
/// Those of `services`.
pub(crate) const SERVICE_SUBRESOURCES: &[Subresource] =
    &[own("proxy", "ServiceProxyOptions", PROXY_VERBS, Handler::Connect)];
/// Those of `serviceaccounts`.
pub(crate) const SERVICE_ACCOUNT_SUBRESOURCES: &[Subresource] = &[Subresource {
    name: "token",
    group: "authentication.k8s.io",
    version: "v1",
    kind: "TokenRequest",
    verbs: &["create"],
    handler: Handler::Token,
}];
/// Those of `certificatesigningrequests`.
pub(crate) const CSR_SUBRESOURCES: &[Subresource] = &[own("approval", "", STATUS_VERBS, Handler::Approval)];
