//! The derive's expansion against the templates `informer-gen` renders with.

use informer_templates::{RenderOptions, Resource, Scope, render::resource::render_resource};
use quote::quote;

use crate::expand::{expand, model};

fn starts_with_template(expanded: &str, resource: &Resource, options: &RenderOptions) {
    let template = render_resource(resource, options).to_string();
    assert!(
        expanded.starts_with(&template),
        "the expansion does not start with the template output\nexpansion: {expanded}\ntemplate: {template}"
    );
}

#[test]
fn beside_custom_resource_the_expansion_is_the_template_output_for_the_root_type() {
    let input = quote! {
        #[kube(group = "example.com", version = "v1", kind = "Policy", namespaced, shortname = "p")]
        pub struct PolicySpec { pub size: u32 }
    };
    let resource = Resource::new(
        "example.com",
        "v1",
        "Policy",
        "policies",
        Scope::Namespaced,
        syn::parse_quote!(Policy),
    );
    let model = model(input.clone()).expect("valid").expect("a model");
    assert_eq!(model.resource, resource);
    starts_with_template(&expand(input).to_string(), &resource, &RenderOptions::default());
}

#[test]
fn the_root_type_is_named_by_root() {
    let input = quote! {
        #[kube(group = "example.com", version = "v1", kind = "Box", root = "BoxResource")]
        pub struct BoxSpec { pub size: u32 }
    };
    let model = model(input).expect("valid").expect("a model");
    assert_eq!(model.resource.plural, "boxes");
    assert_eq!(model.resource.scope, Scope::Cluster);
    assert_eq!(model.resource.rust_path, syn::parse_quote!(BoxResource));
}

#[test]
fn standalone_the_expansion_is_the_template_output_with_the_runtime_path() {
    let input = quote! {
        #[informer(group = "example.com", version = "v1beta1", namespaced, crate = "crate::rt")]
        pub struct NetworkPolicy { pub metadata: ObjectMeta }
    };
    let resource = Resource::new(
        "example.com",
        "v1beta1",
        "NetworkPolicy",
        "networkpolicies",
        Scope::Namespaced,
        syn::parse_quote!(NetworkPolicy),
    );
    let options = RenderOptions::with_runtime(syn::parse_quote!(crate::rt));
    let model = model(input.clone()).expect("valid").expect("a model");
    assert_eq!(model.resource, resource);
    assert_eq!(model.options, options);
    starts_with_template(&expand(input).to_string(), &resource, &options);
}

#[test]
fn all_mistakes_are_reported_at_once() {
    let input = quote! {
        #[informer(namepsaced, group = 1, kind = "A", kind = "B")]
        pub struct Thing<T> { pub t: T }
    };
    let error = model(input).expect_err("invalid");
    let messages: Vec<String> = error.into_iter().map(|e| e.to_string()).collect();
    assert_eq!(messages.len(), 5, "{messages:#?}");
    assert!(
        messages.iter().any(|m| m.contains("did you mean `namespaced`")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("expected a string literal for `group`"))
    );
    assert!(messages.iter().any(|m| m.contains("duplicate `kind`")));
    assert!(messages.iter().any(|m| m.contains("generic")));
    assert!(messages.iter().any(|m| m.contains("missing `version`")));
}

#[test]
fn malformed_kube_attributes_are_left_to_kube_derive() {
    let input = quote! {
        #[kube(group = 1, version = "v1", kind = "Foo")]
        pub struct FooSpec { pub size: u32 }
    };
    assert!(model(input.clone()).expect("no error of ours").is_none());
    assert!(expand(input).is_empty());
}
