//! The subresources of built-in core types that kube-apiserver serves itself, besides `status`
//! and `scale`: `pods/eviction`, `pods/binding` (and the legacy `bindings` resource),
//! `pods/ephemeralcontainers`, `serviceaccounts/token`, and the subresources a kubelet or a
//! backend answers (`pods/log`, `exec`, `attach`, `portforward`, `proxy`, `nodes/proxy`,
//! `services/proxy`), which answer as kube-apiserver does when it cannot reach one.
//!
//! [`table`] says which type serves which (for routing and discovery); [`serve`] answers a
//! request already decoded by the HTTP layer.

mod binding;
mod call;
mod connect;
mod ephemeral_containers;
mod eviction;
mod sha256;
#[cfg(test)]
mod status_flags;
mod token;

use http::Method;
use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::state::State;
use crate::status::ApiError;

pub(crate) use self::call::{Answer, Call};
use self::call::{check_namespace, only};

/// A subresource as discovery lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Subresource {
    /// The name after the object's name, e.g. `eviction`.
    pub(crate) name: &'static str,
    /// Group of the kind it takes or answers (empty: the resource's own).
    pub(crate) group: &'static str,
    /// Version of that kind (empty: the resource's own).
    pub(crate) version: &'static str,
    /// The kind it takes or answers.
    pub(crate) kind: &'static str,
    /// Its verbs, as discovery lists them.
    pub(crate) verbs: &'static [&'static str],
}

const fn sub(name: &'static str, kind: &'static str, verbs: &'static [&'static str]) -> Subresource {
    Subresource {
        name,
        group: "",
        version: "",
        kind,
        verbs,
    }
}

/// The verbs of a connect subresource that proxies any request.
const PROXY_VERBS: &[&str] = &["create", "delete", "get", "patch", "update"];

/// Those of `pods`, in kube-apiserver's discovery order (status and scale are listed apart).
const POD_SUBRESOURCES: &[Subresource] = &[
    sub("attach", "PodAttachOptions", &["create", "get"]),
    sub("binding", "Binding", &["create"]),
    sub("ephemeralcontainers", "Pod", &["get", "patch", "update"]),
    Subresource {
        name: "eviction",
        group: "policy",
        version: "v1",
        kind: "Eviction",
        verbs: &["create"],
    },
    sub("exec", "PodExecOptions", &["create", "get"]),
    sub("log", "Pod", &["get"]),
    sub("portforward", "PodPortForwardOptions", &["create", "get"]),
    sub("proxy", "PodProxyOptions", PROXY_VERBS),
];
const NODE_SUBRESOURCES: &[Subresource] = &[sub("proxy", "NodeProxyOptions", PROXY_VERBS)];
const SERVICE_SUBRESOURCES: &[Subresource] = &[sub("proxy", "ServiceProxyOptions", PROXY_VERBS)];
const SERVICE_ACCOUNT_SUBRESOURCES: &[Subresource] = &[Subresource {
    name: "token",
    group: "authentication.k8s.io",
    version: "v1",
    kind: "TokenRequest",
    verbs: &["create"],
}];

/// The subresources `rt` serves besides `status` and `scale`.
pub(crate) fn table(rt: &ResourceType) -> &'static [Subresource] {
    if !rt.group.is_empty() || rt.version != "v1" {
        return &[];
    }
    match rt.plural.as_str() {
        "pods" => POD_SUBRESOURCES,
        "nodes" => NODE_SUBRESOURCES,
        "services" => SERVICE_SUBRESOURCES,
        "serviceaccounts" => SERVICE_ACCOUNT_SUBRESOURCES,
        _ => &[],
    }
}

/// Whether `rt` serves the subresource `name` here.
pub(crate) fn serves(rt: &ResourceType, name: &str) -> bool {
    table(rt).iter().any(|s| s.name == name)
}

/// Whether a request to the subresource `name` carries an object (or a patch) to decode;
/// connect subresources pass their bodies to a backend.
pub(crate) fn decodes_body(name: &str) -> bool {
    matches!(name, "eviction" | "binding" | "ephemeralcontainers" | "token")
}

/// `bindings`, the core resource that only takes `create` (the legacy form of `pods/binding`).
pub(crate) fn is_legacy_bindings(group: &str, version: &str, plural: &str) -> bool {
    group.is_empty() && version == "v1" && plural == "bindings"
}

/// The discovery entry of the `bindings` resource.
pub(crate) const LEGACY_BINDINGS: Subresource = sub("bindings", "Binding", &["create"]);

/// Answers a request to the subresource `name` of an object of `rt`.
pub(crate) fn serve(
    state: &mut State,
    rt: &ResourceType,
    name: &str,
    call: Call<'_>,
) -> Result<Answer, ApiError> {
    check_namespace(&call.body, call.namespace)?;
    let ns = call.namespace.unwrap_or_default();
    match (rt.plural.as_str(), name) {
        ("pods", "eviction") => {
            only(call.method, &[Method::POST])?;
            eviction::evict(state, rt, ns, call.name, &call.body, call.dry_run)
                .map(|status| Answer::Object(201, status))
        }
        ("pods", "binding") => {
            only(call.method, &[Method::POST])?;
            binding::bind(state, rt, ns, Some(call.name), &call.body, call.dry_run)
                .map(|status| Answer::Object(201, status))
        }
        ("pods", "ephemeralcontainers") => ephemeral_containers::serve(state, rt, ns, call),
        ("serviceaccounts", "token") => {
            only(call.method, &[Method::POST])?;
            token::request(state, rt, ns, call.name, call.body).map(|t| Answer::Object(201, t))
        }
        _ => connect::serve(state, rt, name, &call),
    }
}

/// A `POST` to the legacy `bindings` resource of a namespace.
pub(crate) fn serve_legacy_bindings(
    state: &mut State,
    pods: &ResourceType,
    call: Call<'_>,
) -> Result<Answer, ApiError> {
    only(call.method, &[Method::POST])?;
    check_namespace(&call.body, call.namespace)?;
    let ns = call.namespace.unwrap_or_default();
    binding::bind(state, pods, ns, None, &call.body, call.dry_run).map(|s| Answer::Object(201, s))
}

/// The discovery document of a subresource of `rt` (legacy `APIResource`).
pub(crate) fn legacy_document(rt: &ResourceType, sub: &Subresource) -> Value {
    let mut doc = json!({
        "name": format!("{}/{}", rt.plural, sub.name),
        "singularName": "",
        "namespaced": rt.namespaced,
    });
    if !sub.group.is_empty() {
        doc["group"] = json!(sub.group);
        doc["version"] = json!(sub.version);
    }
    doc["kind"] = json!(sub.kind);
    doc["verbs"] = json!(sub.verbs);
    doc
}

/// The aggregated discovery document of a subresource of `rt`.
pub(crate) fn aggregated_document(rt: &ResourceType, sub: &Subresource) -> Value {
    let (group, version) = if sub.group.is_empty() {
        (rt.group.as_str(), rt.version.as_str())
    } else {
        (sub.group, sub.version)
    };
    json!({
        "subresource": sub.name,
        "responseKind": {"group": group, "version": version, "kind": sub.kind},
        "verbs": sub.verbs,
    })
}
