//! Request paths: discovery endpoints and resource URLs
//! (`/api/v1/namespaces/{ns}/{plural}/{name}/{subresource}` and `/apis/{group}/{version}/...`).

use percent_encoding::percent_decode_str;

/// A resource URL, before looking the resource up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    /// Group (empty for `/api/v1`).
    pub(crate) group: String,
    /// Version.
    pub(crate) version: String,
    /// Namespace segment, if any.
    pub(crate) namespace: Option<String>,
    /// Plural resource name.
    pub(crate) plural: String,
    /// Object name, if any.
    pub(crate) name: Option<String>,
    /// Subresource, if any (`status`).
    pub(crate) subresource: Option<String>,
    /// Legacy `/watch/` prefix used.
    pub(crate) watch_prefix: bool,
}

/// What a path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// `/version`
    Version,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/{group}`
    Group(String),
    /// `/api/v1`, `/apis/{group}/{version}`
    Resources {
        /// Group (empty for core).
        group: String,
        /// Version.
        version: String,
    },
    /// `/healthz`, `/livez`, `/readyz`
    Health,
    /// `/openapi/v3`
    OpenApiRoot,
    /// `/openapi/v3/{api/v1 | apis/group/version}`
    OpenApi(String),
    /// Anything under `/api/v1/...` or `/apis/{group}/{version}/...`.
    Resource(ResourcePath),
    /// Not served.
    Unknown,
}

/// Parses a request path (without query). `is_namespaced_plural` tells whether
/// `/namespaces/{x}/{segment}` names a namespaced resource (else it is a namespace subresource).
pub(crate) fn parse(path: &str, is_namespaced_plural: impl Fn(&str, &str, &str) -> bool) -> Route {
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz", ..] => Route::Health,
        ["openapi", "v3"] => Route::OpenApiRoot,
        ["openapi", "v3", rest @ ..] => Route::OpenApi(rest.join("/")),
        ["api"] => Route::CoreVersions,
        ["api", version] => Route::Resources {
            group: String::new(),
            version: version.to_string(),
        },
        ["api", version, rest @ ..] => resource("", version, rest, &is_namespaced_plural),
        ["apis"] => Route::Groups,
        ["apis", group] => Route::Group(group.to_string()),
        ["apis", group, version] => Route::Resources {
            group: group.to_string(),
            version: version.to_string(),
        },
        ["apis", group, version, rest @ ..] => resource(group, version, rest, &is_namespaced_plural),
        _ => Route::Unknown,
    }
}

fn resource(
    group: &str,
    version: &str,
    rest: &[&str],
    is_namespaced_plural: &impl Fn(&str, &str, &str) -> bool,
) -> Route {
    let (watch_prefix, rest) = match rest {
        ["watch", rest @ ..] => (true, rest),
        _ => (false, rest),
    };
    let mk = |namespace: Option<&str>, plural: &str, name: Option<&str>, sub: Option<&str>| {
        Route::Resource(ResourcePath {
            group: group.to_string(),
            version: version.to_string(),
            namespace: namespace.map(str::to_string),
            plural: plural.to_string(),
            name: name.map(str::to_string),
            subresource: sub.map(str::to_string),
            watch_prefix,
        })
    };
    match rest {
        ["namespaces", ns, plural, tail @ ..] if is_namespaced_plural(group, version, plural) => match tail {
            [] => mk(Some(ns), plural, None, None),
            [name] => mk(Some(ns), plural, Some(name), None),
            [name, sub] => mk(Some(ns), plural, Some(name), Some(sub)),
            // `.../proxy/{path...}`: the path goes to the backend, which is never reached
            [name, "proxy", ..] => mk(Some(ns), plural, Some(name), Some("proxy")),
            _ => Route::Unknown,
        },
        [plural] => mk(None, plural, None, None),
        [plural, name] => mk(None, plural, Some(name), None),
        [plural, name, sub] => mk(None, plural, Some(name), Some(sub)),
        [plural, name, "proxy", ..] => mk(None, plural, Some(name), Some("proxy")),
        _ => Route::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(path: &str) -> Route {
        parse(path, |_, _, p| p != "status" && p != "finalize")
    }

    fn res(route: Route) -> ResourcePath {
        match route {
            Route::Resource(r) => r,
            other => panic!("not a resource: {other:?}"),
        }
    }

    #[test]
    fn discovery_paths() {
        assert_eq!(route("/version"), Route::Version);
        assert_eq!(route("/api"), Route::CoreVersions);
        assert_eq!(
            route("/api/v1"),
            Route::Resources {
                group: "".into(),
                version: "v1".into()
            }
        );
        assert_eq!(route("/apis/"), Route::Groups);
        assert_eq!(route("/apis/apps"), Route::Group("apps".into()));
        assert_eq!(
            route("/apis/apps/v1"),
            Route::Resources {
                group: "apps".into(),
                version: "v1".into()
            }
        );
        assert_eq!(route("/openapi/v2"), Route::Unknown);
        assert_eq!(route("/openapi/v3"), Route::OpenApiRoot);
        assert_eq!(
            route("/openapi/v3/apis/apps/v1"),
            Route::OpenApi("apis/apps/v1".into())
        );
    }

    #[test]
    fn resource_paths() {
        let r = res(route("/api/v1/namespaces/ns/pods/p/status"));
        assert_eq!(
            (
                r.namespace.as_deref(),
                r.plural.as_str(),
                r.name.as_deref(),
                r.subresource.as_deref()
            ),
            (Some("ns"), "pods", Some("p"), Some("status"))
        );
        let r = res(route("/api/v1/namespaces/ns"));
        assert_eq!(
            (r.plural.as_str(), r.name.as_deref(), r.namespace),
            ("namespaces", Some("ns"), None)
        );
        let r = res(route("/api/v1/namespaces/ns/status"));
        assert_eq!(
            (r.plural.as_str(), r.subresource.as_deref()),
            ("namespaces", Some("status"))
        );
        let r = res(route("/apis/apps/v1/deployments"));
        assert_eq!(
            (r.group.as_str(), r.plural.as_str(), r.name),
            ("apps", "deployments", None)
        );
        let r = res(route("/api/v1/watch/namespaces/ns/pods"));
        assert!(r.watch_prefix);
        let r = res(route(
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Aadmin",
        ));
        assert_eq!(r.name.as_deref(), Some("system:admin"));
        assert_eq!(route("/api/v1/namespaces/ns/pods/p/status/x"), Route::Unknown);
        let r = res(route("/api/v1/namespaces/ns/pods/p/proxy/metrics/x"));
        assert_eq!(
            (r.name.as_deref(), r.subresource.as_deref()),
            (Some("p"), Some("proxy"))
        );
        let r = res(route("/api/v1/nodes/n1/proxy/stats/summary"));
        assert_eq!(
            (r.name.as_deref(), r.subresource.as_deref()),
            (Some("n1"), Some("proxy"))
        );
        assert_eq!(route("/api/v1/nodes/n1/status/x"), Route::Unknown);
    }
}
