//! Where objects come from: the list and watch contract between a reflector and an API server
//! ([`ListerWatcher`], [`ListOptions`], [`Error`]) and its implementation on a [`kube::Api`]
//! ([`KubeListerWatcher`]), which decodes watch bodies as they arrive. Implement
//! [`ListerWatcher`] to feed informers from anything else (the `testing` feature has a fake).

mod body_frames;
mod cbor;
#[cfg(test)]
mod cbor_tests;
mod encoding;
mod exact_json;
mod field_path;
mod json_objects;
mod kube_lister_watcher;
mod list_fields;
pub(crate) mod pager;
mod protobuf_objects;
#[cfg(test)]
mod protobuf_tests;
mod protobuf_watch_body;
mod skip;
#[cfg(test)]
mod test_support;
#[cfg(feature = "unstable-watch-body")]
#[cfg_attr(docsrs, doc(cfg(feature = "unstable-watch-body")))]
pub mod watch_body;
#[cfg(not(feature = "unstable-watch-body"))]
mod watch_body;

pub use encoding::Encoding;
pub use field_path::{FieldPath, FieldPathError, LAST_APPLIED_ANNOTATION};
pub use kube_lister_watcher::{ApiScope, DEFAULT_RESPONSE_TIMEOUT, KubeListerWatcher};
use std::{error::Error as StdError, fmt};

use futures::{future::BoxFuture, stream::BoxStream};
use kube::core::{ObjectList, Status, WatchEvent, params::VersionMatch};

/// The annotation on the bookmark that ends the initial events of a streaming list.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// Changes the options of every list and watch request of a lister-watcher (client-go's
/// `TweakListOptionsFunc`), such as adding a label selector. A factory applies one to all of
/// its informers.
pub type TweakListOptions = std::sync::Arc<dyn Fn(&mut ListOptions) + Send + Sync>;

/// Options of one list or watch request (meta/v1 `ListOptions`).
///
/// The reflector fills in the resource version, paging and watch fields; selectors come from
/// the lister-watcher (for a factory, from its list tweaks).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListOptions {
    /// Restricts results by labels (`app=web,tier!=db`).
    pub label_selector: Option<String>,
    /// Restricts results by fields (`metadata.name=x`).
    pub field_selector: Option<String>,
    /// `None` asks for the most recent data; `"0"` accepts any cached data; otherwise a
    /// version, interpreted by `resource_version_match`.
    pub resource_version: Option<String>,
    /// How `resource_version` applies to a list (or to a streaming watch).
    pub resource_version_match: Option<VersionMatch>,
    /// The page size of a list; `None` for no limit.
    pub limit: Option<u32>,
    /// The continue token of the next page.
    pub continue_token: Option<String>,
    /// Ask for bookmark events on a watch.
    pub allow_watch_bookmarks: bool,
    /// Ask a watch to start with the current state as synthetic ADDED events, ended by a
    /// bookmark annotated with [`INITIAL_EVENTS_END_ANNOTATION`].
    pub send_initial_events: bool,
    /// Server-side timeout of a watch.
    pub timeout_seconds: Option<u32>,
}

/// A boxed error from the transport below a lister-watcher.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// The result of a list or watch request.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failed list or watch request, or a failure inside a watch stream.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API server answered with a `Status` error.
    #[error("the API server answered {}", DisplayStatus(.0))]
    Api(Box<Status>),
    /// The API server could not be reached (connection refused, DNS, TLS handshake).
    #[error("failed to connect to the API server: {0}")]
    Connect(#[source] BoxError),
    /// The request or the response stream failed after connecting.
    #[error("failed to read from the API server: {0}")]
    Transport(#[source] BoxError),
    /// A response or watch event could not be decoded.
    #[error("failed to decode a response from the API server: {0}")]
    Decode(#[source] BoxError),
    /// No response started within the response timeout: the server is stuck, or the request
    /// never left the client (a connection pool can keep a request waiting forever). The
    /// reflector retries the request.
    #[error("failed to receive a response to the {verb} of {url} within {timeout:?}")]
    Timeout {
        /// `list` or `watch`.
        verb: &'static str,
        /// The request's path.
        url: String,
        /// The response timeout.
        timeout: std::time::Duration,
    },
    /// The request could not be built from the options (such as an invalid selector).
    #[error("failed to build the {verb} request of {url}: {source}")]
    Request {
        /// `list` or `watch`.
        verb: &'static str,
        /// The resource's path.
        url: String,
        /// What kube's request builder reported.
        #[source]
        source: kube::core::request::Error,
    },
}

struct DisplayStatus<'a>(&'a Status);

impl fmt::Display for DisplayStatus<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        write!(f, "{}", s.code)?;
        if !s.reason.is_empty() {
            write!(f, " {}", s.reason)?;
        }
        if !s.message.is_empty() {
            write!(f, ": {}", s.message)?;
        }
        Ok(())
    }
}

