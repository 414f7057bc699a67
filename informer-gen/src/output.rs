//! Generated files: the layouts, formatting with the header, writing only what changed.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use informer_templates::{
    Api, Nesting, RenderOptions, format, naming,
    render::{
        factory::render_factory, for_resource::render_for_resource, group::render_group,
        header::render_header, resource::render_resource, version::render_version,
    },
};
use quote::quote;

use crate::Error;

/// How generated code is laid out in files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// One file, `<module>.rs`, with inline modules (`pub mod example { pub mod v1 { ... } }`):
    /// what a build script writes to `OUT_DIR` for `include!`, since `mod x;` declarations do
    /// not work in an `include!`d file.
    SingleFile,
    /// A module directory: `mod.rs` (the factory), `<group>/mod.rs`, `<group>/<version>/mod.rs`
    /// and `<group>/<version>/<kind>.rs`, for `mod <output dir name>;` in a crate.
    Tree,
    /// A standalone crate named `name`: `Cargo.toml` and the tree under `src/` with `lib.rs`.
    Crate {
        /// The package name.
        name: String,
    },
}

/// What goes into every file besides the code.
pub(crate) struct Context<'a> {
    pub(crate) options: &'a RenderOptions,
    /// The input crates, for the header.
    pub(crate) inputs: &'a [String],
    /// `<module>.rs` in single-file layout.
    pub(crate) module_name: &'a str,
    /// The lines of a crate's documentation, replacing the default one-line summary.
    pub(crate) crate_doc: Option<&'a [String]>,
    /// Whether every file starts with `#![cfg_attr(rustfmt, rustfmt::skip)]`, for files
    /// checked into a crate that `cargo fmt --check` covers (prettyplease and rustfmt lay
    /// code out differently).
    pub(crate) rustfmt_skip: bool,
}

/// The inner attribute that makes rustfmt leave a file as it is.
pub(crate) const RUSTFMT_SKIP: &str = "#![cfg_attr(rustfmt, rustfmt::skip)]\n";

pub(crate) fn file(context: &Context<'_>, tokens: proc_macro2::TokenStream) -> Result<String, Error> {
    Ok(format!(
        "{}\n{}{}",
        render_header(context.inputs),
        if context.rustfmt_skip { RUSTFMT_SKIP } else { "" },
        format::pretty(tokens)?
    ))
}

/// The generated files (paths relative to the output directory) of `api` in `layout`, except
/// a crate's `Cargo.toml`.
pub(crate) fn render_files(
    api: &Api,
    layout: &Layout,
    context: &Context<'_>,
) -> Result<BTreeMap<PathBuf, String>, Error> {
    let options = context.options;
    let mut files = BTreeMap::new();
    let for_resource = render_for_resource(api, options);
    match layout {
        Layout::SingleFile => {
            let factory = render_factory(api, options, Nesting::Inline);
            let name = format!("{}.rs", context.module_name);
            files.insert(
                PathBuf::from(name),
                file(context, quote! { #factory #for_resource })?,
            );
            return Ok(files);
        }
        Layout::Tree => {
            let factory = render_factory(api, options, Nesting::Files);
            files.insert(
                PathBuf::from("mod.rs"),
                file(context, quote! { #factory #for_resource })?,
            );
        }
        Layout::Crate { .. } => {
            let factory = render_factory(api, options, Nesting::Files);
            let doc = match context.crate_doc {
                Some(lines) => lines
                    .iter()
                    .map(|l| format!(" {l}").trim_end().to_owned())
                    .collect(),
                None => vec![format!(
                    " Typed informers, listers and a shared informer factory for {}.",
                    context
                        .inputs
                        .iter()
                        .map(|i| format!("`{i}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )],
            };
            let tokens = quote! { #(#![doc = #doc])* #factory #for_resource };
            files.insert(PathBuf::from("src/lib.rs"), file(context, tokens)?);
        }
    }
    let root = match layout {
        Layout::Crate { .. } => PathBuf::from("src"),
        _ => PathBuf::new(),
    };
    for group in &api.groups {
        let group_dir = root.join(group.accessor.to_string());
        let tokens = render_group(group, options, Nesting::Files);
        files.insert(group_dir.join("mod.rs"), file(context, tokens)?);
        for version in &group.versions {
            let version_dir = group_dir.join(version.module.to_string());
            let tokens = render_version(version, options, Nesting::Files);
            files.insert(version_dir.join("mod.rs"), file(context, tokens)?);
            for resource in &version.resources {
                let name = format!("{}.rs", naming::kind_snake(&resource.kind));
                files.insert(
                    version_dir.join(name),
                    file(context, render_resource(resource, options))?,
                );
            }
        }
    }
    Ok(files)
}

/// Writes each of `files` (relative to `dir`) whose content differs from what is on disk;
/// returns the files written.
pub fn write_if_changed(dir: &Path, files: &BTreeMap<PathBuf, String>) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for (relative, content) in files {
        let path = dir.join(relative);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(content.as_str()) {
            continue;
        }
        let write_error = |source| Error::Write {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(write_error)?;
        }
        std::fs::write(&path, content).map_err(write_error)?;
        written.push(path);
    }
    Ok(written)
}

/// The files among `files` (relative to `dir`) that are missing or differ on disk.
pub fn stale_files(dir: &Path, files: &BTreeMap<PathBuf, String>) -> Vec<PathBuf> {
    files
        .iter()
        .filter(|(relative, content)| {
            std::fs::read_to_string(dir.join(relative)).ok().as_deref() != Some(content.as_str())
        })
        .map(|(relative, _)| dir.join(relative))
        .collect()
}
