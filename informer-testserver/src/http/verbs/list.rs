//! GET of a collection: a list, filtered by selectors, paged by `limit`/`continue`.

use http::Response;

use crate::http::request::ResourceRequest;
use crate::http::response::Body;
use crate::status::ApiError;
use crate::storage::field_labels;
use crate::storage::list;
use crate::storage::options::ListOptions;

/// Answers the list the query asks for, in the shape `Accept` asks for.
pub(crate) fn list(request: &ResourceRequest<'_>) -> Result<Response<Body>, ApiError> {
    let options = ListOptions::parse(request.query, request.ns())?;
    let list = {
        let state = request.shared.lock();
        field_labels::check(&state, &request.rt, &options.filter.fields)?;
        list::list(&state, &request.rt, &options)?
    };
    Ok(request.answer(200, &request.shaped(list, true)?))
}
