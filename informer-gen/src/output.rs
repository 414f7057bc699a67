//! Generated files: the layouts, formatting with the header, writing only what changed and
//! removing generated files that are no longer generated.

use std::{
    collections::BTreeMap,
    io::Read,
    path::{Path, PathBuf},
};

use informer_templates::{
    Api, Nesting, RenderOptions, format, naming,
    render::{
        factory::render_factory,
        for_resource::render_for_resource,
        group::render_group,
        header::{GENERATED_MARKER, render_header},
        resource::render_resource,
        version::render_version,
    },
};
use quote::quote;

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
    /// Items appended to the file of a resource, by its `group/version/plural` (the layouts
    /// with a file per resource only; the single-file layout has none).
    pub(crate) resource_items: &'a BTreeMap<String, proc_macro2::TokenStream>,
}

/// The inner attribute that makes rustfmt leave a file as it is.
pub(crate) const RUSTFMT_SKIP: &str = "#![cfg_attr(rustfmt, rustfmt::skip)]\n";

pub(crate) fn file(context: &Context<'_>, tokens: proc_macro2::TokenStream) -> Result<String, crate::Error> {
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
) -> Result<BTreeMap<PathBuf, String>, crate::Error> {
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
                let items = render_resource(resource, options);
                let extra = context.resource_items.get(&resource.gvr());
                files.insert(version_dir.join(name), file(context, quote! { #items #extra })?);
            }
        }
    }
    Ok(files)
}

/// What can go wrong keeping an output directory in step with the generated files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file the generator would write exists and was not written by informer-gen.
    #[error(
        "failed to write {path}: the file exists and was not generated by informer-gen (its first line is not `{GENERATED_MARKER}`), so it is left alone; move it away or choose another output directory"
    )]
    NotGenerated {
        /// The file.
        path: PathBuf,
    },
    /// A generated file that is no longer generated could not be removed.
    #[error("failed to remove {path}, a generated file that is no longer generated: {source}")]
    Remove {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The marker text of generated files, without the comment syntax: `// @generated ...` in Rust
/// files, `# @generated ...` in a generated `Cargo.toml`.
fn marker_text() -> &'static str {
    GENERATED_MARKER.trim_start_matches('/').trim()
}

/// Whether the file at `path` starts with the `@generated by informer-gen` header line (as a
/// Rust or a TOML comment). Files that cannot be read are not generated, so they are never
/// removed or overwritten.
pub fn is_generated(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = Vec::new();
    // the marker is on the first line; read no more than a few bytes past it
    let limit = marker_text().len() as u64 + 8;
    if file.take(limit).read_to_end(&mut first).is_err() {
        return false;
    }
    let first = String::from_utf8_lossy(&first);
    let line = first.lines().next().unwrap_or_default().trim();
    line.strip_prefix("//")
        .or_else(|| line.strip_prefix('#'))
        .is_some_and(|rest| rest.trim() == marker_text())
}

/// Writes each of `files` (relative to `dir`) whose content differs from what is on disk;
/// returns the files written. An existing file is only overwritten when it is generated
/// ([`is_generated`]): before writing anything, a file that is not is an error
/// ([`Error::NotGenerated`]).
pub fn write_if_changed(dir: &Path, files: &BTreeMap<PathBuf, String>) -> Result<Vec<PathBuf>, crate::Error> {
    let changed: Vec<(PathBuf, &String)> = files
        .iter()
        .map(|(relative, content)| (dir.join(relative), content))
        .filter(|(path, content)| std::fs::read_to_string(path).ok().as_deref() != Some(content.as_str()))
        .collect();
    if let Some((path, _)) = changed
        .iter()
        .find(|(path, _)| path.exists() && !is_generated(path))
    {
        return Err(Error::NotGenerated { path: path.clone() }.into());
    }
    let mut written = Vec::new();
    for (path, content) in changed {
        let write_error = |source| crate::Error::Write {
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

/// The generated files ([`is_generated`]) under `dir` that are not among `files` (relative to
/// `dir`): output of an earlier run that is no longer generated, such as the informer of a
/// resource removed from the input. Files without the header are never orphans. Hidden
/// directories, symbolic links and a `target` directory at the top (where a generated crate is
/// built) are not looked into.
pub fn orphan_files(dir: &Path, files: &BTreeMap<PathBuf, String>) -> Vec<PathBuf> {
    let mut orphans = Vec::new();
    collect_orphans(dir, dir, files, &mut orphans);
    orphans.sort();
    orphans
}

fn collect_orphans(root: &Path, dir: &Path, files: &BTreeMap<PathBuf, String>, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        let name = entry.file_name();
        if kind.is_dir() {
            let hidden = name.to_string_lossy().starts_with('.');
            let build_dir = dir == root && name == "target" && !files.keys().any(|f| f.starts_with("target"));
            if !hidden && !build_dir {
                collect_orphans(root, &path, files, out);
            }
        } else if kind.is_file()
            && path
                .strip_prefix(root)
                .is_ok_and(|relative| !files.contains_key(relative))
            && is_generated(&path)
        {
            out.push(path);
        }
    }
}

/// Removes the [orphans](orphan_files) of `dir`, then the directories under `dir` that this
/// left empty; returns the files removed.
pub fn remove_orphans(dir: &Path, files: &BTreeMap<PathBuf, String>) -> Result<Vec<PathBuf>, crate::Error> {
    let orphans = orphan_files(dir, files);
    for orphan in &orphans {
        std::fs::remove_file(orphan).map_err(|source| Error::Remove {
            path: orphan.clone(),
            source,
        })?;
        // `remove_dir` only removes empty directories: stop at the first that is not
        for parent in orphan.ancestors().skip(1) {
            if parent == dir || !parent.starts_with(dir) || std::fs::remove_dir(parent).is_err() {
                break;
            }
        }
    }
    Ok(orphans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_files_are_recognised_by_their_first_line() {
        let dir = std::env::temp_dir().join(format!("informer-gen-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let cases = [
            ("a.rs", format!("{GENERATED_MARKER}\n// more\n"), true),
            (
                "Cargo.toml",
                "# @generated by informer-gen. DO NOT EDIT.\n[package]\n".to_owned(),
                true,
            ),
            ("b.rs", "// hand-written\n".to_owned(), false),
            ("c.rs", format!("// note\n{GENERATED_MARKER}\n"), false),
            ("d.rs", String::new(), false),
        ];
        for (name, content, generated) in &cases {
            std::fs::write(dir.join(name), content).expect("written");
            assert_eq!(is_generated(&dir.join(name)), *generated, "{name}");
        }
        assert!(!is_generated(&dir.join("missing.rs")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
