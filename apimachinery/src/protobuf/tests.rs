//! Decoding of hand-encoded documents (an encoder written from the `generated.proto` field
//! numbers, independent of the generated table), round trips through the table for every
//! message, and typed decodes compared with the JSON decode of the same object.

use k8s_openapi::api::{
    apps::v1::Deployment,
    coordination::v1::Lease,
    core::v1::{ConfigMap, Node, Pod, Secret, Service},
};
use kube_core::{ObjectList, PartialObjectMeta};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{
    Error, Segment, WatchFrame, from_slice,
    lookup::message_at,
    samples::sample,
    table::{KINDS, MESSAGES},
    to_vec,
};

fn varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn bytes_field(tag: u32, value: &[u8], out: &mut Vec<u8>) {
    varint(u64::from(tag) << 3 | 2, out);
    varint(value.len() as u64, out);
    out.extend_from_slice(value);
}

fn varint_field(tag: u32, value: u64, out: &mut Vec<u8>) {
    varint(u64::from(tag) << 3, out);
    varint(value, out);
}

fn map_entry(tag: u32, key: &str, value: &[u8], out: &mut Vec<u8>) {
    let mut entry = Vec::new();
    bytes_field(1, key.as_bytes(), &mut entry);
    bytes_field(2, value, &mut entry);
    bytes_field(tag, &entry, out);
}

/// `k8s\0` + Unknown{typeMeta{apiVersion, kind}, raw}.
fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::new();
    bytes_field(1, api_version.as_bytes(), &mut type_meta);
    bytes_field(2, kind.as_bytes(), &mut type_meta);
    let mut unknown = b"k8s\0".to_vec();
    bytes_field(1, &type_meta, &mut unknown);
    bytes_field(2, raw, &mut unknown);
    unknown
}

fn decode_value(document: &[u8]) -> Result<Value, Error> {
    from_slice(document)
}

#[test]
fn a_config_map_as_kubectl_sends_it() {
    // ObjectMeta: name = 1, namespace = 3, labels = 11
    let mut meta = Vec::new();
    bytes_field(1, b"settings", &mut meta);
    bytes_field(3, b"default", &mut meta);
    map_entry(11, "app", b"web", &mut meta);
    // ConfigMap: metadata = 1, data = 2, binaryData = 3, immutable = 4
    let mut cm = Vec::new();
    bytes_field(1, &meta, &mut cm);
    map_entry(2, "a", b"1", &mut cm);
    map_entry(2, "b", b"2", &mut cm);
    map_entry(3, "bin", &[0, 1, 2], &mut cm);
    varint_field(4, 1, &mut cm);
    let document = envelope("v1", "ConfigMap", &cm);
    assert_eq!(
        decode_value(&document).expect("decoded"),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "default", "labels": {"app": "web"}},
            "data": {"a": "1", "b": "2"},
            "binaryData": {"bin": "AAEC"},
            "immutable": true,
        })
    );
    let typed: ConfigMap = from_slice(&document).expect("typed");
    assert_eq!(typed.binary_data.expect("binary data")["bin"].0, [0, 1, 2]);
}

#[test]
fn special_and_inline_messages_get_their_json_forms() {
    // Pod.spec (2) .containers (2) { name = 1, ports = 6 { containerPort = 3 },
    // resources = 8 { limits = 1 map<string, Quantity{string = 1}> } }, .volumes (1) { name = 1,
    // volumeSource = 2 { emptyDir = 2 { } } }
    let mut quantity = Vec::new();
    bytes_field(1, b"500m", &mut quantity);
    let mut resources = Vec::new();
    map_entry(1, "cpu", &quantity, &mut resources);
    let mut port = Vec::new();
    varint_field(3, 8080, &mut port);
    let mut container = Vec::new();
    bytes_field(1, b"web", &mut container);
    bytes_field(6, &port, &mut container);
    bytes_field(8, &resources, &mut container);
    let mut source = Vec::new();
    bytes_field(2, &[], &mut source);
    let mut volume = Vec::new();
    bytes_field(1, b"scratch", &mut volume);
    bytes_field(2, &source, &mut volume);
    let mut spec = Vec::new();
    bytes_field(1, &volume, &mut spec);
    bytes_field(2, &container, &mut spec);
    // metadata.creationTimestamp (8) = Time { seconds = 1 }, deletionTimestamp (9) = Time {}
    let mut time = Vec::new();
    varint_field(1, 1_700_000_000, &mut time);
    let mut meta = Vec::new();
    bytes_field(1, b"p", &mut meta);
    bytes_field(8, &time, &mut meta);
    bytes_field(9, &[], &mut meta);
    let mut pod = Vec::new();
    bytes_field(1, &meta, &mut pod);
    bytes_field(2, &spec, &mut pod);
    let document = envelope("v1", "Pod", &pod);
    let object = decode_value(&document).expect("decoded");
    assert_eq!(object["metadata"]["creationTimestamp"], "2023-11-14T22:13:20Z");
    assert!(
        object["metadata"].get("deletionTimestamp").is_none(),
        "an empty Time is unset: {object}"
    );
    let container = &object["spec"]["containers"][0];
    assert_eq!(container["ports"], json!([{"containerPort": 8080}]));
    assert_eq!(container["resources"]["limits"]["cpu"], "500m");
    assert_eq!(
        object["spec"]["volumes"],
        json!([{"name": "scratch", "emptyDir": {}}])
    );
    let typed: Pod = from_slice(&document).expect("typed");
    assert!(typed.metadata.deletion_timestamp.is_none());
    assert!(
        typed.spec.expect("spec").volumes.expect("volumes")[0]
            .empty_dir
            .is_some()
    );
}

