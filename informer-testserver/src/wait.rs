//! Waiting in tests for what a controller or an informer does in the background: a condition
//! checked every few milliseconds until it holds or a timeout passes.
//!
//! Informers, handlers and controllers act on their own tasks and threads, so a test that
//! changed an object on the server waits for the effect rather than sleeping a fixed time.
//! Both helpers check at once, then every [`POLL_INTERVAL`] of tokio's clock (so they also
//! work on paused time), and give up after the timeout with an error that names what was
//! awaited.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//!
//! use informer_testserver::{TestServer, wait::{eventually, eventually_async}};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//!
//! let server = TestServer::start().await?;
//! let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
//! let mut settings = ConfigMap::default();
//! settings.metadata.name = Some("settings".into());
//! server.create_typed(&settings)?;
//!
//! // A condition on local state (a cache, a counter):
//! eventually("the server to hold one config map", Duration::from_secs(5), || {
//!     server.list("v1", "ConfigMap", Some("default")).is_ok_and(|objects| objects.len() == 1)
//! })
//! .await?;
//! // A condition that asks the API server:
//! eventually_async("the config map to be readable", Duration::from_secs(5), async || {
//!     api.get_opt("settings").await.is_ok_and(|found| found.is_some())
//! })
//! .await?;
//! # Ok(())
//! # }
//! ```

use std::time::Duration;

use tokio::time::Instant;

/// How often a condition is checked.
pub const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// A condition that did not hold within its timeout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed to wait for {what}: it did not happen within {timeout:?}")]
pub struct TimedOut {
    /// What was awaited, as the caller described it.
    pub what: String,
    /// How long the wait lasted.
    pub timeout: Duration,
}

/// Waits until `condition` holds, checking it at once and then every [`POLL_INTERVAL`], for
/// at most `timeout`.
///
/// # Errors
///
/// [`TimedOut`], naming `what`, when the condition still does not hold after `timeout`.
pub async fn eventually(
    what: &str,
    timeout: Duration,
    mut condition: impl FnMut() -> bool,
) -> Result<(), TimedOut> {
    eventually_async(what, timeout, async || condition()).await
}

/// Waits until the async `condition` holds (one that asks the API server, for example),
/// checking it at once and then every [`POLL_INTERVAL`] after each check ends, for at most
/// `timeout`; a check that is still running at the deadline is waited for.
///
/// # Errors
///
/// [`TimedOut`], naming `what`, when the condition still does not hold after `timeout`.
pub async fn eventually_async(
    what: &str,
    timeout: Duration,
    mut condition: impl AsyncFnMut() -> bool,
) -> Result<(), TimedOut> {
    // A timeout too long for the clock (`Duration::MAX`) waits for as long as it takes.
    let deadline = Instant::now().checked_add(timeout);
    loop {
        if condition().await {
            return Ok(());
        }
        let left = deadline.map_or(POLL_INTERVAL, |deadline| {
            deadline.saturating_duration_since(Instant::now())
        });
        if left.is_zero() {
            return Err(TimedOut {
                what: what.to_owned(),
                timeout,
            });
        }
        tokio::time::sleep(POLL_INTERVAL.min(left)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_condition_that_comes_true_ends_the_wait() {
        let checks = AtomicU32::new(0);
        let started = Instant::now();
        let waited = eventually("the third check", Duration::from_secs(1), || {
            checks.fetch_add(1, Ordering::SeqCst) == 2
        })
        .await;
        assert_eq!(waited, Ok(()));
        assert_eq!(checks.load(Ordering::SeqCst), 3);
        assert_eq!(
            started.elapsed(),
            2 * POLL_INTERVAL,
            "checked at once, then every interval"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_condition_that_never_holds_times_out_naming_what_was_awaited() {
        let started = Instant::now();
        let waited = eventually("nothing", Duration::from_millis(12), || false).await;
        let error = waited.expect_err("times out");
        assert_eq!(
            error.to_string(),
            "failed to wait for nothing: it did not happen within 12ms"
        );
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(12),
            "waits the whole timeout, no more"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_async_condition_is_awaited_between_checks() {
        let checks = AtomicU32::new(0);
        let waited = eventually_async("an answer", Duration::from_secs(1), async || {
            tokio::time::sleep(Duration::from_millis(1)).await;
            checks.fetch_add(1, Ordering::SeqCst) == 1
        })
        .await;
        assert_eq!(waited, Ok(()));
        assert_eq!(checks.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_timeout_too_long_for_the_clock_waits_without_overflowing() {
        let checks = AtomicU32::new(0);
        let waited = eventually("the second check", Duration::MAX, || {
            checks.fetch_add(1, Ordering::SeqCst) == 1
        })
        .await;
        assert_eq!(waited, Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_timeout_checks_once() {
        let checks = AtomicU32::new(0);
        let waited = eventually("one check", Duration::ZERO, || {
            checks.fetch_add(1, Ordering::SeqCst);
            false
        })
        .await;
        assert!(waited.is_err());
        assert_eq!(checks.load(Ordering::SeqCst), 1);
    }
}
