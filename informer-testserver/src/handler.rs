//! HTTP request handling: routing, request faults, body limits and the verbs of resources.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use serde_json::{Value, json};

use crate::accept::{self, DiscoveryFormat, ObjectFormat};
use crate::discovery;
use crate::dry_run::{self, OptionsKind};
use crate::faults;
use crate::field_labels;
use crate::field_ownership::writer_of;
use crate::field_validation::{self, Findings};
use crate::list;
use crate::openapi;
use crate::options::ListOptions;
use crate::partial_metadata;
use crate::patch::PatchType;
use crate::protobuf;
use crate::registry::ResourceType;
use crate::routes::{self, ResourcePath, Route};
use crate::server::{CLIENT_NAME_HEADER, RequestRecord, Shared};
use crate::state::UpdateMode;
use crate::status::ApiError;
use crate::table::{self, IncludeObject};
use crate::watch::WatchStream;

/// Response body: a full JSON document or a watch stream.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

fn json_response(code: u16, value: &Value, content_type: &str) -> Response<Body> {
    let mut response = Response::new(full(crate::key_order::to_vec(value)));
    *response.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    if let Ok(ct) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    response
}

/// The response kube-apiserver sends for an error: the `Status` with its code, in protobuf when
/// `Accept` asks for protobuf first.
pub(crate) fn error_response(error: &ApiError, accept: &str) -> Response<Body> {
    let mut response = answer(accept, error.code, &error.to_status());
    if let Some(seconds) = error.retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// The verb (RBAC sense) of a request and the resource it is about, for fault matching.
fn verb_of(method: &Method, route: &Route, watch: bool) -> (&'static str, String) {
    let Route::Resource(path) = route else {
        return ("get", String::new());
    };
    let named = path.name.is_some();
    let verb = match *method {
        Method::GET if named => "get",
        Method::GET if watch || path.watch_prefix => "watch",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => "unknown",
    };
    (verb, path.plural.clone())
}

/// Serves one request. Never fails: errors become `Status` responses.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let accept = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    Ok(match serve(shared, request).await {
        Ok(response) => response,
        Err(error) => error_response(&error, &accept),
    })
}

async fn serve(shared: Arc<Shared>, request: Request<Incoming>) -> Result<Response<Body>, ApiError> {
    let (parts, body) = request.into_parts();
    let query: HashMap<String, String> = parts
        .uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let route = {
        let state = shared.lock();
        routes::parse(parts.uri.path(), |g, v, p| {
            state.registry.get(g, v, p).is_some_and(|rt| rt.namespaced)
        })
    };
    let watch = matches!(query.get("watch").map(String::as_str), Some("true" | "1"));
    let (verb, resource) = verb_of(&parts.method, &route, watch);
    let client = parts
        .headers
        .get(CLIENT_NAME_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    shared.record(RequestRecord {
        verb,
        resource: resource.clone(),
        query: parts.uri.query().unwrap_or_default().to_owned(),
        client: client.clone(),
        accept: parts
            .headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned(),
    });
    let fault_request = faults::Request {
        verb,
        resource: &resource,
        client: client.as_deref(),
    };
    let delay = shared.faults().delay();
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let stall = shared.faults().stall(&fault_request);
    if let Some(stall) = stall {
        tokio::time::sleep(stall).await;
    }
    if let Some(error) = shared.faults().check(&fault_request) {
        return Err(error);
    }
    let header = |name: header::HeaderName| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let accept = header(header::ACCEPT);
    let user_agent = header(header::USER_AGENT);
    let content_type = header(header::CONTENT_TYPE);
    let body = read_body(body, shared.body_limit).await?;
    match route {
        Route::Version => Ok(json_response(200, &discovery::version(), "application/json")),
        Route::Health => Ok(Response::new(full("ok"))),
        Route::CoreVersions | Route::Groups => {
            let core = route == Route::CoreVersions;
            let mut response = match accept::negotiate_discovery(&accept) {
                DiscoveryFormat::Aggregated(version) => {
                    let doc = discovery::aggregated(&shared.lock().registry, core, version);
                    json_response(200, &doc, &version.content_type())
                }
                DiscoveryFormat::Legacy if core => json_response(
                    200,
                    &discovery::core_versions(&shared.address),
                    "application/json",
                ),
                DiscoveryFormat::Legacy => json_response(
                    200,
                    &discovery::group_list(&shared.lock().registry),
                    "application/json",
                ),
            };
            response
                .headers_mut()
                .insert(header::VARY, HeaderValue::from_static("Accept"));
            Ok(response)
        }
        Route::Group(group) => {
            let doc = discovery::group(&shared.lock().registry, &group).ok_or_else(ApiError::unknown_path)?;
            Ok(json_response(200, &doc, "application/json"))
        }
        Route::Resources { group, version } => {
            let doc = discovery::resource_list(&shared.lock().registry, &group, &version)
                .ok_or_else(ApiError::unknown_path)?;
            Ok(json_response(200, &doc, "application/json"))
        }
        Route::OpenApiRoot => {
            let state = shared.lock();
            let doc = openapi::root(&state.registry, state.store.resource_version());
            Ok(json_response(200, &doc, "application/json"))
        }
        Route::OpenApi(path) => {
            let doc =
                openapi::group_version(&shared.lock().registry, &path).ok_or_else(ApiError::unknown_path)?;
            Ok(json_response(200, &doc, "application/json"))
        }
        Route::Resource(path) => {
            let dry_run: Vec<String> =
                form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes())
                    .filter(|(k, _)| k == "dryRun")
                    .map(|(_, v)| v.into_owned())
                    .collect();
            let request = ResourceRequest {
                method: &parts.method,
                query: &query,
                dry_run: &dry_run,
                content_type: &content_type,
                accept: &accept,
                user_agent: &user_agent,
                body: &body,
                watch,
            };
            serve_resource(&shared, path, &request)
        }
        Route::Unknown => Err(ApiError::unknown_path()),
    }
}

