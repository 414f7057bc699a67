//! What a scoped cache holds (its [`Selection`]: namespaces, labels, fields) and whether it
//! can answer a question: a lister answers only questions whose every possible answer lies
//! inside the selection.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
};

use kube::core::{Expression, Selector, SelectorExt};

use crate::selector::{FieldRequirement, FieldSelector};

/// The objects a scoped cache holds: those in `namespaces` (every namespace when empty) whose
/// labels match `labels` and whose fields match `fields`. Selectors are kept sorted and
/// without repeats, so equal selections compare equal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    pub(crate) namespaces: BTreeSet<String>,
    pub(crate) labels: Selector,
    pub(crate) fields: FieldSelector,
}

/// A question asked of a lister: the objects in `namespace` (`None`: every namespace) whose
/// labels match `labels`, or only the one named `name`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Question<'a> {
    pub(crate) namespace: Option<&'a str>,
    pub(crate) name: Option<&'a str>,
    pub(crate) labels: &'a Selector,
}

/// Why a selection does not cover a question, and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gap {
    pub(crate) reason: String,
    pub(crate) fix: String,
}

impl Selection {
    /// Whether the selection is every object (of the namespaces the factory watches).
    pub(crate) fn is_everything(&self) -> bool {
        self.namespaces.is_empty() && self.labels.selects_all() && self.fields.selects_all()
    }

    /// Why the cache cannot answer `question`, if it cannot: every object the question asks
    /// for must be one the selection holds.
    pub(crate) fn gap(&self, question: Question<'_>) -> Option<Gap> {
        self.namespace_gap(question)
            .or_else(|| self.label_gap(question))
            .or_else(|| self.field_gap(question))
    }

    /// Whether an object in `namespace` named `name` with `labels` may be one the selection
    /// holds: its namespace and labels match, and so do the field requirements on
    /// `metadata.namespace` and `metadata.name` (other fields are not known here, so they
    /// do not exclude it).
    pub(crate) fn may_hold(
        &self,
        namespace: Option<&str>,
        name: Option<&str>,
        labels: &BTreeMap<String, String>,
    ) -> bool {
        let namespace_held = self.namespaces.is_empty()
            || namespace.is_some_and(|namespace| self.namespaces.contains(namespace));
        let fields_held = self.fields.requirements().iter().all(|required| {
            let known = match required.field.as_str() {
                "metadata.namespace" => Some(namespace.unwrap_or_default()),
                "metadata.name" => name,
                _ => None,
            };
            known.is_none_or(|value| required.matches(value))
        });
        namespace_held && fields_held && self.labels.matches(labels)
    }

    /// The selection of the informer of `namespace` (`None`: every namespace the selection
    /// holds) of this selection.
    pub(crate) fn of_namespace(&self, namespace: Option<&str>) -> Self {
        let mut part = self.clone();
        if let Some(namespace) = namespace {
            part.namespaces = BTreeSet::from([namespace.to_owned()]);
        }
        part
    }

    fn namespace_gap(&self, question: Question<'_>) -> Option<Gap> {
        if self.namespaces.is_empty() {
            return None;
        }
        let held = self.namespaces_text();
        match question.namespace {
            Some(namespace) if self.namespaces.contains(namespace) => None,
            Some(namespace) => Some(Gap {
                reason: format!("namespace {namespace} is outside the cache, which holds {held} only"),
                fix: format!(
                    "ask about {held}, read namespace {namespace} from the API server, or add it to the scope"
                ),
            }),
            None => Some(Gap {
                reason: format!("the cache holds {held} only, not every namespace"),
                fix: "ask per namespace (`by_namespace`), list what the cache holds (`list_in_scope`), or scope the cache to every namespace".into(),
            }),
        }
    }

