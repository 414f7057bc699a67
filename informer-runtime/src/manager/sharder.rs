//! The sharding runnables: a [`Sharder`] (on the leader when the manager elects one, or on
//! every replica when the sharder elects its active replica itself), and a shard's
//! [`DrainSweep`] (while the shard holds its Lease).

use std::sync::Arc;

use futures::future::BoxFuture;

use super::runnable::{Runnable, RunnableError};
use crate::controller::RunContext;
use crate::sharding::{DrainSweep, Sharder};

/// Runs the sharder in each run the manager gives it: for one leadership term (writing only
/// while the term is current), or, for a sharder with its own
/// [`leader_election`](Sharder::leader_election), from start to shutdown, electing itself.
impl Runnable for Sharder {
    fn name(&self) -> &str {
        self.runnable_name()
    }

    fn needs_leader_election(&self) -> bool {
        !self.elects_itself()
    }

    fn run(&self, context: RunContext) -> BoxFuture<'static, Result<(), RunnableError>> {
        let sharder = self.clone();
        Box::pin(async move {
            if sharder.elects_itself() {
                return sharder
                    .run_until(context.stop_token())
                    .await
                    .map_err(RunnableError::from);
            }
            sharder
                .run_term(context.stop_token(), context.leadership().cloned())
                .await
                .map_err(RunnableError::from)
        })
    }

    /// The `controller_sharding_*` metrics of the sharder, and the queue and reconcile
    /// metrics of its controllers.
    #[cfg(feature = "metrics")]
    fn register_metrics(&self, registry: &mut prometheus_client::registry::Registry) {
        crate::metrics::register_sharder(registry, self);
    }
}

/// A shard's drain sweep with the client it writes through (the manager's fenced client).
pub(super) struct SweepRunnable {
    pub(super) sweep: Arc<DrainSweep>,
    pub(super) client: kube::Client,
}

/// Runs the sweep once per term of the shard's Lease.
impl Runnable for SweepRunnable {
    fn name(&self) -> &str {
        self.sweep.name()
    }

    fn run(&self, context: RunContext) -> BoxFuture<'static, Result<(), RunnableError>> {
        let (sweep, client) = (Arc::clone(&self.sweep), self.client.clone());
        Box::pin(async move {
            sweep
                .run_term(client, context.stop_token(), context.leadership().cloned())
                .await
                .map_err(RunnableError::from)
        })
    }
}
