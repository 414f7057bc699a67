//! GET of one object.

use http::Response;

use crate::http::request::ResourceRequest;
use crate::http::response::Body;
use crate::status::ApiError;

/// Answers the object `name`, in the shape `Accept` asks for.
pub(crate) fn get(request: &ResourceRequest<'_>, name: &str) -> Result<Response<Body>, ApiError> {
    let object = request.shared.lock().get(&request.rt, request.ns(), name)?;
    Ok(request.answer(200, &request.shaped(object, false)?))
}