async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, ApiError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(ApiError::too_large_body(limit)),
        Err(e) => Err(ApiError::bad_request(format!(
            "failed to read the request body: {e}"
        ))),
    }
}

fn parse_json(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}")))
}

/// The `DeleteOptions` of a delete's body (`null` when there is no body).
/// The `DeleteOptions` of a delete or deletecollection body, in JSON, YAML or protobuf (as
/// client-go sends it with protobuf content type).
fn delete_options(content_type: &str, body: &Bytes) -> Result<Value, ApiError> {
    if body.is_empty() {
        Ok(Value::Null)
    } else {
        parse_object(content_type, body)
    }
}

fn parse_yaml(body: &Bytes) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
    serde_saphyr::from_str::<Value>(text).map_err(|e| ApiError::bad_request(format!("yaml parse error: {e}")))
}

/// Decodes a create/update body: JSON or YAML; other media types (protobuf, CBOR) get 415, after
/// which client-go falls back to JSON.
fn parse_object(content_type: &str, body: &Bytes) -> Result<Value, ApiError> {
    let mime = content_type.split(';').next().unwrap_or_default().trim();
    match mime {
        "" | "application/json" | "*/*" => parse_json(body),
        "application/yaml" => parse_yaml(body),
        protobuf::MEDIA_TYPE => Ok(protobuf::decode_object(body)?),
        _ => Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf; got {mime:?}"
            ),
        )),
    }
}

/// What a request to a resource URL carries besides its path.
struct ResourceRequest<'a> {
    method: &'a Method,
    query: &'a HashMap<String, String>,
    /// Every `dryRun` value of the query.
    dry_run: &'a [String],
    content_type: &'a str,
    accept: &'a str,
    user_agent: &'a str,
    body: &'a Bytes,
    watch: bool,
}

