//! The sharder against the embedded API server: shards are simulated by their Leases, drains
//! acknowledged by removing the labels as a shard does. Cases after the Go sharder's
//! `sharder` and `shardlease` controllers and its e2e tests.

use std::{collections::BTreeMap, time::Duration};

use informer_testserver::{Failure, TestServer, wait::eventually};
use k8s_openapi::{
    api::{
        coordination::v1::{Lease, LeaseSpec},
        core::v1::{ConfigMap, Secret},
    },
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference},
    jiff::Timestamp,
};
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use serde_json::json;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Sharder;
use crate::{
    leader_election::{Leadership, Term},
    sharding::{
        ControllerRing, RingResource,
        hash_ring::{HashRing, hash_key_for_object},
        labels::{RING_LABEL, SHARDER_IDENTITY, STATE_LABEL, drain_label, shard_label},
    },
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const RING: &str = "replicator";
const NAMESPACE: &str = "default";
const WAIT: Duration = Duration::from_secs(30);
/// The lease duration of a shard that stays ready for the whole test.
const LONG: i32 = 3600;

fn ring() -> ControllerRing {
    ControllerRing::new(RING)
        .and_then(|ring| ring.resource(RingResource::of::<ConfigMap>().controls::<Secret>()))
        .expect("a valid ring")
}

/// A sharder that re-checks on its own only on events (no resync during a test).
fn sharder(server: &TestServer) -> Result<Sharder, Box<dyn std::error::Error>> {
    Ok(Sharder::new(server.client()?, ring())?.resync_period(Duration::from_secs(3600)))
}

/// The Lease of shard `name`: held by `holder`, renewed now, for `seconds`.
fn shard_lease(name: &str, holder: &str, seconds: i32) -> Lease {
    let now = Some(MicroTime(Timestamp::now()));
    Lease {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NAMESPACE.into()),
            labels: Some(BTreeMap::from([(RING_LABEL.to_owned(), RING.to_owned())])),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(seconds),
            acquire_time: now.clone(),
            renew_time: now,
            ..LeaseSpec::default()
        }),
    }
}

fn add_shard(server: &TestServer, name: &str, seconds: i32) -> Result<Lease, Box<dyn std::error::Error>> {
    Ok(server.create_typed(&shard_lease(name, name, seconds))?)
}

fn config_map(name: &str, shard: Option<&str>) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NAMESPACE.into()),
            labels: shard.map(|shard| BTreeMap::from([(shard_label(RING), shard.to_owned())])),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// A secret controlled by the object `kind` `name` of `api_version`.
fn secret(name: &str, controller: Option<(&str, &str, &str)>) -> Secret {
    let owner_references = controller.map(|(api_version, kind, owner)| {
        vec![OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: owner.into(),
            uid: format!("uid-{owner}"),
            controller: Some(true),
            ..OwnerReference::default()
        }]
    });
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NAMESPACE.into()),
            owner_references,
            ..ObjectMeta::default()
        },
        ..Secret::default()
    }
}

/// The shard the ring of `shards` chooses for config map `name`.
fn expected_shard(shards: &[&str], name: &str) -> String {
    shard_for_key(
        shards,
        &hash_key_for_object("", "ConfigMap", Some(NAMESPACE), name),
    )
}

/// The shard the ring of `shards` chooses for hash key `key`.
fn shard_for_key(shards: &[&str], key: &str) -> String {
    HashRing::new(shards.iter().copied())
        .lookup(key)
        .expect("a shard")
        .to_owned()
}

fn labels(server: &TestServer, kind: &str, name: &str) -> BTreeMap<String, String> {
    let object = server
        .get("v1", kind, Some(NAMESPACE), name)
        .expect("the object exists");
    serde_json::from_value(object["metadata"]["labels"].clone()).unwrap_or_default()
}

fn shard_of(server: &TestServer, kind: &str, name: &str) -> Option<String> {
    labels(server, kind, name).get(&shard_label(RING)).cloned()
}