    fn label_gap(&self, question: Question<'_>) -> Option<Gap> {
        if self.labels.selects_all() {
            return None;
        }
        let held = &self.labels;
        if question.name.is_some() {
            return Some(Gap {
                reason: format!(
                    "the cache holds only objects with labels {held}, and one without them may have this name"
                ),
                fix: "read the object from the API server, or widen the scope".into(),
            });
        }
        let missing: Vec<String> = held
            .clone()
            .into_iter()
            .filter(|required| !selector_implies(question.labels, required))
            .map(|required| required.to_string())
            .collect();
        (!missing.is_empty()).then(|| Gap {
            reason: format!(
                "the cache holds only objects with labels {held}, and the selector {:?} does not require {}",
                question.labels.to_string(),
                missing.join(",")
            ),
            fix: format!(
                "add {held} to the selector, list what the cache holds (`list_in_scope`), or widen the scope"
            ),
        })
    }

    fn field_gap(&self, question: Question<'_>) -> Option<Gap> {
        let missing: Vec<String> = self
            .fields
            .requirements()
            .iter()
            .filter(|required| !question_implies(question, required))
            .map(ToString::to_string)
            .collect();
        (!missing.is_empty()).then(|| Gap {
            reason: format!(
                "the cache holds only objects with fields {}, and the question does not fix {}",
                self.fields,
                missing.join(",")
            ),
            fix: "list what the cache holds (`list_in_scope`), read from the API server, or widen the scope"
                .into(),
        })
    }

    fn namespaces_text(&self) -> String {
        let names: Vec<&str> = self.namespaces.iter().map(String::as_str).collect();
        match names.as_slice() {
            [one] => format!("namespace {one}"),
            many => format!("namespaces {}", many.join(", ")),
        }
    }
}

