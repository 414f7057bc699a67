//! [`track_writes`]: a `kube::Client` that tells the running reconcile what it wrote, so that
//! the next reconcile of the same object waits until the caches have seen it (see
//! [read your own writes](super#read-your-own-writes)).

use std::sync::Arc;

use http::{Request, Response};
use kube::client::Body;

use super::{RunContext, write_log::WriteLog, write_log::WrittenObject};
use crate::client_layer::{self, BoxError, Layer, ResponseFuture, is_write};

/// `client`, recording the object each successful write made inside a reconcile returns, for
/// that controller's guard against acting on a cache older than its own writes (see
/// [read your own writes](super#read-your-own-writes)).
///
/// A write (POST, PUT, PATCH, or DELETE) sent from a reconcile's task whose answer is one
/// object with a `resourceVersion` is recorded in the reconcile; its answer is read whole and
/// handed on unchanged. Everything else (reads, watches, writes outside a reconcile, errors,
/// `Status` and list answers, protobuf answers) passes untouched. A
/// [`Manager`](crate::manager::Manager)'s [client](crate::manager::Manager::client) tracks
/// writes already; use this without a manager:
///
/// ```no_run
/// use std::sync::Arc;
///
/// use informer_runtime::{SharedInformerFactory, controller::{self, Action, Controller}};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// # async fn reconcile(_: Arc<ConfigMap>, _: Arc<kube::Client>) -> Result<Action, kube::Error> { Ok(Action::await_change()) }
/// # fn error_policy(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<kube::Client>) -> Action { Action::requeue_with_backoff() }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = kube::Client::try_default().await?;
/// let factory = SharedInformerFactory::new(client.clone());
/// // reconciles write through this client
/// let writes = controller::track_writes(client);
/// Controller::<ConfigMap>::new(&factory)
///     .run(reconcile, error_policy, Arc::new(writes))
///     .await?;
/// # Ok(())
/// # }
/// ```
pub fn track_writes(client: kube::Client) -> kube::Client {
    client_layer::wrap(client, TrackWrites)
}

/// Records the answers of a reconcile's writes in its write log.
#[derive(Clone)]
struct TrackWrites;

impl Layer for TrackWrites {
    fn call(&self, client: kube::Client, request: Request<Body>) -> ResponseFuture {
        Box::pin(async move {
            let log = is_write(request.method())
                .then(RunContext::current_writes)
                .flatten();
            let response = client.send(request).await?;
            match log {
                Some(log) if response.status().is_success() && may_be_json(&response) => {
                    record(response, &log).await
                }
                _ => Ok(response),
            }
        })
    }
}

/// Reads the answer whole, records the object in it (if it is one) and hands it on.
async fn record(response: Response<Body>, log: &Arc<WriteLog>) -> Result<Response<Body>, BoxError> {
    let (parts, body) = response.into_parts();
    let bytes = body.collect_bytes().await?;
    match WrittenObject::from_body(&bytes) {
        Some(written) => {
            tracing::trace!(
                object = %log.key(),
                kind = %written.kind,
                resource_version = %written.resource_version,
                "recorded a write of the reconcile"
            );
            log.record(written);
        }
        None => {
            tracing::trace!(object = %log.key(), "a write's answer is not one object with a resource version; not recorded")
        }
    }
    Ok(Response::from_parts(parts, Body::from(bytes)))
}

/// Whether the answer may be JSON (what the API server sends unless protobuf was asked for).
fn may_be_json(response: &Response<Body>) -> bool {
    client_layer::content_type(response.headers()).is_none_or(|content_type| content_type.contains("json"))
}

#[cfg(test)]
mod tests;
