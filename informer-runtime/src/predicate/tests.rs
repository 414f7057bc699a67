//! Ports of controller-runtime's `pkg/predicate/predicate_test.go` (each names its Go case)
//! and the cases this module adds.

use k8s_openapi::api::core::v1::Pod;
use kube::api::ObjectMeta;

use super::*;

fn pod() -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("baz".into()),
            namespace: Some("biz".into()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    }
}

fn with(change: impl FnOnce(&mut ObjectMeta)) -> Pod {
    let mut pod = pod();
    change(&mut pod.metadata);
    pod
}

fn labelled(pairs: &[(&str, &str)]) -> Pod {
    with(|meta| {
        meta.labels = Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
    })
}

/// The verdicts of `predicate` on a create, an update from `old` to `new`, a delete and a
/// generic event of `new`.
fn verdicts(predicate: &Predicate<Pod>, old: &Pod, new: &Pod) -> [bool; 4] {
    [
        predicate.evaluate(&Event::Create {
            object: new,
            is_in_initial_list: false,
        }),
        predicate.evaluate(&Event::Update { old, new }),
        predicate.evaluate(&Event::Delete {
            object: new,
            final_state_unknown: false,
        }),
        predicate.evaluate(&Event::Generic { object: new }),
    ]
}

// "Funcs": "should call Create", "should call Update", "should call Delete", "should call
// Generic": a closure sees each kind of event with its objects.
#[test]
fn a_closure_sees_each_kind_of_event_with_its_objects() {
    let (old, new) = (pod(), with(|meta| meta.name = Some("baz2".into())));
    let only_updates_to_baz2 = Predicate::new("updates to baz2", |event: &Event<'_, Pod>| match event {
        Event::Update { old, new } => {
            old.metadata.name.as_deref() == Some("baz") && new.metadata.name.as_deref() == Some("baz2")
        }
        _ => false,
    });
    assert_eq!(
        verdicts(&only_updates_to_baz2, &old, &new),
        [false, true, false, false]
    );
    let kinds = Predicate::new("kinds", |event: &Event<'_, Pod>| {
        event.object().metadata.name.as_deref() == Some("baz2") && event.kind() != "delete"
    });
    assert_eq!(verdicts(&kinds, &old, &new), [true, true, false, true]);
}

// "When checking a ResourceVersionChangedPredicate": "Where the ResourceVersion hasn't
// changed" should return false; "Where the ResourceVersion has changed" should return true;
// creates, deletes and generic events pass.
#[test]
fn resource_version_changed_passes_updates_with_a_new_resource_version() {
    let predicate = Predicate::resource_version_changed();
    let v1 = with(|meta| meta.resource_version = Some("v1".into()));
    let v2 = with(|meta| meta.resource_version = Some("v2".into()));
    assert_eq!(verdicts(&predicate, &v1, &v1), [true, false, true, true]);
    assert_eq!(verdicts(&predicate, &v2, &v1), [true, true, true, true]);
}

// "When checking a GenerationChangedPredicate": "Where the Generation hasn't changed" should
// return false; "Where the Generation has changed" should return true; creates, deletes and
// generic events pass.
#[test]
fn generation_changed_passes_updates_with_a_new_generation() {
    let predicate = Predicate::generation_changed();
    let one = with(|meta| {
        meta.generation = Some(1);
        meta.resource_version = Some("1".into());
    });
    let status_write = with(|meta| {
        meta.generation = Some(1);
        meta.resource_version = Some("2".into());
    });
    let spec_write = with(|meta| {
        meta.generation = Some(2);
        meta.resource_version = Some("3".into());
    });
    assert_eq!(
        verdicts(&predicate, &one, &status_write),
        [true, false, true, true]
    );
    assert_eq!(
        verdicts(&predicate, &status_write, &spec_write),
        [true, true, true, true]
    );
}

#[test]
fn generation_changed_passes_the_start_of_a_deletion() {
    let predicate = Predicate::generation_changed();
    let live = with(|meta| meta.generation = Some(1));
    let deleting = with(|meta| {
        meta.generation = Some(1);
        meta.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ));
    });
    assert!(predicate.evaluate(&Event::Update {
        old: &live,
        new: &deleting
    }));
    assert!(!predicate.evaluate(&Event::Update {
        old: &deleting,
        new: &deleting
    }));
}

