//! What a lister-watcher asks the API server for: JSON, protobuf for built-in types
//! (client-go's choice for kube-controller-manager, the scheduler and the kubelet), or CBOR
//! for custom resources (client-go's `ClientsPreferCBOR`).

use http::HeaderValue;

use crate::{protobuf, source::cbor};

/// The encoding a [`KubeListerWatcher`](super::KubeListerWatcher) asks for.
///
/// With [`Protobuf`](Self::Protobuf), the default, lists and watches of built-in types ask
/// for `application/vnd.kubernetes.protobuf` first and JSON second (as kube-controller-manager
/// and the scheduler do), and metadata-only informers ask for protobuf
/// `PartialObjectMetadata` (of any type, custom resources too, as kube-apiserver serves them).
/// Objects are read by the decoders `k8s-protobuf` generates for k8s-openapi's types. Custom
/// resources, and any answer that comes in JSON, are read as JSON. A protobuf answer naming a
/// kind this crate has no protobuf form for (a type newer than its table) switches the
/// lister-watcher to JSON for good, with a warning.
///
/// Protobuf is the default because it measures faster: on the benchmark's pods an informer
/// reading protobuf spends about three quarters of the CPU per watch event of one reading JSON,
/// and about half its CPU to sync a list, with half the bytes on the wire and less encoding
/// work for the API server (`bench/README.md`). [`Json`](Self::Json) opts out.
///
/// [`Cbor`](Self::Cbor) reads custom resources and metadata-only objects in CBOR (KEP-4222,
/// served by kube-apiserver with `CBORServingAndStorage`), asking as client-go does with
/// `ClientsPreferCBOR`: `application/cbor` first and JSON second, for lists and watches alike
/// (a watch then streams `application/cbor-seq`). Built-in types stay protobuf. An answer in
/// JSON (a server without CBOR) is read as JSON. Fields to
/// [skip](super::KubeListerWatcher::skip_fields) are passed over in CBOR too. It is opt-in:
/// on the benchmark's custom resource (6.8 KiB of JSON, 50 000 objects, 100 000 events) an
/// informer reading CBOR ranged from 8% slower to 6% faster in events/s than one reading JSON
/// over six runs, with the same memory per object; decoding into the caller's types costs
/// about as much from CBOR as from JSON (`bench/README.md`).
///
/// ```no_run
/// use informer_runtime::source::{Encoding, KubeListerWatcher};
/// use k8s_openapi::api::core::v1::Pod;
/// use kube::Api;
///
/// # fn example(client: kube::Client) {
/// let pods = KubeListerWatcher::new(Api::<Pod>::all(client)).encoding(Encoding::Json);
/// # let _ = pods;
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// Protobuf for built-in types and metadata-only objects, JSON for the rest.
    #[default]
    Protobuf,
    /// JSON only.
    Json,
    /// Protobuf for built-in types, CBOR for custom resources and metadata-only objects (JSON
    /// from a server that answers JSON).
    Cbor,
}

/// What a response body is, by its `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    Json,
    Protobuf,
    Cbor,
}

/// The `Accept` of a full object list or watch in protobuf, JSON second.
const PROTOBUF_FIRST: &str = "application/vnd.kubernetes.protobuf, application/json";
/// The `Accept` of a metadata-only list in protobuf, JSON second.
const METADATA_LIST_PROTOBUF_FIRST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json";
/// The `Accept` of a metadata-only watch in protobuf, JSON second.
const METADATA_PROTOBUF_FIRST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json";

/// The `Accept` of a full object list or watch in CBOR, JSON second (client-go's
/// `ClientsPreferCBOR`; a watch answer is `application/cbor-seq`).
const CBOR_FIRST: &str = "application/json;q=0.9, application/cbor;q=1";
/// The `Accept` of a metadata-only list in CBOR, JSON second.
const METADATA_LIST_CBOR_FIRST: &str = "application/cbor;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1;q=0.9, application/json;q=0.8";
/// The `Accept` of a metadata-only watch in CBOR, JSON second.
const METADATA_CBOR_FIRST: &str = "application/cbor;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1;q=0.9, application/json;q=0.8";

/// What a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    List,
    Watch,
}

