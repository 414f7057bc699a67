//! The write verbs' semantics on a state without HTTP: server-set metadata, conflicts,
//! generation, status, finalizers, preconditions and patches.

use serde_json::{Value, json};

use crate::admission::context::WriteContext;
use crate::admission::field_ownership::Writer;
use crate::registry::builtin_types;
use crate::registry::{Registry, ResourceType};
use crate::storage::state::{State, UpdateMode};
use crate::write::patch_document::PatchType;
use crate::write::session::WriteSession;

/// A state with the namespace `ns` and its `default` ServiceAccount (revisions 1 and 2).
fn state() -> State {
    let mut s = State::new(Registry::with_types(builtin_types()), 100);
    crate::admission::namespace_lifecycle::create_test_namespace(&mut s, "ns");
    s
}

fn pods() -> ResourceType {
    ResourceType::new("", "v1", "Pod", "pods", true).with_status_subresource(true)
}

#[test]
fn create_sets_server_metadata() {
    let mut s = state();
    let pod = s
        .write()
        .create(
            &pods(),
            Some("ns"),
            json!({"metadata": {"generateName": "web-"}, "spec": {}}),
        )
        .expect("created");
    let meta = &pod["metadata"];
    assert!(
        meta["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("web-") && n.len() == 9)
    );
    assert_eq!(meta["namespace"], "ns");
    assert_eq!(meta["generation"], 1);
    assert_eq!(meta["resourceVersion"], "3");
    assert_eq!(meta["uid"].as_str().map(str::len), Some(36));
    assert!(
        meta["creationTimestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z') && t.len() == 20)
    );
    assert_eq!(
        (pod["kind"].as_str(), pod["apiVersion"].as_str()),
        (Some("Pod"), Some("v1"))
    );
    let err = s
        .write()
        .create(&pods(), Some("ns"), json!({"metadata": {}}))
        .expect_err("no name");
    assert_eq!(err.code, 422);
    let err = s
        .write()
        .create(
            &pods(),
            Some("ns"),
            json!({"metadata": {"name": "x", "namespace": "other"}}),
        )
        .expect_err("namespace mismatch");
    assert_eq!(err.code, 400);
}

#[test]
fn update_conflicts_generation_and_status() {
    let mut s = state();
    let pod = s
        .write()
        .create(
            &pods(),
            Some("ns"),
            json!({"metadata": {"name": "p"}, "spec": {"a": 1}}),
        )
        .expect("created");
    let mut changed = pod.clone();
    changed["metadata"]["labels"] = json!({"x": "y"});
    changed["status"] = json!({"phase": "Running"});
    let updated = s
        .write()
        .update(&pods(), Some("ns"), "p", changed, UpdateMode::Main)
        .expect("updated");
    assert_eq!(updated["metadata"]["generation"], 1);
    assert_eq!(
        updated["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"}),
        "status is kept from the old object"
    );
    let err = s
        .write()
        .update(&pods(), Some("ns"), "p", pod.clone(), UpdateMode::Main)
        .expect_err("stale");
    assert_eq!(err.code, 409);
    let mut spec = updated.clone();
    spec["spec"]["a"] = json!(2);
    let updated = s
        .write()
        .update(&pods(), Some("ns"), "p", spec, UpdateMode::Main)
        .expect("updated");
    assert_eq!(updated["metadata"]["generation"], 2);
    let same = s
        .write()
        .update(&pods(), Some("ns"), "p", updated.clone(), UpdateMode::Main)
        .expect("no-op");
    assert_eq!(
        same["metadata"]["resourceVersion"],
        updated["metadata"]["resourceVersion"]
    );
    let mut renamed = updated;
    renamed["metadata"]["name"] = json!("q");
    assert_eq!(
        s.write()
            .update(&pods(), Some("ns"), "p", renamed, UpdateMode::Main)
            .map_err(|e| e.code)
            .err(),
        Some(400)
    );
}

/// kube-apiserver reads a written object into its Go type and stores it in protobuf: an empty
/// map or list, or a zero value of an `omitempty` field, is in none of its answers, and a write
/// that only adds them is no change (no new revision). Custom resources keep what they were
/// written with.
#[test]
fn built_in_objects_are_stored_without_what_go_types_leave_out() {
    let mut s = state();
    let pod = s
        .write()
        .create(
            &pods(),
            Some("ns"),
            json!({"metadata": {"name": "p", "annotations": {"poison": "transform"}, "finalizers": []},
                   "spec": {"nodeName": "", "containers": [{"name": "c", "resources": {}}]}}),
        )
        .expect("created");
    assert_eq!(pod["metadata"].get("finalizers"), None);
    assert_eq!(pod["spec"].get("nodeName"), None);
    assert_eq!(
        pod["spec"]["containers"][0]["resources"],
        json!({}),
        "an empty struct stays, as Go's JSON shows it"
    );
    let mut cured = pod;
    cured["metadata"]["annotations"] = json!({});
    let stored = s
        .write()
        .update(&pods(), Some("ns"), "p", cured, UpdateMode::Main)
        .expect("updated");
    assert_eq!(stored["metadata"].get("annotations"), None);
    assert_eq!(s.get(&pods(), Some("ns"), "p").expect("stored"), stored);

    let mut same = stored.clone();
    same["metadata"]["labels"] = json!({});
    same["spec"]["hostNetwork"] = json!(false);
    let unchanged = s
        .write()
        .update(&pods(), Some("ns"), "p", same, UpdateMode::Main)
        .expect("no change");
    assert_eq!(
        unchanged, stored,
        "nothing Go's type keeps changed: same object, same revision"
    );

    let widgets = ResourceType::new("example.com", "v1", "Widget", "widgets", true);
    let widget = s
        .write()
        .create(
            &widgets,
            Some("ns"),
            json!({"metadata": {"name": "w", "annotations": {}}, "spec": {"items": []}}),
        )
        .expect("created");
    assert_eq!(
        (&widget["metadata"]["annotations"], &widget["spec"]),
        (&json!({}), &json!({"items": []}))
    );
}

#[test]
fn finalizers_delay_deletion() {
    let mut s = state();
    s.write()
        .create(
            &pods(),
            Some("ns"),
            json!({"metadata": {"name": "p", "finalizers": ["x"]}}),
        )
        .expect("created");
    let terminating = s
        .write()
        .delete(&pods(), Some("ns"), "p", &Value::Null)
        .expect("marked");
    assert!(terminating["metadata"]["deletionTimestamp"].is_string());
    // kube-apiserver's updateForGracefulDeletionAndFinalizers raises the generation
    assert_eq!(terminating["metadata"]["generation"], 2);
    let mut done = terminating;
    done["metadata"]["finalizers"] = json!([]);
    s.write()
        .update(&pods(), Some("ns"), "p", done, UpdateMode::Main)
        .expect("finalized");
    assert_eq!(
        s.get(&pods(), Some("ns"), "p").map_err(|e| e.code).err(),
        Some(404)
    );
}

#[test]
fn delete_preconditions() {
    let mut s = state();
    s.write()
        .create(&pods(), Some("ns"), json!({"metadata": {"name": "p"}}))
        .expect("created");
    let err = s
        .write()
        .delete(
            &pods(),
            Some("ns"),
            "p",
            &json!({"preconditions": {"resourceVersion": "7"}}),
        )
        .expect_err("precondition");
    assert_eq!(err.code, 409);
    s.write()
        .delete(
            &pods(),
            Some("ns"),
            "p",
            &json!({"preconditions": {"resourceVersion": "3"}}),
        )
        .expect("deleted");
}

#[test]
fn patches() {
    let mut s = state();
    s.write()
        .create(
            &pods(),
            Some("ns"),
            json!({"metadata": {"name": "p"}, "spec": {"a": 1}}),
        )
        .expect("created");
    let (patched, created) = s
        .write()
        .patch(
            &pods(),
            Some("ns"),
            "p",
            PatchType::Merge,
            &json!({"metadata": {"labels": {"l": "v"}}}),
            false,
        )
        .expect("patched");
    assert!(!created);
    assert_eq!(patched["metadata"]["labels"]["l"], "v");
    let (patched, _) = s
        .write()
        .patch(
            &pods(),
            Some("ns"),
            "p",
            PatchType::Merge,
            &json!({"status": {"phase": "Running"}}),
            true,
        )
        .expect("status patched");
    assert_eq!(patched["status"]["phase"], "Running");
    let writer = Writer {
        manager: "test".into(),
        api_version: "v1".into(),
        subresource: None,
    };
    let apply = json!({"spec": {}});
    let context = WriteContext {
        field_manager: Some(writer),
        ..WriteContext::default()
    };
    let (applied, created) = WriteSession::new(&mut s, context)
        .patch(&pods(), Some("ns"), "new", PatchType::Apply, &apply, false)
        .expect("applied");
    assert!(created);
    assert_eq!(applied["metadata"]["managedFields"][0]["manager"], "test");
    let unnamed = s
        .write()
        .patch(&pods(), Some("ns"), "other", PatchType::Apply, &apply, false)
        .expect_err("an apply needs a field manager");
    assert_eq!(unnamed.code, 422);
    let stale = json!({"metadata": {"resourceVersion": "1"}, "spec": {"a": 3}});
    let err = s
        .write()
        .patch(&pods(), Some("ns"), "p", PatchType::Merge, &stale, false)
        .expect_err("stale");
    assert_eq!(err.code, 409);
}

/// Defaults and admission read bodies of any shape: a built-in object with fields of the wrong
/// JSON type is written or refused, never a panic, and keeps the malformed values as they were.
#[test]
fn malformed_built_in_bodies_never_panic_in_defaults_or_admission() {
    let mut s = state();
    let wrong_shapes = [
        json!("text"),
        json!(7),
        json!([1, "a", null]),
        json!({"x": [true]}),
        json!(null),
    ];
    let kinds = builtin_types();
    let mut written = 0;
    for rt in kinds.iter().filter(|rt| rt.namespaced) {
        for (index, shape) in wrong_shapes.iter().enumerate() {
            for body in [
                json!({"spec": shape}),
                json!({"spec": {"containers": shape, "ports": shape, "template": shape,
                    "volumes": [shape], "tolerations": shape, "strategy": shape, "type": shape}}),
                json!({"spec": {"containers": [{"name": "c", "ports": [shape], "resources": {"limits": shape},
                    "volumeMounts": shape, "livenessProbe": shape, "env": [{"valueFrom": shape}]}],
                    "jobTemplate": {"spec": shape}, "updateStrategy": {"type": shape}}}),
                json!({"spec": {"type": "NodePort", "ports": [shape], "hostNetwork": true,
                    "containers": [{"ports": [shape]}, shape], "sessionAffinity": "ClientIP"}}),
            ] {
                let mut body = body;
                body["metadata"] = json!({"name": format!("m-{index}-{written}")});
                if s.write().create(rt, Some("ns"), body.clone()).is_ok() {
                    written += 1;
                }
            }
        }
    }
    assert!(written > 0, "some malformed bodies are stored as they are");
}
