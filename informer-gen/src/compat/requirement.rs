//! Whether an input's version requirement, or the version its lock holds, can meet the
//! requirement of generated code: Cargo's semantics, through the `semver` crate Cargo uses.

use semver::{Comparator, Op, Version, VersionReq};

/// Whether one version satisfies both `required` (the input's requirement) and `target` (the
/// generated code's): then Cargo can build both against that one version. `kube = ">=0.90"` or
/// `"5.3"` meet `5.0`; `"0.98"` and `"~0"` do not.
pub(crate) fn meets(required: &VersionReq, target: &VersionReq) -> bool {
    // Each comparator allows a range of versions, and a requirement the intersection of its
    // comparators' ranges; two requirements meet when the intersection of all their ranges is
    // not empty, and then it holds its lowest version: the lowest version of one comparator's
    // range (or 0.0.0).
    std::iter::once(Version::new(0, 0, 0))
        .chain(
            required
                .comparators
                .iter()
                .chain(&target.comparators)
                .filter_map(lowest),
        )
        .any(|version| required.matches(&version) && target.matches(&version))
}

/// Whether the locked `version` satisfies `target` (its pre-release part aside: a lock of
/// `5.0.0-rc.1` meets `5.0`).
pub(crate) fn locked_meets(version: &Version, target: &VersionReq) -> bool {
    target.matches(&Version::new(version.major, version.minor, version.patch))
}

/// The lowest release version `comparator` allows, if it has a lower bound.
fn lowest(comparator: &Comparator) -> Option<Version> {
    let Comparator {
        op,
        major,
        minor,
        patch,
        pre,
    } = comparator;
    let (minor, patch) = match (op, minor, patch) {
        (Op::Less | Op::LessEq, ..) => return None,
        // `>1.2.3-rc.1` allows 1.2.3; `>1.2.3` starts at 1.2.4, `>1.2` at 1.3.0, `>1` at 2.0.0.
        (Op::Greater, Some(minor), Some(patch)) if pre.is_empty() => (*minor, patch + 1),
        (Op::Greater, Some(minor), None) => (minor + 1, 0),
        (Op::Greater, None, _) => return Some(Version::new(major + 1, 0, 0)),
        (_, minor, patch) => (minor.unwrap_or(0), patch.unwrap_or(0)),
    };
    Some(Version::new(*major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(text: &str) -> VersionReq {
        VersionReq::parse(text).expect("a requirement")
    }

    #[test]
    fn requirements_that_allow_a_needed_version_meet_it() {
        for required in [
            "5.0",
            "5",
            "^5.0.1",
            "5.3",
            "~5.1",
            "=5.0.2",
            ">=0.90",
            ">4",
            ">4.9.9",
            "*",
            "5.*",
            "<6",
            ">=5.1, <5.2",
            ">5.0.0-rc.1",
        ] {
            assert!(meets(&req(required), &req("5.0")), "{required}");
        }
        for required in ["0.29", "0.29.1", "~0.29.0", ">=0.24", "0.*"] {
            assert!(meets(&req(required), &req("0.29")), "{required}");
        }
    }

    #[test]
    fn requirements_that_allow_none_do_not() {
        for required in [
            "0.98",
            "~0",
            "4",
            "6.0",
            ">=6",
            "<5",
            "<=4.9",
            ">5, <5.0.5, >=5.1",
            "=4.2.0",
        ] {
            assert!(!meets(&req(required), &req("5.0")), "{required}");
        }
        for required in ["0.24", "0.30", "^0.28.1", ">0.29", "1"] {
            assert!(!meets(&req(required), &req("0.29")), "{required}");
        }
    }

    #[test]
    fn locked_versions() {
        let version = |text: &str| Version::parse(text).expect("a version");
        assert!(locked_meets(&version("5.2.1"), &req("5.0")));
        assert!(locked_meets(&version("5.0.0-rc.1"), &req("5.0")));
        assert!(!locked_meets(&version("0.99.0"), &req("5.0")));
        assert!(!locked_meets(&version("0.24.0"), &req("0.29")));
    }
}
