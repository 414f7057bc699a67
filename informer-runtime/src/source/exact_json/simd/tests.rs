use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{
        Container, ContainerPort, ContainerStatus, EnvVar, Pod, PodCondition, PodSpec, PodStatus, Probe,
        ResourceRequirements, TCPSocketAction, Toleration, Volume, VolumeMount,
    },
    apimachinery::pkg::{
        api::resource::Quantity,
        apis::meta::v1::{ManagedFieldsEntry, ObjectMeta, OwnerReference, Time},
        util::intstr::IntOrString,
    },
    jiff::Timestamp,
};
use kube::core::{DynamicObject, ObjectList, WatchEvent};
use serde::de::DeserializeOwned;

use super::from_slice;

/// Decodes `text` with simd-json and with serde_json; both must succeed with the same value
/// (compared by their debug forms: kube's lists and events have no `PartialEq`; the form shows
/// every field, floats to their last bit).
fn both<T: DeserializeOwned + std::fmt::Debug>(text: &str) -> T {
    let plain: T = serde_json::from_str(text).unwrap_or_else(|err| panic!("serde_json: {err}: {text}"));
    let simd: T = from_slice(text.as_bytes()).unwrap_or_else(|err| panic!("simd-json: {err}: {text}"));
    assert_eq!(format!("{simd:?}"), format!("{plain:?}"), "{text}");
    simd
}

/// A pod the way a cluster returns one: several containers with env, resources, probes and
/// ports, volumes, tolerations, owner references, managedFields, status with container
/// statuses; `index` varies names, counts and values.
fn realistic_pod(index: usize) -> Pod {
    let name = format!("web-{index}-7d9f8b6c5d-x{index:04}");
    let containers: Vec<Container> = (0..1 + index % 3)
        .map(|c| Container {
            name: format!("c{c}"),
            image: Some(format!("registry.example.com/team/app:v1.{index}.{c}")),
            args: Some(vec![
                "--port=8080".into(),
                format!("--shard={index}"),
                "--log=\"json\"".into(),
            ]),
            env: Some(
                (0..3 + c)
                    .map(|e| EnvVar {
                        name: format!("VAR_{e}"),
                        value: Some(format!("value {e} with spaces, commas [brackets] and \\ slashes")),
                        ..EnvVar::default()
                    })
                    .collect(),
            ),
            ports: Some(vec![ContainerPort {
                container_port: 8080 + i32::try_from(c).expect("small"),
                name: Some("http".into()),
                protocol: Some("TCP".into()),
                ..ContainerPort::default()
            }]),
            resources: Some(ResourceRequirements {
                requests: Some(BTreeMap::from([
                    ("cpu".into(), Quantity("250m".into())),
                    ("memory".into(), Quantity("128Mi".into())),
                ])),
                limits: Some(BTreeMap::from([("memory".into(), Quantity("1Gi".into()))])),
                ..ResourceRequirements::default()
            }),
            readiness_probe: Some(Probe {
                tcp_socket: Some(TCPSocketAction {
                    port: if c.is_multiple_of(2) {
                        IntOrString::Int(8080)
                    } else {
                        IntOrString::String("http".into())
                    },
                    ..TCPSocketAction::default()
                }),
                period_seconds: Some(10),
                ..Probe::default()
            }),
            volume_mounts: Some(vec![VolumeMount {
                name: "data".into(),
                mount_path: "/var/lib/data".into(),
                read_only: Some(true),
                ..VolumeMount::default()
            }]),
            ..Container::default()
        })
        .collect();
    let time =
        Time(Timestamp::from_second(1_700_000_000 + i64::try_from(index).expect("small")).expect("a time"));
    let statuses = containers
        .iter()
        .map(|container| ContainerStatus {
            name: container.name.clone(),
            image: container.image.clone().unwrap_or_default(),
            image_id: format!("sha256:{index:064x}"),
            ready: index.is_multiple_of(2),
            restart_count: i32::try_from(index % 7).expect("small"),
            started: Some(true),
            ..ContainerStatus::default()
        })
        .collect();
    let conditions = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    .into_iter()
    .map(|kind| PodCondition {
        type_: kind.into(),
        status: "True".into(),
        last_transition_time: Some(time.clone()),
        ..PodCondition::default()
    })
    .collect();
    Pod {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(format!("ns-{}", index % 10)),
            uid: Some(format!("{index:08x}-1b2c-4d5e-8f90-a1b2c3d4e5f6")),
            resource_version: Some((1_000_000 + index).to_string()),
            generation: Some(i64::try_from(index).expect("small")),
            creation_timestamp: Some(time.clone()),
            labels: Some(BTreeMap::from([
                ("app".into(), "web".into()),
                ("pod-template-hash".into(), "7d9f8b6c5d".into()),
            ])),
            annotations: Some(BTreeMap::from([(
                "kubectl.kubernetes.io/last-applied-configuration".into(),
                format!(
                    "{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"name\":\"web-{index}\"}}}}\n"
                ),
            )])),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "ReplicaSet".into(),
                name: "web-7d9f8b6c5d".into(),
                uid: "0f0e0d0c-0b0a-0908-0706-050403020100".into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            managed_fields: Some(vec![ManagedFieldsEntry {
                manager: Some("kube-controller-manager".into()),
                operation: Some("Update".into()),
                api_version: Some("v1".into()),
                time: Some(time.clone()),
                fields_type: Some("FieldsV1".into()),
                fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
                    serde_json::json!({
                        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                        "f:spec": {"f:containers": {"k:{\"name\":\"c0\"}": {".": {}, "f:image": {}}}}
                    }),
                )),
                ..ManagedFieldsEntry::default()
            }]),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers,
            node_name: Some(format!("node-{}", index % 5)),
            termination_grace_period_seconds: Some(30),
            tolerations: Some(vec![Toleration {
                key: Some("node.kubernetes.io/not-ready".into()),
                operator: Some("Exists".into()),
                effect: Some("NoExecute".into()),
                toleration_seconds: Some(300),
                ..Toleration::default()
            }]),
            volumes: Some(vec![Volume {
                name: "data".into(),
                ..Volume::default()
            }]),
            ..PodSpec::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            pod_ip: Some(format!("10.0.{}.{}", index / 250, index % 250)),
            start_time: Some(time),
            conditions: Some(conditions),
            container_statuses: Some(statuses),
            ..PodStatus::default()
        }),
    }
}

