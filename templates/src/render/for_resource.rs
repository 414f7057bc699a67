//! `Informers::for_resource`: the informer of a resource named at run time.

use proc_macro2::TokenStream;
use quote::quote;

use crate::{Api, RenderOptions};

/// An `impl Informers` block with `for_resource`, a `match` over every resource's
/// group, version and plural (sorted) returning the same informer as the typed accessor (the
/// runtime factory's `informer::<K>()`); an
/// unknown resource is `FactoryError::NoInformerFor`; and `RESOURCES`, the same resources as
/// `(group, version, plural)` under the same `cfg`s; and `for_resource_metadata`, the same
/// switch over the resources' metadata-only informers.
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
    // One arm per resource, returning the generic informer of `informed(resource's type)`.
    let arms = |informed: &dyn Fn(&syn::Path) -> TokenStream| -> Vec<TokenStream> {
        resources
            .iter()
            .map(|((g, v, p), resource)| {
                let cfg = resource.cfg_attrs();
                let ty = informed(&resource.rust_path);
                quote! {
                    #cfg
                    (#g, #v, #p) => {
                        #rt::Ok(self.factory.generic_informer::<#ty>(::core::clone::Clone::clone(gvr)))
                    }
                }
            })
            .collect()
    };
    let metadata_arms = arms(&|ty| quote! { #rt::PartialObjectMeta<#ty> });
    let arms = arms(&|ty| quote! { #ty });
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
            /// # Errors
            ///
            /// `FactoryError::NoInformerFor` when no informer is generated for `gvr`.
            pub fn for_resource(
                &self,
                gvr: &#rt::GroupVersionResource,
            ) -> #rt::Result<#rt::GenericInformer, #rt::FactoryError> {
                match (gvr.group.as_str(), gvr.version.as_str(), gvr.resource.as_str()) {
                    #(#arms)*
                    _ => #rt::Err(#rt::FactoryError::no_informer_for(gvr)),
                }
            }

            /// The metadata-only informer of the resource `gvr` names (its cache holds
            /// `PartialObjectMeta` of the resource's type), as a generic informer: the same
            /// informer as the factory's `metadata_informer` of that type.
            ///
            /// # Errors
            ///
            /// `FactoryError::NoInformerFor` when no informer is generated for `gvr`.
            pub fn for_resource_metadata(
                &self,
                gvr: &#rt::GroupVersionResource,
            ) -> #rt::Result<#rt::GenericInformer, #rt::FactoryError> {
                match (gvr.group.as_str(), gvr.version.as_str(), gvr.resource.as_str()) {
                    #(#metadata_arms)*
                    _ => #rt::Err(#rt::FactoryError::no_informer_for(gvr)),
                }
            }
        }
    }
}