// "With a boolean predicate": "When checking an And predicate" should return false when one
// of its predicates returns false, and true when all of its predicates return true.
#[test]
fn and_passes_only_what_both_pass() {
    let (pass, fail) = (
        Predicate::new("pass", |_| true),
        Predicate::new("fail", |_| false),
    );
    let pod = pod();
    assert_eq!(verdicts(&pass.clone().and(fail.clone()), &pod, &pod), [false; 4]);
    assert_eq!(verdicts(&pass.clone().and(pass), &pod, &pod), [true; 4]);
    assert_eq!(verdicts(&Predicate::all([]), &pod, &pod), [true; 4]);
    assert_eq!(verdicts(&Predicate::all([fail]), &pod, &pod), [false; 4]);
}

// "With a boolean predicate": "When checking an Or predicate" should return true when one of
// its predicates returns true, and false when all of its predicates return false.
#[test]
fn or_passes_what_either_passes() {
    let (pass, fail) = (
        Predicate::new("pass", |_| true),
        Predicate::new("fail", |_| false),
    );
    let pod = pod();
    assert_eq!(verdicts(&pass.clone().or(fail.clone()), &pod, &pod), [true; 4]);
    assert_eq!(verdicts(&fail.clone().or(fail.clone()), &pod, &pod), [false; 4]);
    assert_eq!(verdicts(&Predicate::any([]), &pod, &pod), [false; 4]);
    assert_eq!(verdicts(&Predicate::any([fail, pass]), &pod, &pod), [true; 4]);
}

// "When checking a Not predicate": it inverts its predicate.
#[test]
fn not_inverts() {
    let pod = pod();
    assert_eq!(
        verdicts(&!Predicate::new("pass", |_| true), &pod, &pod),
        [false; 4]
    );
    let spec_changes = Predicate::generation_changed();
    let v1 = with(|meta| meta.generation = Some(1));
    assert_eq!(verdicts(&!spec_changes, &v1, &v1), [false, true, false, false]);
}

// "NewPredicateFuncs with a namespace filter function": "Where the namespace is matching"
// should return true, "Where the namespace is not matching" should return false (an update
// is judged by its new object).
#[test]
fn an_object_filter_judges_every_event_by_its_object() {
    let in_biz = Predicate::from_object_fn("in biz", |pod: &Pod| {
        pod.metadata.namespace.as_deref() == Some("biz")
    });
    let (old, new) = (pod(), pod());
    assert_eq!(verdicts(&in_biz, &old, &new), [true; 4]);
    let moved = with(|meta| meta.namespace = Some("bizz".into()));
    assert_eq!(verdicts(&in_biz, &old, &moved), [false; 4]);
}

// "When checking a LabelSelectorPredicate": "When the Selector does not match the event
// labels" should return false; "When the Selector matches the event labels" should return
// true.
#[test]
fn a_label_selector_passes_objects_whose_labels_match() -> Result<(), Box<dyn std::error::Error>> {
    let predicate = Predicate::labels("foo=bar")?;
    let (matching, other) = (labelled(&[("foo", "bar")]), labelled(&[("foo", "baz")]));
    assert_eq!(verdicts(&predicate, &other, &matching), [true; 4]);
    assert_eq!(
        verdicts(&predicate, &matching, &other),
        [false; 4],
        "the new labels decide"
    );
    assert_eq!(verdicts(&predicate, &pod(), &pod()), [false; 4], "no labels");
    assert!(predicate.matches(&matching));
    assert!(!predicate.matches(&other));

    let from_kube = Predicate::label_selector(Selector::from_iter([kube::core::Expression::In(
        "tier".into(),
        ["fe".to_owned(), "be".to_owned()].into(),
    )]));
    assert!(from_kube.matches(&labelled(&[("tier", "be")])));
    assert!(!from_kube.matches(&labelled(&[("tier", "db")])));
    Ok(())
}

#[test]
fn a_label_selector_that_does_not_parse_is_a_clear_error() {
    let error = Predicate::<Pod>::labels("foo in (bar")
        .err()
        .map(|e| e.to_string());
    let error = error.unwrap_or_default();
    assert!(
        error.starts_with("failed to parse label selector \"foo in (bar\""),
        "{error}"
    );
}

