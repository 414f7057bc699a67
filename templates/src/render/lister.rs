//! The typed listers of one resource: `FooLister` and, when namespaced, `FooNamespaceLister`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::{RenderOptions, Resource, Scope, naming};

/// `FooLister`, plus `FooNamespaceLister` for namespaced resources: a cluster-scoped lister
/// gets objects by name, a namespaced one only through a namespace.
pub fn render_lister(resource: &Resource, options: &RenderOptions) -> TokenStream {
    let rt = options.codegen();
    let ty = &resource.rust_path;
    let cfg = resource.cfg_attrs();
    let kind = &resource.kind;
    let lister = naming::lister_type(kind);
    let doc_lister = format!(
        " Lists and gets `{kind}` objects ({}) from an informer's cache.",
        resource.gvr()
    );
    let doc_list = format!(" The `{kind}` objects in the cache matching `selector`, in all namespaces.");
    let doc_by_index = format!(
        " The `{kind}` objects indexed under `value` by `index` (see `SharedIndexInformer::add_index`); \
         fails if `index` is not registered on the informer."
    );

    let scoped = match resource.scope {
        Scope::Namespaced => {
            let namespace_lister = naming::namespace_lister_type(kind);
            let method = naming::ident(&naming::resource_method(kind, &resource.plural));
            let doc_method = format!(" The `{kind}` objects in `namespace`.");
            let doc_ns_lister =
                format!(" Lists and gets the `{kind}` objects of one namespace from a cache.");
            let doc_ns_list = format!(" The `{kind}` objects in the namespace matching `selector`.");
            let doc_ns_get = format!(" The `{kind}` named `name` in the namespace, if cached.");
            let doc_ns_by_index = format!(
                " The `{kind}` objects of the namespace indexed under `value` by `index`; fails if \
                 `index` is not registered on the informer."
            );
            quote! {
                #cfg
                impl #lister {
                    #[doc = #doc_method]
                    #[inline]
                    pub fn #method(&self, namespace: &str) -> #namespace_lister {
                        #namespace_lister {
                            lister: self.lister.by_namespace(namespace),
                        }
                    }
                }

                #cfg
                #[doc = #doc_ns_lister]
                #[derive(::core::fmt::Debug)]
                pub struct #namespace_lister {
                    lister: #rt::NamespaceLister<#ty>,
                }

                #cfg
                impl #namespace_lister {
                    /// The namespace.
                    #[inline]
                    pub fn namespace(&self) -> &str {
                        self.lister.namespace()
                    }

                    #[doc = #doc_ns_list]
                    #[inline]
                    pub fn list(&self, selector: &#rt::Selector) -> #rt::Vec<#rt::Arc<#ty>> {
                        self.lister.list(selector)
                    }

                    #[doc = #doc_ns_get]
                    #[inline]
                    pub fn get(&self, name: &str) -> #rt::Option<#rt::Arc<#ty>> {
                        self.lister.get(name)
                    }

                    #[doc = #doc_ns_by_index]
                    #[inline]
                    pub fn by_index(
                        &self,
                        index: &#rt::Index<#ty>,
                        value: &str,
                    ) -> #rt::Result<#rt::Vec<#rt::Arc<#ty>>, #rt::CacheError> {
                        self.lister.by_index(index, value)
                    }
                }
            }
        }
        Scope::Cluster => {
            let doc_get = format!(" The `{kind}` named `name`, if cached.");
            quote! {
                #cfg
                impl #lister {
                    #[doc = #doc_get]
                    #[inline]
                    pub fn get(&self, name: &str) -> #rt::Option<#rt::Arc<#ty>> {
                        self.lister.get(name)
                    }
                }
            }
        }
    };

    quote! {
        #cfg
        #[doc = #doc_lister]
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct #lister {
            lister: #rt::Lister<#ty>,
        }

        #cfg
        impl #lister {
            /// A typed lister over `lister`.
            #[inline]
            pub fn new(lister: #rt::Lister<#ty>) -> Self {
                Self { lister }
            }

            #[doc = #doc_list]
            #[inline]
            pub fn list(&self, selector: &#rt::Selector) -> #rt::Vec<#rt::Arc<#ty>> {
                self.lister.list(selector)
            }

            #[doc = #doc_by_index]
            #[inline]
            pub fn by_index(
                &self,
                index: &#rt::Index<#ty>,
                value: &str,
            ) -> #rt::Result<#rt::Vec<#rt::Arc<#ty>>, #rt::CacheError> {
                self.lister.by_index(index, value)
            }

            /// The runtime lister this wraps, for generic code.
            #[inline]
            pub fn as_lister(&self) -> &#rt::Lister<#ty> {
                &self.lister
            }
        }

        #scoped
    }
}
