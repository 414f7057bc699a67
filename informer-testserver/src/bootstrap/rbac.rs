//! The bootstrap RBAC policy a cluster has for its users: the ClusterRoles `cluster-admin`,
//! `admin`, `edit`, `view` (with the `system:aggregate-to-*` roles they aggregate),
//! `system:basic-user`, `system:discovery`, `system:public-info-viewer` and
//! `system:auth-delegator`, and the ClusterRoleBindings that grant them to groups.
//!
//! As kube-apiserver does, every one carries the label `kubernetes.io/bootstrapping:
//! rbac-defaults` and the annotation `rbac.authorization.kubernetes.io/autoupdate: "true"`,
//! and rules list their resources and verbs sorted. `admin`, `edit` and `view` have an
//! `aggregationRule`; their rules are those the ClusterRole aggregation controller gives them
//! from the roles their selectors match (sorted by name, each rule once).
//!
//! The roles of nodes, of the control plane's components and of the controllers are not
//! created.

use serde_json::{Map, Value, json};

use super::object::BootstrapObject;

/// The API group of roles and bindings.
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// The label of every bootstrap role and binding.
const BOOTSTRAPPING_LABEL: (&str, &str) = ("kubernetes.io/bootstrapping", "rbac-defaults");

/// The annotation that lets kube-apiserver reconcile them at each start.
const AUTOUPDATE_ANNOTATION: (&str, &str) = ("rbac.authorization.kubernetes.io/autoupdate", "true");

/// Labels that aggregate a role into `admin`, `edit` and `view`.
const TO_ADMIN: &str = "rbac.authorization.k8s.io/aggregate-to-admin";
const TO_EDIT: &str = "rbac.authorization.k8s.io/aggregate-to-edit";
const TO_VIEW: &str = "rbac.authorization.k8s.io/aggregate-to-view";

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];
const READ_WRITE: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

fn sorted(items: &[&str]) -> Vec<String> {
    let mut items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
    items.sort();
    items.dedup();
    items
}

/// A rule on resources of API groups (`""` is the core group).
fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"verbs": sorted(verbs), "apiGroups": groups, "resources": sorted(resources)})
}

/// A rule on URLs that are not resources (`/healthz`, `/api/*`, ...).
fn url_rule(urls: &[&str], verbs: &[&str]) -> Value {
    json!({"verbs": sorted(verbs), "nonResourceURLs": sorted(urls)})
}

/// The metadata of a bootstrap object named `name` with `extra_labels`.
fn metadata(name: &str, extra_labels: &[&str]) -> Value {
    let mut labels = Map::new();
    labels.insert(BOOTSTRAPPING_LABEL.0.into(), json!(BOOTSTRAPPING_LABEL.1));
    for label in extra_labels {
        labels.insert((*label).into(), json!("true"));
    }
    json!({
        "name": name,
        "labels": labels,
        "annotations": {AUTOUPDATE_ANNOTATION.0: AUTOUPDATE_ANNOTATION.1},
    })
}

/// A ClusterRole with rules.
fn role(name: &str, labels: &[&str], rules: Vec<Value>) -> Value {
    json!({"metadata": metadata(name, labels), "rules": rules})
}

/// A ClusterRole whose rules are those of the roles labelled `selector_label: "true"`.
fn aggregated_role(name: &str, labels: &[&str], selector_label: &str) -> Value {
    json!({
        "metadata": metadata(name, labels),
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {selector_label: "true"}}]},
        "rules": [],
    })
}

fn cluster_admin() -> Value {
    role(
        "cluster-admin",
        &[],
        vec![rule(&["*"], &["*"], &["*"]), url_rule(&["*"], &["*"])],
    )
}

fn discovery() -> Value {
    let urls = [
        "/livez",
        "/readyz",
        "/healthz",
        "/version",
        "/version/",
        "/openapi",
        "/openapi/*",
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
    ];
    role("system:discovery", &[], vec![url_rule(&urls, &["get"])])
}

