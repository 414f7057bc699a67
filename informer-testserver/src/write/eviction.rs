//! `pods/eviction`: a `policy/v1` (or `v1beta1`) `Eviction` deletes a pod unless a
//! PodDisruptionBudget forbids it, as kube-apiserver's eviction REST decides:
//!
//! - a pod that is `Pending`, `Succeeded`, `Failed` or already being deleted is deleted without
//!   looking at budgets;
//! - otherwise the budgets of the pod's namespace whose (non-empty) selector matches the pod's
//!   labels are found: more than one is a 500; none, the pod is deleted;
//! - an unready pod of a budget that is healthy enough (or whose
//!   `unhealthyPodEvictionPolicy` is `AlwaysAllow`) is deleted without using the budget;
//! - a budget whose status is older than its spec (`observedGeneration < generation`) or that
//!   allows no disruption gives 429 TooManyRequests with a `DisruptionBudget` cause; else its
//!   `disruptionsAllowed` goes down by one, the pod is recorded in `disruptedPods`, and the pod
//!   is deleted with the Eviction's `deleteOptions`.
//!
//! A dry run (in the query or the `deleteOptions`) checks everything and changes nothing.

use kube::core::{Selector, SelectorExt};
use serde_json::{Value, json};

use super::dry_run::{self, OptionsKind};
use super::session::WriteSession;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::{State, UpdateMode, now_rfc3339};
use crate::storage::store::meta_str;

/// More entries than this in a budget's `disruptedPods` refuse evictions (kube-apiserver's
/// `MaxDisruptedPodSize`).
const MAX_DISRUPTED_PODS: usize = 2000;

/// The eviction message of a 429.
const VIOLATION: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// The `deleteOptions` of an `Eviction` (with the query's `dryRun` merged in as
/// kube-apiserver merges it) and whether the eviction is a dry run.
pub(crate) fn eviction_options(
    eviction: &Value,
    query_dry_run: &[String],
) -> Result<(Value, bool), ApiError> {
    let mut options = eviction
        .get("deleteOptions")
        .filter(|o| o.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    let dry = merged_dry_run(&mut options, query_dry_run)?;
    Ok((options, dry))
}

impl WriteSession<'_> {
    /// Evicts the pod `name` of `ns` as the `Eviction` asks, deleting it with `options` (see
    /// [`eviction_options`]) unless a budget forbids it.
    pub(crate) fn evict(
        &mut self,
        pods: &ResourceType,
        ns: &str,
        name: &str,
        eviction: &Value,
        mut options: Value,
    ) -> Result<(), ApiError> {
        check_kind(eviction)?;
        if meta_str(eviction, "name") != Some(name) {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Eviction object",
            ));
        }
        let pod = self.state.get(pods, Some(ns), name)?;
        let rv_unset = options["preconditions"]["resourceVersion"].is_null();
        if can_ignore_budgets(&pod) {
            if enforces_resource_version(&pod) && rv_unset {
                options["preconditions"]["resourceVersion"] = pod["metadata"]["resourceVersion"].clone();
            }
            self.delete(pods, Some(ns), name, &options)?;
            return Ok(());
        }
        let budgets = matching_budgets(self.state, ns, &pod)?;
        if budgets.len() > 1 {
            return Err(ApiError::new(
                500,
                "",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            ));
        }
        if let Some((budget_type, budget)) = budgets.into_iter().next() {
            if unhealthy_pod_may_go(&pod, &budget) {
                options["preconditions"]["resourceVersion"] = pod["metadata"]["resourceVersion"].clone();
                return self.delete_or_retry(pods, ns, name, &options, rv_unset, &budget);
            }
            let decremented = check_and_decrement(&budget, name)?;
            if !self.context.dry_run {
                let budget_name = meta_str(&budget, "name").unwrap_or_default().to_string();
                self.update(
                    &budget_type,
                    Some(ns),
                    &budget_name,
                    decremented,
                    UpdateMode::Status,
                )?;
            }
        }
        self.delete(pods, Some(ns), name, &options)?;
        Ok(())
    }

    /// The pod's delete after an unready pod was let go: a conflict (the pod changed since it
    /// was read) becomes the 429 that makes clients retry, unless the client gave the version
    /// itself.
    fn delete_or_retry(
        &mut self,
        pods: &ResourceType,
        ns: &str,
        name: &str,
        options: &Value,
        rv_unset: bool,
        budget: &Value,
    ) -> Result<(), ApiError> {
        match self.delete(pods, Some(ns), name, options) {
            Ok(_) => Ok(()),
            Err(e) if e.code == 409 && rv_unset => {
                Err(being_processed(meta_str(budget, "name").unwrap_or_default()))
            }
            Err(e) => Err(e),
        }
    }
}

