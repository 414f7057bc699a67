//! The `authorization.k8s.io` group.

use super::description::{BuiltinResource, ServedAs};

pub(crate) const LOCAL_SUBJECT_ACCESS_REVIEW: BuiltinResource = BuiltinResource::namespaced(
    "authorization.k8s.io",
    "v1",
    "LocalSubjectAccessReview",
    "localsubjectaccessreviews",
)
.served_as(ServedAs::Review);

pub(crate) const SELF_SUBJECT_ACCESS_REVIEW: BuiltinResource = BuiltinResource::cluster(
    "authorization.k8s.io",
    "v1",
    "SelfSubjectAccessReview",
    "selfsubjectaccessreviews",
)
.served_as(ServedAs::Review);

pub(crate) const SELF_SUBJECT_RULES_REVIEW: BuiltinResource = BuiltinResource::cluster(
    "authorization.k8s.io",
    "v1",
    "SelfSubjectRulesReview",
    "selfsubjectrulesreviews",
)
.served_as(ServedAs::Review);

pub(crate) const SUBJECT_ACCESS_REVIEW: BuiltinResource = BuiltinResource::cluster(
    "authorization.k8s.io",
    "v1",
    "SubjectAccessReview",
    "subjectaccessreviews",
)
.served_as(ServedAs::Review);
