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
    let mut arms = Vec::new();
    let mut metadata_arms = Vec::new();
    let mut entries = Vec::new();
    for group in &api.groups {
        for version in &group.versions {
            for resource in &version.resources {
                let cfg = resource.cfg_attrs();
                let (g, v, p) = (&resource.group, &resource.version, &resource.plural);
                let ty = &resource.rust_path;
                let key = (g.clone(), v.clone(), p.clone());
                entries.push((key.clone(), quote! { #cfg (#g, #v, #p), }));
                arms.push((
                    key.clone(),
                    quote! {
                        #cfg
                        (#g, #v, #p) => {
                            #rt::Ok(self.factory.generic_informer::<#ty>(::core::clone::Clone::clone(gvr)))
                        }
                    },
                ));
                metadata_arms.push((
                    key,
                    quote! {
                        #cfg
                        (#g, #v, #p) => {
                            #rt::Ok(self.factory.generic_informer::<#rt::PartialObjectMeta<#ty>>(
                                ::core::clone::Clone::clone(gvr),
                            ))
                        }
                    },
                ));
            }
        }
    }
    arms.sort_by(|a, b| a.0.cmp(&b.0));
    let arms = arms.into_iter().map(|(_, arm)| arm);
    metadata_arms.sort_by(|a, b| a.0.cmp(&b.0));
    let metadata_arms = metadata_arms.into_iter().map(|(_, arm)| arm);
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let entries = entries.into_iter().map(|(_, entry)| entry);
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
