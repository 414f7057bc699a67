//! The reflector's backoff between failed list and watch attempts.

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};
use tokio::time::Instant;

/// How long the reflector waits between failed attempts: exponential with jitter, restarting
/// from `initial` once `reset_after` has passed since the previous wait.
///
/// The default is client-go's reflector backoff: 800 ms doubling to 30 s, each delay `d`
/// jittered to a uniform value in `[d, 2d)`, reset after 2 minutes without failures.
///
/// Any values are accepted: delays saturate at `max` (an `initial` above `max` is cut to
/// `max`, and a growth that would overflow, or a `factor` that is negative or NaN, gives
/// `max`); jitter saturates at [`Duration::MAX`].
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
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

impl Default for Config {
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

impl Config {
    fn sequence(&self) -> ExponentialBackoff {
        let mut builder = ExponentialBuilder::new()
            .with_min_delay(self.initial.min(self.max))
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
    config: Config,
    sequence: ExponentialBackoff,
    last_request: Option<Instant>,
}

impl Backoff {
    pub(crate) fn new(config: Config) -> Self {
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
        let mut backoff = Backoff::new(Config::default());
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
        let config = Config {
            jitter: false,
            ..Config::default()
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

    #[tokio::test(start_paused = true)]
    async fn initial_above_max_is_cut_to_max() {
        let mut backoff = Backoff::new(Config {
            initial: Duration::from_secs(60),
            jitter: false,
            ..Config::default()
        });
        assert_eq!(backoff.next_delay(), Duration::from_secs(30));
        assert_eq!(backoff.next_delay(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn huge_settings_saturate() {
        let mut backoff = Backoff::new(Config {
            initial: Duration::MAX,
            max: Duration::MAX,
            factor: f32::MAX,
            jitter: true,
            reset_after: Duration::MAX,
            jitter_seed: Some(7),
        });
        for _ in 0..5 {
            assert_eq!(backoff.next_delay(), Duration::MAX);
        }
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;
        use crate::workqueue::strategies::{any_duration, config};

        fn any_factor() -> impl Strategy<Value = f32> {
            prop_oneof![
                Just(0.0),
                Just(1.0),
                Just(f32::NAN),
                Just(f32::INFINITY),
                Just(f32::MAX),
                -10.0f32..10.0,
                any::<f32>(),
            ]
        }

        /// The largest delay `max` allows: `max`, or with jitter just under twice `max` (plus
        /// the rounding of the jitter's f32 arithmetic).
        fn bound(max: Duration, jitter: bool) -> Duration {
            if !jitter {
                return max;
            }
            let slack = max / 1_000_000 + Duration::from_nanos(1);
            max.saturating_mul(2).saturating_add(slack)
        }

        proptest! {
            #![proptest_config(config())]

            #[test]
            fn delays_never_panic_and_respect_max(
                initial in any_duration(),
                max in any_duration(),
                factor in any_factor(),
                jitter in any::<bool>(),
                reset_after in any_duration(),
                seed in any::<u64>(),
                pauses in prop::collection::vec(0..200_000u64, 0..40),
            ) {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .start_paused(true)
                    .build()
                    .expect("runtime");
                runtime.block_on(async {
                    let config = Config { initial, max, factor, jitter, reset_after, jitter_seed: Some(seed) };
                    let mut backoff = Backoff::new(config);
                    for pause in pauses {
                        let delay = backoff.next_delay();
                        prop_assert!(delay <= bound(max, jitter), "{delay:?} past max {max:?}");
                        tokio::time::advance(Duration::from_millis(pause)).await;
                    }
                    Ok(())
                })?;
            }
        }
    }
}
