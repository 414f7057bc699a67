//! The build script of a generated crate: the `k8s_1_NN` cfg of the Kubernetes version
//! k8s-openapi is built for.

use proc_macro2::TokenStream;
use quote::quote;

use super::versions::KubeVersion;

/// A build script that reads the version k8s-openapi's build script publishes
/// (`cargo::metadata=version=0x00MMNN00`, seen as `DEP_K8S_OPENAPI_<links>_VERSION` by
/// dependents), sets the cfg of that version (`k8s_1_37`) when it is one of `versions`, and
/// declares every version cfg to `check-cfg`.
pub(crate) fn render_build_script(versions: &[KubeVersion]) -> TokenStream {
    version_build_script(versions, "informers", "resources")
}

/// The build script of a crate generated for every Kubernetes version of k8s-openapi: it sets
/// the `k8s_1_NN` cfg of the version k8s-openapi is built for, which the crate's `generated`
/// (`informers`) of `gated` (`resources`) that exist in some versions only are gated on.
///
/// ```
/// use informer_gen::{KubeVersion, version_build_script};
///
/// let versions = [KubeVersion { major: 1, minor: 33 }, KubeVersion { major: 1, minor: 37 }];
/// let script = version_build_script(&versions, "decoders", "types and fields").to_string();
/// assert!(script.contains("k8s_1_33, k8s_1_37"));
/// ```
pub fn version_build_script(versions: &[KubeVersion], generated: &str, gated: &str) -> TokenStream {
    let check_cfg = format!(
        "cargo::rustc-check-cfg=cfg({})",
        versions.iter().map(|v| v.cfg()).collect::<Vec<_>>().join(", ")
    );
    let known = versions.iter().map(|v| {
        let major = proc_macro2::Literal::u32_unsuffixed(v.major);
        let minor = proc_macro2::Literal::u32_unsuffixed(v.minor);
        quote! { (#major, #minor) }
    });
    let first = versions.first().map(ToString::to_string).unwrap_or_default();
    let last = versions.last().map(ToString::to_string).unwrap_or_default();
    let unknown = format!(
        "cargo::warning=k8s-openapi is built for Kubernetes {{major}}.{{minor}}, but these {generated} were generated for {first} to {last}: only the {gated} of every one of those versions are compiled"
    );
    let unpublished = format!(
        "cargo::warning=k8s-openapi did not publish its Kubernetes version (DEP_K8S_OPENAPI_*_VERSION): only the {gated} of every version are compiled"
    );
    let crate_doc = [
        " Sets the cfg of the Kubernetes version k8s-openapi is built for (`k8s_1_NN`), which".to_owned(),
        format!(" the {generated} of {gated} that exist in some versions only are gated on."),
    ];
    let versions_doc = format!(" The versions {generated} were generated for, as (major, minor).");
    quote! {
        #(#![doc = #crate_doc])*

        #[doc = #versions_doc]
        const VERSIONS: &[(u32, u32)] = &[#(#known),*];

        fn main() {
            println!("cargo::rerun-if-changed=build.rs");
            println!(#check_cfg);
            // k8s-openapi publishes its version as 0x00MMNN00 under its `links` name.
            let published = std::env::vars_os().find_map(|(key, value)| {
                let key = key.into_string().ok()?;
                let is_version = key.starts_with("DEP_K8S_OPENAPI_") && key.ends_with("_VERSION");
                is_version.then(|| value.into_string().ok()).flatten()
            });
            let Some(version) = published.and_then(|v| v.parse::<u32>().ok()) else {
                println!(#unpublished);
                return;
            };
            let (major, minor) = ((version >> 16) & 0xff, (version >> 8) & 0xff);
            if VERSIONS.contains(&(major, minor)) {
                println!("cargo::rustc-cfg=k8s_{major}_{minor}");
            } else {
                println!(#unknown);
            }
        }
    }
}
