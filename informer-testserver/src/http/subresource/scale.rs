//! The `scale` subresource of a resource URL: GET, PUT and PATCH of an object's `Scale`.

use http::{Method, Response};

use crate::admission::context::WriteContext;
use crate::http::body::{parse_apply_patch, parse_json, parse_object};
use crate::http::request::ResourceRequest;
use crate::http::response::Body;
use crate::status::ApiError;
use crate::write::dry_run::{self, OptionsKind};
use crate::write::patch_document::PatchType;
use crate::write::scale::get_scale;
use crate::write::session::WriteSession;

/// Serves the `Scale` of the object `name`.
pub(crate) fn serve_scale(request: &ResourceRequest<'_>, name: &str) -> Result<Response<Body>, ApiError> {
    request.negotiated.target()?;
    let (rt, ns) = (&request.rt, request.ns());
    let dry = |kind| -> Result<WriteContext, ApiError> {
        Ok(WriteContext {
            dry_run: dry_run::requested(request.dry_run, None, kind)?,
            ..WriteContext::default()
        })
    };
    let scale = match *request.method {
        Method::GET => get_scale(&request.shared.lock(), rt, ns, name)?,
        Method::PUT => {
            let context = dry(OptionsKind::Update)?;
            let body = parse_object(request.content_type, request.body, &request.expected())?;
            let mut state = request.shared.lock();
            WriteSession::new(&mut state, context).update_scale(rt, ns, name, &body)?
        }
        Method::PATCH => {
            let patch_type = PatchType::from_content_type(request.content_type)
                .ok_or_else(|| ApiError::unsupported_media_type(request.content_type))?;
            let patch = match patch_type {
                PatchType::Apply => parse_apply_patch(request.content_type, request.body)?,
                _ => parse_json(request.body)?,
            };
            let context = dry(OptionsKind::Patch)?;
            let mut state = request.shared.lock();
            WriteSession::new(&mut state, context).patch_scale(rt, ns, name, patch_type, &patch)?
        }
        ref other => return Err(ApiError::method_not_allowed(other.as_str())),
    };
    Ok(request.answer(200, &request.shaped(scale, false)?))
}