fn is_drained(server: &TestServer, name: &str) -> bool {
    labels(server, "ConfigMap", name).contains_key(&drain_label(RING))
}

fn lease_on_server(server: &TestServer, name: &str) -> Option<Lease> {
    let lease = server
        .get("coordination.k8s.io/v1", "Lease", Some(NAMESPACE), name)
        .ok()?;
    serde_json::from_value(lease).ok()
}

/// A sharder running in a task until stopped.
struct Running {
    stop: CancellationToken,
    task: JoinHandle<super::Result<()>>,
}

impl Running {
    fn start(sharder: &Sharder) -> Self {
        let stop = CancellationToken::new();
        let (sharder, until) = (sharder.clone(), stop.clone());
        let task = tokio::spawn(async move { sharder.run_until(until).await });
        Self { stop, task }
    }

    async fn stop(self) -> TestResult {
        self.stop.cancel();
        self.task.await??;
        Ok(())
    }
}

/// Removes both labels of config map `name`, as its shard does when it lets it go.
async fn acknowledge_drain(client: &kube::Client, name: &str) -> TestResult {
    let patch = json!({"metadata": {"labels": {shard_label(RING): null, drain_label(RING): null}}});
    Api::<ConfigMap>::namespaced(client.clone(), NAMESPACE)
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await?;
    Ok(())
}

fn names(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|index| format!("{prefix}-{index}")).collect()
}

/// Go e2e "should assign the main object to a healthy shard" and "should assign the
/// controlled object to the same shard": objects created before and after the start are
/// assigned, controlled secrets follow their controller (a config map, or an object of a kind
/// outside the ring, as Go's `key.ForController` keys it), secrets without one stay
/// unassigned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_objects_are_assigned_and_controlled_objects_follow_their_controller() -> TestResult {
    let server = TestServer::start().await?;
    let shards = ["shard-a", "shard-b"];
    for shard in shards {
        add_shard(&server, shard, LONG)?;
    }
    let (before, after) = (names("early", 10), names("late", 10));
    for name in &before {
        server.create_typed(&config_map(name, None))?;
    }
    server.create_typed(&secret("loose", None))?;
    server.create_typed(&secret("foreign", Some(("apps/v1", "Deployment", "early-0"))))?;
    let sharder = sharder(&server)?;
    let running = Running::start(&sharder);
    for name in &after {
        server.create_typed(&config_map(name, None))?;
        server.create_typed(&secret(
            &format!("{name}-secret"),
            Some(("v1", "ConfigMap", name)),
        ))?;
    }
    let all: Vec<&String> = before.iter().chain(&after).collect();
    eventually("every config map and controlled secret assigned", WAIT, || {
        all.iter().all(|name| {
            let expected = expected_shard(&shards, name);
            let secret_ok = !name.starts_with("late")
                || shard_of(&server, "Secret", &format!("{name}-secret")).as_ref() == Some(&expected);
            shard_of(&server, "ConfigMap", name).as_ref() == Some(&expected) && secret_ok
        })
    })
    .await?;
    let foreign_key = hash_key_for_object("apps", "Deployment", Some(NAMESPACE), "early-0");
    eventually("the secret of a foreign controller assigned", WAIT, || {
        shard_of(&server, "Secret", "foreign") == Some(shard_for_key(&shards, &foreign_key))
    })
    .await?;
    eventually("31 assignments counted", WAIT, || sharder.stats().assigned == 31).await?;
    assert_eq!(sharder.stats().ring_members, 2);
    assert_eq!(
        server.request_count("patch", "secrets"),
        11,
        "only the controlled secrets are patched"
    );
    assert_eq!(shard_of(&server, "Secret", "loose"), None);
    eventually("shard Leases labelled ready", WAIT, || {
        shards.iter().all(|shard| {
            lease_on_server(&server, shard)
                .and_then(|lease| lease.metadata.labels?.get(STATE_LABEL).cloned())
                .as_deref()
                == Some("ready")
        })
    })
    .await?;
    running.stop().await
}

