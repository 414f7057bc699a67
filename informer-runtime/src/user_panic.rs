//! Panics in user code the runtime calls: caught, reported, and never the end of processing.
//!
//! An informer calls user functions on its own task: the transform, the index functions, the
//! watch-error handler and the lister-watcher. A panic in any of them is caught where it
//! happens, logged at error level with the informer and the object's key, counted in
//! [`InformerStats::panics`](crate::informer::InformerStats::panics) (and in the Prometheus
//! metrics), and passed to the watch-error handler as [`reflector::Error::Panicked`](crate::reflector::Error::Panicked). The
//! informer goes on with the next change. What happens to the change whose processing
//! panicked:
//!
//! | function | the change |
//! |---|---|
//! | transform | kept as the transform left it: cached and delivered like any other |
//! | index function | cached and delivered; left out of that one index (other indexes hold it) |
//! | watch-error handler | the error it was given was already counted; nothing else depends on it |
//! | lister-watcher | that list-and-watch round ends; the reflector backs off and lists again |
//!
//! A transform's panic keeps the object rather than dropping it: an object missing from the
//! cache would look deleted to a controller (which may then delete what it owns), and a
//! dropped update or delete would leave the cache stale until the next change of that object.
//! A half-transformed object is the smaller harm, and the report names it. Event handlers'
//! panics are caught on their own threads and counted per handler
//! ([`HandlerStats::panics`](crate::informer::HandlerStats::panics)).

use std::{
    any::Any,
    fmt,
    panic::{AssertUnwindSafe, catch_unwind},
    sync::OnceLock,
};

use crate::key::ObjectKey;

/// Where an informer's reporter passes the panics it catches: the informer's watch-error
/// handler, wrapped by the informer.
pub(crate) type PanicSink = std::sync::Arc<dyn Fn(&UserPanic) + Send + Sync>;

/// The kind of user function that panicked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum UserFunction {
    /// The informer's transform.
    Transform,
    /// The index function of the named index.
    IndexFunction {
        /// The index's name.
        index: String,
    },
    /// The watch-error handler.
    WatchErrorHandler,
    /// The lister-watcher's `list` or `watch`, or its watch stream.
    ListerWatcher,
}

impl fmt::Display for UserFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Transform => f.write_str("transform"),
            Self::IndexFunction { index } => write!(f, "index function {index:?}"),
            Self::WatchErrorHandler => f.write_str("watch-error handler"),
            Self::ListerWatcher => f.write_str("lister-watcher"),
        }
    }
}

/// A panic caught in a user function.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed to run the {function} of the {informer} informer{}: it panicked: {message}", KeySuffix(.key.as_ref()))]
pub struct UserPanic {
    /// The informer (or store) whose function panicked.
    pub informer: String,
    /// Which function panicked.
    pub function: UserFunction,
    /// The key of the object being processed, if any.
    pub key: Option<ObjectKey>,
    /// The panic's message.
    pub message: String,
}

struct KeySuffix<'a>(Option<&'a ObjectKey>);

impl fmt::Display for KeySuffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(key) => write!(f, " on {key}"),
            None => Ok(()),
        }
    }
}

crate::stats::counters! {
    /// How many user-function calls of an informer panicked, by kind.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct UserPanicStats;
    /// The live counters behind [`UserPanicStats`].
    struct PanicCounters {
        /// Transform calls that panicked.
        transform,
        /// Index function calls that panicked (all indexes).
        index_functions,
        /// Watch-error handler calls that panicked.
        watch_error_handler,
        /// Lister-watcher calls (or watch streams) that panicked.
        lister_watcher,
    }
}

impl UserPanicStats {
    /// All panics together.
    pub fn total(&self) -> u64 {
        self.transform
            .saturating_add(self.index_functions)
            .saturating_add(self.watch_error_handler)
            .saturating_add(self.lister_watcher)
    }
}

/// The message of a panic payload (`&str` and `String` payloads; others are named as such).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic payload that is not a string".to_owned())
}

/// Calls `f`, catching a panic; the error is the panic's message.
pub(crate) fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| panic_message(payload.as_ref()))
}

/// Counts, logs and forwards the panics of one informer's user functions. Shared by the
/// informer's queue (transform), store (index functions) and reflector (watch-error handler,
/// lister-watcher).
#[derive(Default)]
pub(crate) struct PanicReporter {
    informer: String,
    counters: PanicCounters,
    /// Where panics are forwarded, once the informer starts with a watch-error handler.
    sink: OnceLock<PanicSink>,
}

