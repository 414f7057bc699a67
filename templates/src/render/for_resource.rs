//! `Informers::for_resource`: the informer of a resource named at run time.

use proc_macro2::TokenStream;
use quote::quote;

use crate::{Api, RenderOptions};

/// An `impl Informers` block with `RESOURCES`, the `(group, version, plural)` of every
/// resource (sorted, under the resources' `cfg`s), and `for_resource` and
/// `for_resource_metadata`, which look `gvr` up in a table of the same resources (a binary
/// search in the runtime's `generic_informer_from`) and return the same informer as the typed
/// accessor (the runtime factory's `unscoped_informer::<K>()`), or its metadata-only informer; an
/// unknown resource is `FactoryError::NoInformerFor`.
///
/// The tables are constants inside `#[inline]` functions: the crate that defines them compiles
/// no informer for them, and a crate that calls `for_resource` compiles the informers of every
/// resource in its table (and not those of `for_resource_metadata` unless it calls that too).
pub fn render_for_resource(api: &Api, options: &RenderOptions) -> TokenStream {
    let rt = options.codegen();
    let mut resources: Vec<_> = api
        .groups
        .iter()
        .flat_map(|group| &group.versions)
        .flat_map(|version| &version.resources)
        .map(|r| ((r.group.clone(), r.version.clone(), r.plural.clone()), r))
        .collect();
    resources.sort_by(|a, b| a.0.cmp(&b.0));
    // One entry per resource, with the generic informer of `informed(resource's type)`.
    let table = |informed: &dyn Fn(&syn::Path) -> TokenStream| -> Vec<TokenStream> {
        resources
            .iter()
            .map(|((g, v, p), resource)| {
                let cfg = resource.cfg_attrs();
                let ty = informed(&resource.rust_path);
                quote! {
                    #cfg
                    (#g, #v, #p, #rt::SharedInformerFactory::generic_informer::<#ty>),
                }
            })
            .collect()
    };
    let metadata_table = table(&|ty| quote! { #rt::PartialObjectMeta<#ty> });
    let table = table(&|ty| quote! { #ty });
    let entries = resources.iter().map(|((g, v, p), resource)| {
        let cfg = resource.cfg_attrs();
        quote! { #cfg (#g, #v, #p), }
    });
    quote! {
        impl Informers {
            /// The `(group, version, plural)` of every resource with an informer here (the
            /// core group is `""`), sorted: each one [`for_resource`](Self::for_resource)
            /// resolves.
            pub const RESOURCES: &'static [(&'static str, &'static str, &'static str)] = &[
                #(#entries)*
            ];

            /// The informer of the resource `gvr` names, as a generic informer: the same
            /// informer (and cache) as the typed accessor returns.
            ///
            /// Compiles the informer of every resource here into the crate that calls it.
            ///
            /// # Errors
            ///
            /// `FactoryError::NoInformerFor` when no informer is generated for `gvr`.
            #[inline]
            pub fn for_resource(
                &self,
                gvr: &#rt::GroupVersionResource,
            ) -> #rt::Result<#rt::GenericInformer, #rt::FactoryError> {
                const INFORMERS: &[#rt::GenericInformerEntry] = &[
                    #(#table)*
                ];
                #rt::generic_informer_from(&self.factory, INFORMERS, gvr)
            }

            /// The metadata-only informer of the resource `gvr` names (its cache holds
            /// `PartialObjectMeta` of the resource's type), as a generic informer: the same
            /// informer as the factory's `metadata_informer` of that type.
            ///
            /// Compiles the metadata-only informer of every resource here into the crate that
            /// calls it.
            ///
            /// # Errors
            ///
            /// `FactoryError::NoInformerFor` when no informer is generated for `gvr`.
            #[inline]
            pub fn for_resource_metadata(
                &self,
                gvr: &#rt::GroupVersionResource,
            ) -> #rt::Result<#rt::GenericInformer, #rt::FactoryError> {
                const INFORMERS: &[#rt::GenericInformerEntry] = &[
                    #(#metadata_table)*
                ];
                #rt::generic_informer_from(&self.factory, INFORMERS, gvr)
            }
        }
    }
}