/// Go e2e "should drain and move objects to the new shard" (scale-out): only the objects the
/// new ring gives the joining shard are drained; each is assigned to it after its old shard
/// acknowledged; controlled secrets move at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_joining_shard_drains_only_the_moving_objects_and_gets_them_after_the_ack() -> TestResult {
    let server = TestServer::start().await?;
    let client = server.client()?;
    let (old, new) = (["shard-a", "shard-b"], ["shard-a", "shard-b", "shard-c"]);
    for shard in old {
        add_shard(&server, shard, LONG)?;
    }
    let objects = names("cm", 30);
    for name in &objects {
        server.create_typed(&config_map(name, Some(&expected_shard(&old, name))))?;
        server.create_typed(&secret(
            &format!("{name}-secret"),
            Some(("v1", "ConfigMap", name)),
        ))?;
    }
    let (moving, staying): (Vec<&String>, Vec<&String>) = objects
        .iter()
        .partition(|name| expected_shard(&new, name) == "shard-c");
    assert!(!moving.is_empty() && !staying.is_empty(), "the test needs both");
    let sharder = sharder(&server)?;
    let running = Running::start(&sharder);
    eventually("the secrets assigned as their config maps", WAIT, || {
        objects.iter().all(|name| {
            shard_of(&server, "Secret", &format!("{name}-secret")) == Some(expected_shard(&old, name))
        })
    })
    .await?;

    add_shard(&server, "shard-c", LONG)?;
    eventually("the moving config maps drained", WAIT, || {
        moving.iter().all(|name| is_drained(&server, name))
    })
    .await?;
    for name in &moving {
        assert_eq!(
            shard_of(&server, "ConfigMap", name),
            Some(expected_shard(&old, name)),
            "{name} left before its ack"
        );
    }
    for name in &staying {
        assert!(!is_drained(&server, name), "{name} stays and must not be drained");
    }
    eventually("the controlled secrets moved at once", WAIT, || {
        moving
            .iter()
            .all(|name| shard_of(&server, "Secret", &format!("{name}-secret")).as_deref() == Some("shard-c"))
    })
    .await?;

    for name in &moving {
        acknowledge_drain(&client, name).await?;
    }
    eventually("the drained config maps assigned to the new shard", WAIT, || {
        moving.iter().all(|name| {
            shard_of(&server, "ConfigMap", name).as_deref() == Some("shard-c") && !is_drained(&server, name)
        })
    })
    .await?;
    let stats = sharder.stats();
    assert_eq!(
        (stats.drains, stats.ring_members),
        (moving.len() as u64, 3),
        "{stats:?}"
    );
    running.stop().await
}

/// Twenty ConfigMaps, each created on its shard of `shards`.
fn assigned_objects(server: &TestServer, shards: &[&str]) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let objects = names("cm", 20);
    for name in &objects {
        server.create_typed(&config_map(name, Some(&expected_shard(shards, name))))?;
    }
    Ok(objects)
}

/// The names of `objects` on `shard` of `shards` (at least one).
fn on_shard<'a>(objects: &'a [String], shards: &[&str], shard: &str) -> Vec<&'a String> {
    let on: Vec<&String> = objects
        .iter()
        .filter(|name| expected_shard(shards, name) == shard)
        .collect();
    assert!(!on.is_empty(), "no object on {shard}");
    on
}

