use k8s_openapi::api::core::v1::Pod;
use kube::core::{ObjectList, WatchEvent};
use serde_json::json;

use super::*;

/// A pod with one container, five conditions, two tolerations, two managedFields entries and
/// an unknown field holding arrays before the known ones.
fn pod_json() -> serde_json::Value {
    let condition = |kind: &str| json!({"type": kind, "status": "True"});
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "unknownList": [[1, 2], [3], []],
        "metadata": {
            "name": "web-0",
            "namespace": "default",
            "labels": {"app": "web"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u1"}],
            "managedFields": [
                {"manager": "kubelet", "operation": "Update", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {}}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:ownerReferences": {}}}}
            ]
        },
        "spec": {
            "containers": [{
                "name": "web",
                "image": "nginx:1.27",
                "args": ["--port", "8080", "--message", "a \"quoted\" ] [ , string"],
                "ports": [{"containerPort": 8080}]
            }],
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}
            ]
        },
        "status": {
            "conditions": [
                condition("PodReadyToStartContainers"), condition("Initialized"),
                condition("Ready"), condition("ContainersReady"), condition("PodScheduled")
            ]
        }
    })
}

/// The capacity and length of every vector checked, by name.
fn vectors(pod: &Pod) -> Vec<(&'static str, usize, usize)> {
    let spec = pod.spec.as_ref().expect("spec");
    let container = &spec.containers[0];
    let args = container.args.as_ref().expect("args");
    let tolerations = spec.tolerations.as_ref().expect("tolerations");
    let conditions = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .expect("conditions");
    let managed = pod.metadata.managed_fields.as_ref().expect("managedFields");
    let owners = pod.metadata.owner_references.as_ref().expect("ownerReferences");
    vec![
        ("containers", spec.containers.capacity(), spec.containers.len()),
        ("args", args.capacity(), args.len()),
        ("tolerations", tolerations.capacity(), tolerations.len()),
        ("conditions", conditions.capacity(), conditions.len()),
        ("managedFields", managed.capacity(), managed.len()),
        ("ownerReferences", owners.capacity(), owners.len()),
    ]
}

#[test]
fn decodes_what_serde_json_decodes_with_every_vector_at_its_exact_capacity() {
    let text = pod_json().to_string();
    let exact: Pod = from_str(&text).expect("decodes");
    let plain: Pod = serde_json::from_str(&text).expect("decodes");
    assert_eq!(exact, plain);
    for (name, capacity, len) in vectors(&exact) {
        assert_eq!(capacity, len, "{name}");
    }
    assert!(
        vectors(&plain).iter().any(|(_, capacity, len)| capacity > len),
        "plain decoding leaves spare room (what this module removes)"
    );
}

#[test]
fn watch_events_and_lists_get_exact_vectors_too() {
    let event = json!({"type": "MODIFIED", "object": pod_json()}).to_string();
    let Ok(WatchEvent::Modified(pod)) = from_str::<WatchEvent<Pod>>(&event) else {
        panic!("a modified event");
    };
    assert!(vectors(&pod).iter().all(|(_, capacity, len)| capacity == len));

    let list = json!({
        "apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"},
        "items": [pod_json(), pod_json(), pod_json()]
    })
    .to_string();
    let list: ObjectList<Pod> = from_str(&list).expect("decodes");
    assert_eq!((list.items.capacity(), list.items.len()), (3, 3));
    for pod in &list.items {
        assert!(vectors(pod).iter().all(|(_, capacity, len)| capacity == len));
    }
}

#[test]
fn malformed_text_fails_as_with_serde_json() {
    for text in [
        r#"{"metadata":{"name":"a"}"#,
        r#"{"spec":{"containers":[{"name":1}]}}"#,
        r#"{"spec":{"containers":[{"name":"a"},]}}"#,
        r#"{"metadata":{"name":"a"}} trailing"#,
        "",
    ] {
        let exact = from_str::<Pod>(text).expect_err("malformed");
        let plain = serde_json::from_str::<Pod>(text).expect_err("malformed");
        assert_eq!(exact.to_string(), plain.to_string(), "{text}");
    }
}

#[test]
fn decode_slice_decodes_what_serde_json_decodes_with_every_vector_at_its_exact_capacity() {
    let event = json!({"type": "MODIFIED", "object": pod_json()}).to_string();
    let Ok(WatchEvent::Modified(pod)) = decode_slice::<WatchEvent<Pod>>(event.as_bytes()) else {
        panic!("a modified event");
    };
    let plain: Pod = serde_json::from_value(pod_json()).expect("decodes");
    assert_eq!(pod, plain);
    for (name, capacity, len) in vectors(&pod) {
        assert_eq!(capacity, len, "{name}");
    }
}

#[test]
fn decode_slice_reports_bad_bytes_and_malformed_text_as_errors() {
    let not_utf8 = decode_slice::<Pod>(b"{\"metadata\":{\"name\":\"\xff\"}}").expect_err("not UTF-8");
    assert!(
        not_utf8.to_string().starts_with("failed to decode JSON: "),
        "{not_utf8}"
    );
    for text in [
        r#"{"metadata":{"name":"a"}"#,
        r#"{"spec":{"containers":[{"name":1}]}}"#,
        r#"{"metadata":{"name":"a"}} trailing"#,
        "",
    ] {
        let err = decode_slice::<Pod>(text.as_bytes()).expect_err("malformed");
        assert!(err.to_string().starts_with("failed to decode JSON: "), "{err}");
    }
}

/// With the `simd-json` feature, texts up to its size limit go through simd-json and larger
/// ones through serde_json: told apart by `-0` in an integer field, which simd-json takes as 0
/// and serde_json refuses as a float.
#[cfg(feature = "simd-json")]
#[test]
fn decode_slice_leaves_texts_above_the_simd_limit_to_serde_json() {
    let padded = |len: usize| {
        let text = r#"{"metadata":{"generation":-0,"annotations":{"pad":""}}}"#;
        let pad = "x".repeat(len - text.len());
        text.replace(r#""pad":"""#, &format!(r#""pad":"{pad}""#))
    };
    let at_limit = padded(simd::MAX_BYTES);
    assert_eq!(at_limit.len(), simd::MAX_BYTES);
    let pod: Pod = decode_slice(at_limit.as_bytes()).expect("simd-json takes -0 as 0");
    assert_eq!(pod.metadata.generation, Some(0));
    let above = padded(simd::MAX_BYTES + 1);
    let err = decode_slice::<Pod>(above.as_bytes()).expect_err("serde_json refuses a float");
    assert!(err.to_string().contains("-0.0"), "{err}");
}
