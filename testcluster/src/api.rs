//! What every controller does with the API server alike: merge patches, deletes that may find
//! the object gone, creates in slow-start batches, and the retry of a failed reconcile.

use std::{fmt, future::Future, sync::Arc};

use futures::future::join_all;
use informer_runtime::Action;
use k8s_openapi::serde::de::DeserializeOwned;
use kube::{
    Api,
    api::{DeleteParams, Patch, PatchParams},
};
use serde_json::Value;

/// The error policy of every controller: log, then retry through the rate limiter.
pub(crate) fn retry<K, E: fmt::Display, C>(_: Arc<K>, error: &E, _: Arc<C>) -> Action {
    tracing::warn!(%error, "reconcile failed, retrying with backoff");
    Action::requeue_with_backoff()
}

/// Applies the JSON merge patch `patch` to `name`.
pub(crate) async fn merge<K>(api: &Api<K>, name: &str, patch: &Value) -> kube::Result<K>
where
    K: Clone + DeserializeOwned + fmt::Debug,
{
    api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
}

/// Applies the JSON merge patch `patch` to `name`'s status subresource.
pub(crate) async fn merge_status<K>(api: &Api<K>, name: &str, patch: &Value) -> kube::Result<K>
where
    K: Clone + DeserializeOwned + fmt::Debug,
{
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
}

/// Deletes `name` in the background; an object already gone is no error.
pub(crate) async fn delete<K>(api: &Api<K>, name: &str) -> kube::Result<()>
where
    K: Clone + DeserializeOwned + fmt::Debug,
{
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error),
    }
}

/// Runs `count` creations in batches of 1, 2, 4, ... (kube's `slowStartBatch`), stopping at
/// the first batch with an error: a failing template fails once, not `count` times.
pub(crate) async fn slow_start<F, Fut, E>(count: usize, mut create: F) -> Result<(), E>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    let mut done = 0;
    let mut batch = 1;
    while done < count {
        let size = batch.min(count - done);
        let results = join_all((done..done + size).map(&mut create)).await;
        results.into_iter().collect::<Result<Vec<()>, E>>()?;
        done += size;
        batch *= 2;
    }
    Ok(())
}

/// A count as the API's `int32`.
pub(crate) fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Whether `a` and `b` say the same once stored: the API server leaves zero values, empty
/// lists and maps out of what it stores (Go's `omitempty`), so `Some(0)` written reads back
/// as `None`.
pub(crate) fn same<T: k8s_openapi::serde::Serialize>(a: &T, b: &T) -> bool {
    let (Ok(a), Ok(b)) = (serde_json::to_value(a), serde_json::to_value(b)) else {
        return false;
    };
    stored(a) == stored(b)
}

/// `value` without nulls, zeros, `false`, empty strings, lists and maps, at any depth.
fn stored(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| (key, stored(value)))
                .filter(|(_, value)| !is_zero(value))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(stored).collect()),
        other => other,
    }
}

fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(flag) => !flag,
        Value::Number(number) => number.as_f64() == Some(0.0),
        Value::String(text) => text.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn zero_values_read_back_as_absent() {
        assert!(same(&json!({"replicas": 0, "ready": null, "c": []}), &json!({})));
        assert!(!same(&json!({"replicas": 1}), &json!({})));
    }

    #[tokio::test]
    async fn slow_start_stops_at_the_first_failing_batch() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let result = slow_start(10, |i| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async move { if i == 1 { Err(i) } else { Ok(()) } }
        })
        .await;
        assert_eq!(result, Err(1));
        // batches of 1 and 2 ran, the batch of 4 did not
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 3);
    }
}
