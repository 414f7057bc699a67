//! The default classes kube-apiserver's admission gives new objects that name none: a
//! PersistentVolumeClaim gets the default StorageClass (`DefaultStorageClass`), an Ingress the
//! default IngressClass (`DefaultIngressClass`). A class is the default when its
//! `is-default-class` annotation is `"true"`; of several, the newest wins (then the first by
//! name). Without a default class the object is left as it is.
//!
//! Not done: the PersistentVolume controller's later assignment of a default class to claims
//! created before one existed.

use serde_json::{Value, json};

use crate::admission::context::WriteContext;
use crate::admission::plugin::Plugin;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::State;
use crate::storage::store::meta_str;

/// What a kind of object takes a default class for.
struct ClassField {
    /// The group and plural of the classes.
    classes: (&'static str, &'static str),
    /// The annotations that mark a class as the default.
    default_annotations: &'static [&'static str],
    /// The field of the object's spec that names its class.
    field: &'static str,
    /// The annotation of the object that names its class the older way.
    legacy_annotation: &'static str,
}

const CLAIM: ClassField = ClassField {
    classes: ("storage.k8s.io", "storageclasses"),
    default_annotations: &[
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ],
    field: "storageClassName",
    legacy_annotation: "volume.beta.kubernetes.io/storage-class",
};

const INGRESS: ClassField = ClassField {
    classes: ("networking.k8s.io", "ingressclasses"),
    default_annotations: &["ingressclass.kubernetes.io/is-default-class"],
    field: "ingressClassName",
    legacy_annotation: "kubernetes.io/ingress.class",
};

/// Gives new claims and Ingresses the default class.
pub(crate) struct DefaultClasses;

impl Plugin for DefaultClasses {
    fn admit_create(
        &self,
        state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        let class = match (rt.group.as_str(), rt.kind.as_str()) {
            ("", "PersistentVolumeClaim") => &CLAIM,
            ("networking.k8s.io", "Ingress") => &INGRESS,
            _ => return Ok(()),
        };
        if names_a_class(object, class) {
            return Ok(());
        }
        if let Some(name) = default_class(state, class)
            && let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut)
        {
            spec.insert(class.field.to_owned(), json!(name));
        }
        Ok(())
    }
}

/// Whether the object names its class, even as `""` (which asks for none).
fn names_a_class(object: &Value, class: &ClassField) -> bool {
    !object["spec"][class.field].is_null()
        || object["metadata"]["annotations"]
            .get(class.legacy_annotation)
            .is_some()
}

/// The name of the default class: the newest of those marked, then the first by name.
fn default_class(state: &State, class: &ClassField) -> Option<String> {
    let (group, plural) = class.classes;
    let rt = state.registry.get(group, "v1", plural)?;
    state
        .store
        .objects(rt)
        .map(|(_, candidate)| candidate)
        .filter(|candidate| is_default(candidate, class))
        .filter_map(|candidate| {
            let created = meta_str(candidate, "creationTimestamp").unwrap_or_default();
            Some((created, meta_str(candidate, "name")?))
        })
        // RFC 3339 times in UTC order as text
        .max_by(|(a_time, a_name), (b_time, b_name)| a_time.cmp(b_time).then(b_name.cmp(a_name)))
        .map(|(_, name)| name.to_owned())
}

fn is_default(candidate: &Value, class: &ClassField) -> bool {
    let annotations = &candidate["metadata"]["annotations"];
    class
        .default_annotations
        .iter()
        .any(|annotation| annotations[*annotation] == "true")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::namespace_lifecycle::create_test_namespace;
    use crate::registry::{Registry, builtin_types};

    fn state() -> State {
        let mut s = State::new(Registry::with_types(builtin_types()), 100);
        create_test_namespace(&mut s, "ns");
        s
    }

    fn served(s: &State, group: &str, plural: &str) -> ResourceType {
        s.registry.get(group, "v1", plural).cloned().expect("served")
    }

    fn storage_class(s: &mut State, name: &str, annotations: Value) {
        let rt = served(s, "storage.k8s.io", "storageclasses");
        let object = json!({"metadata": {"name": name, "annotations": annotations}, "provisioner": "example.com/disk"});
        s.write().create(&rt, None, object).expect("class created");
    }

    fn ingress_class(s: &mut State, name: &str, annotations: Value) {
        let rt = served(s, "networking.k8s.io", "ingressclasses");
        let object = json!({"metadata": {"name": name, "annotations": annotations},
            "spec": {"controller": "example.com/ingress"}});
        s.write().create(&rt, None, object).expect("class created");
    }

    fn claim(s: &mut State, name: &str, spec: Value, annotations: Value) -> Value {
        let rt = served(s, "", "persistentvolumeclaims");
        let object = json!({"metadata": {"name": name, "annotations": annotations}, "spec": spec});
        s.write().create(&rt, Some("ns"), object).expect("claim created")
    }

    // kube: plugin/pkg/admission/storage/storageclass/setdefault/admission_test.go,
    // TestAdmission: no default class, one default (GA or beta annotation), a claim that names
    // a class or asks for none, several defaults (the newest wins).
    #[test]
    fn a_claim_without_a_class_gets_the_default_storage_class() {
        let mut s = state();
        let bare = json!({"accessModes": ["ReadWriteOnce"]});
        let none = claim(&mut s, "before", bare.clone(), json!({}));
        assert!(
            none["spec"].get("storageClassName").is_none(),
            "no default class yet"
        );
        storage_class(&mut s, "slow", json!({}));
        storage_class(
            &mut s,
            "fast",
            json!({"storageclass.beta.kubernetes.io/is-default-class": "true"}),
        );
        assert_eq!(
            claim(&mut s, "a", bare.clone(), json!({}))["spec"]["storageClassName"],
            "fast"
        );
        let mut named = bare.clone();
        named["storageClassName"] = json!("");
        assert_eq!(
            claim(&mut s, "b", named, json!({}))["spec"]["storageClassName"],
            ""
        );
        let legacy = json!({"volume.beta.kubernetes.io/storage-class": "slow"});
        assert!(
            claim(&mut s, "c", bare.clone(), legacy)["spec"]
                .get("storageClassName")
                .is_none()
        );
        // two defaults created in the same second: the first by name
        storage_class(
            &mut s,
            "aaa",
            json!({"storageclass.kubernetes.io/is-default-class": "true"}),
        );
        assert_eq!(
            claim(&mut s, "d", bare, json!({}))["spec"]["storageClassName"],
            "aaa"
        );
    }

    // kube: plugin/pkg/admission/network/defaultingressclass/admission_test.go, TestAdmission.
    #[test]
    fn an_ingress_without_a_class_gets_the_default_ingress_class() {
        let mut s = state();
        ingress_class(
            &mut s,
            "nginx",
            json!({"ingressclass.kubernetes.io/is-default-class": "true"}),
        );
        ingress_class(
            &mut s,
            "other",
            json!({"ingressclass.kubernetes.io/is-default-class": "false"}),
        );
        let rt = served(&s, "networking.k8s.io", "ingresses");
        let backend = json!({"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}});
        let ingress = s
            .write()
            .create(
                &rt,
                Some("ns"),
                json!({"metadata": {"name": "a"}, "spec": backend}),
            )
            .expect("created");
        assert_eq!(ingress["spec"]["ingressClassName"], "nginx");
        let annotated = json!({"metadata": {"name": "b", "annotations": {"kubernetes.io/ingress.class": "other"}},
            "spec": backend});
        let ingress = s.write().create(&rt, Some("ns"), annotated).expect("created");
        assert!(ingress["spec"].get("ingressClassName").is_none());
    }
}
