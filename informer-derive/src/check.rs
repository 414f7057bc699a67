//! What the shared attribute parser cannot know: the shape of the item (a struct with named
//! fields, not generic), and the model the templates render from the declared resource.

use informer_templates::{
    RenderOptions, Resource,
    attr::{Declared, Form},
};
use proc_macro2::Span;
use syn::{Data, DeriveInput, Fields, spanned::Spanned};

/// Everything the expansion needs.
#[derive(Debug)]
pub(crate) struct Model {
    /// The resource, as the templates take it.
    pub(crate) resource: Resource,
    /// The runtime path.
    pub(crate) options: RenderOptions,
    /// The form.
    pub(crate) form: Form,
    /// Where the scope is declared (`namespaced`, or the type name): compile-time scope errors
    /// point there.
    pub(crate) scope_span: Span,
}

impl From<Declared> for Model {
    fn from(declared: Declared) -> Self {
        Self {
            options: declared
                .runtime
                .map_or_else(RenderOptions::default, RenderOptions::with_runtime),
            form: declared.form,
            scope_span: declared.scope_span,
            resource: Resource::new(
                declared.group,
                declared.version,
                declared.kind,
                declared.plural,
                declared.scope,
                syn::Path::from(declared.type_name),
            ),
        }
    }
}

/// The problems with the item's shape: enums, unions, tuple and unit structs, generics.
pub(crate) fn shape(input: &DeriveInput) -> Vec<syn::Error> {
    let mut errors = Vec::new();
    match &input.data {
        Data::Enum(data) => errors.push(syn::Error::new(
            data.enum_token.span(),
            "`#[derive(Informer)]` works on structs only, not on enums",
        )),
        Data::Union(data) => errors.push(syn::Error::new(
            data.union_token.span(),
            "`#[derive(Informer)]` works on structs only, not on unions",
        )),
        Data::Struct(data) => match &data.fields {
            Fields::Named(_) => {}
            Fields::Unnamed(fields) => errors.push(syn::Error::new_spanned(
                fields,
                "`#[derive(Informer)]` needs a struct with named fields, not a tuple struct",
            )),
            Fields::Unit => errors.push(syn::Error::new_spanned(
                &input.ident,
                "`#[derive(Informer)]` needs a struct with named fields, not a unit struct",
            )),
        },
    }
    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &input.generics,
            "`#[derive(Informer)]` does not support generic types: an informer is for one concrete resource type",
        ));
    }
    errors
}