fn public_info_viewer() -> Value {
    let urls = ["/livez", "/readyz", "/healthz", "/version", "/version/"];
    role("system:public-info-viewer", &[], vec![url_rule(&urls, &["get"])])
}

fn basic_user() -> Value {
    role(
        "system:basic-user",
        &[],
        vec![
            rule(
                &["authorization.k8s.io"],
                &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                &["create"],
            ),
            rule(&["authentication.k8s.io"], &["selfsubjectreviews"], &["create"]),
        ],
    )
}

fn auth_delegator() -> Value {
    role(
        "system:auth-delegator",
        &[],
        vec![
            rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
            rule(&["authorization.k8s.io"], &["subjectaccessreviews"], &["create"]),
        ],
    )
}

/// What `admin` adds to `edit`: granting roles within a namespace.
fn aggregate_to_admin() -> Value {
    role(
        "system:aggregate-to-admin",
        &[TO_ADMIN],
        vec![
            rule(
                &["authorization.k8s.io"],
                &["localsubjectaccessreviews"],
                &["create"],
            ),
            rule(&[RBAC_GROUP], &["roles", "rolebindings"], READ_WRITE),
        ],
    )
}

/// What `edit` adds to `view`: writing the workloads and their configuration, reading secrets.
fn aggregate_to_edit() -> Value {
    let pod_access = ["pods/attach", "pods/proxy", "pods/exec", "pods/portforward"];
    role(
        "system:aggregate-to-edit",
        &[TO_EDIT],
        vec![
            rule(
                &[""],
                &[&pod_access[..], &["secrets", "services/proxy"]].concat(),
                READ,
            ),
            rule(&[""], &["serviceaccounts"], &["impersonate"]),
            rule(&[""], &[&["pods"], &pod_access[..]].concat(), WRITE),
            rule(&[""], &["pods/eviction"], &["create"]),
            rule(
                &[""],
                &[
                    "replicationcontrollers",
                    "replicationcontrollers/scale",
                    "serviceaccounts",
                    "services",
                    "services/proxy",
                    "persistentvolumeclaims",
                    "configmaps",
                    "secrets",
                    "events",
                ],
                WRITE,
            ),
            rule(&[""], &["serviceaccounts/token"], &["create"]),
            rule(
                &["apps"],
                &[
                    "statefulsets",
                    "statefulsets/scale",
                    "daemonsets",
                    "deployments",
                    "deployments/scale",
                    "deployments/rollback",
                    "replicasets",
                    "replicasets/scale",
                ],
                WRITE,
            ),
            rule(&["autoscaling"], &["horizontalpodautoscalers"], WRITE),
            rule(&["batch"], &["jobs", "cronjobs"], WRITE),
            rule(
                &["extensions"],
                &[
                    "daemonsets",
                    "deployments",
                    "deployments/scale",
                    "deployments/rollback",
                    "ingresses",
                    "replicasets",
                    "replicasets/scale",
                    "replicationcontrollers/scale",
                    "networkpolicies",
                ],
                WRITE,
            ),
            rule(&["policy"], &["poddisruptionbudgets"], WRITE),
            rule(&["networking.k8s.io"], &["networkpolicies", "ingresses"], WRITE),
            rule(&["coordination.k8s.io"], &["leases"], READ_WRITE),
        ],
    )
}