/// Go's protobuf writes every field that is not a pointer; the decode keeps a zero where Go's
/// JSON shows it.
#[test]
fn zero_values_are_kept_where_go_json_keeps_them() {
    // Lease spec (2): holderIdentity = 1 (*string), leaseDurationSeconds = 2 (*int32),
    // leaseTransitions = 5 (*int32)
    let mut spec = Vec::new();
    bytes_field(1, b"", &mut spec);
    varint_field(2, 0, &mut spec);
    varint_field(5, 0, &mut spec);
    let mut meta = Vec::new();
    bytes_field(1, b"lock", &mut meta);
    // namespace, generateName (plain strings, omitempty), generation (int64, omitempty)
    bytes_field(2, b"", &mut meta);
    bytes_field(3, b"", &mut meta);
    varint_field(7, 0, &mut meta);
    let mut lease = Vec::new();
    bytes_field(1, &meta, &mut lease);
    bytes_field(2, &spec, &mut lease);
    let object = decode_value(&envelope("coordination.k8s.io/v1", "Lease", &lease)).expect("decoded");
    assert_eq!(
        object,
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "lock"},
            "spec": {"holderIdentity": "", "leaseDurationSeconds": 0, "leaseTransitions": 0},
        })
    );
    let typed: Lease = from_slice(&envelope("coordination.k8s.io/v1", "Lease", &lease)).expect("typed");
    assert_eq!(
        typed.metadata.namespace, None,
        "an empty namespace is not a namespace"
    );
    assert_eq!(typed.spec.expect("spec").holder_identity.as_deref(), Some(""));

    // OwnerReference: controller = 6 (*bool) false kept; ContainerStatus restartCount = 5
    // (int32, no omitempty) kept; PodSpec hostNetwork = 11 (bool, omitempty) left out
    let mut owner = Vec::new();
    bytes_field(1, b"ReplicaSet", &mut owner);
    varint_field(6, 0, &mut owner);
    let mut meta = Vec::new();
    bytes_field(13, &owner, &mut meta);
    let mut status = Vec::new();
    bytes_field(1, b"web", &mut status);
    varint_field(5, 0, &mut status);
    let mut pod_status = Vec::new();
    bytes_field(8, &status, &mut pod_status);
    let mut pod_spec = Vec::new();
    varint_field(11, 0, &mut pod_spec);
    let mut pod = Vec::new();
    bytes_field(1, &meta, &mut pod);
    bytes_field(2, &pod_spec, &mut pod);
    bytes_field(3, &pod_status, &mut pod);
    let object = decode_value(&envelope("v1", "Pod", &pod)).expect("decoded");
    assert_eq!(object["metadata"]["ownerReferences"][0]["controller"], false);
    assert_eq!(object["status"]["containerStatuses"][0]["restartCount"], 0);
    assert_eq!(
        object["spec"],
        json!({}),
        "hostNetwork: false is left out as in JSON"
    );
}

