//! The generated `SharedInformerFactory`: a typed face on the runtime factory, and the group
//! modules.

use proc_macro2::TokenStream;
use quote::quote;

use crate::{Api, Nesting, RenderOptions, render::group::render_group};

/// The factory newtype with one accessor per group, plus the group modules (inline or
/// declared). `for_resource` is rendered by
/// [`render_for_resource`](crate::render::for_resource::render_for_resource).
pub fn render_factory(api: &Api, options: &RenderOptions, nesting: Nesting) -> TokenStream {
    let rt = options.codegen();
    let accessors = api.groups.iter().map(|group| {
        let accessor = &group.accessor;
        let type_name = &group.type_name;
        let display = if group.name.is_empty() {
            "core"
        } else {
            &group.name
        };
        let doc = format!(" The informers of the `{display}` API group.");
        let cfg = group.cfg_attrs();
        quote! {
            #cfg
            #[doc = #doc]
            pub fn #accessor(&self) -> self::#accessor::#type_name {
                self::#accessor::#type_name::new(&self.factory)
            }
        }
    });
    let modules = api.groups.iter().map(|group| {
        let accessor = &group.accessor;
        let display = if group.name.is_empty() {
            "core"
        } else {
            &group.name
        };
        let doc = format!(" Informers and listers of the `{display}` API group.");
        let cfg = group.cfg_attrs();
        match nesting {
            Nesting::Inline => {
                let body = render_group(group, options, nesting);
                quote! {
                    #cfg
                    #[doc = #doc]
                    pub mod #accessor {
                        #body
                    }
                }
            }
            Nesting::Files => quote! {
                #cfg
                #[doc = #doc]
                pub mod #accessor;
            },
        }
    });
    quote! {
        /// Shared informers of every generated resource, reached by group, version and
        /// resource (`factory.example().v1().foos()`) or by [`for_resource`](Self::for_resource).
        ///
        /// Dereferences to the runtime factory for `start`, `wait_for_cache_sync` and `shutdown`.
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct SharedInformerFactory {
            factory: #rt::SharedInformerFactory,
        }

        impl SharedInformerFactory {
            /// A factory over all namespaces without resyncs (use
            /// [`from_runtime`](Self::from_runtime) with the runtime's builder for options).
            pub fn new(client: #rt::Client) -> Self {
                Self::from_runtime(#rt::SharedInformerFactory::new(client))
            }

            /// The typed face of `factory`; informers are shared with everything else using it.
            pub fn from_runtime(factory: #rt::SharedInformerFactory) -> Self {
                Self { factory }
            }

            /// The runtime factory.
            pub fn runtime(&self) -> &#rt::SharedInformerFactory {
                &self.factory
            }

            #(#accessors)*
        }

        impl ::core::ops::Deref for SharedInformerFactory {
            type Target = #rt::SharedInformerFactory;

            fn deref(&self) -> &Self::Target {
                &self.factory
            }
        }

        impl ::core::convert::From<#rt::SharedInformerFactory> for SharedInformerFactory {
            fn from(factory: #rt::SharedInformerFactory) -> Self {
                Self::from_runtime(factory)
            }
        }

        #(#modules)*
    }
}