/// Waits until every object of `moving` is on `to`, failing if any moved off `from` while its
/// Lease was not held by the sharder.
async fn moved_only_while_held(server: &TestServer, moving: &[&String], from: &str, to: &str) -> TestResult {
    let mut moved_while_held_by = Vec::new();
    eventually("the objects of the dead shard moved", WAIT, || {
        let moved = moving
            .iter()
            .filter(|name| shard_of(server, "ConfigMap", name).as_deref() == Some(to))
            .count();
        // read after the objects: a Lease the sharder never took means a move came first;
        // one it took and already gave back (empty holder, a transition) is not a violation
        let spec = lease_on_server(server, from)
            .and_then(|lease| lease.spec)
            .unwrap_or_default();
        let holder = spec.holder_identity.unwrap_or_default();
        let taken =
            holder == SHARDER_IDENTITY || (holder.is_empty() && spec.lease_transitions.unwrap_or(0) > 0);
        if moved > 0 && !taken {
            moved_while_held_by.push(holder);
        }
        moved == moving.len()
    })
    .await?;
    assert!(
        moved_while_held_by.is_empty(),
        "objects moved while the Lease was held by {moved_while_held_by:?}"
    );
    Ok(())
}

/// Go e2e "should move objects of a shard that released its lease": a released Lease (empty
/// holder) makes the shard dead, and its objects move without a drain. Beyond Go, the sharder
/// takes the released Lease before the first object moves: the shard could otherwise take it
/// back at once (a restart under the same name) and reconcile an object that is moving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_lease_is_taken_then_its_objects_move_at_once() -> TestResult {
    let server = TestServer::start().await?;
    let shards = ["shard-a", "shard-b"];
    add_shard(&server, "shard-a", LONG)?;
    add_shard(&server, "shard-b", LONG)?;
    let objects = assigned_objects(&server, &shards)?;
    let on_b = on_shard(&objects, &shards, "shard-b");
    let sharder = sharder(&server)?;
    let running = Running::start(&sharder);
    eventually("the sharder sees both shards", WAIT, || {
        sharder.stats().ring_members == 2
    })
    .await?;

    let release = json!({"spec": {"holderIdentity": ""}});
    Api::<Lease>::namespaced(server.client()?, NAMESPACE)
        .patch("shard-b", &PatchParams::default(), &Patch::Merge(release))
        .await?;
    moved_only_while_held(&server, &on_b, "shard-b", "shard-a").await?;
    assert!(objects.iter().all(|name| !is_drained(&server, name)));
    eventually("the moves counted", WAIT, || {
        sharder.stats().moves == on_b.len() as u64
    })
    .await?;
    assert_eq!(sharder.stats().drains, 0);
    assert_eq!(sharder.stats().lease_acquisitions, 1);
    // every object moved: the Lease is given back, so the shard, back under the same name,
    // takes it at once instead of waiting for the sharder's hold to run out
    eventually("the Lease given back", WAIT, || {
        sharder.stats().lease_hand_backs == 1
    })
    .await?;
    let holder = lease_on_server(&server, "shard-b").and_then(|lease| lease.spec?.holder_identity);
    assert_eq!(holder.as_deref(), Some(""));
    let back = json!({"spec": {
        "holderIdentity": "shard-b",
        "leaseDurationSeconds": LONG,
        "renewTime": MicroTime(Timestamp::now()),
        "acquireTime": MicroTime(Timestamp::now()),
    }});
    Api::<Lease>::namespaced(server.client()?, NAMESPACE)
        .patch("shard-b", &PatchParams::default(), &Patch::Merge(back))
        .await?;
    // its objects come back through drains off the live shard they moved to
    let client = server.client()?;
    for name in &on_b {
        eventually("drained off shard-a", WAIT, || is_drained(&server, name)).await?;
        acknowledge_drain(&client, name).await?;
    }
    eventually("the objects back on shard-b", WAIT, || {
        on_b.iter()
            .all(|name| shard_of(&server, "ConfigMap", name).as_deref() == Some("shard-b"))
    })
    .await?;
    running.stop().await
}

