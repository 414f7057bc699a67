//! What the kubelet remembers of each pod it runs: its containers' states and the time of
//! each one's next step. The stored pod's status is written from it (`pod_status.rs`).

use std::time::{Duration, Instant};

use serde_json::Value;

use super::config::Kubelet;
use super::stage::Stage;
use crate::storage::state::new_uid;

/// Where a container is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Run {
    /// Not running, for this reason (`ContainerCreating`, `PodInitializing`,
    /// `CrashLoopBackOff`).
    Waiting(&'static str),
    /// Running since this time.
    Running {
        /// RFC 3339.
        started_at: String,
    },
    /// Exited.
    Terminated(Exit),
}

/// A container's exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exit {
    pub(crate) exit_code: i32,
    pub(crate) reason: &'static str,
    pub(crate) started_at: String,
    pub(crate) finished_at: String,
    pub(crate) container_id: String,
}

/// One container of a pod the kubelet runs.
#[derive(Debug, Clone)]
pub(crate) struct Container {
    pub(crate) name: String,
    pub(crate) image: String,
    pub(crate) run: Run,
    pub(crate) ready: bool,
    pub(crate) stage: Stage,
    pub(crate) restarts: u32,
    pub(crate) last: Option<Exit>,
    /// The runtime's id of the current (or last) run.
    pub(crate) container_id: Option<String>,
    /// When the current state ends (an exit, a restart).
    due: Option<Instant>,
}

impl Container {
    fn new(spec: &Value, waiting: &'static str, stage: Stage) -> Self {
        Self {
            name: spec["name"].as_str().unwrap_or_default().to_string(),
            image: spec["image"].as_str().unwrap_or_default().to_string(),
            run: Run::Waiting(waiting),
            ready: false,
            stage,
            restarts: 0,
            last: None,
            container_id: None,
            due: None,
        }
    }

    fn start(&mut self, now: Instant, config: &Kubelet) {
        self.run = Run::Running {
            started_at: timestamp(),
        };
        self.container_id = Some(format!("containerd://{}", new_uid().replace('-', "")));
        self.ready = self.stage != Stage::NotReady;
        self.due = self.stage.exit_code().map(|_| now + config.run_time);
    }

    fn exit(&mut self, exit_code: i32, reason: &'static str) -> Exit {
        let started_at = match &self.run {
            Run::Running { started_at } => started_at.clone(),
            _ => timestamp(),
        };
        let exit = Exit {
            exit_code,
            reason,
            started_at,
            finished_at: timestamp(),
            container_id: self.container_id.clone().unwrap_or_default(),
        };
        self.run = Run::Terminated(exit.clone());
        self.ready = false;
        self.due = None;
        exit
    }

    /// Whether the container ran to its end and will not run again.
    pub(crate) fn is_terminated(&self) -> bool {
        matches!(self.run, Run::Terminated(_))
    }
}

/// A pod the kubelet runs.
#[derive(Debug, Clone)]
pub(crate) struct PodTrack {
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) host_ip: String,
    pub(crate) pod_ip: String,
    pub(crate) start_time: String,
    pub(crate) restart_policy: String,
    /// The sandbox is up (`PodReadyToStartContainers`).
    pub(crate) sandbox: bool,
    pub(crate) init: Vec<Container>,
    pub(crate) containers: Vec<Container>,
    /// When the pod's next start step is due (sandbox, next init container, containers).
    due: Option<Instant>,
    /// When a deleted pod is removed.
    pub(crate) removal: Option<Instant>,
    /// The status changed since it was last written.
    pub(crate) dirty: bool,
}

