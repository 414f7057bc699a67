//! What a Kubernetes client and an API server share: the parts of Go's `k8s.io/apimachinery`
//! that `informer-runtime` (the client) and `informer-testserver` (the embedded API server)
//! both read and write, in one crate below both, so neither depends on the other.
//!
//! | module | what it holds |
//! |---|---|
//! | [`protobuf`] | Kubernetes' protobuf documents and watch frames, decoded into any `Deserialize` type ([`protobuf::from_slice`]) and encoded from JSON ([`protobuf::to_vec`]) |
//! | [`selector`] | label selectors written as text, parsed into kube-core's `Selector`; field selectors |
//! | [`api_version`] | an `apiVersion` split into group and version as kube-apiserver splits it |
//!
//! `informer-runtime` re-exports each module under the same name.

pub mod api_version;
pub mod protobuf;
pub mod selector;
