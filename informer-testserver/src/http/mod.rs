//! HTTP: a request is parsed, routed ([`routes`]) and served by the handler of its path:
//! discovery ([`discovery`]), OpenAPI ([`openapi`]) or a resource's verbs ([`handler`]).

pub(crate) mod discovery;
pub(crate) mod handler;
pub(crate) mod openapi;
pub(crate) mod routes;
pub(crate) mod shared;
