//! DELETE of one object, with the `DeleteOptions` of its body.

use http::Response;

use crate::admission::context::WriteContext;
use crate::http::body::{Expected, delete_options};
use crate::http::request::ResourceRequest;
use crate::http::response::Body;
use crate::status::ApiError;
use crate::write::dry_run::{self, OptionsKind};
use crate::write::session::WriteSession;

/// Deletes the object `name`; answers with it as deleted (or as marked, while finalizers or
/// dependents hold it).
pub(crate) fn delete(request: &ResourceRequest<'_>, name: &str) -> Result<Response<Body>, ApiError> {
    let options = delete_options(request.content_type, request.body, &Expected::delete_options())?;
    let context = WriteContext {
        dry_run: dry_run::requested(request.dry_run, Some(&options), OptionsKind::Delete)?,
        ..WriteContext::default()
    };
    let mut state = request.shared.lock();
    let deleted = WriteSession::new(&mut state, context).delete(&request.rt, request.ns(), name, &options)?;
    drop(state);
    Ok(request.answer(200, &request.shaped(deleted, false)?))
}
