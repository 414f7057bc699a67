//! How a lister-watcher turns protobuf documents into `K`: by the decoder `k8s-protobuf`
//! generated for `K` when `K` is a built-in type, by the generated decoder of `ObjectMeta` for
//! a metadata-only object, and otherwise (a built-in kind of an API group left out of the
//! build) by the serde decoder of [`crate::protobuf`] into JSON, which `K`'s JSON decoder then
//! reads: the lister-watcher of `K` compiles one decoder of `K`, its JSON one, whatever the
//! encoding (the serde protobuf decoder is compiled once, for `serde_json::Value`).

use std::{any::Any, sync::Arc};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};
use k8s_protobuf::{Context, Decode, Envelope, KindDecoder, Reader, SkipFields};
use kube::{
    Resource,
    core::{ObjectList, TypeMeta},
};
use serde::de::DeserializeOwned;

use crate::{
    protobuf,
    source::{FieldPath, exact_json, json_objects::JsonObjects},
};

/// The field numbers of a list message (every built-in `XxxList`, and
/// `PartialObjectMetadataList`): `metadata = 1`, `items = 2`.
const LIST_METADATA: u32 = 1;
const LIST_ITEMS: u32 = 2;
/// `PartialObjectMetadata.metadata`.
const PARTIAL_METADATA: u32 = 1;

/// The decoder of one lister-watcher's objects.
pub(crate) struct ProtobufObjects<K> {
    how: How<K>,
    skip: Arc<SkipFields>,
}

enum How<K> {
    /// A k8s-openapi type: its generated decoder.
    Generated(&'static KindDecoder),
    /// A metadata-only object (`PartialObjectMeta<_>`): this empty object, typed
    /// `meta.k8s.io/v1 PartialObjectMetadata`, with the decoded metadata put in. List items get
    /// the type too, as kube-apiserver's JSON gives it to them (protobuf sends none).
    Metadata(K),
    /// Anything else: the serde decoder over the table into JSON, then `K`'s JSON decoder.
    Serde,
}

impl<K> ProtobufObjects<K>
where
    K: Resource + Clone + DeserializeOwned + 'static,
{
    /// The decoder of `K`, skipping the fields of `skip` where the generated decoders read. A
    /// path that names no field of `K`'s message skips nothing in it (a factory's paths apply
    /// to every type it holds), with a warning that names the path and the type.
    pub(crate) fn new(skip: &[FieldPath]) -> Self {
        let how = if let Some(decoder) = k8s_protobuf::kind_decoder::<K>() {
            How::Generated(decoder)
        } else if K::metadata_api() {
            let typed = br#"{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata"}"#;
            exact_json::decode_slice_skipping::<K>(typed, None).map_or(How::Serde, How::Metadata)
        } else {
            How::Serde
        };
        let (skip, unresolved) = match &how {
            How::Generated(decoder) => skip_fields(skip, decoder.api_version(), decoder.kind()),
            How::Metadata(_) => skip_fields(skip, "meta.k8s.io/v1", "PartialObjectMetadata"),
            How::Serde => (SkipFields::new(), Vec::new()),
        };
        for reason in unresolved {
            tracing::warn!(%reason, "a skipped field is not one of this type's: nothing is skipped for it");
        }
        Self {
            how,
            skip: Arc::new(skip),
        }
    }

    /// Whether the generated decoders read these objects (else the serde decoder does).
    #[cfg(test)]
    pub(crate) fn is_generated(&self) -> bool {
        !matches!(self.how, How::Serde)
    }

    /// The object of a protobuf document (a watch event's object).
    pub(crate) fn object(&self, document: &[u8]) -> Result<K, protobuf::Error> {
        match &self.how {
            How::Serde => exact_json::decode_slice_skipping(&as_json(document)?, None).map_err(into_type),
            How::Generated(decoder) => {
                let envelope = Envelope::parse(document)?;
                expect_kind(&envelope, decoder.api_version(), decoder.kind())?;
                let mut object = None;
                decoder.decode(envelope.raw, self.context(), &mut object)?;
                object.ok_or_else(|| mismatch::<K>(decoder))
            }
            How::Metadata(object) => {
                let envelope = Envelope::parse(document)?;
                expect_kind(&envelope, "meta.k8s.io/v1", "PartialObjectMetadata")?;
                let mut object = object.clone();
                *object.meta_mut() = self.metadata(envelope.raw)?;
                Ok(object)
            }
        }
    }

    /// The objects of a protobuf list document.
    pub(crate) fn list(&self, document: &[u8]) -> Result<ObjectList<K>, protobuf::Error> {
        let envelope = Envelope::parse(document)?;
        let (metadata, items) = match &self.how {
            How::Serde => {
                let list = JsonObjects::default()
                    .list(&as_json(document)?)
                    .map_err(into_type)?;
                (list.metadata, list.items)
            }
            How::Generated(decoder) => {
                expect_kind(
                    &envelope,
                    decoder.api_version(),
                    &format!("{}List", decoder.kind()),
                )?;
                self.list_items(envelope.raw, |message, cx, items: &mut Vec<K>| {
                    if decoder.push(message, cx, items)? {
                        Ok(())
                    } else {
                        Err(mismatch::<K>(decoder))
                    }
                })?
            }
            How::Metadata(item) => {
                expect_kind(&envelope, "meta.k8s.io/v1", "PartialObjectMetadataList")?;
                self.list_items(envelope.raw, |message, _, items: &mut Vec<K>| {
                    let mut object = item.clone();
                    *object.meta_mut() = self.metadata(message)?;
                    items.push(object);
                    Ok(())
                })?
            }
        };
        Ok(ObjectList {
            types: TypeMeta {
                api_version: envelope.api_version.to_owned(),
                kind: envelope.kind.to_owned(),
            },
            metadata,
            items,
        })
    }

    fn context(&self) -> Context<'_> {
        Context::skipping(&self.skip)
    }

