//! [`RingRbac`]: who runs a ring's shards and sharder, and where; and
//! [`ControllerRing::rbac`], the least RBAC they need.

use k8s_openapi::{
    Resource as _,
    api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject},
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use serde::Serialize;

use super::{resource_type::ResourceType, ring::ControllerRing};

/// What a shard's manager does with the ring's own resources: caches them (`list`, `watch`),
/// reads an object that left its cache while it carries a controller's finalizer (`get`), and
/// acknowledges drains with a merge patch (`patch`).
const SHARD_RING_VERBS: &[&str] = &["get", "list", "watch", "patch"];

/// What a shard's manager does with the resources the ring's objects control: caches them, and
/// reads one that left its cache while it carries a controller's finalizer.
const SHARD_CONTROLLED_VERBS: &[&str] = &["get", "list", "watch"];

/// What a shard does with its own Lease (leader election's lock: read, create, renew).
const SHARD_LEASE_VERBS: &[&str] = &["get", "create", "update"];

/// What the sharder does with every resource of the ring: caches their metadata (`list`,
/// `watch`) and labels objects with merge patches (`patch`).
const SHARDER_RING_VERBS: &[&str] = &["list", "watch", "patch"];

/// What the sharder reads of the shard Leases, in every namespace (it finds them by their ring
/// label, as the Go sharder does).
const SHARDER_LEASE_READ_VERBS: &[&str] = &["list", "watch"];

/// What the sharder writes to the shard Leases, in the Lease namespace: labels them with their
/// state, acquires and gives back those of dead shards (merge patches), deletes orphaned ones.
const SHARDER_LEASE_WRITE_VERBS: &[&str] = &["patch", "delete"];

/// What the sharder does with the namespaces: caches their metadata, for the ring's namespace
/// selector.
const NAMESPACE_VERBS: &[&str] = &["list", "watch"];

/// What a recorder of `events.k8s.io` Events does: creates an Event, and patches its series
/// when the event repeats.
const EVENT_VERBS: &[&str] = &["create", "patch"];

/// A service account, by namespace and name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ServiceAccount {
    namespace: String,
    name: String,
}

impl ServiceAccount {
    fn new(namespace: &str, name: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    fn subject(&self) -> Subject {
        Subject {
            kind: "ServiceAccount".into(),
            name: self.name.clone(),
            namespace: Some(self.namespace.clone()),
            api_group: None,
        }
    }
}

/// Who runs a ring's shards and its sharder, and where: what [`ControllerRing::rbac`] grants,
/// and to whom.
///
/// By default the shards and the sharder run as one service account (the sharder inside the
/// shards' manager), and the shard Leases are in that service account's namespace; the
/// sharder does not elect itself, and the shards cache the ring's objects in every namespace.
///
/// ```
/// use informer_runtime::sharding::rbac::RingRbac;
///
/// // shards in `controllers` as `replicator`, their Leases there; a sharder Deployment in
/// // `sharding-system` as `sharder`, its replicas electing the active one on a Lease there
/// let rbac = RingRbac::new("controllers", "replicator")
///     .sharder("sharding-system", "sharder")
///     .sharder_election("sharding-system", "replicator-sharder");
/// # let _ = rbac;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingRbac {
    shards: ServiceAccount,
    sharder: ServiceAccount,
    lease_namespace: String,
    sharder_election: Option<(String, String)>,
    shard_namespaces: Vec<String>,
    events: bool,
    name_prefix: Option<String>,
}

impl RingRbac {
    /// The shards run as the service account `service_account` in `namespace`, and hold their
    /// Leases in `namespace`. The sharder runs as the same service account until told
    /// otherwise ([`sharder`](Self::sharder)).
    pub fn new(namespace: &str, service_account: &str) -> Self {
        let account = ServiceAccount::new(namespace, service_account);
        Self {
            shards: account.clone(),
            sharder: account,
            lease_namespace: namespace.to_owned(),
            sharder_election: None,
            shard_namespaces: Vec::new(),
            events: false,
            name_prefix: None,
        }
    }

    /// The sharder runs as the service account `service_account` in `namespace` (its own
    /// Deployment), not as the shards'.
    #[must_use]
    pub fn sharder(mut self, namespace: &str, service_account: &str) -> Self {
        self.sharder = ServiceAccount::new(namespace, service_account);
        self
    }

