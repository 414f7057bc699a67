//! The manager's client: a `kube::Client` whose writes are refused unless this replica leads.
//!
//! Leader election alone does not stop an old leader's reconcile that is still running when
//! the term ends: it may send its write a moment later, after another replica took over.
//! This client checks, just before it sends each write (POST, PUT, PATCH, DELETE), that the
//! leadership the write is made under is still [current](Leadership::is_current): the
//! reconcile's own leadership when it runs in a controller (see
//! [`RunContext`](crate::controller::RunContext)), else this replica's. A refused write
//! fails with a `kube::Error::Service` whose source is a [`WriteRefused`]; reads always pass.

use std::fmt;

use http::Request;
use kube::client::Body;

use crate::{
    client_layer::{self, BoxError, Layer, ResponseFuture, is_write},
    controller::RunContext,
    leader_election::{LeaderElector, Leadership, Term},
};

/// A write refused because the leadership it was made under ended (or never began).
#[derive(Debug, Clone, thiserror::Error)]
#[error("failed to send {method} {path}: {reason}")]
pub struct WriteRefused {
    /// The request's method.
    pub method: String,
    /// The request's path.
    pub path: String,
    /// Why: the term that ended, or that this replica does not lead.
    pub reason: RefusalReason,
}

/// Why a write was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalReason {
    /// The reconcile's (or runnable's) leadership term ended before the write was sent.
    TermEnded(Term),
    /// This replica does not lead.
    NotLeading,
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TermEnded(term) => write!(f, "{term} ended; only the current leader writes"),
            Self::NotLeading => f.write_str("this replica does not lead; only the leader writes"),
        }
    }
}

impl WriteRefused {
    /// The refusal inside `error`, if `error` is one (a `kube::Error` from a manager's client).
    pub fn of(error: &kube::Error) -> Option<&Self> {
        match error {
            kube::Error::Service(source) => source.downcast_ref::<Self>(),
            _ => None,
        }
    }
}

/// Decides whether a write may be sent now.
#[derive(Clone)]
pub(crate) struct Fence {
    elector: Option<LeaderElector>,
}

impl Fence {
    /// A fence that lets writes pass while `elector` (if any) leads.
    pub(crate) fn new(elector: Option<LeaderElector>) -> Self {
        Self { elector }
    }

    /// Why a write may not be sent now, if it may not.
    fn refusal(&self) -> Option<RefusalReason> {
        let elector = self.elector.as_ref()?;
        if let Some(run) = RunContext::current()
            && let Some(leadership) = run.leadership()
        {
            return ended(leadership);
        }
        match elector.leadership() {
            Some(leadership) => ended(&leadership),
            None => Some(RefusalReason::NotLeading),
        }
    }
}

fn ended(leadership: &Leadership) -> Option<RefusalReason> {
    (!leadership.is_current()).then(|| RefusalReason::TermEnded(leadership.term().clone()))
}

/// `client` with its writes passing through `fence`.
pub(crate) fn fenced(client: kube::Client, fence: Fence) -> kube::Client {
    client_layer::wrap(client, fence)
}

impl Layer for Fence {
    fn call(&self, client: kube::Client, request: Request<Body>) -> ResponseFuture {
        let fence = self.clone();
        // The check runs when the future is first polled, in the caller's task (where the
        // reconcile's scope is visible), right before the request goes out.
        Box::pin(async move {
            if is_write(request.method())
                && let Some(reason) = fence.refusal()
            {
                let refused = WriteRefused {
                    method: request.method().to_string(),
                    path: request.uri().path().to_owned(),
                    reason,
                };
                tracing::warn!(error = %refused, "refused a write made without a current leadership");
                return Err(BoxError::from(refused));
            }
            client.send(request).await.map_err(BoxError::from)
        })
    }
}