/// The `Accept` header that asks for protobuf first, or `None` to keep kube's JSON one: for
/// metadata-only requests always, for full objects when the URL's group and version hold
/// built-in kinds.
pub(crate) fn protobuf_accept(url: &str, metadata: bool, asked: Asked) -> Option<HeaderValue> {
    let accept = match (metadata, asked) {
        (true, Asked::List) => METADATA_LIST_PROTOBUF_FIRST,
        (true, Asked::Watch) => METADATA_PROTOBUF_FIRST,
        (false, _) => {
            let (group, version) = group_version(url)?;
            if !protobuf::has_group_version(group, version) {
                return None;
            }
            PROTOBUF_FIRST
        }
    };
    Some(HeaderValue::from_static(accept))
}

/// The group and version of a resource URL (`/api/v1/...`, `/apis/apps/v1/...`).
fn group_version(url: &str) -> Option<(&str, &str)> {
    let mut segments = url.trim_start_matches('/').split('/');
    match segments.next()? {
        "api" => Some(("", segments.next()?)),
        "apis" => Some((segments.next()?, segments.next()?)),
        _ => None,
    }
}

/// The `Accept` header that asks for CBOR first, for custom resources (groups without
/// built-in kinds) and metadata-only requests; `None` for built-in kinds.
pub(crate) fn cbor_accept(url: &str, metadata: bool, asked: Asked) -> Option<HeaderValue> {
    let accept = match (metadata, asked) {
        (true, Asked::List) => METADATA_LIST_CBOR_FIRST,
        (true, Asked::Watch) => METADATA_CBOR_FIRST,
        (false, _) => {
            let (group, version) = group_version(url)?;
            if protobuf::has_group_version(group, version) {
                return None;
            }
            CBOR_FIRST
        }
    };
    Some(HeaderValue::from_static(accept))
}

/// What a response's `Content-Type` says its body is: protobuf (a document, or a watch
/// stream's frames), CBOR (a data item, or a watch stream's sequence), else JSON.
pub(crate) fn wire(content_type: Option<&HeaderValue>) -> Wire {
    let media = content_type
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::trim)
        .unwrap_or_default();
    if media.eq_ignore_ascii_case(protobuf::MEDIA_TYPE) {
        Wire::Protobuf
    } else if media.eq_ignore_ascii_case(cbor::MEDIA_TYPE) || media.eq_ignore_ascii_case(cbor::SEQ_MEDIA_TYPE)
    {
        Wire::Cbor
    } else {
        Wire::Json
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_groups_ask_for_protobuf_first() {
        let asked = |url, metadata| {
            protobuf_accept(url, metadata, Asked::List).map(|v| v.to_str().unwrap_or_default().to_owned())
        };
        assert_eq!(
            asked("/api/v1/namespaces/a/pods", false).as_deref(),
            Some(PROTOBUF_FIRST)
        );
        assert_eq!(
            asked("/apis/apps/v1/deployments", false).as_deref(),
            Some(PROTOBUF_FIRST)
        );
        assert_eq!(asked("/apis/example.com/v1/widgets", false), None);
        assert_eq!(
            asked("/apis/example.com/v1/widgets", true).as_deref(),
            Some(METADATA_LIST_PROTOBUF_FIRST)
        );
    }

    #[test]
    fn responses_are_recognised_by_media_type() {
        let header = |v| HeaderValue::from_static(v);
        assert_eq!(
            wire(Some(&header("application/vnd.kubernetes.protobuf"))),
            Wire::Protobuf
        );
        assert_eq!(
            wire(Some(&header("application/vnd.kubernetes.protobuf;stream=watch"))),
            Wire::Protobuf
        );
        assert_eq!(wire(Some(&header("application/cbor"))), Wire::Cbor);
        assert_eq!(wire(Some(&header("application/cbor-seq"))), Wire::Cbor);
        assert_eq!(wire(Some(&header("application/json"))), Wire::Json);
        assert_eq!(wire(None), Wire::Json);
    }

    #[test]
    fn custom_resources_and_metadata_ask_for_cbor_first() {
        let asked = |url, metadata, asked| {
            cbor_accept(url, metadata, asked).map(|v| v.to_str().unwrap_or_default().to_owned())
        };
        assert_eq!(
            asked("/apis/example.com/v1/widgets", false, Asked::Watch).as_deref(),
            Some(CBOR_FIRST)
        );
        assert_eq!(asked("/api/v1/pods", false, Asked::List), None);
        assert_eq!(
            asked("/api/v1/pods", true, Asked::List).as_deref(),
            Some(METADATA_LIST_CBOR_FIRST)
        );
        assert_eq!(
            asked("/api/v1/pods", true, Asked::Watch).as_deref(),
            Some(METADATA_CBOR_FIRST)
        );
    }
}
