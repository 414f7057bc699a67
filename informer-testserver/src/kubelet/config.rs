//! [`Kubelet`]: how many simulated nodes a server starts with, and how fast their pods move.

use std::{collections::BTreeMap, time::Duration};

/// How often a kubelet renews its node's Lease by default.
const LEASE_RENEWAL: Duration = Duration::from_secs(10);

/// Turns the simulated kubelet and scheduler on for a server
/// ([`TestServerBuilder::kubelet`](crate::TestServerBuilder::kubelet)), and sets their pace.
///
/// Every step a kubelet takes after a pod is bound (sandbox, each init container, the
/// containers) takes [`step`](Kubelet::step); a container meant to exit (see
/// [`Stage`](crate::kubelet::Stage)) runs for [`run_time`](Kubelet::run_time) first; a
/// container that restarts waits [`restart_backoff`](Kubelet::restart_backoff) in
/// `CrashLoopBackOff`; a deleted pod's containers stop at once and the pod is removed after the
/// shorter of its grace period and [`stop_time`](Kubelet::stop_time). Each node's kubelet
/// renews its Lease in `kube-node-lease` every [`lease_renewal`](Kubelet::lease_renewal).
///
/// ```
/// use std::time::Duration;
///
/// use informer_testserver::TestServer;
/// use informer_testserver::kubelet::Kubelet;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = TestServer::builder()
///     .kubelet(Kubelet::with_nodes(2).run_time(Duration::from_millis(100)))
///     .start()
///     .await?;
/// assert_eq!(server.list("v1", "Node", None)?.len(), 2);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kubelet {
    pub(crate) nodes: usize,
    pub(crate) step: Duration,
    pub(crate) run_time: Duration,
    pub(crate) restart_backoff: Duration,
    pub(crate) stop_time: Duration,
    pub(crate) lease_renewal: Duration,
    pub(crate) allocatable: BTreeMap<String, String>,
}

impl Kubelet {
    /// A kubelet running `nodes` nodes, named `node-1` to `node-N` (0: a scheduler with no
    /// node, every pod stays unschedulable), with the default pace: 20 ms per step, 100 ms of
    /// running before a container exits, 50 ms of back-off, 50 ms to stop, Leases renewed every
    /// 10 s.
    pub fn with_nodes(nodes: usize) -> Self {
        Self {
            nodes,
            step: Duration::from_millis(20),
            run_time: Duration::from_millis(100),
            restart_backoff: Duration::from_millis(50),
            stop_time: Duration::from_millis(50),
            lease_renewal: LEASE_RENEWAL,
            allocatable: [
                ("cpu", "4"),
                ("memory", "16Gi"),
                ("pods", "110"),
                ("ephemeral-storage", "100Gi"),
            ]
            .into_iter()
            .map(|(resource, quantity)| (resource.to_owned(), quantity.to_owned()))
            .collect(),
        }
    }

    /// How long each step of a pod's start takes (default 20 ms).
    pub fn step(mut self, step: Duration) -> Self {
        self.step = step;
        self
    }

    /// How long a container that is meant to exit runs first (default 100 ms).
    pub fn run_time(mut self, run_time: Duration) -> Self {
        self.run_time = run_time;
        self
    }

    /// How long a container waits in `CrashLoopBackOff` before it is restarted (default 50 ms).
    pub fn restart_backoff(mut self, backoff: Duration) -> Self {
        self.restart_backoff = backoff;
        self
    }

    /// How long a deleted pod's containers take to stop, at most (default 50 ms): the pod is
    /// removed after the shorter of this and its grace period.
    pub fn stop_time(mut self, stop_time: Duration) -> Self {
        self.stop_time = stop_time;
        self
    }

    /// How often each node's kubelet renews its Lease in `kube-node-lease` (default 10 s, a
    /// kubelet's: a quarter of the Lease's 40 s): its `renewTime` moves on, as controllers that
    /// watch node heartbeats expect. A Lease deleted meanwhile is created again at the next
    /// renewal, as a kubelet does. A zero duration is taken as the default.
    pub fn lease_renewal(mut self, interval: Duration) -> Self {
        self.lease_renewal = if interval.is_zero() {
            LEASE_RENEWAL
        } else {
            interval
        };
        self
    }

    /// Sets what every node can allocate of `resource` (its capacity says the same): by default
    /// `cpu` 4, `memory` 16Gi, `pods` 110 and `ephemeral-storage` 100Gi; an extended resource
    /// such as `nvidia.com/gpu` is added. The scheduler binds a pod only to a node whose
    /// allocatable holds the pod's requests beside those of the pods already bound to it, and
    /// marks it `Unschedulable` (`Insufficient cpu`) where none does. A quantity that is not
    /// one fails the server's start ([`KubeletError::Allocatable`](crate::kubelet::KubeletError::Allocatable)).
    ///
    /// ```
    /// use informer_testserver::kubelet::Kubelet;
    ///
    /// let gpus = Kubelet::with_nodes(2).allocatable("cpu", "2").allocatable("nvidia.com/gpu", "1");
    /// # let _ = gpus;
    /// ```
    pub fn allocatable(mut self, resource: &str, quantity: &str) -> Self {
        self.allocatable.insert(resource.to_owned(), quantity.to_owned());
        self
    }

    /// The names of the nodes.
    pub fn node_names(&self) -> Vec<String> {
        (1..=self.nodes).map(|i| format!("node-{i}")).collect()
    }
}