fn serve_resource(
    shared: &Arc<Shared>,
    path: ResourcePath,
    request: &ResourceRequest<'_>,
) -> Result<Response<Body>, ApiError> {
    let ResourceRequest {
        method,
        query,
        dry_run,
        content_type,
        accept,
        user_agent,
        body,
        watch,
    } = *request;
    let rt: ResourceType = shared
        .lock()
        .registry
        .get(&path.group, &path.version, &path.plural)
        .cloned()
        .ok_or_else(ApiError::unknown_path)?;
    let ns = path.namespace.as_deref();
    if ns.is_some() && !rt.namespaced {
        return Err(ApiError::unknown_path());
    }
    // as kube-apiserver, a 406 before anything is read or written
    crate::transform::negotiate(accept)?;
    let status = match path.subresource.as_deref() {
        None => false,
        Some("status") if rt.status_subresource => true,
        Some("scale") if rt.scale_subresource.is_some() => {
            return serve_scale(shared, &rt, &path, request);
        }
        Some(_) => return Err(ApiError::unknown_path()),
    };
    let object_ok = |code: u16, v: &Value| Ok(answer(accept, code, v));
    match (method, path.name.as_deref()) {
        (&Method::GET, None) if watch || path.watch_prefix => {
            let mut options = ListOptions::parse(query, ns)?;
            field_labels::check(&shared.lock(), &rt, &options.filter.fields)?;
            options.watch = true;
            let current = {
                let shared = shared.clone();
                Arc::new(move || shared.lock().store.resource_version())
            };
            let lag = {
                let (shared, resource) = (shared.clone(), rt.plural.clone());
                Arc::new(move || shared.faults().watch_lag(&resource))
            };
            let stream = WatchStream::start(
                &mut shared.lock(),
                &rt,
                &options,
                shared.bookmark_interval,
                current,
            )?
            .with_lag(lag);
            let (shape, content_type) = watch_shape(shared, &rt, query, accept)?;
            let lines = futures::stream::unfold(stream, |mut stream| async move {
                stream.next_line().await.map(|line| (line, stream))
            })
            .map(shape)
            .map(|line| Ok::<_, Infallible>(Frame::data(line)));
            let mut response = Response::new(StreamBody::new(lines).boxed_unsync());
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            Ok(response)
        }
        (&Method::GET, None) => {
            let options = ListOptions::parse(query, ns)?;
            field_labels::check(&shared.lock(), &rt, &options.filter.fields)?;
            let list = list::list(&shared.lock(), &rt, &options)?;
            Ok(answer(
                accept,
                200,
                &shaped(shared, &rt, query, accept, list, true)?,
            ))
        }
        (_, None) if rt.namespaced && ns.is_none() && *method != Method::DELETE => {
            Err(ApiError::unknown_path())
        }
        (&Method::POST, None) => {
            let dry = dry_run::requested(dry_run, None, OptionsKind::Create)?;
            let (writer, _) = writer_of(&rt, query, user_agent, false, None)?;
            let (object, mode, warnings) = validated(
                &rt,
                query,
                "CreateOptions",
                content_type,
                body,
                parse_object(content_type, body)?,
            )?;
            let (created, more) = shared.lock().maybe_dry(dry, |s| {
                s.with_field_validation(mode, |s| {
                    s.as_writer(writer, false, |s| s.create(&rt, ns, object))
                })
            });
            let created = shaped(shared, &rt, query, accept, created?, false)?;
            Ok(warned(answer(accept, 201, &created), warnings, more))
        }
        (&Method::DELETE, None) => {
            let options = ListOptions::parse(query, ns)?;
            field_labels::check(&shared.lock(), &rt, &options.filter.fields)?;
            let delete_options = delete_options(content_type, body)?;
            let dry = dry_run::requested(dry_run, Some(&delete_options), OptionsKind::Delete)?;
            let deleted = shared
                .lock()
                .maybe_dry(dry, |s| s.delete_collection(&rt, &options.filter))?;
            let rv = shared.lock().store.resource_version();
            let deleted = json!({
                "kind": format!("{}List", rt.kind),
                "apiVersion": rt.api_version(),
                "metadata": {"resourceVersion": rv.to_string()},
                "items": deleted,
            });
            object_ok(200, &shaped(shared, &rt, query, accept, deleted, true)?)
        }
        (_, Some(_)) if rt.namespaced && ns.is_none() => Err(ApiError::unknown_path()),
        (&Method::GET, Some(name)) => {
            let object = shared.lock().get(&rt, ns, name)?;
            Ok(answer(
                accept,
                200,
                &shaped(shared, &rt, query, accept, object, false)?,
            ))
        }
        (&Method::PUT, Some(name)) => {
            let mode = if status {
                UpdateMode::Status
            } else {
                UpdateMode::Main
            };
            let dry = dry_run::requested(dry_run, None, OptionsKind::Update)?;
            let subresource = status.then_some("status");
            let (writer, _) = writer_of(&rt, query, user_agent, false, subresource)?;
            let (object, validation, warnings) = validated(
                &rt,
                query,
                "UpdateOptions",
                content_type,
                body,
                parse_object(content_type, body)?,
            )?;
            let (updated, more) = shared.lock().maybe_dry(dry, |s| {
                s.with_field_validation(validation, |s| {
                    s.as_writer(writer, false, |s| s.update(&rt, ns, name, object, mode))
                })
            });
            let updated = shaped(shared, &rt, query, accept, updated?, false)?;
            Ok(warned(answer(accept, 200, &updated), warnings, more))
        }
        (&Method::PATCH, Some(name)) => {
            let patch_type = PatchType::from_content_type(content_type)
                .ok_or_else(|| ApiError::unsupported_media_type(content_type))?;
            let patch = match patch_type {
                PatchType::Apply => serde_json::from_slice(body).or_else(|_| parse_yaml(body))?,
                _ => parse_json(body)?,
            };
            let dry = dry_run::requested(dry_run, None, OptionsKind::Patch)?;
            let apply = patch_type == PatchType::Apply;
            let subresource = status.then_some("status");
            let (writer, force) = writer_of(&rt, query, user_agent, apply, subresource)?;
            let (patch, mode, warnings) = match patch_type {
                PatchType::Json => (
                    patch,
                    field_validation::Mode::of(query, "PatchOptions")?,
                    Vec::new(),
                ),
                _ => validated(&rt, query, "PatchOptions", content_type, body, patch)?,
            };
            let (patched, more) = shared.lock().maybe_dry(dry, |s| {
                s.with_field_validation(mode, |s| {
                    s.as_writer(writer, force, |s| {
                        s.patch(&rt, ns, name, patch_type, &patch, status)
                    })
                })
            });
            let (object, created) = patched?;
            let object = shaped(shared, &rt, query, accept, object, false)?;
            let response = answer(accept, if created { 201 } else { 200 }, &object);
            Ok(warned(response, warnings, more))
        }
        (&Method::DELETE, Some(name)) => {
            let options = delete_options(content_type, body)?;
            let dry = dry_run::requested(dry_run, Some(&options), OptionsKind::Delete)?;
            let deleted = shared
                .lock()
                .maybe_dry(dry, |s| s.delete(&rt, ns, name, &options))?;
            object_ok(200, &shaped(shared, &rt, query, accept, deleted, false)?)
        }
        _ => Err(ApiError::method_not_allowed(method.as_str())),
    }
}

