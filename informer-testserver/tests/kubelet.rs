//! The simulated kubelet and scheduler, through a `kube::Client`: nodes, scheduling, the pod
//! lifecycle, stages, graceful deletion, logs and exec.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use informer_testserver::TestServer;
use informer_testserver::kubelet::{ExecOutput, Kubelet, KubeletError, PodMatch, Stage};
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams, WatchEvent, WatchParams};
use serde_json::{Value, json};

/// How long a test waits for what the kubelet does before failing.
const PATIENCE: Duration = Duration::from_secs(10);

async fn server(nodes: usize) -> TestServer {
    TestServer::builder()
        .kubelet(Kubelet::with_nodes(nodes))
        .start()
        .await
        .expect("server starts")
}

fn pod(name: &str, spec: Value) -> Pod {
    let mut spec = spec;
    if spec["containers"].is_null() {
        spec["containers"] = json!([{"name": "app", "image": "busybox:1.36"}]);
    }
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"app": name}}, "spec": spec}))
        .expect("valid pod")
}

/// Watches `name` until `done` holds for it (checking the current object first); the pod as
/// it then was.
async fn await_pod(pods: &Api<Pod>, name: &str, what: &str, done: impl Fn(&Pod) -> bool) -> Pod {
    let wait = async {
        let current = pods.get(name).await.expect("pod readable");
        if done(&current) {
            return current;
        }
        let rv = current.metadata.resource_version.clone().unwrap_or_default();
        let params = WatchParams::default().fields(&format!("metadata.name={name}"));
        let mut events = pods.watch(&params, &rv).await.expect("watch opens").boxed();
        while let Some(event) = events.try_next().await.expect("watch event") {
            if let WatchEvent::Added(pod) | WatchEvent::Modified(pod) = event
                && done(&pod)
            {
                return pod;
            }
        }
        panic!("the watch of {name} ended before {what}");
    };
    tokio::time::timeout(PATIENCE, wait)
        .await
        .unwrap_or_else(|_| panic!("{name}: {what} did not happen"))
}

fn condition(pod: &Pod, kind: &str) -> Option<(String, Option<String>, Option<String>)> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

fn is_ready(pod: &Pod) -> bool {
    condition(pod, "Ready").is_some_and(|(status, _, _)| status == "True")
}

