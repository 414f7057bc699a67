//! The kube and k8s-openapi versions generated code is built against: those of the
//! informer-runtime it runs on, the one place informer-gen states them.

/// The `kube` requirement of the code informer-gen generates: informer-runtime's (`kube =
/// "5.0"`, any 5.x). An input crate must allow a version it allows, as must its `kube-core`
/// and `kube-derive` (released with kube's version).
pub const KUBE_REQUIREMENT: &str = "5.0";

/// The `k8s-openapi` requirement of the code informer-gen generates: informer-runtime's
/// (`k8s-openapi = "0.29"`, any 0.29.x). An input crate must allow a version it allows.
pub const K8S_OPENAPI_REQUIREMENT: &str = "0.29";

/// The packages an input's dependencies on are checked, each with the requirement generated
/// code has of it.
pub(crate) const CHECKED: [(&str, &str); 4] = [
    ("kube", KUBE_REQUIREMENT),
    ("kube-core", KUBE_REQUIREMENT),
    ("kube-derive", KUBE_REQUIREMENT),
    ("k8s-openapi", K8S_OPENAPI_REQUIREMENT),
];

/// The versions `requirement` (a caret requirement such as `5.0` or `0.29`) allows, as people
/// write them: `5.x`, `0.29.x`.
pub(crate) fn allowed_versions(requirement: &str) -> String {
    let parts: Vec<&str> = requirement.split('.').collect();
    match parts.as_slice() {
        [major] | [major, _] if *major != "0" => format!("{major}.x"),
        [major, _, _] if *major != "0" => format!("{major}.x"),
        ["0", minor] | ["0", minor, _] if *minor != "0" => format!("0.{minor}.x"),
        _ => requirement.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_versions_read_as_people_write_them() {
        assert_eq!(allowed_versions(KUBE_REQUIREMENT), "5.x");
        assert_eq!(allowed_versions(K8S_OPENAPI_REQUIREMENT), "0.29.x");
        assert_eq!(allowed_versions("1.2.3"), "1.x");
        assert_eq!(allowed_versions("0.0.3"), "0.0.3");
    }

    #[test]
    fn the_requirements_are_cargo_requirements() {
        for (package, requirement) in CHECKED {
            assert!(
                semver::VersionReq::parse(requirement).is_ok(),
                "{package} = {requirement:?}"
            );
        }
    }
}
