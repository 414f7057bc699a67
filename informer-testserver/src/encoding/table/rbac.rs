//! The columns of role bindings and cluster role bindings (roles and cluster roles have
//! kube-apiserver's default `Name` and `Created At`).

use serde_json::{Value, json};

use super::cells::{Column, age_column, builtin, items, name_column};

/// The columns of an RBAC kind; `None` for other kinds.
pub(crate) fn columns(group: &str, plural: &str) -> Option<Vec<Column>> {
    match (group, plural) {
        ("rbac.authorization.k8s.io", "rolebindings" | "clusterrolebindings") => Some(vec![
            name_column(),
            builtin("Role", "string", 0, |o| {
                let role = &o["roleRef"];
                json!(format!(
                    "{}/{}",
                    role["kind"].as_str().unwrap_or_default(),
                    role["name"].as_str().unwrap_or_default()
                ))
            }),
            age_column(),
            builtin("Users", "string", 1, |o| subjects(o, "User")),
            builtin("Groups", "string", 1, |o| subjects(o, "Group")),
            builtin("ServiceAccounts", "string", 1, |o| subjects(o, "ServiceAccount")),
        ]),
        _ => None,
    }
}

/// The subjects of `kind`, `, `-separated; service accounts as `namespace:name`.
fn subjects(binding: &Value, kind: &str) -> Value {
    let names: Vec<String> = items(&binding["subjects"])
        .filter(|s| s["kind"] == kind)
        .map(|s| {
            let name = s["name"].as_str().unwrap_or_default();
            match kind {
                "ServiceAccount" => {
                    format!("{}:{name}", s["namespace"].as_str().unwrap_or_default())
                }
                _ => name.to_owned(),
            }
        })
        .collect();
    json!(names.join(", "))
}
