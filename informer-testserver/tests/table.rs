//! `Table` output through `kube::Client` (the request `kubectl get` sends): the standard columns
//! of built-in kinds, a CRD's `additionalPrinterColumns`, `includeObject`, single objects and
//! watches.

use futures::{AsyncBufReadExt, TryStreamExt};
use informer_testserver::TestServer;
use k8s_openapi::api::{apps::v1::Deployment, core::v1::Pod};
use kube::{
    Client,
    api::{Api, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

const KUBECTL_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

async fn get_table(client: &Client, path: &str) -> Value {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, KUBECTL_ACCEPT)
        .body(Vec::new())
        .expect("request");
    client.request::<Value>(request).await.expect("a table")
}

fn column_names(table: &Value) -> Vec<&str> {
    table["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect()
}

#[tokio::test]
async fn lists_of_built_in_kinds_get_their_columns() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web-1"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "node-a"},
        "status": {"phase": "Running", "podIP": "10.0.0.7", "containerStatuses": [
            {"name": "c", "ready": true, "restartCount": 4, "image": "nginx", "imageID": "", "state": {"running": {}}}
        ]},
    }))
    .expect("valid");
    let created = pods.create(&PostParams::default(), &pod).await.expect("created");
    assert_eq!(created.status.and_then(|s| s.phase).as_deref(), Some("Pending"));
    // the kubelet's status write
    let status = json!({"status": serde_json::to_value(&pod.status).expect("status")});
    pods.patch_status("web-1", &PatchParams::default(), &Patch::Merge(status))
        .await
        .expect("status written");

    let table = get_table(&client, "/api/v1/namespaces/default/pods").await;
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        column_names(&table),
        [
            "Name",
            "Ready",
            "Status",
            "Restarts",
            "Age",
            "IP",
            "Node",
            "Nominated Node",
            "Readiness Gates"
        ]
    );
    let row = &table["rows"][0];
    let cells = row["cells"].as_array().expect("cells");
    assert_eq!(
        cells[..4],
        [json!("web-1"), json!("1/1"), json!("Running"), json!("4")]
    );
    assert_eq!(
        cells[5..],
        [
            json!("10.0.0.7"),
            json!("node-a"),
            json!("<none>"),
            json!("<none>")
        ]
    );
    assert_eq!(
        row["object"]["kind"], "PartialObjectMetadata",
        "rows carry metadata by default"
    );
    assert!(table["metadata"]["resourceVersion"].is_string());

    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    }))
    .expect("valid");
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .expect("created");
    let status = json!({"status": serde_json::to_value(&deployment.status).expect("status")});
    deployments
        .patch_status("web", &PatchParams::default(), &Patch::Merge(status))
        .await
        .expect("status written");
    let table = get_table(
        &client,
        "/apis/apps/v1/namespaces/default/deployments/web?includeObject=Object",
    )
    .await;
    assert_eq!(
        column_names(&table),
        [
            "Name",
            "Ready",
            "Up-to-date",
            "Available",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let cells = &table["rows"][0]["cells"];
    assert_eq!(cells[1], "2/3");
    assert_eq!(cells[6], "nginx:1.27");
    assert_eq!(cells[7], "app=web");
    assert_eq!(
        table["rows"][0]["object"]["kind"], "Deployment",
        "includeObject=Object"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn custom_resources_get_their_printer_columns() {
    let server = TestServer::start().await.expect("start");
    server
        .seed_str(
            r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
      additionalPrinterColumns:
        - {name: Size, type: integer, jsonPath: .spec.size}
        - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
        - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    - name: v2
      served: true
      storage: false
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {size: 3}
status: {conditions: [{type: Ready, status: "True"}]}
"#,
        )
        .expect("seeded");
    let client = server.client().expect("client");
    let table = get_table(&client, "/apis/example.com/v1/namespaces/default/widgets").await;
    assert_eq!(column_names(&table), ["Name", "Size", "Ready", "Age"]);
    let cells = table["rows"][0]["cells"].as_array().expect("cells");
    assert_eq!(cells[..3], [json!("w1"), json!(3), json!("True")]);
    assert!(
        cells[3].as_str().is_some_and(|t| t.ends_with('Z')),
        "dates stay timestamps"
    );
    // A version without printer columns shows the name and the age.
    let table = get_table(&client, "/apis/example.com/v2/namespaces/default/widgets").await;
    assert_eq!(column_names(&table), ["Name", "Age"]);
    server.shutdown().await;
}

#[tokio::test]
async fn watches_send_tables_with_definitions_first() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let request = http::Request::get("/api/v1/namespaces/default/configmaps?watch=true")
        .header(http::header::ACCEPT, KUBECTL_ACCEPT)
        .body(Vec::new())
        .expect("request");
    let mut lines = client.request_stream(request).await.expect("a watch").lines();
    for name in ["a", "b"] {
        server
            .create(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}}))
            .expect("created");
    }
    let first: Value =
        serde_json::from_str(&lines.try_next().await.expect("read").expect("a line")).expect("json");
    let second: Value =
        serde_json::from_str(&lines.try_next().await.expect("read").expect("a line")).expect("json");
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "Table");
    assert_eq!(column_names(&first["object"]), ["Name", "Data", "Age"]);
    let cells = first["object"]["rows"][0]["cells"].as_array().expect("cells");
    assert_eq!(cells[..2], [json!("a"), json!(1)]);
    assert!(
        column_names(&second["object"]).is_empty(),
        "definitions only once"
    );
    assert_eq!(second["object"]["rows"][0]["cells"][0], "b");
    server.shutdown().await;
}

