//! The Endpoints and EndpointSlice controllers over HTTP: addresses follow pod readiness.

mod support;

use k8s_openapi::api::{
    core::v1::{Endpoints, Pod, Service},
    discovery::v1::EndpointSlice,
};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams, PostParams},
};
use serde_json::json;
use support::{Kubelet, TestResult, wait_for};

async fn create_service(client: &kube::Client, name: &str) -> Service {
    let service: Service = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"team": "a"}},
        "spec": {
            "selector": {"app": name},
            "ports": [
                {"name": "http", "port": 80, "targetPort": "http"},
                {"name": "metrics", "port": 9090, "targetPort": 9100},
            ],
        },
    }))
    .expect("a valid service");
    let api: Api<Service> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &service)
        .await
        .expect("the service")
}

async fn create_pod(client: &kube::Client, name: &str, app: &str) {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": "app", "ports": [{"name": "http", "containerPort": 8080}]}]},
    }))
    .expect("a valid pod");
    let api: Api<Pod> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &pod).await.expect("the pod");
}

/// The ready and not-ready IPs of the endpoints, and the ports of their first subset.
async fn addresses(
    api: &Api<Endpoints>,
    name: &str,
) -> Option<(Vec<String>, Vec<String>, Vec<(String, i32)>)> {
    let endpoints = api.get_opt(name).await.expect("a get")?;
    let subsets = endpoints.subsets.unwrap_or_default();
    let ips = |list: Option<&Vec<k8s_openapi::api::core::v1::EndpointAddress>>| {
        list.into_iter()
            .flatten()
            .map(|a| a.ip.clone())
            .collect::<Vec<_>>()
    };
    let ready = subsets.iter().flat_map(|s| ips(s.addresses.as_ref())).collect();
    let not_ready = subsets
        .iter()
        .flat_map(|s| ips(s.not_ready_addresses.as_ref()))
        .collect();
    let ports = subsets
        .first()
        .and_then(|s| s.ports.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p.name.unwrap_or_default(), p.port))
        .collect();
    Some((ready, not_ready, ports))
}

async fn slices(client: &kube::Client, service: &str) -> Vec<EndpointSlice> {
    let api: Api<EndpointSlice> = Api::default_namespaced(client.clone());
    let selector = format!("kubernetes.io/service-name={service}");
    api.list(&ListParams::default().labels(&selector))
        .await
        .expect("slices")
        .items
}

/// The (ip, ready) pairs of the service's slices, sorted.
async fn slice_endpoints(client: &kube::Client, service: &str) -> Vec<(String, bool)> {
    let mut found: Vec<(String, bool)> = slices(client, service)
        .await
        .into_iter()
        .flat_map(|slice| slice.endpoints.unwrap_or_default())
        .map(|e| {
            (
                e.addresses[0].clone(),
                e.conditions.and_then(|c| c.ready).unwrap_or(false),
            )
        })
        .collect();
    found.sort();
    found
}

fn ip_of(pod: &Pod) -> String {
    pod.status
        .as_ref()
        .and_then(|s| s.pod_ip.clone())
        .unwrap_or_default()
}