// "When checking a LabelChangedPredicate": "Where the labels are empty" / "Where the labels
// haven't changed" should return false; "Where a label value has changed", "Where a label has
// been added" and "Where a label has been removed" should return true.
#[test]
fn labels_changed_passes_updates_with_other_labels() {
    let predicate = Predicate::labels_changed();
    let none = pod();
    let empty = labelled(&[]);
    let one = labelled(&[("foo", "bar")]);
    let changed = labelled(&[("foo", "bar2")]);
    let two = labelled(&[("foo", "bar"), ("faa", "bor")]);
    assert_eq!(verdicts(&predicate, &none, &none), [true, false, true, true]);
    assert!(
        !predicate.evaluate(&Event::Update {
            old: &none,
            new: &empty
        }),
        "absent and empty are equal"
    );
    assert!(!predicate.evaluate(&Event::Update { old: &one, new: &one }));
    assert!(predicate.evaluate(&Event::Update {
        old: &one,
        new: &changed
    }));
    assert!(predicate.evaluate(&Event::Update { old: &one, new: &two }));
    assert!(predicate.evaluate(&Event::Update { old: &two, new: &one }));
}

// "When checking an AnnotationChangedPredicate": the same cases on annotations.
#[test]
fn annotations_changed_passes_updates_with_other_annotations() {
    let predicate = Predicate::annotations_changed();
    let annotated = |pairs: &[(&str, &str)]| {
        with(|meta| {
            meta.annotations = Some(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            );
        })
    };
    let (none, empty) = (pod(), annotated(&[]));
    let (one, changed) = (annotated(&[("booz", "wooz")]), annotated(&[("booz", "weez")]));
    let two = annotated(&[("booz", "wooz"), ("zooz", "qooz")]);
    assert_eq!(verdicts(&predicate, &none, &none), [true, false, true, true]);
    assert!(!predicate.evaluate(&Event::Update {
        old: &empty,
        new: &none
    }));
    assert!(!predicate.evaluate(&Event::Update { old: &one, new: &one }));
    assert!(predicate.evaluate(&Event::Update {
        old: &one,
        new: &changed
    }));
    assert!(predicate.evaluate(&Event::Update { old: &one, new: &two }));
    assert!(predicate.evaluate(&Event::Update { old: &two, new: &one }));
    let labels_only = labelled(&[("a", "b")]);
    assert!(!predicate.evaluate(&Event::Update {
        old: &none,
        new: &labels_only
    }));
}

#[test]
fn the_initial_list_arrives_as_creates_that_the_change_predicates_pass() {
    let pod = pod();
    let listed = Event::Create {
        object: &pod,
        is_in_initial_list: true,
    };
    for predicate in [
        Predicate::generation_changed(),
        Predicate::labels_changed(),
        Predicate::annotations_changed(),
        Predicate::resource_version_changed(),
    ] {
        assert!(predicate.evaluate(&listed), "{}", predicate.name());
        assert!(predicate.matches(&pod), "{}", predicate.name());
    }
    let live_only = Predicate::new("live only", |event: &Event<'_, Pod>| {
        !matches!(
            event,
            Event::Create {
                is_in_initial_list: true,
                ..
            }
        )
    });
    assert!(!live_only.evaluate(&listed));
}

#[test]
fn a_panicking_predicate_is_counted_and_the_event_passes() {
    let panicking = Predicate::new("buggy", |event: &Event<'_, Pod>| {
        assert!(!event.is_generic(), "no generic events here");
        false
    });
    let combined = Predicate::generation_changed().and(panicking.clone());
    let pod = pod();
    assert!(
        !panicking.evaluate(&Event::Update { old: &pod, new: &pod }),
        "no panic: rejected"
    );
    assert!(
        panicking.evaluate(&Event::Generic { object: &pod }),
        "panicked: passes"
    );
    assert_eq!(panicking.panics(), 1);
    assert!(combined.evaluate(&Event::Generic { object: &pod }));
    assert_eq!(
        combined.panics(),
        1,
        "counted by the predicate that was evaluated"
    );
    assert_eq!(panicking.panics(), 1);
    let clone = combined.clone();
    assert!(clone.matches(&pod));
    assert_eq!(combined.panics(), 2, "clones share the count");
}

#[test]
fn names_describe_combinations() {
    let name = Predicate::<Pod>::generation_changed()
        .or(!Predicate::labels_changed())
        .name()
        .to_owned();
    assert_eq!(name, "(generation changed or not labels changed)");
    let selector = Predicate::<Pod>::labels("app=web").map(|p| p.name().to_owned());
    assert_eq!(selector.ok().as_deref(), Some("labels match app=web"));
}