/// A released Lease of a shard that has no objects is left alone: nothing moves, so nothing
/// needs the sharder's hold, and the shard can come back under the same name at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_lease_without_objects_is_not_taken() -> TestResult {
    let server = TestServer::start().await?;
    add_shard(&server, "shard-a", LONG)?;
    let mut released = shard_lease("shard-b", "", LONG);
    if let Some(spec) = released.spec.as_mut() {
        spec.lease_duration_seconds = Some(1);
    }
    server.create_typed(&released)?;
    server.create_typed(&config_map("settings", None))?;
    let sharder = sharder(&server)?;
    let running = Running::start(&sharder);
    eventually("the config map assigned", WAIT, || {
        shard_of(&server, "ConfigMap", "settings").as_deref() == Some("shard-a")
    })
    .await?;
    eventually("shard-b labelled dead", WAIT, || {
        lease_on_server(&server, "shard-b")
            .and_then(|lease| lease.metadata.labels?.get(STATE_LABEL).cloned())
            .as_deref()
            == Some("dead")
    })
    .await?;
    let holder = lease_on_server(&server, "shard-b").and_then(|lease| lease.spec?.holder_identity);
    assert_eq!(holder.as_deref(), Some(""));
    assert_eq!(sharder.stats().lease_acquisitions, 0);
    running.stop().await
}

/// Go's sharder reads the shard Leases labelled for the ring in every namespace: a shard
/// holding its Lease in another namespace than the sharder's gets objects;
/// `lease_namespace` narrows the sharder to one namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shard_leases_are_read_in_every_namespace() -> TestResult {
    let server = TestServer::start().await?;
    server.create_namespace("controllers")?;
    let mut lease = shard_lease("shard-x", "shard-x", LONG);
    lease.metadata.namespace = Some("controllers".into());
    server.create_typed(&lease)?;
    server.create_typed(&config_map("settings", None))?;
    let narrowed = sharder(&server)?.lease_namespace(NAMESPACE)?;
    let running = Running::start(&narrowed);
    eventually("the narrowed sharder synced", WAIT, || {
        narrowed.stats().ring_members == 0
    })
    .await?;
    running.stop().await?;
    assert_eq!(
        shard_of(&server, "ConfigMap", "settings"),
        None,
        "no shard in `default`"
    );
    let sharder = sharder(&server)?;
    let running = Running::start(&sharder);
    eventually(
        "the config map assigned to the shard in `controllers`",
        WAIT,
        || shard_of(&server, "ConfigMap", "settings").as_deref() == Some("shard-x"),
    )
    .await?;
    eventually("its Lease labelled ready", WAIT, || {
        let lease = server
            .get("coordination.k8s.io/v1", "Lease", Some("controllers"), "shard-x")
            .ok();
        lease
            .and_then(|lease| {
                lease["metadata"]["labels"][STATE_LABEL]
                    .as_str()
                    .map(str::to_owned)
            })
            .as_deref()
            == Some("ready")
    })
    .await?;
    running.stop().await
}

/// Go shardlease "Uncertain: should acquire the lease" and e2e "should move objects of a
/// shard whose lease expired": the sharder acquires the expired Lease (twice its duration, one
/// more transition) and only then moves the shard's objects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_lease_is_acquired_before_its_objects_move() -> TestResult {
    let server = TestServer::start().await?;
    let shards = ["shard-a", "shard-b"];
    add_shard(&server, "shard-a", LONG)?;
    add_shard(&server, "shard-b", 1)?;
    let objects = assigned_objects(&server, &shards)?;
    let on_b = on_shard(&objects, &shards, "shard-b");
    let sharder = sharder(&server)?;
    let running = Running::start(&sharder);
    moved_only_while_held(&server, &on_b, "shard-b", "shard-a").await?;
    // held for twice the shard's duration, one more transition, until every object moved;
    // then given back, written as a released Lease
    eventually("the Lease given back", WAIT, || {
        sharder.stats().lease_hand_backs == 1
    })
    .await?;
    let lease = lease_on_server(&server, "shard-b").expect("the Lease is kept until orphaned");
    let spec = lease.spec.expect("spec");
    assert_eq!(spec.holder_identity.as_deref(), Some(""));
    assert_eq!(spec.lease_duration_seconds, Some(1));
    assert_eq!(spec.lease_transitions, Some(1));
    eventually("the Lease labelled dead", WAIT, || {
        lease_on_server(&server, "shard-b")
            .and_then(|lease| lease.metadata.labels?.get(STATE_LABEL).cloned())
            .as_deref()
            == Some("dead")
    })
    .await?;
    eventually("the acquisition counted", WAIT, || {
        sharder.stats().lease_acquisitions == 1
    })
    .await?;
    running.stop().await
}