#[tokio::test]
async fn nodes_register_ready() {
    let server = server(2).await;
    let nodes: Api<Node> = Api::all(server.client().expect("client"));
    let list = nodes.list(&ListParams::default()).await.expect("list nodes");
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    assert_eq!(names, ["node-1", "node-2"]);
    for node in &list.items {
        let status = node.status.as_ref().expect("status");
        let conditions = status.conditions.as_ref().expect("conditions");
        let ready = conditions.iter().find(|c| c.type_ == "Ready").expect("Ready");
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_deref()),
            ("True", Some("KubeletReady"))
        );
        for pressure in ["MemoryPressure", "DiskPressure", "PIDPressure"] {
            let c = conditions.iter().find(|c| c.type_ == pressure).expect(pressure);
            assert_eq!(c.status, "False", "{pressure}");
        }
        let allocatable = status.allocatable.as_ref().expect("allocatable");
        assert!(allocatable.contains_key("cpu") && allocatable.contains_key("memory"));
        assert_eq!(allocatable["pods"].0, "110");
        let addresses: Vec<_> = status
            .addresses
            .iter()
            .flatten()
            .map(|a| a.type_.as_str())
            .collect();
        assert_eq!(addresses, ["InternalIP", "Hostname"]);
        let port = status
            .daemon_endpoints
            .as_ref()
            .and_then(|d| d.kubelet_endpoint.as_ref())
            .map(|e| e.port);
        assert_eq!(port, Some(10250));
        assert!(
            status
                .node_info
                .as_ref()
                .is_some_and(|i| i.kubelet_version.starts_with('v'))
        );
        let labels = node.metadata.labels.as_ref().expect("labels");
        assert_eq!(labels["kubernetes.io/os"], "linux");
        assert_eq!(
            labels["kubernetes.io/hostname"],
            *node.metadata.name.as_ref().expect("name")
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn node_leases_are_renewed_and_created_again_when_deleted() {
    use k8s_openapi::api::coordination::v1::Lease;

    let server = TestServer::builder()
        .kubelet(Kubelet::with_nodes(2).lease_renewal(Duration::from_millis(100)))
        .start()
        .await
        .expect("server starts");
    let leases: Api<Lease> = Api::namespaced(server.client().expect("client"), "kube-node-lease");
    let renew_time = |lease: &Lease| lease.spec.as_ref().and_then(|s| s.renew_time.clone());
    let first = leases.get("node-1").await.expect("node-1 has a lease");
    let renewed = async {
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let now = leases.get("node-1").await.expect("node-1 has a lease");
            if renew_time(&now) > renew_time(&first) {
                return now;
            }
        }
    };
    let renewed = tokio::time::timeout(PATIENCE, renewed)
        .await
        .expect("the lease of node-1 is renewed");
    assert_eq!(
        renewed.spec.as_ref().and_then(|s| s.holder_identity.as_deref()),
        Some("node-1")
    );
    leases
        .delete("node-2", &DeleteParams::default())
        .await
        .expect("deleted");
    let recreated = async {
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if let Some(lease) = leases.get_opt("node-2").await.expect("readable") {
                return lease;
            }
        }
    };
    let recreated = tokio::time::timeout(PATIENCE, recreated)
        .await
        .expect("the lease of node-2 is created again");
    let owner = recreated.metadata.owner_references.unwrap_or_default();
    assert_eq!(owner.first().map(|o| o.name.as_str()), Some("node-2"));
    assert!(!owner[0].uid.is_empty(), "owned by the node's uid");
    assert!(server.kubelet().expect("a kubelet").errors().is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn a_pod_is_scheduled_and_becomes_running_and_ready() {
    let server = server(2).await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.create(&PostParams::default(), &pod("web", json!({})))
        .await
        .expect("create");
    let ready = await_pod(&pods, "web", "Ready", is_ready).await;
    let spec = ready.spec.as_ref().expect("spec");
    assert!(spec.node_name.as_deref().is_some_and(|n| n.starts_with("node-")));
    let status = ready.status.as_ref().expect("status");
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert!(status.host_ip.is_some() && status.start_time.is_some());
    assert_eq!(status.qos_class.as_deref(), Some("BestEffort"));
    for kind in [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ] {
        let (state, _, _) = condition(&ready, kind).unwrap_or_else(|| panic!("{kind}"));
        assert_eq!(state, "True", "{kind}");
    }
    let container = &status.container_statuses.as_ref().expect("container statuses")[0];
    assert!(container.ready && container.started == Some(true));
    assert_eq!(container.restart_count, 0);
    assert!(
        container
            .container_id
            .as_deref()
            .is_some_and(|id| id.starts_with("containerd://"))
    );
    assert!(
        container
            .state
            .as_ref()
            .and_then(|s| s.running.as_ref())
            .is_some()
    );

    // A second pod goes to the other node, with its own address.
    pods.create(&PostParams::default(), &pod("api", json!({})))
        .await
        .expect("create");
    let other = await_pod(&pods, "api", "Ready", is_ready).await;
    assert_ne!(
        other.spec.as_ref().and_then(|s| s.node_name.clone()),
        spec.node_name
    );
    assert_ne!(
        other.status.as_ref().and_then(|s| s.pod_ip.clone()),
        status.pod_ip
    );
    server.shutdown().await;
}

#[tokio::test]
async fn init_containers_complete_before_the_containers_run() {
    let server = server(1).await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    let limits = json!({"limits": {"cpu": "1", "memory": "1Gi"}});
    let spec = json!({"initContainers": [{"name": "setup", "image": "busybox", "resources": limits}],
        "containers": [{"name": "app", "image": "nginx", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]});
    pods.create(&PostParams::default(), &pod("init", spec))
        .await
        .expect("create");
    let ready = await_pod(&pods, "init", "Ready", is_ready).await;
    let status = ready.status.expect("status");
    let init = &status.init_container_statuses.expect("init statuses")[0];
    let terminated = init
        .state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .expect("terminated");
    assert_eq!(
        (terminated.exit_code, terminated.reason.as_deref()),
        (0, Some("Completed"))
    );
    assert_eq!(status.qos_class.as_deref(), Some("Guaranteed"));
    server.shutdown().await;
}

#[tokio::test]
async fn an_unschedulable_pod_gets_the_condition_and_an_event() {
    let server = server(2).await;
    let client = server.client().expect("client");
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    pods.create(
        &PostParams::default(),
        &pod("picky", json!({"nodeSelector": {"disk": "ssd"}})),
    )
    .await
    .expect("create");
    let expected = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    let pending = await_pod(&pods, "picky", "unschedulable", |p| {
        condition(p, "PodScheduled").is_some_and(|(s, _, _)| s == "False")
    })
    .await;
    assert_eq!(
        condition(&pending, "PodScheduled"),
        Some((
            "False".into(),
            Some("Unschedulable".into()),
            Some(expected.into())
        ))
    );
    assert_eq!(phase(&pending), "Pending");
    let events: Api<Event> = Api::default_namespaced(client);
    let list = events.list(&ListParams::default()).await.expect("events");
    let event = list
        .items
        .iter()
        .find(|e| e.reason.as_deref() == Some("FailedScheduling"))
        .expect("a FailedScheduling event");
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.reporting_component.as_deref(), Some("default-scheduler"));
    assert_eq!(event.message.as_deref(), Some(expected));
    assert_eq!(event.involved_object.name.as_deref(), Some("picky"));

    // Once a node carries the label, the pod is scheduled there.
    let mut node = server.get("v1", "Node", None, "node-2").expect("node");
    node["metadata"]["labels"]["disk"] = json!("ssd");
    server.update(node).expect("label the node");
    let running = await_pod(&pods, "picky", "Ready", is_ready).await;
    assert_eq!(running.spec.and_then(|s| s.node_name).as_deref(), Some("node-2"));
    server.shutdown().await;
}

#[tokio::test]
async fn requests_are_scheduled_within_what_nodes_can_allocate() {
    let server = TestServer::builder()
        .kubelet(Kubelet::with_nodes(2).allocatable("cpu", "1"))
        .start()
        .await
        .expect("server starts");
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    let asking = |cpu: &str| json!({"containers": [{"name": "app", "image": "busybox:1.36", "resources": {"requests": {"cpu": cpu}}}]});
    for name in ["first", "second", "third"] {
        pods.create(&PostParams::default(), &pod(name, asking("600m")))
            .await
            .expect("create");
    }
    let first = await_pod(&pods, "first", "Ready", is_ready).await;
    let second = await_pod(&pods, "second", "Ready", is_ready).await;
    let node_of = |pod: &Pod| pod.spec.as_ref().and_then(|s| s.node_name.clone());
    assert_ne!(node_of(&first), node_of(&second), "one 600m pod per 1-CPU node");
    let expected = "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.";
    let pending = await_pod(&pods, "third", "unschedulable", |p| {
        condition(p, "PodScheduled").is_some_and(|(s, _, _)| s == "False")
    })
    .await;
    assert_eq!(
        condition(&pending, "PodScheduled")
            .and_then(|(_, _, message)| message)
            .as_deref(),
        Some(expected)
    );

    // The first pod gone, its CPU goes to the third.
    pods.delete("first", &DeleteParams::default())
        .await
        .expect("delete");
    let third = await_pod(&pods, "third", "Ready", is_ready).await;
    assert_eq!(node_of(&third), node_of(&first));
    server.shutdown().await;

    let refused = TestServer::builder()
        .kubelet(Kubelet::with_nodes(1).allocatable("memory", "plenty"))
        .start()
        .await;
    assert!(
        matches!(
            &refused,
            Err(informer_testserver::ServerError::Kubelet(KubeletError::Allocatable { resource, quantity, .. }))
                if resource == "memory" && quantity == "plenty"
        ),
        "{:?}",
        refused.err()
    );
}

#[tokio::test]
async fn taints_and_cordons_are_respected() {
    let server = server(2).await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    let mut tainted = server.get("v1", "Node", None, "node-1").expect("node");
    tainted["spec"]["taints"] = json!([{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]);
    server.update(tainted).expect("taint");
    let mut cordoned = server.get("v1", "Node", None, "node-2").expect("node");
    cordoned["spec"]["unschedulable"] = json!(true);
    server.update(cordoned).expect("cordon");

    pods.create(&PostParams::default(), &pod("plain", json!({})))
        .await
        .expect("create");
    let pending = await_pod(&pods, "plain", "unschedulable", |p| {
        condition(p, "PodScheduled").is_some()
    })
    .await;
    assert_eq!(
        condition(&pending, "PodScheduled")
            .and_then(|(_, _, m)| m)
            .as_deref(),
        Some(
            "0/2 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        )
    );

    let tolerant =
        json!({"tolerations": [{"key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}]});
    pods.create(&PostParams::default(), &pod("gpu", tolerant))
        .await
        .expect("create");
    let running = await_pod(&pods, "gpu", "Ready", is_ready).await;
    assert_eq!(running.spec.and_then(|s| s.node_name).as_deref(), Some("node-1"));
    server.shutdown().await;
}

#[tokio::test]
async fn deletion_waits_for_the_containers_to_stop() {
    let server = TestServer::builder()
        .kubelet(Kubelet::with_nodes(1).stop_time(Duration::from_millis(300)))
        .start()
        .await
        .expect("server");
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.create(
        &PostParams::default(),
        &pod("slow", json!({"terminationGracePeriodSeconds": 20})),
    )
    .await
    .expect("create");
    await_pod(&pods, "slow", "Ready", is_ready).await;

    let answer = pods
        .delete("slow", &DeleteParams::default())
        .await
        .expect("delete");
    let marked = answer.left().expect("the pod is only marked for deletion");
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(20));
    assert!(marked.metadata.deletion_timestamp.is_some());
    // Still there, its containers stopping; then removed by the kubelet.
    let stopped = await_pod(&pods, "slow", "containers stopped", |p| {
        p.status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .all(|c| c.state.as_ref().is_some_and(|s| s.terminated.is_some()))
            })
    })
    .await;
    assert!(stopped.metadata.deletion_timestamp.is_some());
    let gone = async {
        while pods.get_opt("slow").await.expect("get").is_some() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(PATIENCE, gone)
        .await
        .expect("the kubelet removes the pod");

    // A grace period of 0 removes at once; so does deleting an unscheduled pod.
    pods.create(&PostParams::default(), &pod("quick", json!({})))
        .await
        .expect("create");
    await_pod(&pods, "quick", "Ready", is_ready).await;
    let answer = pods
        .delete("quick", &DeleteParams::default().grace_period(0))
        .await
        .expect("delete");
    assert!(answer.is_left());
    assert!(pods.get_opt("quick").await.expect("get").is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn delete_and_finalize_ends() {
    let server = server(1).await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.create(&PostParams::default(), &pod("bye", json!({})))
        .await
        .expect("create");
    await_pod(&pods, "bye", "Ready", is_ready).await;
    let marked = pods
        .delete("bye", &DeleteParams::default())
        .await
        .expect("delete");
    let rv = marked
        .left()
        .and_then(|p| p.metadata.resource_version)
        .expect("marked pod");
    let mut watch = pods
        .watch(&WatchParams::default().fields("metadata.name=bye"), &rv)
        .await
        .expect("watch")
        .boxed();
    let deleted = async {
        while let Some(event) = watch.next().await {
            if matches!(event, Ok(WatchEvent::Deleted(_))) {
                return;
            }
        }
    };
    tokio::time::timeout(PATIENCE, deleted)
        .await
        .expect("DELETED seen");
    server.shutdown().await;
}

#[tokio::test]
async fn a_crash_loop_counts_restarts() {
    let server = server(1).await;
    let kubelet = server.kubelet().expect("kubelet");
    kubelet.set_stage(
        PodMatch::labels("app=flaky").expect("selector"),
        Stage::crash_loop(),
    );
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.create(&PostParams::default(), &pod("flaky", json!({})))
        .await
        .expect("create");
    let looping = await_pod(&pods, "flaky", "two restarts in back-off", |p| {
        p.status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .is_some_and(|cs| {
                let c = &cs[0];
                c.restart_count >= 2
                    && c.state
                        .as_ref()
                        .and_then(|s| s.waiting.as_ref())
                        .and_then(|w| w.reason.as_deref())
                        == Some("CrashLoopBackOff")
            })
    })
    .await;
    let container = &looping
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.clone())
        .expect("statuses")[0];
    let last = container
        .last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .expect("last exit");
    assert_eq!((last.exit_code, last.reason.as_deref()), (1, Some("Error")));
    assert!(!container.ready);
    assert_eq!(phase(&looping), "Running");
    server.shutdown().await;
}

#[tokio::test]
async fn stages_fail_or_keep_a_pod_unready() {
    let server = server(1).await;
    let kubelet = server.kubelet().expect("kubelet");
    kubelet.set_stage(PodMatch::named("default", "broken"), Stage::Fail { exit_code: 7 });
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.create(
        &PostParams::default(),
        &pod("broken", json!({"restartPolicy": "Never"})),
    )
    .await
    .expect("create");
    let failed = await_pod(&pods, "broken", "Failed", |p| phase(p) == "Failed").await;
    let status = failed.status.expect("status");
    let exit = status.container_statuses.expect("statuses")[0]
        .state
        .as_ref()
        .and_then(|s| s.terminated.clone())
        .expect("terminated");
    assert_eq!(exit.exit_code, 7);

    pods.create(&PostParams::default(), &pod("stuck", json!({})))
        .await
        .expect("create");
    await_pod(&pods, "stuck", "Ready", is_ready).await;
    kubelet.set_stage(PodMatch::named("default", "stuck"), Stage::NotReady);
    let unready = await_pod(&pods, "stuck", "not ready", |p| !is_ready(p)).await;
    assert_eq!(phase(&unready), "Running");
    assert_eq!(
        condition(&unready, "ContainersReady")
            .and_then(|(_, reason, _)| reason)
            .as_deref(),
        Some("ContainersNotReady")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_job_pod_completes() {
    let server = server(1).await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    let mut job_pod = pod("job-x", json!({"restartPolicy": "Never"}));
    job_pod.metadata.owner_references = Some(vec![serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job", "name": "job", "uid": "6a3c4f3e-0000-4000-8000-000000000001", "controller": true,
    }))
    .expect("owner reference")]);
    pods.create(&PostParams::default(), &job_pod)
        .await
        .expect("create");
    let done = await_pod(&pods, "job-x", "Succeeded", |p| phase(p) == "Succeeded").await;
    assert_eq!(
        condition(&done, "Ready")
            .and_then(|(_, reason, _)| reason)
            .as_deref(),
        Some("PodCompleted")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn logs_are_answered_from_what_the_test_registered() {
    let server = server(1).await;
    let kubelet = server.kubelet().expect("kubelet");
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.create(&PostParams::default(), &pod("talker", json!({})))
        .await
        .expect("create");
    await_pod(&pods, "talker", "Ready", is_ready).await;
    kubelet.set_logs("default", "talker", "app", "one\ntwo\nthree\n");

    assert_eq!(
        pods.logs("talker", &LogParams::default()).await.expect("logs"),
        "one\ntwo\nthree\n"
    );
    let tail = LogParams {
        tail_lines: Some(1),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("talker", &tail).await.expect("tail"), "three\n");
    let limited = LogParams {
        limit_bytes: Some(6),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("talker", &limited).await.expect("limit"), "one\ntw");
    let stamped = LogParams {
        timestamps: true,
        tail_lines: Some(1),
        ..LogParams::default()
    };
    let line = pods.logs("talker", &stamped).await.expect("timestamps");
    assert!(line.ends_with("Z three\n"), "{line}");
    let previous = LogParams {
        previous: true,
        ..LogParams::default()
    };
    let err = pods.logs("talker", &previous).await.expect_err("no previous run");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 400), "{err:?}");

    // Following streams what is appended, and ends when the pod goes away.
    let follow = LogParams {
        follow: true,
        ..LogParams::default()
    };
    let mut lines = pods.log_stream("talker", &follow).await.expect("follow");
    let mut seen = Vec::new();
    let reader = async {
        use futures::AsyncBufReadExt;
        let mut line = String::new();
        while lines.read_line(&mut line).await.expect("read") > 0 {
            seen.push(std::mem::take(&mut line));
            if seen.len() == 3 {
                kubelet.append_logs("default", "talker", "app", "four\n");
            }
            if seen.len() == 4 {
                pods.delete("talker", &DeleteParams::default())
                    .await
                    .expect("delete");
            }
        }
    };
    tokio::time::timeout(PATIENCE, reader)
        .await
        .expect("the stream ends");
    assert_eq!(seen, ["one\n", "two\n", "three\n", "four\n"]);
    server.shutdown().await;
}

#[tokio::test]
async fn exec_runs_the_registered_command_over_websocket() {
    let server = server(1).await;
    let kubelet = server.kubelet().expect("kubelet");
    kubelet.on_exec(PodMatch::all(), |request| match request.command.as_slice() {
        [echo, rest @ ..] if echo == "echo" => ExecOutput::stdout(format!("{}\n", rest.join(" "))),
        _ => ExecOutput::stderr("not found\n").exit_code(127),
    });
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.create(&PostParams::default(), &pod("shell", json!({})))
        .await
        .expect("create");
    await_pod(&pods, "shell", "Ready", is_ready).await;

    let params = kube::api::AttachParams::default().stderr(true);
    let mut process = pods
        .exec("shell", ["echo", "hello", "world"], &params)
        .await
        .expect("exec");
    let stdout = process.stdout().expect("stdout");
    let status = process.take_status().expect("status");
    let mut out = String::new();
    {
        use tokio::io::AsyncReadExt;
        let mut stdout = stdout;
        stdout.read_to_string(&mut out).await.expect("read stdout");
    }
    let status = status.await.expect("a status");
    assert_eq!(out, "hello world\n");
    assert_eq!(status.status.as_deref(), Some("Success"));
    process.join().await.expect("join");

    let mut process = pods.exec("shell", ["false"], &params).await.expect("exec");
    let status = process.take_status().expect("status").await.expect("a status");
    assert_eq!(status.status.as_deref(), Some("Failure"));
    assert_eq!(status.reason.as_deref(), Some("NonZeroExitCode"));
    let causes = status.details.and_then(|d| d.causes).unwrap_or_default();
    assert_eq!(causes[0].reason.as_deref(), Some("ExitCode"));
    assert_eq!(causes[0].message.as_deref(), Some("127"));
    process.join().await.expect("join");
    server.shutdown().await;
}

#[tokio::test]
async fn a_namespace_ends_once_the_kubelet_removed_its_pods() {
    let server = server(1).await;
    server.create_namespace("shop").expect("namespace");
    let client = server.client().expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    pods.create(&PostParams::default(), &pod("till", json!({})))
        .await
        .expect("create");
    await_pod(&pods, "till", "Ready", is_ready).await;
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
    namespaces
        .delete("shop", &DeleteParams::default())
        .await
        .expect("delete namespace");
    let gone = async {
        while namespaces.get_opt("shop").await.expect("get").is_some() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(PATIENCE, gone)
        .await
        .expect("the namespace ends");
    assert!(server.kubelet().expect("kubelet").errors().is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn exec_reads_stdin_and_attach_sends_the_registered_output() {
    let server = server(1).await;
    let kubelet = server.kubelet().expect("kubelet");
    kubelet.on_exec(PodMatch::all(), |request| {
        ExecOutput::stdout(String::from_utf8_lossy(&request.stdin).to_uppercase())
    });
    kubelet.on_attach(PodMatch::named("default", "cat"), "attached\n");
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.create(&PostParams::default(), &pod("cat", json!({})))
        .await
        .expect("create");
    await_pod(&pods, "cat", "Ready", is_ready).await;

    let params = kube::api::AttachParams::default().stdin(true).stderr(false);
    let mut process = pods.exec("cat", ["cat"], &params).await.expect("exec");
    let mut stdin = process.stdin().expect("stdin");
    let mut stdout = process.stdout().expect("stdout");
    {
        use tokio::io::AsyncWriteExt;
        stdin.write_all(b"shout\n").await.expect("write stdin");
        stdin.shutdown().await.expect("close stdin");
    }
    drop(stdin);
    let mut out = String::new();
    {
        use tokio::io::AsyncReadExt;
        tokio::time::timeout(PATIENCE, stdout.read_to_string(&mut out))
            .await
            .expect("stdout ends")
            .expect("read stdout");
    }
    assert_eq!(out, "SHOUT\n");
    process.join().await.expect("join");

    let mut attached = pods
        .attach("cat", &kube::api::AttachParams::default().stderr(false))
        .await
        .expect("attach");
    let mut out = String::new();
    {
        use tokio::io::AsyncReadExt;
        let mut stdout = attached.stdout().expect("stdout");
        stdout.read_to_string(&mut out).await.expect("read");
    }
    assert_eq!(out, "attached\n");
    attached.join().await.expect("join");
    server.shutdown().await;
}

#[tokio::test]
async fn without_a_registration_exec_answers_as_an_unreachable_kubelet() {
    let server = server(1).await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.create(&PostParams::default(), &pod("mute", json!({})))
        .await
        .expect("create");
    await_pod(&pods, "mute", "Ready", is_ready).await;
    let err = pods
        .exec("mute", ["true"], &kube::api::AttachParams::default())
        .await
        .err()
        .expect("no exec answer registered");
    assert!(format!("{err:?}").contains("500"), "{err:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn finalizers_hold_a_pod_the_kubelet_removed_until_they_go() {
    let server = server(1).await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    let mut held = pod("held", json!({}));
    held.metadata.finalizers = Some(vec!["example.com/keep".into()]);
    pods.create(&PostParams::default(), &held).await.expect("create");
    await_pod(&pods, "held", "Ready", is_ready).await;
    pods.delete("held", &DeleteParams::default())
        .await
        .expect("delete");
    let released = await_pod(&pods, "held", "grace period over", |p| {
        p.metadata.deletion_grace_period_seconds == Some(0)
    })
    .await;
    assert!(released.metadata.deletion_timestamp.is_some());
    let patch = json!({"metadata": {"finalizers": null}});
    pods.patch(
        "held",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&patch),
    )
    .await
    .expect("remove the finalizer");
    assert!(pods.get_opt("held").await.expect("get").is_none());
    server.shutdown().await;
}
