//! Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`) of built-in types,
//! read straight into the types the rest of the runtime uses.
//!
//! kube-apiserver speaks protobuf to kube-controller-manager, the scheduler and the kubelet,
//! because it decodes for a fraction of JSON's cost. A protobuf document is the magic `k8s\0`,
//! then a `runtime.Unknown` whose `typeMeta` names the kind and whose `raw` holds the
//! object's message. [`from_slice`] decodes one into any `Deserialize` type (k8s-openapi's
//! types, `kube_core::ObjectList`, `PartialObjectMetadata`, `serde_json::Value`): it is a
//! serde `Deserializer` over the wire, driven by a table of every built-in message's fields
//! (generated from k8s-pb's messages and Kubernetes' Go types), so the types' own
//! `Deserialize` implementations build the objects, with no intermediate copy.
//!
//! What the JSON would say is what the decode gives:
//! - field names are Go's JSON names (`downwardAPI`, `nodeID`);
//! - a zero value on the wire is kept where Go's JSON would show it (pointer fields, fields
//!   without `omitempty`, and structs, which `omitempty` never leaves out) and left out where
//!   Go's JSON leaves it out, since Go's protobuf writes every field that is not a pointer;
//! - an empty list or map is no field at all, as on the wire.
//!
//! The other way round, [`omit_empty`] takes out of an object's JSON what its protobuf form
//! cannot carry or its decode leaves out (empty lists and maps, zero scalars of `omitempty`
//! fields), as kube-apiserver's storage does: the JSON so trimmed and the protobuf document
//! of the same object decode to equal objects.
//! - `Time` is RFC 3339 (an empty message is an unset time), `Quantity` its text,
//!   `IntOrString` a number or a string, `RawExtension` and `FieldsV1` their JSON, `bytes`
//!   base64.
//!
//! Unknown fields are skipped (as Go's decoder does); truncated or malformed input is an
//! [`Error`], never a panic, and an error inside the object says where: its byte offset in the
//! document and the path of fields down to it ([`Error::location`]:
//! `spec.containers[0].image`). Custom resources have no protobuf form ([`has_form`]).
//!
//! ```
//! use informer_apimachinery::protobuf;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use serde_json::json;
//!
//! let config_map = json!({
//!     "apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "settings", "namespace": "default"},
//!     "data": {"mode": "fast"},
//! });
//! let bytes = protobuf::to_vec(&config_map)?;
//! assert!(bytes.starts_with(b"k8s\0"));
//! let decoded: ConfigMap = protobuf::from_slice(&bytes)?;
//! assert_eq!(decoded.metadata.name.as_deref(), Some("settings"));
//! assert_eq!(decoded.data.expect("data")["mode"], "fast");
//! # Ok::<_, protobuf::Error>(())
//! ```

mod bytes_fields;
mod de;
mod encode;
mod envelope;
mod error;
mod location;
mod lookup;
mod omit_empty;
#[cfg(any(test, feature = "samples"))]
#[doc(hidden)]
pub mod samples;
mod spec;
mod table;
mod text;
mod watch_event;
mod wire;

pub use bytes_fields::bytes_values;
pub use de::from_slice;
pub use encode::to_vec;
pub use envelope::{Envelope, MAGIC};
pub use error::Error;
pub use location::{FieldPath, Segment};
pub use lookup::{field_numbers, has_form, has_group_version};
pub use omit_empty::omit_empty;
pub use watch_event::WatchFrame;

/// The media type of protobuf documents.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The media type of protobuf watch streams: frames of a 4-byte big-endian length, then a
/// `WatchEvent` message.
pub const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

#[cfg(test)]
mod tests;
