use std::net::{Ipv4Addr, SocketAddr};

use serde_json::json;

use super::*;
use crate::registry::{Registry, builtin_types};

fn fresh() -> State {
    let mut state = State::new(Registry::with_types(builtin_types()), 1000);
    create_bootstrap_objects(&mut state, SocketAddr::from((Ipv4Addr::LOCALHOST, 4242))).expect("created");
    state
}

fn served(state: &State, group: &str, plural: &str) -> crate::registry::ResourceType {
    state.registry.get(group, "v1", plural).cloned().expect("served")
}

#[test]
fn every_object_is_created_with_a_revision_of_its_own() {
    let state = fresh();
    let count = bootstrap_objects(SocketAddr::from((Ipv4Addr::LOCALHOST, 4242))).len();
    // and each namespace's default ServiceAccount
    let accounts = SYSTEM_NAMESPACES.len();
    assert_eq!(state.store.resource_version(), (count + accounts) as u64);
    let namespaces = served(&state, "", "namespaces");
    let service_accounts = served(&state, "", "serviceaccounts");
    for name in SYSTEM_NAMESPACES {
        let ns = state.get(&namespaces, None, name).expect("namespace");
        assert_eq!(ns["status"]["phase"], "Active");
        assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
        state
            .get(&service_accounts, Some(name), "default")
            .expect("its default ServiceAccount");
    }
}

#[test]
fn the_kubernetes_endpoints_point_at_the_server() {
    let state = fresh();
    let endpoints = state
        .get(&served(&state, "", "endpoints"), Some("default"), "kubernetes")
        .expect("endpoints");
    assert_eq!(
        endpoints["subsets"],
        json!([{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": 4242, "protocol": "TCP"}]}])
    );
    let slice = state
        .get(
            &served(&state, "discovery.k8s.io", "endpointslices"),
            Some("default"),
            "kubernetes",
        )
        .expect("endpoint slice");
    assert_eq!(slice["endpoints"][0]["addresses"], json!(["127.0.0.1"]));
    assert_eq!(slice["ports"][0]["port"], 4242);
}

#[test]
fn resources_the_server_does_not_serve_are_left_out() {
    let types = builtin_types()
        .into_iter()
        .filter(|t| t.plural != "endpointslices")
        .collect();
    let mut state = State::new(Registry::with_types(types), 1000);
    create_bootstrap_objects(&mut state, SocketAddr::from((Ipv4Addr::LOCALHOST, 1))).expect("created");
    assert!(
        state
            .get(&served(&state, "", "services"), Some("default"), "kubernetes")
            .is_ok()
    );
}
