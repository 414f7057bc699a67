//! What an answer to a resource request becomes, as kube-apiserver decides it
//! (`negotiation.NegotiateOutputMediaType` and `transformResponseObject` of
//! `k8s.io/apiserver/pkg/endpoints/handlers`): the object or list as stored, its
//! `PartialObjectMetadata(List)`, or a `Table`, for every verb that returns one (get, list,
//! create, update, patch, delete, deletecollection, and the `status` and `scale`
//! subresources).
//!
//! Negotiation comes first, before a write is made: the `Accept` clauses in order of `q`
//! (then the more specific first); a clause is acceptable when its media type is JSON, YAML,
//! protobuf or CBOR (served last, as kube-apiserver appends it with `CBORServingAndStorage`)
//! and what it asks to convert to (`as`, `g`, `v`) is `Table` (JSON or YAML only) or
//! `PartialObjectMetadata`/`PartialObjectMetadataList` of `meta.k8s.io` `v1` or `v1beta1`.
//! When none is, the answer is kube-apiserver's `406 NotAcceptable`. A clause is taken before
//! the answer is known to be one object or a list, so asking for a `PartialObjectMetadata` of a
//! list (or a `PartialObjectMetadataList` of one object) is a `406` too. `Status` answers (a
//! delete's) are never converted.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::encoding::media_range::MediaRange;
use crate::encoding::partial_metadata;
use crate::encoding::table::{self, Column, IncludeObject};
use crate::registry::ResourceType;
use crate::status::ApiError;