/// A body of another kind than `Eviction` is refused.
fn check_kind(eviction: &Value) -> Result<(), ApiError> {
    let kind = eviction["kind"].as_str().unwrap_or("Eviction");
    let api_version = eviction["apiVersion"].as_str().unwrap_or("policy/v1");
    if kind == "Eviction" && matches!(api_version, "policy/v1" | "policy/v1beta1") {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "not a Eviction object: {api_version}, Kind={kind}"
    )))
}

/// The dry run of the eviction: the query's `dryRun` put into the `deleteOptions` when they
/// have none; both given and different is the 500 kube-apiserver answers.
fn merged_dry_run(options: &mut Value, query: &[String]) -> Result<bool, ApiError> {
    let in_body: Vec<String> = options["dryRun"]
        .as_array()
        .map(|values| {
            values
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let values = match (in_body.is_empty(), query.is_empty()) {
        (true, _) => query.to_vec(),
        (false, true) => in_body,
        (false, false) if in_body == query => in_body,
        (false, false) => {
            return Err(ApiError::new(
                500,
                "",
                format!(
                    "Non-matching dry-run options in request and content: [{}] and [{}]",
                    query.join(" "),
                    in_body.join(" ")
                ),
            ));
        }
    };
    if !values.is_empty() {
        options["dryRun"] = json!(values);
    }
    dry_run::from_values(&values, OptionsKind::Delete)
}

fn phase(pod: &Value) -> &str {
    // kube-apiserver stores every new pod as Pending; a pod written without a phase is one
    pod["status"]["phase"].as_str().unwrap_or("Pending")
}

fn is_being_deleted(pod: &Value) -> bool {
    pod["metadata"]["deletionTimestamp"].is_string()
}

/// Pods whose eviction disrupts nothing more: not running yet, finished, or going already.
fn can_ignore_budgets(pod: &Value) -> bool {
    matches!(phase(pod), "Pending" | "Succeeded" | "Failed") || is_being_deleted(pod)
}

/// Whether the delete of a pod evicted without a budget check must be of the version read.
fn enforces_resource_version(pod: &Value) -> bool {
    !matches!(phase(pod), "Succeeded" | "Failed") && !is_being_deleted(pod)
}

/// Is the pod's `Ready` condition `True`?
fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

/// An unready pod that the budget lets go without counting it as a disruption.
fn unhealthy_pod_may_go(pod: &Value, budget: &Value) -> bool {
    if is_ready(pod) {
        return false;
    }
    if budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow" {
        return true;
    }
    let status = &budget["status"];
    let desired = status["desiredHealthy"].as_i64().unwrap_or(0);
    status["currentHealthy"].as_i64().unwrap_or(0) >= desired && desired > 0
}

/// The budgets (with their type) of `ns` whose selector matches the pod's labels.
fn matching_budgets(state: &State, ns: &str, pod: &Value) -> Result<Vec<(ResourceType, Value)>, ApiError> {
    let Some(budget_type) = budget_type(state) else {
        return Ok(Vec::new());
    };
    let labels = pod["metadata"]["labels"]
        .as_object()
        .map(|labels| {
            labels
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let budgets = state.store.snapshot(&budget_type, None)?;
    Ok(budgets
        .into_iter()
        .filter(|((budget_ns, _), _)| budget_ns == ns)
        .filter(|(_, budget)| selects(&budget["spec"]["selector"], &labels))
        .map(|(_, budget)| (budget_type.clone(), budget))
        .collect())
}

/// The served PodDisruptionBudget type (`policy/v1` first), if any.
fn budget_type(state: &State) -> Option<ResourceType> {
    let served = |version| {
        state
            .registry
            .get("policy", version, "poddisruptionbudgets")
            .cloned()
    };
    served("v1").or_else(|| served("v1beta1"))
}

/// Whether a budget's selector picks a pod with these labels: a missing, empty or invalid
/// selector picks none.
fn selects(selector: &Value, labels: &std::collections::BTreeMap<String, String>) -> bool {
    let Ok(parsed) = serde_json::from_value::<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>(
        selector.clone(),
    ) else {
        return false;
    };
    match Selector::try_from(parsed) {
        Ok(selector) => !selector.selects_all() && selector.matches(labels),
        Err(_) => false,
    }
}

/// The 429 of a budget whose status does not reflect its spec yet.
fn being_processed(budget: &str) -> ApiError {
    too_many_requests(
        10,
        &format!("The disruption budget {budget} is still being processed by the server."),
    )
}

fn too_many_requests(retry_after: u64, cause: &str) -> ApiError {
    let mut details = json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]});
    if retry_after > 0 {
        details["retryAfterSeconds"] = json!(retry_after);
    }
    let mut error = ApiError::new(429, "TooManyRequests", VIOLATION).with_details(details);
    error.retry_after = (retry_after > 0).then_some(retry_after);
    error
}

