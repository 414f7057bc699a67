//! HTTP requests: each is recorded, meets the injected faults, has its body read under the
//! limit and is routed: discovery, OpenAPI, or a resource URL ([`serve_resource`]).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use http::{HeaderValue, Method, Request, Response, header};
use hyper::body::Incoming;

use crate::encoding::accept::{self, DiscoveryFormat};
use crate::encoding::transform::Negotiated;
use crate::faults;
use crate::http::body::read_body;
use crate::http::discovery;
use crate::http::openapi;
use crate::http::request::ResourceRequest;
use crate::http::resource::serve_resource;
use crate::http::response::{Body, error_response, full, json_response};
use crate::http::routes::{self, Route};
use crate::http::shared::{CLIENT_NAME_HEADER, RequestRecord, Shared};
use crate::status::ApiError;

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

/// The headers a request is served by, read once.
struct Headers {
    accept: String,
    content_type: String,
    user_agent: String,
    authorization: String,
    client: Option<String>,
    upgrade: bool,
}

impl Headers {
    fn of(headers: &http::HeaderMap) -> Self {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let header = |name: header::HeaderName| text(name.as_str()).unwrap_or_default().to_owned();
        Self {
            accept: header(header::ACCEPT),
            content_type: header(header::CONTENT_TYPE),
            user_agent: header(header::USER_AGENT),
            authorization: header(header::AUTHORIZATION),
            client: text(CLIENT_NAME_HEADER).map(str::to_owned),
            upgrade: headers.contains_key(header::UPGRADE),
        }
    }
}

/// The query of a request, decoded once: the last value of each parameter, and every `dryRun`
/// value.
struct Query {
    last: HashMap<String, String>,
    dry_run: Vec<String>,
}

impl Query {
    fn of(query: &str) -> Self {
        let mut last = HashMap::new();
        let mut dry_run = Vec::new();
        for (key, value) in form_urlencoded::parse(query.as_bytes()).into_owned() {
            if key == "dryRun" {
                dry_run.push(value.clone());
            }
            last.insert(key, value);
        }
        Self { last, dry_run }
    }
}

/// Serves one request. Never fails: errors become `Status` responses, in the media type the
/// request's `Accept` negotiated.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let headers = Headers::of(request.headers());
    let negotiated = Negotiated::of(&headers.accept);
    Ok(match serve(shared, request, &headers, &negotiated).await {
        Ok(response) => response,
        Err(error) => error_response(&error, &negotiated),
    })
}

async fn serve(
    shared: Arc<Shared>,
    request: Request<Incoming>,
    headers: &Headers,
    negotiated: &Negotiated,
) -> Result<Response<Body>, ApiError> {
    let (mut parts, body) = request.into_parts();
    let on_upgrade = std::sync::Mutex::new(parts.extensions.remove::<hyper::upgrade::OnUpgrade>());
    let raw_query = parts.uri.query().unwrap_or_default();
    let Query { last: query, dry_run } = Query::of(raw_query);
    let route = {
        let state = shared.lock();
        routes::parse(parts.uri.path(), |g, v, p| {
            state.registry.get(g, v, p).is_some_and(|rt| rt.namespaced)
        })
    };
    let watch = matches!(query.get("watch").map(String::as_str), Some("true" | "1"));
    let (verb, resource) = verb_of(&parts.method, &route, watch);
    shared.record(RequestRecord {
        verb,
        resource: resource.clone(),
        query: raw_query.to_owned(),
        client: headers.client.clone(),
        accept: headers.accept.clone(),
    });
    let fault_request = faults::Request {
        verb,
        resource: &resource,
        client: headers.client.as_deref(),
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
    let body = read_body(body, shared.body_limit).await?;
    match route {
        Route::Version => Ok(json_response(200, &discovery::version(), "application/json")),
        Route::Health => Ok(Response::new(full("ok"))),
        Route::CoreVersions | Route::Groups => {
            let core = route == Route::CoreVersions;
            let mut response = match accept::negotiate_discovery(&headers.accept) {
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
            let rt = shared
                .lock()
                .registry
                .get(&path.group, &path.version, &path.plural)
                .cloned()
                .ok_or_else(ApiError::unknown_path)?;
            let request = ResourceRequest {
                shared: &shared,
                rt,
                namespace: path.namespace,
                subresource: path.subresource,
                method: &parts.method,
                query: &query,
                dry_run: &dry_run,
                content_type: &headers.content_type,
                negotiated,
                user_agent: &headers.user_agent,
                body: &body,
                upgrade: headers.upgrade,
                authorization: &headers.authorization,
                headers: &parts.headers,
                raw_query,
                on_upgrade: &on_upgrade,
            };
            serve_resource(&request, path.name.as_deref(), watch || path.watch_prefix)
        }
        Route::Unknown => Err(ApiError::unknown_path()),
    }
}