/// GET, PUT and PATCH of an object's `scale` subresource.
fn serve_scale(
    shared: &Arc<Shared>,
    rt: &ResourceType,
    path: &ResourcePath,
    request: &ResourceRequest<'_>,
) -> Result<Response<Body>, ApiError> {
    let ns = path.namespace.as_deref();
    let name = path.name.as_deref().ok_or_else(ApiError::unknown_path)?;
    if rt.namespaced && ns.is_none() {
        return Err(ApiError::unknown_path());
    }
    let scale = match *request.method {
        Method::GET => shared.lock().get_scale(rt, ns, name)?,
        Method::PUT => {
            let dry = dry_run::requested(request.dry_run, None, OptionsKind::Update)?;
            let body = parse_object(request.content_type, request.body)?;
            shared
                .lock()
                .maybe_dry(dry, |s| s.update_scale(rt, ns, name, &body))?
        }
        Method::PATCH => {
            let patch_type = PatchType::from_content_type(request.content_type)
                .ok_or_else(|| ApiError::unsupported_media_type(request.content_type))?;
            let patch = match patch_type {
                PatchType::Apply => {
                    serde_json::from_slice(request.body).or_else(|_| parse_yaml(request.body))?
                }
                _ => parse_json(request.body)?,
            };
            let dry = dry_run::requested(request.dry_run, None, OptionsKind::Patch)?;
            shared
                .lock()
                .maybe_dry(dry, |s| s.patch_scale(rt, ns, name, patch_type, &patch))?
        }
        ref other => return Err(ApiError::method_not_allowed(other.as_str())),
    };
    let scale = shaped(shared, rt, request.query, request.accept, scale, false)?;
    Ok(answer(request.accept, 200, &scale))
}

