//! Resources that are computed rather than stored: the review APIs (answered by
//! [`review`](crate::http::review)) and `componentstatuses`; and the verbs a stored resource
//! does not serve (kube-apiserver's `405`, e.g. no `deletecollection` of namespaces).

use http::{Method, Response};

use crate::builtin::ServedAs;
use crate::http::body::parse_object;
use crate::http::caller::caller;
use crate::http::component_statuses;
use crate::http::request::ResourceRequest;
use crate::http::response::Body;
use crate::http::review;
use crate::status::ApiError;

/// Serves `request` when its resource is computed or its verb is not served; `None` when the
/// stored resource's handlers serve it.
pub(crate) fn serve_computed(
    request: &ResourceRequest<'_>,
    name: Option<&str>,
    watch: bool,
) -> Result<Option<Response<Body>>, ApiError> {
    let rt = &request.rt;
    let method = request.method;
    let not_allowed = || Err(ApiError::method_not_allowed(method.as_str()));
    if request.subresource.is_some() {
        return Ok(None);
    }
    let served_as = rt.builtin().map_or(ServedAs::Stored, |b| b.served_as);
    if served_as == ServedAs::Review {
        if *method != Method::POST || name.is_some() {
            return not_allowed();
        }
        if rt.namespaced && request.ns().is_none() {
            return Err(ApiError::unknown_path());
        }
        let object = parse_object(request.content_type, request.body, &request.expected())?;
        let answered = review::answer(rt, request.ns(), object, &caller(request.authorization))?;
        return Ok(Some(request.answer(201, &answered)));
    }
    if served_as == ServedAs::ComponentStatuses {
        let value = match (method, name) {
            (&Method::GET, None) if !watch => component_statuses::list(),
            (&Method::GET, Some(name)) => component_statuses::get(rt, name)?,
            _ => return not_allowed(),
        };
        let shaped = request.shaped(value, name.is_none())?;
        return Ok(Some(request.answer(200, &shaped)));
    }
    let verb = match (method, name.is_some()) {
        (&Method::DELETE, false) => "deletecollection",
        (&Method::POST, false) => "create",
        _ => return Ok(None),
    };
    if rt.verbs().contains(&verb) {
        Ok(None)
    } else {
        not_allowed()
    }
}
