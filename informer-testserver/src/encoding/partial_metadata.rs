//! Metadata-only answers: what a get, list or watch returns when the client asks for
//! `as=PartialObjectMetadata` (`PartialObjectMetadataList` for a list) of `meta.k8s.io` in its
//! `Accept` header, as client-go's metadata client and kube's `Api::list_metadata` and
//! `watch_metadata` do. Each object keeps its `metadata` and nothing else.

use bytes::Bytes;
use serde_json::{Value, json};

/// `object` as a `PartialObjectMetadata` of `meta.k8s.io/<version>`.
pub(crate) fn object(object: &Value, version: &str) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// A list of objects as a `PartialObjectMetadataList`, keeping the list's metadata (resource
/// version, continue token, remaining count).
pub(crate) fn list(list: &Value, version: &str) -> Value {
    let items: Vec<Value> = list
        .get("items")
        .and_then(Value::as_array)
        .map(|items| items.iter().map(|item| object(item, version)).collect())
        .unwrap_or_default();
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": list.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "items": items,
    })
}

/// A watch event line with its object as a `PartialObjectMetadata`; `ERROR` events (a
/// `Status`) and lines that are not events pass unchanged.
pub(crate) fn watch_line(line: Bytes, version: &str) -> Bytes {
    crate::storage::watch::reshape_event(line, |_, event_object| object(&event_object, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Value {
        json!({
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}, "resourceVersion": "7"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Running"},
        })
    }

    #[test]
    fn objects_keep_their_metadata_only() {
        let partial = object(&pod(), "v1");
        assert_eq!(
            partial,
            json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": pod()["metadata"],
            })
        );
    }

    #[test]
    fn lists_keep_their_continue_token_and_version() {
        let full = json!({
            "kind": "PodList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "9", "continue": "abc"},
            "items": [pod()],
        });
        let partial = list(&full, "v1beta1");
        assert_eq!(partial["kind"], "PartialObjectMetadataList");
        assert_eq!(partial["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(partial["metadata"], full["metadata"]);
        assert_eq!(partial["items"][0], object(&pod(), "v1beta1"));
    }

    #[test]
    fn watch_events_change_but_errors_do_not() {
        let added = Bytes::from(format!("{}\n", json!({"type": "ADDED", "object": pod()})));
        let changed: Value = serde_json::from_slice(&watch_line(added, "v1")).expect("json");
        assert_eq!(changed["type"], "ADDED");
        assert_eq!(changed["object"], object(&pod(), "v1"));
        let error =
            Bytes::from(json!({"type": "ERROR", "object": {"kind": "Status", "code": 410}}).to_string());
        assert_eq!(watch_line(error.clone(), "v1"), error);
    }
}
