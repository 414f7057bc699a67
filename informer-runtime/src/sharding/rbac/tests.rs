//! The rendered RBAC of a ring: every rule of every object, the objects created over HTTP on
//! the test server, and every request of running shards and sharders allowed by them.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use informer_testserver::{TestServer, wait::eventually};
use k8s_openapi::{
    api::{
        apps::v1::{Deployment, ReplicaSet},
        core::v1::{ConfigMap, Namespace, Pod, Secret},
        rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding},
    },
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};
use kube::api::{Api, PostParams};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::RingRbac;
use crate::{
    controller::{Action, Controller},
    leader_election,
    manager::Manager,
    sharding::{
        ControllerRing, RingResource, Shard, Sharder,
        hash_ring::{HashRing, hash_key_for_object},
        labels::shard_label,
    },
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A ring of deployments controlling replica sets and pods, and of config maps.
fn web_ring() -> crate::sharding::Result<ControllerRing> {
    ControllerRing::new("web")?
        .resource(
            RingResource::of::<Deployment>()
                .controls::<ReplicaSet>()
                .controls::<Pod>(),
        )?
        .resource(RingResource::of::<ConfigMap>())
}

/// The web ring's shards in `controllers`, their Leases in `web-leases`, a sharder Deployment
/// in `sharding-system` electing its leader, controllers recording Events.
fn web_rbac() -> RingRbac {
    RingRbac::new("controllers", "web")
        .sharder("sharding-system", "sharder")
        .lease_namespace("web-leases")
        .sharder_election("sharding-system", "web-sharder")
        .events(true)
}

/// A ring of namespaces (cluster-scoped) and config maps controlling secrets, whose shards
/// cache only `shop` and `billing`.
fn tenants_ring() -> crate::sharding::Result<ControllerRing> {
    ControllerRing::new("tenants")?
        .resource(RingResource::of::<Namespace>())?
        .resource(RingResource::of::<ConfigMap>().controls::<Secret>())
}

fn tenants_rbac() -> RingRbac {
    RingRbac::new("controllers", "tenants")
        .shard_namespaces(["shop", "billing"])
        .events(true)
        .name_prefix("tenants")
}

fn binding(kind: &str, name: &str, namespace: Option<&str>, role_kind: &str, account: (&str, &str)) -> Value {
    let mut metadata = json!({"name": name});
    if let Some(namespace) = namespace {
        metadata["namespace"] = json!(namespace);
    }
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": metadata,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
        "subjects": [{"kind": "ServiceAccount", "namespace": account.0, "name": account.1}],
    })
}

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rules,
    })
}

fn role(name: &str, namespace: &str, rules: Value) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": name, "namespace": namespace},
        "rules": rules,
    })
}

fn rule(group: &str, resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": [group], "resources": resources, "verbs": verbs})
}

/// Every object and every rule of a ring with controlled resources, a sharder of its own
/// electing its leader, and Events.
#[test]
fn the_shards_and_the_sharder_get_what_they_do_and_nothing_more() -> TestResult {
    let objects = web_ring()?.rbac(&web_rbac());
    let shards = ("controllers", "web");
    let sharder = ("sharding-system", "sharder");
    let leases = "coordination.k8s.io";
    let expected = vec![
        cluster_role(
            "sharding:web:shard",
            json!([
                rule("apps", &["deployments"], &["get", "list", "watch", "patch"]),
                rule("apps", &["replicasets"], &["get", "list", "watch"]),
                rule("", &["pods"], &["get", "list", "watch"]),
                rule("", &["configmaps"], &["get", "list", "watch", "patch"]),
                rule("events.k8s.io", &["events"], &["create", "patch"]),
            ]),
        ),
        binding(
            "ClusterRoleBinding",
            "sharding:web:shard",
            None,
            "ClusterRole",
            shards,
        ),
        role(
            "sharding:web:shard-lease",
            "web-leases",
            json!([rule(leases, &["leases"], &["get", "create", "update"])]),
        ),
        binding(
            "RoleBinding",
            "sharding:web:shard-lease",
            Some("web-leases"),
            "Role",
            shards,
        ),
        cluster_role(
            "sharding:web:sharder",
            json!([
                rule(
                    "apps",
                    &["deployments", "replicasets"],
                    &["list", "watch", "patch"]
                ),
                rule("", &["pods", "configmaps"], &["list", "watch", "patch"]),
                rule("", &["namespaces"], &["list", "watch"]),
                rule(leases, &["leases"], &["list", "watch"]),
            ]),
        ),
        binding(
            "ClusterRoleBinding",
            "sharding:web:sharder",
            None,
            "ClusterRole",
            sharder,
        ),
        role(
            "sharding:web:sharder-leases",
            "web-leases",
            json!([rule(leases, &["leases"], &["patch", "delete"])]),
        ),
        binding(
            "RoleBinding",
            "sharding:web:sharder-leases",
            Some("web-leases"),
            "Role",
            sharder,
        ),
        role(
            "sharding:web:sharder-election",
            "sharding-system",
            json!([
                rule(leases, &["leases"], &["create"]),
                {"apiGroups": [leases], "resources": ["leases"], "resourceNames": ["web-sharder"], "verbs": ["get", "update"]},
            ]),
        ),
        binding(
            "RoleBinding",
            "sharding:web:sharder-election",
            Some("sharding-system"),
            "Role",
            sharder,
        ),
    ];
    assert_eq!(objects.len(), expected.len(), "{objects:#?}");
    for (object, expected) in objects.iter().zip(&expected) {
        assert_eq!(object, expected);
    }
    every_binding_refers_to_a_rendered_role(&objects);
    Ok(())
}

