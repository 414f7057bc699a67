//! PUT of an object, or of its `status`.

use http::Response;

use crate::http::body::parse_object;
use crate::http::request::ResourceRequest;
use crate::http::response::{Body, warned};
use crate::status::ApiError;
use crate::storage::state::UpdateMode;
use crate::write::dry_run::OptionsKind;
use crate::write::session::WriteSession;

/// Replaces the object `name` by the body (its status only, on the `status` subresource).
pub(crate) fn update(request: &ResourceRequest<'_>, name: &str) -> Result<Response<Body>, ApiError> {
    let mode = if request.is_status() {
        UpdateMode::Status
    } else {
        UpdateMode::Main
    };
    let mut context = request.write_context(OptionsKind::Update, false)?;
    let object = parse_object(request.content_type, request.body, &request.expected())?;
    let object = request.validated("UpdateOptions", object, &mut context)?;
    let mut state = request.shared.lock();
    let mut session = WriteSession::new(&mut state, context);
    let updated = session.update(&request.rt, request.ns(), name, object, mode);
    let warnings = session.finish();
    drop(state);
    let updated = request.shaped(updated?, false)?;
    Ok(warned(request.answer(200, &updated), warnings))
}
