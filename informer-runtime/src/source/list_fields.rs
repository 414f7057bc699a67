//! The fields of a list answer, read where they are whatever the wire format (JSON or CBOR),
//! and the `ObjectList` they make.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::core::{ObjectList, TypeMeta};
use serde::de::DeserializeOwned;

/// A list's fields, each read where it is.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", bound = "K: DeserializeOwned")]
pub(crate) struct ListFields<K> {
    api_version: Option<String>,
    kind: Option<String>,
    #[serde(default)]
    metadata: ListMeta,
    items: Option<Vec<K>>,
}

impl<K: Clone> ListFields<K> {
    /// The list, typed as `ObjectList` reads one without its kind: a `v1` `List`.
    pub(crate) fn into_object_list(self) -> ObjectList<K> {
        ObjectList {
            types: match (self.api_version, self.kind) {
                (Some(api_version), Some(kind)) => TypeMeta { api_version, kind },
                _ => TypeMeta {
                    api_version: "v1".to_owned(),
                    kind: "List".to_owned(),
                },
            },
            metadata: self.metadata,
            items: self.items.unwrap_or_default(),
        }
    }
}
