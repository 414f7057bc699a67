//! The informer of one resource: `FooInformer` and the standalone constructors.

use proc_macro2::TokenStream;
use quote::quote;

use crate::{RenderOptions, Resource, Scope, naming};

/// `FooInformer` (shared through the factory), `new_foo_informer` and
/// `new_filtered_foo_informer` (client-go's standalone, unshared constructors).
pub fn render_informer(resource: &Resource, options: &RenderOptions) -> TokenStream {
    let rt = options.codegen();
    let ty = &resource.rust_path;
    let cfg = resource.cfg_attrs();
    let kind = &resource.kind;
    let plural = &resource.plural;
    let gvk = format!("`{}` ({})", kind, resource.gvr());
    let informer = naming::informer_type(kind);
    let lister = naming::lister_type(kind);
    let new_fn = naming::new_informer_fn(kind);
    let new_filtered_fn = naming::new_filtered_informer_fn(kind);

    let doc_struct = format!(" Access to the shared informer and lister of {gvk}.");
    let doc_informer = format!(
        " The factory's informer of `{kind}`: one per factory, created on first use and started by the factory's `start`."
    );
    let doc_lister = format!(" A lister over the cache of the factory's `{kind}` informer.");
    let doc_new_filtered_tail = "The informer is not shared with any factory: prefer the factory's accessor to share one informer and its cache.";

    let (scope_params, scope_args, api) = match resource.scope {
        Scope::Namespaced => (
            quote! { namespace: #rt::Option<&str>, },
            quote! { namespace, },
            quote! { <<#ty as #rt::Resource>::Scope as #rt::ApiScope>::api::<#ty>(client, namespace) },
        ),
        Scope::Cluster => (quote! {}, quote! {}, quote! { #rt::Api::<#ty>::all(client) }),
    };
    let doc_new = match resource.scope {
        Scope::Namespaced => format!(
            " A new informer of `{kind}` in `namespace` (`None`: all namespaces). {doc_new_filtered_tail}"
        ),
        Scope::Cluster => format!(" A new informer of the cluster-scoped `{kind}`. {doc_new_filtered_tail}"),
    };
    let doc_new_filtered = format!(
        " Like [`{new_fn}`], with `tweak` changing every list and watch request (such as adding a label selector)."
    );

    quote! {
        #cfg
        #[doc = #doc_struct]
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct #informer {
            factory: #rt::SharedInformerFactory,
        }

        #cfg
        impl #informer {
            /// Access through `factory` (cheap: the factory is shared).
            #[inline]
            pub fn new(factory: &#rt::SharedInformerFactory) -> Self {
                Self {
                    factory: ::core::clone::Clone::clone(factory),
                }
            }

            #[doc = #doc_informer]
            #[inline]
            pub fn informer(&self) -> #rt::SharedIndexInformer<#ty> {
                self.factory.unscoped_informer::<#ty>()
            }

            #[doc = #doc_lister]
            #[inline]
            pub fn lister(&self) -> #lister {
                #lister::new(self.informer().lister())
            }
        }

        #cfg
        #[doc = #doc_new]
        #[inline]
        pub fn #new_fn(
            client: #rt::Client,
            #scope_params
            resync_period: #rt::Duration,
            indexers: #rt::Indexers<#ty>,
        ) -> #rt::SharedIndexInformer<#ty> {
            #new_filtered_fn(client, #scope_args resync_period, indexers, #rt::None)
        }

        #cfg
        #[doc = #doc_new_filtered]
        #[inline]
        pub fn #new_filtered_fn(
            client: #rt::Client,
            #scope_params
            resync_period: #rt::Duration,
            indexers: #rt::Indexers<#ty>,
            tweak: #rt::Option<#rt::TweakListOptions>,
        ) -> #rt::SharedIndexInformer<#ty> {
            let api = #api;
            let lister_watcher = #rt::KubeListerWatcher::new(api).shared_tweak_list_options(tweak);
            #rt::SharedIndexInformer::new(
                lister_watcher,
                #rt::InformerConfig {
                    resync_period,
                    indexers,
                    description: #rt::Some(#rt::String::from(#plural)),
                    ..::core::default::Default::default()
                },
            )
        }
    }
}
