//! The generator's configuration: a builder for build scripts, also behind the CLI.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use informer_templates::{Api, RenderOptions};

use crate::{
    Error, Layout,
    filter::{Filter, GvrPattern},
    manifest::{self, Dependency},
    output::{self, Context},
    parse::{self, Found},
};

/// One input: a crate directory or root file, or a source already read.
#[derive(Debug, Clone)]
enum Input {
    Path(PathBuf),
    Source { path: PathBuf, text: String },
}

/// An input resolved to its root file and crate path.
struct Resolved {
    root: PathBuf,
    text: Option<String>,
    /// `::sample_crds` or `crate`.
    crate_path: String,
    /// The package and directory, for a generated crate's dependencies.
    package: Option<(String, PathBuf)>,
}

/// Generates informers, listers and a factory from crates of API types (see the crate docs).
#[derive(Debug, Clone)]
pub struct Config {
    inputs: Vec<Input>,
    out_dir: Option<PathBuf>,
    runtime_path: String,
    runtime_dependency: String,
    module_name: String,
    crate_name: Option<String>,
    layout: Layout,
    include: Vec<String>,
    exclude: Vec<String>,
    include_paths: Vec<String>,
    exclude_paths: Vec<String>,
    group_accessors: BTreeMap<String, String>,
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

/// What [`Config::generate`] produced, with the files it read.
struct Generated {
    files: BTreeMap<PathBuf, String>,
    read: Vec<PathBuf>,
}

impl Config {
    /// A configuration without inputs: single-file layout into `OUT_DIR` as `informers.rs`,
    /// runtime at `::informer_runtime`.
    pub fn new() -> Self {
        Self {
            inputs: Vec::new(),
            out_dir: None,
            runtime_path: "::informer_runtime".to_owned(),
            runtime_dependency: manifest::default_runtime_dependency(),
            module_name: "informers".to_owned(),
            crate_name: None,
            layout: Layout::SingleFile,
            include: Vec::new(),
            exclude: Vec::new(),
            include_paths: Vec::new(),
            exclude_paths: Vec::new(),
            group_accessors: BTreeMap::new(),
        }
    }

    /// Adds an input: a crate directory (its `src/lib.rs` is the root; its `Cargo.toml` names
    /// it) or a `.rs` file treated as a crate root (named by the nearest `Cargo.toml` above
    /// it, else by its file stem).
    #[must_use]
    pub fn input(mut self, path: impl Into<PathBuf>) -> Self {
        self.inputs.push(Input::Path(path.into()));
        self
    }

    /// Adds an input whose root file `path` has the content `text` (module files it declares
    /// are still read from disk, relative to `path`).
    #[must_use]
    pub fn input_source(mut self, path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        self.inputs.push(Input::Source {
            path: path.into(),
            text: text.into(),
        });
        self
    }

    /// Where files go (default: the `OUT_DIR` of the build script).
    #[must_use]
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The Rust path of the runtime crate (default `::informer_runtime`).
    #[must_use]
    pub fn runtime_path(mut self, path: impl Into<String>) -> Self {
        self.runtime_path = path.into();
        self
    }

    /// The dependency line for the runtime in a generated crate's `Cargo.toml` (default
    /// `informer-runtime = "0.1"`).
    #[must_use]
    pub fn runtime_dependency(mut self, line: impl Into<String>) -> Self {
        self.runtime_dependency = line.into();
        self
    }

    /// The name of the single generated file, without `.rs` (default `informers`).
    #[must_use]
    pub fn module_name(mut self, name: impl Into<String>) -> Self {
        self.module_name = name.into();
        self
    }

    /// The crate name the input types are reached through (default: the package name with
    /// `-` as `_`); `crate` generates `crate::…` paths, for types of the generating crate.
    #[must_use]
    pub fn input_crate_name(mut self, name: impl Into<String>) -> Self {
        self.crate_name = Some(name.into());
        self
    }

