//! How a lister-watcher reads JSON: lists decoded field by field (`ObjectList`'s own
//! `Deserialize` flattens its type fields, which makes serde buffer the whole list first), and
//! the fields [`FieldPath`]s name passed over in lists and watch events.

use std::sync::Arc;

use kube::core::ObjectList;
use serde::de::DeserializeOwned;

use crate::source::{
    FieldPath,
    exact_json::{self, DecodeError},
    list_fields::ListFields,
    skip::Skip,
};

/// The JSON decoding of one lister-watcher's objects.
#[derive(Debug, Clone, Default)]
pub(crate) struct JsonObjects {
    /// What is skipped in a list.
    list: Option<Arc<Skip>>,
    /// What is skipped in a watch event.
    watch: Option<Arc<Skip>>,
}

impl JsonObjects {
    /// Skips `paths` in every object.
    pub(crate) fn new(paths: &[FieldPath]) -> Self {
        let Some(object) = Skip::of_objects(paths) else {
            return Self::default();
        };
        Self {
            list: Some(Arc::new(object.clone().in_list())),
            watch: Some(Arc::new(object.in_watch_event())),
        }
    }

    /// What a watch body skips in each event.
    pub(crate) fn watch_skip(&self) -> Option<Arc<Skip>> {
        self.watch.clone()
    }

    /// The list a response body holds.
    pub(crate) fn list<K: DeserializeOwned + Clone>(
        &self,
        body: &[u8],
    ) -> Result<ObjectList<K>, DecodeError> {
        let list: ListFields<K> = exact_json::decode_slice_skipping(body, self.list.as_deref())?;
        Ok(list.into_object_list())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    use super::*;

    fn pod(name: &str) -> serde_json::Value {
        json!({
            "metadata": {
                "name": name, "namespace": "shop",
                "annotations": {"team": "a", "kubectl.kubernetes.io/last-applied-configuration": "{\"x\": [1, 2]}"},
                "managedFields": [{"manager": "m", "operation": "Apply", "fieldsV1": {"f:spec": {"f:x": {}}},
                                   "other": [[1], [2, 3]]}],
                "finalizers": ["a", "b"],
            },
            "spec": {"containers": [{"name": "c", "args": ["x", "y", "z"]}]},
        })
    }

    fn trimmed(name: &str) -> Pod {
        let mut pod: Pod = serde_json::from_value(self::pod(name)).expect("a pod");
        pod.metadata.managed_fields = None;
        pod.metadata
            .annotations
            .as_mut()
            .map(|a| a.remove(crate::source::LAST_APPLIED_ANNOTATION));
        pod
    }

    #[test]
    fn lists_decode_as_object_lists_do_with_vectors_at_their_length() {
        let text = json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "5"},
                          "items": [pod("a"), pod("b")]})
        .to_string();
        let ours: ObjectList<Pod> = JsonObjects::new(&[]).list(text.as_bytes()).expect("decoded");
        let kube: ObjectList<Pod> = serde_json::from_str(&text).expect("decoded");
        assert_eq!(
            (&ours.types, &ours.metadata, &ours.items),
            (&kube.types, &kube.metadata, &kube.items)
        );
        assert_eq!(ours.items.capacity(), 2);
        let finalizers = ours.items[0].metadata.finalizers.as_ref().expect("finalizers");
        assert_eq!(finalizers.capacity(), 2);
        let bare = JsonObjects::new(&[])
            .list::<Pod>(br#"{"items": null}"#)
            .expect("decoded");
        assert_eq!((bare.types.kind.as_str(), bare.items.len()), ("List", 0));
    }

    #[test]
    fn skipped_fields_are_left_out_of_lists_and_watch_events() {
        let skip = JsonObjects::new(&[
            FieldPath::managed_fields(),
            FieldPath::last_applied_configuration(),
        ]);
        let text = json!({"kind": "PodList", "apiVersion": "v1", "items": [pod("a"), pod("b")]}).to_string();
        let list: ObjectList<Pod> = skip.list(text.as_bytes()).expect("decoded");
        assert_eq!(list.items, [trimmed("a"), trimmed("b")]);
        // the arrays after the skipped ones still get their exact lengths
        let args = list.items[1].spec.as_ref().expect("spec").containers[0]
            .args
            .as_ref()
            .expect("args");
        assert_eq!((args.len(), args.capacity()), (3, 3));

        let line = json!({"type": "MODIFIED", "object": pod("a")}).to_string();
        let watch = skip.watch_skip();
        let event: kube::core::WatchEvent<Pod> =
            exact_json::decode_slice_skipping(line.as_bytes(), watch.as_deref()).expect("decoded");
        assert!(matches!(event, kube::core::WatchEvent::Modified(pod) if pod == trimmed("a")));
    }
}
