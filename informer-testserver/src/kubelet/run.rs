//! The kubelet's loop: after every write to the store (and when a step is due) it schedules
//! the pods that wait for a node, runs the pods bound to its nodes and removes the deleted
//! ones once their containers stopped. Every change is written through the server's write
//! path, so watches see it.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::watch;

use super::error::KubeletError;
use super::handle::KubeletHandle;
use super::node::{NODE_LEASE_NAMESPACE, micro_time_now, node_ip, node_lease, node_object};
use super::pod_status::render;
use super::resources::Resources;
use super::scheduler::{NodeUsage, SCHEDULER_NAME, choose, wants_scheduling};
use super::stage::stage_of;
use super::tracker::PodTrack;
use crate::registry::ResourceType;
use crate::storage::state::{State, UpdateMode, new_uid, now_rfc3339};
use crate::storage::store::meta_str;

/// The longest the loop sleeps without a write or a due step.
const IDLE: Duration = Duration::from_secs(3600);

/// The kubelet and scheduler of a server.
pub(crate) struct Runner {
    handle: KubeletHandle,
    /// Index of each simulated node (its addresses).
    nodes: HashMap<String, usize>,
    /// The pods the kubelet runs, by uid.
    tracks: HashMap<String, PodTrack>,
    /// Pods whose removal was asked for, by uid.
    removed: BTreeSet<String>,
    /// When the nodes' Leases are renewed next.
    next_renewal: Instant,
}

impl Runner {
    /// Registers the simulated nodes (and their leases) in `state`.
    pub(crate) fn start(state: &mut State, handle: KubeletHandle) -> Result<Self, KubeletError> {
        let allocatable = handle.config().allocatable.clone();
        check_allocatable(&allocatable)?;
        let names = handle.node_names();
        let mut nodes = HashMap::new();
        let nodes_rt = core(state, "nodes").ok_or(KubeletError::NotServed("nodes"))?;
        for (index, name) in names.iter().enumerate() {
            let node = node_object(name, index, &allocatable);
            let created =
                state
                    .write()
                    .create(&nodes_rt, None, node)
                    .map_err(|e| KubeletError::Register {
                        object: format!("nodes/{name}"),
                        source: Box::new(e),
                    })?;
            let uid = meta_str(&created, "uid").unwrap_or_default().to_string();
            if let Some(leases) = state.registry.get("coordination.k8s.io", "v1", "leases").cloned() {
                state
                    .write()
                    .create(&leases, Some(NODE_LEASE_NAMESPACE), node_lease(name, &uid))
                    .map_err(|e| KubeletError::Register {
                        object: format!("leases/kube-node-lease/{name}"),
                        source: Box::new(e),
                    })?;
            }
            state.simulated_nodes.insert(name.clone());
            nodes.insert(name.clone(), index);
        }
        let next_renewal = Instant::now() + handle.config().lease_renewal;
        Ok(Self {
            handle,
            nodes,
            tracks: HashMap::new(),
            removed: BTreeSet::new(),
            next_renewal,
        })
    }

    /// Runs until `stop` changes: a pass after every write and whenever a step is due.
    pub(crate) async fn run(
        mut self,
        state: Arc<Mutex<State>>,
        mut changes: watch::Receiver<u64>,
        mut stop: watch::Receiver<bool>,
    ) {
        let mut registered = self.handle.subscribe();
        loop {
            let next = {
                let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                changes.mark_unchanged();
                let next = self.pass(&mut state, Instant::now());
                registered.mark_unchanged();
                next
            };
            let sleep = tokio::time::sleep_until(next.unwrap_or_else(|| Instant::now() + IDLE).into());
            tokio::select! {
                _ = sleep => {}
                changed = changes.changed() => if changed.is_err() { return },
                // A stage the test set.
                _ = registered.changed() => {}
                _ = stop.changed() => return,
            }
        }
    }

