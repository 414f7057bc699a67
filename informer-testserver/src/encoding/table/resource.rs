//! The columns of dynamic resource allocation kinds: device classes, resource claims and their
//! templates, resource slices.

use serde_json::{Value, json};

use super::cells::{Column, age_column, builtin, items, name_column, text};

/// The columns of a resource.k8s.io kind; `None` for other kinds.
pub(crate) fn columns(group: &str, plural: &str) -> Option<Vec<Column>> {
    if group != "resource.k8s.io" {
        return None;
    }
    let columns = match plural {
        "deviceclasses" | "resourceclaimtemplates" => vec![name_column(), age_column()],
        "resourceclaims" => vec![
            name_column(),
            builtin("State", "string", 0, claim_state),
            age_column(),
        ],
        "resourceslices" => vec![
            name_column(),
            builtin("Node", "string", 0, |o| text(&o["spec"]["nodeName"], "")),
            builtin("Driver", "string", 0, |o| text(&o["spec"]["driver"], "")),
            builtin("Pool", "string", 0, |o| text(&o["spec"]["pool"]["name"], "")),
            age_column(),
        ],
        _ => return None,
    };
    Some(columns)
}

/// `deleted`, `pending`, `allocated` and `reserved`, as they apply, comma-separated.
fn claim_state(claim: &Value) -> Value {
    let deleted = claim["metadata"]["deletionTimestamp"].is_string();
    let mut states = Vec::new();
    if deleted {
        states.push("deleted");
    }
    if claim["status"]["allocation"].is_object() {
        states.push("allocated");
        if items(&claim["status"]["reservedFor"]).next().is_some() {
            states.push("reserved");
        }
    } else if !deleted {
        states.push("pending");
    }
    json!(states.join(","))
}
