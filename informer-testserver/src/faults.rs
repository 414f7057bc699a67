//! Fault injection: failing requests, stalling some, delaying every response, and holding
//! back the live events of watches of a resource.
//!
//! Watch faults (dropping watches, malformed lines), compaction and restarts act on the store and
//! the connections; see the methods of [`TestServer`](crate::TestServer).

use std::{collections::HashMap, time::Duration};

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
    client: Option<String>,
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
            client: None,
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

    /// Only requests of the client made by
    /// [`TestServer::named_client`](crate::TestServer::named_client) with this name.
    pub fn client(mut self, name: &str) -> Self {
        self.client = Some(name.to_string());
        self
    }

    /// Sets the `Retry-After` header (seconds); 429 answers always have one (default 1).
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    fn matches(&self, request: &Request<'_>) -> bool {
        self.remaining > 0 && request.matches(&self.verb, &self.resource, &self.client)
    }
}

/// A rule holding the next requests that match it for a while before serving them, as an
/// overloaded server or a partitioned connection does. The request is served after the stall
/// (unless the client gave up and closed the connection first, in which case it may still be).
///
/// ```
/// use std::time::Duration;
///
/// use informer_testserver::Stall;
/// // every lease update of the client named "replica-b" waits 5 s
/// let stall = Stall::new(Duration::from_secs(5))
///     .times(usize::MAX)
///     .verb("update")
///     .resource("leases")
///     .client("replica-b");
/// # let _ = stall;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    duration: Duration,
    remaining: usize,
    verb: Option<String>,
    resource: Option<String>,
    client: Option<String>,
}

impl Stall {
    /// Holds the next request for `duration`.
    pub fn new(duration: Duration) -> Self {
        Self {
            duration,
            remaining: 1,
            verb: None,
            resource: None,
            client: None,
        }
    }

    /// Stalls this many requests (default 1; `usize::MAX` until
    /// [`TestServer::clear_faults`](crate::TestServer::clear_faults)).
    pub fn times(mut self, count: usize) -> Self {
        self.remaining = count;
        self
    }

    /// Only requests with this verb (as in [`Failure::verb`]).
    pub fn verb(mut self, verb: &str) -> Self {
        self.verb = Some(verb.to_string());
        self
    }

    /// Only requests for this resource (plural, e.g. `leases`).
    pub fn resource(mut self, resource: &str) -> Self {
        self.resource = Some(resource.to_string());
        self
    }

    /// Only requests of the client made by
    /// [`TestServer::named_client`](crate::TestServer::named_client) with this name.
    pub fn client(mut self, name: &str) -> Self {
        self.client = Some(name.to_string());
        self
    }

    fn matches(&self, request: &Request<'_>) -> bool {
        self.remaining > 0 && request.matches(&self.verb, &self.resource, &self.client)
    }
}

/// What fault rules match a request on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    /// The verb in the RBAC sense.
    pub(crate) verb: &'a str,
    /// The plural resource name (empty for non-resource paths).
    pub(crate) resource: &'a str,
    /// The client's name, from the header named-client requests carry.
    pub(crate) client: Option<&'a str>,
}

impl Request<'_> {
    fn matches(&self, verb: &Option<String>, resource: &Option<String>, client: &Option<String>) -> bool {
        verb.as_deref().is_none_or(|v| v == self.verb)
            && resource.as_deref().is_none_or(|r| r == self.resource)
            && client.as_deref().is_none_or(|c| Some(c) == self.client)
    }
}

/// Armed request faults.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    failures: Vec<Failure>,
    stalls: Vec<Stall>,
    delay: Option<Duration>,
    /// Resource (plural) -> how long its watches hold each live event back.
    watch_lags: HashMap<String, Duration>,
}

impl Faults {
    /// Arms a failure rule (rules are tried in the order they were armed).
    pub(crate) fn add(&mut self, failure: Failure) {
        self.failures.push(failure);
    }

    /// Arms a stall rule (rules are tried in the order they were armed).
    pub(crate) fn add_stall(&mut self, stall: Stall) {
        self.stalls.push(stall);
    }

    /// Delays every response by `delay` (`None`: no delay).
    pub(crate) fn set_delay(&mut self, delay: Option<Duration>) {
        self.delay = delay;
    }

    /// Current response delay.
    pub(crate) fn delay(&self) -> Option<Duration> {
        self.delay
    }

