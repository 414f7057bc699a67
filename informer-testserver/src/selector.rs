//! Label and field selectors: parsing with kube-apiserver's grammar, and the object filters the
//! server applies to lists and watches.
//!
//! Label selectors (`labelSelector`) are parsed by informer-apimachinery's parser, the one the
//! runtime uses, with kube-apiserver's grammar ([`parse_label_selector`]) and matched by
//! kube-core; field selectors (`fieldSelector`) are parsed by it too, and matched here.

pub(crate) mod field_values;

use std::collections::BTreeMap;

use kube::core::{Selector, SelectorExt};
use serde_json::Value;

/// Errors of selector parsing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// The label selector string is malformed.
    #[error("failed to parse label selector {selector:?}: {reason}")]
    Label {
        /// The selector as given.
        selector: String,
        /// What is wrong.
        reason: String,
    },
    /// The field selector string is malformed.
    #[error("failed to parse field selector {selector:?}: {reason}")]
    Field {
        /// The selector as given.
        selector: String,
        /// What is wrong.
        reason: String,
    },
}

/// Parses a label selector string (`labelSelector=`) into a kube [`Selector`], with the
/// shared parser ([`informer_apimachinery::selector::parse_label_selector`]).
///
/// ```
/// use informer_testserver::selector::parse_label_selector;
/// use kube::core::SelectorExt;
/// use std::collections::BTreeMap;
///
/// let selector = parse_label_selector("app=web, tier in (a,b), !legacy").expect("valid");
/// let labels = BTreeMap::from([("app".to_string(), "web".to_string()), ("tier".to_string(), "a".to_string())]);
/// assert!(selector.matches(&labels));
/// ```
pub fn parse_label_selector(input: &str) -> Result<Selector, SelectorError> {
    informer_apimachinery::selector::parse_label_selector(input).map_err(|err| SelectorError::Label {
        selector: err.selector,
        reason: err.reason,
    })
}

/// A parsed field selector: all requirements must hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FieldSelector(informer_apimachinery::selector::FieldSelector);

/// Parses a field selector (`fieldSelector=`): `metadata.name=x,metadata.namespace!=y`, with
/// the shared parser ([`informer_apimachinery::selector::parse_field_selector`]).
///
/// Any dotted path parses; which fields a resource can be selected by is checked when the
/// resource is known (kube-apiserver's per-resource lists). Values compare as strings.
pub(crate) fn parse_field_selector(input: &str) -> Result<FieldSelector, SelectorError> {
    informer_apimachinery::selector::parse_field_selector(input)
        .map(FieldSelector)
        .map_err(|err| SelectorError::Field {
            selector: err.selector,
            reason: err.reason,
        })
}

impl FieldSelector {
    /// Whether the object satisfies every requirement, each field read as kube-apiserver reads
    /// it ([`crate::selector::field_values::value`]: Go's zero value for an unset field of a built-in type).
    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.0
            .requirements()
            .iter()
            .all(|r| r.matches(&crate::selector::field_values::value(object, &r.field)))
    }

    /// The fields the requirements are about, in order.
    pub(crate) fn fields(&self) -> impl Iterator<Item = &str> {
        self.0.requirements().iter().map(|r| r.field.as_str())
    }

    /// Whether there is no requirement.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.selects_all()
    }
}

/// Which objects a list or watch wants: namespace, labels and fields.
#[derive(Debug, Clone, Default)]
pub(crate) struct ObjectFilter {
    /// Only objects in this namespace.
    pub(crate) namespace: Option<String>,
    /// Label selector.
    pub(crate) labels: Selector,
    /// Field selector.
    pub(crate) fields: FieldSelector,
}

impl ObjectFilter {
    /// Whether the object passes the filter.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let meta = &object["metadata"];
        if let Some(ns) = &self.namespace
            && meta["namespace"].as_str().unwrap_or_default() != ns
        {
            return false;
        }
        if !self.labels.selects_all() {
            let labels: BTreeMap<String, String> = meta["labels"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            if !self.labels.matches(&labels) {
                return false;
            }
        }
        self.fields.matches(object)
    }

    /// Whether a label or field selector is set (then lists omit `remainingItemCount`).
    pub(crate) fn has_selectors(&self) -> bool {
        !self.labels.selects_all() || !self.fields.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors_parse_with_the_runtime_and_fail_as_label_errors() {
        let selector = parse_label_selector("app=web,tier notin (db)").expect("valid");
        let labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
        assert!(selector.matches(&labels));
        assert_eq!(
            parse_label_selector("a in ()"),
            Err(SelectorError::Label {
                selector: "a in ()".into(),
                reason: "for 'in', 'notin' operators, values set can't be empty".into(),
            })
        );
    }

    #[test]
    fn field_selectors() {
        let pod = json!({"metadata": {"name": "p1", "namespace": "ns"}, "spec": {"nodeName": "n1"}});
        let sel = |s: &str| parse_field_selector(s).expect("valid field selector");
        assert!(sel("metadata.name=p1").matches(&pod));
        assert!(sel("metadata.name==p1,metadata.namespace=ns").matches(&pod));
        assert!(!sel("metadata.name!=p1").matches(&pod));
        assert!(sel("metadata.namespace!=other").matches(&pod));
        assert!(sel("spec.nodeName=n1").matches(&pod));
        assert!(sel("spec.missing=").matches(&pod));
        assert!(sel("").is_empty());
        assert!(parse_field_selector("metadata.name").is_err());
        assert!(parse_field_selector("=x").is_err());
        let escaped = json!({"metadata": {"name": "a,b"}});
        assert!(sel("metadata.name=a\\,b").matches(&escaped));
    }

    #[test]
    fn filter_combines_namespace_labels_fields() {
        let filter = ObjectFilter {
            namespace: Some("ns".into()),
            labels: parse_label_selector("app").expect("valid"),
            fields: parse_field_selector("metadata.name!=skip").expect("valid"),
        };
        assert!(
            filter.matches(&json!({"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "x"}}}))
        );
        assert!(
            !filter.matches(&json!({"metadata": {"name": "a", "namespace": "o", "labels": {"app": "x"}}}))
        );
        assert!(!filter.matches(&json!({"metadata": {"name": "a", "namespace": "ns"}})));
        assert!(
            !filter
                .matches(&json!({"metadata": {"name": "skip", "namespace": "ns", "labels": {"app": "x"}}}))
        );
        assert!(filter.has_selectors());
    }
}