/// Go's JSON leaves out no struct value, `omitempty` or not, and Go's protobuf writes a struct
/// that is not a pointer even when it is empty: a container without resources is
/// `"resources": {}` and a service without a load balancer `"loadBalancer": {}` in both answers.
#[test]
fn empty_structs_are_kept_as_go_json_shows_them() {
    // Service status (3) { loadBalancer (1) { } }
    let mut load_balancer = Vec::new();
    bytes_field(1, &[], &mut load_balancer);
    let mut meta = Vec::new();
    bytes_field(1, b"web", &mut meta);
    let mut service = Vec::new();
    bytes_field(1, &meta, &mut service);
    bytes_field(3, &load_balancer, &mut service);
    let document = envelope("v1", "Service", &service);
    let object = decode_value(&document).expect("decoded");
    assert_eq!(object["status"], json!({"loadBalancer": {}}));
    let json_form = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                           "status": {"loadBalancer": {}}});
    let typed: Service = from_slice(&document).expect("typed");
    assert_eq!(typed, serde_json::from_value::<Service>(json_form).expect("JSON"));

    // Pod spec (2) { containers (2) { name = 1, resources = 8 { } } }, status (3) { }
    let mut container = Vec::new();
    bytes_field(1, b"main", &mut container);
    bytes_field(8, &[], &mut container);
    let mut spec = Vec::new();
    bytes_field(2, &container, &mut spec);
    let mut meta = Vec::new();
    bytes_field(1, b"p", &mut meta);
    let mut pod = Vec::new();
    bytes_field(1, &meta, &mut pod);
    bytes_field(2, &spec, &mut pod);
    bytes_field(3, &[], &mut pod);
    let document = envelope("v1", "Pod", &pod);
    let object = decode_value(&document).expect("decoded");
    assert_eq!(object["spec"]["containers"][0]["resources"], json!({}));
    assert_eq!(object["status"], json!({}));
    let json_form = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                           "spec": {"containers": [{"name": "main", "resources": {}}]}, "status": {}});
    let typed: Pod = from_slice(&document).expect("typed");
    assert_eq!(typed, serde_json::from_value::<Pod>(json_form).expect("JSON"));
}

#[test]
fn acronym_fields_keep_go_json_names() {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c"}], "volumes": [
            {"name": "info", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
            {"name": "sio", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}}},
        ]},
    });
    assert_eq!(
        decode_value(&to_vec(&pod).expect("encoded")).expect("decoded"),
        pod
    );
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"},
                      "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]});
    assert_eq!(
        decode_value(&to_vec(&role).expect("encoded")).expect("decoded"),
        role
    );
    let csi = json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n"},
                     "spec": {"drivers": [{"name": "d", "nodeID": "node-1"}]}});
    assert_eq!(
        decode_value(&to_vec(&csi).expect("encoded")).expect("decoded"),
        csi
    );
}

#[test]
fn the_unix_epoch_is_a_time_and_an_unset_time_is_not() {
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": "l", "creationTimestamp": "1970-01-01T00:00:00Z"},
                       "spec": {"renewTime": "1970-01-01T00:00:00.000000Z"}});
    assert_eq!(
        decode_value(&to_vec(&lease).expect("encoded")).expect("decoded"),
        lease
    );
    let unset = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "creationTimestamp": null}});
    let decoded = decode_value(&to_vec(&unset).expect("encoded")).expect("decoded");
    assert_eq!(
        decoded,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    );
}

/// Go's protobuf writes a `Time` it holds by value whether set or not (an unset one as an
/// empty message), and a `*Time` only when set: the bytes of an object whose JSON leaves the
/// times out, or gives them as `null`, are Go's.
#[test]
fn an_unset_time_held_by_value_is_an_empty_message_and_an_unset_pointer_is_left_out() {
    // ObjectMeta: name = 1, creationTimestamp = 8 (a Time), deletionTimestamp = 9 (a *Time)
    let name_then_unset_creation = [0x0a, 0x01, b'c', 0x42, 0x00];
    let metadata_of = |document: &[u8]| {
        let envelope = k8s_protobuf::Envelope::parse(document).expect("an envelope");
        // ConfigMap: metadata = 1, its only field here
        assert_eq!(envelope.raw[0], 0x0a);
        envelope.raw[2..2 + usize::from(envelope.raw[1])].to_vec()
    };
    for metadata in [
        json!({"name": "c"}),
        json!({"name": "c", "creationTimestamp": null}),
        json!({"name": "c", "creationTimestamp": null, "deletionTimestamp": null}),
    ] {
        let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata});
        let document = to_vec(&config_map).expect("encoded");
        assert_eq!(metadata_of(&document), name_then_unset_creation, "{metadata}");
        assert_eq!(
            decode_value(&document).expect("decoded"),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
        );
    }
}

