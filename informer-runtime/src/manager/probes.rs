//! The manager's HTTP listener: `/healthz`, `/readyz` (each check also alone at
//! `/healthz/<name>`, `/readyz/<name>`) and `/metrics`, answered as kube-apiserver answers its
//! own probes: `ok`, or one `[+]`/`[-]` line per check and a failure message with status 500.

use std::{convert::Infallible, fmt::Write as _, sync::Arc};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// A health or readiness check: `Err` says why it fails.
pub type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The named checks of one probe.
#[derive(Default, Clone)]
pub(crate) struct Checks(pub(crate) Vec<(String, Check)>);

impl Checks {
    /// The result of each check, by name.
    fn results(&self) -> Vec<(&str, Result<(), String>)> {
        self.0
            .iter()
            .map(|(name, check)| (name.as_str(), check()))
            .collect()
    }
}

/// Renders the metrics' text.
pub(crate) type MetricsRenderer = Box<dyn Fn() -> Result<String, std::fmt::Error> + Send + Sync>;

/// What the listener answers from.
#[derive(Default)]
pub(crate) struct Probes {
    pub(crate) healthz: Checks,
    pub(crate) readyz: Checks,
    /// Renders `/metrics`; `None` when the crate is built without the `metrics` feature.
    pub(crate) metrics: Option<MetricsRenderer>,
}

/// Serves `probes` on `listener` until `stop` fires.
pub(crate) async fn serve(listener: TcpListener, probes: Arc<Probes>, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "failed to accept a probe connection");
                continue;
            }
        };
        let probes = Arc::clone(&probes);
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let probes = Arc::clone(&probes);
                async move { Ok::<_, Infallible>(answer(&probes, &request)) }
            });
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                () = stop.cancelled() => {}
                served = connection => if let Err(error) = served {
                    tracing::debug!(%error, "a probe connection failed");
                }
            }
        });
    }
}

/// The answer to one probe request.
pub(crate) fn answer(probes: &Probes, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET and HEAD are served\n".into(),
        );
    }
    let verbose = request.uri().query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair == "verbose" || pair.starts_with("verbose="))
    });
    let path = request.uri().path().trim_end_matches('/');
    match path
        .split_once('/')
        .map(|(_, rest)| rest.split_once('/').unwrap_or((rest, "")))
    {
        Some(("healthz", check)) => probe("healthz", &probes.healthz, check, verbose),
        Some(("readyz", check)) => probe("readyz", &probes.readyz, check, verbose),
        Some(("metrics", "")) => metrics(probes),
        _ => text(
            StatusCode::NOT_FOUND,
            format!("no such path {path}: the manager serves /healthz, /readyz and /metrics\n"),
        ),
    }
}

fn probe(probe: &str, checks: &Checks, only: &str, verbose: bool) -> Response<Full<Bytes>> {
    let results = checks.results();
    let selected: Vec<_> = results
        .iter()
        .filter(|(name, _)| only.is_empty() || *name == only)
        .collect();
    if selected.is_empty() {
        return text(StatusCode::NOT_FOUND, format!("no {probe} check named {only}\n"));
    }
    let failed = selected.iter().any(|(_, result)| result.is_err());
    if !failed && !verbose {
        return text(StatusCode::OK, "ok".into());
    }
    let mut body = String::new();
    for (name, result) in &selected {
        let _ = match result {
            Ok(()) => writeln!(body, "[+]{name} ok"),
            Err(reason) => writeln!(body, "[-]{name} failed: {reason}"),
        };
    }
    if failed {
        let _ = writeln!(body, "{probe} check failed");
        return text(StatusCode::INTERNAL_SERVER_ERROR, body);
    }
    let _ = writeln!(body, "{probe} check passed");
    text(StatusCode::OK, body)
}

fn metrics(probes: &Probes) -> Response<Full<Bytes>> {
    let Some(render) = &probes.metrics else {
        return text(
            StatusCode::NOT_FOUND,
            "metrics are not served: informer-runtime was built without its `metrics` feature\n".into(),
        );
    };
    match render() {
        Ok(body) => {
            let mut response = Response::new(Full::new(Bytes::from(body)));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static(
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                ),
            );
            response
        }
        Err(_) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "failed to encode the metrics\n".into(),
        ),
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
