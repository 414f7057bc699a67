//! The defaults of built-in kinds, case by case as kube's `defaults_test.go` files check them.

use serde_json::{Value, json};

use super::pod::pull_policy;
use super::*;
use crate::registry::ResourceType;

fn defaulted(api_version: &str, kind: &str, mut object: Value) -> Value {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let rt = ResourceType::new(group, version, kind, "things", true);
    set_defaults(&rt, &mut object);
    object
}

fn pod_spec(containers: Value) -> Value {
    defaulted("v1", "Pod", json!({"spec": {"containers": containers}}))["spec"].clone()
}

// kube: pkg/apis/core/v1/defaults_test.go, TestSetDefaultPodSpec and TestSetDefaultContainer.
#[test]
fn a_pod_gets_the_defaults_of_its_spec_and_containers() {
    let spec = pod_spec(json!([{"name": "main", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]));
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["securityContext"], json!({}));
    assert_eq!(spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(spec["schedulerName"], "default-scheduler");
    assert_eq!(spec["enableServiceLinks"], true);
    let container = &spec["containers"][0];
    assert_eq!(container["imagePullPolicy"], "IfNotPresent");
    assert_eq!(container["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(container["terminationMessagePolicy"], "File");
    assert_eq!(container["ports"][0]["protocol"], "TCP");
    assert!(container["ports"][0].get("hostPort").is_none());
}

#[test]
fn what_the_body_sets_is_kept() {
    let pod = json!({"spec": {"restartPolicy": "Never", "dnsPolicy": "None",
        "containers": [{"name": "c", "image": "a", "imagePullPolicy": "Never"}]}});
    let spec = defaulted("v1", "Pod", pod)["spec"].clone();
    assert_eq!(spec["restartPolicy"], "Never");
    assert_eq!(spec["dnsPolicy"], "None");
    assert_eq!(spec["containers"][0]["imagePullPolicy"], "Never");
}

// kube: TestSetDefaultImagePullPolicy.
#[test]
fn the_pull_policy_follows_the_image_tag() {
    for (image, policy) in [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry.local:5000/team/app", "Always"),
        ("registry.local:5000/team/app:v2", "IfNotPresent"),
        ("nginx@sha256:0123", "IfNotPresent"),
        ("nginx:latest@sha256:0123", "Always"),
        ("nginx:1.27@sha256:0123", "IfNotPresent"),
        ("", "Always"),
    ] {
        assert_eq!(pull_policy(image), policy, "{image}");
    }
}

// kube: TestSetDefaultRequestsPod.
#[test]
fn a_limit_without_a_request_is_the_request() {
    let spec = pod_spec(json!([{"name": "c", "resources": {
        "limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}}]));
    assert_eq!(
        spec["containers"][0]["resources"]["requests"],
        json!({"cpu": "1", "memory": "1Gi"})
    );
    let template = defaulted(
        "apps/v1",
        "Deployment",
        json!({"spec": {"template": {"spec":
        {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2"}}}]}}}}),
    );
    let container = &template["spec"]["template"]["spec"]["containers"][0];
    assert!(
        container["resources"].get("requests").is_none(),
        "templates keep their resources"
    );
}

// kube: TestSetDefaultProbe, TestSetDefaultHostPort, TestSetDefaultObjectFieldSelectorAPIVersion.
#[test]
fn probes_host_ports_and_field_references_are_defaulted() {
    let pod = json!({"spec": {"hostNetwork": true, "containers": [{"name": "c",
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"port": 8080}},
        "lifecycle": {"preStop": {"httpGet": {"port": 8080}}},
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}]}});
    let container = defaulted("v1", "Pod", pod)["spec"]["containers"][0].clone();
    assert_eq!(container["ports"][0]["hostPort"], 8080);
    assert_eq!(
        container["readinessProbe"],
        json!({"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
            "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(container["lifecycle"]["preStop"]["httpGet"]["scheme"], "HTTP");
    assert_eq!(container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
}

// kube: TestSetDefaultVolume, TestSetDefaultSecretVolumeSource and the other sources' modes.
#[test]
fn volumes_get_a_source_and_file_modes() {
    let pod = json!({"spec": {"containers": [], "volumes": [
        {"name": "scratch"},
        {"name": "secret", "secret": {"secretName": "s"}},
        {"name": "config", "configMap": {"name": "c", "defaultMode": 256}},
        {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
        {"name": "claim", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
    ]}});
    let volumes = defaulted("v1", "Pod", pod)["spec"]["volumes"].clone();
    assert_eq!(volumes[0], json!({"name": "scratch", "emptyDir": {}}));
    assert_eq!(volumes[1]["secret"]["defaultMode"], 420);
    assert_eq!(volumes[2]["configMap"]["defaultMode"], 256);
    assert_eq!(volumes[3]["projected"]["defaultMode"], 420);
    assert_eq!(
        volumes[3]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
        3600
    );
    assert_eq!(
        volumes[4]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"],
        "Filesystem"
    );
}

// kube: pkg/registry/core/pod/strategy_test.go, TestPodStrategy (a new pod is Pending) and
// pkg/apis/core/helper/qos/qos_test.go, TestGetPodQOS.
#[test]
fn a_new_pod_is_pending_with_its_qos_class() {
    let rt = ResourceType::new("", "v1", "Pod", "pods", true);
    let mut pod = json!({"spec": {"containers": [{"name": "c",
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m"}}}]}});
    set_defaults(&rt, &mut pod);
    set_create_defaults(&rt, &mut pod);
    assert_eq!(
        pod["status"],
        json!({"phase": "Pending", "qosClass": "Guaranteed"})
    );
    let mut gated = json!({"spec": {"schedulingGates": [{"name": "wait"}], "containers": []}});
    set_create_defaults(&rt, &mut gated);
    assert_eq!(gated["status"]["conditions"][0]["reason"], "SchedulingGated");
    assert_eq!(qos_class(&json!({"containers": [{"name": "c"}]})), "BestEffort");
    let requested = json!({"containers": [{"resources": {"requests": {"cpu": "1"}}}]});
    assert_eq!(qos_class(&requested), "Burstable");
    let unequal = json!({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}}]});
    assert_eq!(qos_class(&unequal), "Burstable");
}

// kube: pkg/apis/apps/v1/defaults_test.go, TestSetDefaultDeployment.
#[test]
fn a_deployment_rolls_25_percent_at_a_time_by_default() {
    let deployment = defaulted(
        "apps/v1",
        "Deployment",
        json!({"spec": {"template": {"spec":
        {"containers": [{"name": "c", "image": "app"}]}}}}),
    );
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
    assert_eq!(
        spec["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "Always"
    );
    let recreate = defaulted(
        "apps/v1",
        "Deployment",
        json!({"spec": {"strategy": {"type": "Recreate"}}}),
    );
    assert_eq!(recreate["spec"]["strategy"], json!({"type": "Recreate"}));
}

// kube: TestSetDefaultStatefulSet and TestSetDefaultDaemonSetSpec.
#[test]
fn stateful_and_daemon_sets_update_rolling_by_default() {
    let set = defaulted(
        "apps/v1",
        "StatefulSet",
        json!({"spec": {"volumeClaimTemplates": [{"spec": {}}]}}),
    );
    assert_eq!(set["spec"]["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        set["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(
        set["spec"]["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    assert_eq!(
        set["spec"]["volumeClaimTemplates"][0]["spec"]["volumeMode"],
        "Filesystem"
    );
    let typed = defaulted(
        "apps/v1",
        "StatefulSet",
        json!({"spec": {"updateStrategy": {"type": "RollingUpdate"}}}),
    );
    assert_eq!(typed["spec"]["updateStrategy"], json!({"type": "RollingUpdate"}));
    let daemons = defaulted("apps/v1", "DaemonSet", json!({"spec": {}}));
    assert_eq!(
        daemons["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
}

// kube: pkg/apis/batch/v1/defaults_test.go, TestSetDefaultJob; pkg/registry/batch/job
// strategy_test.go, TestJobStrategy_PrepareForCreate's generated selector.
#[test]
fn a_job_runs_once_with_six_retries_and_selects_its_pods_by_uid() {
    let rt = ResourceType::new("batch", "v1", "Job", "jobs", true);
    let mut job = json!({"metadata": {"name": "pi", "uid": "u-1"},
        "spec": {"template": {"metadata": {"labels": {"app": "pi"}}, "spec": {"containers": []}}}});
    set_defaults(&rt, &mut job);
    set_create_defaults(&rt, &mut job);
    let spec = &job["spec"];
    assert_eq!(
        (spec["completions"].clone(), spec["parallelism"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
    );
    assert_eq!(spec["template"]["metadata"]["labels"]["job-name"], "pi");
    assert_eq!(job["metadata"]["labels"], json!({"app": "pi"}));
    assert_eq!(spec["manualSelector"], false);
    let mut unlabelled =
        json!({"metadata": {"name": "pi", "uid": "u-1"}, "spec": {"template": {"spec": {}}}});
    set_defaults(&rt, &mut unlabelled);
    set_create_defaults(&rt, &mut unlabelled);
    assert_eq!(
        unlabelled["metadata"]["labels"]["batch.kubernetes.io/job-name"],
        "pi"
    );
    let parallel = defaulted(
        "batch/v1",
        "Job",
        json!({"spec": {"parallelism": 3, "backoffLimitPerIndex": 1}}),
    );
    assert!(parallel["spec"].get("completions").is_none());
    assert_eq!(parallel["spec"]["backoffLimit"], i32::MAX);
}

// kube: TestSetDefaultCronJob.
#[test]
fn a_cron_job_keeps_three_successes_and_one_failure() {
    let cron = defaulted(
        "batch/v1",
        "CronJob",
        json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {}}}}}}),
    );
    let spec = &cron["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["successfulJobsHistoryLimit"], 3);
    assert_eq!(spec["failedJobsHistoryLimit"], 1);
    assert_eq!(
        spec["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"],
        "Always"
    );
    assert!(spec["jobTemplate"]["spec"].get("backoffLimit").is_none());
}

// kube: TestSetDefaultService, TestSetDefaultServiceSessionAffinityConfig,
// TestSetDefaultServiceTargetPort.
#[test]
fn a_service_targets_its_ports_over_tcp() {
    let service = defaulted(
        "v1",
        "Service",
        json!({"spec": {"ports": [{"port": 80}, {"port": 443, "targetPort": "https"}],
        "sessionAffinity": "ClientIP"}}),
    );
    let spec = &service["spec"];
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(
        spec["ports"][0],
        json!({"port": 80, "protocol": "TCP", "targetPort": 80})
    );
    assert_eq!(spec["ports"][1]["targetPort"], "https");
    assert_eq!(spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"], 10800);
    assert_eq!(spec["internalTrafficPolicy"], "Cluster");
    assert!(spec.get("externalTrafficPolicy").is_none());
    let balancer = defaulted("v1", "Service", json!({"spec": {"type": "LoadBalancer"}}));
    assert_eq!(balancer["spec"]["externalTrafficPolicy"], "Cluster");
    assert_eq!(balancer["spec"]["allocateLoadBalancerNodePorts"], true);
    assert_eq!(balancer["spec"]["sessionAffinity"], "None");
    let exposed = defaulted("v1", "Service", json!({"spec": {"externalIPs": ["192.0.2.1"]}}));
    assert_eq!(exposed["spec"]["externalTrafficPolicy"], "Cluster");
}

// kube: TestSetDefaultReplicationController, TestSetDefaultSecret, TestSetDefaultLimitRange,
// TestSetDefaultNodeStatusAllocatable, TestSetDefaultPersistentVolume.
#[test]
fn the_other_core_kinds_get_theirs() {
    let rc = defaulted(
        "v1",
        "ReplicationController",
        json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}}),
    );
    assert_eq!(rc["spec"]["selector"], json!({"a": "b"}));
    assert_eq!(rc["metadata"]["labels"], json!({"a": "b"}));
    assert_eq!(rc["spec"]["replicas"], 1);
    assert_eq!(defaulted("v1", "Secret", json!({}))["type"], "Opaque");
    let range = defaulted(
        "v1",
        "LimitRange",
        json!({"spec": {"limits": [{"type": "Container",
        "max": {"cpu": "2"}, "min": {"memory": "1Gi"}}]}}),
    );
    let limit = &range["spec"]["limits"][0];
    assert_eq!(limit["default"], json!({"cpu": "2"}));
    assert_eq!(limit["defaultRequest"], json!({"cpu": "2", "memory": "1Gi"}));
    let node = defaulted("v1", "Node", json!({"status": {"capacity": {"pods": "110"}}}));
    assert_eq!(node["status"]["allocatable"], json!({"pods": "110"}));
    let volume = defaulted("v1", "PersistentVolume", json!({"spec": {}}));
    assert_eq!(volume["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(volume["status"]["phase"], "Pending");
}

// kube: networking TestSetDefaultNetworkPolicy, rbac TestSetDefaultSubject, scheduling
// TestSetDefaultPreemptionPolicy, admissionregistration TestDefaultAdmissionWebhook.
#[test]
fn cluster_kinds_get_theirs() {
    let policy = defaulted(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        json!({"spec": {"egress": [{"ports": [{"port": 53}]}]}}),
    );
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(policy["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
    let binding = defaulted(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        json!({"roleRef": {"kind": "Role", "name": "r"},
        "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "s"}]}),
    );
    assert_eq!(binding["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(binding["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert!(binding["subjects"][1].get("apiGroup").is_none());
    let class = defaulted("scheduling.k8s.io/v1", "PriorityClass", json!({"value": 10}));
    assert_eq!(class["preemptionPolicy"], "PreemptLowerPriority");
    let hooks = defaulted(
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
        json!({"webhooks": [
        {"name": "w", "rules": [{"operations": ["CREATE"]}], "clientConfig": {"service": {"name": "s", "namespace": "n"}}}]}),
    );
    let hook = &hooks["webhooks"][0];
    assert_eq!(hook["failurePolicy"], "Fail");
    assert_eq!(hook["reinvocationPolicy"], "Never");
    assert_eq!(hook["rules"][0]["scope"], "*");
    assert_eq!(hook["clientConfig"]["service"]["port"], 443);
    let autoscaler = defaulted(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        json!({"spec": {"maxReplicas": 3}}),
    );
    assert_eq!(autoscaler["spec"]["minReplicas"], 1);
    assert_eq!(
        autoscaler["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        80
    );
}

#[test]
fn custom_resources_and_kinds_without_defaults_are_left_as_they_are() {
    let object = json!({"spec": {"replicas": null}});
    assert_eq!(defaulted("example.com/v1", "Deployment", object.clone()), object);
    assert_eq!(defaulted("v1", "ConfigMap", object.clone()), object);
    let malformed = json!({"spec": "not an object"});
    assert_eq!(defaulted("v1", "Pod", malformed.clone()), malformed);
}

fn new_status(rt: &ResourceType, builtin: bool, mut object: Value, given: GivenStatus) -> Option<Value> {
    set_new_status(rt, builtin, &mut object, given, "2026-01-01T00:00:00Z");
    object.get("status").cloned()
}

fn built_in(api_version: &str, kind: &str) -> ResourceType {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    ResourceType::new(group, version, kind, "things", true).with_status_subresource(true)
}

// kube: the registry strategies' PrepareForCreate (pkg/registry/apps/deployment/strategy.go and
// the like) and apiextensions-apiserver's customResourceStrategy.PrepareForCreate.
#[test]
fn a_client_create_resets_the_status_to_the_kinds_zero_status() {
    let given = json!({"status": {"replicas": 5, "readyReplicas": 5}});
    let reset = |api_version: &str, kind: &str| {
        new_status(
            &built_in(api_version, kind),
            true,
            given.clone(),
            GivenStatus::Reset,
        )
    };
    assert_eq!(reset("apps/v1", "Deployment"), Some(json!({})));
    assert_eq!(reset("apps/v1", "ReplicaSet"), Some(json!({"replicas": 0})));
    assert_eq!(
        reset("apps/v1", "StatefulSet"),
        Some(json!({"replicas": 0, "availableReplicas": 0}))
    );
    assert_eq!(
        reset("apps/v1", "DaemonSet").map(|s| s["numberReady"].clone()),
        Some(json!(0))
    );
    assert_eq!(
        reset("policy/v1", "PodDisruptionBudget").map(|s| s["disruptionsAllowed"].clone()),
        Some(json!(0))
    );
    assert_eq!(reset("v1", "Service"), Some(json!({"loadBalancer": {}})));
    assert_eq!(
        reset("autoscaling/v2", "HorizontalPodAutoscaler"),
        Some(json!({"desiredReplicas": 0}))
    );
    assert_eq!(reset("v1", "Namespace"), Some(json!({"phase": "Active"})));
    assert_eq!(
        reset("v1", "PersistentVolume"),
        Some(json!({"phase": "Pending", "lastPhaseTransitionTime": "2026-01-01T00:00:00Z"}))
    );
    // a node registers with its status
    assert_eq!(reset("v1", "Node"), given.get("status").cloned());
    // a custom resource with a status subresource loses its status; one without keeps it
    let widgets = ResourceType::new("example.com", "v1", "Widget", "widgets", true);
    assert_eq!(
        new_status(
            &widgets.clone().with_status_subresource(true),
            false,
            given.clone(),
            GivenStatus::Reset
        ),
        None
    );
    assert_eq!(
        new_status(&widgets, false, given.clone(), GivenStatus::Reset),
        given.get("status").cloned()
    );
    // a kind without a status subresource is left alone
    let config_maps = ResourceType::new("", "v1", "ConfigMap", "configmaps", true);
    assert_eq!(
        new_status(&config_maps, true, json!({"data": {}}), GivenStatus::Reset),
        None
    );
}

#[test]
fn a_fixture_keeps_its_status_over_the_zero_status() {
    let replica_sets = built_in("apps/v1", "ReplicaSet");
    let kept = new_status(
        &replica_sets,
        true,
        json!({"status": {"readyReplicas": 2}}),
        GivenStatus::Kept,
    );
    assert_eq!(kept, Some(json!({"readyReplicas": 2, "replicas": 0})));
    let unset = new_status(&replica_sets, true, json!({"status": null}), GivenStatus::Kept);
    assert_eq!(unset, Some(json!({"replicas": 0})));
    let widgets =
        ResourceType::new("example.com", "v1", "Widget", "widgets", true).with_status_subresource(true);
    let status = json!({"status": {"ready": true}});
    assert_eq!(
        new_status(&widgets, false, status, GivenStatus::Kept),
        Some(json!({"ready": true}))
    );
    // a pod's status is reset before the create defaults set its phase and QoS class
    let pods = built_in("v1", "Pod");
    let mut pod = json!({"spec": {"containers": []}, "status": {"phase": "Running", "podIP": "10.0.0.1"}});
    set_new_status(&pods, true, &mut pod, GivenStatus::Reset, "now");
    set_create_defaults(&pods, &mut pod);
    assert_eq!(
        pod["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
}