/// Shards restricted to namespaces get Roles there for the namespaced resources (and Events),
/// and a ClusterRole for the cluster-scoped ones; the sharder's rules stay cluster-wide, and
/// a ring of namespaces needs no second rule on them.
#[test]
fn shards_restricted_to_namespaces_get_roles_there() -> TestResult {
    let objects = tenants_ring()?.rbac(&tenants_rbac());
    let summary: Vec<(&str, Option<&str>, &str)> = objects
        .iter()
        .map(|object| {
            (
                object["kind"].as_str().unwrap_or_default(),
                object["metadata"]["namespace"].as_str(),
                object["metadata"]["name"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("ClusterRole", None, "tenants:shard"),
            ("ClusterRoleBinding", None, "tenants:shard"),
            ("Role", Some("shop"), "tenants:shard"),
            ("RoleBinding", Some("shop"), "tenants:shard"),
            ("Role", Some("billing"), "tenants:shard"),
            ("RoleBinding", Some("billing"), "tenants:shard"),
            ("Role", Some("controllers"), "tenants:shard-lease"),
            ("RoleBinding", Some("controllers"), "tenants:shard-lease"),
            ("ClusterRole", None, "tenants:sharder"),
            ("ClusterRoleBinding", None, "tenants:sharder"),
            ("Role", Some("controllers"), "tenants:sharder-leases"),
            ("RoleBinding", Some("controllers"), "tenants:sharder-leases"),
        ]
    );
    assert_eq!(
        objects[0]["rules"],
        json!([rule("", &["namespaces"], &["get", "list", "watch", "patch"])])
    );
    let namespaced = json!([
        rule("", &["configmaps"], &["get", "list", "watch", "patch"]),
        rule("", &["secrets"], &["get", "list", "watch"]),
        rule("events.k8s.io", &["events"], &["create", "patch"]),
    ]);
    assert_eq!(objects[2]["rules"], namespaced);
    assert_eq!(objects[4]["rules"], namespaced);
    assert_eq!(
        objects[8]["rules"],
        json!([
            rule(
                "",
                &["namespaces", "configmaps", "secrets"],
                &["list", "watch", "patch"]
            ),
            rule("coordination.k8s.io", &["leases"], &["list", "watch"]),
        ])
    );
    // one service account for the shards and the sharder by default
    for binding in objects.iter().skip(1).step_by(2) {
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "namespace": "controllers", "name": "tenants"}])
        );
    }
    every_binding_refers_to_a_rendered_role(&objects);
    Ok(())
}

/// Shards restricted to namespaces of a ring without a cluster-scoped resource get no
/// ClusterRole at all.
#[test]
fn a_namespaced_ring_on_namespaced_shards_has_no_cluster_role_for_the_shards() -> TestResult {
    let ring = ControllerRing::new("configmaps")?.resource(RingResource::of::<ConfigMap>())?;
    let objects = ring.rbac(&RingRbac::new("shop", "configmaps").shard_namespaces(["shop"]));
    let shard_cluster_roles = objects
        .iter()
        .filter(|object| {
            object["kind"] == "ClusterRole" && object["metadata"]["name"] == "sharding:configmaps:shard"
        })
        .count();
    assert_eq!(shard_cluster_roles, 0);
    assert_eq!(objects[0]["kind"], "Role");
    assert_eq!(
        objects[0]["rules"],
        json!([rule("", &["configmaps"], &["get", "list", "watch", "patch"])])
    );
    Ok(())
}

