//! A `kube::Client` in front of another, passing each request through a [`Layer`]: how the
//! controller's write tracking and the manager's fenced writes sit between a reconcile and the
//! API server.
//!
//! The layer's future is polled in the task that sent the request, so task-locals of that
//! task (such as the running reconcile's scope) are visible to it.

use std::{
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};

use http::{Method, Request, Response};
use kube::client::Body;

/// An error of a layer or of the client behind it.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The answer to one request, once the layer and the client behind it are done.
pub(crate) type ResponseFuture = Pin<Box<dyn Future<Output = Result<Response<Body>, BoxError>> + Send>>;

/// What a client in front of another does with each request.
pub(crate) trait Layer: Clone + Send + 'static {
    /// Sends `request` through `client`, or answers it without sending it.
    fn call(&self, client: kube::Client, request: Request<Body>) -> ResponseFuture;
}

/// A client whose requests pass through `layer` on their way to `client`.
pub(crate) fn wrap(client: kube::Client, layer: impl Layer) -> kube::Client {
    let namespace = client.default_namespace().to_owned();
    kube::Client::new(Layered { client, layer }, namespace)
}

/// The `Content-Type` of a request or response with `headers`, if it has a readable one.
pub(crate) fn content_type(headers: &http::HeaderMap) -> Option<&str> {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
}

/// Whether a request with `method` writes (POST, PUT, PATCH, DELETE).
pub(crate) fn is_write(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

#[derive(Clone)]
struct Layered<L> {
    client: kube::Client,
    layer: L,
}

impl<L: Layer> tower::Service<Request<Body>> for Layered<L> {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> ResponseFuture {
        self.layer.call(self.client.clone(), request)
    }
}