impl fmt::Display for Selection {
    /// `everything`, or the parts that restrict it: `namespace source, labels replicate=true`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if !self.namespaces.is_empty() {
            parts.push(self.namespaces_text());
        }
        if !self.labels.selects_all() {
            parts.push(format!("labels {}", self.labels));
        }
        if !self.fields.selects_all() {
            parts.push(format!("fields {}", self.fields));
        }
        if parts.is_empty() {
            f.write_str("everything")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// `selector` with its expressions sorted and without repeats.
pub(crate) fn canonical_labels(selector: Selector) -> Selector {
    let mut expressions: Vec<Expression> = selector.into_iter().collect();
    expressions.sort();
    expressions.dedup();
    Selector::from_iter(expressions)
}

/// Whether every object `question` asks about satisfies the field requirement `required`:
/// only `metadata.namespace` and `metadata.name` are known from a question.
fn question_implies(question: Question<'_>, required: &FieldRequirement) -> bool {
    let known = match required.field.as_str() {
        "metadata.namespace" => question.namespace,
        "metadata.name" => question.name,
        _ => None,
    };
    known.is_some_and(|value| required.matches(value))
}

/// Whether every label set matching `selector` matches `required`.
pub(crate) fn selector_implies(selector: &Selector, required: &Expression) -> bool {
    selector
        .clone()
        .into_iter()
        .any(|expression| expression_implies(&expression, required))
}

/// Whether every label set matching `given` matches `required` (a sound test: `false` may
/// also mean "not by itself").
fn expression_implies(given: &Expression, required: &Expression) -> bool {
    use Expression::{DoesNotExist, Equal, Exists, In, NotEqual, NotIn};
    if given == required {
        return true;
    }
    if key(given) != key(required) {
        return false;
    }
    match (given, required) {
        (Equal(..) | In(..), Exists(_)) => true,
        (Equal(_, value), In(_, allowed)) => allowed.contains(value),
        (In(_, values), In(_, allowed)) => values.is_subset(allowed),
        (In(_, values), Equal(_, value)) => values.len() == 1 && values.contains(value),
        (Equal(_, value), NotEqual(_, refused)) => value != refused,
        (Equal(_, value), NotIn(_, refused)) => !refused.contains(value),
        (In(_, values), NotEqual(_, refused)) => !values.contains(refused),
        (In(_, values), NotIn(_, refused)) => values.is_disjoint(refused),
        (DoesNotExist(_), NotEqual(..) | NotIn(..)) => true,
        (NotIn(_, refused_given), NotEqual(_, refused)) => refused_given.contains(refused),
        (NotIn(_, refused_given), NotIn(_, refused)) => refused.is_subset(refused_given),
        (NotEqual(_, refused_given), NotIn(_, refused)) => {
            refused.len() == 1 && refused.contains(refused_given)
        }
        _ => false,
    }
}

fn key(expression: &Expression) -> &str {
    match expression {
        Expression::In(key, _)
        | Expression::NotIn(key, _)
        | Expression::Equal(key, _)
        | Expression::NotEqual(key, _)
        | Expression::Exists(key)
        | Expression::DoesNotExist(key) => key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selector::{FieldOperator, parse_field_selector, parse_label_selector};

    fn namespace_field(namespace: &str) -> FieldRequirement {
        FieldRequirement {
            field: "metadata.namespace".into(),
            operator: FieldOperator::Equal,
            value: namespace.into(),
        }
    }

    fn labels(text: &str) -> Selector {
        canonical_labels(parse_label_selector(text).expect("valid label selector"))
    }

    fn selection(namespaces: &[&str], label_text: &str, field_text: &str) -> Selection {
        Selection {
            namespaces: namespaces.iter().map(|ns| (*ns).to_owned()).collect(),
            labels: labels(label_text),
            fields: parse_field_selector(field_text).expect("valid field selector"),
        }
    }

    fn list<'a>(namespace: Option<&'a str>, selector: &'a Selector) -> Question<'a> {
        Question {
            namespace,
            name: None,
            labels: selector,
        }
    }

    #[test]
    fn everything_covers_every_question() {
        let all = Selection::default();
        assert!(all.is_everything());
        let any = labels("app=web");
        assert_eq!(all.gap(list(None, &any)), None);
        assert_eq!(all.to_string(), "everything");
    }

    #[test]
    fn a_namespace_scope_covers_its_namespaces_only() {
        let scope = selection(&["source", "staging"], "", "");
        let none = Selector::default();
        assert_eq!(scope.gap(list(Some("source"), &none)), None);
        assert_eq!(scope.gap(list(Some("staging"), &none)), None);
        let other = scope.gap(list(Some("other"), &none)).expect("another namespace");
        assert!(
            other.reason.contains("namespace other is outside the cache"),
            "{other:?}"
        );
        assert!(other.reason.contains("namespaces source, staging"), "{other:?}");
        let everywhere = scope.gap(list(None, &none)).expect("every namespace");
        assert!(everywhere.fix.contains("by_namespace"), "{everywhere:?}");
    }

    #[test]
    fn a_label_scope_covers_lists_whose_selector_implies_it() {
        let scope = selection(&[], "replicate=true", "");
        for covered in ["replicate=true", "replicate=true,app=web", "replicate in (true)"] {
            let selector = labels(covered);
            assert_eq!(scope.gap(list(None, &selector)), None, "{covered}");
        }
        for not_covered in [
            "",
            "app=web",
            "replicate",
            "replicate in (true,false)",
            "replicate!=false",
        ] {
            let selector = labels(not_covered);
            let gap = scope.gap(list(None, &selector)).expect(not_covered);
            assert!(gap.reason.contains("replicate=true"), "{gap:?}");
            assert!(gap.fix.contains("list_in_scope"), "{gap:?}");
        }
        let get = Question {
            namespace: Some("source"),
            name: Some("settings"),
            labels: &Selector::default(),
        };
        assert!(
            scope.gap(get).is_some(),
            "a name may belong to an object without the labels"
        );
    }

    #[test]
    fn label_implication_is_sound() {
        // Every pair the test says implies is checked on label sets: no implication claimed
        // may have a counterexample among these.
        let sets: Vec<BTreeMap<String, String>> = [
            vec![],
            vec![("k", "a")],
            vec![("k", "b")],
            vec![("k", "c")],
            vec![("k", "")],
        ]
        .into_iter()
        .map(|pairs| {
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
        .collect();
        let expressions = [
            "k=a",
            "k!=a",
            "k",
            "!k",
            "k in (a,b)",
            "k in (a)",
            "k notin (a,b)",
            "k notin (a)",
            "k=b",
            "k in (b,c)",
            "k notin (c)",
            "k=",
        ];
        let mut implications = 0;
        for given in expressions {
            for required in expressions {
                let given_selector = labels(given);
                let required_expr = labels(required).into_iter().next().expect("one expression");
                if selector_implies(&given_selector, &required_expr) {
                    implications += 1;
                    for set in &sets {
                        assert!(
                            !given_selector.matches(set) || required_expr.matches(set),
                            "{given} claimed to imply {required}, but {set:?} matches only the first"
                        );
                    }
                }
            }
        }
        assert!(
            implications > expressions.len() * 2,
            "more than the identities: {implications}"
        );
        assert!(selector_implies(
            &labels("k=a"),
            &labels("k in (a,b)").into_iter().next().expect("one")
        ));
        assert!(selector_implies(
            &labels("!k"),
            &labels("k notin (a)").into_iter().next().expect("one")
        ));
    }

    #[test]
    fn field_scopes_are_covered_by_the_namespace_and_name_asked_about() {
        let scope = Selection {
            fields: FieldSelector::default()
                .and(&parse_field_selector("metadata.namespace=source").expect("valid")),
            ..Selection::default()
        };
        assert_eq!(scope.fields.requirements(), [namespace_field("source")]);
        let none = Selector::default();
        assert_eq!(scope.gap(list(Some("source"), &none)), None);
        assert!(scope.gap(list(Some("other"), &none)).is_some());
        assert!(scope.gap(list(None, &none)).is_some());

        let by_phase = selection(&[], "", "status.phase=Running");
        let gap = by_phase
            .gap(list(Some("source"), &none))
            .expect("a field a question cannot fix");
        assert!(gap.reason.contains("status.phase=Running"), "{gap:?}");

        let by_name = selection(&[], "", "metadata.name=settings");
        let get = |name| Question {
            namespace: Some("source"),
            name: Some(name),
            labels: &none,
        };
        assert_eq!(by_name.gap(get("settings")), None);
        assert!(by_name.gap(get("other")).is_some());
    }

    #[test]
    fn a_selection_may_hold_objects_in_its_namespaces_with_its_labels() {
        let scope = selection(&["source"], "replicate=true", "metadata.name!=skip");
        let replicated = BTreeMap::from([("replicate".to_owned(), "true".to_owned())]);
        assert!(scope.may_hold(Some("source"), Some("settings"), &replicated));
        assert!(
            !scope.may_hold(Some("other"), Some("settings"), &replicated),
            "another namespace"
        );
        assert!(
            !scope.may_hold(Some("source"), Some("settings"), &BTreeMap::new()),
            "no label"
        );
        assert!(
            !scope.may_hold(Some("source"), Some("skip"), &replicated),
            "a field excludes it"
        );
        let by_phase = selection(&[], "", "status.phase=Running");
        assert!(
            by_phase.may_hold(Some("any"), Some("pod"), &BTreeMap::new()),
            "an unknown field"
        );
        let both = selection(&["a", "b"], "", "");
        assert_eq!(
            both.of_namespace(Some("b")).namespaces,
            BTreeSet::from(["b".to_owned()])
        );
        assert!(
            !both
                .of_namespace(Some("b"))
                .may_hold(Some("a"), None, &BTreeMap::new())
        );
        assert_eq!(both.of_namespace(None), both);
    }

    #[test]
    fn a_selection_prints_what_restricts_it() {
        assert_eq!(
            selection(&["source"], "replicate=true", "metadata.name!=skip").to_string(),
            "namespace source, labels replicate=true, fields metadata.name!=skip"
        );
    }
}
