//! Hash keys: the string an object is placed on the [`HashRing`](super::HashRing) by, the same
//! for a controller and the objects it controls, and the same as the Go sharder's.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api_version::parse_group_version;

use super::{
    error::{Error, Result},
    resource_type::ResourceType,
};

/// The hash key of an object of a ring resource: `group/Kind/namespace/name` (empty group and
/// namespace for the core group and cluster-scoped objects).
///
/// ```
/// use informer_runtime::sharding::hash_ring::hash_key_for_object;
///
/// assert_eq!(hash_key_for_object("apps", "Deployment", Some("bar"), "foo"), "apps/Deployment/bar/foo");
/// assert_eq!(hash_key_for_object("", "Namespace", None, "prod"), "/Namespace//prod");
/// ```
pub fn hash_key_for_object(group: &str, kind: &str, namespace: Option<&str>, name: &str) -> String {
    format!("{group}/{kind}/{}/{name}", namespace.unwrap_or_default())
}

/// The hash key of an object of `resource` (a ring resource) with `metadata`: its own key.
///
/// # Errors
///
/// [`Error::HashKey`] if the object has no name (objects are assigned once created, so only a
/// malformed object lacks one).
pub(crate) fn for_ring_object(resource: &ResourceType, metadata: &ObjectMeta) -> Result<String> {
    let name = metadata.name.as_deref().unwrap_or_default();
    if name.is_empty() {
        return Err(Error::HashKey {
            object: describe(resource, metadata),
            reason: "it has no name".into(),
        });
    }
    Ok(hash_key_for_object(
        resource.group(),
        resource.kind(),
        metadata.namespace.as_deref(),
        name,
    ))
}

/// The hash key of an object of a controlled resource `resource` with `metadata`: the key of
/// its controller (its first owner reference with `controller: true`), whatever the
/// controller's group and kind, as the Go sharder's `key.ForController` computes it; `None`
/// when it has no controller (it is not assigned).
///
/// # Errors
///
/// [`Error::HashKey`] if the controller reference lacks its apiVersion, kind or name, or its
/// apiVersion has more than one `/`.
pub(crate) fn for_controlled_object(
    resource: &ResourceType,
    metadata: &ObjectMeta,
) -> Result<Option<String>> {
    let Some(controller) = metadata
        .owner_references
        .iter()
        .flatten()
        .find(|reference| reference.controller == Some(true))
    else {
        return Ok(None);
    };
    let malformed = |reason: String| Error::HashKey {
        object: describe(resource, metadata),
        reason,
    };
    for (field, value) in [
        ("apiVersion", &controller.api_version),
        ("kind", &controller.kind),
        ("name", &controller.name),
    ] {
        if value.is_empty() {
            return Err(malformed(format!("its controller reference has no {field}")));
        }
    }
    let (group, _version) = parse_group_version(&controller.api_version).ok_or_else(|| {
        malformed(format!(
            "its controller reference has an invalid apiVersion: unexpected GroupVersion string: {}",
            controller.api_version
        ))
    })?;
    Ok(Some(hash_key_for_object(
        group,
        &controller.kind,
        metadata.namespace.as_deref(),
        &controller.name,
    )))
}

