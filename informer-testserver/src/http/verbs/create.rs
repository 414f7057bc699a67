//! POST to a collection: a new object.

use http::Response;

use crate::http::body::parse_object;
use crate::http::request::ResourceRequest;
use crate::http::response::{Body, warned};
use crate::status::ApiError;
use crate::write::dry_run::OptionsKind;
use crate::write::session::WriteSession;

/// Creates the body's object; answers 201 with it.
pub(crate) fn create(request: &ResourceRequest<'_>) -> Result<Response<Body>, ApiError> {
    let mut context = request.write_context(OptionsKind::Create, false)?;
    let object = parse_object(request.content_type, request.body, &request.expected())?;
    let object = request.validated("CreateOptions", object, &mut context)?;
    let mut state = request.shared.lock();
    let mut session = WriteSession::new(&mut state, context);
    let created = session.create(&request.rt, request.ns(), object);
    let warnings = session.finish();
    drop(state);
    let created = request.shaped(created?, false)?;
    Ok(warned(request.answer(201, &created), warnings))
}