/// Go shardlease "Orphaned: should delete the lease".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphaned_leases_are_deleted() -> TestResult {
    let server = TestServer::start().await?;
    add_shard(&server, "shard-a", LONG)?;
    server.create_typed(&shard_lease("shard-gone", "", 1))?;
    let sharder = sharder(&server)?.orphan_after(Duration::from_secs(1));
    let running = Running::start(&sharder);
    eventually("the orphaned Lease deleted", WAIT, || {
        lease_on_server(&server, "shard-gone").is_none()
    })
    .await?;
    assert!(
        lease_on_server(&server, "shard-a").is_some(),
        "a ready shard's Lease is kept"
    );
    eventually("the deletion counted", WAIT, || {
        sharder.stats().orphans_deleted == 1
    })
    .await?;
    running.stop().await
}

/// A label patch answered 409 is checked again and retried; the server refuses a merge patch
/// whose `metadata.resourceVersion` is stale, which is what makes the sharder's writes safe.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflicting_label_patch_is_retried() -> TestResult {
    let server = TestServer::start().await?;
    add_shard(&server, "shard-a", LONG)?;
    let created = server.create_typed(&config_map("settings", None))?;
    let stale = json!({"metadata": {"resourceVersion": "1", "labels": {shard_label(RING): "shard-x"}}});
    let api = Api::<ConfigMap>::namespaced(server.client()?, NAMESPACE);
    let error = api
        .patch("settings", &PatchParams::default(), &Patch::Merge(stale))
        .await
        .expect_err("a stale resourceVersion is refused");
    assert!(
        matches!(&error, kube::Error::Api(status) if status.code == 409),
        "{error}"
    );
    assert_ne!(created.metadata.resource_version.as_deref(), Some("1"));

    server.fail_next(Failure::new(409).verb("patch").resource("configmaps").times(2));
    let sharder = sharder(&server)?;
    let running = Running::start(&sharder);
    eventually("the config map assigned", WAIT, || {
        shard_of(&server, "ConfigMap", "settings").as_deref() == Some("shard-a")
    })
    .await?;
    eventually("the assignment counted", WAIT, || sharder.stats().assigned == 1).await?;
    let stats = sharder.stats();
    assert_eq!((stats.conflicts, stats.errors), (2, 0), "{stats:?}");
    assert_eq!(
        server.request_count("patch", "configmaps"),
        1 + 2 + 1,
        "the stale patch, the 2 refused, the one that went through"
    );
    running.stop().await
}

