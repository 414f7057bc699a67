//! The `Accept` header of discovery requests, negotiated as kube-apiserver does for `/api` and
//! `/apis`: clauses in order of their `q` (then the more specific first, then as written),
//! clauses with `q=0` refused, a clause with `as` accepted only when it names an aggregated
//! discovery list (`g=apidiscovery.k8s.io`, `v=v2` or `v=v2beta1`, `as=APIGroupDiscoveryList`),
//! and one without `as` meaning the legacy, unaggregated documents.
//!
//! Only JSON is served: clauses for other media types (protobuf, YAML) are passed over.

use crate::encoding::media_range::MediaRange;

/// The group of aggregated discovery documents.
const GROUP: &str = "apidiscovery.k8s.io";
/// The kind of aggregated discovery documents.
const KIND: &str = "APIGroupDiscoveryList";

/// The version of an aggregated discovery answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AggregatedVersion {
    /// `apidiscovery.k8s.io/v2` (kube-apiserver 1.30 and later).
    V2,
    /// `apidiscovery.k8s.io/v2beta1` (what kubectl and client-go 1.26 to 1.29 ask for first).
    V2beta1,
}

impl AggregatedVersion {
    /// `v2` or `v2beta1`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::V2 => "v2",
            Self::V2beta1 => "v2beta1",
        }
    }

    /// `apidiscovery.k8s.io/<version>`.
    pub(crate) fn api_version(self) -> String {
        format!("{GROUP}/{}", self.as_str())
    }

    /// The `Content-Type` of the answer.
    pub(crate) fn content_type(self) -> String {
        format!("application/json;g={GROUP};v={};as={KIND}", self.as_str())
    }
}

/// What a discovery request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiscoveryFormat {
    /// `APIGroupDiscoveryList` of a version.
    Aggregated(AggregatedVersion),
    /// `APIVersions` (`/api`) or `APIGroupList` (`/apis`).
    Legacy,
}

/// Whether a range accepts protobuf.
fn is_protobuf(range: &MediaRange<'_>) -> bool {
    (range.kind, range.subtype) == ("application", "vnd.kubernetes.protobuf")
}

/// Whether a range accepts JSON.
fn is_json(range: &MediaRange<'_>) -> bool {
    matches!(
        (range.kind, range.subtype),
        ("application", "json" | "*") | ("*", "*")
    )
}

/// The format a discovery request with this `Accept` header gets.
pub(crate) fn negotiate_discovery(accept: &str) -> DiscoveryFormat {
    let clauses = MediaRange::all_of(accept);
    for clause in clauses.iter().filter(|c| c.q > 0.0 && is_json(c)) {
        let Some(kind) = clause.param("as") else {
            return DiscoveryFormat::Legacy;
        };
        if kind != KIND || clause.param("g") != Some(GROUP) {
            continue;
        }
        match clause.param("v") {
            Some("v2") => return DiscoveryFormat::Aggregated(AggregatedVersion::V2),
            Some("v2beta1") => return DiscoveryFormat::Aggregated(AggregatedVersion::V2beta1),
            _ => {}
        }
    }
    DiscoveryFormat::Legacy
}