impl PodTrack {
    /// A pod just bound to a node: its containers wait for their sandbox.
    pub(crate) fn new(
        pod: &Value,
        host_ip: String,
        pod_ip: String,
        now: Instant,
        config: &Kubelet,
        stage_of: impl Fn(&str) -> Stage,
    ) -> Self {
        let specs = |field: &str| pod["spec"][field].as_array().cloned().unwrap_or_default();
        let init: Vec<Container> = specs("initContainers")
            .iter()
            .map(|c| Container::new(c, "PodInitializing", Stage::Complete))
            .collect();
        let waiting = if init.is_empty() {
            "ContainerCreating"
        } else {
            "PodInitializing"
        };
        let containers = specs("containers")
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap_or_default();
                Container::new(c, waiting, stage_of(name))
            })
            .collect();
        Self {
            namespace: pod["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            name: pod["metadata"]["name"].as_str().unwrap_or_default().to_string(),
            host_ip,
            pod_ip,
            start_time: crate::storage::state::now_rfc3339(),
            restart_policy: pod["spec"]["restartPolicy"]
                .as_str()
                .unwrap_or("Always")
                .to_string(),
            sandbox: false,
            init,
            containers,
            due: Some(now + config.step),
            removal: None,
            dirty: true,
        }
    }

    /// The earliest time something is due.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.containers
            .iter()
            .filter_map(|c| c.due)
            .chain(self.due)
            .chain(self.removal)
            .min()
    }

    /// Takes every step due at `now`, and the stages a test set since.
    pub(crate) fn advance(&mut self, now: Instant, config: &Kubelet, stage_of: impl Fn(&str) -> Stage) {
        if self.removal.is_some() {
            return;
        }
        for container in &mut self.containers {
            let stage = stage_of(&container.name);
            if stage != container.stage {
                container.stage = stage;
                if matches!(container.run, Run::Running { .. }) {
                    container.ready = stage != Stage::NotReady;
                    container.due = stage.exit_code().map(|_| now + config.run_time);
                    self.dirty = true;
                }
            }
        }
        if self.due.is_some_and(|due| due <= now) {
            self.start_step(now, config);
            self.dirty = true;
        }
        let restart_policy = self.restart_policy.clone();
        for container in &mut self.containers {
            if container.due.is_none_or(|due| due > now) {
                continue;
            }
            self.dirty = true;
            match container.run {
                Run::Running { .. } => {
                    let code = container.stage.exit_code().unwrap_or(0);
                    let reason = if code == 0 { "Completed" } else { "Error" };
                    let exit = container.exit(code, reason);
                    let restart = match restart_policy.as_str() {
                        "Never" => false,
                        "OnFailure" => code != 0,
                        _ => true,
                    };
                    if restart {
                        container.last = Some(exit);
                        container.run = Run::Waiting("CrashLoopBackOff");
                        container.due = Some(now + config.restart_backoff);
                    }
                }
                _ => {
                    container.restarts += 1;
                    container.start(now, config);
                }
            }
        }
    }

    /// The next start step: the sandbox and the first init container, the next init
    /// container, or the containers once every init container completed.
    fn start_step(&mut self, now: Instant, config: &Kubelet) {
        self.due = None;
        self.sandbox = true;
        if let Some(running) = self
            .init
            .iter_mut()
            .find(|c| matches!(c.run, Run::Running { .. }))
        {
            running.exit(0, "Completed");
        }
        if let Some(next) = self.init.iter_mut().find(|c| matches!(c.run, Run::Waiting(_))) {
            next.start(now, config);
            next.due = None;
            next.ready = false;
            self.due = Some(now + config.step);
            return;
        }
        for container in &mut self.containers {
            container.start(now, config);
        }
    }

    /// The pod was deleted: its containers stop now, and it is removed after the shorter of
    /// its grace period and the kubelet's stop time.
    pub(crate) fn stop(&mut self, now: Instant, grace_seconds: u64, config: &Kubelet) {
        self.due = None;
        for container in self.init.iter_mut().chain(self.containers.iter_mut()) {
            match container.run {
                Run::Running { .. } => {
                    container.exit(0, "Completed");
                }
                Run::Waiting(_) => {
                    container.due = None;
                    container.ready = false;
                }
                Run::Terminated(_) => {}
            }
        }
        self.removal = Some(now + config.stop_time.min(Duration::from_secs(grace_seconds)));
        self.dirty = true;
    }

    /// The pod's phase, from its containers' states as a kubelet computes it.
    pub(crate) fn phase(&self) -> &'static str {
        if !self
            .init
            .iter()
            .all(|c| matches!(&c.run, Run::Terminated(e) if e.exit_code == 0))
            || self.containers.iter().all(|c| {
                c.run == Run::Waiting("ContainerCreating") || c.run == Run::Waiting("PodInitializing")
            })
        {
            return "Pending";
        }
        if self.containers.iter().all(Container::is_terminated) {
            let failed = self
                .containers
                .iter()
                .any(|c| matches!(&c.run, Run::Terminated(e) if e.exit_code != 0));
            return if failed { "Failed" } else { "Succeeded" };
        }
        "Running"
    }
}

/// Now, in RFC 3339 with seconds, as the kubelet's timestamps are.
pub(crate) fn timestamp() -> String {
    crate::storage::state::now_rfc3339()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config() -> Kubelet {
        Kubelet::with_nodes(1)
    }

    #[test]
    fn init_containers_complete_before_the_containers_start() {
        let pod = json!({"metadata": {"name": "p", "namespace": "d"}, "spec": {
            "initContainers": [{"name": "i1"}, {"name": "i2"}],
            "containers": [{"name": "c"}]}});
        let config = config();
        let t0 = Instant::now();
        let mut track = PodTrack::new(&pod, "h".into(), "p".into(), t0, &config, |_| Stage::Ready);
        assert_eq!(track.phase(), "Pending");
        let mut now = t0;
        for _ in 0..3 {
            now += config.step;
            track.advance(now, &config, |_| Stage::Ready);
        }
        assert!(track.init.iter().all(Container::is_terminated));
        assert_eq!(track.phase(), "Running");
        assert!(track.containers[0].ready);
    }

    #[test]
    fn a_failing_container_crash_loops_unless_restarts_are_off() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}});
        let config = config();
        let fail = |_: &str| Stage::Fail { exit_code: 3 };
        let mut now = Instant::now();
        let mut track = PodTrack::new(&pod, "h".into(), "p".into(), now, &config, fail);
        for _ in 0..20 {
            now += Duration::from_millis(10);
            track.advance(now, &config, fail);
        }
        assert!(track.containers[0].restarts >= 1);
        assert_eq!(track.phase(), "Running");

        let never = json!({"metadata": {"name": "p"}, "spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}});
        let mut track = PodTrack::new(&never, "h".into(), "p".into(), now, &config, fail);
        for _ in 0..20 {
            now += Duration::from_millis(10);
            track.advance(now, &config, fail);
        }
        assert_eq!((track.phase(), track.containers[0].restarts), ("Failed", 0));
    }
}