/// What `view` grants: reading what is not secret in a namespace.
fn aggregate_to_view() -> Value {
    role(
        "system:aggregate-to-view",
        &[TO_VIEW],
        vec![
            rule(
                &[""],
                &[
                    "pods",
                    "replicationcontrollers",
                    "replicationcontrollers/scale",
                    "serviceaccounts",
                    "services",
                    "services/status",
                    "endpoints",
                    "persistentvolumeclaims",
                    "persistentvolumeclaims/status",
                    "configmaps",
                ],
                READ,
            ),
            rule(
                &[""],
                &[
                    "limitranges",
                    "resourcequotas",
                    "bindings",
                    "events",
                    "pods/status",
                    "resourcequotas/status",
                    "namespaces/status",
                    "replicationcontrollers/status",
                    "pods/log",
                ],
                READ,
            ),
            rule(&[""], &["namespaces"], READ),
            rule(&["discovery.k8s.io"], &["endpointslices"], READ),
            rule(
                &["apps"],
                &[
                    "controllerrevisions",
                    "statefulsets",
                    "statefulsets/status",
                    "statefulsets/scale",
                    "daemonsets",
                    "daemonsets/status",
                    "deployments",
                    "deployments/status",
                    "deployments/scale",
                    "replicasets",
                    "replicasets/status",
                    "replicasets/scale",
                ],
                READ,
            ),
            rule(
                &["autoscaling"],
                &["horizontalpodautoscalers", "horizontalpodautoscalers/status"],
                READ,
            ),
            rule(
                &["batch"],
                &["jobs", "jobs/status", "cronjobs", "cronjobs/status"],
                READ,
            ),
            rule(
                &["extensions"],
                &[
                    "daemonsets",
                    "daemonsets/status",
                    "deployments",
                    "deployments/scale",
                    "deployments/status",
                    "ingresses",
                    "ingresses/status",
                    "replicasets",
                    "replicasets/scale",
                    "replicasets/status",
                    "replicationcontrollers/scale",
                    "networkpolicies",
                ],
                READ,
            ),
            rule(
                &["policy"],
                &["poddisruptionbudgets", "poddisruptionbudgets/status"],
                READ,
            ),
            rule(
                &["networking.k8s.io"],
                &["networkpolicies", "ingresses", "ingresses/status"],
                READ,
            ),
        ],
    )
}

/// The user-facing ClusterRoles, `admin`, `edit` and `view` with their aggregated rules.
fn roles() -> Vec<Value> {
    let mut roles = vec![
        cluster_admin(),
        discovery(),
        public_info_viewer(),
        basic_user(),
        auth_delegator(),
        aggregated_role("admin", &[], TO_ADMIN),
        aggregated_role("edit", &[TO_ADMIN], TO_EDIT),
        aggregated_role("view", &[TO_EDIT], TO_VIEW),
        aggregate_to_admin(),
        aggregate_to_edit(),
        aggregate_to_view(),
    ];
    aggregate(&mut roles);
    roles
}

