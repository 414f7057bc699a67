//! Types with `#[derive(Informer)]`, in both forms, for `tests/derived_informers.rs`.
//!
//! `Widget` (`derive.example.com/v1`, namespaced) is derived beside `CustomResource`; the
//! same resource is also read through a standalone type with a hand-written `kube::Resource`
//! impl; a third type declares a resource its impl does not name (for the run-time check).

/// `Widget`, beside `#[derive(CustomResource)]`.
pub mod custom {
    use informer_runtime::Informer;
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The spec of a `Widget`.
    #[derive(CustomResource, Informer, Serialize, Deserialize, Clone, Debug, JsonSchema)]
    #[kube(group = "derive.example.com", version = "v1", kind = "Widget", namespaced)]
    pub struct WidgetSpec {
        /// A size.
        pub size: u32,
    }
}

/// Widgets again, through a standalone `#[derive(Informer)]` on a type implementing
/// `kube::Resource` by hand.
pub mod standalone {
    use std::borrow::Cow;

    use informer_runtime::Informer;
    use kube::api::ObjectMeta;
    use serde::{Deserialize, Serialize};

    /// A widget, with its spec left as JSON.
    #[derive(Informer, Serialize, Deserialize, Clone, Debug)]
    #[informer(group = "derive.example.com", version = "v1", kind = "Widget", namespaced)]
    pub struct WidgetView {
        /// The metadata.
        pub metadata: ObjectMeta,
        /// The spec.
        pub spec: serde_json::Value,
    }

    impl kube::Resource for WidgetView {
        type DynamicType = ();
        type Scope = kube::core::NamespaceResourceScope;

        fn kind(_: &()) -> Cow<'_, str> {
            "Widget".into()
        }

        fn group(_: &()) -> Cow<'_, str> {
            "derive.example.com".into()
        }

        fn version(_: &()) -> Cow<'_, str> {
            "v1".into()
        }

        fn plural(_: &()) -> Cow<'_, str> {
            "widgets".into()
        }

        fn meta(&self) -> &ObjectMeta {
            &self.metadata
        }

        fn meta_mut(&mut self) -> &mut ObjectMeta {
            &mut self.metadata
        }
    }
}

/// A type whose `#[informer(...)]` names another resource than its `kube::Resource` impl.
pub mod mismatched {
    use std::borrow::Cow;

    use informer_runtime::Informer;
    use kube::api::ObjectMeta;
    use serde::{Deserialize, Serialize};

    /// Declared `example.org/v2` `Gizmo`, implemented as `derive.example.com/v1` `Widget`.
    #[derive(Informer, Serialize, Deserialize, Clone, Debug)]
    #[informer(group = "example.org", version = "v1", kind = "Gizmo", namespaced)]
    pub struct Gizmo {
        /// The metadata.
        pub metadata: ObjectMeta,
    }

    impl kube::Resource for Gizmo {
        type DynamicType = ();
        type Scope = kube::core::NamespaceResourceScope;

        fn kind(_: &()) -> Cow<'_, str> {
            "Widget".into()
        }

        fn group(_: &()) -> Cow<'_, str> {
            "derive.example.com".into()
        }

        fn version(_: &()) -> Cow<'_, str> {
            "v1".into()
        }

        fn plural(_: &()) -> Cow<'_, str> {
            "widgets".into()
        }

        fn meta(&self) -> &ObjectMeta {
            &self.metadata
        }

        fn meta_mut(&mut self) -> &mut ObjectMeta {
            &mut self.metadata
        }
    }
}

/// The runtime under another name, for `#[informer(crate = "...")]`.
pub use informer_runtime as runtime_alias;

/// The derive's output compiles in a module that shadows `Option`, `Result`, `Vec`, `String`
/// and `Box`, with the runtime reached through a renamed path.
pub mod shadowed {
    /// Shadows `std::option::Option`.
    pub struct Option;
    /// Shadows `std::result::Result`.
    pub struct Result;
    /// Shadows `std::vec::Vec`.
    pub struct Vec;
    /// Shadows `std::string::String`.
    pub struct String;
    /// Shadows `std::boxed::Box`.
    pub struct Box;

    /// A cluster-scoped resource declared under the shadowing names.
    #[derive(informer_runtime::Informer, ::serde::Serialize, ::serde::Deserialize, Clone, Debug)]
    #[informer(
        group = "derive.example.com",
        version = "v1",
        crate = "crate::derived::runtime_alias"
    )]
    pub struct Gadget {
        /// The metadata.
        pub metadata: ::kube::api::ObjectMeta,
    }

    impl ::kube::Resource for Gadget {
        type DynamicType = ();
        type Scope = ::kube::core::ClusterResourceScope;

        fn kind(_: &()) -> ::std::borrow::Cow<'_, str> {
            "Gadget".into()
        }

        fn group(_: &()) -> ::std::borrow::Cow<'_, str> {
            "derive.example.com".into()
        }

        fn version(_: &()) -> ::std::borrow::Cow<'_, str> {
            "v1".into()
        }

        fn plural(_: &()) -> ::std::borrow::Cow<'_, str> {
            "gadgets".into()
        }

        fn meta(&self) -> &::kube::api::ObjectMeta {
            &self.metadata
        }

        fn meta_mut(&mut self) -> &mut ::kube::api::ObjectMeta {
            &mut self.metadata
        }
    }
}
