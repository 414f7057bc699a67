//! [`Problem`] and [`Unsettled`]: what keeps a ring from being settled, as
//! [`Replicas::wait_settled`](super::Replicas::wait_settled) reports it.

use std::fmt;

/// One thing that keeps a ring from being settled.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// An object the ring holds has no shard label.
    Unassigned {
        /// The object, as `plural namespace/name`.
        object: String,
    },
    /// An object carries the drain label: it is being handed over.
    Drained {
        /// The object.
        object: String,
        /// The shard it is drained off (empty if it has no shard label).
        shard: String,
    },
    /// An object is labelled for a shard that is not live (its replica does not run, or does
    /// not hold its Lease).
    OnDeadShard {
        /// The object.
        object: String,
        /// The shard it is labelled for.
        shard: String,
    },
    /// An object is on a live shard, but the consistent-hash ring of the live shards puts it
    /// on another one (or no shard is live).
    Misplaced {
        /// The object.
        object: String,
        /// The shard it is labelled for.
        shard: String,
        /// The shard the ring of the live shards picks (`None`: no shard is live).
        expected: Option<String>,
    },
    /// An object outside the ring (its namespace or labels not selected) still carries a
    /// shard label.
    LabelledOutsideRing {
        /// The object.
        object: String,
        /// The shard it is labelled for.
        shard: String,
    },
    /// A running replica is not a live shard yet.
    ShardNotLive {
        /// The replica.
        shard: String,
        /// Why: no Lease, a Lease it does not hold, or one the sharder has not seen it hold.
        reason: String,
    },
    /// The sharder still counts a shard whose replica does not run as available (its Lease
    /// labelled ready, expired or uncertain).
    StillAvailable {
        /// The shard.
        shard: String,
        /// The state label the sharder last gave its Lease.
        state: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unassigned { object } => write!(f, "{object} is assigned to no shard"),
            Self::Drained { object, shard } => write!(f, "{object} is drained off shard {shard:?}"),
            Self::OnDeadShard { object, shard } => {
                write!(f, "{object} is assigned to {shard}, which is not a live shard")
            }
            Self::Misplaced {
                object,
                shard,
                expected: Some(expected),
            } => write!(
                f,
                "{object} is on {shard}, but the ring of the live shards puts it on {expected}"
            ),
            Self::Misplaced {
                object,
                shard,
                expected: None,
            } => write!(f, "{object} is on {shard}, but no shard is live"),
            Self::LabelledOutsideRing { object, shard } => {
                write!(f, "{object} is outside the ring but still labelled for {shard}")
            }
            Self::ShardNotLive { shard, reason } => {
                write!(f, "replica {shard} runs but is not a live shard: {reason}")
            }
            Self::StillAvailable { shard, state } => write!(
                f,
                "replica {shard} does not run, but the sharder still labels its Lease {state}"
            ),
        }
    }
}

/// What kept a ring from settling, at the last check of
/// [`Replicas::wait_settled`](super::Replicas::wait_settled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsettled {
    /// Every problem found, shards first, then objects in the order of the ring's resources.
    pub problems: Vec<Problem>,
}

/// How many problems [`Unsettled`]'s message lists.
const LISTED: usize = 8;

impl fmt::Display for Unsettled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        write!(f, "{count} problem{}: ", if count == 1 { "" } else { "s" })?;
        let listed: Vec<String> = self
            .problems
            .iter()
            .take(LISTED)
            .map(ToString::to_string)
            .collect();
        f.write_str(&listed.join("; "))?;
        if count > LISTED {
            write!(f, "; and {} more", count - LISTED)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_lists_the_first_problems_and_counts_the_rest() {
        let problems: Vec<Problem> = (0..10)
            .map(|index| Problem::Unassigned {
                object: format!("configmaps default/cm-{index}"),
            })
            .collect();
        let message = Unsettled { problems }.to_string();
        assert!(
            message.starts_with("10 problems: configmaps default/cm-0 is assigned to no shard; "),
            "{message}"
        );
        assert!(
            message.contains("cm-7 is assigned to no shard; and 2 more"),
            "{message}"
        );
        assert!(!message.contains("cm-8"), "{message}");
    }
}
