//! The `admissionregistration.k8s.io` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const MUTATING_ADMISSION_POLICY: BuiltinResource = BuiltinResource::cluster(
    "admissionregistration.k8s.io",
    "v1",
    "MutatingAdmissionPolicy",
    "mutatingadmissionpolicies",
)
.categories(&["api-extensions"])
.generation(Generation::Spec);

pub(crate) const MUTATING_ADMISSION_POLICY_BINDING: BuiltinResource = BuiltinResource::cluster(
    "admissionregistration.k8s.io",
    "v1",
    "MutatingAdmissionPolicyBinding",
    "mutatingadmissionpolicybindings",
)
.categories(&["api-extensions"])
.generation(Generation::Spec);

pub(crate) const MUTATING_WEBHOOK_CONFIGURATION: BuiltinResource = BuiltinResource::cluster(
    "admissionregistration.k8s.io",
    "v1",
    "MutatingWebhookConfiguration",
    "mutatingwebhookconfigurations",
)
.categories(&["api-extensions"])
.generation(Generation::Spec);

pub(crate) const VALIDATING_ADMISSION_POLICY: BuiltinResource = BuiltinResource::cluster(
    "admissionregistration.k8s.io",
    "v1",
    "ValidatingAdmissionPolicy",
    "validatingadmissionpolicies",
)
.categories(&["api-extensions"])
.status()
.generation(Generation::Spec);

pub(crate) const VALIDATING_ADMISSION_POLICY_BINDING: BuiltinResource = BuiltinResource::cluster(
    "admissionregistration.k8s.io",
    "v1",
    "ValidatingAdmissionPolicyBinding",
    "validatingadmissionpolicybindings",
)
.categories(&["api-extensions"])
.generation(Generation::Spec);

pub(crate) const VALIDATING_WEBHOOK_CONFIGURATION: BuiltinResource = BuiltinResource::cluster(
    "admissionregistration.k8s.io",
    "v1",
    "ValidatingWebhookConfiguration",
    "validatingwebhookconfigurations",
)
.categories(&["api-extensions"])
.generation(Generation::Spec);