#[test]
fn bad_documents_are_errors_not_panics() {
    assert!(matches!(
        decode_value(b"not protobuf"),
        Err(Error::Decode(e)) if matches!(e.kind(), k8s_protobuf::ErrorKind::Envelope(_))
    ));
    assert!(matches!(
        decode_value(&envelope("example.com/v1", "Widget", &[])),
        Err(Error::UnknownKind(_))
    ));
    let pod = to_vec(&sample_pod()).expect("encoded");
    // every truncation of a document is an error or a shorter object, never a panic
    for end in 0..pod.len() {
        let _ = decode_value(&pod[..end]);
        let _ = from_slice::<Pod>(&pod[..end]);
    }
    // a string field holding a varint
    let mut wrong = Vec::new();
    varint_field(1, 7, &mut wrong);
    let mut cm = Vec::new();
    bytes_field(1, &wrong, &mut cm);
    assert!(matches!(
        decode_value(&envelope("v1", "ConfigMap", &cm)).map_err(|e| e.cause().clone()),
        Err(Error::Malformed(_))
    ));
    // a string that is not UTF-8
    let mut meta = Vec::new();
    bytes_field(1, &[0xff, 0xfe], &mut meta);
    let mut cm = Vec::new();
    bytes_field(1, &meta, &mut cm);
    assert!(decode_value(&envelope("v1", "ConfigMap", &cm)).is_err());
    // fields that do not fit the type are the type's error
    assert!(matches!(
        from_slice::<Pod>(&envelope("v1", "ConfigMap", &[])),
        Err(Error::Type(_))
    ));
}

#[test]
fn unknown_fields_are_skipped_and_scattered_repeated_fields_gathered() {
    // ConfigMap metadata with an unknown field 99, labels in two runs around other fields
    let mut meta = Vec::new();
    map_entry(11, "a", b"1", &mut meta);
    bytes_field(99, b"from a newer server", &mut meta);
    bytes_field(1, b"c", &mut meta);
    map_entry(11, "b", b"2", &mut meta);
    bytes_field(14, b"f1", &mut meta);
    bytes_field(3, b"ns", &mut meta);
    bytes_field(14, b"f2", &mut meta);
    let mut cm = Vec::new();
    bytes_field(1, &meta, &mut cm);
    assert_eq!(
        decode_value(&envelope("v1", "ConfigMap", &cm)).expect("decoded")["metadata"],
        json!({"name": "c", "namespace": "ns", "labels": {"a": "1", "b": "2"}, "finalizers": ["f1", "f2"]})
    );
}

#[test]
fn packed_repeated_numbers_are_read() {
    // Capabilities? No: SupplementalGroups (int64, repeated) of a PodSecurityContext (14 of
    // PodSpec), field 4, packed
    let mut packed = Vec::new();
    for group in [1000_u64, 2000, 3] {
        varint(group, &mut packed);
    }
    let mut security = Vec::new();
    bytes_field(4, &packed, &mut security);
    varint_field(4, 7, &mut security);
    let mut spec = Vec::new();
    bytes_field(14, &security, &mut spec);
    let mut pod = Vec::new();
    bytes_field(2, &spec, &mut pod);
    let object = decode_value(&envelope("v1", "Pod", &pod)).expect("decoded");
    assert_eq!(
        object["spec"]["securityContext"]["supplementalGroups"],
        json!([1000, 2000, 3, 7])
    );
}

fn sample_pod() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"},
                     "annotations": {"note": "ünïcode ✓"},
                     "creationTimestamp": "2023-11-14T22:13:20Z", "resourceVersion": "7", "uid": "u-1",
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-0",
                                          "controller": true, "blockOwnerDeletion": false}],
                     "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
                                        "time": "2023-11-14T22:13:20Z", "fieldsType": "FieldsV1",
                                        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}]},
        "spec": {
            "containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                            "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                            "env": [{"name": "A", "value": "x"}],
                            "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
                            "livenessProbe": {"tcpSocket": {"port": 8080}}}],
            "volumes": [{"name": "scratch", "emptyDir": {}}],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}],
            "terminationGracePeriodSeconds": 30,
        },
        "status": {"phase": "Running", "podIP": "10.0.0.1",
                   "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z"}],
                   "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0, "image": "nginx",
                                          "imageID": "sha", "started": false,
                                          "state": {"running": {"startedAt": "2023-11-14T22:13:20Z"}}}]},
    })
}

/// Decoding the protobuf of `object` into `K` gives what decoding its JSON gives.
fn assert_typed_round_trip<K: DeserializeOwned + PartialEq + std::fmt::Debug>(object: &Value) {
    let from_json: K = serde_json::from_value(object.clone()).expect("the JSON decodes");
    let from_protobuf: K = from_slice(&to_vec(object).expect("encoded")).expect("the protobuf decodes");
    assert_eq!(from_protobuf, from_json);
}

