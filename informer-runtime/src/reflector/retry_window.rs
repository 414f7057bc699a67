//! A window in which a failing watch is retried at once instead of relisting
//! (client-go's `RetryWithDeadline`).

use std::time::Duration;

use tokio::time::Instant;

/// Tracks retryable errors: retries are allowed while the first error of the current window
/// is at most `max` old; a pause of `min_reset` between errors starts a new window.
pub(crate) struct RetryWindow {
    max: Duration,
    min_reset: Duration,
    first_error: Option<Instant>,
    last_error: Option<Instant>,
}

impl RetryWindow {
    pub(crate) fn new(max: Duration, min_reset: Duration) -> Self {
        Self {
            max,
            min_reset,
            first_error: None,
            last_error: None,
        }
    }

    /// Records one retryable error.
    pub(crate) fn record(&mut self) {
        let now = Instant::now();
        if self
            .last_error
            .is_none_or(|last| now.duration_since(last) >= self.min_reset)
        {
            self.first_error = None;
        }
        self.first_error.get_or_insert(now);
        self.last_error = Some(now);
    }

    /// Whether the error just recorded may be retried at once.
    pub(crate) fn should_retry(&mut self) -> bool {
        if self.max.is_zero() {
            return false;
        }
        if self
            .first_error
            .is_some_and(|first| Instant::now().duration_since(first) <= self.max)
        {
            return true;
        }
        self.first_error = None;
        self.last_error = None;
        false
    }
}
