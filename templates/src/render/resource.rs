//! Everything generated for one resource.

use proc_macro2::TokenStream;
use quote::quote;

use crate::{
    RenderOptions, Resource,
    render::{informer::render_informer, lister::render_lister},
};

/// The informer and lister items of `resource`: self-contained items that need only the
/// runtime (at `options.runtime`) and the resource's type, so they can go into any module of
/// any crate.
pub fn render_resource(resource: &Resource, options: &RenderOptions) -> TokenStream {
    let informer = render_informer(resource, options);
    let lister = render_lister(resource, options);
    quote! {
        #informer
        #lister
    }
}
