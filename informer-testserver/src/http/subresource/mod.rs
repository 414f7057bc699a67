//! The subresources of built-in core types that kube-apiserver serves itself, besides `status`
//! and `scale`: `pods/eviction`, `pods/binding` (and the legacy `bindings` resource),
//! `pods/ephemeralcontainers`, `serviceaccounts/token`, and the subresources a kubelet or a
//! backend answers (`pods/log`, `exec`, `attach`, `portforward`, `proxy`, `nodes/proxy`,
//! `services/proxy`), which answer as kube-apiserver does when it cannot reach one, except
//! the `log`, `exec` and `attach` of pods the simulated kubelet runs.
//!
//! [`table`] says which type serves which (for routing and discovery); [`serve`] decodes a
//! request and answers it, writing through the `WriteSession` methods of `write/`
//! (`eviction.rs`, `binding.rs`, `ephemeral_containers.rs`); `token.rs` and `connect.rs` only
//! read; `pod_logs.rs` and `pod_streams.rs` answer for the simulated kubelet, from what the
//! test registered on it.

mod call;
mod connect;
mod pod_logs;
mod pod_streams;
#[cfg(test)]
mod status_flags;
mod token;

use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Method, Response};
use serde_json::{Value, json};

use crate::admission::context::WriteContext;
use crate::http::body::{parse_json, parse_object};
use crate::http::request::ResourceRequest;
use crate::http::response::{Body, full, warned};
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::write::dry_run::{self, OptionsKind};
use crate::write::ephemeral_containers::patched_pod;
use crate::write::eviction::eviction_options;
use crate::write::patch_document::PatchType;
use crate::write::session::WriteSession;

use self::call::{Call, check_namespace, only, success};

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
    sub("resize", "Pod", &["get", "patch", "update"]),
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
    matches!(
        name,
        "eviction" | "binding" | "ephemeralcontainers" | "resize" | "token"
    )
}

/// Whether `rt` is the legacy `bindings` resource.
pub(crate) fn is_legacy_bindings(rt: &ResourceType) -> bool {
    rt.group.is_empty() && rt.version == "v1" && rt.plural == "bindings"
}

/// Serves the subresource `subresource` of the object `name` of the request's type.
pub(crate) fn serve(
    request: &ResourceRequest<'_>,
    name: Option<&str>,
    subresource: &str,
) -> Result<Response<Body>, ApiError> {
    let name = name.ok_or_else(ApiError::unknown_path)?;
    let rt = &request.rt;
    if rt.namespaced && request.ns().is_none() {
        return Err(ApiError::unknown_path());
    }
    let call = decoded(request, name, decodes_body(subresource))?;
    check_namespace(&call.body, call.namespace)?;
    let ns = call.namespace.unwrap_or_default();
    let created = |answer: Result<(), ApiError>| answer.map(|()| request.answer(201, &success()));
    match (rt.plural.as_str(), subresource) {
        ("pods", "eviction") => {
            only(call.method, &[Method::POST])?;
            let (options, dry_run) = eviction_options(&call.body, call.dry_run)?;
            let mut state = request.shared.lock();
            let mut session = WriteSession::new(&mut state, dry(dry_run));
            created(session.evict(rt, ns, name, &call.body, options))
        }
        ("pods", "binding") => {
            only(call.method, &[Method::POST])?;
            let dry_run = dry_run::requested(call.dry_run, None, OptionsKind::Create)?;
            let mut state = request.shared.lock();
            created(WriteSession::new(&mut state, dry(dry_run)).bind(rt, ns, Some(name), &call.body))
        }
        ("pods", "ephemeralcontainers") => pod_part(request, &call, |session, rt, ns, name, wanted| {
            session.update_ephemeral_containers(rt, ns, name, wanted)
        }),
        ("pods", "resize") => pod_part(request, &call, |session, rt, ns, name, wanted| {
            session.resize(rt, ns, name, wanted)
        }),
        ("serviceaccounts", "token") => {
            only(call.method, &[Method::POST])?;
            let answered = token::request(&request.shared.lock(), rt, ns, name, call.body)?;
            Ok(request.answer(201, &answered))
        }
        ("pods", "log") => match pod_logs::serve(request.shared, rt, &call)? {
            Some(response) => Ok(response),
            None => connect::serve(&request.shared.lock(), rt, subresource, &call).map(text),
        },
        ("pods", "exec" | "attach") => match pod_streams::serve(request, rt, subresource, &call)? {
            Some(response) => Ok(response),
            None => connect::serve(&request.shared.lock(), rt, subresource, &call).map(text),
        },
        _ => connect::serve(&request.shared.lock(), rt, subresource, &call).map(text),
    }
}

