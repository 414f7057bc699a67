//! Merging two lists of pod tolerations as kube's `pkg/util/tolerations` does: a toleration
//! that another one of either list covers (tolerates a superset of the taints it tolerates) is
//! left out; of two equal ones, the first is kept.

use serde_json::Value;

/// `first` then `second`, without the tolerations another one covers.
pub(crate) fn merge_tolerations(first: &[Value], second: &[Value]) -> Vec<Value> {
    let all: Vec<&Value> = first.iter().chain(second).collect();
    let mut merged: Vec<Value> = Vec::new();
    for (i, toleration) in all.iter().enumerate() {
        let covered_by_kept = merged.iter().any(|kept| is_superset(kept, toleration));
        let covered_by_later = all[i + 1..]
            .iter()
            .any(|later| later != toleration && is_superset(later, toleration));
        if !covered_by_kept && !covered_by_later {
            merged.push((*toleration).clone());
        }
    }
    merged
}

/// Whether `wide` tolerates every taint `narrow` tolerates.
pub(crate) fn is_superset(wide: &Value, narrow: &Value) -> bool {
    if wide == narrow {
        return true;
    }
    let text = |toleration: &Value, field: &str| toleration[field].as_str().unwrap_or_default().to_owned();
    let (wide_key, wide_operator, wide_effect) =
        (text(wide, "key"), text(wide, "operator"), text(wide, "effect"));
    // an empty key with the Exists operator matches every key
    if text(narrow, "key") != wide_key && (!wide_key.is_empty() || wide_operator != "Exists") {
        return false;
    }
    // an empty effect matches every effect
    if text(narrow, "effect") != wide_effect && !wide_effect.is_empty() {
        return false;
    }
    if wide_effect == "NoExecute"
        && let Some(wide_seconds) = wide["tolerationSeconds"].as_i64()
        && narrow["tolerationSeconds"]
            .as_i64()
            .is_none_or(|narrow_seconds| narrow_seconds > wide_seconds)
    {
        return false;
    }
    match wide_operator.as_str() {
        // an empty operator is Equal
        "Equal" | "" => text(narrow, "operator") == "Equal" && text(narrow, "value") == text(wide, "value"),
        "Exists" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // kube: pkg/util/tolerations/tolerations_test.go, TestIsSuperset.
    #[test]
    fn a_wider_toleration_covers_a_narrower_one() {
        let exists_all = json!({"operator": "Exists"});
        let exists_key = json!({"key": "gpu", "operator": "Exists"});
        let equal = json!({"key": "gpu", "operator": "Equal", "value": "a100", "effect": "NoSchedule"});
        assert!(is_superset(&exists_all, &equal));
        assert!(is_superset(&exists_key, &equal));
        assert!(!is_superset(&equal, &exists_key));
        let other_value = json!({"key": "gpu", "operator": "Equal", "value": "h100", "effect": "NoSchedule"});
        assert!(!is_superset(&equal, &other_value));
        let short = json!({"key": "n", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60});
        let long = json!({"key": "n", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300});
        let forever = json!({"key": "n", "operator": "Exists", "effect": "NoExecute"});
        assert!(is_superset(&long, &short));
        assert!(!is_superset(&short, &long));
        assert!(is_superset(&forever, &long));
        assert!(!is_superset(&long, &forever));
    }

    // kube: pkg/util/tolerations/tolerations_test.go, TestMergeTolerations.
    #[test]
    fn merging_keeps_the_widest_tolerations_once() {
        let a = json!({"key": "a", "operator": "Exists"});
        let a_value = json!({"key": "a", "operator": "Equal", "value": "1"});
        let b = json!({"key": "b", "operator": "Exists", "effect": "NoSchedule"});
        let merged = merge_tolerations(&[a_value.clone(), b.clone()], &[a.clone(), b.clone()]);
        assert_eq!(merged, [b, a]);
        assert_eq!(merge_tolerations(std::slice::from_ref(&a_value), &[]), [a_value]);
    }
}
