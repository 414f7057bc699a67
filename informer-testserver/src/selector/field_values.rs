//! The fields an object can be selected by (`fieldSelector`) and the value each shows, as
//! kube-apiserver computes them: a built-in type's field labels (its `AddFieldLabelConversionFunc`
//! in `pkg/apis/<group>/<version>/conversion.go`) and values (its `GetAttrs` /
//! `ToSelectableFields` in `pkg/registry/<group>/<type>/strategy.go`).
//!
//! Values are those of Go's typed objects, so an unset field shows its zero value: a node
//! without `spec.unschedulable` is `spec.unschedulable=false`, a replica set without
//! `status.replicas` is `status.replicas=0`, an unscheduled pod is `spec.nodeName=`. A label
//! a type accepts but does not compute (a pod's `status.podIPs`) is always empty, as there.
//!
//! Types without a conversion function of their own (config maps, deployments, ...) take
//! apimachinery's default: `metadata.name` and `metadata.namespace`. Custom resources take
//! apiextensions' rules: `metadata.name`, `metadata.namespace` when namespaced, and the CRD
//! version's `selectableFields`, whose values are printed as Go's `fmt.Sprint` prints them.

use serde_json::Value;

/// Where a field label's value comes from.
#[derive(Clone, Copy)]
enum Source {
    /// A string at a dotted path; empty when unset.
    Text(&'static str),
    /// A boolean at a dotted path; `false` when unset.
    Bool(&'static str),
    /// An integer at a dotted path; `0` when unset.
    Int(&'static str),
    /// The first non-empty string of the paths.
    FirstText(&'static [&'static str]),
    /// Accepted but not computed by kube-apiserver: always empty.
    Empty,
}

/// A field label and its value.
type Label = (&'static str, Source);

/// How a type refuses a field label it does not support.
#[derive(Clone, Copy)]
enum Refusal {
    /// `field label not supported: <label>` (most conversion functions, custom resources).
    Plain,
    /// `field label "<label>" not supported for <type>` (batch/v1 jobs).
    ForType(&'static str),
    /// `field label not supported for <group>/<version>, Kind=<kind>: <label>`.
    ForKind,
}

/// A built-in type's selectable fields.
struct Rules {
    labels: &'static [Label],
    refusal: Refusal,
}

const NAME: Label = ("metadata.name", Source::Text("metadata.name"));
const NAMESPACE: Label = ("metadata.namespace", Source::Text("metadata.namespace"));

const POD: &[Label] = &[
    NAME,
    NAMESPACE,
    ("spec.nodeName", Source::Text("spec.nodeName")),
    // the name old v1 clients send for `spec.nodeName`
    ("spec.host", Source::Text("spec.nodeName")),
    ("spec.restartPolicy", Source::Text("spec.restartPolicy")),
    ("spec.schedulerName", Source::Text("spec.schedulerName")),
    (
        "spec.serviceAccountName",
        Source::FirstText(&["spec.serviceAccountName", "spec.serviceAccount"]),
    ),
    ("spec.hostNetwork", Source::Bool("spec.hostNetwork")),
    ("status.phase", Source::Text("status.phase")),
    (
        "status.podIP",
        Source::FirstText(&["status.podIP", "status.podIPs.0.ip"]),
    ),
    ("status.podIPs", Source::Empty),
    (
        "status.nominatedNodeName",
        Source::Text("status.nominatedNodeName"),
    ),
];

const CORE_EVENT: &[Label] = &[
    ("involvedObject.kind", Source::Text("involvedObject.kind")),
    (
        "involvedObject.namespace",
        Source::Text("involvedObject.namespace"),
    ),
    ("involvedObject.name", Source::Text("involvedObject.name")),
    ("involvedObject.uid", Source::Text("involvedObject.uid")),
    (
        "involvedObject.apiVersion",
        Source::Text("involvedObject.apiVersion"),
    ),
    (
        "involvedObject.resourceVersion",
        Source::Text("involvedObject.resourceVersion"),
    ),
    (
        "involvedObject.fieldPath",
        Source::Text("involvedObject.fieldPath"),
    ),
    ("reason", Source::Text("reason")),
    ("reportingComponent", Source::Text("reportingComponent")),
    (
        "source",
        Source::FirstText(&["source.component", "reportingComponent"]),
    ),
    ("type", Source::Text("type")),
    NAMESPACE,
    NAME,
];

/// `events.k8s.io` names the core event's fields differently (`regarding` for
/// `involvedObject`); kube-apiserver maps its labels onto the core event's.
const EVENTS_EVENT: &[Label] = &[
    ("reason", Source::Text("reason")),
    ("regarding.kind", Source::Text("regarding.kind")),
    ("regarding.namespace", Source::Text("regarding.namespace")),
    ("regarding.name", Source::Text("regarding.name")),
    ("regarding.uid", Source::Text("regarding.uid")),
    ("regarding.apiVersion", Source::Text("regarding.apiVersion")),
    (
        "regarding.resourceVersion",
        Source::Text("regarding.resourceVersion"),
    ),
    ("regarding.fieldPath", Source::Text("regarding.fieldPath")),
    ("reportingController", Source::Text("reportingController")),
    (
        "source",
        Source::FirstText(&["deprecatedSource.component", "reportingController"]),
    ),
    ("type", Source::Text("type")),
    NAMESPACE,
    NAME,
];

const REPLICAS: &[Label] = &[
    NAME,
    NAMESPACE,
    ("status.replicas", Source::Int("status.replicas")),
];

/// The rules of a built-in kind with a field label conversion function of its own.
fn builtin_rules(group: &str, kind: &str) -> Option<Rules> {
    let (labels, refusal): (&'static [Label], Refusal) = match (group, kind) {
        ("", "Pod") => (POD, Refusal::Plain),
        ("", "Node") => (
            &[NAME, ("spec.unschedulable", Source::Bool("spec.unschedulable"))],
            Refusal::Plain,
        ),
        ("", "ReplicationController") | ("apps", "ReplicaSet") => (REPLICAS, Refusal::Plain),
        ("", "Event") => (CORE_EVENT, Refusal::Plain),
        ("events.k8s.io", "Event") => (EVENTS_EVENT, Refusal::Plain),
        ("", "Namespace") => (
            &[("status.phase", Source::Text("status.phase")), NAME],
            Refusal::Plain,
        ),
        ("", "Secret") => (&[("type", Source::Text("type")), NAMESPACE, NAME], Refusal::Plain),
        ("", "Service") => (
            &[
                NAMESPACE,
                NAME,
                ("spec.clusterIP", Source::Text("spec.clusterIP")),
                ("spec.type", Source::Text("spec.type")),
            ],
            Refusal::Plain,
        ),
        ("batch", "Job") => (
            &[
                NAME,
                NAMESPACE,
                ("status.successful", Source::Int("status.succeeded")),
            ],
            Refusal::ForType("batchv1.Job"),
        ),
        ("certificates.k8s.io", "CertificateSigningRequest" | "ClusterTrustBundle") => (
            &[NAME, ("spec.signerName", Source::Text("spec.signerName"))],
            Refusal::Plain,
        ),
        ("certificates.k8s.io", "PodCertificateRequest") => (
            &[
                NAME,
                NAMESPACE,
                ("spec.signerName", Source::Text("spec.signerName")),
                ("spec.podName", Source::Text("spec.podName")),
                ("spec.nodeName", Source::Text("spec.nodeName")),
            ],
            Refusal::Plain,
        ),
        ("resource.k8s.io", "ResourceSlice") => (
            &[
                NAME,
                ("spec.nodeName", Source::Text("spec.nodeName")),
                ("spec.driver", Source::Text("spec.driver")),
            ],
            Refusal::ForKind,
        ),
        _ => return None,
    };
    Some(Rules { labels, refusal })
}

/// What kind of type a resource is, for its field selectors.
pub(crate) enum TypeRules<'a> {
    /// A built-in type: its own rules, or apimachinery's default (`metadata.name`,
    /// `metadata.namespace`).
    Builtin {
        /// `group/version` or `v1`, for messages.
        api_version: &'a str,
        /// The kind.
        kind: &'a str,
    },
    /// A custom resource (or another type the server does not know as built-in):
    /// `metadata.name`, `metadata.namespace` when namespaced, and `selectable` fields.
    Custom {
        /// Whether objects live in namespaces.
        namespaced: bool,
        /// The selectable fields of the CRD version (paths without the leading dot).
        selectable: &'a [String],
    },
}

impl TypeRules<'_> {
    /// Checks that `label` can select objects of this type; the error is kube-apiserver's
    /// message for it (a `400 BadRequest`).
    pub(crate) fn check(&self, label: &str) -> Result<(), String> {
        match *self {
            TypeRules::Builtin { api_version, kind } => {
                let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
                let Some(rules) = builtin_rules(group, kind) else {
                    return match label {
                        "metadata.name" | "metadata.namespace" => Ok(()),
                        _ => Err(format!(
                            "{label:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                        )),
                    };
                };
                if rules.labels.iter().any(|(name, _)| *name == label) {
                    return Ok(());
                }
                Err(match rules.refusal {
                    Refusal::Plain => format!("field label not supported: {label}"),
                    Refusal::ForType(what) => {
                        format!("field label {label:?} not supported for {what}")
                    }
                    Refusal::ForKind => {
                        format!("field label not supported for {api_version}, Kind={kind}: {label}")
                    }
                })
            }
            TypeRules::Custom {
                namespaced,
                selectable,
            } => {
                let known = label == "metadata.name"
                    || (namespaced && label == "metadata.namespace")
                    || selectable.iter().any(|f| f == label);
                if known {
                    Ok(())
                } else {
                    Err(format!("field label not supported: {label}"))
                }
            }
        }
    }
}

/// The value `object` shows to a field selector on `label`: by its own `apiVersion` and
/// `kind`, with Go's zero value for an unset field of a built-in type; for other types (and
/// labels no rule names) the value at the label's path, empty when unset.
pub(crate) fn value(object: &Value, label: &str) -> String {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = object["kind"].as_str().unwrap_or_default();
    let source = builtin_rules(group, kind)
        .and_then(|rules| rules.labels.iter().find(|(name, _)| *name == label).map(|l| l.1));
    match source {
        Some(Source::Text(path)) => text(at(object, path)),
        Some(Source::Bool(path)) => at(object, path).as_bool().unwrap_or(false).to_string(),
        Some(Source::Int(path)) => match at(object, path) {
            Value::Null => "0".to_owned(),
            other => text(other),
        },
        Some(Source::FirstText(paths)) => paths
            .iter()
            .map(|path| text(at(object, path)))
            .find(|value| !value.is_empty())
            .unwrap_or_default(),
        Some(Source::Empty) => String::new(),
        None => text(at(object, label)),
    }
}

/// The value at a dotted path (`status.podIPs.0.ip`: a number indexes an array); `null` when
/// any step is missing.
fn at<'a>(object: &'a Value, path: &str) -> &'a Value {
    let mut value = object;
    for segment in path.split('.') {
        value = match value {
            Value::Array(items) => segment
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
                .unwrap_or(&Value::Null),
            _ => value.get(segment).unwrap_or(&Value::Null),
        };
    }
    value
}

/// A field's value as Go prints it (`fmt.Sprint`, `strconv`): strings bare, numbers and
/// booleans as written, empty when unset.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn builtin<'a>(api_version: &'a str, kind: &'a str) -> TypeRules<'a> {
        TypeRules::Builtin { api_version, kind }
    }

