//! The generated `Informers`: a typed view of the runtime factory, and the group modules.

use proc_macro2::TokenStream;
use quote::quote;

use crate::{Api, Nesting, RenderOptions, render::group::render_group};

/// `Informers`, the factory view with one accessor per group, plus the group modules (inline or
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
            #[inline]
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
        /// The typed informers and listers of this crate's resources, by group, version and
        /// resource (`informers.apps().v1().deployments()`) or by
        /// [`for_resource`](Self::for_resource), on a runtime `SharedInformerFactory`.
        ///
        /// The runtime factory owns the informers (one per type) and starts, syncs and stops
        /// them; this is a typed view of it. Views of several generated crates (built-in
        /// resources and custom resources) over one factory share its informers, its start and
        /// its sync. Dereferences to the factory for `start`, `wait_for_cache_sync` and
        /// `shutdown`.
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct Informers {
            factory: #rt::SharedInformerFactory,
        }

        impl Informers {
            /// The typed view of `factory` (cheap: the factory is shared, not copied).
            #[inline]
            pub fn new(factory: &#rt::SharedInformerFactory) -> Self {
                Self {
                    factory: ::core::clone::Clone::clone(factory),
                }
            }

            /// The runtime factory these informers belong to.
            #[inline]
            pub fn factory(&self) -> &#rt::SharedInformerFactory {
                &self.factory
            }

            #(#accessors)*
        }

        impl ::core::ops::Deref for Informers {
            type Target = #rt::SharedInformerFactory;

            #[inline]
            fn deref(&self) -> &Self::Target {
                &self.factory
            }
        }

        impl ::core::convert::From<#rt::SharedInformerFactory> for Informers {
            #[inline]
            fn from(factory: #rt::SharedInformerFactory) -> Self {
                Self { factory }
            }
        }

        #(#modules)*
    }
}
