//! The shared parser on good inputs, on each mistake, and on several mistakes at once.

use proc_macro2::TokenStream;
use syn::{Attribute, Ident, ItemStruct};

use super::*;
use crate::Scope;

fn item(tokens: TokenStream) -> ItemStruct {
    syn::parse2(tokens).expect("an item")
}

/// The declaration and the mistakes of a standalone item.
fn standalone_of(tokens: TokenStream) -> (Option<Declared>, Vec<Error>) {
    let input = item(tokens);
    let mut cx = Ctxt::new();
    let informer = InformerAttrs::from_attrs(&mut cx, &input.attrs);
    let declared = standalone(&mut cx, &input.ident, &informer);
    (declared, errors(cx))
}

/// The declaration and the mistakes of an item beside `CustomResource`.
fn custom_of(tokens: TokenStream, mistakes: KubeMistakes) -> (Option<Declared>, Vec<Error>) {
    let input = item(tokens);
    let mut cx = Ctxt::new();
    let informer = InformerAttrs::from_attrs(&mut cx, &input.attrs);
    let kube = KubeAttrs::from_attrs(&input.attrs);
    let declared = custom_resource(&mut cx, &input.ident, &kube, &informer, mistakes);
    (declared, errors(cx))
}

fn errors(cx: Ctxt) -> Vec<Error> {
    cx.into_diagnostics().into_iter().map(|d| d.error).collect()
}

