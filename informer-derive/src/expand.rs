//! The expansion: attributes → checks → the resource model → the shared templates, plus the
//! checks that the type is the resource it claims to be.

use informer_templates::{
    Scope,
    attr::{self, Ctxt, Form, InformerAttrs, KubeAttrs, KubeMistakes},
    naming,
    render::resource::render_resource,
};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::DeriveInput;

use crate::check::{self, Model};

/// Expands `#[derive(Informer)]` on `input`: the generated items, or `compile_error!`s, one
/// per mistake, each at its token.
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match model(input) {
        Ok(Some(model)) => emit(&model),
        Ok(None) => TokenStream::new(),
        Err(error) => error.into_compile_error(),
    }
}

/// The resource model of `input`, every mistake combined into one error; `None` when the
/// `#[kube(...)]` attributes are kube-derive's to report.
pub(crate) fn model(input: TokenStream) -> syn::Result<Option<Model>> {
    let input: DeriveInput = syn::parse2(input)?;
    let shape = check::shape(&input);
    let mut cx = Ctxt::new();
    let informer = InformerAttrs::from_attrs(&mut cx, &input.attrs);
    let kube = KubeAttrs::from_attrs(&input.attrs);
    // The derive cannot see `#[derive(CustomResource)]` beside it: `#[kube(...)]` tells.
    let declared = match attr::form_of(&kube, false) {
        Form::CustomResource => attr::custom_resource(
            &mut cx,
            &input.ident,
            &kube,
            &informer,
            KubeMistakes::LeaveToKubeDerive,
        ),
        Form::Standalone => attr::standalone(&mut cx, &input.ident, &informer),
    };
    let mut errors = shape.into_iter().chain(cx.check().err());
    if let Some(mut combined) = errors.next() {
        for error in errors {
            combined.combine(error);
        }
        return Err(combined);
    }
    Ok(declared.map(Model::from))
}

/// The template output for the model, followed by the checks.
pub(crate) fn emit(model: &Model) -> TokenStream {
    let rendered = render_resource(&model.resource, &model.options);
    let checks = checks(model);
    quote! {
        #rendered
        #checks
    }
}

/// The checks that the type is the resource the attributes declare.
///
/// - At compile time, for both forms: `<T as kube::Resource>::Scope` is the declared scope
///   (`NamespaceResourceScope` with `namespaced`, else `ClusterResourceScope`) and
///   `DynamicType` is `()`; a mismatch is a type error at `namespaced` (or the type name).
/// - At run time, standalone only: `FooInformer::verify_resource()` compares group, version,
///   kind and plural with what the `Resource` impl returns (those are not `const fn`s).
fn checks(model: &Model) -> TokenStream {
    let rt = model.options.codegen();
    let resource = &model.resource;
    let ty = &resource.rust_path;
    let span = model.scope_span;
    let scope = match resource.scope {
        Scope::Namespaced => quote_spanned!(span=> #rt::kube::core::NamespaceResourceScope),
        Scope::Cluster => quote_spanned!(span=> #rt::kube::core::ClusterResourceScope),
    };
    let type_span = syn::spanned::Spanned::span(ty);
    let same_scope = quote_spanned!(span=> |scope| scope);
    let unit_dynamic_type = quote_spanned!(type_span=> |dynamic_type| dynamic_type);
    let compile_time = quote! {
        const _: fn(<#ty as #rt::Resource>::Scope) -> #scope = #same_scope;
        const _: fn(()) -> <#ty as #rt::Resource>::DynamicType = #unit_dynamic_type;
    };
    if model.form == Form::CustomResource {
        return compile_time;
    }
    let informer = naming::informer_type(&resource.kind);
    let (group, version, kind, plural) = (
        &resource.group,
        &resource.version,
        &resource.kind,
        &resource.plural,
    );
    let type_name = quote!(#ty).to_string();
    let doc = format!(
        " Checks that the `kube::Resource` impl of `{type_name}` names the resource `#[informer(...)]` declares: group `{group}`, version `{version}`, kind `{kind}`, plural `{plural}`. Returns every disagreement in one message. Requests always go where the `Resource` impl says; a disagreement means names, docs and generator output are wrong."
    );
    quote! {
        #compile_time

        impl #informer {
            #[doc = #doc]
            pub fn verify_resource() -> #rt::Result<(), #rt::String> {
                let mut mismatches = #rt::String::new();
                let pairs = [
                    ("group", #group, <#ty as #rt::Resource>::group(&())),
                    ("version", #version, <#ty as #rt::Resource>::version(&())),
                    ("kind", #kind, <#ty as #rt::Resource>::kind(&())),
                    ("plural", #plural, <#ty as #rt::Resource>::plural(&())),
                ];
                for (what, declared, actual) in pairs {
                    if actual != declared {
                        let separator = if mismatches.is_empty() { "" } else { "; " };
                        let _ = ::core::fmt::Write::write_fmt(
                            &mut mismatches,
                            ::core::format_args!(
                                "{separator}{what} is `{declared}` in `#[informer(...)]` but `{actual}` in the `kube::Resource` impl of `{}`",
                                #type_name
                            ),
                        );
                    }
                }
                if mismatches.is_empty() {
                    #rt::Ok(())
                } else {
                    #rt::Err(mismatches)
                }
            }
        }
    }
}
