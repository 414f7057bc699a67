//! The well-known indexes of built-in resources: typed index handles generated next to the
//! informers of their resource.

use std::collections::BTreeMap;

use informer_templates::{Api, RenderOptions, Resource, naming};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::Error;

/// An index handle generated as a `pub static` in the module of its resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WellKnownIndex {
    /// The resource's `group/version/plural` (`core` for the core group).
    pub(crate) resource: &'static str,
    /// The name of the `static`, prefixed with the kind as the module's other items are
    /// (`POD_BY_NODE_NAME` beside `PodInformer`).
    pub(crate) handle: &'static str,
    /// The index's name in the cache (the string API's name for it).
    pub(crate) name: &'static str,
    /// What an object is indexed by, completing "indexes `<plural>` by ...".
    pub(crate) what: &'static str,
    /// A value to query in the handle's documentation example.
    pub(crate) example_value: &'static str,
    /// The index function: a non-capturing closure from a reference to the resource's type to
    /// its values (`Vec<String>`); no value leaves the object out of the index.
    pub(crate) func: &'static str,
}

/// The indexes generated for built-in resources, one entry per handle.
pub(crate) const WELL_KNOWN_INDEXES: &[WellKnownIndex] = &[WellKnownIndex {
    resource: "core/v1/pods",
    handle: "POD_BY_NODE_NAME",
    name: "spec.nodeName",
    what: "the name of the node they are scheduled to (`spec.nodeName`); pods not scheduled yet \
           are in no bucket",
    example_value: "node-1",
    func: "|pod| pod.spec.iter().filter_map(|spec| spec.node_name.clone()).filter(|name| !name.is_empty()).collect()",
}];

/// The items of `indexes` by the `group/version/plural` of their resource, gated as the
/// resource's other items are, each documented with an example using the crate at
/// `crate_path`; an index of a resource that `api` does not have is an error.
pub(crate) fn render_indexes(
    indexes: &[WellKnownIndex],
    crate_path: &str,
    api: &Api,
    options: &RenderOptions,
) -> Result<BTreeMap<String, TokenStream>, Error> {
    let resources = api.resources();
    let codegen = options.codegen();
    let mut items: BTreeMap<String, TokenStream> = BTreeMap::new();
    for index in indexes {
        let resource = resources
            .iter()
            .find(|r| r.gvr() == index.resource)
            .ok_or_else(|| Error::IndexResource {
                handle: index.handle.to_owned(),
                resource: index.resource.to_owned(),
            })?;
        let func: syn::ExprClosure = syn::parse_str(index.func).map_err(|e| Error::IndexFunction {
            handle: index.handle.to_owned(),
            message: e.to_string(),
        })?;
        let handle = format_ident!("{}", index.handle);
        let name = index.name;
        let cfgs = resource.cfg_attrs();
        let rust_path = &resource.rust_path;
        let (module, accessor) = paths(api, resource);
        let var = naming::resource_method(&resource.kind, &resource.plural);
        let value = index.example_value;
        let doc = [
            format!(
                " Indexes `{}` objects by {}.",
                resource.kind,
                index.what.split_whitespace().collect::<Vec<_>>().join(" ")
            ),
            String::new(),
            format!(
                " The index is named `{name}` in the cache. Register it on the informer once, then query it through the lister:"
            ),
            String::new(),
            " ```no_run".to_owned(),
            " # async fn run(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {".to_owned(),
            " use informer_runtime::SharedInformerFactory;".to_owned(),
            format!(" use {crate_path}::{{Informers, {module}::{handle}}};"),
            String::new(),
            " let factory = SharedInformerFactory::new(client);".to_owned(),
            " let informers = Informers::new(&factory);".to_owned(),
            format!(" let {var} = {accessor};"),
            format!(" {var}.informer().add_index(&{handle})?;"),
            " factory.start();".to_owned(),
            " factory.wait_for_cache_sync().await;".to_owned(),
            format!(" let found = {var}.lister().by_index(&{handle}, \"{value}\")?;"),
            " # Ok(())".to_owned(),
            " # }".to_owned(),
            " ```".to_owned(),
        ];
        let item = quote! {
            #cfgs
            #(#[doc = #doc])*
            pub static #handle: #codegen::Index<#rust_path> = #codegen::Index::new(#name, #func);
        };
        items.entry(resource.gvr()).or_default().extend(item);
    }
    Ok(items)
}