#[test]
fn typed_decodes_equal_json_decodes() {
    assert_typed_round_trip::<Pod>(&sample_pod());
    assert_typed_round_trip::<ConfigMap>(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c"}, "data": {"k": "v"}, "binaryData": {"b": "AAE="}}));
    assert_typed_round_trip::<Secret>(&json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s"}, "data": {"pw": "aHVudGVyMg=="}, "type": "Opaque"}));
    assert_typed_round_trip::<Service>(
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80, "targetPort": "http", "name": "web"}], "selector": {"app": "web"},
                 "clusterIP": "10.0.0.1", "type": "ClusterIP"}}),
    );
    assert_typed_round_trip::<Node>(
        &json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule", "timeAdded": "2024-01-01T00:00:00Z"}]},
        "status": {"capacity": {"cpu": "4"}, "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}}),
    );
    assert_typed_round_trip::<Deployment>(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "generation": 3},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                 "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}},
        "status": {"replicas": 1, "conditions": [{"type": "Available", "status": "True",
                   "lastUpdateTime": "2024-01-01T00:00:00Z"}]}}));
    assert_typed_round_trip::<Lease>(&json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "l"}, "spec": {"holderIdentity": "", "leaseDurationSeconds": 0,
        "acquireTime": "2024-01-01T00:00:00.123456Z"}}));
    let list = json!({"apiVersion": "v1", "kind": "PodList",
        "metadata": {"resourceVersion": "9", "continue": "next"},
        "items": [sample_pod(), {"metadata": {"name": "q"}}]});
    let from_json: ObjectList<Pod> = serde_json::from_value(list.clone()).expect("the JSON decodes");
    let from_protobuf: ObjectList<Pod> = from_slice(&to_vec(&list).expect("encoded")).expect("decoded");
    assert_eq!(from_protobuf.items, from_json.items);
    assert_eq!(from_protobuf.metadata, from_json.metadata);
}

#[test]
fn metadata_only_objects_and_lists_decode() {
    let object = json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                        "metadata": {"name": "p", "namespace": "n", "labels": {"a": "b"}}});
    let decoded: PartialObjectMeta<Pod> = from_slice(&to_vec(&object).expect("encoded")).expect("decoded");
    assert_eq!(decoded.metadata.labels.expect("labels")["a"], "b");
    let list = json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
                      "metadata": {"resourceVersion": "5"}, "items": [{"metadata": {"name": "p"}}]});
    let decoded: ObjectList<PartialObjectMeta<Pod>> =
        from_slice(&to_vec(&list).expect("encoded")).expect("decoded");
    assert_eq!(decoded.items[0].metadata.name.as_deref(), Some("p"));
}

#[test]
fn statuses_decode() {
    let status = json!({"apiVersion": "v1", "kind": "Status", "status": "Failure", "message": "gone",
                        "reason": "Expired", "code": 410, "metadata": {}});
    let decoded: kube_core::Status = from_slice(&to_vec(&status).expect("encoded")).expect("decoded");
    assert_eq!((decoded.code, decoded.reason.as_str()), (410, "Expired"));
}

#[test]
fn watch_frames_carry_the_event_type_and_the_document() {
    let document = to_vec(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}))
        .expect("encoded");
    let frame = WatchFrame {
        event_type: "ADDED",
        object: &document,
    }
    .encode();
    let length = u32::from_be_bytes(frame[..4].try_into().expect("four bytes")) as usize;
    assert_eq!(length, frame.len() - 4);
    let parsed = WatchFrame::parse(&frame[4..]).expect("parsed");
    assert_eq!(parsed.event_type, "ADDED");
    assert_eq!(
        decode_value(parsed.object).expect("decoded")["metadata"]["name"],
        "a"
    );
    assert!(WatchFrame::parse(&[]).is_err(), "an event without a type");
}

/// Every built-in kind and its list, with every field set, encodes and decodes back.
#[test]
fn every_kind_in_the_table_round_trips() {
    let mut checked = 0;
    for kind in KINDS {
        let api_version = if kind.group.is_empty() {
            kind.version.to_owned()
        } else {
            format!("{}/{}", kind.group, kind.version)
        };
        let mut object = sample(message_at(kind.message), 3);
        object["apiVersion"] = json!(api_version);
        object["kind"] = json!(kind.kind);
        let decoded = decode_value(&to_vec(&object).expect("encoded")).expect("decoded");
        assert_eq!(decoded, object, "{api_version} {}", kind.kind);
        checked += 1;
    }
    assert!(checked > 80, "only {checked} kinds");
    // and every message on its own, through the table directly
    for spec in MESSAGES.iter() {
        let object = sample(spec, 2);
        let bytes = super::encode::encode_message_for_test(&object, spec).expect("encoded");
        let decoded: Value = super::de::Decode::fast_then_careful(&bytes, |decode| {
            serde::Deserialize::deserialize(super::de::MessageDeserializer {
                bytes: &bytes,
                spec,
                type_meta: None,
                decode,
            })
        })
        .unwrap_or_else(|e| panic!("{}: {e}", spec.path));
        assert_eq!(decoded, object, "{}", spec.path);
    }
}