    /// The layout of the output (default [`Layout::SingleFile`]).
    #[must_use]
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// Keeps only resources matching one of the included patterns (`group/version/resource`,
    /// `*` wildcards, `core` for the core group).
    #[must_use]
    pub fn include(mut self, pattern: impl Into<String>) -> Self {
        self.include.push(pattern.into());
        self
    }

    /// Drops resources matching `pattern`.
    #[must_use]
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.exclude.push(pattern.into());
        self
    }

    /// Keeps only resources whose Rust path starts with one of the included prefixes
    /// (`::sample_crds::v1`).
    #[must_use]
    pub fn include_rust_path(mut self, prefix: impl Into<String>) -> Self {
        self.include_paths.push(prefix.into());
        self
    }

    /// Drops resources whose Rust path starts with `prefix`.
    #[must_use]
    pub fn exclude_rust_path(mut self, prefix: impl Into<String>) -> Self {
        self.exclude_paths.push(prefix.into());
        self
    }

    /// Pins the accessor (and module name) of `group` to `accessor`, instead of the naming
    /// rule ([`informer_templates::naming`]): `example.com` is `example_com()` unless pinned,
    /// say, to `example`. `""` or `core` is the core group. `accessor` must be a snake-case Rust
    /// identifier that is not a keyword, and no other group may have it (both are errors of
    /// [`Config::generate`]); a pin of a group without resources is unused. The last pin of a
    /// group wins.
    #[must_use]
    pub fn group_accessor(mut self, group: impl Into<String>, accessor: impl Into<String>) -> Self {
        let group = group.into();
        let group = if group == "core" { String::new() } else { group };
        self.group_accessors.insert(group, accessor.into());
        self
    }

    /// The generated files, by path relative to the output directory, formatted. Reads the
    /// inputs and nothing else; writes nothing.
    pub fn generate(&self) -> Result<BTreeMap<PathBuf, String>, Error> {
        Ok(self.run()?.files)
    }

    /// Generates and writes the files whose content changed into the output directory, and
    /// prints `cargo:rerun-if-changed` for every input file read (for build scripts).
    pub fn compile(&self) -> Result<(), Error> {
        let generated = self.run()?;
        for file in &generated.read {
            println!("cargo:rerun-if-changed={}", file.display());
        }
        output::write_if_changed(&self.resolved_out_dir()?, &generated.files)?;
        Ok(())
    }

    /// The output files that are missing or out of date; writes nothing.
    pub fn stale_files(&self) -> Result<Vec<PathBuf>, Error> {
        let generated = self.run()?;
        Ok(output::stale_files(&self.resolved_out_dir()?, &generated.files))
    }

    /// Generates and writes the files whose content changed; returns the files written.
    pub fn write(&self) -> Result<Vec<PathBuf>, Error> {
        let generated = self.run()?;
        output::write_if_changed(&self.resolved_out_dir()?, &generated.files)
    }

    fn resolved_out_dir(&self) -> Result<PathBuf, Error> {
        self.out_dir
            .clone()
            .or_else(|| std::env::var_os("OUT_DIR").map(PathBuf::from))
            .ok_or(Error::NoOutDir)
    }

    fn filter(&self) -> Result<Filter, Error> {
        let patterns = |list: &[String]| {
            list.iter()
                .map(|p| GvrPattern::parse(p).ok_or_else(|| Error::Pattern { pattern: p.clone() }))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Filter {
            include: patterns(&self.include)?,
            exclude: patterns(&self.exclude)?,
            include_paths: self.include_paths.clone(),
            exclude_paths: self.exclude_paths.clone(),
        })
    }

    fn crate_path(&self, package: Option<&str>, fallback: &str) -> String {
        match self.crate_name.as_deref() {
            Some("crate") => "crate".to_owned(),
            Some(name) => format!("::{}", name.trim_start_matches("::").replace('-', "_")),
            None => format!("::{}", package.unwrap_or(fallback).replace('-', "_")),
        }
    }