/// What the `Accept` header asks an answer to be converted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The object or list as stored.
    AsStored,
    /// `PartialObjectMetadata` of `meta.k8s.io/<version>`.
    PartialObjectMetadata(&'static str),
    /// `PartialObjectMetadataList` of `meta.k8s.io/<version>`.
    PartialObjectMetadataList(&'static str),
    /// `Table` of `meta.k8s.io/<version>`.
    Table(&'static str),
}

/// The media types kube-apiserver serves built-in resources in, as its `406` lists them.
const MEDIA_TYPES: &str =
    "application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor";

/// The stream media types kube-apiserver serves watches in, as its `406` lists them (CBOR's is a
/// CBOR sequence, with no `stream` parameter).
const STREAM_MEDIA_TYPES: &str =
    "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq";

/// kube-apiserver's `406` when no clause of `Accept` is acceptable.
fn not_acceptable(message: String) -> ApiError {
    ApiError::new(406, "NotAcceptable", message)
}

/// The media types a clause can be served in (JSON first, as kube-apiserver lists them):
/// `(subtype, streams)`.
fn served(clause: &MediaRange<'_>) -> impl Iterator<Item = (&'static str, bool)> {
    let all = [
        ("json", true),
        ("yaml", false),
        ("vnd.kubernetes.protobuf", true),
        ("cbor", true),
    ];
    let any_type = clause.kind == "*";
    let any_subtype = clause.subtype == "*";
    let matching = move |(subtype, _): &(&str, bool)| {
        any_type || (clause.kind == "application" && (any_subtype || clause.subtype == *subtype))
    };
    all.into_iter().filter(matching).collect::<Vec<_>>().into_iter()
}

/// The target a clause asks for in a media type, `None` when the clause cannot be served so.
fn accept_clause(clause: &MediaRange<'_>, subtype: &str, streams: bool) -> Option<Target> {
    let (mut kind, mut group, mut version) = (None, None, None);
    for &(key, value) in &clause.params {
        match key {
            "as" => kind = Some(value),
            "g" => group = Some(value),
            "v" => version = Some(value),
            "stream" if !(value.is_empty() || streams && value == "watch") => return None,
            "sv" if !value.is_empty() && value != "v1" => return None,
            _ => {}
        }
    }
    if kind.is_none() && group.is_none() && version.is_none() {
        return Some(Target::AsStored);
    }
    if group != Some("meta.k8s.io") {
        return None;
    }
    let version = match version {
        Some("v1") => "v1",
        Some("v1beta1") => "v1beta1",
        _ => return None,
    };
    match kind.unwrap_or_default() {
        "Table" if subtype == "json" || subtype == "yaml" => Some(Target::Table(version)),
        "PartialObjectMetadata" => Some(Target::PartialObjectMetadata(version)),
        "PartialObjectMetadataList" => Some(Target::PartialObjectMetadataList(version)),
        _ => None,
    }
}

/// What one request's `Accept` negotiated, worked out once per request: the target and media
/// subtype of its first acceptable clause, or kube-apiserver's `406`, which is answered only
/// where kube-apiserver checks (before a resource request reads or writes anything).
#[derive(Debug, Clone)]
pub(crate) struct Negotiated(Result<(Target, &'static str), ApiError>);

impl Negotiated {
    /// Negotiates `accept` (an empty header accepts JSON as stored).
    pub(crate) fn of(accept: &str) -> Self {
        Self(chosen(accept))
    }

    /// The target of a resource request's answer, or kube-apiserver's `406`.
    pub(crate) fn target(&self) -> Result<Target, ApiError> {
        self.0.clone().map(|(target, _)| target)
    }

    /// The target and media subtype of a watch: as [`target`](Self::target) (whose `406`
    /// kube-apiserver's list handler answers first, listing the media types), refused with the
    /// `406` of its watch handler (listing the stream media types) when the media type chosen
    /// has no stream form (YAML). A `PartialObjectMetadataList` cannot be made of one event's
    /// object, so kube-apiserver sends the objects as stored.
    pub(crate) fn watch(&self) -> Result<(Target, &'static str), ApiError> {
        let stream_not_acceptable = || {
            not_acceptable(format!(
                "only the following media types are accepted: {STREAM_MEDIA_TYPES}"
            ))
        };
        let (target, subtype) = match &self.0 {
            Ok((_, "yaml")) => return Err(stream_not_acceptable()),
            Ok(chosen) => *chosen,
            Err(e) => return Err(e.clone()),
        };
        let target = match target {
            Target::PartialObjectMetadataList(_) => Target::AsStored,
            other => other,
        };
        Ok((target, subtype))
    }

    /// The media subtype of an object, list or error answer: `json`, `yaml`,
    /// `vnd.kubernetes.protobuf` or `cbor` (JSON when nothing is acceptable, as the `406`
    /// itself is).
    pub(crate) fn subtype(&self) -> &'static str {
        self.0.as_ref().map_or("json", |(_, subtype)| subtype)
    }
}

/// The target of the first acceptable clause and the media subtype it is served in.
fn chosen(accept: &str) -> Result<(Target, &'static str), ApiError> {
    if accept.trim().is_empty() {
        return Ok((Target::AsStored, "json"));
    }
    let clauses = MediaRange::all_of(accept);
    for clause in clauses.iter().filter(|c| c.q > 0.0) {
        for (subtype, streams) in served(clause) {
            if let Some(target) = accept_clause(clause, subtype, streams) {
                return Ok((target, subtype));
            }
        }
    }
    Err(not_acceptable(format!(
        "only the following media types are accepted: {MEDIA_TYPES}"
    )))
}

/// The resource an answer is about.
pub(crate) struct Resource<'a> {
    /// Its type.
    pub(crate) rt: &'a ResourceType,
    /// Whether it is a built-in kind ([`Registry::is_builtin`](crate::registry::Registry::is_builtin)).
    pub(crate) builtin: bool,
    /// Its table columns, when a `Table` is asked for.
    pub(crate) columns: &'a dyn Fn() -> Vec<Column>,
}

/// The Go type kube-apiserver's storage returns for a resource, as its `406` names it
/// (`*core.Pod`, `*apps.DeploymentList`, `*unstructured.Unstructured`).
fn go_type(resource: &Resource<'_>, list: bool) -> String {
    let rt = resource.rt;
    let suffix = if list { "List" } else { "" };
    if !resource.builtin {
        return format!("*unstructured.Unstructured{suffix}");
    }
    let package = match rt.group.as_str() {
        "" | "events.k8s.io" => "core",
        "internal.apiserver.k8s.io" => "apiserverinternal",
        group => group.split('.').next().unwrap_or(group),
    };
    format!("*{package}.{}{suffix}", rt.kind)
}

/// `value` (one object, or a list when `list`) as the `Accept` header of the request asks:
/// as stored, as `PartialObjectMetadata(List)` or as a `Table` (with the type's columns, or
/// `Name` and `Created At` for a `Scale`); a `Status` as it is.
pub(crate) fn shaped(
    resource: &Resource<'_>,
    query: &HashMap<String, String>,
    negotiated: &Negotiated,
    value: Value,
    list: bool,
) -> Result<Value, ApiError> {
    let target = negotiated.target()?;
    if value["kind"] == "Status" {
        return Ok(value);
    }
    Ok(match target {
        Target::AsStored => value,
        Target::PartialObjectMetadata(_) if list => {
            return Err(not_acceptable(format!(
                "you requested PartialObjectMetadata, but the requested object is a list ({})",
                go_type(resource, true)
            )));
        }
        Target::PartialObjectMetadata(version) => partial_metadata::object(&value, version),
        Target::PartialObjectMetadataList(_) if !list => {
            return Err(not_acceptable(format!(
                "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
                go_type(resource, false)
            )));
        }
        Target::PartialObjectMetadataList(version) => partial_metadata::list(&value, version),
        Target::Table(version) => {
            let include = IncludeObject::parse(query.get("includeObject").map(String::as_str))?;
            let columns = if value["kind"] == "Scale" {
                let scale = ResourceType::new("autoscaling", "v1", "Scale", "scale", true);
                table::columns(&scale, None)
            } else {
                (resource.columns)()
            };
            if list {
                let items = value["items"].as_array().cloned().unwrap_or_default();
                table::table(
                    &columns,
                    &items,
                    value["metadata"].clone(),
                    include,
                    version,
                    true,
                )
            } else {
                let metadata = json!({"resourceVersion": value["metadata"]["resourceVersion"]});
                table::table(&columns, &[value], metadata, include, version, true)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn negotiate(accept: &str) -> Result<Target, ApiError> {
        Negotiated::of(accept).target()
    }

    fn chosen_subtype(accept: &str) -> &'static str {
        Negotiated::of(accept).subtype()
    }

    const NOT_ACCEPTABLE: &str = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor";

    #[test]
    fn protobuf_is_answered_when_asked_for_first() {
        let chosen = chosen_subtype;
        assert_eq!(
            chosen("application/vnd.kubernetes.protobuf,application/json"),
            "vnd.kubernetes.protobuf"
        );
        assert_eq!(
            chosen("application/vnd.kubernetes.protobuf, */*"),
            "vnd.kubernetes.protobuf"
        );
        assert_eq!(
            chosen("application/json,application/vnd.kubernetes.protobuf"),
            "json"
        );
        assert_eq!(
            chosen("application/vnd.kubernetes.protobuf;q=0.5,application/json"),
            "json"
        );
        assert_eq!(chosen(""), "json");
        // no table in protobuf: the JSON clause after it is taken
        assert_eq!(
            chosen("application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json"),
            "json"
        );
    }

    #[test]
    fn what_client_go_kube_and_kubectl_ask_for() {
        let client_go_list = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(
            negotiate(client_go_list),
            Ok(Target::PartialObjectMetadataList("v1"))
        );
        assert_eq!(chosen_subtype(client_go_list), "vnd.kubernetes.protobuf");
        let kube_watch = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        assert_eq!(negotiate(kube_watch), Ok(Target::PartialObjectMetadata("v1")));
        let beta = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1";
        assert_eq!(negotiate(beta), Ok(Target::PartialObjectMetadata("v1beta1")));
        let kubectl_get = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(negotiate(kubectl_get), Ok(Target::Table("v1")));
        let table_v2 = "application/json;as=Table;v=v2;g=meta.k8s.io,application/json";
        assert_eq!(negotiate(table_v2), Ok(Target::AsStored));
        assert_eq!(negotiate(""), Ok(Target::AsStored));
    }

    /// Ported from apiserver's `TestNegotiate` (negotiation/negotiate_test.go): bogus clauses
    /// are passed over, unknown parameters ignored.
    #[test]
    fn bogus_clauses_are_passed_over() {
        for accept in [
            "application/json;as=BOGUS;v=v1beta1;g=meta.k8s.io, application/json",
            "application/BOGUS, application/json",
            "unrecognized/stuff,application/json; pretty=1",
            "application/*",
        ] {
            assert_eq!(negotiate(accept).expect(accept), Target::AsStored, "{accept}");
        }
        let err = negotiate("application").expect_err("not a media type");
        assert_eq!(err.code, 406);
    }

    #[test]
    fn clients_accept_headers_negotiate_their_targets() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(negotiate(kubectl).expect("kubectl"), Target::Table("v1"));
        let client_go_list = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(
            negotiate(client_go_list).expect("client-go"),
            Target::PartialObjectMetadataList("v1")
        );
        assert_eq!(negotiate("").expect("none"), Target::AsStored);
        assert_eq!(negotiate("*/*").expect("any"), Target::AsStored);
        assert_eq!(
            negotiate("application/json;stream=watch").expect("watch"),
            Target::AsStored
        );
        // a Table has no protobuf form: the clause is passed over
        assert_eq!(
            negotiate("application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json")
                .expect("json"),
            Target::AsStored
        );
    }

    /// `RequestScope.AllowsMediaTypeTransform`: only `Table` (JSON, YAML) and
    /// `PartialObjectMetadata(List)` of meta.k8s.io v1 and v1beta1.
    #[test]
    fn unknown_conversions_and_media_types_are_not_acceptable() {
        for accept in [
            "application/json;as=Table;g=meta.k8s.io;v=v2",
            "application/json;as=Table;g=example.com;v=v1",
            "application/json;as=Unknown;g=meta.k8s.io;v=v1",
            "application/json;as=Table",
            "application/json;g=meta.k8s.io;v=v1",
            "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1",
            "application/yaml;stream=watch",
            "text/html",
            "application/json;q=0",
        ] {
            let err = negotiate(accept).expect_err(accept);
            assert_eq!(
                (err.code, err.reason.as_str(), err.message.as_str()),
                (406, "NotAcceptable", NOT_ACCEPTABLE),
                "{accept}"
            );
        }
    }
}
