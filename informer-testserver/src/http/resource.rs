//! Resource URLs: the type looked up, the scope checked, and the request handed to the handler
//! of its verb (or of its subresource).

use http::{Method, Response};

use crate::http::approval::serve_approval;
use crate::http::computed::serve_computed;
use crate::http::request::ResourceRequest;
use crate::http::response::Body;
use crate::http::scale::serve_scale;
use crate::http::subresource;
use crate::http::verbs::{create, delete, delete_collection, get, list, patch, update, watch};
use crate::served_apis;
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
    if subresource::is_legacy_bindings(rt) {
        return subresource::serve_legacy_bindings(request, name);
    }
    match request.subresource.as_deref() {
        None => {}
        Some("status") if rt.status_subresource => {}
        Some("scale") if rt.scale_subresource.is_some() => {
            if rt.namespaced && ns.is_none() {
                return Err(ApiError::unknown_path());
            }
            return serve_scale(request, name.ok_or_else(ApiError::unknown_path)?);
        }
        Some("approval") if served_apis::has_approval(&rt.group, &rt.plural) => {
            return serve_approval(request, name.ok_or_else(ApiError::unknown_path)?);
        }
        Some(sub) if subresource::serves(rt, sub) => return subresource::serve(request, name, sub),
        Some(_) => return Err(ApiError::unknown_path()),
    }
    // as kube-apiserver, a 406 before anything is read or written
    crate::encoding::transform::negotiate(request.accept)?;
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
