//! What can go wrong when configuring or running sharding.

/// An error of a ring's or a shard's configuration, or of the sharder.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The ring's name cannot be a `ControllerRing`'s name.
    #[error(
        "failed to use {name:?} as a ring name: {reason}; a ring name is a `ControllerRing`'s name and the name part of the `shard.alpha.sharding.timebertt.dev/<ring>` label key, so it must be at most 63 characters of a-z, 0-9, `-` and `.`, each dot-separated part starting and ending with a letter or digit; replace uppercase letters with lowercase ones and `_` with `-`"
    )]
    RingName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The shard's name cannot be a label value or a Lease name.
    #[error(
        "failed to use {name:?} as a shard name: {reason}; it is the shard's Lease name, its holder identity and the value of the shard label, so it must be at most 63 characters of a-z, 0-9, `-` and `.`, starting and ending with a letter or digit, such as the pod name"
    )]
    ShardName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A resource was listed twice in a ring.
    #[error(
        "failed to add {resource} to ring {ring:?}: it is already in the ring; a resource is either a ring resource or controlled by exactly one"
    )]
    DuplicateResource {
        /// The ring.
        ring: String,
        /// `plural.group`.
        resource: String,
    },
    /// A ring's namespace selector or a ring resource's object selector does not parse.
    #[error(
        "failed to use {selector:?} as the {what}: {source}; write a label selector such as `team=payments,tier notin (test)`"
    )]
    Selector {
        /// `namespace selector of ring "<ring>"`, or `object selector of <resource>`.
        what: String,
        /// The selector given.
        selector: String,
        /// Why it does not parse.
        #[source]
        source: crate::selector::Error,
    },
    /// The ring has no resources.
    #[error(
        "failed to use ring {ring:?}: it lists no resources; add the controller's own type with `ControllerRing::resource`"
    )]
    EmptyRing {
        /// The ring.
        ring: String,
    },
    /// An object's hash key cannot be computed: it has no name, or its controller reference
    /// is malformed. The sharder logs and counts it and leaves the object unassigned.
    #[error(
        "failed to compute the hash key of {object}: {reason}; fix the object's name or its owner reference with `controller: true`"
    )]
    HashKey {
        /// The object: `plural.group namespace/name`.
        object: String,
        /// What is wrong.
        reason: String,
    },
    /// The sharder's selection of shard Leases cannot be built (an invalid Lease namespace).
    #[error("failed to select the shard Leases: {0}")]
    LeaseScope(#[from] crate::scope::Error),
    /// One of the sharder's controllers stopped: an informer it reads stopped (its factory
    /// was shut down).
    #[error("failed to run the sharder of ring {ring:?}: {source}; stop the sharder before what it runs on")]
    Sharder {
        /// The ring.
        ring: String,
        /// The controller's error.
        #[source]
        source: crate::controller::Error,
    },
    /// The shard's lease configuration is invalid.
    #[error("failed to configure the shard Lease: {0}")]
    Lease(#[from] crate::leader_election::Error),
}

/// A sharding result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
