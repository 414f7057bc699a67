//! Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`) read straight into
//! [k8s-openapi](https://docs.rs/k8s-openapi)'s types, by decoders generated per message.
//!
//! kube-apiserver speaks protobuf to kube-controller-manager, the scheduler and the kubelet
//! because it decodes for a fraction of JSON's cost. Each decoder here is generated from one
//! table (k8s-pb's field numbers joined with the Go types' JSON names and presence): a loop over
//! the message's fields that matches the field number and writes the Rust field, strings
//! validated once, lists allocated at their length, nested messages by direct calls, times,
//! quantities and embedded JSON converted in place. No serde, no intermediate value.
//!
//! ```
//! use k8s_protobuf::{Decode, decode_message};
//! use k8s_openapi::api::core::v1::Pod;
//!
//! // Pod { metadata: { name: "web" }, spec: { nodeName (10): "node-1" } }
//! let message = [
//!     0x0a, 0x05, 0x0a, 0x03, b'w', b'e', b'b',
//!     0x12, 0x08, 0x52, 0x06, b'n', b'o', b'd', b'e', b'-', b'1',
//! ];
//! let pod: Pod = decode_message(&message)?;
//! assert_eq!(pod.metadata.name.as_deref(), Some("web"));
//! assert_eq!(pod.spec.and_then(|s| s.node_name).as_deref(), Some("node-1"));
//! assert_eq!(<Pod as Decode>::MESSAGE, "k8s.io.api.core.v1.Pod");
//! # Ok::<_, k8s_protobuf::Error>(())
//! ```
//!
//! What the JSON answer would hold is what the decode holds: Go's protobuf writes every field
//! that is not a pointer, so a zero value of an `omitempty` field is left out (`None`), as Go's
//! JSON leaves it out; an empty `Time` is an unset time. Unknown fields are skipped, as Go's
//! decoder skips them. Malformed input is an [`Error`] naming the fields it was found in,
//! never a panic, and messages nest at most [`MAX_DEPTH`] deep.
//!
//! # Skipping fields unread
//!
//! [`SkipFields`] names fields (by number, from the top-level message) that a decode passes
//! over without parsing or allocating them: an object's `managedFields`, often half of a
//! pod's bytes, cost nothing when a cache would drop them anyway.
//!
//! # Generic code
//!
//! [`kind_decoder`] finds the decoder of a resource type by its `TypeId`, for code generic
//! over the resource type (an informer of any `K`): `None` for custom resources and for groups
//! left out of the build.
//!
//! # Build cost
//!
//! Each API group is a Cargo feature (`core`, `apps`, ...; all are default features), and a
//! group enables the groups its types contain (`apps` enables `core`). apimachinery's types
//! (`ObjectMeta`, `ListMeta`, ...) are always built. A binary that reads only pods builds
//! with `default-features = false, features = ["core"]`. The crate enables no Kubernetes
//! version of k8s-openapi: types and fields of some versions only are compiled when
//! k8s-openapi is built for one of them.

mod context;
mod decode;
mod envelope;
mod error;
mod fields;
mod generated;
mod kind_decoder;
mod kinds;
mod reader;
#[cfg(feature = "apiextensions")]
mod schema;
mod special;
mod time;

pub use context::{Context, MAX_DEPTH, SkipFields};
pub use decode::{Decode, decode_document, decode_message, decode_message_with};
pub use envelope::{Envelope, MAGIC, utf8};
pub use error::{Error, ErrorKind};
pub use kind_decoder::{KindDecoder, TypeVisitor};
pub use kinds::{kind_decoder, kind_decoders, visit_types};
pub use reader::{FIXED32, FIXED64, Key, LEN, Reader, VARINT};
pub use time::go_duration;
