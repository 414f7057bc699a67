//! DELETE of a collection: every object the selectors match.

use http::Response;
use serde_json::json;

use crate::admission::context::WriteContext;
use crate::http::body::{Expected, delete_options};
use crate::http::request::ResourceRequest;
use crate::http::response::Body;
use crate::status::ApiError;
use crate::storage::field_labels;
use crate::storage::options::ListOptions;
use crate::write::dry_run::{self, OptionsKind};
use crate::write::session::WriteSession;

/// Deletes the matching objects; answers the list of them.
pub(crate) fn delete_collection(request: &ResourceRequest<'_>) -> Result<Response<Body>, ApiError> {
    let rt = &request.rt;
    let options = ListOptions::parse(request.query, request.ns())?;
    let delete_options = delete_options(request.content_type, request.body, &Expected::delete_options())?;
    let context = WriteContext {
        dry_run: dry_run::requested(request.dry_run, Some(&delete_options), OptionsKind::Delete)?,
        ..WriteContext::default()
    };
    let mut state = request.shared.lock();
    field_labels::check(&state, rt, &options.filter.fields)?;
    let deleted = WriteSession::new(&mut state, context).delete_collection(rt, &options.filter)?;
    let rv = state.store.resource_version();
    drop(state);
    let list = json!({
        "kind": format!("{}List", rt.kind),
        "apiVersion": rt.api_version(),
        "metadata": {"resourceVersion": rv.to_string()},
        "items": deleted,
    });
    Ok(request.answer(200, &request.shaped(list, true)?))
}
