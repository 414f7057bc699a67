//! The resource model: what generated code is generated from.

use proc_macro2::TokenStream;
use quote::quote;

/// Whether a resource lives in namespaces or in the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Namespaced (`NamespaceResourceScope`): listers have a per-namespace lister.
    Namespaced,
    /// Cluster-scoped (`ClusterResourceScope`): listers get objects by name.
    Cluster,
}

/// One listable and watchable resource with a Rust type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// The API group (`""` for the core group).
    pub group: String,
    /// The API version, such as `v1beta1`.
    pub version: String,
    /// The kind, such as `Foo`.
    pub kind: String,
    /// The plural resource name (the URL path segment), such as `foos`.
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// The absolute Rust path of the type, such as `::sample_crds::v1::Foo`.
    pub rust_path: syn::Path,
    /// The predicates of the `#[cfg(...)]` attributes the type sits behind (its own and its
    /// modules'), carried over to every generated item of the resource.
    pub cfgs: Vec<syn::Meta>,
}

impl Resource {
    /// A resource without `cfg` predicates.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
        plural: impl Into<String>,
        scope: Scope,
        rust_path: syn::Path,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            scope,
            rust_path,
            cfgs: Vec::new(),
        }
    }

    /// The resource behind `cfgs` as well.
    #[must_use]
    pub fn with_cfgs(mut self, cfgs: Vec<syn::Meta>) -> Self {
        self.cfgs = cfgs;
        self
    }

    /// `group/version/plural`, with `core` for the core group.
    pub fn gvr(&self) -> String {
        let group = if self.group.is_empty() {
            "core"
        } else {
            &self.group
        };
        format!("{group}/{}/{}", self.version, self.plural)
    }

    /// The `#[cfg(...)]` attributes to put on each generated item of the resource.
    pub fn cfg_attrs(&self) -> TokenStream {
        let cfgs = &self.cfgs;
        quote! { #(#[cfg(#cfgs)])* }
    }
}

/// How generated code reaches its runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderOptions {
    /// The path of the runtime crate, `::informer_runtime` by default.
    pub runtime: syn::Path,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            runtime: syn::parse_quote!(::informer_runtime),
        }
    }
}

impl RenderOptions {
    /// Options with the runtime at `runtime`, such as `::my_runtime` or `crate::rt`.
    pub fn with_runtime(runtime: syn::Path) -> Self {
        Self { runtime }
    }

    /// `<runtime>::__codegen`: the only way generated code reaches the runtime, kube and std.
    pub fn codegen(&self) -> TokenStream {
        let runtime = &self.runtime;
        quote! { #runtime::__codegen }
    }
}

/// Where the children of a generated module go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nesting {
    /// Inline (`pub mod v1 { ... }`): one file, for `include!` from a build script.
    Inline,
    /// In files of their own (`pub mod v1;`): a directory tree.
    Files,
}
