//! The errors of building the API tree and formatting generated code.

/// A failure to name or format generated code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Two groups got the same accessor (derived by the naming rule or pinned).
    #[error(
        "failed to name the accessors of groups \"{first}\" and \"{second}\": both map to `{accessor}`; pin another accessor for one of them (informer-gen: `Config::group_accessor(\"{second}\", \"<name>\")` or `--group-accessor {second}=<name>`)"
    )]
    GroupCollision {
        /// The first group (by name).
        first: String,
        /// The second group.
        second: String,
        /// The accessor both map to.
        accessor: String,
    },
    /// A pinned group accessor is not a snake-case Rust identifier, or is a keyword.
    #[error(
        "failed to pin the accessor of group \"{group}\" to `{accessor}`: expected a snake-case Rust identifier that is not a keyword, such as `example` or `istio_networking`"
    )]
    InvalidAccessor {
        /// The group.
        group: String,
        /// The pinned accessor.
        accessor: String,
    },
    /// Two resources of one group version got the same method or type name.
    #[error(
        "failed to name the resources of {group_version}: \"{first}\" and \"{second}\" both map to `{name}`"
    )]
    ResourceCollision {
        /// `group/version`.
        group_version: String,
        /// The first resource (kind/plural).
        first: String,
        /// The second resource.
        second: String,
        /// The colliding name.
        name: String,
    },
    /// Two versions of one group got the same module name.
    #[error(
        "failed to name the versions of group \"{group}\": \"{first}\" and \"{second}\" both map to `{name}`"
    )]
    VersionCollision {
        /// The group.
        group: String,
        /// The first version.
        first: String,
        /// The second version.
        second: String,
        /// The colliding module name.
        name: String,
    },
    /// The tokens did not form a Rust file (a template bug).
    #[error("failed to format generated code: {0}")]
    Format(#[from] syn::Error),
}