/// The `matchLabels` of a role's aggregation selectors (the bootstrap roles use no other form).
fn selectors(role: &Value) -> Vec<Map<String, Value>> {
    role["aggregationRule"]["clusterRoleSelectors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["matchLabels"].as_object().cloned())
        .collect()
}

fn matches(role: &Value, match_labels: &Map<String, Value>) -> bool {
    match_labels
        .iter()
        .all(|(key, value)| role["metadata"]["labels"].get(key) == Some(value))
}

/// The rules of the role at `index` as the aggregation controller computes them: for each
/// selector, the rules of the other roles it matches, by role name, each rule once.
fn aggregated_rules(roles: &[Value], index: usize) -> Vec<Value> {
    let mut by_name: Vec<&Value> = roles.iter().collect();
    by_name.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    let own_name = &roles[index]["metadata"]["name"];
    let mut rules: Vec<Value> = Vec::new();
    for selector in selectors(&roles[index]) {
        let sources = by_name
            .iter()
            .filter(|r| &r["metadata"]["name"] != own_name && matches(r, &selector));
        for rule in sources.flat_map(|r| r["rules"].as_array().into_iter().flatten()) {
            if !rules.contains(rule) {
                rules.push(rule.clone());
            }
        }
    }
    rules
}

/// Fills the rules of the roles with an `aggregationRule` until none changes (a role may
/// aggregate another aggregated role: `admin` takes `edit`, which takes `view`).
fn aggregate(roles: &mut [Value]) {
    for _ in 0..roles.len() {
        let mut changed = false;
        for index in 0..roles.len() {
            if roles[index].get("aggregationRule").is_none() {
                continue;
            }
            let rules = Value::Array(aggregated_rules(roles, index));
            if roles[index]["rules"] != rules {
                roles[index]["rules"] = rules;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// The bootstrap ClusterRoles, to create.
pub(super) fn cluster_roles() -> Vec<BootstrapObject> {
    roles()
        .into_iter()
        .map(|r| BootstrapObject::new(RBAC_GROUP, "v1", "clusterroles", r))
        .collect()
}

/// A ClusterRoleBinding of the ClusterRole `name` to `groups`, named as the role.
fn binding(name: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"kind": "Group", "apiGroup": RBAC_GROUP, "name": g}))
        .collect();
    json!({
        "metadata": metadata(name, &[]),
        "subjects": subjects,
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
    })
}

/// The bootstrap ClusterRoleBindings, to create.
pub(super) fn cluster_role_bindings() -> Vec<BootstrapObject> {
    [
        binding("cluster-admin", &["system:masters"]),
        binding("system:discovery", &["system:authenticated"]),
        binding("system:basic-user", &["system:authenticated"]),
        binding(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
    .into_iter()
    .map(|b| BootstrapObject::new(RBAC_GROUP, "v1", "clusterrolebindings", b))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named<'a>(roles: &'a [Value], name: &str) -> &'a Value {
        roles
            .iter()
            .find(|r| r["metadata"]["name"] == name)
            .expect("role present")
    }

    fn rules(role: &Value) -> &Vec<Value> {
        role["rules"].as_array().expect("rules")
    }

    #[test]
    fn view_edit_and_admin_nest() {
        let roles = roles();
        let view = rules(named(&roles, "view"));
        let edit = rules(named(&roles, "edit"));
        let admin = rules(named(&roles, "admin"));
        assert_eq!(view, rules(named(&roles, "system:aggregate-to-view")));
        assert!(view.iter().all(|r| edit.contains(r)), "edit includes view");
        assert!(edit.iter().all(|r| admin.contains(r)), "admin includes edit");
        let grants_roles = rule(&[RBAC_GROUP], &["roles", "rolebindings"], READ_WRITE);
        assert!(admin.contains(&grants_roles));
        assert!(!edit.contains(&grants_roles));
        // edit takes system:aggregate-to-edit's rules, then view's (by name)
        assert_eq!(edit[0], rules(named(&roles, "system:aggregate-to-edit"))[0]);
    }

    #[test]
    fn rules_are_sorted_and_roles_marked() {
        let roles = roles();
        let view = named(&roles, "system:aggregate-to-view");
        assert_eq!(view["rules"][0]["verbs"], json!(["get", "list", "watch"]));
        let resources = view["rules"][0]["resources"].as_array().expect("resources");
        let mut names: Vec<&str> = resources.iter().filter_map(Value::as_str).collect();
        let unsorted = names.clone();
        names.sort_unstable();
        assert_eq!(names, unsorted);
        for role in &roles {
            assert_eq!(role["metadata"]["labels"][BOOTSTRAPPING_LABEL.0], "rbac-defaults");
            assert_eq!(role["metadata"]["annotations"][AUTOUPDATE_ANNOTATION.0], "true");
        }
    }

    #[test]
    fn a_duplicate_rule_is_aggregated_once() {
        let mut roles = vec![
            aggregated_role("all", &[], "x"),
            role("b", &["x"], vec![rule(&[""], &["pods"], READ)]),
            role(
                "a",
                &["x"],
                vec![rule(&[""], &["pods"], READ), rule(&[""], &["nodes"], READ)],
            ),
        ];
        aggregate(&mut roles);
        assert_eq!(
            roles[0]["rules"],
            json!([rule(&[""], &["pods"], READ), rule(&[""], &["nodes"], READ)])
        );
    }
}
