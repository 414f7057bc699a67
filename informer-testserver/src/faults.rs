//! Fault injection: failing requests and delaying responses.
//!
//! Watch faults (dropping watches, malformed lines), compaction and restarts act on the store and
//! the connections; see the methods of [`TestServer`](crate::TestServer).

use std::time::Duration;

use crate::status::ApiError;

/// A rule failing the next requests that match it.
///
/// ```
/// use informer_testserver::Failure;
/// // the next two `list` requests of pods get 429 with `Retry-After: 1`
/// let failure = Failure::new(429).times(2).verb("list").resource("pods").retry_after(1);
/// # let _ = failure;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    code: u16,
    remaining: usize,
    verb: Option<String>,
    resource: Option<String>,
    retry_after: Option<u64>,
}

impl Failure {
    /// Fails the next request with HTTP `code` and the matching `Status` (500 `InternalError`,
    /// 429 `TooManyRequests` with `Retry-After`, 403 `Forbidden`, 503 `ServiceUnavailable`, ...).
    pub fn new(code: u16) -> Self {
        Self {
            code,
            remaining: 1,
            verb: None,
            resource: None,
            retry_after: None,
        }
    }

    /// Fails this many requests (default 1).
    pub fn times(mut self, count: usize) -> Self {
        self.remaining = count;
        self
    }

    /// Only requests with this verb: `get`, `list`, `watch`, `create`, `update`, `patch`,
    /// `delete`, `deletecollection` (discovery requests are `get`).
    pub fn verb(mut self, verb: &str) -> Self {
        self.verb = Some(verb.to_string());
        self
    }

    /// Only requests for this resource (plural, e.g. `pods`).
    pub fn resource(mut self, resource: &str) -> Self {
        self.resource = Some(resource.to_string());
        self
    }

    /// Sets the `Retry-After` header (seconds); 429 answers always have one (default 1).
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    fn matches(&self, verb: &str, resource: &str) -> bool {
        self.remaining > 0
            && self.verb.as_deref().is_none_or(|v| v == verb)
            && self.resource.as_deref().is_none_or(|r| r == resource)
    }
}

/// Armed request faults.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    failures: Vec<Failure>,
    delay: Option<Duration>,
}

impl Faults {
    /// Arms a failure rule (rules are tried in the order they were armed).
    pub(crate) fn add(&mut self, failure: Failure) {
        self.failures.push(failure);
    }

    /// Delays every response by `delay` (`None`: no delay).
    pub(crate) fn set_delay(&mut self, delay: Option<Duration>) {
        self.delay = delay;
    }

    /// Current response delay.
    pub(crate) fn delay(&self) -> Option<Duration> {
        self.delay
    }

    /// Disarms everything.
    pub(crate) fn clear(&mut self) {
        self.failures.clear();
        self.delay = None;
    }

    /// The injected error for this request, consuming one use of the first matching rule.
    pub(crate) fn check(&mut self, verb: &str, resource: &str) -> Option<ApiError> {
        let rule = self.failures.iter_mut().find(|f| f.matches(verb, resource))?;
        rule.remaining -= 1;
        let error = ApiError::injected(rule.code, verb, resource, rule.retry_after);
        self.failures.retain(|f| f.remaining > 0);
        Some(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_match_and_run_out() {
        let mut faults = Faults::default();
        faults.add(Failure::new(500).times(2).verb("list").resource("pods"));
        assert!(faults.check("get", "pods").is_none());
        assert!(faults.check("list", "configmaps").is_none());
        assert_eq!(faults.check("list", "pods").map(|e| e.code), Some(500));
        assert_eq!(
            faults.check("list", "pods").map(|e| e.reason),
            Some("InternalError".to_string())
        );
        assert!(faults.check("list", "pods").is_none());
        faults.add(Failure::new(429));
        let e = faults.check("watch", "").expect("armed");
        assert_eq!((e.code, e.retry_after), (429, Some(1)));
        faults.set_delay(Some(Duration::from_millis(5)));
        faults.clear();
        assert!(faults.delay().is_none());
    }
}
