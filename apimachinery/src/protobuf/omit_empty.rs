//! The JSON of a built-in object without what its protobuf form cannot carry: what Go's JSON
//! of the object, once stored, would not show.
//!
//! kube-apiserver decodes a written object into its Go type and stores it in protobuf, so an
//! empty list or map (no entries on the wire) and a zero scalar of an `omitempty` field (left
//! out by Go's JSON) are gone from every answer, JSON or protobuf. A server that keeps the JSON
//! as written must take them out the same way, or its JSON answer (`"annotations": {}`) and its
//! protobuf answer (no annotations) of one object decode to different objects.

use serde_json::{Map, Value};

use super::{
    lookup::{kind_message, message_at},
    spec::{FieldSpec, MessageSpec, Presence, Special, Wire},
};

/// Takes out of `object`, the JSON of an object (or a list) of the built-in kind `kind` of
/// `api_version`, what its protobuf form does not carry: empty lists and maps, and the zero
/// scalars (`""`, `0`, `false`) of fields that are neither pointers nor without `omitempty` in
/// Go. Structs stay, empty or not (Go's JSON shows them); so do fields the table does not know.
/// Returns `false`, leaving `object` as it is, for a kind without a protobuf form (a custom
/// resource), whose JSON is stored as written.
///
/// The trimmed JSON decodes to the object the protobuf document of `object` decodes to.
///
/// ```
/// use informer_apimachinery::protobuf;
/// use serde_json::json;
///
/// let mut pod = json!({
///     "metadata": {"name": "p", "annotations": {}, "generateName": ""},
///     "spec": {"containers": [{"name": "main", "resources": {}, "env": []}]},
/// });
/// assert!(protobuf::omit_empty("v1", "Pod", &mut pod));
/// assert_eq!(
///     pod,
///     json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "main", "resources": {}}]}})
/// );
/// assert!(!protobuf::omit_empty("example.com/v1", "Widget", &mut json!({"spec": {}})));
/// ```
pub fn omit_empty(api_version: &str, kind: &str, object: &mut Value) -> bool {
    let Some(spec) = kind_message(api_version, kind) else {
        return false;
    };
    if let Value::Object(fields) = object {
        trim_message(fields, spec);
    }
    true
}

fn trim_message(fields: &mut Map<String, Value>, spec: &MessageSpec) {
    if spec.special != Special::None {
        return;
    }
    for field in spec.fields {
        if field.json.is_empty() {
            // a message embedded inline: its fields are the object's own
            if let Wire::Message(index) = field.wire {
                trim_message(fields, message_at(index));
            }
            continue;
        }
        if fields
            .get_mut(field.json)
            .is_some_and(|value| trim_field(field, value))
        {
            fields.remove(field.json);
        }
    }
}

/// Trims the value of `field`; whether the field itself goes.
fn trim_field(field: &FieldSpec, value: &mut Value) -> bool {
    match value {
        Value::Array(items) if field.repeated => {
            if let Wire::Message(index) = field.wire {
                items.iter_mut().for_each(|item| trim_value(item, index));
            }
            items.is_empty()
        }
        Value::Object(entries) if field.wire.is_map() => {
            if let Wire::MapMessage(index) = field.wire {
                entries.values_mut().for_each(|item| trim_value(item, index));
            }
            entries.is_empty()
        }
        // null, or a value that does not fit the field: the decoder's to judge
        Value::Null => false,
        _ if field.repeated || field.wire.is_map() => false,
        _ => match field.wire {
            Wire::Message(index) => {
                trim_value(value, index);
                false
            }
            _ => field.presence == Presence::OmitEmpty && is_zero(value),
        },
    }
}

fn trim_value(value: &mut Value, message: usize) {
    if let Value::Object(fields) = value {
        trim_message(fields, message_at(message));
    }
}

