//! The columns of storage kinds: persistent volumes and claims, storage classes, CSI drivers
//! and nodes, volume attachments.

use serde_json::{Value, json};

use super::cells::{Column, age_column, builtin, items, name_column, text};

/// The columns of a storage kind; `None` for other kinds.
pub(crate) fn columns(group: &str, plural: &str) -> Option<Vec<Column>> {
    let columns = match (group, plural) {
        ("", "persistentvolumes") => vec![
            name_column(),
            builtin("Capacity", "string", 0, |o| {
                quantity(&o["spec"]["capacity"]["storage"])
            }),
            builtin("Access Modes", "string", 0, |o| {
                access_modes(&o["spec"]["accessModes"])
            }),
            builtin("Reclaim Policy", "string", 0, |o| {
                text(&o["spec"]["persistentVolumeReclaimPolicy"], "")
            }),
            builtin("Status", "string", 0, phase),
            builtin("Claim", "string", 0, |o| {
                let claim = &o["spec"]["claimRef"];
                json!(if claim.is_object() {
                    format!(
                        "{}/{}",
                        claim["namespace"].as_str().unwrap_or_default(),
                        claim["name"].as_str().unwrap_or_default()
                    )
                } else {
                    String::new()
                })
            }),
            builtin("StorageClass", "string", 0, storage_class),
            builtin("VolumeAttributesClass", "string", 0, |o| {
                text(&o["spec"]["volumeAttributesClassName"], "<unset>")
            }),
            builtin("Reason", "string", 0, |o| text(&o["status"]["reason"], "")),
            age_column(),
            builtin("VolumeMode", "string", 1, |o| {
                text(&o["spec"]["volumeMode"], "<unset>")
            }),
        ],
        ("", "persistentvolumeclaims") => vec![
            name_column(),
            builtin("Status", "string", 0, phase),
            builtin("Volume", "string", 0, |o| text(&o["spec"]["volumeName"], "")),
            builtin("Capacity", "string", 0, |o| {
                if bound(o) {
                    quantity(&o["status"]["capacity"]["storage"])
                } else {
                    json!("")
                }
            }),
            builtin("Access Modes", "string", 0, |o| {
                if bound(o) {
                    access_modes(&o["status"]["accessModes"])
                } else {
                    json!("")
                }
            }),
            builtin("StorageClass", "string", 0, storage_class),
            builtin("VolumeAttributesClass", "string", 0, |o| {
                text(&o["spec"]["volumeAttributesClassName"], "<unset>")
            }),
            age_column(),
            builtin("VolumeMode", "string", 1, |o| {
                text(&o["spec"]["volumeMode"], "<unset>")
            }),
        ],
        ("storage.k8s.io", "storageclasses") => vec![
            Column {
                cell: super::cells::Cell::Builtin(storage_class_name),
                ..name_column()
            },
            builtin("Provisioner", "string", 0, |o| text(&o["provisioner"], "")),
            builtin("ReclaimPolicy", "string", 0, |o| {
                text(&o["reclaimPolicy"], "Delete")
            }),
            builtin("VolumeBindingMode", "string", 0, |o| {
                text(&o["volumeBindingMode"], "Immediate")
            }),
            builtin("AllowVolumeExpansion", "string", 0, |o| {
                json!(o["allowVolumeExpansion"].as_bool().unwrap_or(false))
            }),
            age_column(),
        ],
        ("storage.k8s.io", "csidrivers") => vec![
            name_column(),
            builtin("AttachRequired", "boolean", 0, |o| {
                flag(&o["spec"]["attachRequired"], true)
            }),
            builtin("PodInfoOnMount", "boolean", 0, |o| {
                flag(&o["spec"]["podInfoOnMount"], false)
            }),
            builtin("StorageCapacity", "boolean", 0, |o| {
                flag(&o["spec"]["storageCapacity"], false)
            }),
            builtin(
                "TokenRequests",
                "string",
                0,
                |o| match &o["spec"]["tokenRequests"] {
                    Value::Array(requests) => json!(
                        requests
                            .iter()
                            .map(|t| t["audience"].as_str().unwrap_or_default())
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                    _ => json!("<unset>"),
                },
            ),
            builtin("RequiresRepublish", "boolean", 0, |o| {
                flag(&o["spec"]["requiresRepublish"], false)
            }),
            builtin("Modes", "string", 0, |o| {
                let modes: Vec<&str> = items(&o["spec"]["volumeLifecycleModes"])
                    .filter_map(Value::as_str)
                    .collect();
                json!(if modes.is_empty() {
                    "<none>".to_owned()
                } else {
                    modes.join(",")
                })
            }),
            age_column(),
        ],
        ("storage.k8s.io", "csinodes") => vec![
            name_column(),
            builtin("Drivers", "integer", 0, |o| {
                json!(items(&o["spec"]["drivers"]).count())
            }),
            age_column(),
        ],
        ("storage.k8s.io", "volumeattachments") => vec![
            name_column(),
            Column {
                format: "name",
                ..builtin("Attacher", "string", 0, |o| text(&o["spec"]["attacher"], ""))
            },
            builtin("PV", "string", 0, |o| {
                text(&o["spec"]["source"]["persistentVolumeName"], "")
            }),
            builtin("Node", "string", 0, |o| text(&o["spec"]["nodeName"], "")),
            builtin("Attached", "boolean", 0, |o| {
                flag(&o["status"]["attached"], false)
            }),
            age_column(),
        ],
        ("storage.k8s.io", "volumeattributesclasses") => vec![
            Column {
                cell: super::cells::Cell::Builtin(volume_attributes_class_name),
                ..name_column()
            },
            builtin("DriverName", "string", 0, |o| text(&o["driverName"], "")),
            age_column(),
        ],
        ("storage.k8s.io", "csistoragecapacities") => vec![
            name_column(),
            builtin("StorageClassName", "string", 0, |o| {
                text(&o["storageClassName"], "")
            }),
            builtin("Capacity", "string", 0, |o| match &o["capacity"] {
                Value::Null => json!("<unset>"),
                capacity => quantity(capacity),
            }),
        ],
        _ => return None,
    };
    Some(columns)
}

fn flag(value: &Value, default: bool) -> Value {
    json!(value.as_bool().unwrap_or(default))
}

/// A quantity as stored; `0` when absent.
fn quantity(value: &Value) -> Value {
    match value {
        Value::String(s) => json!(s),
        Value::Number(n) => json!(n.to_string()),
        _ => json!("0"),
    }
}

fn bound(claim: &Value) -> bool {
    claim["spec"]["volumeName"]
        .as_str()
        .is_some_and(|v| !v.is_empty())
}

/// The phase, `Terminating` once deleted.
fn phase(object: &Value) -> Value {
    if object["metadata"]["deletionTimestamp"].is_string() {
        return json!("Terminating");
    }
    text(&object["status"]["phase"], "")
}

/// `RWO,ROX,RWX,RWOP`: the modes held, in that order.
fn access_modes(modes: &Value) -> Value {
    let held: Vec<&str> = items(modes).filter_map(Value::as_str).collect();
    let written: Vec<&str> = [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .into_iter()
    .filter(|(mode, _)| held.contains(mode))
    .map(|(_, short)| short)
    .collect();
    json!(written.join(","))
}

/// The beta storage-class annotation when set, else `spec.storageClassName`.
fn storage_class(object: &Value) -> Value {
    let annotation = &object["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"];
    match annotation {
        Value::String(class) => json!(class),
        _ => text(&object["spec"]["storageClassName"], ""),
    }
}

/// The name, with ` (default)` for the default class.
fn storage_class_name(class: &Value) -> Value {
    let annotations = &class["metadata"]["annotations"];
    let default = annotations["storageclass.kubernetes.io/is-default-class"] == "true"
        || annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true";
    let name = class["metadata"]["name"].as_str().unwrap_or_default();
    json!(if default {
        format!("{name} (default)")
    } else {
        name.to_owned()
    })
}

/// The name, with ` (default)` for the default volume attributes class.
fn volume_attributes_class_name(class: &Value) -> Value {
    let annotation = &class["metadata"]["annotations"]["storage.kubernetes.io/is-default-class"];
    let name = class["metadata"]["name"].as_str().unwrap_or_default();
    json!(if annotation == "true" {
        format!("{name} (default)")
    } else {
        name.to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_modes_read_in_kubectl_order() {
        let modes = json!(["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"]);
        assert_eq!(access_modes(&modes), "RWO,RWX");
        assert_eq!(access_modes(&Value::Null), "");
    }
}