/// Checks what kube-apiserver's RBAC validation checks, and that each binding's role is one
/// of the rendered roles, in the binding's namespace.
fn every_binding_refers_to_a_rendered_role(objects: &[Value]) {
    for object in objects {
        let kind = object["kind"].as_str().unwrap_or_default();
        if kind.ends_with("Binding") {
            let role_ref = &object["roleRef"];
            assert_eq!(role_ref["apiGroup"], "rbac.authorization.k8s.io");
            let namespace = &object["metadata"]["namespace"];
            let found = objects.iter().any(|role| {
                role["kind"] == role_ref["kind"]
                    && role["metadata"]["name"] == role_ref["name"]
                    && (role_ref["kind"] == "ClusterRole" || role["metadata"]["namespace"] == *namespace)
            });
            assert!(found, "no rendered role for {object}");
            for subject in object["subjects"].as_array().into_iter().flatten() {
                assert!(subject["namespace"].is_string(), "{subject}");
            }
        } else {
            for rule in object["rules"].as_array().into_iter().flatten() {
                for field in ["apiGroups", "resources", "verbs"] {
                    assert!(
                        rule[field].as_array().is_some_and(|values| !values.is_empty()),
                        "{field} of {rule}"
                    );
                }
            }
        }
    }
}

/// Creates `object` over HTTP with the API of its kind; the created object.
async fn create(client: &kube::Client, object: &Value) -> Result<Value, Box<dyn std::error::Error>> {
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    let post = PostParams::default();
    let created = match object["kind"].as_str().unwrap_or_default() {
        "ClusterRole" => {
            let role: ClusterRole = serde_json::from_value(object.clone())?;
            serde_json::to_value(Api::all(client.clone()).create(&post, &role).await?)?
        }
        "ClusterRoleBinding" => {
            let binding: ClusterRoleBinding = serde_json::from_value(object.clone())?;
            serde_json::to_value(Api::all(client.clone()).create(&post, &binding).await?)?
        }
        "Role" => {
            let role: Role = serde_json::from_value(object.clone())?;
            serde_json::to_value(
                Api::namespaced(client.clone(), namespace)
                    .create(&post, &role)
                    .await?,
            )?
        }
        "RoleBinding" => {
            let binding: RoleBinding = serde_json::from_value(object.clone())?;
            serde_json::to_value(
                Api::namespaced(client.clone(), namespace)
                    .create(&post, &binding)
                    .await?,
            )?
        }
        other => return Err(format!("failed to create a {other}: not an RBAC kind").into()),
    };
    Ok(created)
}

/// Every rendered object of both rings is created over HTTP, and reads back as rendered.
#[tokio::test]
async fn every_rendered_object_is_created_by_the_api_server() -> TestResult {
    let server = TestServer::start().await?;
    for namespace in ["controllers", "sharding-system", "web-leases", "shop", "billing"] {
        server.create_namespace(namespace)?;
    }
    let client = server.client()?;
    let objects = web_ring()?
        .rbac(&web_rbac())
        .into_iter()
        .chain(tenants_ring()?.rbac(&tenants_rbac()));
    for object in objects {
        let created = create(&client, &object).await?;
        for field in ["apiVersion", "kind", "rules", "roleRef", "subjects"] {
            assert_eq!(created[field], object[field], "{field} of {object}");
        }
        assert_eq!(created["metadata"]["name"], object["metadata"]["name"]);
        assert_eq!(created["metadata"]["namespace"], object["metadata"]["namespace"]);
    }
    Ok(())
}

const RING: &str = "configmaps";
const NAMESPACE: &str = "default";
const WAIT: Duration = Duration::from_secs(30);

fn config_map_ring() -> crate::sharding::Result<ControllerRing> {
    ControllerRing::new(RING)?.resource(RingResource::of::<ConfigMap>().controls::<Secret>())
}

/// The config maps each shard reconciled.
#[derive(Default)]
struct Reconciled(Mutex<BTreeSet<String>>);

