//! The APIService objects kube-apiserver's aggregator registers for the group versions it
//! serves itself: one per group version, named `VERSION.GROUP` (`v1.apps`, `v1.` for the core
//! group), without a `spec.service` (served locally), with the group's
//! `groupPriorityMinimum`/`versionPriority`, labelled as managed on start and `Available`
//! (reason `Local`). They are ordinary stored objects: tests may add APIServices of their own.

use serde_json::{Value, json};

use crate::builtin::priority;
use crate::storage::state::{State, now_rfc3339};

/// The APIService of a locally served group version.
fn local_api_service(group: &str, version: &str, now: &str) -> Value {
    let (group_priority, version_priority) = priority::priority(group, version);
    json!({
        "metadata": {
            "name": format!("{version}.{group}"),
            "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"},
        },
        "spec": {
            "group": group,
            "version": version,
            "groupPriorityMinimum": group_priority,
            "versionPriority": version_priority,
        },
        "status": {
            "conditions": [{
                "type": "Available",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "Local",
                "message": "Local APIServices are always available",
            }],
        },
    })
}

impl State {
    /// Creates the APIService of every group version the server serves (when it serves
    /// `apiservices`).
    pub(crate) fn register_local_api_services(&mut self) {
        let Some(rt) = self
            .registry
            .get("apiregistration.k8s.io", "v1", "apiservices")
            .cloned()
        else {
            return;
        };
        let mut group_versions = vec![(String::new(), "v1".to_string())];
        for (group, versions) in self.registry.groups() {
            group_versions.extend(versions.into_iter().map(|v| (group.clone(), v)));
        }
        let now = now_rfc3339();
        for (group, version) in group_versions {
            let object = local_api_service(&group, &version, &now);
            // a fresh store holds no APIService of that name yet
            let _ = self.write().create_with_status(&rt, None, object);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_and_group_versions_are_named_as_upstream() {
        let core = local_api_service("", "v1", "2025-01-01T00:00:00Z");
        assert_eq!(core["metadata"]["name"], "v1.");
        assert_eq!(core["spec"]["groupPriorityMinimum"], 18000);
        let hpa = local_api_service("autoscaling", "v2", "2025-01-01T00:00:00Z");
        assert_eq!(hpa["metadata"]["name"], "v2.autoscaling");
        assert_eq!(hpa["spec"]["versionPriority"], 30);
        assert!(hpa["spec"].get("service").is_none());
        assert_eq!(hpa["status"]["conditions"][0]["reason"], "Local");
    }
}