// kube: pkg/controller/endpoint/endpoints_controller_test.go, TestSyncEndpointsItems (ready
// and not-ready addresses, named and numbered ports) and pkg/controller/endpointslice's
// TestSyncServicePodSelection, over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_and_slices_follow_pod_readiness() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let service = create_service(&client, "web").await;
    create_pod(&client, "web-a", "web").await;
    create_pod(&client, "web-b", "web").await;
    create_pod(&client, "other", "db").await;
    let endpoints: Api<Endpoints> = Api::default_namespaced(client.clone());
    wait_for("empty endpoints", async || {
        addresses(&endpoints, "web").await.is_some()
    })
    .await;
    wait_for("a placeholder slice", async || {
        slices(&client, "web").await.len() == 1
    })
    .await;

    let kubelet = Kubelet::new(&client, "default");
    kubelet.run("web-a", true).await;
    kubelet.run("web-b", false).await;
    kubelet.run("other", true).await;
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let (a, b) = (ip_of(&pods.get("web-a").await?), ip_of(&pods.get("web-b").await?));
    let expected = (
        vec![a.clone()],
        vec![b.clone()],
        vec![("http".to_owned(), 8080), ("metrics".to_owned(), 9100)],
    );
    wait_for("one ready, one not", async || {
        addresses(&endpoints, "web").await.as_ref() == Some(&expected)
    })
    .await;
    let mut expected_slices = vec![(a.clone(), true), (b.clone(), false)];
    expected_slices.sort();
    wait_for("the slice's endpoints", async || {
        slice_endpoints(&client, "web").await == expected_slices
    })
    .await;

    let slice = slices(&client, "web").await.remove(0);
    assert_eq!(
        slice
            .labels()
            .get("endpointslice.kubernetes.io/managed-by")
            .map(String::as_str),
        Some("endpointslice-controller.k8s.io")
    );
    assert_eq!(slice.labels().get("team").map(String::as_str), Some("a"));
    assert_eq!(slice.address_type, "IPv4");
    let owner = &slice.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
        ("Service", service.uid().unwrap_or_default().as_str(), Some(true))
    );
    let mut ports: Vec<(Option<String>, Option<i32>)> = slice
        .ports
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p.name, p.port))
        .collect();
    ports.sort();
    assert_eq!(
        ports,
        [
            (Some("http".to_owned()), Some(8080)),
            (Some("metrics".to_owned()), Some(9100))
        ]
    );
    let endpoints_labels = endpoints.get("web").await?.labels().clone();
    assert_eq!(endpoints_labels.get("team").map(String::as_str), Some("a"));

    kubelet.set_ready("web-b", true).await;
    let mut both = vec![a.clone(), b.clone()];
    both.sort();
    wait_for("both ready", async || {
        addresses(&endpoints, "web")
            .await
            .is_some_and(|(ready, not_ready, _)| ready == both && not_ready.is_empty())
    })
    .await;

    pods.delete("web-a", &DeleteParams::default()).await?;
    wait_for("only b", async || {
        addresses(&endpoints, "web")
            .await
            .is_some_and(|(ready, _, _)| ready == [b.clone()])
    })
    .await;
    wait_for("only b in the slice", async || {
        slice_endpoints(&client, "web").await == [(b.clone(), true)]
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}

// kube: endpoints_controller_test.go, TestSyncEndpointsItemsPreserveNoSelector and
// TestSyncServiceNoSelector: services without a selector, such as default/kubernetes, keep
// the endpoints someone else wrote; deleting a service deletes its endpoints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_without_a_selector_are_left_alone() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let endpoints: Api<Endpoints> = Api::default_namespaced(client.clone());
    let kubernetes = endpoints.get("kubernetes").await?;
    let services: Api<Service> = Api::default_namespaced(client.clone());
    let manual: Service =
        serde_json::from_value(json!({"metadata": {"name": "manual"}, "spec": {"ports": [{"port": 80}]}}))?;
    services.create(&PostParams::default(), &manual).await?;
    let written: Endpoints = serde_json::from_value(json!({
        "metadata": {"name": "manual"},
        "subsets": [{"addresses": [{"ip": "192.0.2.1"}], "ports": [{"port": 80}]}],
    }))?;
    let written = endpoints.create(&PostParams::default(), &written).await?;

    // a service with a selector shows that the controllers ran meanwhile
    create_service(&client, "probe").await;
    wait_for("the probe's endpoints", async || {
        addresses(&endpoints, "probe").await.is_some()
    })
    .await;
    wait_for("the probe's slice", async || {
        slices(&client, "probe").await.len() == 1
    })
    .await;
    assert_eq!(
        endpoints.get("kubernetes").await?.resource_version(),
        kubernetes.resource_version()
    );
    assert_eq!(
        endpoints.get("manual").await?.resource_version(),
        written.resource_version()
    );
    assert!(slices(&client, "manual").await.is_empty());

    services.delete("probe", &DeleteParams::default()).await?;
    wait_for("the probe's endpoints deleted", async || {
        addresses(&endpoints, "probe").await.is_none()
    })
    .await;
    wait_for("the probe's slices deleted", async || {
        slices(&client, "probe").await.is_empty()
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}