    /// One pass; returns when the next step (or Lease renewal) is due.
    pub(crate) fn pass(&mut self, state: &mut State, now: Instant) -> Option<Instant> {
        let (Some(pods), Some(nodes)) = (core(state, "pods"), core(state, "nodes")) else {
            return None;
        };
        if now >= self.next_renewal {
            self.renew_leases(state, &nodes);
            self.next_renewal = now + self.handle.config().lease_renewal;
        }
        let mut wrote = self.schedule(state, &pods, &nodes);
        let objects = state.store.snapshot(&pods, None).unwrap_or_default();
        let mut seen = BTreeSet::new();
        let rules = self.handle.lock().stages.clone();
        for (_, pod) in objects {
            let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
            let Some(&index) = self.nodes.get(node) else {
                continue;
            };
            let uid = meta_str(&pod, "uid").unwrap_or_default().to_string();
            seen.insert(uid.clone());
            if self.removed.contains(&uid) {
                continue;
            }
            let stage = |container: &str| stage_of(&rules, &pod, container);
            let deleting = pod["metadata"]["deletionTimestamp"].is_string();
            if !self.tracks.contains_key(&uid) {
                if !deleting && matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed")) {
                    continue;
                }
                let ip = self.pod_ip(index);
                let track = PodTrack::new(&pod, node_ip(index), ip, now, self.handle.config(), stage);
                self.tracks.insert(uid.clone(), track);
            }
            let Some(track) = self.tracks.get_mut(&uid) else {
                continue;
            };
            if deleting && track.removal.is_none() {
                let grace = pod["metadata"]["deletionGracePeriodSeconds"]
                    .as_u64()
                    .unwrap_or(0);
                track.stop(now, grace, self.handle.config());
            } else {
                track.advance(now, self.handle.config(), stage);
            }
            if track.dirty {
                track.dirty = false;
                let mut updated = pod.clone();
                updated["status"] = render(&pod, track);
                let (ns, name) = (track.namespace.clone(), track.name.clone());
                if let Err(e) = state
                    .write()
                    .update(&pods, Some(&ns), &name, updated, UpdateMode::Status)
                {
                    self.handle.lock().errors.push(format!(
                        "failed to update the status of pod {ns}/{name}: {}",
                        e.message
                    ));
                }
                wrote = true;
            }
            if track.removal.is_some_and(|at| at <= now) {
                let (ns, name) = (track.namespace.clone(), track.name.clone());
                let options = json!({"gracePeriodSeconds": 0, "preconditions": {"uid": uid}});
                if let Err(e) = state.write().delete(&pods, Some(&ns), &name, &options) {
                    self.handle
                        .lock()
                        .errors
                        .push(format!("failed to remove pod {ns}/{name}: {}", e.message));
                }
                self.tracks.remove(&uid);
                self.removed.insert(uid);
                wrote = true;
            }
        }
        let before = self.tracks.len() + self.removed.len();
        self.tracks.retain(|uid, _| seen.contains(uid));
        self.removed.retain(|uid| seen.contains(uid));
        if wrote || before != self.tracks.len() + self.removed.len() {
            self.handle.changed();
        }
        let due = self.tracks.values().filter_map(PodTrack::next_due).min();
        Some(due.map_or(self.next_renewal, |due| due.min(self.next_renewal)))
    }

    /// Renews every node's Lease (its `renewTime`), creating again the ones deleted.
    fn renew_leases(&mut self, state: &mut State, nodes_rt: &ResourceType) {
        let Some(leases) = state.registry.get("coordination.k8s.io", "v1", "leases").cloned() else {
            return;
        };
        let mut names: Vec<&String> = self.nodes.keys().collect();
        names.sort();
        for name in names {
            let renewed = match state.get(&leases, Some(NODE_LEASE_NAMESPACE), name) {
                Ok(mut lease) => {
                    lease["spec"]["renewTime"] = json!(micro_time_now());
                    state
                        .write()
                        .update(&leases, Some(NODE_LEASE_NAMESPACE), name, lease, UpdateMode::Main)
                }
                Err(_) => {
                    let uid = state
                        .get(nodes_rt, None, name)
                        .ok()
                        .and_then(|node| meta_str(&node, "uid").map(str::to_string))
                        .unwrap_or_default();
                    state
                        .write()
                        .create(&leases, Some(NODE_LEASE_NAMESPACE), node_lease(name, &uid))
                }
            };
            if let Err(e) = renewed {
                self.handle
                    .lock()
                    .errors
                    .push(format!("failed to renew the lease of node {name}: {}", e.message));
            }
        }
    }

    /// The lowest free address of the node's pod CIDR.
    /// A node runs at most 110 pods, so its /24 never runs out.
    fn pod_ip(&self, index: usize) -> String {
        let used: BTreeSet<&str> = self.tracks.values().map(|t| t.pod_ip.as_str()).collect();
        (2..255)
            .map(|host| format!("10.244.{index}.{host}"))
            .find(|ip| !used.contains(ip.as_str()))
            .unwrap_or_else(|| format!("10.244.{index}.255"))
    }

    /// Binds every pod waiting for a node to one that fits; marks the others unschedulable.
    fn schedule(&mut self, state: &mut State, pods: &ResourceType, nodes_rt: &ResourceType) -> bool {
        let all_pods = state.store.snapshot(pods, None).unwrap_or_default();
        let waiting: Vec<&Value> = all_pods.values().filter(|p| wants_scheduling(p)).collect();
        if waiting.is_empty() {
            return false;
        }
        let nodes: Vec<Value> = state
            .store
            .snapshot(nodes_rt, None)
            .unwrap_or_default()
            .into_values()
            .collect();
        let mut usage: HashMap<String, NodeUsage> = HashMap::new();
        for pod in all_pods.values() {
            let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
            if !node.is_empty() && !matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed")) {
                use_node(&mut usage, node, pod);
            }
        }
        let mut wrote = false;
        for pod in waiting {
            let ns = meta_str(pod, "namespace").unwrap_or_default().to_string();
            let name = meta_str(pod, "name").unwrap_or_default().to_string();
            match choose(pod, &nodes, &usage) {
                Ok(node) => {
                    let binding = json!({
                        "kind": "Binding",
                        "metadata": {"name": name, "uid": meta_str(pod, "uid")},
                        "target": {"kind": "Node", "name": node},
                    });
                    match state.write().bind(pods, &ns, None, &binding) {
                        Ok(()) => use_node(&mut usage, &node, pod),
                        Err(e) => self
                            .handle
                            .lock()
                            .errors
                            .push(format!("failed to bind pod {ns}/{name}: {}", e.message)),
                    }
                    wrote = true;
                }
                Err(message) => wrote |= self.unschedulable(state, pods, pod, &message),
            }
        }
        wrote
    }

    /// Sets `PodScheduled=False` (reason `Unschedulable`) and records a `FailedScheduling`
    /// Event, unless the pod already says so with this message.
    fn unschedulable(&mut self, state: &mut State, pods: &ResourceType, pod: &Value, message: &str) -> bool {
        let said = pod["status"]["conditions"].as_array().is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c["type"] == "PodScheduled"
                    && c["status"] == "False"
                    && c["reason"] == "Unschedulable"
                    && c["message"] == message
            })
        });
        if said {
            return false;
        }
        let ns = meta_str(pod, "namespace").unwrap_or_default().to_string();
        let name = meta_str(pod, "name").unwrap_or_default().to_string();
        let mut updated = pod.clone();
        let mut conditions: Vec<Value> = pod["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|c| c["type"] != "PodScheduled")
            .collect();
        conditions.push(json!({
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": null,
            "lastTransitionTime": now_rfc3339(),
            "reason": "Unschedulable",
            "message": message,
        }));
        updated["status"]["conditions"] = json!(conditions);
        if updated["status"]["phase"].is_null() {
            updated["status"]["phase"] = json!("Pending");
        }
        if let Err(e) = state
            .write()
            .update(pods, Some(&ns), &name, updated, UpdateMode::Status)
        {
            self.handle.lock().errors.push(format!(
                "failed to update the status of pod {ns}/{name}: {}",
                e.message
            ));
        }
        if let Some(events) = core(state, "events") {
            let event = failed_scheduling(pod, message);
            if let Err(e) = state.write().create(&events, Some(&ns), event) {
                self.handle.lock().errors.push(format!(
                    "failed to record an event for pod {ns}/{name}: {}",
                    e.message
                ));
            }
        }
        true
    }
}