impl Error {
    /// A `Status` error with `code`, `reason` and `message`.
    pub fn status(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self::Api(Box::new(Status::failure(&message.into(), reason).with_code(code)))
    }

    /// The `Status` the server answered with, if any.
    pub fn as_status(&self) -> Option<&Status> {
        match self {
            Self::Api(status) => Some(status),
            _ => None,
        }
    }

    /// 410 with reason `Expired` or `Gone`: the requested resource version is compacted.
    pub fn is_expired(&self) -> bool {
        self.as_status()
            .is_some_and(|s| s.code == 410 && matches!(s.reason.as_str(), "Expired" | "Gone"))
    }

    /// The requested resource version is newer than what the server has seen (a lagging
    /// watch cache); also the older form of a `Timeout` mentioning it.
    pub fn is_too_large_resource_version(&self) -> bool {
        const PHRASE: &str = "Too large resource version";
        let Some(s) = self.as_status() else { return false };
        let causes = s
            .details
            .as_ref()
            .map(|d| d.causes.as_slice())
            .unwrap_or_default();
        if causes.iter().any(|c| c.reason == "ResourceVersionTooLarge") {
            return true;
        }
        s.reason == "Timeout" && (causes.iter().any(|c| c.message == PHRASE) || s.message.contains(PHRASE))
    }

    /// 429: the server asks to slow down.
    pub fn is_too_many_requests(&self) -> bool {
        self.as_status().is_some_and(|s| s.code == 429)
    }

    /// 500: an internal error of the server.
    pub fn is_internal_error(&self) -> bool {
        self.as_status().is_some_and(|s| s.code == 500)
    }

    /// The server could not be reached.
    pub fn is_connection_refused(&self) -> bool {
        matches!(self, Self::Connect(_))
    }

    /// No response started within the lister-watcher's response timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout { .. })
    }

    /// The connection ended or went silent: reset (by a load balancer, a draining API
    /// server), closed in the middle of a response, or past a read timeout (client-go's
    /// `IsProbableEOF` and `IsTimeout`). Neither the request nor the resource version was at
    /// fault: a watch is opened again from where it stopped, without a relist.
    pub fn is_probable_eof(&self) -> bool {
        matches!(self, Self::Transport(source) if is_connection_end(source.as_ref()))
    }
}

/// Whether `err` or one of its sources says the connection ended or timed out: an I/O error
/// of such a kind, or hyper's incomplete message, timeout or cancelled request (the connection
/// closed before the request went out).
fn is_connection_end(err: &(dyn StdError + 'static)) -> bool {
    std::iter::successors(Some(err), |&e| e.source()).any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| is_connection_end_kind(io.kind()))
            || e.downcast_ref::<hyper::Error>().is_some_and(|hyper| {
                hyper.is_incomplete_message() || hyper.is_timeout() || hyper.is_canceled()
            })
    })
}

fn is_connection_end_kind(kind: std::io::ErrorKind) -> bool {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, TimedOut, UnexpectedEof};
    matches!(
        kind,
        UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe | TimedOut
    )
}

/// The events of one watch, ended by the server (timeout, restart) or by an error.
pub type WatchStream<K> = BoxStream<'static, Result<WatchEvent<K>, Error>>;

