//! The module of one API group: its struct with an accessor per version, and the version
//! modules.

use proc_macro2::TokenStream;
use quote::quote;

use crate::{Group, Nesting, RenderOptions, render::version::render_version};

/// The contents of the group module (`example`).
pub fn render_group(group: &Group, options: &RenderOptions, nesting: Nesting) -> TokenStream {
    let rt = options.codegen();
    let type_name = &group.type_name;
    let display = if group.name.is_empty() {
        "core"
    } else {
        &group.name
    };
    let doc_struct = format!(" The informers of the `{display}` API group, by version.");
    let accessors = group.versions.iter().map(|version| {
        let module = &version.module;
        let version_type = &version.type_name;
        let doc = format!(" The informers of `{display}` version `{}`.", version.name);
        let cfg = version.cfg_attrs();
        quote! {
            #cfg
            #[doc = #doc]
            #[inline]
            pub fn #module(&self) -> self::#module::#version_type {
                self::#module::#version_type::new(&self.factory)
            }
        }
    });
    let modules = group.versions.iter().map(|version| {
        let module = &version.module;
        let doc = format!(
            " Informers and listers of `{display}` version `{}`.",
            version.name
        );
        let cfg = version.cfg_attrs();
        match nesting {
            Nesting::Inline => {
                let body = render_version(version, options, nesting);
                quote! {
                    #cfg
                    #[doc = #doc]
                    pub mod #module {
                        #body
                    }
                }
            }
            Nesting::Files => quote! {
                #cfg
                #[doc = #doc]
                pub mod #module;
            },
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

        #(#modules)*
    }
}
