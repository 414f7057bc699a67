//! The reflector's backoff between failed list and watch attempts.

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};
use tokio::time::Instant;

/// How long the reflector waits between failed attempts: exponential with jitter, restarting
/// from `initial` once `reset_after` has passed since the previous wait.
///
/// The default is client-go's reflector backoff: 800 ms doubling to 30 s, each delay `d`
/// jittered to a uniform value in `[d, 2d)`, reset after 2 minutes without failures.
#[derive(Debug, Clone, PartialEq)]
pub struct BackoffConfig {
    /// The first delay.
    pub initial: Duration,
    /// The largest delay before jitter.
    pub max: Duration,
    /// The growth factor.
    pub factor: f32,
    /// Whether each delay `d` becomes a random value in `[d, 2d)`.
    pub jitter: bool,
    /// The sequence restarts when more than this passed since the previous delay was asked for.
    pub reset_after: Duration,
    /// Seed of the jitter's random numbers (for reproducible tests); random when `None`.
    pub jitter_seed: Option<u64>,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(800),
            max: Duration::from_secs(30),
            factor: 2.0,
            jitter: true,
            reset_after: Duration::from_secs(120),
            jitter_seed: None,
        }
    }
}

impl BackoffConfig {
    fn sequence(&self) -> ExponentialBackoff {
        let mut builder = ExponentialBuilder::new()
            .with_min_delay(self.initial)
            .with_max_delay(self.max)
            .with_factor(self.factor)
            .without_max_times();
        if self.jitter {
            builder = builder.with_jitter();
            if let Some(seed) = self.jitter_seed {
                builder = builder.with_jitter_seed(seed);
            }
        }
        builder.build()
    }
}

/// The state of one backoff sequence.
pub(crate) struct Backoff {
    config: BackoffConfig,
    sequence: ExponentialBackoff,
    last_request: Option<Instant>,
}

impl Backoff {
    pub(crate) fn new(config: BackoffConfig) -> Self {
        Self {
            sequence: config.sequence(),
            config,
            last_request: None,
        }
    }

    /// The next delay to wait.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let now = Instant::now();
        if self
            .last_request
            .is_some_and(|last| now.duration_since(last) > self.config.reset_after)
        {
            self.sequence = self.config.sequence();
        }
        self.last_request = Some(now);
        self.sequence.next().unwrap_or(self.config.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn default_sequence_doubles_to_the_cap_with_jitter() {
        let mut backoff = Backoff::new(BackoffConfig::default());
        let mut base = Duration::from_millis(800);
        for _ in 0..10 {
            let delay = backoff.next_delay();
            assert!(
                delay >= base && delay < base * 2,
                "{delay:?} outside [{base:?}, {:?})",
                base * 2
            );
            base = (base * 2).min(Duration::from_secs(30));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn sequence_restarts_after_the_reset_interval() {
        let config = BackoffConfig {
            jitter: false,
            ..BackoffConfig::default()
        };
        let mut backoff = Backoff::new(config);
        // The sequence is computed in f32: compare whole milliseconds.
        let mut next = || backoff.next_delay().as_millis();
        assert_eq!(next(), 800);
        assert_eq!(next(), 1600);
        tokio::time::advance(Duration::from_secs(119)).await;
        assert_eq!(next(), 3200, "within 2 minutes: no reset");
        tokio::time::advance(Duration::from_secs(121)).await;
        assert_eq!(next(), 800, "after 2 minutes: reset");
    }
}