fn informer_errors(attrs: TokenStream) -> Vec<Error> {
    let input = item(quote::quote! { #attrs pub struct Foo {} });
    let mut cx = Ctxt::new();
    InformerAttrs::from_attrs(&mut cx, &input.attrs);
    errors(cx)
}

#[test]
fn standalone_keys_are_read_and_defaults_applied() {
    let (declared, errors) = standalone_of(quote::quote! {
        #[informer(group = "example.com", version = "v1beta1", namespaced, crate = "crate::rt")]
        pub struct NetworkPolicy {}
    });
    assert!(errors.is_empty(), "{errors:?}");
    let declared = declared.expect("declared");
    assert_eq!(declared.form, Form::Standalone);
    assert_eq!(
        (declared.group.as_str(), declared.version.as_str()),
        ("example.com", "v1beta1")
    );
    assert_eq!(declared.kind, "NetworkPolicy");
    assert_eq!(declared.plural, "networkpolicies");
    assert_eq!(declared.scope, Scope::Namespaced);
    assert_eq!(declared.type_name, "NetworkPolicy");
    assert_eq!(declared.runtime, Some(syn::parse_quote!(crate::rt)));
}

#[test]
fn singular_is_the_base_of_the_inferred_plural_and_flags_take_booleans() {
    let (declared, errors) = standalone_of(quote::quote! {
        #[informer(group = "", version = "v1", kind = "Mouse", singular = "mice")]
        #[informer(namespaced = false)]
        pub struct Mouse {}
    });
    assert!(errors.is_empty(), "{errors:?}");
    let declared = declared.expect("declared");
    assert_eq!(declared.plural, "mices");
    assert_eq!(declared.scope, Scope::Cluster);
    let (declared, _) = standalone_of(quote::quote! {
        #[informer(group = "g", version = "v1", plural = "mice")]
        pub struct Mouse {}
    });
    assert_eq!(declared.expect("declared").plural, "mice");
}

#[test]
fn kube_names_the_root_type_and_skips_keys_it_owns() {
    let (declared, errors) = custom_of(
        quote::quote! {
            #[kube(group = "example.com", version = "v2", kind = "Box", root = "BoxV2", namespaced,
                   status = "BoxStatus", printcolumn = r#"{"name":"x"}"#, crates(kube_core = "::k"), shortname = "b")]
            #[informer(crate = "::rt", plural = "boxes")]
            pub struct BoxSpec {}
        },
        KubeMistakes::Report,
    );
    assert!(errors.is_empty(), "{errors:?}");
    let declared = declared.expect("declared");
    assert_eq!(declared.form, Form::CustomResource);
    assert_eq!(declared.type_name, "BoxV2");
    assert_eq!(declared.plural, "boxes");
    assert_eq!(declared.scope, Scope::Namespaced);
    assert_eq!(declared.runtime, Some(syn::parse_quote!(::rt)));
}

#[test]
fn kube_singular_and_plural_are_understood() {
    let (declared, _) = custom_of(
        quote::quote! {
            #[kube(group = "g", version = "v1", kind = "Goose", singular = "geese")]
            pub struct GooseSpec {}
        },
        KubeMistakes::Report,
    );
    assert_eq!(declared.expect("declared").plural, "geeses");
    let (declared, _) = custom_of(
        quote::quote! {
            #[kube(group = "g", version = "v1", kind = "Endpoints", plural = "endpoints")]
            pub struct EndpointsSpec {}
        },
        KubeMistakes::Report,
    );
    assert_eq!(declared.expect("declared").plural, "endpoints");
}

#[test]
fn unknown_informer_keys_are_mistakes_with_suggestions() {
    let errors = informer_errors(quote::quote! { #[informer(namepsaced, colour = "blue", a::b)] });
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(
        messages[0],
        "unknown key `namepsaced` in `#[informer(...)]`, did you mean `namespaced`?"
    );
    assert_eq!(
        messages[1],
        "unknown key `colour` in `#[informer(...)]`; expected one of `group`, `version`, `kind`, `plural`, `singular`, `namespaced`, `crate`"
    );
    assert!(messages[2].starts_with("unknown key `a::b`"), "{messages:#?}");
}

#[test]
fn ill_typed_values_are_mistakes() {
    let errors = informer_errors(quote::quote! {
        #[informer(group = 1, version, namespaced = "yes", kind(x), crate = "not a path")]
    });
    assert_eq!(
        errors,
        [
            Error::NotAString {
                attr: "informer",
                key: "group"
            },
            Error::MissingString {
                attr: "informer",
                key: "version"
            },
            Error::NotABool {
                attr: "informer",
                key: "namespaced"
            },
            Error::MissingString {
                attr: "informer",
                key: "kind"
            },
            Error::NotAPath {
                key: "crate",
                value: "not a path".to_owned()
            },
        ]
    );
    let errors = informer_errors(quote::quote! { #[informer(namespaced(true))] });
    assert_eq!(
        errors,
        [Error::FlagForm {
            attr: "informer",
            key: "namespaced"
        }]
    );
}

#[test]
fn duplicate_keys_are_mistakes_across_attributes() {
    let errors = informer_errors(quote::quote! {
        #[informer(group = "a", kind = "A", kind = "B")]
        #[informer(group = "b")]
    });
    assert_eq!(
        errors,
        [
            Error::Duplicate {
                attr: "informer",
                key: "kind"
            },
            Error::Duplicate {
                attr: "informer",
                key: "group"
            },
        ]
    );
}

#[test]
fn syntax_errors_are_recorded_not_panicked_on() {
    let errors = informer_errors(quote::quote! { #[informer(= "x")] });
    assert!(matches!(errors.as_slice(), [Error::Syntax { .. }]), "{errors:?}");
    let errors = informer_errors(quote::quote! { #[informer] });
    assert!(matches!(errors.as_slice(), [Error::Syntax { .. }]), "{errors:?}");
}

#[test]
fn missing_standalone_keys_are_mistakes_unless_written_badly() {
    let (declared, errors) = standalone_of(quote::quote! { pub struct Foo {} });
    assert!(declared.is_none());
    assert_eq!(errors, [Error::MissingInformer]);
    let (_, errors) = standalone_of(quote::quote! { #[informer(kind = "Foo")] pub struct Foo {} });
    assert_eq!(
        errors,
        [Error::MissingInformerKeys {
            keys: "`group` and `version`".to_owned()
        }]
    );
    let (_, errors) = standalone_of(quote::quote! { #[informer(group = 1)] pub struct Foo {} });
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(
        errors[1],
        Error::MissingInformerKeys {
            keys: "`version`".to_owned()
        }
    );
}

#[test]
fn kube_mistakes_are_reported_or_left_to_kube_derive() {
    let tokens = quote::quote! {
        #[kube(group = 42, version = "v1", root = "not a type")]
        pub struct FooSpec {}
    };
    let (declared, errors) = custom_of(tokens.clone(), KubeMistakes::Report);
    assert!(declared.is_none());
    assert_eq!(
        errors,
        [
            Error::NotAString {
                attr: "kube",
                key: "group"
            },
            Error::MissingKubeKeys {
                keys: "`kind`".to_owned()
            },
            Error::NotATypeName {
                attr: "kube",
                key: "root",
                value: "not a type".to_owned()
            },
        ]
    );
    assert!(errors[1].to_string().contains(symbol::KUBE_FORM));
    let (declared, errors) = custom_of(tokens, KubeMistakes::LeaveToKubeDerive);
    assert!(declared.is_none());
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn informer_keys_must_agree_with_kube() {
    let (declared, errors) = custom_of(
        quote::quote! {
            #[kube(group = "a.example.com", version = "v1", kind = "Policy")]
            #[informer(group = "b.example.com", version = "v1", plural = "policys", singular = "p", namespaced)]
            pub struct PolicySpec {}
        },
        KubeMistakes::Report,
    );
    assert!(declared.is_some());
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "`#[informer(group = \"b.example.com\")]` contradicts `#[kube(group = \"a.example.com\")]`",
            "`#[informer(plural = \"policys\")]` contradicts the plural kube-derive infers from `#[kube(...)]`, `policies`",
            "`#[informer(singular)]` contradicts `#[kube(...)]`: state `singular` in `#[kube(...)]` only",
            "`#[informer(namespaced = true)]` contradicts `#[kube(...)]`, which declares the resource cluster-scoped",
        ]
    );
}

#[test]
fn every_mistake_is_collected_and_combined() {
    let input = item(quote::quote! {
        #[informer(namepsaced, group = 1, kind = "A", kind = "B")]
        pub struct Thing {}
    });
    let mut cx = Ctxt::new();
    let informer = InformerAttrs::from_attrs(&mut cx, &input.attrs);
    standalone(&mut cx, &input.ident, &informer);
    let messages: Vec<String> = cx
        .check()
        .expect_err("mistakes")
        .into_iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert!(messages[0].contains("did you mean `namespaced`"), "{messages:#?}");
    assert!(messages[1].starts_with("expected a string literal for `group`"));
    assert!(messages[2].starts_with("duplicate `kind`"));
    assert!(messages[3].starts_with("missing `version`"));
}

#[test]
fn a_context_without_mistakes_checks_ok() {
    assert!(Ctxt::new().check().is_ok());
    let attrs: Vec<Attribute> = Vec::new();
    let kube = KubeAttrs::from_attrs(&attrs);
    assert!(!kube.present);
    assert_eq!(form_of(&kube, false), Form::Standalone);
    assert_eq!(form_of(&kube, true), Form::CustomResource);
    let ident: Ident = syn::parse_quote!(Foo);
    let (declared, errors) = {
        let mut cx = Ctxt::new();
        let d = custom_resource(
            &mut cx,
            &ident,
            &kube,
            &InformerAttrs::default(),
            KubeMistakes::Report,
        );
        (d, errors(cx))
    };
    assert!(declared.is_none());
    assert_eq!(
        errors,
        [Error::MissingKubeKeys {
            keys: "`group`, `version`, `kind`".to_owned()
        }]
    );
}

#[test]
fn names_kube_apiserver_refuses_are_mistakes_at_their_values() {
    let (_, errors) = custom_of(
        quote::quote! {
            #[kube(group = "", version = "", kind = "Foo", plural = "")]
            pub struct FooSpec {}
        },
        KubeMistakes::LeaveToKubeDerive,
    );
    assert_eq!(
        errors,
        [
            Error::CoreGroup,
            Error::InvalidVersion {
                attr: "kube",
                value: String::new(),
                reason: validate::Invalid::Empty,
            },
            Error::InvalidName {
                attr: "kube",
                key: "plural",
                value: String::new(),
                reason: validate::Invalid::Empty,
            },
        ]
    );
    let (_, errors) = standalone_of(quote::quote! {
        #[informer(group = "Example.com", version = "1", kind = "my-kind", singular = "Foo")]
        pub struct Foo {}
    });
    assert_eq!(
        errors,
        [
            Error::InvalidGroup {
                attr: "informer",
                value: "Example.com".to_owned(),
                reason: validate::Invalid::Character('E'),
            },
            Error::InvalidVersion {
                attr: "informer",
                value: "1".to_owned(),
                reason: validate::Invalid::Start('1'),
            },
            Error::InvalidName {
                attr: "informer",
                key: "singular",
                value: "Foo".to_owned(),
                reason: validate::Invalid::Character('F'),
            },
            Error::InvalidKind {
                attr: "informer",
                value: "my-kind".to_owned(),
                reason: validate::Invalid::Character('-'),
            },
        ]
    );
}

#[test]
fn a_kube_kind_with_a_root_must_still_be_a_kind() {
    let (declared, errors) = custom_of(
        quote::quote! {
            #[kube(group = "example.com", version = "v1", kind = "my-kind", root = "MyKind")]
            pub struct FooSpec {}
        },
        KubeMistakes::Report,
    );
    assert!(declared.is_some());
    assert_eq!(
        errors,
        [Error::InvalidKind {
            attr: "kube",
            value: "my-kind".to_owned(),
            reason: validate::Invalid::Character('-'),
        }]
    );
}

#[test]
fn the_core_group_is_for_standalone_declarations_only() {
    let (declared, errors) = standalone_of(quote::quote! {
        #[informer(group = "", version = "v1", kind = "Pod", namespaced)]
        pub struct Pod {}
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(declared.expect("declared").group, "");
    let (_, errors) = custom_of(
        quote::quote! {
            #[kube(group = "", version = "v1", kind = "Foo")]
            pub struct FooSpec {}
        },
        KubeMistakes::Report,
    );
    assert_eq!(errors, [Error::CoreGroup]);
    let message = Error::CoreGroup.to_string();
    assert!(message.contains("such as `example.com`"), "{message}");
}
