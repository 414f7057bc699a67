//! [`TypedResource`]: the resource types a factory makes informers of by itself.

use std::fmt;

use kube::Resource;
use serde::{Serialize, de::DeserializeOwned};

use crate::source::ApiScope;

/// A resource type the factory makes informers of by itself, with its client, namespace and
/// list tweaks ([`SharedInformerFactory::informer`](super::SharedInformerFactory::informer)): any typed resource, such as a k8s-openapi
/// type or a `#[derive(CustomResource)]` type. Implemented for every type that qualifies.
pub trait TypedResource:
    Resource<DynamicType = (), Scope: ApiScope>
    + Clone
    + Serialize
    + DeserializeOwned
    + fmt::Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> TypedResource for K where
    K: Resource<DynamicType = (), Scope: ApiScope>
        + Clone
        + Serialize
        + DeserializeOwned
        + fmt::Debug
        + Send
        + Sync
        + 'static
{
}
