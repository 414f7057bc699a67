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

#[cfg(test)]
mod tests {
    use super::*;

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
