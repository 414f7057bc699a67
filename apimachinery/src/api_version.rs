//! [`parse_group_version`]: an `apiVersion` split into its group and version, as
//! kube-apiserver splits it.

/// The group and version of `api_version`, split as apimachinery's `schema.ParseGroupVersion`
/// splits them: `""` and `"/"` are both the empty group version, `v1` is the core group's,
/// `group/version` splits at its one `/` (either side may be empty: `/v1`, `apps/`); `None`
/// (Go's error "unexpected GroupVersion string") for more than one `/`. Owner references are
/// read this way by kube-apiserver's validation and by the sharding protocol's hash keys.
///
/// ```
/// use informer_apimachinery::api_version::parse_group_version;
///
/// assert_eq!(parse_group_version("apps/v1"), Some(("apps", "v1")));
/// assert_eq!(parse_group_version("v1"), Some(("", "v1")));
/// assert_eq!(parse_group_version("/v1"), Some(("", "v1")));
/// assert_eq!(parse_group_version("a/b/c"), None);
/// ```
pub fn parse_group_version(api_version: &str) -> Option<(&str, &str)> {
    if api_version.is_empty() || api_version == "/" {
        return Some(("", ""));
    }
    match api_version.matches('/').count() {
        0 => Some(("", api_version)),
        1 => api_version.split_once('/'),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// apimachinery: `TestGroupVersionParse`'s cases, plus the empty string and `/` (both
    /// the empty group version).
    #[test]
    fn group_versions_split_as_apimachinery_splits_them() {
        for (api_version, expected) in [
            ("v1", Some(("", "v1"))),
            ("v2", Some(("", "v2"))),
            ("/v1", Some(("", "v1"))),
            ("v1/", Some(("v1", ""))),
            ("/v1/", None),
            ("v1/a", Some(("v1", "a"))),
            ("", Some(("", ""))),
            ("/", Some(("", ""))),
        ] {
            assert_eq!(parse_group_version(api_version), expected, "{api_version:?}");
        }
    }
}