/// `POST /api/v1/namespaces/{ns}/bindings`, the legacy form of `pods/binding`.
pub(crate) fn serve_legacy_bindings(
    request: &ResourceRequest<'_>,
    name: Option<&str>,
) -> Result<Response<Body>, ApiError> {
    if request.ns().is_none() || name.is_some() || request.subresource.is_some() {
        return Err(ApiError::unknown_path());
    }
    let call = decoded(request, "", true)?;
    only(call.method, &[Method::POST])?;
    check_namespace(&call.body, call.namespace)?;
    let dry_run = dry_run::requested(call.dry_run, None, OptionsKind::Create)?;
    let mut state = request.shared.lock();
    let pods = state
        .registry
        .get("", "v1", "pods")
        .cloned()
        .ok_or_else(ApiError::unknown_path)?;
    let ns = call.namespace.unwrap_or_default();
    WriteSession::new(&mut state, dry(dry_run)).bind(&pods, ns, None, &call.body)?;
    Ok(request.answer(201, &success()))
}

/// How a subresource writes its part of a pod (`wanted`) to the pod `name` in `ns`.
type PodPartWrite = fn(&mut WriteSession<'_>, &ResourceType, &str, &str, &Value) -> Result<Value, ApiError>;

/// GET, PUT or PATCH of a part of a pod (its ephemeral containers, its resources), written by
/// `write`.
fn pod_part(
    request: &ResourceRequest<'_>,
    call: &Call<'_>,
    write: PodPartWrite,
) -> Result<Response<Body>, ApiError> {
    let (rt, ns, name) = (&request.rt, call.namespace.unwrap_or_default(), call.name);
    let mut state = request.shared.lock();
    let (wanted, options) = match (call.method, call.patch_type) {
        (&Method::GET, _) => return Ok(request.answer(200, &state.get(rt, Some(ns), name)?)),
        (&Method::PUT, _) => (call.body.clone(), OptionsKind::Update),
        (&Method::PATCH, Some(patch_type)) => (
            patched_pod(&state, rt, ns, name, patch_type, &call.body)?,
            OptionsKind::Patch,
        ),
        (other, _) => return Err(ApiError::method_not_allowed(other.as_str())),
    };
    let dry_run = dry_run::requested(call.dry_run, None, options)?;
    let mut session = WriteSession::new(&mut state, dry(dry_run));
    let updated = write(&mut session, rt, ns, name, &wanted)?;
    let warnings = session.finish();
    Ok(warned(request.answer(200, &updated), warnings))
}

/// The write context of a subresource's write: its dry run only (no field manager).
fn dry(dry_run: bool) -> WriteContext {
    WriteContext {
        dry_run,
        ..WriteContext::default()
    }
}

/// The request as a subresource reads it, its body decoded when the subresource takes an
/// object (or a patch of one).
fn decoded<'a>(request: &'a ResourceRequest<'a>, name: &'a str, decode: bool) -> Result<Call<'a>, ApiError> {
    let (body, patch_type) = match *request.method {
        _ if !decode || request.body.is_empty() => (Value::Null, None),
        Method::PATCH => {
            let patch_type = PatchType::from_content_type(request.content_type)
                .ok_or_else(|| ApiError::unsupported_media_type(request.content_type))?;
            (parse_json(request.body)?, Some(patch_type))
        }
        _ => (parse_object(request.content_type, request.body)?, None),
    };
    Ok(Call {
        method: request.method,
        namespace: request.ns(),
        name,
        query: request.query,
        dry_run: request.dry_run,
        body,
        patch_type,
        upgrade: request.upgrade,
    })
}

/// The plain-text answer of a connect subresource (the empty log of a pod without a node).
fn text(text: String) -> Response<Body> {
    let mut response = Response::new(full(text));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
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
