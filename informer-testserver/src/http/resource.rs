//! Resource URLs: the type looked up, the scope checked, and the request handed to the handler
//! of its verb (or of its subresource).

use http::{Method, Response};

use crate::builtin::ServedAs;
use crate::builtin::subresource::Handler;
use crate::http::computed::serve_computed;
use crate::http::request::ResourceRequest;
use crate::http::response::Body;
use crate::http::subresource::{self, serve_approval, serve_scale};
use crate::http::verbs::{create, delete, delete_collection, get, list, patch, update, watch};
use crate::status::ApiError;

/// Serves a request to a resource URL (`name` of the URL, if any; `watch` for a watch).
pub(crate) fn serve_resource(
    request: &ResourceRequest<'_>,
    name: Option<&str>,
    watch: bool,
) -> Result<Response<Body>, ApiError> {
    let rt = &request.rt;
    let ns = request.ns();
    if ns.is_some() && !rt.namespaced {
        return Err(ApiError::unknown_path());
    }
    if let Some(response) = serve_computed(request, name, watch)? {
        return Ok(response);
    }
    if rt
        .builtin()
        .is_some_and(|b| b.served_as == ServedAs::LegacyBindings)
    {
        return subresource::serve_legacy_bindings(request, name);
    }
    if let Some(asked) = request.subresource.as_deref() {
        let sub = rt.subresource(asked).ok_or_else(ApiError::unknown_path)?;
        match sub.handler {
            Handler::Status => {}
            Handler::Scale => {
                if rt.namespaced && ns.is_none() {
                    return Err(ApiError::unknown_path());
                }
                return serve_scale(request, name.ok_or_else(ApiError::unknown_path)?);
            }
            Handler::Approval => return serve_approval(request, name.ok_or_else(ApiError::unknown_path)?),
            _ => return subresource::serve(request, name, sub),
        }
    }
    // as kube-apiserver, a 406 before anything is read or written
    request.negotiated.target()?;
    let method = request.method;
    match (method, name) {
        (&Method::GET, None) if watch => watch::watch(request),
        (&Method::GET, None) => list::list(request),
        (_, None) if rt.namespaced && ns.is_none() && *method != Method::DELETE => {
            Err(ApiError::unknown_path())
        }
        (&Method::POST, None) => create::create(request),
        (&Method::DELETE, None) => delete_collection::delete_collection(request),
        (_, Some(_)) if rt.namespaced && ns.is_none() => Err(ApiError::unknown_path()),
        (&Method::GET, Some(name)) => get::get(request, name),
        (&Method::PUT, Some(name)) => update::update(request, name),
        (&Method::PATCH, Some(name)) => patch::patch(request, name),
        (&Method::DELETE, Some(name)) => delete::delete(request, name),
        _ => Err(ApiError::method_not_allowed(method.as_str())),
    }
}