fn forbidden(budget: &str, why: &str) -> ApiError {
    ApiError::new(
        403,
        "Forbidden",
        format!("poddisruptionbudget.policy \"{budget}\" is forbidden: {why}"),
    )
    .with_details(json!({"name": budget, "group": "policy", "kind": "poddisruptionbudget"}))
}

/// The budget with one disruption used by `pod`, or the error that refuses it.
fn check_and_decrement(budget: &Value, pod: &str) -> Result<Value, ApiError> {
    let name = meta_str(budget, "name").unwrap_or_default();
    let status = &budget["status"];
    let generation = budget["metadata"]["generation"].as_i64().unwrap_or(0);
    if status["observedGeneration"].as_i64().unwrap_or(0) < generation {
        return Err(being_processed(name));
    }
    let allowed = status["disruptionsAllowed"].as_i64().unwrap_or(0);
    if allowed < 0 {
        return Err(forbidden(name, "pdb disruptions allowed is negative"));
    }
    if status["disruptedPods"].as_object().map_or(0, |m| m.len()) > MAX_DISRUPTED_PODS {
        return Err(forbidden(
            name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        let cause = format!(
            "The disruption budget {name} needs {} healthy pods and has {} currently",
            status["desiredHealthy"].as_i64().unwrap_or(0),
            status["currentHealthy"].as_i64().unwrap_or(0)
        );
        return Err(too_many_requests(0, &cause));
    }
    let mut budget = budget.clone();
    let status = &mut budget["status"];
    status["disruptionsAllowed"] = json!(allowed - 1);
    if allowed - 1 == 0 {
        set_insufficient_pods(status);
    }
    status["disruptedPods"][pod] = json!(now_rfc3339());
    Ok(budget)
}

/// The `DisruptionAllowed` condition set to `False` (`InsufficientPods`), as the eviction that
/// used the last allowed disruption leaves it.
fn set_insufficient_pods(status: &mut Value) {
    let observed = status["observedGeneration"].clone();
    let condition = json!({
        "type": "DisruptionAllowed",
        "status": "False",
        "reason": "InsufficientPods",
        "message": "",
        "observedGeneration": observed,
        "lastTransitionTime": now_rfc3339(),
    });
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    let Some(conditions) = status["conditions"].as_array_mut() else {
        return;
    };
    match conditions.iter_mut().find(|c| c["type"] == "DisruptionAllowed") {
        Some(existing) if existing["status"] == "False" => {
            existing["reason"] = json!("InsufficientPods");
            existing["observedGeneration"] = condition["observedGeneration"].clone();
        }
        Some(existing) => *existing = condition,
        None => conditions.push(condition),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_or_missing_selectors_pick_no_pod() {
        let labels = [("app".to_string(), "web".to_string())].into_iter().collect();
        assert!(!selects(&Value::Null, &labels));
        assert!(!selects(&json!({}), &labels));
        assert!(selects(&json!({"matchLabels": {"app": "web"}}), &labels));
        assert!(!selects(&json!({"matchLabels": {"app": "db"}}), &labels));
    }

    #[test]
    fn decrement_records_the_pod_and_the_condition() {
        let budget = json!({"metadata": {"name": "b", "generation": 1},
            "status": {"observedGeneration": 1, "disruptionsAllowed": 1}});
        let used = check_and_decrement(&budget, "p").expect("allowed");
        assert_eq!(used["status"]["disruptionsAllowed"], 0);
        assert!(used["status"]["disruptedPods"]["p"].is_string());
        assert_eq!(used["status"]["conditions"][0]["reason"], "InsufficientPods");
        let refused = check_and_decrement(&used, "q").expect_err("none left");
        assert_eq!((refused.code, refused.message.as_str()), (429, VIOLATION));
        let stale = json!({"metadata": {"name": "b", "generation": 2},
            "status": {"observedGeneration": 1, "disruptionsAllowed": 3}});
        let refused = check_and_decrement(&stale, "p").expect_err("stale");
        assert_eq!(refused.retry_after, Some(10));
    }
}