/// Every decoded `Vec` is allocated at its length once (the cache keeps no doubling's room).
#[test]
fn vectors_are_allocated_at_their_length() {
    let mut pod = sample_pod();
    pod["spec"]["containers"][0]["ports"] =
        json!([{"containerPort": 1}, {"containerPort": 2}, {"containerPort": 3}]);
    pod["spec"]["securityContext"] = json!({"supplementalGroups": [1, 2, 3, 4, 5]});
    let decoded: Pod = from_slice(&to_vec(&pod).expect("encoded")).expect("decoded");
    let spec = decoded.spec.expect("spec");
    let ports = spec.containers[0].ports.as_ref().expect("ports");
    assert_eq!((ports.len(), ports.capacity()), (3, 3));
    let groups = spec
        .security_context
        .expect("security context")
        .supplemental_groups
        .expect("groups");
    assert_eq!((groups.len(), groups.capacity()), (5, 5));
}

/// Holds each generated decoder against the serde decoder and the JSON decode of the same
/// object, on a sample of its message with every field set.
#[derive(Default)]
struct AgainstSerde {
    checked: usize,
    /// Types neither reference decodes (the table's form of the message is not the type's).
    unchecked: Vec<&'static str>,
    differences: Vec<String>,
}

impl k8s_protobuf::TypeVisitor for AgainstSerde {
    fn visit<T>(&mut self, message: &'static str)
    where
        T: k8s_protobuf::Decode + DeserializeOwned + PartialEq + std::fmt::Debug + 'static,
    {
        let spec = super::lookup::message(message).unwrap_or_else(|| panic!("{message} is in the table"));
        for depth in [0, 1, 3] {
            let object = sample(spec, depth);
            let bytes = super::encode::encode_message_for_test(&object, spec)
                .unwrap_or_else(|e| panic!("{message} encodes: {e}"));
            let generated: T = k8s_protobuf::decode_message(&bytes)
                .unwrap_or_else(|e| panic!("{message} at depth {depth}: the generated decoder failed: {e}"));
            let by_serde: Result<T, _> = super::de::Decode::fast_then_careful(&bytes, |decode| {
                serde::Deserialize::deserialize(super::de::MessageDeserializer {
                    bytes: &bytes,
                    spec,
                    type_meta: None,
                    decode,
                })
            });
            let by_json: Result<T, _> = serde_json::from_value(object);
            if by_serde.is_err() && by_json.is_err() {
                self.unchecked.push(message);
                return;
            }
            for (reference, decoded) in [("serde", by_serde.ok()), ("JSON", by_json.ok())] {
                if let Some(decoded) = decoded
                    && decoded != generated
                {
                    self.differences.push(format!(
                        "{message} at depth {depth}, against the {reference} decode:\n  generated: {generated:?}\n  {reference}: {decoded:?}"
                    ));
                }
            }
        }
        self.checked += 1;
    }
}

/// Every generated decoder equals the serde decoder and the JSON decode on its message with
/// every field set, nested 0, 1 and 3 messages deep.
#[test]
fn generated_decoders_equal_the_serde_and_json_decodes() {
    let mut against = AgainstSerde::default();
    k8s_protobuf::visit_types(&mut against);
    assert!(
        against.differences.is_empty(),
        "{} differences:\n{}",
        against.differences.len(),
        against.differences.join("\n")
    );
    assert!(against.checked > 600, "only {} types checked", against.checked);
    assert!(
        against.unchecked.is_empty(),
        "no reference decodes these: {:?}",
        against.unchecked
    );
}

/// A pod with every field of its message set, two messages deep, as the server would encode it.
fn full_pod_document() -> Vec<u8> {
    let mut pod = sample(super::lookup::message("api::core::v1::Pod").expect("Pod"), 3);
    pod["apiVersion"] = json!("v1");
    pod["kind"] = json!("Pod");
    to_vec(&pod).expect("encoded")
}

/// Every truncation of a pod document is an error of the generated decoder once the object has
/// begun (its length then runs past the end), and never a panic; a cut before it gives an
/// empty pod, never the whole one. Of the message alone, a cut is an error or a shorter pod.
#[test]
fn truncated_pods_are_errors_of_the_generated_decoder() {
    let document = full_pod_document();
    let full: Pod = k8s_protobuf::decode_document(&document).expect("decoded");
    let message = k8s_protobuf::Envelope::parse(&document).expect("a document").raw;
    let object_starts = document.len() - message.len();
    for end in 0..document.len() {
        // an error, or an empty pod
        if let Ok(pod) = k8s_protobuf::decode_document::<Pod>(&document[..end]) {
            assert!(
                end < object_starts,
                "the document cut at {end} in its object decoded"
            );
            assert_ne!(pod, full, "the document cut at {end} decoded whole");
        }
    }
    let mut errors = 0;
    for end in 0..message.len() {
        match k8s_protobuf::decode_message::<Pod>(&message[..end]) {
            Ok(pod) => assert_ne!(pod, full, "the message cut at {end} decoded whole"),
            Err(_) => errors += 1,
        }
    }
    assert!(
        errors > message.len() / 2,
        "only {errors} of {} cuts are errors",
        message.len()
    );
}

/// Fields a decoder does not know (a newer Kubernetes') are skipped, of every wire type,
/// wherever they are.
#[test]
fn unknown_fields_are_skipped_by_the_generated_decoder() {
    let document = full_pod_document();
    let message = k8s_protobuf::Envelope::parse(&document).expect("a document").raw;
    let known: Pod = k8s_protobuf::decode_message(message).expect("decoded");
    let mut unknown = Vec::new();
    varint_field(90, 7, &mut unknown);
    bytes_field(91, b"a newer field", &mut unknown);
    varint(u64::from(92_u32 << 3 | 1), &mut unknown);
    unknown.extend_from_slice(&1.5_f64.to_le_bytes());
    varint(u64::from(93_u32 << 3 | 5), &mut unknown);
    unknown.extend_from_slice(&[1, 2, 3, 4]);
    // before, between and after the known fields
    let mut with_unknown = unknown.clone();
    with_unknown.extend_from_slice(message);
    with_unknown.extend_from_slice(&unknown);
    assert_eq!(
        k8s_protobuf::decode_message::<Pod>(&with_unknown).expect("decoded"),
        known
    );
}

/// Schemas nested past the decoders' depth are an error, not a stack overflow.
#[test]
fn schemas_nested_too_deep_are_errors() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
    // JSONSchemaProps.not (field 30 in apiextensions v1) holding a schema, 500 deep
    let not =
        super::lookup::message("apiextensions_apiserver::pkg::apis::apiextensions::v1::JsonSchemaProps")
            .and_then(|spec| spec.fields.iter().find(|f| f.json == "not"))
            .expect("JSONSchemaProps.not")
            .tag;
    let mut schema = Vec::new();
    for _ in 0..500 {
        let mut outer = Vec::new();
        bytes_field(not, &schema, &mut outer);
        schema = outer;
    }
    let error = k8s_protobuf::decode_message::<JSONSchemaProps>(&schema).expect_err("too deep");
    assert_eq!(error.kind(), &k8s_protobuf::ErrorKind::TooDeep);
}

