//! What a container does once started ([`Stage`]), and which pods a test's choice applies to
//! ([`PodMatch`]).

use kube::core::{Selector, SelectorExt};
use serde_json::Value;

use super::error::KubeletError;
use crate::selector::parse_label_selector;

/// What a simulated container does once it runs.
///
/// Whether a container that exits is restarted follows the pod's `restartPolicy` as a
/// kubelet does: `Always` restarts every exit, `OnFailure` non-zero exits, `Never` none. A
/// restart waits in `CrashLoopBackOff` (the previous run in `lastState.terminated`) and counts
/// in `restartCount`, so `Fail` under `Always` or `OnFailure` is a crash loop.
///
/// The default is [`Stage::Ready`], except for pods owned by a Job, which
/// [`Complete`](Stage::Complete) (as KWOK's default stages do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Runs and is ready, until deleted.
    Ready,
    /// Runs and never becomes ready (`ready: false`, as with a failing readiness probe).
    NotReady,
    /// Runs for the kubelet's run time, then exits with code 0 (reason `Completed`).
    Complete,
    /// Runs for the kubelet's run time, then exits with this non-zero code (reason `Error`).
    Fail {
        /// The exit code.
        exit_code: i32,
    },
}

impl Stage {
    /// A crash loop under `restartPolicy: Always` or `OnFailure`: [`Stage::Fail`] with exit
    /// code 1.
    ///
    /// ```
    /// use informer_testserver::kubelet::Stage;
    ///
    /// assert_eq!(Stage::crash_loop(), Stage::Fail { exit_code: 1 });
    /// ```
    pub const fn crash_loop() -> Self {
        Self::Fail { exit_code: 1 }
    }

    /// The exit code of a container of this stage once it exits (`None`: it does not exit).
    pub(crate) fn exit_code(self) -> Option<i32> {
        match self {
            Self::Ready | Self::NotReady => None,
            Self::Complete => Some(0),
            Self::Fail { exit_code } => Some(exit_code),
        }
    }
}

/// Which pods something registered on the kubelet applies to.
///
/// ```
/// use informer_testserver::kubelet::PodMatch;
///
/// let one = PodMatch::named("default", "web-0");
/// let some = PodMatch::labels("app=web,tier!=cache")?;
/// let all = PodMatch::all();
/// # Ok::<(), informer_testserver::kubelet::KubeletError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PodMatch {
    namespace: Option<String>,
    name: Option<String>,
    selector: Option<Selector>,
}

impl PodMatch {
    /// The pod `name` in `namespace`.
    pub fn named(namespace: &str, name: &str) -> Self {
        Self {
            namespace: Some(namespace.to_string()),
            name: Some(name.to_string()),
            selector: None,
        }
    }

    /// The pods of every namespace whose labels match `selector` (kube-apiserver's label
    /// selector grammar).
    pub fn labels(selector: &str) -> Result<Self, KubeletError> {
        let selector = parse_label_selector(selector).map_err(KubeletError::Selector)?;
        Ok(Self {
            namespace: None,
            name: None,
            selector: Some(selector),
        })
    }

    /// Every pod.
    pub fn all() -> Self {
        Self {
            namespace: None,
            name: None,
            selector: None,
        }
    }

    /// Only the pods of `namespace` among those matched.
    pub fn in_namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.to_string());
        self
    }

    /// Whether `pod` is matched.
    pub(crate) fn matches(&self, pod: &Value) -> bool {
        let meta = &pod["metadata"];
        if self
            .namespace
            .as_deref()
            .is_some_and(|ns| meta["namespace"].as_str() != Some(ns))
        {
            return false;
        }
        if self
            .name
            .as_deref()
            .is_some_and(|name| meta["name"].as_str() != Some(name))
        {
            return false;
        }
        match &self.selector {
            None => true,
            Some(selector) => {
                let labels: std::collections::BTreeMap<String, String> = meta["labels"]
                    .as_object()
                    .map(|labels| {
                        labels
                            .iter()
                            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                            .collect()
                    })
                    .unwrap_or_default();
                selector.matches(&labels)
            }
        }
    }
}

/// A test's choice of stage for the matched pods (all their containers, or one by name).
#[derive(Debug, Clone)]
pub(crate) struct StageRule {
    pub(crate) pods: PodMatch,
    pub(crate) container: Option<String>,
    pub(crate) stage: Stage,
}

/// The stage of `container` of `pod`: the latest matching rule, else the default (Job-owned
/// pods complete, others run ready).
pub(crate) fn stage_of(rules: &[StageRule], pod: &Value, container: &str) -> Stage {
    rules
        .iter()
        .rev()
        .find(|rule| rule.container.as_deref().is_none_or(|c| c == container) && rule.pods.matches(pod))
        .map(|rule| rule.stage)
        .unwrap_or_else(|| default_stage(pod))
}

fn default_stage(pod: &Value) -> Stage {
    let owned_by_job = pod["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|owners| {
            owners
                .iter()
                .any(|o| o["kind"] == "Job" && o["apiVersion"] == "batch/v1")
        });
    if owned_by_job {
        Stage::Complete
    } else {
        Stage::Ready
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_latest_matching_rule_wins_and_jobs_complete_by_default() {
        let pod = json!({"metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}}});
        let job_pod = json!({"metadata": {"name": "j", "namespace": "default",
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u"}]}});
        assert_eq!(stage_of(&[], &pod, "c"), Stage::Ready);
        assert_eq!(stage_of(&[], &job_pod, "c"), Stage::Complete);
        let rules = vec![
            StageRule {
                pods: PodMatch::labels("app=web").expect("selector"),
                container: None,
                stage: Stage::NotReady,
            },
            StageRule {
                pods: PodMatch::named("default", "p"),
                container: Some("side".into()),
                stage: Stage::crash_loop(),
            },
        ];
        assert_eq!(stage_of(&rules, &pod, "c"), Stage::NotReady);
        assert_eq!(stage_of(&rules, &pod, "side"), Stage::Fail { exit_code: 1 });
        assert_eq!(stage_of(&rules, &job_pod, "c"), Stage::Complete);
    }
}