/// A list (`list`) or one object in the shape `Accept` negotiated: as stored,
/// `PartialObjectMetadata` or a `Table` ([`crate::transform::shaped`]).
fn shaped(
    shared: &Shared,
    rt: &ResourceType,
    query: &HashMap<String, String>,
    accept: &str,
    value: Value,
    list: bool,
) -> Result<Value, ApiError> {
    let resource = crate::transform::Resource {
        rt,
        custom: shared.lock().registry.crd_of(rt).is_some(),
        columns: &|| shared.lock().table_columns(rt),
    };
    crate::transform::shaped(&resource, query, accept, value, list)
}

/// What shapes each watch event line as `Accept` negotiated: unchanged, with
/// `PartialObjectMetadata` objects, or with `Table` objects (column definitions in the first).
/// Protobuf watch streams are framed (see [`protobuf::watch_frame`]) when `Accept` asks for
/// protobuf first and the type has a protobuf form; the stream's content type comes with it.
fn watch_shape(
    shared: &Shared,
    rt: &ResourceType,
    query: &HashMap<String, String>,
    accept: &str,
) -> Result<(impl FnMut(Bytes) -> Bytes + Send + 'static, &'static str), ApiError> {
    let (format, protobuf) = accept::negotiate(accept, false);
    let include = IncludeObject::parse(query.get("includeObject").map(String::as_str))?;
    let columns = match format {
        ObjectFormat::Table(_) => shared.lock().table_columns(rt),
        _ => Vec::new(),
    };
    // metadata-only objects have a protobuf form whatever their type
    let framed = protobuf
        && (matches!(format, ObjectFormat::PartialMetadata(_))
            || protobuf::has_form(&rt.group, &rt.version, &rt.kind));
    let content_type = if framed {
        protobuf::WATCH_MEDIA_TYPE
    } else {
        "application/json"
    };
    let mut first = true;
    let frame = move |line: Bytes| {
        // a line that is not an event (an injected malformed one) goes out framed as it is
        Bytes::from(
            protobuf::watch_frame(&line)
                .unwrap_or_else(|| [&(line.len() as u32).to_be_bytes()[..], &line].concat()),
        )
    };
    let shape = move |line: Bytes| match format {
        ObjectFormat::Full if framed => frame(line),
        ObjectFormat::Full => line,
        ObjectFormat::PartialMetadata(version) if framed => {
            frame(partial_metadata::watch_line(line, version))
        }
        ObjectFormat::PartialMetadata(version) => partial_metadata::watch_line(line, version),
        ObjectFormat::Table(version) => {
            let with_definitions = std::mem::take(&mut first);
            table::watch_line(line, &columns, include, version, with_definitions)
        }
    };
    Ok((shape, content_type))
}

/// A write's body checked by its `fieldValidation` mode: fields given twice in a JSON body, and
/// fields a built-in type does not have (dropped), refused under `Strict` or returned as
/// warnings under `Warn`. Custom resources are checked by their schema when written.
fn validated(
    rt: &ResourceType,
    query: &HashMap<String, String>,
    options: &str,
    content_type: &str,
    body: &Bytes,
    mut object: Value,
) -> Result<(Value, field_validation::Mode, Vec<String>), ApiError> {
    let mode = field_validation::Mode::of(query, options)?;
    let mut findings = Vec::new();
    if content_type.contains("json") || content_type.is_empty() {
        findings.extend(field_validation::duplicate_fields(body));
    }
    if let Some(root) = crate::builtin_schema::root_of(&rt.group, &rt.version, &rt.kind) {
        findings.extend(field_validation::unknown_fields(&mut object, root));
    }
    let warnings = Findings(findings).resolve(mode, rt)?;
    Ok((object, mode, warnings))
}

/// `response` with a `Warning: 299 - "..."` header per warning.
fn warned(mut response: Response<Body>, warnings: Vec<String>, more: Vec<String>) -> Response<Body> {
    for warning in warnings.into_iter().chain(more) {
        let escaped = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

/// An object or list answer: protobuf when `Accept` asks for it first and the kind has a
/// protobuf form, JSON otherwise.
fn answer(accept: &str, code: u16, value: &Value) -> Response<Body> {
    if accept::prefers_protobuf(accept)
        && let Some(bytes) = protobuf::encode_answer(value)
    {
        let mut response = Response::new(full(bytes));
        *response.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(protobuf::MEDIA_TYPE),
        );
        return response;
    }
    json_response(code, value, "application/json")
}
