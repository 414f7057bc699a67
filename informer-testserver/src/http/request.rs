//! A request to a resource URL once its type is known: what the verb handlers read from it,
//! and the write context it gives a write.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Response};
use serde_json::Value;

use crate::admission::builtin_schema;
use crate::admission::context::WriteContext;
use crate::admission::field_ownership::writer_of;
use crate::admission::field_validation::{self, Findings};
use crate::encoding::transform::Negotiated;
use crate::http::body::Expected;
use crate::http::caller::caller;
use crate::http::response::{Body, answer};
use crate::http::shape::shaped;
use crate::http::shared::Shared;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::write::dry_run::{self, OptionsKind};

/// A request to a resource URL (`.../{plural}[/{name}[/{subresource}]]`).
pub(crate) struct ResourceRequest<'a> {
    /// The server.
    pub(crate) shared: &'a Arc<Shared>,
    /// The resource type of the URL.
    pub(crate) rt: ResourceType,
    /// The URL's namespace, if any.
    pub(crate) namespace: Option<String>,
    /// The URL's subresource, if any (`status`, `scale`).
    pub(crate) subresource: Option<String>,
    /// The method.
    pub(crate) method: &'a Method,
    /// The decoded query (the last value of each parameter).
    pub(crate) query: &'a HashMap<String, String>,
    /// Every `dryRun` value of the query.
    pub(crate) dry_run: &'a [String],
    /// The `Content-Type` header.
    pub(crate) content_type: &'a str,
    /// What the `Accept` header negotiated.
    pub(crate) negotiated: &'a Negotiated,
    /// The `User-Agent` header.
    pub(crate) user_agent: &'a str,
    /// The body.
    pub(crate) body: &'a Bytes,
    /// Whether the request asks to upgrade the connection (`exec`, `attach`, ...).
    pub(crate) upgrade: bool,
    /// The `Authorization` header (empty when absent), naming the caller.
    pub(crate) authorization: &'a str,
    /// Every header (the WebSocket handshake of `exec` and `attach` reads its own).
    pub(crate) headers: &'a http::HeaderMap,
    /// The query string, undecoded (`exec` takes every `command` parameter, in order).
    pub(crate) raw_query: &'a str,
    /// The connection once upgraded, for the one handler that takes it (`exec`, `attach`).
    pub(crate) on_upgrade: &'a std::sync::Mutex<Option<hyper::upgrade::OnUpgrade>>,
}

impl ResourceRequest<'_> {
    /// What the body of a create or update of this request is decoded as.
    pub(crate) fn expected(&self) -> Expected {
        Expected::of(&self.rt, self.subresource.as_deref())
    }

    /// The URL's namespace.
    pub(crate) fn ns(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// Whether the URL is the `status` subresource.
    pub(crate) fn is_status(&self) -> bool {
        self.subresource.as_deref() == Some("status")
    }

    /// The write context of a create, update or patch (`apply` for an apply patch): its
    /// `dryRun`, its field manager and `force`. The body's `fieldValidation` comes with
    /// [`validated`](Self::validated).
    pub(crate) fn write_context(&self, options: OptionsKind, apply: bool) -> Result<WriteContext, ApiError> {
        let dry_run = dry_run::requested(self.dry_run, None, options)?;
        let (writer, force) = writer_of(
            &self.rt,
            self.query,
            self.user_agent,
            apply,
            self.subresource.as_deref(),
        )?;
        Ok(WriteContext {
            user: caller(self.authorization),
            field_manager: Some(writer),
            force,
            dry_run,
            ..WriteContext::default()
        })
    }

    /// A write's body checked by its `fieldValidation` mode, which `context` takes with the
    /// warnings it gave: fields given twice in a JSON body, and fields a built-in type does not
    /// have (dropped), refused under `Strict` or warned about under `Warn`. Custom resources are
    /// checked by their schema when written.
    pub(crate) fn validated(
        &self,
        options: &str,
        mut object: Value,
        context: &mut WriteContext,
    ) -> Result<Value, ApiError> {
        let mode = field_validation::Mode::of(self.query, options)?;
        let mut findings = Vec::new();
        if self.content_type.contains("json") || self.content_type.is_empty() {
            findings.extend(field_validation::duplicate_fields(self.body));
        }
        if let Some(root) = builtin_schema::root_of(&self.rt.group, &self.rt.version, &self.rt.kind) {
            findings.extend(field_validation::unknown_fields(&mut object, root));
        }
        context.warnings = Findings(findings).resolve(mode, &self.rt)?;
        context.field_validation = mode;
        Ok(object)
    }

    /// An object or list answer, in the encoding `Accept` asks for.
    pub(crate) fn answer(&self, code: u16, value: &Value) -> Response<Body> {
        answer(self.negotiated, code, value)
    }

    /// An object (`list` false) or list in the shape `Accept` negotiated.
    pub(crate) fn shaped(&self, value: Value, list: bool) -> Result<Value, ApiError> {
        shaped(self.shared, &self.rt, self.query, self.negotiated, value, list)
    }
}