    /// The shards hold their Leases in `namespace` (the namespace given to
    /// [`Shard::new`](super::Shard::new)), not in their service account's.
    #[must_use]
    pub fn lease_namespace(mut self, namespace: &str) -> Self {
        self.lease_namespace = namespace.to_owned();
        self
    }

    /// The sharder's replicas elect the active one on the Lease `lease` in `namespace`: its
    /// own [`leader_election`](super::Sharder::leader_election), or the leader election of
    /// the manager it runs in. The sharder may create Leases there, and read and renew that
    /// one. Without it, no election Lease is granted (a single sharder replica, or one that
    /// runs on a manager whose Lease is granted otherwise).
    #[must_use]
    pub fn sharder_election(mut self, namespace: &str, lease: &str) -> Self {
        self.sharder_election = Some((namespace.to_owned(), lease.to_owned()));
        self
    }

    /// The shards cache and reconcile the ring's objects only in `namespaces` (their
    /// factory is [restricted to a namespace](crate::factory::Builder::namespace), or their
    /// controllers' [scopes](crate::scope::Scope::namespace) are): their rules on the ring's
    /// namespaced resources (and Events) are a Role and a RoleBinding in each of them instead
    /// of a ClusterRole. Rules on cluster-scoped resources of the ring stay in a ClusterRole.
    /// The sharder watches the ring's resources in every namespace, so its rules stay
    /// cluster-wide.
    #[must_use]
    pub fn shard_namespaces<N: Into<String>>(mut self, namespaces: impl IntoIterator<Item = N>) -> Self {
        self.shard_namespaces = namespaces.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the shards' controllers record Events with an
    /// [`EventRecorder`](crate::events::EventRecorder) (default `false`: the manager records
    /// none itself): they may then create and patch `events.k8s.io` Events wherever they may
    /// read the ring's objects (Events of cluster-scoped objects are written in `default`).
    #[must_use]
    pub fn events(mut self, record: bool) -> Self {
        self.events = record;
        self
    }

    /// The prefix of the rendered roles' and bindings' names (default `sharding:<ring>`).
    #[must_use]
    pub fn name_prefix(mut self, prefix: &str) -> Self {
        self.name_prefix = Some(prefix.to_owned());
        self
    }
}

impl ControllerRing {
    /// The RBAC objects the ring's shards and sharder need, and nothing more, as manifests
    /// (`rbac.authorization.k8s.io/v1`, with `apiVersion`, `kind` and `metadata`) bound to the
    /// service accounts of `rbac`. Their names start with `sharding:<ring>` (see
    /// [`RingRbac::name_prefix`]); in this order:
    ///
    /// 1. `…:shard`, a ClusterRole and ClusterRoleBinding (Roles and RoleBindings with
    ///    [`shard_namespaces`](RingRbac::shard_namespaces)): `get`, `list`, `watch` and
    ///    `patch` (drain acknowledgements) of the ring's own resources; `get`, `list` and
    ///    `watch` of the resources they control; `create` and `patch` of `events.k8s.io`
    ///    Events with [`events`](RingRbac::events).
    /// 2. `…:shard-lease`, a Role and RoleBinding in the Lease namespace: `get`, `create` and
    ///    `update` of Leases (a shard's Lease is named after the shard, unknown in advance).
    /// 3. `…:sharder`, a ClusterRole and ClusterRoleBinding: `list`, `watch` (metadata only)
    ///    and `patch` of every resource of the ring; `list` and `watch` of namespaces when the
    ///    ring has a namespaced resource (its namespace selector); `list` and `watch` of
    ///    Leases (the sharder reads the shard Leases of its ring in every namespace).
    /// 4. `…:sharder-leases`, a Role and RoleBinding in the Lease namespace: `patch` and
    ///    `delete` of Leases (the shard Leases: state labels, acquisition and hand-back of a
    ///    dead shard's, deletion of an orphaned one).
    /// 5. `…:sharder-election`, with [`sharder_election`](RingRbac::sharder_election): a Role
    ///    and RoleBinding in its namespace: `create` of Leases, `get` and `update` of that
    ///    Lease.
    ///
    /// These are the sharding's needs: bind your controllers' own (what they create, update
    /// or delete) to the shards' service account separately.
    ///
    /// ```
    /// use informer_runtime::sharding::{ControllerRing, RingResource, rbac::RingRbac};
    /// use k8s_openapi::api::{apps::v1::{Deployment, ReplicaSet}, core::v1::ConfigMap};
    /// use serde_json::json;
    ///
    /// let ring = ControllerRing::new("web")?
    ///     .resource(RingResource::of::<Deployment>().controls::<ReplicaSet>())?
    ///     .resource(RingResource::of::<ConfigMap>())?;
    /// let objects = ring.rbac(&RingRbac::new("controllers", "web"));
    /// assert_eq!(objects[0]["kind"], "ClusterRole");
    /// assert_eq!(objects[0]["metadata"]["name"], "sharding:web:shard");
    /// assert_eq!(objects[0]["rules"][0], json!({
    ///     "apiGroups": ["apps"],
    ///     "resources": ["deployments"],
    ///     "verbs": ["get", "list", "watch", "patch"],
    /// }));
    /// assert_eq!(objects[0]["rules"][1]["resources"], json!(["replicasets"]));
    /// assert_eq!(objects[0]["rules"][1]["verbs"], json!(["get", "list", "watch"]));
    /// // `kubectl apply -f -` takes them as a List
    /// let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    /// # let _ = list;
    /// # Ok::<(), informer_runtime::sharding::Error>(())
    /// ```
    pub fn rbac(&self, rbac: &RingRbac) -> Vec<serde_json::Value> {
        let prefix = rbac
            .name_prefix
            .clone()
            .unwrap_or_else(|| format!("sharding:{}", self.name()));
        let name = |suffix: &str| format!("{prefix}:{suffix}");
        let mut objects = Vec::new();
        self.shard_object_rbac(rbac, &name("shard"), &mut objects);
        let shard_lease = vec![rule(&["coordination.k8s.io"], &["leases"], SHARD_LEASE_VERBS)];
        role_for(
            &mut objects,
            &name("shard-lease"),
            &rbac.lease_namespace,
            shard_lease,
            &rbac.shards,
        );
        let mut sharder = rules_by_group(self.all_types().map(|resource| (resource, SHARDER_RING_VERBS)));
        let reads_namespaces = self.all_types().any(ResourceType::is_namespaced)
            && !self.all_types().any(ResourceType::is_namespace);
        if reads_namespaces {
            sharder.push(rule(&[""], &["namespaces"], NAMESPACE_VERBS));
        }
        sharder.push(rule(
            &["coordination.k8s.io"],
            &["leases"],
            SHARDER_LEASE_READ_VERBS,
        ));
        cluster_role_for(&mut objects, &name("sharder"), sharder, &rbac.sharder);
        let shard_leases = vec![rule(
            &["coordination.k8s.io"],
            &["leases"],
            SHARDER_LEASE_WRITE_VERBS,
        )];
        role_for(
            &mut objects,
            &name("sharder-leases"),
            &rbac.lease_namespace,
            shard_leases,
            &rbac.sharder,
        );
        if let Some((namespace, lease)) = &rbac.sharder_election {
            let election = vec![
                rule(&["coordination.k8s.io"], &["leases"], &["create"]),
                PolicyRule {
                    resource_names: Some(vec![lease.clone()]),
                    ..rule(&["coordination.k8s.io"], &["leases"], &["get", "update"])
                },
            ];
            role_for(
                &mut objects,
                &name("sharder-election"),
                namespace,
                election,
                &rbac.sharder,
            );
        }
        objects
    }