    fn resolve(&self, input: &Input) -> Result<Resolved, Error> {
        let (path, text) = match input {
            Input::Path(path) => (path.clone(), None),
            Input::Source { path, text } => (path.clone(), Some(text.clone())),
        };
        if text.is_none() && path.is_dir() {
            let root = path.join("src").join("lib.rs");
            if !root.is_file() {
                return Err(Error::InputNotFound { path });
            }
            let manifest_path = path.join("Cargo.toml");
            let package = match std::fs::read_to_string(&manifest_path) {
                Ok(text) => {
                    Some(manifest::package_name(&text).ok_or(Error::Manifest { path: manifest_path })?)
                }
                Err(_) => None,
            };
            let fallback = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Ok(Resolved {
                crate_path: self.crate_path(package.as_deref(), &fallback),
                package: package.map(|p| (p, path.clone())),
                root,
                text,
            });
        }
        if text.is_none() && !path.is_file() {
            return Err(Error::InputNotFound { path });
        }
        let nearest = path.ancestors().skip(1).find_map(|dir| {
            let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
            manifest::package_name(&text).map(|name| (name, dir.to_path_buf()))
        });
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Resolved {
            crate_path: self.crate_path(nearest.as_ref().map(|(n, _)| n.as_str()), &stem),
            package: nearest,
            root: path,
            text,
        })
    }

    fn run(&self) -> Result<Generated, Error> {
        if self.inputs.is_empty() {
            return Err(Error::NoInputs);
        }
        let runtime: syn::Path = syn::parse_str(&self.runtime_path).map_err(|e| Error::RustPath {
            what: "runtime path",
            path: self.runtime_path.clone(),
            message: e.to_string(),
        })?;
        let filter = self.filter()?;
        let mut read = Vec::new();
        let mut found: Vec<Found> = Vec::new();
        let mut header_inputs = Vec::new();
        let mut packages = Vec::new();
        for input in &self.inputs {
            let resolved = self.resolve(input)?;
            let parsed = parse::parse_crate(&resolved.root, resolved.text, &resolved.crate_path)?;
            read.extend(parsed.files);
            found.extend(parsed.found);
            header_inputs.push(resolved.crate_path.trim_start_matches("::").to_owned());
            packages.extend(resolved.package);
        }
        let total = found.len();
        found.retain(|f| filter.keeps(&f.resource));
        if found.is_empty() {
            return Err(Error::NoResources {
                filtered: if total > 0 { " matching the filters" } else { "" },
                looked_in: read
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        check_duplicates(&found)?;
        let resources: Vec<_> = found.into_iter().map(|f| f.resource).collect();
        let api = Api::with_accessors(resources, &self.group_accessors)?;
        let options = RenderOptions::with_runtime(runtime);
        let context = Context {
            options: &options,
            inputs: &header_inputs,
            module_name: &self.module_name,
            crate_doc: None,
            rustfmt_skip: false,
        };
        let mut files = output::render_files(&api, &self.layout, &context)?;
        if let Layout::Crate { name } = &self.layout {
            let out_dir = absolute(&self.resolved_out_dir()?)?;
            let mut dependencies = Vec::new();
            for (package, dir) in &packages {
                dependencies.push(Dependency {
                    package: package.clone(),
                    path: manifest::relative_path(&out_dir, &absolute(dir)?),
                });
            }
            let features = manifest::cfg_features(&api.resources());
            let manifest = manifest::crate_manifest(name, &dependencies, &self.runtime_dependency, &features);
            files.insert(PathBuf::from("Cargo.toml"), manifest);
        }
        Ok(Generated { files, read })
    }
}

fn absolute(path: &Path) -> Result<PathBuf, Error> {
    std::path::absolute(path).map_err(|source| Error::Absolute {
        path: path.to_path_buf(),
        source,
    })
}

fn check_duplicates(found: &[Found]) -> Result<(), Error> {
    let mut seen: BTreeMap<(String, String, String), &Found> = BTreeMap::new();
    for f in found {
        let r = &f.resource;
        let key = (r.group.clone(), r.version.clone(), r.plural.clone());
        if let Some(first) = seen.insert(key, f) {
            return Err(Error::Duplicate {
                gvr: r.gvr(),
                first: first.location.clone(),
                second: f.location.clone(),
            });
        }
    }
    Ok(())
}