/// The module path of `resource` in the crate (`core::v1`) and its accessor chain
/// (`informers.core().v1().pods()`).
fn paths(api: &Api, resource: &Resource) -> (String, String) {
    let group = api.groups.iter().find(|g| g.name == resource.group);
    let version = group.and_then(|g| g.versions.iter().find(|v| v.name == resource.version));
    let method = naming::ident(&naming::resource_method(&resource.kind, &resource.plural));
    match (group, version) {
        (Some(group), Some(version)) => (
            format!("{}::{}", group.accessor, version.module),
            format!("informers.{}().{}().{method}()", group.accessor, version.module),
        ),
        _ => (String::new(), format!("informers.{method}()")),
    }
}

/// One line per index of `indexes` whose resource `api` has, for the crate's documentation:
/// `` - `core::v1::POD_BY_NODE_NAME` (`spec.nodeName`): ... ``.
pub(crate) fn index_doc_lines(indexes: &[WellKnownIndex], api: &Api) -> Vec<String> {
    let mut lines = Vec::new();
    for index in indexes {
        let group = api
            .groups
            .iter()
            .find(|g| g.versions.iter().any(|v| has(v, index)));
        let version = group.and_then(|g| g.versions.iter().find(|v| has(v, index)));
        if let (Some(group), Some(version)) = (group, version) {
            lines.push(format!(
                "- `{}::{}::{}`, named `{}`: {} by {}.",
                group.accessor,
                version.module,
                index.handle,
                index.name,
                index.resource.rsplit('/').next().unwrap_or_default(),
                index.what.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
        }
    }
    lines
}

fn has(version: &informer_templates::Version, index: &WellKnownIndex) -> bool {
    version.resources.iter().any(|r| r.gvr() == index.resource)
}

#[cfg(test)]
mod tests {
    use informer_templates::Scope;

    use super::*;

    fn api() -> Api {
        let pod = Resource::new(
            "",
            "v1",
            "Pod",
            "pods",
            Scope::Namespaced,
            syn::parse_quote!(::k8s::Pod),
        )
        .with_cfgs(vec![syn::parse_quote!(feature = "core")]);
        let node = Resource::new(
            "",
            "v1",
            "Node",
            "nodes",
            Scope::Cluster,
            syn::parse_quote!(::k8s::Node),
        );
        Api::new(vec![pod, node]).expect("named")
    }

    #[test]
    fn the_table_renders_a_gated_static_in_the_module_of_its_resource() {
        let items = render_indexes(
            WELL_KNOWN_INDEXES,
            "k8s_informers",
            &api(),
            &RenderOptions::default(),
        )
        .expect("rendered");
        assert_eq!(items.keys().collect::<Vec<_>>(), ["core/v1/pods"]);
        let code = items["core/v1/pods"].to_string();
        assert!(code.starts_with("# [cfg (feature = \"core\")]"), "{code}");
        assert!(
            code.contains(
                "pub static POD_BY_NODE_NAME : :: informer_runtime :: __codegen :: Index < :: k8s :: Pod >"
            ),
            "{code}"
        );
        assert!(code.contains("\"spec.nodeName\""), "{code}");
        assert!(
            code.contains("use k8s_informers::{Informers, core::v1::POD_BY_NODE_NAME};"),
            "{code}"
        );
        assert!(
            code.contains("let pods = informers.core().v1().pods();"),
            "{code}"
        );
    }

    #[test]
    fn every_handle_is_named_after_its_kind() {
        for index in WELL_KNOWN_INDEXES {
            let plural = index.resource.rsplit('/').next().unwrap_or_default();
            assert!(
                plural
                    .to_ascii_uppercase()
                    .starts_with(index.handle.split('_').next().unwrap_or_default()),
                "{} of {}",
                index.handle,
                index.resource
            );
        }
    }

    #[test]
    fn an_index_of_a_resource_not_generated_is_an_error() {
        let indexes = [WellKnownIndex {
            resource: "apps/v1/deployments",
            ..WELL_KNOWN_INDEXES[0]
        }];
        let error = render_indexes(&indexes, "k8s_informers", &api(), &RenderOptions::default())
            .expect_err("no deployments");
        assert!(matches!(error, Error::IndexResource { .. }), "{error}");
    }

    #[test]
    fn a_function_that_is_not_a_closure_is_an_error() {
        let indexes = [WellKnownIndex {
            func: "node_names",
            ..WELL_KNOWN_INDEXES[0]
        }];
        let error = render_indexes(&indexes, "k8s_informers", &api(), &RenderOptions::default())
            .expect_err("not a closure");
        assert!(matches!(error, Error::IndexFunction { .. }), "{error}");
    }

    #[test]
    fn the_crate_doc_lists_each_handle_by_its_path() {
        assert_eq!(
            index_doc_lines(WELL_KNOWN_INDEXES, &api()),
            [
                "- `core::v1::POD_BY_NODE_NAME`, named `spec.nodeName`: pods by the name of the node they are scheduled to (`spec.nodeName`); pods not scheduled yet are in no bucket."
            ]
        );
    }
}
