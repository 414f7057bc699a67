//! [`KubeletHandle`]: what a test registers on a running server's kubelet (stages, logs, exec
//! answers, attach output), shared with the kubelet's loop and the HTTP handlers.

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::watch;

use super::config::Kubelet;
use super::exec::{ExecHandler, ExecOutput, ExecRequest};
use super::logs::Logs;
use super::stage::{PodMatch, Stage, StageRule};

/// What tests registered.
#[derive(Default)]
pub(crate) struct Registrations {
    pub(crate) stages: Vec<StageRule>,
    pub(crate) logs: Logs,
    pub(crate) exec: Vec<(PodMatch, ExecHandler)>,
    pub(crate) attach: Vec<(PodMatch, Vec<u8>)>,
    /// Writes of the kubelet that failed, oldest first.
    pub(crate) errors: Vec<String>,
}

struct Inner {
    config: Kubelet,
    registrations: Mutex<Registrations>,
    /// Bumped on every change a log follower may wait for (new log text, a status the
    /// kubelet wrote, a pod removed).
    changes: watch::Sender<u64>,
}

/// The simulated kubelet of a running server ([`TestServer::kubelet`](crate::TestServer::kubelet)):
/// what its pods do, and what their logs, exec and attach answer. Cheap to clone.
///
/// ```
/// use informer_testserver::TestServer;
/// use informer_testserver::kubelet::{ExecOutput, Kubelet, PodMatch, Stage};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = TestServer::builder().kubelet(Kubelet::with_nodes(1)).start().await?;
/// let kubelet = server.kubelet().expect("started with a kubelet");
/// kubelet.set_stage(PodMatch::labels("app=flaky")?, Stage::crash_loop());
/// kubelet.set_logs("default", "web", "app", "listening on :8080\n");
/// kubelet.on_exec(PodMatch::all(), |request| {
///     ExecOutput::stdout(format!("ran {}\n", request.command.join(" ")))
/// });
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct KubeletHandle {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for KubeletHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeletHandle")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl KubeletHandle {
    pub(crate) fn new(config: Kubelet) -> Self {
        Self {
            inner: Arc::new(Inner {
                config,
                registrations: Mutex::new(Registrations::default()),
                changes: watch::channel(0).0,
            }),
        }
    }

    /// The configuration the server started with.
    pub fn config(&self) -> &Kubelet {
        &self.inner.config
    }

    /// The names of the simulated nodes.
    pub fn node_names(&self) -> Vec<String> {
        self.inner.config.node_names()
    }

    /// Sets what every container of the matched pods does from now on (pods already running
    /// change too). A later call wins over an earlier one for the pods both match.
    pub fn set_stage(&self, pods: PodMatch, stage: Stage) {
        self.push_stage(pods, None, stage);
    }

    /// Like [`set_stage`](Self::set_stage), for the container `container` of the matched pods.
    pub fn set_container_stage(&self, pods: PodMatch, container: &str, stage: Stage) {
        self.push_stage(pods, Some(container.to_string()), stage);
    }

    fn push_stage(&self, pods: PodMatch, container: Option<String>, stage: Stage) {
        self.lock().stages.push(StageRule {
            pods,
            container,
            stage,
        });
        self.changed();
    }

    /// Replaces the log of `container` of the pod `namespace/pod` (its current run). A
    /// container with nothing registered has an empty log.
    pub fn set_logs(&self, namespace: &str, pod: &str, container: &str, text: &str) {
        self.lock().logs.set(namespace, pod, container, text, false);
        self.changed();
    }

    /// Appends to the log of `container` of `namespace/pod`: followers (`follow=true`) get it
    /// at once.
    pub fn append_logs(&self, namespace: &str, pod: &str, container: &str, text: &str) {
        self.lock().logs.append(namespace, pod, container, text);
        self.changed();
    }

    /// Sets the log of the previous run of `container` of `namespace/pod` (`previous=true`),
    /// answered once the container has restarted.
    pub fn set_previous_logs(&self, namespace: &str, pod: &str, container: &str, text: &str) {
        self.lock().logs.set(namespace, pod, container, text, true);
        self.changed();
    }

    /// Answers `pods/exec` for the matched pods with `handler` (a later registration wins for
    /// the pods both match). Without one, exec on a simulated node answers as an unreachable
    /// kubelet does.
    pub fn on_exec(
        &self,
        pods: PodMatch,
        handler: impl Fn(&ExecRequest) -> ExecOutput + Send + Sync + 'static,
    ) {
        self.lock().exec.push((pods, Arc::new(handler)));
    }

    /// Answers `pods/attach` for the matched pods: `output` on stdout, then the session ends
    /// with success.
    pub fn on_attach(&self, pods: PodMatch, output: impl Into<Vec<u8>>) {
        self.lock().attach.push((pods, output.into()));
    }

    /// The writes of the kubelet and scheduler that failed (a status update refused, an Event
    /// in a terminating namespace), oldest first, as messages.
    pub fn errors(&self) -> Vec<String> {
        self.lock().errors.clone()
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Registrations> {
        self.inner.registrations.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tells log followers that something changed.
    pub(crate) fn changed(&self) {
        self.inner.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A receiver of the change counter.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// The exec handler of `pod`, if any.
    pub(crate) fn exec_handler(&self, pod: &Value) -> Option<ExecHandler> {
        self.lock()
            .exec
            .iter()
            .rev()
            .find(|(pods, _)| pods.matches(pod))
            .map(|(_, handler)| handler.clone())
    }

    /// The attach output of `pod`, if any.
    pub(crate) fn attach_output(&self, pod: &Value) -> Option<Vec<u8>> {
        self.lock()
            .attach
            .iter()
            .rev()
            .find(|(pods, _)| pods.matches(pod))
            .map(|(_, output)| output.clone())
    }
}