mod random_bytes {
    use proptest::prelude::*;

    use super::*;

    fn config() -> ProptestConfig {
        ProptestConfig {
            cases: 512,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    }

    proptest! {
        #![proptest_config(config())]

        /// Random bytes are an error or a pod, never a panic.
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = k8s_protobuf::decode_message::<Pod>(&bytes);
            let _ = k8s_protobuf::decode_message::<Node>(&bytes);
            let _ = k8s_protobuf::decode_message::<
                k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
            >(&bytes);
        }

        /// A real pod with random bytes changed is an error or a pod, never a panic.
        #[test]
        fn damaged_pods_never_panic(changes in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..16)) {
            let document = full_pod_document();
            let mut message = k8s_protobuf::Envelope::parse(&document).expect("a document").raw.to_vec();
            for (at, byte) in changes {
                let at = at % message.len();
                message[at] = byte;
            }
            let _ = k8s_protobuf::decode_message::<Pod>(&message);
        }
    }
}

/// Where an error was found, as `(offset, path)`.
fn location(err: &Error) -> (usize, String) {
    let (offset, path) = err.location().unwrap_or_else(|| panic!("no location in {err}"));
    (offset, path.to_string())
}

/// The offset in `document` of its object's message (the envelope's last field).
fn raw_start(document: &[u8], raw: &[u8]) -> usize {
    document.len() - raw.len()
}