/// A sharder whose leadership is no longer current writes nothing: no label, no Lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deposed_sharder_writes_nothing() -> TestResult {
    let server = TestServer::start().await?;
    add_shard(&server, "shard-a", LONG)?;
    for name in names("cm", 5) {
        server.create_typed(&config_map(&name, None))?;
    }
    let sharder = sharder(&server)?;
    let deposed = Leadership::new(
        Term {
            transitions: 3,
            holder: "sharder-0".into(),
        },
        tokio::time::Instant::now(),
    );
    let stop = CancellationToken::new();
    let term = tokio::spawn({
        let (sharder, stop) = (sharder.clone(), stop.clone());
        async move { sharder.run_term(stop, Some(deposed)).await }
    });
    // the ring is computed once the caches synced; the objects would be assigned right after
    eventually("the sharder's caches synced", WAIT, || {
        sharder.stats().ring_members == 1
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(server.request_count("patch", "configmaps"), 0);
    assert_eq!(server.request_count("patch", "leases"), 0);
    assert!(
        names("cm", 5)
            .iter()
            .all(|name| shard_of(&server, "ConfigMap", name).is_none())
    );
    stop.cancel();
    term.await??;
    Ok(())
}

/// A sharder that elects itself acts once it holds its election Lease, and releases it on
/// shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_elected_sharder_acts_while_it_leads() -> TestResult {
    let server = TestServer::start().await?;
    add_shard(&server, "shard-a", LONG)?;
    server.create_typed(&config_map("settings", None))?;
    let election = crate::leader_election::Config::new("replicator-sharder", NAMESPACE, "sharder-0")
        .lease_duration(Duration::from_secs(2))
        .renew_deadline(Duration::from_secs(1))
        .retry_period(Duration::from_millis(200))
        .release_on_cancel(true);
    let sharder = sharder(&server)?.leader_election(election);
    let running = Running::start(&sharder);
    eventually("the config map assigned", WAIT, || {
        shard_of(&server, "ConfigMap", "settings").as_deref() == Some("shard-a")
    })
    .await?;
    let holder = |server: &TestServer| {
        lease_on_server(server, "replicator-sharder")
            .and_then(|lease| lease.spec?.holder_identity)
            .unwrap_or_default()
    };
    assert_eq!(holder(&server), "sharder-0");
    running.stop().await?;
    assert_eq!(holder(&server), "", "the election Lease is released on shutdown");
    Ok(())
}

/// A namespace `name` with `labels` (and `kubernetes.io/metadata.name`, which the server sets).
fn namespace(name: &str, labels: &[(&str, &str)]) -> k8s_openapi::api::core::v1::Namespace {
    k8s_openapi::api::core::v1::Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        ..Default::default()
    }
}

/// A config map `name` in `namespace` with the label `app`.
fn app_config_map(namespace: &str, name: &str, app: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some(BTreeMap::from([("app".to_owned(), app.to_owned())])),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn labels_in(server: &TestServer, kind: &str, namespace: &str, name: &str) -> BTreeMap<String, String> {
    let object = server
        .get("v1", kind, Some(namespace), name)
        .expect("the object exists");
    serde_json::from_value(object["metadata"]["labels"].clone()).unwrap_or_default()
}

fn shard_in(server: &TestServer, kind: &str, namespace: &str, name: &str) -> Option<String> {
    labels_in(server, kind, namespace, name)
        .get(&shard_label(RING))
        .cloned()
}

/// By default a ring holds every namespace but `kube-system` and `sharding-system`, as the Go
/// sharder's default webhook namespace selector does: objects there are never labelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_ring_leaves_kube_system_and_sharding_system_alone() -> TestResult {
    let server = TestServer::start().await?;
    server.create_namespace("sharding-system")?;
    add_shard(&server, "shard-a", LONG)?;
    for namespace in ["kube-system", "sharding-system", NAMESPACE] {
        server.create_typed(&app_config_map(namespace, "settings", "web"))?;
    }
    let sharder = sharder(&server)?;
    let running = Running::start(&sharder);
    eventually("the config map in default assigned", WAIT, || {
        shard_in(&server, "ConfigMap", NAMESPACE, "settings").is_some()
    })
    .await?;
    // a later object in `default` is assigned too: by then the others had their chance
    server.create_typed(&app_config_map(NAMESPACE, "later", "web"))?;
    eventually("the later config map assigned", WAIT, || {
        shard_in(&server, "ConfigMap", NAMESPACE, "later").is_some()
    })
    .await?;
    assert_eq!(shard_in(&server, "ConfigMap", "kube-system", "settings"), None);
    assert_eq!(
        shard_in(&server, "ConfigMap", "sharding-system", "settings"),
        None
    );
    assert_eq!(
        ring().manifest()["spec"]["namespaceSelector"],
        json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "sharding-system"]}]})
    );
    running.stop().await
}