/// Whether a scalar is Go's zero value.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::String(text) => text.is_empty(),
        Value::Bool(set) => !set,
        Value::Number(number) => number.as_f64() == Some(0.0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Pod, Service};
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::omit_empty;
    use crate::protobuf::{from_slice, to_vec};

    /// The typed object of `json` as JSON and as its protobuf document.
    fn decoded_both_ways<T: DeserializeOwned>(json: &Value) -> (T, T) {
        let from_json = serde_json::from_value(json.clone()).expect("the JSON decodes");
        let document = to_vec(json).expect("the JSON encodes");
        (from_json, from_slice(&document).expect("the protobuf decodes"))
    }

    fn trimmed(mut object: Value) -> Value {
        let (api_version, kind) = (
            object["apiVersion"].as_str().unwrap_or_default().to_owned(),
            object["kind"].as_str().unwrap_or_default().to_owned(),
        );
        assert!(
            omit_empty(&api_version, &kind, &mut object),
            "{kind} has a protobuf form"
        );
        object
    }

    #[test]
    fn an_untrimmed_pod_decodes_differently_from_json_and_from_protobuf() {
        // a pod whose last annotation was removed, as the fault suite's cured pods are
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "beta", "resourceVersion": "51", "annotations": {}},
            "spec": {"containers": [{"name": "main", "image": "nginx"}]},
        });
        let (from_json, from_protobuf) = decoded_both_ways::<Pod>(&pod);
        assert_eq!(from_json.metadata.annotations, Some(Default::default()));
        assert_eq!(from_protobuf.metadata.annotations, None);
        let (from_json, from_protobuf) = decoded_both_ways::<Pod>(&trimmed(pod));
        assert_eq!(from_json, from_protobuf);
    }

    #[test]
    fn empty_lists_maps_and_omitempty_zeros_go_structs_and_pointers_stay() {
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": "p", "generateName": "", "generation": 0, "labels": {"app": "web"},
                "annotations": {}, "finalizers": [], "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u", "controller": false},
                ],
            },
            "spec": {
                "containers": [{
                    "name": "main", "image": "", "env": [], "ports": [], "resources": {"limits": {}},
                    "securityContext": {}, "stdin": false,
                }],
                "nodeName": "", "hostNetwork": false, "priority": 0, "nodeSelector": {},
                "volumes": [{"name": "scratch", "emptyDir": {}}],
            },
            "status": {"containerStatuses": [{"name": "main", "ready": false, "restartCount": 0, "image": "", "imageID": ""}]},
        });
        let trimmed = trimmed(pod.clone());
        assert_eq!(
            trimmed,
            json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {
                    "name": "p", "labels": {"app": "web"},
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u", "controller": false}],
                },
                "spec": {
                    "containers": [{"name": "main", "resources": {}, "securityContext": {}}],
                    "priority": 0,
                    "volumes": [{"name": "scratch", "emptyDir": {}}],
                },
                // ready, restartCount, image and imageID have no omitempty: Go's JSON shows them
                "status": {"containerStatuses": [{"name": "main", "ready": false, "restartCount": 0, "image": "", "imageID": ""}]},
            })
        );
        let (from_json, from_protobuf) = decoded_both_ways::<Pod>(&trimmed);
        assert_eq!(from_json, from_protobuf);
        let untrimmed: Pod = from_slice(&to_vec(&pod).expect("encoded")).expect("decoded");
        assert_eq!(
            from_json, untrimmed,
            "the trimmed JSON is what the protobuf of the written object decodes to"
        );
        let mut again = trimmed.clone();
        omit_empty("v1", "Pod", &mut again);
        assert_eq!(again, trimmed, "trimming twice changes nothing more");
    }

    #[test]
    fn lists_maps_of_messages_and_other_kinds_are_trimmed_throughout() {
        let list = trimmed(json!({
            "apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "7", "continue": ""},
            "items": [{"metadata": {"name": "a", "annotations": {}}, "data": {}, "immutable": false}],
        }));
        assert_eq!(
            list,
            json!({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "7"},
                   "items": [{"metadata": {"name": "a"}, "immutable": false}]}),
            "immutable is a pointer in Go: its false stays"
        );
        let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "annotations": {}}, "data": {}});
        let (from_json, from_protobuf) = decoded_both_ways::<ConfigMap>(&trimmed(config_map));
        assert_eq!(from_json, from_protobuf);
        let service = trimmed(json!({
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
            "spec": {"ports": [{"port": 80, "targetPort": 0, "protocol": ""}], "selector": {}},
            "status": {"loadBalancer": {"ingress": []}},
        }));
        assert_eq!(
            service,
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                   "spec": {"ports": [{"port": 80, "targetPort": 0}]}, "status": {"loadBalancer": {}}})
        );
        let (from_json, from_protobuf) = decoded_both_ways::<Service>(&service);
        assert_eq!(from_json, from_protobuf);
    }

    #[test]
    fn kinds_without_a_protobuf_form_are_kept_as_written() {
        let mut widget =
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"annotations": {}}});
        let written = widget.clone();
        assert!(!omit_empty("example.com/v1", "Widget", &mut widget));
        assert_eq!(widget, written);
    }
}
