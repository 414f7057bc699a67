//! `metadata.generation`, kept as kube-apiserver's registry strategies keep it (the rule of each
//! built-in kind is its description's [`Generation`]): only the kinds whose strategy sets it on
//! create have one (Deployments, Pods, custom resources, webhook
//! configurations, ...; not ConfigMaps, Secrets or Services), and each bumps it on the changes
//! its `PrepareForUpdate` compares. Whatever the kind, a request cannot change it: an update
//! starts from the stored generation (`rest.BeforeUpdate`), and a create of a kind without one
//! leaves the client's value as it is (`rest.BeforeCreate` does not touch it).

use serde_json::{Map, Value, json};

use crate::builtin::Generation;
use crate::registry::ResourceType;

impl Generation {
    /// The rule of `rt`: its description's if it is a built-in kind (`builtin`), else a custom
    /// resource's, which always keeps a generation.
    pub(crate) fn of(rt: &ResourceType, builtin: bool) -> Self {
        match (builtin, rt.builtin()) {
            (true, Some(description)) => description.generation,
            (true, None) => Self::None,
            (false, _) if rt.status_subresource => Self::Spec,
            (false, _) => Self::AllButMetadata,
        }
    }

    /// Sets the generation of a new object's metadata.
    pub(crate) fn on_create(self, meta: &mut Map<String, Value>) {
        if self != Self::None {
            meta.insert("generation".into(), json!(1));
        }
    }

    /// Sets the generation of `new`, which replaces `old`: the stored one, raised by one when
    /// what the kind compares changed.
    pub(crate) fn on_update(self, old: &Value, new: &mut Value) {
        let stored = old.pointer("/metadata/generation").cloned();
        let bumped = match self {
            Self::None | Self::OnCreate => false,
            Self::Spec => content(new, true) != content(old, true),
            Self::SpecAnd(field) => {
                content(new, true) != content(old, true)
                    || new["metadata"].get(field) != old["metadata"].get(field)
            }
            Self::AllButMetadata => content(new, false) != content(old, false),
        };
        let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) else {
            return;
        };
        match stored.and_then(|g| g.as_i64()) {
            Some(generation) => meta.insert("generation".into(), json!(generation + i64::from(bumped))),
            None => meta.remove("generation"),
        };
    }
}

/// The fields of `object` but its metadata, type and (if `without_status`) status: what the
/// strategies compare.
fn content(object: &Value, without_status: bool) -> Map<String, Value> {
    let mut fields = object.as_object().cloned().unwrap_or_default();
    for field in ["metadata", "apiVersion", "kind"] {
        fields.remove(field);
    }
    if without_status {
        fields.remove("status");
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(group: &str, kind: &str) -> ResourceType {
        ResourceType::new(group, "v1", kind, &format!("{}s", kind.to_lowercase()), true)
    }

    #[test]
    fn only_the_kinds_whose_strategy_keeps_a_generation_get_one() {
        for (group, kind) in [
            ("", "ConfigMap"),
            ("", "Secret"),
            ("", "Service"),
            ("coordination.k8s.io", "Lease"),
        ] {
            let mut meta = Map::new();
            Generation::of(&rt(group, kind), true).on_create(&mut meta);
            assert_eq!(meta.get("generation"), None, "{kind}");
        }
        for (group, kind) in [("apps", "Deployment"), ("", "Pod"), ("batch", "Job")] {
            let mut meta = Map::new();
            Generation::of(&rt(group, kind), true).on_create(&mut meta);
            assert_eq!(meta.get("generation"), Some(&json!(1)), "{kind}");
        }
        let widget = rt("example.com", "Widget");
        assert_eq!(Generation::of(&widget, false), Generation::AllButMetadata);
        assert_eq!(
            Generation::of(&widget.with_status_subresource(true), false),
            Generation::Spec
        );
    }

    #[test]
    fn an_update_keeps_the_stored_generation_and_bumps_it_on_what_the_kind_compares() {
        let old = json!({"metadata": {"generation": 3, "annotations": {"a": "1"}}, "spec": {"replicas": 1}, "status": {"x": 1}});
        let update = |rule: Generation, new: Value| {
            let mut new = new;
            rule.on_update(&old, &mut new);
            new["metadata"].get("generation").cloned()
        };
        // a client cannot set it
        let forged = json!({"metadata": {"generation": 9, "annotations": {"a": "1"}}, "spec": {"replicas": 1}, "status": {"x": 1}});
        assert_eq!(update(Generation::Spec, forged), Some(json!(3)));
        let scaled =
            json!({"metadata": {"annotations": {"a": "1"}}, "spec": {"replicas": 2}, "status": {"x": 1}});
        assert_eq!(update(Generation::Spec, scaled), Some(json!(4)));
        let annotated =
            json!({"metadata": {"annotations": {"a": "2"}}, "spec": {"replicas": 1}, "status": {"x": 1}});
        assert_eq!(update(Generation::Spec, annotated.clone()), Some(json!(3)));
        assert_eq!(
            update(Generation::SpecAnd("annotations"), annotated.clone()),
            Some(json!(4))
        );
        assert_eq!(update(Generation::SpecAnd("labels"), annotated), Some(json!(3)));
        let scaled = json!({"metadata": {}, "spec": {"replicas": 2}});
        assert_eq!(update(Generation::OnCreate, scaled), Some(json!(3)));
        let status =
            json!({"metadata": {"annotations": {"a": "1"}}, "spec": {"replicas": 1}, "status": {"x": 2}});
        assert_eq!(update(Generation::Spec, status.clone()), Some(json!(3)));
        assert_eq!(update(Generation::AllButMetadata, status), Some(json!(4)));

        // a kind without one never gets one, whatever the client sends
        let config_map = json!({"metadata": {"name": "c"}, "data": {"k": "v"}});
        let mut new = json!({"metadata": {"name": "c", "generation": 5}, "data": {"k": "w"}});
        Generation::None.on_update(&config_map, &mut new);
        assert_eq!(new["metadata"].get("generation"), None);
    }
}