/// The shape of the objects a get, list or watch answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ObjectFormat {
    /// The objects as stored.
    Full,
    /// `PartialObjectMetadata` of `meta.k8s.io/<version>` (`v1` or `v1beta1`): metadata only
    /// (a list: `PartialObjectMetadataList`).
    PartialMetadata(&'static str),
    /// A `Table` of `meta.k8s.io/<version>` (`v1` or `v1beta1`), for a list or one object.
    Table(&'static str),
}

/// The shape a get or watch (`list: false`) or a list (`list: true`) with this `Accept` header
/// gets, and whether it goes out in protobuf: the first acceptable JSON clause (by `q`, then
/// specificity) without `as`, or with `as=PartialObjectMetadata` (`PartialObjectMetadataList`
/// for a list) or `as=Table` of `meta.k8s.io` `v1` or `v1beta1`, with protobuf
/// clauses (`application/vnd.kubernetes.protobuf`, with or without
/// `as=PartialObjectMetadata`; tables only in JSON) taken where they come first.
pub(crate) fn negotiate(accept: &str, list: bool) -> (ObjectFormat, bool) {
    let wanted = if list {
        "PartialObjectMetadataList"
    } else {
        "PartialObjectMetadata"
    };
    let clauses = MediaRange::all_of(accept);
    for clause in clauses.iter().filter(|c| c.q > 0.0) {
        let protobuf = is_protobuf(clause);
        if !(is_json(clause) || protobuf) {
            continue;
        }
        let Some(kind) = clause.param("as") else {
            return (ObjectFormat::Full, protobuf);
        };
        let table = kind == "Table" && !protobuf;
        if (kind != wanted && !table) || clause.param("g") != Some("meta.k8s.io") {
            continue;
        }
        let version = match clause.param("v") {
            Some("v1") => "v1",
            Some("v1beta1") => "v1beta1",
            _ => continue,
        };
        let format = if table {
            ObjectFormat::Table(version)
        } else {
            ObjectFormat::PartialMetadata(version)
        };
        return (format, protobuf);
    }
    (ObjectFormat::Full, false)
}

/// Whether an object or list answer should be protobuf: the first acceptable clause (by `q`,
/// then specificity) is `application/vnd.kubernetes.protobuf`, without `as` or with
/// `as=PartialObjectMetadata(List)` (`*/*` and JSON clauses mean JSON).
pub(crate) fn prefers_protobuf(accept: &str) -> bool {
    negotiate(accept, false).1 || negotiate(accept, true).1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn negotiate_object(accept: &str, list: bool) -> ObjectFormat {
        super::negotiate(accept, list).0
    }

    #[test]
    fn protobuf_is_answered_when_asked_for_first() {
        assert!(prefers_protobuf(
            "application/vnd.kubernetes.protobuf,application/json"
        ));
        assert!(prefers_protobuf("application/vnd.kubernetes.protobuf, */*"));
        assert!(!prefers_protobuf(
            "application/json,application/vnd.kubernetes.protobuf"
        ));
        assert!(!prefers_protobuf(
            "application/vnd.kubernetes.protobuf;q=0.5,application/json"
        ));
        assert!(!prefers_protobuf(""));
        assert!(!prefers_protobuf(
            "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json"
        ));
    }

    #[test]
    fn metadata_only_is_negotiated_per_request_shape() {
        let client_go_list = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(
            negotiate_object(client_go_list, true),
            ObjectFormat::PartialMetadata("v1")
        );
        let kube_watch = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        assert_eq!(
            negotiate_object(kube_watch, false),
            ObjectFormat::PartialMetadata("v1")
        );
        assert_eq!(
            negotiate_object(
                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1",
                false
            ),
            ObjectFormat::PartialMetadata("v1beta1")
        );
        // a list answers with a list kind only
        assert_eq!(negotiate_object(kube_watch, true), ObjectFormat::Full);
        let kubectl_get = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(negotiate_object(kubectl_get, true), ObjectFormat::Table("v1"));
        assert_eq!(negotiate_object(kubectl_get, false), ObjectFormat::Table("v1"));
        let table_v2 = "application/json;as=Table;v=v2;g=meta.k8s.io,application/json";
        assert_eq!(negotiate_object(table_v2, true), ObjectFormat::Full);
        assert_eq!(negotiate_object("", false), ObjectFormat::Full);
        let other_group = "application/json;as=PartialObjectMetadata;g=example.com;v=v1";
        assert_eq!(negotiate_object(other_group, false), ObjectFormat::Full);
    }

    const V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    const V2BETA1: &str = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

    fn negotiate(accept: &str) -> DiscoveryFormat {
        negotiate_discovery(accept)
    }

    #[test]
    fn the_first_acceptable_clause_wins() {
        use AggregatedVersion::{V2 as Two, V2beta1 as Beta};
        use DiscoveryFormat::{Aggregated, Legacy};
        assert_eq!(
            negotiate(&format!("{V2},{V2BETA1},application/json")),
            Aggregated(Two)
        );
        assert_eq!(
            negotiate(&format!("{V2BETA1},{V2},application/json")),
            Aggregated(Beta)
        );
        assert_eq!(negotiate(V2BETA1), Aggregated(Beta));
        assert_eq!(negotiate("application/json"), Legacy);
        assert_eq!(negotiate(""), Legacy);
        assert_eq!(negotiate("*/*"), Legacy);
        assert_eq!(negotiate(&format!("application/json,{V2}")), Legacy);
    }

    #[test]
    fn v2beta1_is_not_read_inside_v2() {
        use DiscoveryFormat::{Aggregated, Legacy};
        let v3 = "application/json;g=apidiscovery.k8s.io;v=v2alpha9;as=APIGroupDiscoveryList";
        assert_eq!(negotiate(v3), Legacy);
        assert_eq!(
            negotiate(&format!("{v3},{V2BETA1}")),
            Aggregated(AggregatedVersion::V2beta1)
        );
        let other_group = "application/json;g=example.com;v=v2;as=APIGroupDiscoveryList";
        assert_eq!(negotiate(other_group), Legacy);
        let other_kind = "application/json;g=apidiscovery.k8s.io;v=v2;as=Table";
        assert_eq!(negotiate(other_kind), Legacy);
    }

    #[test]
    fn q_values_order_and_refuse() {
        use DiscoveryFormat::{Aggregated, Legacy};
        assert_eq!(
            negotiate(&format!("application/json;q=0.5, {V2BETA1};q=0.9, {V2} ;q=0.7")),
            Aggregated(AggregatedVersion::V2beta1)
        );
        assert_eq!(negotiate(&format!("{V2};q=0,application/json")), Legacy);
        assert_eq!(
            negotiate(&format!("*/*;q=0.9,{V2};q=0.9")),
            Aggregated(AggregatedVersion::V2)
        );
        assert_eq!(negotiate(&format!("{V2};q=x")), Legacy);
    }

    #[test]
    fn other_media_types_are_passed_over() {
        let protobuf =
            "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
        assert_eq!(
            negotiate(&format!("{protobuf},{V2BETA1}")),
            DiscoveryFormat::Aggregated(AggregatedVersion::V2beta1)
        );
        assert_eq!(negotiate("text/html"), DiscoveryFormat::Legacy);
        assert_eq!(AggregatedVersion::V2beta1.content_type(), V2BETA1);
    }
}