    /// Holds back every live watch event of `resource` by `lag` (`None`: no lag).
    pub(crate) fn set_watch_lag(&mut self, resource: &str, lag: Option<Duration>) {
        match lag {
            Some(lag) => drop(self.watch_lags.insert(resource.to_owned(), lag)),
            None => drop(self.watch_lags.remove(resource)),
        }
    }

    /// How long the watches of `resource` hold each live event back, if they do.
    pub(crate) fn watch_lag(&self, resource: &str) -> Option<Duration> {
        self.watch_lags.get(resource).copied()
    }

    /// Disarms everything.
    pub(crate) fn clear(&mut self) {
        self.failures.clear();
        self.stalls.clear();
        self.delay = None;
        self.watch_lags.clear();
    }

    /// How long to hold this request, consuming one use of the first matching stall rule.
    pub(crate) fn stall(&mut self, request: &Request<'_>) -> Option<Duration> {
        let rule = self.stalls.iter_mut().find(|s| s.matches(request))?;
        rule.remaining -= 1;
        let duration = rule.duration;
        self.stalls.retain(|s| s.remaining > 0);
        Some(duration)
    }

    /// The injected error for this request, consuming one use of the first matching rule.
    pub(crate) fn check(&mut self, request: &Request<'_>) -> Option<ApiError> {
        let rule = self.failures.iter_mut().find(|f| f.matches(request))?;
        rule.remaining -= 1;
        let error = ApiError::injected(rule.code, request.verb, request.resource, rule.retry_after);
        self.failures.retain(|f| f.remaining > 0);
        Some(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(verb: &'a str, resource: &'a str) -> Request<'a> {
        Request {
            verb,
            resource,
            client: None,
        }
    }

    #[test]
    fn rules_match_and_run_out() {
        let mut faults = Faults::default();
        faults.add(Failure::new(500).times(2).verb("list").resource("pods"));
        assert!(faults.check(&request("get", "pods")).is_none());
        assert!(faults.check(&request("list", "configmaps")).is_none());
        assert_eq!(faults.check(&request("list", "pods")).map(|e| e.code), Some(500));
        assert_eq!(
            faults.check(&request("list", "pods")).map(|e| e.reason),
            Some("InternalError".to_string())
        );
        assert!(faults.check(&request("list", "pods")).is_none());
        faults.add(Failure::new(429));
        let e = faults.check(&request("watch", "")).expect("armed");
        assert_eq!((e.code, e.retry_after), (429, Some(1)));
        faults.set_delay(Some(Duration::from_millis(5)));
        faults.clear();
        assert!(faults.delay().is_none());
    }

    #[test]
    fn watch_lags_are_per_resource_and_cleared() {
        let mut faults = Faults::default();
        faults.set_watch_lag("configmaps", Some(Duration::from_millis(300)));
        assert_eq!(faults.watch_lag("configmaps"), Some(Duration::from_millis(300)));
        assert_eq!(faults.watch_lag("secrets"), None);
        faults.set_watch_lag("configmaps", None);
        assert_eq!(faults.watch_lag("configmaps"), None);
        faults.set_watch_lag("secrets", Some(Duration::from_secs(1)));
        faults.clear();
        assert_eq!(faults.watch_lag("secrets"), None);
    }

    #[test]
    fn rules_for_one_client_skip_the_others() {
        let mut faults = Faults::default();
        faults.add(Failure::new(409).verb("update").client("b"));
        faults.add_stall(
            Stall::new(Duration::from_millis(300))
                .times(2)
                .resource("leases")
                .client("a"),
        );
        let of = |client| Request {
            verb: "update",
            resource: "leases",
            client,
        };
        assert!(faults.check(&of(None)).is_none());
        assert!(faults.check(&of(Some("a"))).is_none());
        assert_eq!(faults.check(&of(Some("b"))).map(|e| e.code), Some(409));
        assert!(faults.check(&of(Some("b"))).is_none());
        assert_eq!(faults.stall(&of(Some("b"))), None);
        assert_eq!(faults.stall(&of(Some("a"))), Some(Duration::from_millis(300)));
        assert_eq!(faults.stall(&of(Some("a"))), Some(Duration::from_millis(300)));
        assert_eq!(faults.stall(&of(Some("a"))), None);
        faults.add_stall(Stall::new(Duration::from_secs(1)).times(usize::MAX));
        assert!(faults.stall(&request("get", "pods")).is_some());
        faults.clear();
        assert!(faults.stall(&request("get", "pods")).is_none());
    }
}