    /// The shards' rules on the ring's objects (and Events), named `name`: cluster-wide, or
    /// per namespace with [`RingRbac::shard_namespaces`].
    fn shard_object_rbac(&self, rbac: &RingRbac, name: &str, objects: &mut Vec<serde_json::Value>) {
        let verbs = |resource: &ResourceType| {
            let own = self
                .resources()
                .iter()
                .any(|ring_resource| ring_resource.resource() == resource);
            if own {
                SHARD_RING_VERBS
            } else {
                SHARD_CONTROLLED_VERBS
            }
        };
        let events = rbac
            .events
            .then(|| rule(&["events.k8s.io"], &["events"], EVENT_VERBS));
        if rbac.shard_namespaces.is_empty() {
            let mut rules = rules_by_group(self.all_types().map(|resource| (resource, verbs(resource))));
            rules.extend(events);
            cluster_role_for(objects, name, rules, &rbac.shards);
            return;
        }
        let cluster_scoped = rules_by_group(
            self.all_types()
                .filter(|resource| !resource.is_namespaced())
                .map(|resource| (resource, verbs(resource))),
        );
        if !cluster_scoped.is_empty() {
            cluster_role_for(objects, name, cluster_scoped, &rbac.shards);
        }
        let mut namespaced = rules_by_group(
            self.all_types()
                .filter(|resource| resource.is_namespaced())
                .map(|resource| (resource, verbs(resource))),
        );
        namespaced.extend(events);
        if namespaced.is_empty() {
            return;
        }
        for namespace in &rbac.shard_namespaces {
            role_for(objects, name, namespace, namespaced.clone(), &rbac.shards);
        }
    }
}

/// A rule granting `verbs` on `resources` of `groups`.
fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
    let owned = |values: &[&str]| values.iter().map(|value| (*value).to_owned()).collect();
    PolicyRule {
        api_groups: Some(owned(groups)),
        resources: Some(owned(resources)),
        verbs: owned(verbs),
        ..PolicyRule::default()
    }
}

