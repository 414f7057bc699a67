//! What a reconcile's writes leave for the next reconcile of the same object: the type,
//! resource version, namespace, name and labels of each object the API server answered a
//! write with.

use std::{
    collections::BTreeMap,
    sync::{Mutex, PoisonError},
};

use serde::Deserialize;

use crate::key::ObjectKey;

/// An object as a write's answer returned it: its type and the resource version it was
/// written at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrittenObject {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) resource_version: String,
    /// Where it is and its labels as written, to tell which scoped caches may hold it.
    pub(crate) place: Place,
}

/// An object's namespace, name and labels, as a write's answer returned them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) labels: BTreeMap<String, String>,
}

/// The fields of an answer the log reads; the rest is skipped.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    api_version: Option<String>,
    kind: Option<String>,
    metadata: Option<AnswerMetadata>,
    items: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnswerMetadata {
    resource_version: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    labels: Option<BTreeMap<String, String>>,
}

impl WrittenObject {
    /// The object in a write's answer, if the answer is one object with a type and a resource
    /// version: not a `Status` (what a delete may answer), not a list (what a delete of a
    /// collection answers), not something other than JSON.
    pub(crate) fn from_body(body: &[u8]) -> Option<Self> {
        let answer: Answer = serde_json::from_slice(body).ok()?;
        if answer.items.is_some() {
            return None;
        }
        let api_version = answer.api_version.filter(|v| !v.is_empty())?;
        let kind = answer.kind.filter(|k| !k.is_empty() && k != "Status")?;
        let metadata = answer.metadata?;
        let resource_version = metadata.resource_version.filter(|rv| !rv.is_empty())?;
        Some(Self {
            api_version,
            kind,
            resource_version,
            place: Place {
                namespace: metadata.namespace,
                name: metadata.name,
                labels: metadata.labels.unwrap_or_default(),
            },
        })
    }

    /// The object's API group (`apps` for `apps/v1`, `""` for the core group's `v1`).
    pub(crate) fn group(&self) -> &str {
        self.api_version.split_once('/').map_or("", |(group, _)| group)
    }
}

/// The writes one reconcile made, in the order their answers came.
#[derive(Debug)]
pub(crate) struct WriteLog {
    key: ObjectKey,
    writes: Mutex<Vec<WrittenObject>>,
}

impl WriteLog {
    /// An empty log for a reconcile of `key`.
    pub(crate) fn new(key: ObjectKey) -> Self {
        Self {
            key,
            writes: Mutex::new(Vec::new()),
        }
    }

    /// The object the reconcile is for.
    pub(crate) fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// Adds a write.
    pub(crate) fn record(&self, written: WrittenObject) {
        self.writes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(written);
    }

    /// The writes so far, leaving the log empty.
    pub(crate) fn take(&self) -> Vec<WrittenObject> {
        std::mem::take(&mut *self.writes.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(body: &str) -> Option<WrittenObject> {
        WrittenObject::from_body(body.as_bytes())
    }

    #[test]
    fn an_object_gives_its_type_and_resource_version() {
        let object = written(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod","resourceVersion":"42","labels":{"a":"b"}},"spec":{"replicas":3}}"#,
        )
        .expect("an object");
        assert_eq!(
            object,
            WrittenObject {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                resource_version: "42".into(),
                place: Place {
                    namespace: Some("prod".into()),
                    name: Some("web".into()),
                    labels: BTreeMap::from([("a".to_owned(), "b".to_owned())]),
                },
            }
        );
        assert_eq!(object.group(), "apps");
    }

    #[test]
    fn the_core_group_is_empty() {
        let object = written(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"7"}}"#)
            .expect("an object");
        assert_eq!(object.group(), "");
    }

    #[test]
    fn a_status_answer_is_no_object() {
        // What a delete answers when the object is gone at once.
        assert_eq!(
            written(
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"web","kind":"configmaps","uid":"u"}}"#
            ),
            None
        );
        assert_eq!(
            written(r#"{"kind":"Status","apiVersion":"v1","metadata":{"resourceVersion":"9"}}"#),
            None
        );
    }

    #[test]
    fn a_list_is_no_object() {
        // What a delete of a collection answers.
        assert_eq!(
            written(
                r#"{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"12"},"items":[]}"#
            ),
            None
        );
    }

    #[test]
    fn an_answer_without_type_or_resource_version_is_no_object() {
        assert_eq!(
            written(r#"{"kind":"ConfigMap","metadata":{"resourceVersion":"7"}}"#),
            None
        );
        assert_eq!(
            written(r#"{"apiVersion":"v1","metadata":{"resourceVersion":"7"}}"#),
            None
        );
        assert_eq!(
            written(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}"#),
            None
        );
        assert_eq!(
            written(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":""}}"#),
            None
        );
        assert_eq!(written(r#"{"apiVersion":"v1","kind":"ConfigMap"}"#), None);
    }

    #[test]
    fn a_body_that_is_not_a_json_object_is_no_object() {
        assert_eq!(written(""), None);
        assert_eq!(written("k8s\0protobuf"), None);
        assert_eq!(written("[1,2]"), None);
        assert_eq!(written(r#""text""#), None);
        assert_eq!(
            written(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":7}}"#),
            None
        );
    }

    #[test]
    fn the_log_hands_its_writes_over_once() {
        let log = WriteLog::new(ObjectKey::new("prod", "web"));
        let object = WrittenObject {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            resource_version: "3".into(),
            place: Place::default(),
        };
        log.record(object.clone());
        assert_eq!(log.key(), &ObjectKey::new("prod", "web"));
        assert_eq!(log.take(), vec![object]);
        assert!(log.take().is_empty());
    }
}
