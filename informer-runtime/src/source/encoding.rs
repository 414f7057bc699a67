//! What a lister-watcher asks the API server for: JSON, or protobuf for built-in types
//! (client-go's choice for kube-controller-manager, the scheduler and the kubelet).

use http::HeaderValue;

use crate::protobuf;

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
}

/// The `Accept` of a full object list or watch in protobuf, JSON second.
const PROTOBUF_FIRST: &str = "application/vnd.kubernetes.protobuf, application/json";
/// The `Accept` of a metadata-only list in protobuf, JSON second.
const METADATA_LIST_PROTOBUF_FIRST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json";
/// The `Accept` of a metadata-only watch in protobuf, JSON second.
const METADATA_PROTOBUF_FIRST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json";

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

/// Whether a response's `Content-Type` is protobuf (a document, or a watch stream's frames).
pub(crate) fn is_protobuf(content_type: Option<&HeaderValue>) -> bool {
    content_type
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case(protobuf::MEDIA_TYPE))
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
    fn protobuf_responses_are_recognised_by_media_type() {
        let header = |v| HeaderValue::from_static(v);
        assert!(is_protobuf(Some(&header("application/vnd.kubernetes.protobuf"))));
        assert!(is_protobuf(Some(&header(
            "application/vnd.kubernetes.protobuf;stream=watch"
        ))));
        assert!(!is_protobuf(Some(&header("application/json"))));
        assert!(!is_protobuf(None));
    }
}
