//! Snapshots of every render function, formatted, against `templates/snapshots/*.rs`.
//! `INFORMER_GEN_BLESS=1 cargo test -p informer-templates` rewrites them.

use std::path::PathBuf;

use proc_macro2::TokenStream;
use syn::parse_quote;

use crate::{
    Api, Nesting, RenderOptions, Resource, Scope, format,
    render::{
        factory::render_factory, for_resource::render_for_resource, group::render_group,
        informer::render_informer, lister::render_lister, resource::render_resource, version::render_version,
    },
};

fn foo() -> Resource {
    Resource::new(
        "example.com",
        "v1",
        "Foo",
        "foos",
        Scope::Namespaced,
        parse_quote!(::sample::v1::Foo),
    )
}

fn cluster_policy() -> Resource {
    Resource::new(
        "example.com",
        "v1",
        "ClusterPolicy",
        "clusterpolicies",
        Scope::Cluster,
        parse_quote!(::sample::v1::ClusterPolicy),
    )
    .with_cfgs(vec![parse_quote!(feature = "policies")])
}

fn api() -> Api {
    Api::new(vec![
        foo(),
        cluster_policy(),
        Resource::new(
            "",
            "v1",
            "Pod",
            "pods",
            Scope::Namespaced,
            parse_quote!(::k8s::Pod),
        ),
        Resource::new(
            "example.com",
            "v2",
            "Foo",
            "foos",
            Scope::Namespaced,
            parse_quote!(::sample::v2::Foo),
        ),
    ])
    .expect("named")
}

fn check(name: &str, tokens: TokenStream) {
    let actual = format::pretty(tokens).expect("formats");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(format!("{name}.rs"));
    if std::env::var_os("INFORMER_GEN_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(&path, &actual).expect("write");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "failed to read {}: {e} (bless with INFORMER_GEN_BLESS=1)",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} is stale (bless with INFORMER_GEN_BLESS=1); actual:\n{actual}",
        path.display()
    );
}

#[test]
fn informer_namespaced() {
    check(
        "informer_namespaced",
        render_informer(&foo(), &RenderOptions::default()),
    );
}

#[test]
fn informer_cluster_with_cfg_and_runtime_path() {
    let options = RenderOptions::with_runtime(parse_quote!(::my_runtime));
    check("informer_cluster", render_informer(&cluster_policy(), &options));
}

#[test]
fn lister_namespaced() {
    check(
        "lister_namespaced",
        render_lister(&foo(), &RenderOptions::default()),
    );
}

#[test]
fn lister_cluster() {
    check(
        "lister_cluster",
        render_lister(&cluster_policy(), &RenderOptions::default()),
    );
}

#[test]
fn resource() {
    check("resource", render_resource(&foo(), &RenderOptions::default()));
}

#[test]
fn version_in_files() {
    let api = api();
    let version = &api.groups[1].versions[0];
    check(
        "version_files",
        render_version(version, &RenderOptions::default(), Nesting::Files),
    );
}

#[test]
fn group_in_files() {
    let api = api();
    check(
        "group_files",
        render_group(&api.groups[1], &RenderOptions::default(), Nesting::Files),
    );
}

#[test]
fn factory_in_files() {
    check(
        "factory_files",
        render_factory(&api(), &RenderOptions::default(), Nesting::Files),
    );
}

#[test]
fn factory_inline() {
    check(
        "factory_inline",
        render_factory(&api(), &RenderOptions::default(), Nesting::Inline),
    );
}

#[test]
fn for_resource() {
    check(
        "for_resource",
        render_for_resource(&api(), &RenderOptions::default()),
    );
}
