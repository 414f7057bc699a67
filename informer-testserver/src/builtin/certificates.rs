//! The `certificates.k8s.io` group.

use super::description::BuiltinResource;
use super::subresource::CSR_SUBRESOURCES;

pub(crate) const CERTIFICATE_SIGNING_REQUEST: BuiltinResource = BuiltinResource::cluster(
    "certificates.k8s.io",
    "v1",
    "CertificateSigningRequest",
    "certificatesigningrequests",
)
.short_names(&["csr"])
.status()
.subresources(CSR_SUBRESOURCES);

pub(crate) const CLUSTER_TRUST_BUNDLE: BuiltinResource = BuiltinResource::cluster(
    "certificates.k8s.io",
    "v1",
    "ClusterTrustBundle",
    "clustertrustbundles",
);

pub(crate) const POD_CERTIFICATE_REQUEST: BuiltinResource = BuiltinResource::namespaced(
    "certificates.k8s.io",
    "v1",
    "PodCertificateRequest",
    "podcertificaterequests",
)
.status();
