//! The subresources but `status` (which the verbs' handlers serve on the object's status):
//! `scale` ([`serve_scale`]), CertificateSigningRequests' `approval` ([`serve_approval`]), and
//! those of built-in core types that kube-apiserver serves itself: `pods/eviction`,
//! `pods/binding` (and the legacy `bindings` resource), `pods/ephemeralcontainers`,
//! `pods/resize`, `serviceaccounts/token`, and the subresources a kubelet or a backend answers
//! (`pods/log`, `exec`, `attach`, `portforward`, `proxy`, `nodes/proxy`, `services/proxy`),
//! which answer as kube-apiserver does when it cannot reach one, except the `log`, `exec` and
//! `attach` of pods the simulated kubelet runs.
//!
//! Which type serves which, and which handler answers each, is in the resource's description
//! ([`crate::builtin`]); [`serve`] decodes a request and answers it, writing through the
//! `WriteSession` methods of `write/` (`eviction.rs`, `binding.rs`,
//! `ephemeral_containers.rs`, `resize.rs`); `token.rs` and `connect.rs` only read;
//! `pod_logs.rs` and `pod_streams.rs` answer for the simulated kubelet, from what the test
//! registered on it.

mod approval;
mod call;
mod connect;
mod pod_logs;
mod pod_streams;
mod scale;
#[cfg(test)]
mod status_flags;
mod token;

use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Method, Response};
use serde_json::Value;

use crate::admission::context::WriteContext;
use crate::builtin::subresource::{Handler, Subresource};
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

pub(crate) use self::approval::serve_approval;
pub(crate) use self::scale::serve_scale;

/// Serves the subresource `subresource` of the object `name` of the request's type.
pub(crate) fn serve(
    request: &ResourceRequest<'_>,
    name: Option<&str>,
    subresource: &Subresource,
) -> Result<Response<Body>, ApiError> {
    let name = name.ok_or_else(ApiError::unknown_path)?;
    let rt = &request.rt;
    if rt.namespaced && request.ns().is_none() {
        return Err(ApiError::unknown_path());
    }
    let call = decoded(request, name, subresource.handler.decodes_body())?;
    check_namespace(&call.body, call.namespace)?;
    let ns = call.namespace.unwrap_or_default();
    let created = |answer: Result<(), ApiError>| answer.map(|()| request.answer(201, &success()));
    match subresource.handler {
        Handler::Eviction => {
            only(call.method, &[Method::POST])?;
            let (options, dry_run) = eviction_options(&call.body, call.dry_run)?;
            let mut state = request.shared.lock();
            let mut session = WriteSession::new(&mut state, dry(dry_run));
            created(session.evict(rt, ns, name, &call.body, options))
        }
        Handler::Binding => {
            only(call.method, &[Method::POST])?;
            let dry_run = dry_run::requested(call.dry_run, None, OptionsKind::Create)?;
            let mut state = request.shared.lock();
            created(WriteSession::new(&mut state, dry(dry_run)).bind(rt, ns, Some(name), &call.body))
        }
        Handler::EphemeralContainers => pod_part(request, &call, |session, rt, ns, name, wanted| {
            session.update_ephemeral_containers(rt, ns, name, wanted)
        }),
        Handler::Resize => pod_part(request, &call, |session, rt, ns, name, wanted| {
            session.resize(rt, ns, name, wanted)
        }),
        Handler::Token => {
            only(call.method, &[Method::POST])?;
            let answered = token::request(&request.shared.lock(), rt, ns, name, call.body)?;
            Ok(request.answer(201, &answered))
        }
        Handler::Log => match pod_logs::serve(request.shared, rt, &call)? {
            Some(response) => Ok(response),
            None => unreachable_backend(request, rt, subresource, &call),
        },
        Handler::Stream => match pod_streams::serve(request, rt, subresource.name, &call)? {
            Some(response) => Ok(response),
            None => unreachable_backend(request, rt, subresource, &call),
        },
        Handler::Connect => unreachable_backend(request, rt, subresource, &call),
        Handler::Status | Handler::Scale | Handler::Approval => Err(ApiError::unknown_path()),
    }
}

/// A connect subresource answered as kube-apiserver answers when nothing listens at the
/// kubelet or backend it would reach.
fn unreachable_backend(
    request: &ResourceRequest<'_>,
    rt: &ResourceType,
    subresource: &Subresource,
    call: &Call<'_>,
) -> Result<Response<Body>, ApiError> {
    connect::serve(&request.shared.lock(), rt, subresource.name, call).map(text)
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
        _ => (
            parse_object(request.content_type, request.body, &request.expected())?,
            None,
        ),
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
