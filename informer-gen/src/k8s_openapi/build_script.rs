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
        "cargo::warning=k8s-openapi is built for Kubernetes {{major}}.{{minor}}, but these informers were generated for {first} to {last}: only the resources of every one of those versions are compiled"
    );
    quote! {
        //! Sets the cfg of the Kubernetes version k8s-openapi is built for (`k8s_1_NN`), which
        //! the informers of resources that exist in some versions only are gated on.

        /// The versions informers were generated for, as (major, minor).
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
                println!("cargo::warning=k8s-openapi did not publish its Kubernetes version (DEP_K8S_OPENAPI_*_VERSION): only the resources of every version are compiled");
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