#[test]
fn a_malformed_field_names_its_path_and_offset() {
    // ConfigMap{metadata{name: a varint}}: the name's key is the third byte of the message
    let mut wrong = Vec::new();
    varint_field(1, 7, &mut wrong);
    let mut cm = Vec::new();
    bytes_field(1, &wrong, &mut cm);
    let document = envelope("v1", "ConfigMap", &cm);
    let err = decode_value(&document).expect_err("a string field holding a varint");
    assert!(matches!(err.cause(), Error::Malformed(_)), "{err}");
    assert_eq!(
        location(&err),
        (raw_start(&document, &cm) + 2, "metadata.name".to_owned())
    );
    let segments: Vec<&Segment> = err.location().expect("a location").1.segments().collect();
    assert_eq!(
        segments,
        [
            &Segment::Field {
                message: "api::core::v1::ConfigMap",
                field: "metadata"
            },
            &Segment::Field {
                message: "apimachinery::pkg::apis::meta::v1::ObjectMeta",
                field: "name"
            },
        ]
    );
    let shown = err.to_string();
    assert!(
        shown.starts_with("failed to decode protobuf: ")
            && shown.ends_with(&format!(
                "(at byte {}, in metadata.name)",
                raw_start(&document, &cm) + 2
            )),
        "{shown}"
    );
}

#[test]
fn an_error_in_a_list_names_the_element() {
    // Pod{spec{containers: [{name: "a"}, {name: "b", image: a varint}]}}
    let mut first = Vec::new();
    bytes_field(1, b"a", &mut first);
    let mut second = Vec::new();
    bytes_field(1, b"b", &mut second);
    varint_field(2, 1, &mut second);
    let mut spec = Vec::new();
    bytes_field(2, &first, &mut spec);
    bytes_field(2, &second, &mut spec);
    let mut pod = Vec::new();
    bytes_field(2, &spec, &mut pod);
    let document = envelope("v1", "Pod", &pod);
    for err in [
        decode_value(&document).expect_err("an image holding a varint"),
        from_slice::<Pod>(&document).expect_err("an image holding a varint"),
    ] {
        // the second container's image: past the spec's key and length, the first container
        // (its key, length and 3 bytes), the second's key and length, and its name (3 bytes)
        let image = raw_start(&document, &pod) + 2 + 5 + 2 + 3;
        assert_eq!(
            location(&err),
            (image, "spec.containers[1].image".to_owned()),
            "{err}"
        );
    }
}

#[test]
fn an_error_in_a_map_names_the_key() {
    // ConfigMap{data: {"k": not UTF-8}}
    let mut cm = Vec::new();
    map_entry(2, "k", &[0xff], &mut cm);
    let document = envelope("v1", "ConfigMap", &cm);
    let err = from_slice::<ConfigMap>(&document).expect_err("a value that is not UTF-8");
    assert_eq!(
        location(&err),
        (raw_start(&document, &cm), "data[\"k\"]".to_owned())
    );
}

#[test]
fn a_value_that_does_not_fit_its_type_names_the_value() {
    // Status{message = 3, code = 6}: a code past u16
    let mut status = Vec::new();
    bytes_field(3, b"gone", &mut status);
    varint_field(6, 70_000, &mut status);
    let document = envelope("v1", "Status", &status);
    let err = from_slice::<kube_core::Status>(&document).expect_err("a code past u16");
    assert!(
        matches!(err.cause(), Error::Type(message) if message.contains("70000")),
        "{err}"
    );
    assert_eq!(
        location(&err),
        (raw_start(&document, &status) + 6, "code".to_owned())
    );
    // a type error of the object itself is not inside any field
    let err = from_slice::<Pod>(&envelope("v1", "ConfigMap", &[])).expect_err("a config map");
    assert!(matches!(err, Error::Type(_)) && err.location().is_none(), "{err}");
}

#[test]
fn decodes_inside_a_decode_keep_their_own_mode() {
    // a scattered list (read carefully) in a document decoded while a fast decode runs on
    // another document: each decode's mode is its own
    let mut meta = Vec::new();
    bytes_field(1, b"c", &mut meta);
    map_entry(11, "a", b"1", &mut meta);
    bytes_field(3, b"default", &mut meta);
    map_entry(11, "b", b"2", &mut meta);
    let mut cm = Vec::new();
    bytes_field(1, &meta, &mut cm);
    let scattered = envelope("v1", "ConfigMap", &cm);
    let plain = to_vec(&sample_pod()).expect("encoded");
    let both = std::thread::scope(|scope| {
        let pods = scope.spawn(|| (0..50).all(|_| from_slice::<Pod>(&plain).is_ok()));
        let maps = (0..50).all(|_| {
            from_slice::<ConfigMap>(&scattered)
                .is_ok_and(|cm| cm.metadata.labels.is_some_and(|labels| labels.len() == 2))
        });
        pods.join().is_ok_and(|pods| pods) && maps
    });
    assert!(both);
}