/// A ring with a namespace selector and an object selector: only the objects in selected
/// namespaces (and, of the ring resource, with selected labels) are assigned; an object that
/// leaves the ring is drained off its live shard and then left unlabelled, a controlled object
/// that leaves is unlabelled at once; a namespace that joins brings its objects in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ring_assigns_only_what_its_selectors_hold_and_lets_go_of_what_leaves() -> TestResult {
    let server = TestServer::start().await?;
    let client = server.client()?;
    server.create_typed(&namespace("shop", &[("team", "payments")]))?;
    server.create_typed(&namespace("lab", &[("team", "research")]))?;
    add_shard(&server, "shard-a", LONG)?;
    for namespace in ["shop", "lab"] {
        for (name, app) in [("web", "web"), ("db", "db")] {
            server.create_typed(&app_config_map(namespace, name, app))?;
        }
    }
    let mut child = secret("web-secret", Some(("v1", "ConfigMap", "web")));
    child.metadata.namespace = Some("shop".into());
    server.create_typed(&child)?;
    let ring = ControllerRing::new(RING)?
        .resource(
            RingResource::of::<ConfigMap>()
                .labels("app=web")?
                .controls::<Secret>(),
        )?
        .namespace_selector("team=payments")?;
    assert_eq!(
        ring.manifest()["spec"]["namespaceSelector"],
        json!({"matchLabels": {"team": "payments"}})
    );
    let sharder = Sharder::new(client.clone(), ring)?.resync_period(Duration::from_secs(3600));
    let running = Running::start(&sharder);
    eventually("shop/web and its secret assigned", WAIT, || {
        shard_in(&server, "ConfigMap", "shop", "web").is_some()
            && shard_in(&server, "Secret", "shop", "web-secret").is_some()
    })
    .await?;
    for (namespace, name) in [("shop", "db"), ("lab", "web"), ("lab", "db")] {
        assert_eq!(
            shard_in(&server, "ConfigMap", namespace, name),
            None,
            "{namespace}/{name}"
        );
    }
    // shop/web stops matching the object selector: drained off its live shard first
    let relabel = json!({"metadata": {"labels": {"app": "db"}}});
    Api::<ConfigMap>::namespaced(client.clone(), "shop")
        .patch("web", &PatchParams::default(), &Patch::Merge(&relabel))
        .await?;
    eventually("shop/web drained", WAIT, || {
        labels_in(&server, "ConfigMap", "shop", "web").contains_key(&drain_label(RING))
    })
    .await?;
    let acknowledge = json!({"metadata": {"labels": {shard_label(RING): null, drain_label(RING): null}}});
    Api::<ConfigMap>::namespaced(client.clone(), "shop")
        .patch("web", &PatchParams::default(), &Patch::Merge(&acknowledge))
        .await?;
    // `lab` joins the ring: its web config map is assigned
    let mut lab = server.get("v1", "Namespace", None, "lab")?;
    lab["metadata"]["labels"]["team"] = json!("payments");
    server.update(lab)?;
    eventually("lab/web assigned once its namespace joined", WAIT, || {
        shard_in(&server, "ConfigMap", "lab", "web").is_some()
    })
    .await?;
    assert_eq!(
        shard_in(&server, "ConfigMap", "shop", "web"),
        None,
        "it left the ring and stays unlabelled"
    );
    // `shop` leaves the ring: its controlled secret (whose controller left) is unlabelled at once
    let mut shop = server.get("v1", "Namespace", None, "shop")?;
    shop["metadata"]["labels"]["team"] = json!("retail");
    server.update(shop)?;
    eventually("shop/web-secret unlabelled", WAIT, || {
        shard_in(&server, "Secret", "shop", "web-secret").is_none()
    })
    .await?;
    assert!(!labels_in(&server, "Secret", "shop", "web-secret").contains_key(&drain_label(RING)));
    // counted once the API server's answer reaches the sharder, maybe after the labels are gone
    eventually("the unassignment counted", WAIT, || {
        sharder.stats().unassigned >= 1
    })
    .await?;
    assert_eq!(sharder.stats().unassigned, 1);
    assert_eq!(sharder.stats().drains, 1);
    running.stop().await
}