fn describe(resource: &ResourceType, metadata: &ObjectMeta) -> String {
    let name = metadata.name.as_deref().unwrap_or("<no name>");
    match metadata.namespace.as_deref() {
        Some(namespace) => format!("{resource} {namespace}/{name}"),
        None => format!("{resource} {name}"),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{api::apps::v1::Deployment, apimachinery::pkg::apis::meta::v1::OwnerReference};

    use super::*;

    fn owner(api_version: &str, kind: &str, name: &str, controller: Option<bool>) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            controller,
            ..OwnerReference::default()
        }
    }

    /// Go: key ForController's BeforeEach: a plain owner and the controller.
    fn controlled() -> ObjectMeta {
        ObjectMeta {
            name: Some("child".into()),
            namespace: Some("bar".into()),
            owner_references: Some(vec![
                owner("other/v1", "Bar", "owner-but-not-controller", None),
                owner("operator/v1", "Foo", "foo", Some(true)),
            ]),
            ..ObjectMeta::default()
        }
    }

    fn key_of_controlled(metadata: &ObjectMeta) -> Result<Option<String>> {
        for_controlled_object(&ResourceType::of::<Deployment>(), metadata)
    }

    fn set_controller(metadata: &mut ObjectMeta, edit: impl FnOnce(&mut OwnerReference)) {
        edit(&mut metadata.owner_references.as_mut().expect("owners")[1]);
    }

    /// Go: key "#ForObject should return the object's hash key".
    #[test]
    fn ring_object_key_is_group_kind_namespace_name() {
        let metadata = ObjectMeta {
            name: Some("foo".into()),
            namespace: Some("bar".into()),
            ..ObjectMeta::default()
        };
        let key = for_ring_object(&ResourceType::of::<Deployment>(), &metadata).expect("key");
        assert_eq!(key, "apps/Deployment/bar/foo");
    }

    /// Go: key "#ForObject should return an error if the object has no name".
    #[test]
    fn ring_object_without_name_is_an_error() {
        let error =
            for_ring_object(&ResourceType::of::<Deployment>(), &ObjectMeta::default()).expect_err("no name");
        assert!(error.to_string().contains("it has no name"), "{error}");
    }

    /// Go: key "#ForController should return the controller's hash key".
    #[test]
    fn controlled_object_key_is_its_controllers() {
        assert_eq!(
            key_of_controlled(&controlled()).expect("key").as_deref(),
            Some("operator/Foo/bar/foo")
        );
    }

    /// Go: key "#ForController should return an empty key if the object has no controller ref".
    #[test]
    fn no_controller_means_not_assigned() {
        assert_eq!(key_of_controlled(&ObjectMeta::default()).expect("no error"), None);
        let mut metadata = controlled();
        set_controller(&mut metadata, |reference| reference.controller = None);
        assert_eq!(key_of_controlled(&metadata).expect("no error"), None);
        set_controller(&mut metadata, |reference| reference.controller = Some(false));
        assert_eq!(key_of_controlled(&metadata).expect("no error"), None);
    }

    /// Go: key "#ForController should return an error if the controller ref has no
    /// apiVersion", "... has no kind" and "... has no name".
    #[test]
    fn controller_reference_without_a_field_is_an_error() {
        type Edit = fn(&mut OwnerReference);
        let cases: [(Edit, &str); 3] = [
            (|r| r.api_version.clear(), "has no apiVersion"),
            (|r| r.kind.clear(), "has no kind"),
            (|r| r.name.clear(), "has no name"),
        ];
        for (edit, message) in cases {
            let mut metadata = controlled();
            set_controller(&mut metadata, edit);
            let error = key_of_controlled(&metadata).expect_err(message);
            assert!(error.to_string().contains(message), "{error}");
            assert!(
                error.to_string().contains("deployments.apps bar/child"),
                "{error}"
            );
        }
    }

    /// Go: key "#ForController should return an error if the controller ref has an invalid
    /// apiVersion".
    #[test]
    fn controller_reference_with_invalid_api_version_is_an_error() {
        for api_version in ["foo/bar/v1", "/apps/v1", "//"] {
            let mut metadata = controlled();
            set_controller(&mut metadata, |reference| {
                reference.api_version = api_version.into()
            });
            let error = key_of_controlled(&metadata).expect_err(api_version);
            assert!(
                error.to_string().contains(&format!(
                    "invalid apiVersion: unexpected GroupVersion string: {api_version}"
                )),
                "{error}"
            );
        }
    }

    /// apiVersions are split as `schema.ParseGroupVersion` splits them: at their one `/`,
    /// whichever side is empty.
    #[test]
    fn controller_api_version_is_split_as_apimachinery_splits_it() {
        for (api_version, key) in [
            ("v1", "/Foo/bar/foo"),
            ("/v1", "/Foo/bar/foo"),
            ("/", "/Foo/bar/foo"),
            ("apps/", "apps/Foo/bar/foo"),
            ("apps/v1beta1", "apps/Foo/bar/foo"),
        ] {
            let mut metadata = controlled();
            set_controller(&mut metadata, |reference| {
                reference.api_version = api_version.into()
            });
            assert_eq!(
                key_of_controlled(&metadata).expect(api_version).as_deref(),
                Some(key),
                "{api_version}"
            );
        }
    }

    /// Like Go's `ForController`, the controller need not be an object of the ring's resource:
    /// the object follows whatever controls it.
    #[test]
    fn a_controller_of_another_kind_or_group_gives_its_own_key() {
        let mut metadata = controlled();
        set_controller(&mut metadata, |reference| {
            reference.api_version = "apps/v1".into();
            reference.kind = "StatefulSet".into();
        });
        assert_eq!(
            key_of_controlled(&metadata).expect("key").as_deref(),
            Some("apps/StatefulSet/bar/foo")
        );
    }

    /// The first owner reference with `controller: true` counts (`metav1.GetControllerOf`).
    #[test]
    fn the_first_controller_reference_counts() {
        let mut metadata = controlled();
        if let Some(owners) = metadata.owner_references.as_mut() {
            owners.push(owner("apps/v1", "Deployment", "second", Some(true)));
        }
        assert_eq!(
            key_of_controlled(&metadata).expect("key").as_deref(),
            Some("operator/Foo/bar/foo")
        );
    }
}
