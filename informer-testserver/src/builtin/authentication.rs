//! The `authentication.k8s.io` group.

use super::description::{BuiltinResource, ServedAs};

pub(crate) const SELF_SUBJECT_REVIEW: BuiltinResource = BuiltinResource::cluster(
    "authentication.k8s.io",
    "v1",
    "SelfSubjectReview",
    "selfsubjectreviews",
)
.served_as(ServedAs::Review);

pub(crate) const TOKEN_REVIEW: BuiltinResource =
    BuiltinResource::cluster("authentication.k8s.io", "v1", "TokenReview", "tokenreviews")
        .served_as(ServedAs::Review);