impl fmt::Debug for PanicReporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PanicReporter")
            .field("informer", &self.informer)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl PanicReporter {
    /// A reporter for the informer (or store) described as `informer`.
    pub(crate) fn new(informer: impl Into<String>) -> Self {
        Self {
            informer: informer.into(),
            ..Self::default()
        }
    }

    /// Forwards later panics to `sink` too (a panic of the sink itself is counted as the
    /// watch-error handler's).
    pub(crate) fn forward_to(&self, sink: PanicSink) {
        let _ = self.sink.set(sink);
    }

    /// The counts so far.
    pub(crate) fn stats(&self) -> UserPanicStats {
        self.counters.snapshot()
    }

    /// The record of a panic of `function` on the object `key`, not yet reported.
    pub(crate) fn panic(&self, function: UserFunction, key: Option<ObjectKey>, message: String) -> UserPanic {
        UserPanic {
            informer: self.informer.clone(),
            function,
            key,
            message,
        }
    }

    /// Counts and logs `panic`, and passes it to the watch-error handler (if any). Call it
    /// with no lock held: the handler may read the cache.
    pub(crate) fn report(&self, panic: UserPanic) {
        self.count(&panic.function);
        tracing::error!(
            informer = %panic.informer,
            function = %panic.function,
            key = panic.key.as_ref().map_or("", ObjectKey::as_str),
            panic = %panic.message,
            "user code panicked; the informer goes on"
        );
        if panic.function == UserFunction::WatchErrorHandler {
            return;
        }
        if let Some(sink) = self.sink.get() {
            self.call(UserFunction::WatchErrorHandler, None, || sink(&panic));
        }
    }

    /// Calls the user function `f` of kind `function` (on the object `key`), reporting its
    /// panic if it panics. Call it with no lock held.
    pub(crate) fn call(&self, function: UserFunction, key: Option<ObjectKey>, f: impl FnOnce()) {
        if let Err(message) = catch(f) {
            self.report(self.panic(function, key, message));
        }
    }

    fn count(&self, function: &UserFunction) {
        let counter = match function {
            UserFunction::Transform => &self.counters.transform,
            UserFunction::IndexFunction { .. } => &self.counters.index_functions,
            UserFunction::WatchErrorHandler => &self.counters.watch_error_handler,
            UserFunction::ListerWatcher => &self.counters.lister_watcher,
        };
        counter.bump();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    };

    use super::*;

    #[test]
    fn panic_messages_come_from_str_and_string_payloads() {
        assert_eq!(catch(|| panic!("plain")), Err::<(), _>("plain".to_owned()));
        let n = 3;
        assert_eq!(
            catch(|| panic!("formatted {n}")),
            Err::<(), _>("formatted 3".to_owned())
        );
        assert_eq!(
            catch(|| std::panic::panic_any(7_u8)),
            Err::<(), _>("a panic payload that is not a string".to_owned())
        );
        assert_eq!(catch(|| 5), Ok(5));
    }

    #[test]
    fn reports_are_counted_by_kind_and_forwarded_to_the_handler() {
        let reporter = PanicReporter::new("pods");
        let seen = Arc::new(Mutex::new(Vec::new()));
        reporter.forward_to(Arc::new({
            let seen = Arc::clone(&seen);
            move |panic: &UserPanic| seen.lock().expect("not poisoned").push(panic.to_string())
        }));
        reporter.report(reporter.panic(
            UserFunction::Transform,
            Some(ObjectKey::new("ns", "a")),
            "boom".into(),
        ));
        let index = UserFunction::IndexFunction {
            index: "by-owner".into(),
        };
        reporter.report(reporter.panic(index, Some(ObjectKey::new("ns", "b")), "bad".into()));
        assert_eq!(
            reporter.stats(),
            UserPanicStats {
                transform: 1,
                index_functions: 1,
                ..UserPanicStats::default()
            }
        );
        assert_eq!(
            *seen.lock().expect("not poisoned"),
            [
                "failed to run the transform of the pods informer on ns/a: it panicked: boom",
                "failed to run the index function \"by-owner\" of the pods informer on ns/b: it panicked: bad",
            ]
        );
    }

    #[test]
    fn a_panicking_watch_error_handler_is_counted_and_not_called_about_itself() {
        let reporter = PanicReporter::new("pods");
        let calls = Arc::new(AtomicU64::new(0));
        reporter.forward_to(Arc::new({
            let calls = Arc::clone(&calls);
            move |_: &UserPanic| {
                calls.fetch_add(1, Ordering::SeqCst);
                panic!("handler bug");
            }
        }));
        reporter.report(reporter.panic(UserFunction::Transform, None, "boom".into()));
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "called once, for the transform's panic"
        );
        let stats = reporter.stats();
        assert_eq!(
            (stats.transform, stats.watch_error_handler, stats.total()),
            (1, 1, 2)
        );
    }
}
