//! The settle check on a server's store set by hand: Leases and objects as the shards and the
//! sharder leave them, and what the check finds.

use std::collections::BTreeMap;

use crate::sharding::{
    ControllerRing, RingResource,
    hash_ring::{DEFAULT_VIRTUAL_NODES, hash_key_for_object},
};
use k8s_openapi::{
    api::{
        coordination::v1::{Lease, LeaseSpec},
        core::v1::{ConfigMap, Secret},
    },
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference},
};

use super::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const RING: &str = "configmaps";

fn view() -> Result<RingView, Box<dyn std::error::Error>> {
    let ring = ControllerRing::new(RING)?.resource(RingResource::of::<ConfigMap>().controls::<Secret>())?;
    Ok(RingView::new(Arc::new(ring), "default", DEFAULT_VIRTUAL_NODES))
}

/// The Lease of `shard`, held by `holder` and renewed now, which the sharder labelled
/// `state` (`None`: not labelled yet).
fn lease(shard: &str, holder: &str, state: Option<&str>) -> Lease {
    let mut labels = BTreeMap::from([(RING_LABEL.to_owned(), RING.to_owned())]);
    if let Some(state) = state {
        labels.insert(STATE_LABEL.to_owned(), state.to_owned());
    }
    let now = MicroTime(Timestamp::now());
    Lease {
        metadata: ObjectMeta {
            name: Some(shard.into()),
            namespace: Some("default".into()),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(10),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            ..LeaseSpec::default()
        }),
    }
}

/// Metadata of an object in `namespace` with `labels`.
fn metadata(name: &str, namespace: &str, labels: &[(String, &str)]) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(namespace.into()),
        labels: Some(
            labels
                .iter()
                .map(|(key, value)| (key.clone(), (*value).to_owned()))
                .collect(),
        ),
        ..ObjectMeta::default()
    }
}

fn config_map(name: &str, namespace: &str, labels: &[(String, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: metadata(name, namespace, labels),
        ..ConfigMap::default()
    }
}

/// The shard the ring of `live` shards puts the config map `name` in `default` on.
fn placed(live: &[&str], name: &str) -> String {
    let ring = HashRing::with_virtual_nodes(DEFAULT_VIRTUAL_NODES, live.iter().copied());
    let key = hash_key_for_object("", "ConfigMap", Some("default"), name);
    ring.lookup(&key).unwrap_or_default().to_owned()
}

/// A server where shard-0 and shard-1 hold their Leases (the sharder saw both ready) and the
/// config maps `names` are on the shards the ring of both puts them on.
async fn settled_server(names: &[&str]) -> Result<TestServer, Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    for shard in ["shard-0", "shard-1"] {
        server.create_typed(&lease(shard, shard, Some("ready")))?;
    }
    for name in names {
        let shard = placed(&["shard-0", "shard-1"], name);
        server.create_typed(&config_map(name, "default", &[(shard_label(RING), &shard)]))?;
    }
    Ok(server)
}

#[tokio::test]
async fn a_ring_whose_objects_are_where_the_live_shards_ring_puts_them_is_settled() -> TestResult {
    let server = settled_server(&["a", "b", "c", "d"]).await?;
    // outside the ring (kube-system is not selected), and unassigned: as it should be
    server.create_typed(&config_map("system", "kube-system", &[]))?;
    // a controlled object without a controller is not assigned either
    server.create_typed(&Secret {
        metadata: metadata("loose", "default", &[]),
        ..Secret::default()
    })?;
    let problems = view()?.problems(&server, &["shard-0", "shard-1"])?;
    assert_eq!(problems, []);
    Ok(())
}