/// Creates `object`, asks for the table of `path` (the object itself) and checks the column
/// names and the cells the row has at the given indices.
async fn check_row(
    server: &TestServer,
    client: &Client,
    object: Value,
    path: &str,
    names: &[&str],
    cells: &[(usize, Value)],
) {
    server.create(object).expect("created");
    let table = get_table(client, path).await;
    assert_eq!(column_names(&table), names, "{path}");
    let row = table["rows"][0]["cells"].as_array().expect("a row");
    assert_eq!(row.len(), names.len(), "{path}: a cell per column");
    for (at, want) in cells {
        assert_eq!(&row[*at], want, "{path}: cell {at} ({})", names[*at]);
    }
}

// The columns and cells of kubernetes' printers (pkg/printers/internalversion/printers.go,
// cases of its TestPrintDaemonSet, TestPrintReplicationController, TestPrintJob, ...).
#[tokio::test]
async fn workloads_get_their_columns() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": {"nodeSelector": {"disk": "ssd"}, "containers": [{"name": "c", "image": "busybox"}, {"name": "d", "image": "nginx"}]}});
    check_row(
        &server,
        &client,
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template},
            "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 2, "numberReady": 1, "updatedNumberScheduled": 2, "numberAvailable": 1, "numberMisscheduled": 0}}),
        "/apis/apps/v1/namespaces/default/daemonsets/ds",
        &["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers", "Images", "Selector"],
        &[(1, json!(3)), (2, json!(2)), (3, json!(1)), (4, json!(2)), (5, json!(1)), (6, json!("disk=ssd")), (8, json!("c,d")), (9, json!("busybox,nginx")), (10, json!("app=x"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc", "namespace": "default"},
            "spec": {"replicas": 5, "selector": {"app": "x"}, "template": template},
            "status": {"replicas": 4, "readyReplicas": 3}}),
        "/api/v1/namespaces/default/replicationcontrollers/rc",
        &["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"],
        &[(1, json!(5)), (2, json!(4)), (3, json!(3)), (5, json!("c,d")), (7, json!("app=x"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job", "namespace": "default"},
            "spec": {"completions": 3, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
            "status": {"succeeded": 3, "startTime": "2020-01-01T00:00:00Z", "completionTime": "2020-01-01T00:02:10Z",
                       "conditions": [{"type": "Complete", "status": "True"}]}}),
        "/apis/batch/v1/namespaces/default/jobs/job",
        &["Name", "Status", "Completions", "Duration", "Age", "Containers", "Images", "Selector"],
        &[(1, json!("Complete")), (2, json!("3/3")), (3, json!("2m10s")), (5, json!("c"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cron", "namespace": "default"},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}}),
        "/apis/batch/v1/namespaces/default/cronjobs/cron",
        &["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age", "Containers", "Images", "Selector"],
        &[(1, json!("*/5 * * * *")), (2, json!("<none>")), (3, json!("False")), (4, json!(0)), (5, json!("<none>")), (8, json!("busybox"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "rev", "namespace": "default",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "u1", "controller": true}]},
            "revision": 2}),
        "/apis/apps/v1/namespaces/default/controllerrevisions/rev",
        &["Name", "Controller", "Revision", "Age"],
        &[(1, json!("daemonset.apps/ds")), (2, json!(2))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "tpl", "namespace": "default"}, "template": template}),
        "/api/v1/namespaces/default/podtemplates/tpl",
        &["Name", "Containers", "Images", "Pod Labels"],
        &[(1, json!("c,d")), (2, json!("busybox,nginx")), (3, json!("app=x"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "hpa", "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 10,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]},
            "status": {"currentReplicas": 4, "desiredReplicas": 4, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}]}}),
        "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/hpa",
        &["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
        &[(1, json!("Deployment/web")), (2, json!("cpu: 40%/80%")), (3, json!("2")), (4, json!(10)), (5, json!(4))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "default"},
            "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "x"}}},
            "status": {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2}}),
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb",
        &["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
        &[(1, json!("50%")), (2, json!("N/A")), (3, json!(1))],
    )
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn events_get_the_columns_kubectl_get_events_prints() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let names = [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Subobject",
        "Source",
        "Message",
        "First Seen",
        "Count",
        "Name",
    ];
    check_row(
        &server,
        &client,
        json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "fieldPath": "spec.containers{c}"},
            "type": "Warning", "reason": "BackOff", "message": "Back-off restarting failed container\n", "count": 5,
            "source": {"component": "kubelet", "host": "node-a"},
            "firstTimestamp": "2020-01-01T00:00:00Z", "lastTimestamp": "2020-01-01T00:00:00Z"}),
        "/api/v1/namespaces/default/events/web.1",
        &names,
        &[(1, json!("Warning")), (2, json!("BackOff")), (3, json!("pod/web")), (4, json!("spec.containers{c}")), (5, json!("kubelet, node-a")), (6, json!("Back-off restarting failed container")), (8, json!(5)), (9, json!("web.1"))],
    )
    .await;
    let table = get_table(&client, "/api/v1/namespaces/default/events").await;
    let name = &table["columnDefinitions"][9];
    assert_eq!((&name["format"], &name["priority"]), (&json!("name"), &json!(1)));
    check_row(
        &server,
        &client,
        json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "web.2", "namespace": "default"},
            "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"},
            "type": "Normal", "reason": "ScalingReplicaSet", "note": "Scaled up", "action": "Scale",
            "reportingController": "deployment-controller", "reportingInstance": "",
            "eventTime": "2020-01-01T00:00:00.000000Z"}),
        "/apis/events.k8s.io/v1/namespaces/default/events/web.2",
        &names,
        &[(1, json!("Normal")), (2, json!("ScalingReplicaSet")), (3, json!("deployment/web")), (5, json!("deployment-controller")), (6, json!("Scaled up")), (8, json!(1))],
    )
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn core_and_networking_kinds_get_their_columns() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    check_row(
        &server,
        &client,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb", "namespace": "default"},
            "spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false, "clusterIP": "10.96.0.50", "clusterIPs": ["10.96.0.50"], "selector": {"app": "web"},
                     "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}}),
        "/api/v1/namespaces/default/services/lb",
        &["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"],
        &[(1, json!("LoadBalancer")), (2, json!("10.96.0.50")), (3, json!("<pending>")), (4, json!("80:30080/TCP,53/UDP")), (6, json!("app=web"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web", "namespace": "default"},
            "subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}, {"ip": "10.0.0.3"}, {"ip": "10.0.0.4"}], "ports": [{"port": 80}]}]}),
        "/api/v1/namespaces/default/endpoints/web",
        &["Name", "Endpoints", "Age"],
        &[(1, json!("10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more..."))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "quota", "namespace": "default"},
            "spec": {"hard": {"pods": "10", "limits.cpu": "2"}},
            "status": {"hard": {"pods": "10", "limits.cpu": "2", "requests.memory": "1Gi"}, "used": {"pods": "3", "limits.cpu": "500m"}}}),
        "/api/v1/namespaces/default/resourcequotas/quota",
        &["Name", "Request", "Limit", "Age"],
        &[(1, json!("pods: 3/10, requests.memory: 0/1Gi")), (2, json!("limits.cpu: 500m/2"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "web-abc", "namespace": "default"},
            "addressType": "IPv4", "ports": [{"name": "http", "port": 80, "protocol": "TCP"}],
            "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}]}),
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/web-abc",
        &["Name", "AddressType", "Ports", "Endpoints", "Age"],
        &[(1, json!("IPv4")), (2, json!("80")), (3, json!("10.0.0.1,10.0.0.2"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["a.example.com"]}],
                     "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.9"}, {"hostname": "lb.example.com"}]}}}),
        "/apis/networking.k8s.io/v1/namespaces/default/ingresses/web",
        &["Name", "Class", "Hosts", "Address", "Ports", "Age"],
        &[(1, json!("nginx")), (2, json!("a.example.com,b.example.com")), (3, json!("192.0.2.9,lb.example.com")), (4, json!("80, 443"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"},
            "spec": {"controller": "k8s.io/ingress-nginx", "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}}),
        "/apis/networking.k8s.io/v1/ingressclasses/nginx",
        &["Name", "Controller", "Parameters", "Age"],
        &[(1, json!("k8s.io/ingress-nginx")), (2, json!("IngressParameters.k8s.example.com/external-lb"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "deny", "namespace": "default"},
            "spec": {"podSelector": {"matchLabels": {"app": "web"}}}}),
        "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/deny",
        &["Name", "Pod-Selector", "Age"],
        &[(1, json!("app=web"))],
    )
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn storage_kinds_get_their_columns() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    check_row(
        &server,
        &client,
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain",
                     "storageClassName": "fast", "volumeMode": "Filesystem", "hostPath": {"path": "/data"},
                     "claimRef": {"namespace": "default", "name": "data"}},
            "status": {"phase": "Bound"}}),
        "/api/v1/persistentvolumes/pv1",
        &["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "VolumeAttributesClass", "Reason", "Age", "VolumeMode"],
        &[(1, json!("10Gi")), (2, json!("RWO,RWX")), (3, json!("Retain")), (4, json!("Bound")), (5, json!("default/data")), (6, json!("fast")), (7, json!("<unset>")), (8, json!("")), (10, json!("Filesystem"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}, "storageClassName": "fast", "volumeName": "pv1"},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}}),
        "/api/v1/namespaces/default/persistentvolumeclaims/data",
        &["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode"],
        &[(1, json!("Bound")), (2, json!("pv1")), (3, json!("10Gi")), (4, json!("RWO")), (5, json!("fast")), (8, json!("Filesystem"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "example.com/fast", "allowVolumeExpansion": true}),
        "/apis/storage.k8s.io/v1/storageclasses/fast",
        &["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"],
        &[(0, json!("fast (default)")), (1, json!("example.com/fast")), (2, json!("Delete")), (3, json!("Immediate")), (4, json!(true))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"},
            "spec": {"podInfoOnMount": true, "volumeLifecycleModes": ["Persistent", "Ephemeral"], "tokenRequests": [{"audience": "vault"}]}}),
        "/apis/storage.k8s.io/v1/csidrivers/csi.example.com",
        &["Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests", "RequiresRepublish", "Modes", "Age"],
        &[(1, json!(true)), (2, json!(true)), (3, json!(false)), (4, json!("vault")), (5, json!(false)), (6, json!("Persistent,Ephemeral"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-a"},
            "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "node-a"}]}}),
        "/apis/storage.k8s.io/v1/csinodes/node-a",
        &["Name", "Drivers", "Age"],
        &[(1, json!(1))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
            "spec": {"attacher": "csi.example.com", "nodeName": "node-a", "source": {"persistentVolumeName": "pv1"}},
            "status": {"attached": true}}),
        "/apis/storage.k8s.io/v1/volumeattachments/va",
        &["Name", "Attacher", "PV", "Node", "Attached", "Age"],
        &[(1, json!("csi.example.com")), (2, json!("pv1")), (3, json!("node-a")), (4, json!(true))],
    )
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn cluster_and_rbac_kinds_get_their_columns() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    check_row(
        &server,
        &client,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "readers", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "ann"}, {"kind": "User", "name": "bob"}, {"kind": "Group", "name": "devs"},
                         {"kind": "ServiceAccount", "name": "robot", "namespace": "ci"}]}),
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/readers",
        &["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"],
        &[(1, json!("ClusterRole/view")), (3, json!("ann, bob")), (4, json!("devs")), (5, json!("ci:robot"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "reader", "namespace": "default"}, "rules": []}),
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/reader",
        &["Name", "Created At"],
        &[],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
            "value": 1000, "globalDefault": false, "preemptionPolicy": "Never"}),
        "/apis/scheduling.k8s.io/v1/priorityclasses/high",
        &["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"],
        &[(1, json!(1000)), (2, json!(false)), (4, json!("Never"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "gvisor"}, "handler": "runsc"}),
        "/apis/node.k8s.io/v1/runtimeclasses/gvisor",
        &["Name", "Handler", "Age"],
        &[(1, json!("runsc"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "policy"},
            "webhooks": [{"name": "a.example.com", "clientConfig": {"url": "https://a.example.com"}, "sideEffects": "None", "admissionReviewVersions": ["v1"]}]}),
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/policy",
        &["Name", "Webhooks", "Age"],
        &[(1, json!(1))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration", "metadata": {"name": "batch"},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 10,
                     "limitResponse": {"type": "Queue", "queuing": {"queues": 16, "handSize": 4, "queueLengthLimit": 50}}}}}),
        "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/batch",
        &["Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit", "Age"],
        &[(1, json!("Limited")), (2, json!(10)), (3, json!(16)), (4, json!(4)), (5, json!(50))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": "batch-jobs"},
            "spec": {"priorityLevelConfiguration": {"name": "batch"}, "matchingPrecedence": 500, "distinguisherMethod": {"type": "ByUser"}}}),
        "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/batch-jobs",
        &["Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"],
        &[(1, json!("batch")), (2, json!(500)), (3, json!("ByUser")), (5, json!("?"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a", "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "infra"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
                       "nodeInfo": {"kubeletVersion": "v1.34.0", "osImage": "Debian", "kernelVersion": "6.1", "containerRuntimeVersion": "containerd://2.0",
                                    "machineID": "", "systemUUID": "", "bootID": "", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}}}),
        "/api/v1/nodes/node-a",
        &["Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"],
        &[(1, json!("Ready")), (2, json!("control-plane,infra")), (4, json!("v1.34.0")), (5, json!("10.0.0.5")), (6, json!("<none>")), (7, json!("Debian")), (9, json!("containerd://2.0"))],
    )
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn newer_kinds_get_their_columns() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    check_row(
        &server,
        &client,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "replicas"},
            "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                     "validations": [{"expression": "object.spec.replicas <= 5"}, {"expression": "true"}]}}),
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/replicas",
        &["Name", "Validations", "ParamKind", "Age"],
        &[(1, json!(2)), (2, json!("v1/ConfigMap"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "replicas"},
            "spec": {"policyName": "replicas", "paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"}, "validationActions": ["Deny"]}}),
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/replicas",
        &["Name", "PolicyName", "ParamRef", "Age"],
        &[(1, json!("replicas")), (2, json!("*/limits"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": "extra"},
            "spec": {"cidrs": ["10.100.0.0/16", "fd00:100::/64"]}}),
        "/apis/networking.k8s.io/v1/servicecidrs/extra",
        &["Name", "CIDRs", "Age"],
        &[(1, json!("10.100.0.0/16,fd00:100::/64"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass", "metadata": {"name": "gold"},
            "driverName": "csi.example.com", "parameters": {"iops": "1000"}}),
        "/apis/storage.k8s.io/v1/volumeattributesclasses/gold",
        &["Name", "DriverName", "Age"],
        &[(0, json!("gold")), (1, json!("csi.example.com"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "cap", "namespace": "default"},
            "storageClassName": "fast", "capacity": "100Gi"}),
        "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities/cap",
        &["Name", "StorageClassName", "Capacity"],
        &[(1, json!("fast")), (2, json!("100Gi"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}),
        "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/gpu",
        &["Name", "State", "Age"],
        &[(1, json!("pending"))],
    )
    .await;
    check_row(
        &server,
        &client,
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-a-gpu"},
            "spec": {"driver": "gpu.example.com", "nodeName": "node-a", "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1}}}),
        "/apis/resource.k8s.io/v1/resourceslices/node-a-gpu",
        &["Name", "Node", "Driver", "Pool", "Age"],
        &[(1, json!("node-a")), (2, json!("gpu.example.com")), (3, json!("node-a"))],
    )
    .await;
    server.shutdown().await;
}
