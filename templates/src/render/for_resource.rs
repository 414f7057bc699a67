//! `SharedInformerFactory::for_resource`: the informer of a resource named at run time.

use proc_macro2::TokenStream;
use quote::quote;

use crate::{Api, RenderOptions, naming};

/// An `impl SharedInformerFactory` block with `for_resource`, a `match` over every resource's
/// group, version and plural (sorted) returning the same informer as the typed accessor; an
/// unknown resource is `FactoryError::NoInformerFor`.
pub fn render_for_resource(api: &Api, options: &RenderOptions) -> TokenStream {
    let rt = options.codegen();
    let mut arms = Vec::new();
    for group in &api.groups {
        for version in &group.versions {
            for resource in &version.resources {
                let cfg = resource.cfg_attrs();
                let (g, v, p) = (&resource.group, &resource.version, &resource.plural);
                let accessor = &group.accessor;
                let module = &version.module;
                let method = naming::ident(&naming::resource_method(&resource.kind, &resource.plural));
                let key = (g.clone(), v.clone(), p.clone());
                arms.push((
                    key,
                    quote! {
                        #cfg
                        (#g, #v, #p) => {
                            let informer = self.#accessor().#module().#method().informer();
                            #rt::Ok(self.factory.generic_informer_for(
                                ::core::clone::Clone::clone(gvr),
                                move |_| informer,
                            ))
                        }
                    },
                ));
            }
        }
    }
    arms.sort_by(|a, b| a.0.cmp(&b.0));
    let arms = arms.into_iter().map(|(_, arm)| arm);
    quote! {
        impl SharedInformerFactory {
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
        }
    }
}