async fn reconcile(config_map: Arc<ConfigMap>, seen: Arc<Reconciled>) -> Result<Action, kube::Error> {
    let name = config_map.metadata.name.clone().unwrap_or_default();
    seen.0.lock().unwrap_or_else(PoisonError::into_inner).insert(name);
    Ok(Action::await_change())
}

fn retry(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<Reconciled>) -> Action {
    Action::requeue(Duration::from_millis(50))
}

/// A shard's manager, as client `<name>`, running a controller of config maps that own
/// secrets, and a sharder, as client `sharder-<name>`, electing the active one among the
/// shards' replicas; started.
fn start_shard(
    server: &TestServer,
    name: &str,
    stop: &CancellationToken,
) -> Result<tokio::task::JoinHandle<crate::manager::Result<()>>, Box<dyn std::error::Error>> {
    let shard = Shard::new(config_map_ring()?, name, NAMESPACE)?
        .lease_duration(Duration::from_millis(800))
        .renew_deadline(Duration::from_millis(500))
        .retry_period(Duration::from_millis(100));
    let mut manager = Manager::builder(server.named_client(name)?)
        .shard(shard)
        .build()?;
    let controller = Controller::<ConfigMap>::new(manager.factory()).owns::<Secret>();
    manager.add_controller(controller, reconcile, retry, Arc::new(Reconciled::default()));
    let election = leader_election::Config::new("configmaps-sharder", NAMESPACE, name)
        .lease_duration(Duration::from_millis(800))
        .renew_deadline(Duration::from_millis(500))
        .retry_period(Duration::from_millis(100))
        .release_on_cancel(true);
    let sharder = Sharder::new(
        server.named_client(&format!("sharder-{name}"))?,
        config_map_ring()?,
    )?
    .leader_election(election)
    .orphan_after(Duration::from_millis(500))
    .resync_period(Duration::from_secs(3600));
    manager.add(sharder);
    Ok(tokio::spawn(manager.run(stop.clone().cancelled_owned())))
}

fn shard_of(server: &TestServer, kind: &str, name: &str) -> Option<String> {
    let object = server.get("v1", kind, Some(NAMESPACE), name).ok()?;
    object["metadata"]["labels"][shard_label(RING)]
        .as_str()
        .map(str::to_owned)
}

/// The rules bound to the service account `account`, by the rendered `objects`.
fn rules_of(objects: &[Value], account: (&str, &str)) -> Vec<PolicyRule> {
    let subject = json!({"kind": "ServiceAccount", "namespace": account.0, "name": account.1});
    let mut rules = Vec::new();
    for binding in objects.iter().filter(|object| {
        object["subjects"]
            .as_array()
            .is_some_and(|subjects| subjects.contains(&subject))
    }) {
        let role = objects.iter().find(|role| {
            role["kind"] == binding["roleRef"]["kind"]
                && role["metadata"]["name"] == binding["roleRef"]["name"]
                && role["metadata"]["namespace"] == binding["metadata"]["namespace"]
        });
        if let Some(role) = role {
            rules
                .extend(serde_json::from_value::<Vec<PolicyRule>>(role["rules"].clone()).unwrap_or_default());
        }
    }
    rules
}

/// Whether `rules` grant `verb` on `resource` (the request log names neither the group, nor
/// the namespace, nor the object).
fn allows(rules: &[PolicyRule], verb: &str, resource: &str) -> bool {
    rules.iter().any(|rule| {
        rule.verbs.iter().any(|granted| granted == verb)
            && rule.resources.iter().flatten().any(|granted| granted == resource)
    })
}

