//! PATCH of an object, or of its `status`: JSON patch, merge patch, strategic merge patch or
//! server-side apply, by the content type.

use http::Response;

use crate::admission::field_validation;
use crate::http::body::{parse_apply_patch, parse_json};
use crate::http::request::ResourceRequest;
use crate::http::response::{Body, warned};
use crate::status::ApiError;
use crate::write::dry_run::OptionsKind;
use crate::write::patch_document::PatchType;
use crate::write::session::WriteSession;

/// Patches the object `name`; answers 201 when an apply created it, else 200.
pub(crate) fn patch(request: &ResourceRequest<'_>, name: &str) -> Result<Response<Body>, ApiError> {
    let patch_type = PatchType::from_content_type(request.content_type)
        .ok_or_else(|| ApiError::unsupported_media_type(request.content_type))?;
    let patch = match patch_type {
        PatchType::Apply => parse_apply_patch(request.content_type, request.body)?,
        _ => parse_json(request.body)?,
    };
    let mut context = request.write_context(OptionsKind::Patch, patch_type == PatchType::Apply)?;
    let patch = match patch_type {
        PatchType::Json => {
            context.field_validation = field_validation::Mode::of(request.query, "PatchOptions")?;
            patch
        }
        _ => request.validated("PatchOptions", patch, &mut context)?,
    };
    let mut state = request.shared.lock();
    let mut session = WriteSession::new(&mut state, context);
    let patched = session.patch(
        &request.rt,
        request.ns(),
        name,
        patch_type,
        &patch,
        request.is_status(),
    );
    let warnings = session.finish();
    let (object, created) = patched?;
    drop(state);
    let object = request.shaped(object, false)?;
    Ok(warned(
        request.answer(if created { 201 } else { 200 }, &object),
        warnings,
    ))
}
