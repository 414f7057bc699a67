//! Deadlines from user-supplied durations, which may be as long as `Duration::MAX`.

use std::time::Duration;

use tokio::time::Instant;

/// The longest wait a deadline is set to: about 30 years, tokio's own "far future". Longer
/// waits mean "practically never".
pub(crate) const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// `now + delay`, with delays past [`FAR_FUTURE`] saturating there (an instant near the end of
/// the clock's range would overflow, in `Instant` arithmetic or in tokio's timer).
pub(crate) fn saturating_deadline(now: Instant, delay: Duration) -> Instant {
    // Only a clock within 30 years of the end of its range fails here; the deadline is then
    // now rather than never.
    now.checked_add(delay.min(FAR_FUTURE)).unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_delays_are_added_and_long_ones_saturate() {
        let now = Instant::now();
        assert_eq!(
            saturating_deadline(now, Duration::from_secs(5)),
            now + Duration::from_secs(5)
        );
        assert_eq!(saturating_deadline(now, FAR_FUTURE), now + FAR_FUTURE);
        assert_eq!(saturating_deadline(now, Duration::MAX), now + FAR_FUTURE);
    }
}