/// Every vector of `pod` checked for spare room: (what, capacity, length).
fn vector_capacities(pod: &Pod) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let mut check = |what: &str, capacity: usize, len: usize| out.push((what.to_owned(), capacity, len));
    let spec = pod.spec.as_ref().expect("spec");
    check("containers", spec.containers.capacity(), spec.containers.len());
    for container in &spec.containers {
        let env = container.env.as_ref().expect("env");
        check("env", env.capacity(), env.len());
        let args = container.args.as_ref().expect("args");
        check("args", args.capacity(), args.len());
    }
    let status = pod.status.as_ref().expect("status");
    let conditions = status.conditions.as_ref().expect("conditions");
    check("conditions", conditions.capacity(), conditions.len());
    let statuses = status.container_statuses.as_ref().expect("containerStatuses");
    check("containerStatuses", statuses.capacity(), statuses.len());
    out
}

#[test]
fn realistic_pods_decode_as_with_serde_json_with_every_vector_at_its_exact_capacity() {
    for index in 0..12 {
        let pod = realistic_pod(index);
        for text in [
            serde_json::to_string(&pod).expect("serializes"),
            serde_json::to_string_pretty(&pod).expect("serializes"),
        ] {
            let decoded: Pod = both(&text);
            assert_eq!(decoded, pod);
            for (what, capacity, len) in vector_capacities(&decoded) {
                assert_eq!(capacity, len, "{what} of pod {index}");
            }
        }
    }
}

#[test]
fn watch_events_and_lists_of_realistic_pods_decode_as_with_serde_json() {
    let pods: Vec<Pod> = (0..20).map(realistic_pod).collect();
    for (kind, pod) in ["ADDED", "MODIFIED", "DELETED"].into_iter().zip(&pods) {
        let line = serde_json::json!({"type": kind, "object": pod}).to_string();
        let _: WatchEvent<Pod> = both(&line);
    }
    let bookmark = r#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12345","annotations":{"k8s.io/initial-events-end":"true"}}}}"#;
    let _: WatchEvent<Pod> = both(bookmark);
    let list = serde_json::json!({
        "apiVersion": "v1", "kind": "PodList",
        "metadata": {"resourceVersion": "1000020", "continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"},
        "items": pods,
    })
    .to_string();
    let list: ObjectList<Pod> = both(&list);
    assert_eq!((list.items.capacity(), list.items.len()), (20, 20));
}

#[test]
fn unicode_and_escapes_decode_as_with_serde_json() {
    let text = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"caf\u00e9-日本-😀",
        "labels":{"k\"ey":"v\\al\/ue"},
        "annotations":{"escapes":"\b\f\n\r\t\"\\\/","pair":"\ud83d\ude00 = 😀","nul":"a\u0000b",
            "mixed":"Ünïcödé \u65e5\u672c and raw Ελληνικά","long":"\u0041\u0042\u0043 past the first sixty-four bytes of a string \u00e9"}}}"#;
    let pod: Pod = both(text);
    let annotations = pod.metadata.annotations.expect("annotations");
    assert_eq!(annotations["pair"], "😀 = 😀");
    assert_eq!(annotations["nul"], "a\0b");
    assert_eq!(pod.metadata.name.as_deref(), Some("café-日本-😀"));
}