/// One rule per API group and set of verbs, in the order the resources come: the resources of
/// a group granted the same verbs share a rule.
fn rules_by_group<'a>(
    grants: impl Iterator<Item = (&'a ResourceType, &'static [&'static str])>,
) -> Vec<PolicyRule> {
    let mut rules: Vec<PolicyRule> = Vec::new();
    for (resource, verbs) in grants {
        let same = rules.iter_mut().find(|existing| {
            existing.api_groups.as_deref() == Some(&[resource.group().to_owned()][..])
                && existing.verbs == verbs
        });
        match same {
            Some(existing) => existing
                .resources
                .get_or_insert_with(Vec::new)
                .push(resource.plural().to_owned()),
            None => rules.push(rule(&[resource.group()], &[resource.plural()], verbs)),
        }
    }
    rules
}

/// Adds a ClusterRole named `name` with `rules`, and its ClusterRoleBinding to `account`.
fn cluster_role_for(
    objects: &mut Vec<serde_json::Value>,
    name: &str,
    rules: Vec<PolicyRule>,
    account: &ServiceAccount,
) {
    let metadata = ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    };
    let role = ClusterRole {
        metadata: metadata.clone(),
        rules: Some(rules),
        aggregation_rule: None,
    };
    let binding = ClusterRoleBinding {
        metadata,
        role_ref: role_ref(ClusterRole::KIND, name),
        subjects: Some(vec![account.subject()]),
    };
    objects.push(manifest(&role));
    objects.push(manifest(&binding));
}

/// Adds a Role named `name` in `namespace` with `rules`, and its RoleBinding to `account`.
fn role_for(
    objects: &mut Vec<serde_json::Value>,
    name: &str,
    namespace: &str,
    rules: Vec<PolicyRule>,
    account: &ServiceAccount,
) {
    let metadata = ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some(namespace.to_owned()),
        ..ObjectMeta::default()
    };
    let role = Role {
        metadata: metadata.clone(),
        rules: Some(rules),
    };
    let binding = RoleBinding {
        metadata,
        role_ref: role_ref(Role::KIND, name),
        subjects: Some(vec![account.subject()]),
    };
    objects.push(manifest(&role));
    objects.push(manifest(&binding));
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        // a `String` up to Kubernetes 1.35's k8s-openapi types, an `Option` from 1.36 on
        #[allow(clippy::useless_conversion)]
        api_group: ClusterRole::GROUP.to_owned().into(),
        kind: kind.to_owned(),
        name: name.to_owned(),
    }
}

/// `object` as JSON, with its `apiVersion` and `kind` (k8s-openapi writes them).
fn manifest(object: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(object).expect("an RBAC object serializes to JSON")
}

#[cfg(test)]
mod tests;