    /// The metadata of a `PartialObjectMetadata` message.
    fn metadata(&self, message: &[u8]) -> Result<ObjectMeta, protobuf::Error> {
        let mut metadata = ObjectMeta::default();
        let cx = self.context();
        let mut reader = Reader::new(message);
        while let Some(key) = reader.key()? {
            if key.tag() == PARTIAL_METADATA && !cx.skips(PARTIAL_METADATA) {
                key.expect(k8s_protobuf::LEN)?;
                metadata.merge(reader.len_delimited()?, cx.enter(PARTIAL_METADATA))?;
            } else {
                reader.skip(key)?;
            }
        }
        Ok(metadata)
    }

    /// The metadata and items of a list message, each item read onto the items by `push`; the
    /// items are allocated at their count, which Go writes in one run.
    fn list_items(
        &self,
        message: &[u8],
        push: impl Fn(&[u8], Context<'_>, &mut Vec<K>) -> Result<(), protobuf::Error>,
    ) -> Result<(ListMeta, Vec<K>), protobuf::Error> {
        let mut metadata = ListMeta::default();
        let mut items = Vec::new();
        let cx = Context::new();
        let mut reader = Reader::new(message);
        while let Some(key) = reader.key()? {
            match key.tag() {
                LIST_METADATA => {
                    key.expect(k8s_protobuf::LEN)?;
                    metadata.merge(reader.len_delimited()?, cx.enter(LIST_METADATA))?;
                }
                LIST_ITEMS => {
                    key.expect(k8s_protobuf::LEN)?;
                    if items.len() == items.capacity() {
                        items.reserve_exact(reader.run_length(key));
                    }
                    push(reader.len_delimited()?, self.context(), &mut items)?;
                }
                _ => reader.skip(key)?,
            }
        }
        Ok((metadata, items))
    }
}

/// The field numbers of `paths` in the message of `api_version` `kind`.
/// The field numbers of `paths` in the message of `api_version` `kind`, and why each path that
/// names no field of it does not.
fn skip_fields(paths: &[FieldPath], api_version: &str, kind: &str) -> (SkipFields, Vec<String>) {
    let mut skip = SkipFields::new();
    let mut unresolved = Vec::new();
    for path in paths {
        let (numbers, is_map) = match protobuf::field_numbers(api_version, kind, path.fields()) {
            Ok(found) => found,
            Err(err) => {
                unresolved.push(format!("{path}: {err}"));
                continue;
            }
        };
        skip = match path.key() {
            Some(key) if is_map => skip.map_entries(&numbers, [key]),
            Some(key) => {
                unresolved.push(format!(
                    "{path}: {api_version} {kind}: {} is not a map, so it has no entry [{key}]",
                    path.fields().join(".")
                ));
                skip
            }
            None => skip.field(&numbers),
        };
    }
    (skip, unresolved)
}

/// An error unless the document holds `api_version` `kind`.
fn expect_kind(envelope: &Envelope<'_>, api_version: &str, kind: &str) -> Result<(), protobuf::Error> {
    if envelope.api_version == api_version && envelope.kind == kind {
        return Ok(());
    }
    Err(protobuf::Error::Type(format!(
        "the document holds {} {}, where {api_version} {kind} was asked for",
        envelope.api_version, envelope.kind
    )))
}

fn mismatch<K: Any>(decoder: &KindDecoder) -> protobuf::Error {
    protobuf::Error::Type(format!(
        "the decoder of {} {} does not fill {}",
        decoder.api_version(),
        decoder.kind(),
        std::any::type_name::<K>()
    ))
}

/// The JSON of a protobuf document (an object or a list), read by the serde decoder over the
/// table: what `K`'s JSON decoder reads where no generated decoder does.
fn as_json(document: &[u8]) -> Result<Vec<u8>, protobuf::Error> {
    let value: serde_json::Value = protobuf::from_slice(document)?;
    serde_json::to_vec(&value).map_err(|err| protobuf::Error::Type(err.to_string()))
}

/// A JSON decode of what a protobuf document held: it is not the type asked for.
fn into_type(err: exact_json::DecodeError) -> protobuf::Error {
    protobuf::Error::Type(err.to_string())
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use kube::core::PartialObjectMeta;
    use serde_json::{Value, json};

    use super::*;

    fn pod() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": "web", "namespace": "shop", "resourceVersion": "7",
                "annotations": {"team": "a", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
                "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
                                   "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}],
            },
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]},
        })
    }

    fn metadata_of(object: &Value) -> Value {
        json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": object["metadata"]})
    }

    fn list_of(api_version: &str, kind: &str, items: Vec<Value>) -> Value {
        json!({"apiVersion": api_version, "kind": kind, "metadata": {"resourceVersion": "9", "continue": "c"}, "items": items})
    }

    #[test]
    fn built_in_types_and_metadata_are_read_by_generated_decoders_as_serde_reads_them() {
        let document = protobuf::to_vec(&pod()).expect("encoded");
        let objects = ProtobufObjects::<Pod>::new(&[]);
        assert!(objects.is_generated());
        let pod: Pod = objects.object(&document).expect("decoded");
        assert_eq!(
            pod,
            protobuf::from_slice::<Pod>(&document).expect("decoded by serde")
        );
        assert_eq!(pod.metadata.managed_fields.as_ref().map(Vec::len), Some(1));

        let list =
            protobuf::to_vec(&list_of("v1", "PodList", vec![self::pod(), self::pod()])).expect("encoded");
        let decoded = objects.list(&list).expect("decoded");
        assert_eq!(decoded.items, [pod.clone(), pod]);
        assert_eq!(decoded.items.capacity(), 2);
        assert_eq!(decoded.metadata.resource_version.as_deref(), Some("9"));
        assert_eq!(
            (decoded.types.api_version.as_str(), decoded.types.kind.as_str()),
            ("v1", "PodList")
        );

        let metadata = ProtobufObjects::<PartialObjectMeta<Pod>>::new(&[]);
        assert!(metadata.is_generated());
        let document = protobuf::to_vec(&metadata_of(&self::pod())).expect("encoded");
        let object = metadata.object(&document).expect("decoded");
        let by_serde: PartialObjectMeta<Pod> = protobuf::from_slice(&document).expect("decoded by serde");
        assert_eq!(
            (&object.types, &object.metadata),
            (&by_serde.types, &by_serde.metadata)
        );
        let list = list_of(
            "meta.k8s.io/v1",
            "PartialObjectMetadataList",
            vec![metadata_of(&self::pod())],
        );
        let list = protobuf::to_vec(&list).expect("encoded");
        let decoded = metadata.list(&list).expect("decoded");
        let by_serde = ProtobufObjects::<PartialObjectMeta<Pod>> {
            how: How::Serde,
            skip: Arc::default(),
        }
        .list(&list)
        .expect("decoded by serde");
        assert_eq!(decoded.items.len(), 1);
        assert_eq!(decoded.items[0].metadata, by_serde.items[0].metadata);
        // items are typed as kube-apiserver's JSON types them (protobuf items carry no type)
        assert_eq!(
            decoded.items[0]
                .types
                .as_ref()
                .map(|t| (t.api_version.as_str(), t.kind.as_str())),
            Some(("meta.k8s.io/v1", "PartialObjectMetadata"))
        );
    }

    #[test]
    fn a_type_without_a_generated_decoder_is_read_through_its_json_decoder_as_the_generated_one_reads_it() {
        let generated = ProtobufObjects::<Pod>::new(&[]);
        let through_json = ProtobufObjects::<Pod> {
            how: How::Serde,
            skip: Arc::default(),
        };
        let document = protobuf::to_vec(&pod()).expect("encoded");
        let pod = through_json.object(&document).expect("decoded");
        assert_eq!(pod, generated.object(&document).expect("decoded"));
        assert_eq!(pod.metadata.managed_fields.as_ref().map(Vec::len), Some(1));

        let list =
            protobuf::to_vec(&list_of("v1", "PodList", vec![self::pod(), self::pod()])).expect("encoded");
        let decoded = through_json.list(&list).expect("decoded");
        assert_eq!(decoded.items, [pod.clone(), pod]);
        assert_eq!(decoded.items.capacity(), 2);
        assert_eq!(decoded.metadata.resource_version.as_deref(), Some("9"));
        assert_eq!(decoded.types.kind, "PodList");

        let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        let err = through_json
            .object(&protobuf::to_vec(&config_map).expect("encoded"))
            .expect_err("a config map is no pod");
        assert!(matches!(err, protobuf::Error::Type(_)), "{err:?}");
    }

    #[test]
    fn skipped_fields_are_left_out_of_objects_and_metadata() {
        let skip = [
            FieldPath::managed_fields(),
            FieldPath::last_applied_configuration(),
        ];
        let mut expected: Pod = serde_json::from_value(pod()).expect("a pod");
        expected.metadata.managed_fields = None;
        expected
            .metadata
            .annotations
            .as_mut()
            .map(|a| a.remove(crate::source::LAST_APPLIED_ANNOTATION));
        let objects = ProtobufObjects::<Pod>::new(&skip);
        let document = protobuf::to_vec(&pod()).expect("encoded");
        assert_eq!(objects.object(&document).expect("decoded"), expected);

        let metadata = ProtobufObjects::<PartialObjectMeta<Pod>>::new(&skip);
        let document = protobuf::to_vec(&metadata_of(&pod())).expect("encoded");
        assert_eq!(
            metadata.object(&document).expect("decoded").metadata,
            expected.metadata
        );
    }

    #[test]
    fn paths_that_name_no_field_skip_nothing_and_say_why() {
        let unresolved = |path: &str| {
            let (skip, unresolved) = skip_fields(&[path.parse().expect("a path")], "v1", "Pod");
            assert!(skip.is_empty(), "{path}");
            unresolved
        };
        assert_eq!(
            unresolved("spec.nodeNames"),
            [
                "spec.nodeNames: failed to decode protobuf into its type: v1 Pod has no field spec.nodeNames (no \"nodeNames\" in api::core::v1::PodSpec)"
            ]
        );
        assert_eq!(
            unresolved("spec.nodeName.x"),
            [
                "spec.nodeName.x: failed to decode protobuf into its type: v1 Pod: spec.nodeName is not a message, so it has no field \"x\""
            ]
        );
        assert_eq!(
            unresolved("metadata.name[x]"),
            ["metadata.name[x]: v1 Pod: metadata.name is not a map, so it has no entry [x]"]
        );
        // a path of another type skips nothing in a pod: the pod keeps every field
        let objects = ProtobufObjects::<Pod>::new(&["status.nodeInfo".parse().expect("a path")]);
        let document = protobuf::to_vec(&pod()).expect("encoded");
        assert_eq!(
            objects.object(&document).expect("decoded"),
            protobuf::from_slice::<Pod>(&document).expect("decoded by serde")
        );
        // a field of a message embedded inline in Go: a persistent volume's source
        let (numbers, is_map) = protobuf::field_numbers(
            "v1",
            "PersistentVolume",
            &["spec".to_owned(), "hostPath".to_owned()],
        )
        .expect("a field");
        assert_eq!((numbers.as_slice(), is_map), (&[2, 2, 3][..], false));
    }

    #[test]
    fn a_document_of_another_kind_is_an_error() {
        let objects = ProtobufObjects::<Pod>::new(&[]);
        let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        let error = objects
            .object(&protobuf::to_vec(&config_map).expect("encoded"))
            .expect_err("not a pod");
        assert_eq!(
            error.to_string(),
            "failed to decode protobuf into its type: the document holds v1 ConfigMap, where v1 Pod was asked for"
        );
    }
}