#[tokio::test]
async fn objects_unassigned_drained_on_dead_shards_or_misplaced_are_named() -> TestResult {
    let server = settled_server(&[]).await?;
    let (on_0, on_1) = (
        placed(&["shard-0", "shard-1"], "a"),
        placed(&["shard-0", "shard-1"], "b"),
    );
    let other = |shard: &str| if shard == "shard-0" { "shard-1" } else { "shard-0" };
    server.create_typed(&config_map("a", "default", &[(shard_label(RING), other(&on_0))]))?;
    server.create_typed(&config_map(
        "b",
        "default",
        &[(shard_label(RING), &on_1), (drain_label(RING), "true")],
    ))?;
    server.create_typed(&config_map("c", "default", &[]))?;
    server.create_typed(&config_map("d", "default", &[(shard_label(RING), "shard-9")]))?;
    server.create_typed(&config_map("e", "kube-system", &[(shard_label(RING), "shard-0")]))?;
    let problems = view()?.problems(&server, &["shard-0", "shard-1"])?;
    assert_eq!(
        problems,
        [
            Problem::Misplaced {
                object: "configmaps default/a".into(),
                shard: other(&on_0).into(),
                expected: Some(on_0.clone()),
            },
            Problem::Drained {
                object: "configmaps default/b".into(),
                shard: on_1.clone(),
            },
            Problem::Unassigned {
                object: "configmaps default/c".into(),
            },
            Problem::OnDeadShard {
                object: "configmaps default/d".into(),
                shard: "shard-9".into(),
            },
            Problem::LabelledOutsideRing {
                object: "configmaps kube-system/e".into(),
                shard: "shard-0".into(),
            },
        ]
    );
    Ok(())
}

#[tokio::test]
async fn a_controlled_object_belongs_on_its_controllers_shard() -> TestResult {
    let server = settled_server(&["owner"]).await?;
    let owner_shard = placed(&["shard-0", "shard-1"], "owner");
    let elsewhere = if owner_shard == "shard-0" {
        "shard-1"
    } else {
        "shard-0"
    };
    let mut secret = Secret {
        metadata: metadata("child", "default", &[(shard_label(RING), elsewhere)]),
        ..Secret::default()
    };
    let owner: ConfigMap =
        serde_json::from_value(server.get("v1", "ConfigMap", Some("default"), "owner")?)?;
    secret.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: "owner".into(),
        uid: owner.metadata.uid.unwrap_or_default(),
        controller: Some(true),
        ..OwnerReference::default()
    }]);
    server.create_typed(&secret)?;
    let problems = view()?.problems(&server, &["shard-0", "shard-1"])?;
    assert_eq!(
        problems,
        [Problem::Misplaced {
            object: "secrets default/child".into(),
            shard: elsewhere.into(),
            expected: Some(owner_shard),
        }]
    );
    Ok(())
}

#[tokio::test]
async fn running_replicas_that_do_not_hold_a_lease_the_sharder_saw_are_not_live() -> TestResult {
    let server = TestServer::start().await?;
    server.create_typed(&lease("shard-0", "shard-0", None))?;
    server.create_typed(&lease("shard-1", "shardlease-controller", Some("dead")))?;
    server.create_typed(&lease("shard-3", "shard-3", Some("ready")))?;
    // a replica that does not run, which the sharder still counts
    server.create_typed(&lease("shard-4", "shard-4", Some("expired")))?;
    // one the sharder declared dead: no problem
    server.create_typed(&lease("shard-5", "shardlease-controller", Some("dead")))?;
    let running = ["shard-0", "shard-1", "shard-2", "shard-3"];
    let problems = view()?.problems(&server, &running)?;
    let described: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        described,
        [
            "replica shard-0 runs but is not a live shard: the sharder has not seen it hold its Lease yet (state label \"\")",
            "replica shard-1 runs but is not a live shard: its Lease is dead (holder \"shardlease-controller\")",
            "replica shard-2 runs but is not a live shard: it has no Lease",
            "replica shard-4 does not run, but the sharder still labels its Lease expired",
        ]
    );
    Ok(())
}

#[tokio::test]
async fn a_resource_the_server_does_not_serve_is_a_read_error_naming_it() -> TestResult {
    // a beta type: the server serves the GA group versions only
    use k8s_openapi::api::coordination::v1beta1::LeaseCandidate;

    let server = TestServer::start().await?;
    let ring = ControllerRing::new("candidates")?.resource(RingResource::of::<LeaseCandidate>())?;
    let view = RingView::new(Arc::new(ring), "default", DEFAULT_VIRTUAL_NODES);
    let error = view
        .problems(&server, &[])
        .expect_err("lease candidates are not served");
    assert!(
        matches!(&error, ReplicasError::Read { what, .. } if what == "leasecandidates"),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("failed to read leasecandidates from the test server: "),
        "{error}"
    );
    Ok(())
}
