//! The shape of an answer as `Accept` negotiates it: an object or list as stored, as
//! `PartialObjectMetadata` or as a `Table`; and the same for each line of a watch, framed in
//! protobuf or written as a CBOR sequence when asked for.

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::Value;

use crate::encoding::cbor;
use crate::encoding::partial_metadata;
use crate::encoding::protobuf;
use crate::encoding::table::{self, IncludeObject};
use crate::encoding::transform::{self, Negotiated, Target};
use crate::http::shared::Shared;
use crate::registry::ResourceType;
use crate::status::ApiError;

/// A list (`list`) or one object in the shape `Accept` negotiated: as stored,
/// `PartialObjectMetadata` or a `Table` ([`transform::shaped`]).
pub(crate) fn shaped(
    shared: &Shared,
    rt: &ResourceType,
    query: &HashMap<String, String>,
    negotiated: &Negotiated,
    value: Value,
    list: bool,
) -> Result<Value, ApiError> {
    let resource = transform::Resource {
        rt,
        builtin: shared.lock().registry.is_builtin(rt),
        columns: &|| shared.lock().table_columns(rt),
    };
    transform::shaped(&resource, query, negotiated, value, list)
}

/// What shapes each watch event line as `Accept` negotiated: unchanged, with
/// `PartialObjectMetadata` objects, or with `Table` objects (column definitions in the first).
/// Protobuf watch streams are framed (see [`protobuf::watch_frame`]) when `Accept` asks for
/// protobuf first and the type has a protobuf form; CBOR watch streams are CBOR sequences (see
/// [`cbor::watch_item`]). The stream's content type comes with it.
pub(crate) fn watch_shape(
    shared: &Shared,
    rt: &ResourceType,
    query: &HashMap<String, String>,
    negotiated: &Negotiated,
) -> Result<(impl FnMut(Bytes) -> Bytes + Send + 'static, &'static str), ApiError> {
    let (target, subtype) = negotiated.watch()?;
    let include = IncludeObject::parse(query.get("includeObject").map(String::as_str))?;
    let columns = match target {
        Target::Table(_) => shared.lock().table_columns(rt),
        _ => Vec::new(),
    };
    // metadata-only objects have a protobuf form whatever their type
    let framed = subtype == "vnd.kubernetes.protobuf"
        && (matches!(target, Target::PartialObjectMetadata(_))
            || protobuf::has_form(&rt.group, &rt.version, &rt.kind));
    let sequence = subtype == "cbor";
    let content_type = if framed {
        protobuf::WATCH_MEDIA_TYPE
    } else if sequence {
        cbor::SEQ_MEDIA_TYPE
    } else {
        "application/json"
    };
    let mut first = true;
    // a line that is not an event (an injected malformed one) goes out as it is, framed for
    // protobuf
    let encode = move |line: Bytes| {
        if framed {
            Bytes::from(
                protobuf::watch_frame(&line)
                    .unwrap_or_else(|| [&(line.len() as u32).to_be_bytes()[..], &line].concat()),
            )
        } else if sequence {
            cbor::watch_item(&line).map_or(line, Bytes::from)
        } else {
            line
        }
    };
    // a watch never negotiates `PartialObjectMetadataList` (its events carry objects)
    let shape = move |line: Bytes| match target {
        Target::AsStored | Target::PartialObjectMetadataList(_) => encode(line),
        Target::PartialObjectMetadata(version) => encode(partial_metadata::watch_line(line, version)),
        Target::Table(version) => {
            let with_definitions = std::mem::take(&mut first);
            table::watch_line(line, &columns, include, version, with_definitions)
        }
    };
    Ok((shape, content_type))
}