/// The core/v1 Event kube-scheduler records for a pod it cannot place.
fn failed_scheduling(pod: &Value, message: &str) -> Value {
    let now = now_rfc3339();
    let name = meta_str(pod, "name").unwrap_or_default();
    let suffix: String = new_uid().replace('-', "").chars().take(16).collect();
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": format!("{name}.{suffix}"), "namespace": meta_str(pod, "namespace")},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": name,
            "namespace": meta_str(pod, "namespace"),
            "uid": meta_str(pod, "uid"),
            "resourceVersion": meta_str(pod, "resourceVersion"),
        },
        "reason": "FailedScheduling",
        "message": message,
        "type": "Warning",
        "source": {"component": SCHEDULER_NAME},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "action": "Scheduling",
        "reportingComponent": SCHEDULER_NAME,
        "reportingInstance": format!("{SCHEDULER_NAME}-simulated"),
    })
}

/// Checks that every allocatable quantity is one (`pods` a count).
fn check_allocatable(allocatable: &std::collections::BTreeMap<String, String>) -> Result<(), KubeletError> {
    for (resource, quantity) in allocatable {
        let reason = if resource == "pods" {
            quantity.parse::<usize>().err().map(|err| err.to_string())
        } else {
            Resources::read(&json!({resource: quantity})).err()
        };
        if let Some(reason) = reason {
            return Err(KubeletError::Allocatable {
                resource: resource.clone(),
                quantity: quantity.clone(),
                reason,
            });
        }
    }
    Ok(())
}

/// Counts `pod`, bound to `node`, in what the node's pods take (a pod whose requests cannot be
/// read counts as requesting nothing: it was bound by someone else).
fn use_node(usage: &mut HashMap<String, NodeUsage>, node: &str, pod: &Value) {
    let used = usage.entry(node.to_string()).or_default();
    used.pods += 1;
    used.requested
        .add(&Resources::requested_by(pod).unwrap_or_default());
}

/// The core/v1 type of `plural` (`None` when a type given to the builder replaced it).
fn core(state: &State, plural: &str) -> Option<ResourceType> {
    state.registry.get("", "v1", plural).cloned()
}
