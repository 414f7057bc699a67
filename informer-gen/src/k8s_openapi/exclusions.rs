//! The listable built-in resources that get no informer, each with the reason.

/// A resource k8s-openapi marks listable that is left out of generated informers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exclusion {
    /// The `group/version/plural` pattern (`core` for the core group, `*` wildcards).
    pub pattern: &'static str,
    /// Why it is left out.
    pub reason: &'static str,
}

/// The resources left out by default.
pub(crate) const EXCLUSIONS: &[Exclusion] = &[Exclusion {
    pattern: "core/v1/componentstatuses",
    reason: "the API server lists ComponentStatus (deprecated since Kubernetes 1.19) but does not \
             watch it, so an informer's watch would fail forever; client-go generates no informer \
             for it either",
}];
