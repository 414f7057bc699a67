//! The wall clock, as the API's `Time` and as durations between two of them.

use std::time::Duration;

use k8s_openapi::{apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};

/// Now, as the API writes it (whole seconds, as kube-apiserver serializes `Time`).
pub(crate) fn now() -> Time {
    let now = Timestamp::now();
    Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
}

/// How long after `from` the moment `from + after` lies from now: `None` once it has passed.
pub(crate) fn remaining(from: &Time, after: Duration) -> Option<Duration> {
    let deadline = from.0.as_millisecond() + i64::try_from(after.as_millis()).unwrap_or(i64::MAX);
    let left = deadline - Timestamp::now().as_millisecond();
    (left > 0).then(|| Duration::from_millis(left.unsigned_abs()))
}

/// Seconds as a duration, negative values as zero.
pub(crate) fn seconds(value: i64) -> Duration {
    Duration::from_secs(value.max(0).unsigned_abs())
}
