//! The module of one group version: its struct with an accessor per resource, and the
//! resources' items (inline) or module declarations (files).

use proc_macro2::TokenStream;
use quote::quote;

use crate::{Nesting, RenderOptions, Version, naming, render::resource::render_resource};

/// The contents of the version module (`example::v1`).
pub fn render_version(version: &Version, options: &RenderOptions, nesting: Nesting) -> TokenStream {
    let rt = options.codegen();
    let type_name = &version.type_name;
    let group_version = if version.group.is_empty() {
        version.name.clone()
    } else {
        format!("{}/{}", version.group, version.name)
    };
    let doc_struct = format!(" The informers of `{group_version}`.");
    let accessors = version.resources.iter().map(|resource| {
        let cfg = resource.cfg_attrs();
        let method = naming::ident(&naming::resource_method(&resource.kind, &resource.plural));
        let informer = naming::informer_type(&resource.kind);
        let doc = format!(
            " The shared informer and lister of `{}` ({}).",
            resource.kind, resource.plural
        );
        quote! {
            #cfg
            #[doc = #doc]
            #[inline]
            pub fn #method(&self) -> #informer {
                #informer::new(&self.factory)
            }
        }
    });
    let resources = version.resources.iter().map(|resource| match nesting {
        Nesting::Inline => render_resource(resource, options),
        Nesting::Files => {
            let cfg = resource.cfg_attrs();
            let module = naming::ident(&naming::kind_snake(&resource.kind));
            quote! {
                #cfg
                mod #module;
                #cfg
                pub use self::#module::*;
            }
        }
    });
    quote! {
        #[doc = #doc_struct]
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct #type_name {
            factory: #rt::SharedInformerFactory,
        }

        impl #type_name {
            /// Access through `factory`.
            #[inline]
            pub fn new(factory: &#rt::SharedInformerFactory) -> Self {
                Self {
                    factory: ::core::clone::Clone::clone(factory),
                }
            }

            #(#accessors)*
        }

        #(#resources)*
    }
}
