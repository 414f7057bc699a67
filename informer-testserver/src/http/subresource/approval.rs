//! The `approval` subresource of CertificateSigningRequests: GET, PUT and PATCH, written by
//! [`WriteSession::update_approval`](crate::write::session::WriteSession) and its patch form.

use http::{Method, Response};

use crate::http::body::{parse_json, parse_object};
use crate::http::request::ResourceRequest;
use crate::http::response::Body;
use crate::status::ApiError;
use crate::write::dry_run::OptionsKind;
use crate::write::patch_document::PatchType;
use crate::write::session::WriteSession;

/// Serves the approval of the CSR `name`.
pub(crate) fn serve_approval(request: &ResourceRequest<'_>, name: &str) -> Result<Response<Body>, ApiError> {
    let rt = &request.rt;
    let approved = match *request.method {
        Method::GET => request.shared.lock().get(rt, None, name)?,
        Method::PUT => {
            let context = request.write_context(OptionsKind::Update, false)?;
            let object = parse_object(request.content_type, request.body, &request.expected())?;
            let mut state = request.shared.lock();
            WriteSession::new(&mut state, context).update_approval(rt, name, &object)?
        }
        Method::PATCH => {
            let patch_type = PatchType::from_content_type(request.content_type)
                .ok_or_else(|| ApiError::unsupported_media_type(request.content_type))?;
            let context = request.write_context(OptionsKind::Patch, false)?;
            let patch = parse_json(request.body)?;
            let mut state = request.shared.lock();
            WriteSession::new(&mut state, context).patch_approval(rt, name, patch_type, &patch)?
        }
        ref other => return Err(ApiError::method_not_allowed(other.as_str())),
    };
    Ok(request.answer(200, &approved))
}
