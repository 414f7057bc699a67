//! The discovery priority of each built-in group version: the `groupPriorityMinimum` and
//! `versionPriority` of the APIServices the aggregator registers for them, which order `/apis`
//! (higher first, then by name) and the versions of a group.

/// (group, version, groupPriorityMinimum, versionPriority) of the built-in group versions.
#[rustfmt::skip]
const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apiregistration.k8s.io", "v1", 17800, 15),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v1", 17500, 15),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("networking.k8s.io", "v1", 17200, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("resource.k8s.io", "v1", 16200, 21),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
    ("storagemigration.k8s.io", "v1", 15800, 15),
];

/// The priorities of a group version of a CRD or of a type registered by a test, as
/// kube-apiserver gives the APIServices of CRD groups.
const OTHER_PRIORITY: (i64, i64) = (1000, 100);

/// `(groupPriorityMinimum, versionPriority)` of a group version.
pub(crate) fn priority(group: &str, version: &str) -> (i64, i64) {
    PRIORITIES
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version)
        .map(|&(_, _, g, v)| (g, v))
        .unwrap_or(OTHER_PRIORITY)
}

/// Orders groups (each with its versions) as the aggregator does: by group priority, higher
/// first, then by name; versions by version priority, higher first. Equal ones keep their
/// order (CRD groups: registration order; a CRD's versions: the CRD's order).
pub(crate) fn order_groups(groups: &mut [(String, Vec<String>)]) {
    let group_priority = |(g, vs): &(String, Vec<String>)| {
        vs.iter()
            .map(|v| priority(g, v).0)
            .max()
            .unwrap_or(OTHER_PRIORITY.0)
    };
    for (g, versions) in groups.iter_mut() {
        versions.sort_by_key(|v| std::cmp::Reverse(priority(g, v).1));
    }
    groups.sort_by(|a, b| {
        group_priority(b).cmp(&group_priority(a)).then_with(|| {
            match (group_priority(a) == OTHER_PRIORITY.0, &a.0, &b.0) {
                (true, _, _) => std::cmp::Ordering::Equal,
                (false, a, b) => a.cmp(b),
            }
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_group_version_has_an_upstream_priority() {
        for b in crate::builtin::ALL {
            assert_ne!(
                priority(b.group, b.version),
                OTHER_PRIORITY,
                "{}",
                b.api_version()
            );
        }
    }

    #[test]
    fn groups_are_ordered_by_priority_then_name_and_crd_groups_last() {
        let mut groups = vec![
            ("example.com".to_string(), vec!["v1".to_string()]),
            ("apps".to_string(), vec!["v1".to_string()]),
            (
                "autoscaling".to_string(),
                vec!["v1".to_string(), "v2".to_string()],
            ),
            ("apiregistration.k8s.io".to_string(), vec!["v1".to_string()]),
            ("a.example.com".to_string(), vec!["v1".to_string()]),
        ];
        order_groups(&mut groups);
        let names: Vec<&str> = groups.iter().map(|(g, _)| g.as_str()).collect();
        assert_eq!(
            names,
            [
                "apiregistration.k8s.io",
                "apps",
                "autoscaling",
                "example.com",
                "a.example.com"
            ]
        );
        assert_eq!(groups[2].1, ["v2", "v1"]);
    }
}
