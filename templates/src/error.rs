//! The errors of building the API tree and formatting generated code.

/// A failure to name or format generated code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Two groups got the same accessor even with their full names.
    #[error(
        "failed to name the accessors of groups \"{first}\" and \"{second}\": both map to `{accessor}` even with their full names"
    )]
    GroupCollision {
        /// The first group.
        first: String,
        /// The second group.
        second: String,
        /// The accessor both map to.
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