    #[test]
    fn unset_fields_show_go_zero_values() {
        let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}});
        assert_eq!(value(&node, "spec.unschedulable"), "false");
        let cordoned = json!({"apiVersion": "v1", "kind": "Node", "spec": {"unschedulable": true}});
        assert_eq!(value(&cordoned, "spec.unschedulable"), "true");
        let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"}});
        assert_eq!(value(&rs, "status.replicas"), "0");
        let rc = json!({"apiVersion": "v1", "kind": "ReplicationController", "status": {"replicas": 3}});
        assert_eq!(value(&rc, "status.replicas"), "3");
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {"succeeded": 2}});
        assert_eq!(value(&job, "status.successful"), "2");
        let new_job = json!({"apiVersion": "batch/v1", "kind": "Job"});
        assert_eq!(value(&new_job, "status.successful"), "0");
    }

    /// As kube-apiserver's pod strategy computes them (`ToSelectableFields`).
    #[test]
    fn pod_fields_follow_the_pod_strategy() {
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"serviceAccount": "legacy"},
            "status": {"podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]},
        });
        assert_eq!(value(&pod, "spec.nodeName"), "");
        assert_eq!(value(&pod, "spec.host"), "");
        assert_eq!(value(&pod, "spec.hostNetwork"), "false");
        assert_eq!(value(&pod, "spec.serviceAccountName"), "legacy");
        assert_eq!(value(&pod, "status.podIP"), "10.0.0.1");
        assert_eq!(value(&pod, "status.podIPs"), "");
        assert_eq!(value(&pod, "status.phase"), "");
        assert_eq!(value(&pod, "metadata.namespace"), "ns");
    }

    #[test]
    fn event_sources_fall_back_to_the_reporting_controller() {
        let core = json!({"apiVersion": "v1", "kind": "Event", "reportingComponent": "kubelet",
            "involvedObject": {"kind": "Pod", "name": "p"}});
        assert_eq!(value(&core, "source"), "kubelet");
        assert_eq!(value(&core, "involvedObject.kind"), "Pod");
        assert_eq!(value(&core, "involvedObject.uid"), "");
        let events = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "reportingController": "ctl", "regarding": {"kind": "Node"}});
        assert_eq!(value(&events, "source"), "ctl");
        assert_eq!(value(&events, "regarding.kind"), "Node");
    }

    #[test]
    fn labels_are_checked_per_type_with_kube_apiserver_messages() {
        let node = builtin("v1", "Node");
        assert!(node.check("spec.unschedulable").is_ok());
        assert_eq!(
            node.check("metadata.namespace"),
            Err("field label not supported: metadata.namespace".into())
        );
        assert_eq!(
            builtin("v1", "ConfigMap").check("data.x"),
            Err(
                r#""data.x" is not a known field selector: only "metadata.name", "metadata.namespace""#
                    .into()
            )
        );
        assert_eq!(
            builtin("batch/v1", "Job").check("status.failed"),
            Err(r#"field label "status.failed" not supported for batchv1.Job"#.into())
        );
        assert_eq!(
            builtin("resource.k8s.io/v1", "ResourceSlice").check("spec.pool"),
            Err("field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool".into())
        );
        let events = builtin("events.k8s.io/v1", "Event");
        assert!(events.check("regarding.name").is_ok());
        assert!(events.check("involvedObject.name").is_err());
        assert!(builtin("v1", "Pod").check("spec.host").is_ok());
    }

    /// Ported from apiextensions-apiserver's `TestConvertFieldLabel`.
    #[test]
    fn custom_resources_select_by_name_namespace_and_selectable_fields() {
        let cases = [
            (false, "metadata.name", true),
            (false, "metadata.namespace", false),
            (false, "some.other.field", false),
            (true, "metadata.name", true),
            (true, "metadata.namespace", true),
            (true, "some.other.field", false),
        ];
        for (namespaced, label, ok) in cases {
            let rules = TypeRules::Custom {
                namespaced,
                selectable: &[],
            };
            match rules.check(label) {
                Ok(()) => assert!(ok, "{label} accepted (namespaced: {namespaced})"),
                Err(message) => {
                    assert!(!ok, "{label} refused (namespaced: {namespaced})");
                    assert_eq!(message, format!("field label not supported: {label}"));
                }
            }
        }
        let selectable = ["spec.size".to_owned()];
        let widgets = TypeRules::Custom {
            namespaced: true,
            selectable: &selectable,
        };
        assert!(widgets.check("spec.size").is_ok());
        let widget =
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"size": 3, "on": true}});
        assert_eq!(value(&widget, "spec.size"), "3");
        assert_eq!(value(&widget, "spec.on"), "true");
        assert_eq!(value(&widget, "spec.missing"), "");
    }
}