#[test]
fn numbers_decode_as_with_serde_json() {
    // Numbers a custom resource may hold, through `DynamicObject` (a `serde_json::Value`).
    let numbers = [
        "0",
        "1",
        "-1",
        "9007199254740993",
        "18446744073709551615",
        "-9223372036854775808",
        "9223372036854775807",
        "18446744073709551616",
        "123456789012345678901234567890",
        "0.1",
        "-2.5e-3",
        "1.7976931348623157e308",
        "5e-324",
        "1e-400",
        "2.2250738585072014e-308",
        "3.141592653589793",
        "1E+2",
        "1e0",
    ];
    for number in numbers {
        let text = format!(
            r#"{{"apiVersion":"example.com/v1","kind":"Thing","metadata":{{"name":"n"}},"spec":{{"value":{number},"list":[{number}]}}}}"#
        );
        let _: DynamicObject = both(&text);
    }
    let pod: Pod = both(r#"{"spec":{"containers":[],"terminationGracePeriodSeconds":9223372036854775807}}"#);
    assert_eq!(
        pod.spec.and_then(|s| s.termination_grace_period_seconds),
        Some(i64::MAX)
    );
}

/// The one number seen to differ: `-0` is the integer 0 for simd-json and the float -0.0 for
/// serde_json (equal as numbers), so simd-json accepts it in an integer field where serde_json
/// refuses a float. Go's encoder never writes `-0` for an integer.
#[test]
fn minus_zero_is_the_integer_zero() {
    let simd: serde_json::Value = from_slice(b"[-0]").expect("decodes");
    let plain: serde_json::Value = serde_json::from_slice(b"[-0]").expect("decodes");
    assert_eq!(simd[0].as_f64(), plain[0].as_f64());
    assert_eq!(simd[0].as_i64(), Some(0));
    let text = br#"{"metadata":{"generation":-0}}"#;
    let pod: Pod = from_slice(text).expect("simd-json takes -0 as 0");
    assert_eq!(pod.metadata.generation, Some(0));
    serde_json::from_slice::<Pod>(text).expect_err("serde_json takes -0 as a float");
}

#[test]
fn malformed_or_mistyped_text_is_an_error_for_both() {
    let deep = format!(r#"{{"spec":{}{}}}"#, "[".repeat(200), "]".repeat(200));
    let texts: Vec<&[u8]> = vec![
        b"",
        b"   ",
        b"{",
        br#"{"metadata":{"name":"a"}"#,
        br#"{"metadata":{"name":"a"}} trailing"#,
        br#"{"metadata":{"name":"a"}} {}"#,
        br#"{"spec":{"containers":[{"name":"a"},]}}"#,
        br#"{"metadata":{"name":"a",}}"#,
        br#"{"spec":{"containers":[{"name":1}]}}"#,
        br#"{"spec":{"containers":"none"}}"#,
        br#"{"metadata":{"generation":1.5}}"#,
        br#"{"metadata":{"generation":9223372036854775808}}"#,
        br#"{"metadata":{"generation":01}}"#,
        br#"{"metadata":{"generation":+1}}"#,
        br#"{"metadata":{"generation":NaN}}"#,
        br#"{"metadata":{"name":"unterminated}}"#,
        br#"{"metadata":{"name":"bad \x escape"}}"#,
        br#"{"metadata":{"name":"bad \u12 escape"}}"#,
        br#"{"metadata":{"name":"lone \ud800 surrogate"}}"#,
        br#"{"metadata":{"name":"lone \udc00 low surrogate"}}"#,
        b"{\"metadata\":{\"name\":\"raw\ncontrol\"}}",
        b"{\"metadata\":{\"name\":\"\xff\xfe not UTF-8\"}}",
        b"{\"metadata\":{\"name\":\"\xe6\x97 cut UTF-8\"}}",
        b"\xef\xbb\xbf{}",
        deep.as_bytes(),
    ];
    for text in texts {
        let plain = serde_json::from_slice::<Pod>(text);
        let simd = from_slice::<Pod>(text);
        assert!(
            plain.is_err() && simd.is_err(),
            "{}: serde_json {plain:?}, simd-json {simd:?}",
            String::from_utf8_lossy(text)
        );
    }
}

/// Random cuts and byte changes of a realistic watch line: never a panic, and whatever both
/// decoders accept decodes alike.
#[test]
fn damaged_text_never_panics() {
    let line = serde_json::json!({"type": "MODIFIED", "object": realistic_pod(3)}).to_string();
    let mut rng = fastrand::Rng::with_seed(11);
    for _ in 0..3000 {
        let mut text = line.as_bytes().to_vec();
        match rng.u8(0..3) {
            0 => text.truncate(rng.usize(..text.len())),
            1 => {
                let at = rng.usize(..text.len());
                text[at] = *rng.choice(b"{}[]\",:\\0a\xc3\xa9\xff ".iter()).expect("a byte");
            }
            _ => {
                let at = rng.usize(..text.len());
                text.remove(at);
            }
        }
        let plain = serde_json::from_slice::<WatchEvent<Pod>>(&text);
        let simd = from_slice::<WatchEvent<Pod>>(&text);
        if let (Ok(plain), Ok(simd)) = (plain, simd) {
            assert_eq!(
                format!("{simd:?}"),
                format!("{plain:?}"),
                "{}",
                String::from_utf8_lossy(&text)
            );
        }
    }
}