/// Lists and watches one kind of object (client-go's `ListerWatcher`).
///
/// Implementations apply their own scope (namespace, selectors) to the options they receive.
/// Watch streams report server `ERROR` events as [`WatchEvent::Error`] and transport or decode
/// failures as `Err` items; they never panic. A connection that ends or times out in the
/// middle of a watch ends the stream with an `Err` item for which [`Error::is_probable_eof`]
/// holds (as [`KubeListerWatcher`] does): the reflector re-watches from the last event without
/// relisting. A stream that ends without an error is a watch the server closed: watches that
/// keep closing at once without an event end in a relist.
pub trait ListerWatcher<K: Clone>: Send + Sync + 'static {
    /// Lists the objects.
    fn list(&self, options: &ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, Error>>;

    /// Starts a watch.
    fn watch(&self, options: &ListOptions) -> BoxFuture<'_, Result<WatchStream<K>, Error>>;
}

#[cfg(test)]
mod tests {
    use kube::core::response::{StatusCause, StatusDetails};

    use super::*;

    #[test]
    fn classifies_status_errors() {
        assert!(Error::status(410, "Expired", "too old resource version").is_expired());
        assert!(Error::status(410, "Gone", "gone").is_expired());
        assert!(!Error::status(500, "InternalError", "boom").is_expired());
        assert!(Error::status(429, "TooManyRequests", "slow down").is_too_many_requests());
        assert!(Error::status(500, "InternalError", "boom").is_internal_error());
        assert!(Error::Connect("refused".into()).is_connection_refused());
    }

    #[test]
    fn a_transport_error_from_an_ended_connection_is_a_probable_eof() {
        use std::io::{Error as IoError, ErrorKind};
        let transport = |kind: ErrorKind| Error::Transport(Box::new(IoError::new(kind, "from the socket")));
        for kind in [
            ErrorKind::ConnectionReset,
            ErrorKind::ConnectionAborted,
            ErrorKind::BrokenPipe,
            ErrorKind::UnexpectedEof,
            ErrorKind::TimedOut,
        ] {
            assert!(transport(kind).is_probable_eof(), "{kind:?}");
        }
        // found deeper in the chain, as behind kube's and hyper's errors
        let wrapped = kube::Error::Service(Box::new(IoError::new(ErrorKind::ConnectionReset, "reset")));
        assert!(Error::Transport(Box::new(wrapped)).is_probable_eof());

        assert!(!transport(ErrorKind::InvalidData).is_probable_eof());
        assert!(!transport(ErrorKind::PermissionDenied).is_probable_eof());
        assert!(!Error::Transport("the request could not be built".into()).is_probable_eof());
        let refused = IoError::new(ErrorKind::ConnectionRefused, "refused");
        assert!(!Error::Connect(Box::new(refused)).is_probable_eof());
        assert!(!Error::status(410, "Expired", "too old resource version").is_probable_eof());
        let reset_while_decoding = IoError::new(ErrorKind::ConnectionReset, "reset");
        assert!(!Error::Decode(Box::new(reset_while_decoding)).is_probable_eof());
    }

    #[test]
    fn classifies_too_large_resource_version_in_all_three_forms() {
        let with_causes = |reason: &str, cause_reason: &str, cause_message: &str, message: &str| {
            let mut status = Status::failure(message, reason).with_code(504);
            status.details = Some(StatusDetails {
                causes: vec![StatusCause {
                    reason: cause_reason.into(),
                    message: cause_message.into(),
                    field: String::new(),
                }],
                name: String::new(),
                group: String::new(),
                kind: String::new(),
                uid: String::new(),
                retry_after_seconds: 0,
            });
            Error::Api(Box::new(status))
        };
        assert!(with_causes("Timeout", "ResourceVersionTooLarge", "", "").is_too_large_resource_version());
        assert!(with_causes("Timeout", "", "Too large resource version", "").is_too_large_resource_version());
        assert!(
            Error::status(
                504,
                "Timeout",
                "Timeout: Too large resource version: 40, current: 30"
            )
            .is_too_large_resource_version()
        );
        assert!(!Error::status(504, "Timeout", "slow").is_too_large_resource_version());
    }

    #[test]
    fn status_errors_say_code_reason_and_message() {
        let err = Error::status(403, "Forbidden", "pods is forbidden: User \"x\" cannot list pods");
        assert_eq!(
            err.to_string(),
            "the API server answered 403 Forbidden: pods is forbidden: User \"x\" cannot list pods"
        );
    }
}