/// Two shards, each with a sharder electing the active one: objects are assigned, drained
/// and acknowledged when the second shard joins, moved back when it stops, and its orphaned
/// Lease is deleted. Every request the shards and sharders send is granted by the rendered
/// RBAC of their service accounts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_of_running_shards_and_sharders_is_granted() -> TestResult {
    let server = TestServer::start().await?;
    let names: Vec<String> = (0..8).map(|index| format!("settings-{index}")).collect();
    let mut uid = String::new();
    for name in &names {
        let mut config_map = ConfigMap::default();
        config_map.metadata.name = Some(name.clone());
        config_map.metadata.namespace = Some(NAMESPACE.into());
        let created = server.create_typed(&config_map)?;
        if uid.is_empty() {
            uid = created.metadata.uid.unwrap_or_default();
        }
    }
    let mut secret = Secret::default();
    secret.metadata.name = Some("copy".into());
    secret.metadata.namespace = Some(NAMESPACE.into());
    secret.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: names[0].clone(),
        uid,
        controller: Some(true),
        ..OwnerReference::default()
    }]);
    server.create_typed(&secret)?;

    let (stop_a, stop_b) = (CancellationToken::new(), CancellationToken::new());
    let shard_a = start_shard(&server, "shard-a", &stop_a)?;
    eventually("every object on shard-a", WAIT, || {
        names
            .iter()
            .all(|name| shard_of(&server, "ConfigMap", name).as_deref() == Some("shard-a"))
            && shard_of(&server, "Secret", "copy").as_deref() == Some("shard-a")
    })
    .await?;
    let shard_b = start_shard(&server, "shard-b", &stop_b)?;
    let both = HashRing::new(["shard-a", "shard-b"]);
    let expected = |name: &str| {
        both.lookup(&hash_key_for_object("", "ConfigMap", Some(NAMESPACE), name))
            .map(str::to_owned)
    };
    assert!(
        names
            .iter()
            .any(|name| expected(name).as_deref() == Some("shard-b")),
        "shard-b gets a share"
    );
    eventually("the objects moved to their shards", WAIT, || {
        names
            .iter()
            .all(|name| shard_of(&server, "ConfigMap", name) == expected(name))
    })
    .await?;
    stop_b.cancel();
    shard_b.await??;
    eventually("every object back on shard-a", WAIT, || {
        names
            .iter()
            .all(|name| shard_of(&server, "ConfigMap", name).as_deref() == Some("shard-a"))
    })
    .await?;
    eventually("shard-b's orphaned Lease deleted", WAIT, || {
        server
            .get("coordination.k8s.io/v1", "Lease", Some(NAMESPACE), "shard-b")
            .is_err()
    })
    .await?;
    stop_a.cancel();
    shard_a.await??;

    let objects = config_map_ring()?.rbac(
        &RingRbac::new("controllers", "shards")
            .sharder("sharding-system", "sharder")
            .lease_namespace(NAMESPACE)
            .sharder_election(NAMESPACE, "configmaps-sharder"),
    );
    let shard_rules = rules_of(&objects, ("controllers", "shards"));
    let sharder_rules = rules_of(&objects, ("sharding-system", "sharder"));
    let mut sent: BTreeMap<&str, BTreeSet<(String, String)>> = BTreeMap::new();
    for request in server.requests() {
        let Some(client) = request.client.as_deref() else {
            continue;
        };
        let (who, rules) = if client.starts_with("sharder-") {
            ("sharder", &sharder_rules)
        } else {
            ("shard", &shard_rules)
        };
        assert!(
            allows(rules, request.verb, &request.resource),
            "the {who} {client} sent {} {} ({}), which its RBAC does not grant",
            request.verb,
            request.resource,
            request.query
        );
        sent.entry(who)
            .or_default()
            .insert((request.verb.to_owned(), request.resource.clone()));
    }
    let pairs = |pairs: &[(&str, &str)]| -> BTreeSet<(String, String)> {
        pairs
            .iter()
            .map(|(verb, resource)| ((*verb).to_owned(), (*resource).to_owned()))
            .collect()
    };
    // the run exercised the grants that matter: acknowledgements and Lease renewals by the
    // shards; labels, Lease acquisitions and deletions, and the election by the sharders
    let shard_did = pairs(&[
        ("list", "configmaps"),
        ("watch", "configmaps"),
        ("patch", "configmaps"),
        ("list", "secrets"),
        ("create", "leases"),
        ("update", "leases"),
    ]);
    assert!(
        sent.get("shard").is_some_and(|sent| sent.is_superset(&shard_did)),
        "{sent:?}"
    );
    let sharder_did = pairs(&[
        ("list", "configmaps"),
        ("patch", "configmaps"),
        ("patch", "secrets"),
        ("list", "namespaces"),
        ("list", "leases"),
        ("patch", "leases"),
        ("delete", "leases"),
        ("create", "leases"),
        ("update", "leases"),
    ]);
    assert!(
        sent.get("sharder")
            .is_some_and(|sent| sent.is_superset(&sharder_did)),
        "{sent:?}"
    );
    Ok(())
}
