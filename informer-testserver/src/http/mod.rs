//! HTTP: a request is recorded and routed ([`handler`], [`routes`]) to discovery
//! ([`discovery`]), OpenAPI ([`openapi`]) or a resource URL ([`resource`]), whose verb has a
//! handler of its own ([`verbs`]), as has each subresource ([`subresource`]); computed
//! resources are answered by [`computed`]. Bodies are read by [`body`], answers shaped by
//! [`shape`] and written by [`response`].

pub(crate) mod body;
pub(crate) mod caller;
pub(crate) mod component_statuses;
pub(crate) mod computed;
pub(crate) mod discovery;
pub(crate) mod handler;
pub(crate) mod openapi;
pub(crate) mod request;
pub(crate) mod resource;
pub(crate) mod response;
pub(crate) mod review;
pub(crate) mod routes;
pub(crate) mod shape;
pub(crate) mod shared;
pub(crate) mod subresource;
pub(crate) mod verbs;
