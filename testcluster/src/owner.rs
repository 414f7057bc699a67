//! Owner references: who controls an object, the reference a controller writes on what it
//! creates, and the patches that adopt an orphan or release a child (kube-controller-manager's
//! `ControllerRefManager`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kube::{
    Resource,
    core::{Expression, Selector, SelectorExt},
};
use serde_json::{Value, json};

/// The owner reference with `controller: true`, if any.
pub(crate) fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|owner| owner.controller == Some(true))
}

/// The reference a controller puts on the objects it creates or adopts: `controller` and
/// `blockOwnerDeletion` set, as kube-controller-manager's `NewControllerRef`.
pub(crate) fn controller_reference<K: Resource<DynamicType = ()>>(owner: &K) -> OwnerReference {
    let meta = owner.meta();
    OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// A selector of the labels `selector` asks for; `None` for a missing or empty selector, which
/// kube-controller-manager's workload controllers take as selecting nothing, or one it cannot
/// read.
pub(crate) fn selector_of(selector: Option<&LabelSelector>) -> Option<Selector> {
    let selector = Selector::try_from(selector?.clone()).ok()?;
    (!selector.selects_all()).then_some(selector)
}

/// A selector of exactly the labels in `labels`.
pub(crate) fn selector_from_map(labels: &BTreeMap<String, String>) -> Selector {
    labels
        .iter()
        .map(|(key, value)| Expression::Equal(key.clone(), value.clone()))
        .collect()
}

/// Whether `selector` matches `meta`'s labels.
pub(crate) fn matches(selector: &Selector, meta: &ObjectMeta) -> bool {
    let empty = BTreeMap::new();
    selector.matches(meta.labels.as_ref().unwrap_or(&empty))
}

/// A JSON merge patch that adds `owner` as controller of the object with `meta` (checked
/// against the object's uid, as kube's adoption patch does).
pub(crate) fn adopt_patch(meta: &ObjectMeta, owner: OwnerReference) -> Value {
    let mut owners = meta.owner_references.clone().unwrap_or_default();
    owners.push(owner);
    json!({"metadata": {"ownerReferences": owners, "uid": meta.uid}})
}

/// A JSON merge patch that removes the owner with `owner_uid` from the object with `meta`.
pub(crate) fn release_patch(meta: &ObjectMeta, owner_uid: &str) -> Value {
    let owners: Vec<&OwnerReference> = meta
        .owner_references
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|owner| owner.uid != owner_uid)
        .collect();
    json!({"metadata": {"ownerReferences": owners, "uid": meta.uid}})
}

/// What a controller does with an object its selector may cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// Controlled by the owner and matching: keep.
    Owned,
    /// An orphan that matches: adopt.
    Adopt,
    /// Controlled by the owner but no longer matching: release.
    Release,
    /// Someone else's, or not matching: leave alone.
    Ignore,
}

/// kube's `ClaimObject`: what `owner_uid`'s controller with `selector` does with `meta`.
/// Objects being deleted are never adopted; an owner being deleted adopts nothing.
pub(crate) fn claim(meta: &ObjectMeta, owner_uid: &str, selector: &Selector, owner_deleting: bool) -> Claim {
    let matching = matches(selector, meta);
    match controller_of(meta) {
        Some(owner) if owner.uid == owner_uid && matching => Claim::Owned,
        Some(owner) if owner.uid == owner_uid && !owner_deleting => Claim::Release,
        Some(owner) if owner.uid == owner_uid => Claim::Owned,
        Some(_) => Claim::Ignore,
        None if matching && !owner_deleting && meta.deletion_timestamp.is_none() => Claim::Adopt,
        None => Claim::Ignore,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(labels: &[(&str, &str)], controller: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            uid: Some("child".into()),
            labels: Some(labels.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()),
            owner_references: controller.map(|uid| {
                vec![OwnerReference {
                    uid: uid.into(),
                    controller: Some(true),
                    ..OwnerReference::default()
                }]
            }),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn claims_follow_controller_ref_manager() {
        let selector: Selector = [("app", "web")].into_iter().collect();
        assert_eq!(
            claim(&meta(&[("app", "web")], Some("me")), "me", &selector, false),
            Claim::Owned
        );
        assert_eq!(
            claim(&meta(&[("app", "web")], None), "me", &selector, false),
            Claim::Adopt
        );
        assert_eq!(
            claim(&meta(&[("app", "web")], None), "me", &selector, true),
            Claim::Ignore
        );
        assert_eq!(
            claim(&meta(&[("app", "db")], Some("me")), "me", &selector, false),
            Claim::Release
        );
        assert_eq!(
            claim(&meta(&[("app", "web")], Some("other")), "me", &selector, false),
            Claim::Ignore
        );
    }

    #[test]
    fn empty_selectors_select_nothing() {
        assert!(selector_of(None).is_none());
        assert!(selector_of(Some(&LabelSelector::default())).is_none());
    }
}
