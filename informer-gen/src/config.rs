//! The generator's configuration: a builder for build scripts, also behind the CLI.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use informer_templates::{Api, RenderOptions};

use crate::{
    Error, Layout, compat,
    filter::{Filter, GvrPattern},
    manifest::{self, Dependency},
    output::{self, Context},
    parse::{self, Found, Prune},
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
    input_dependencies: Vec<String>,
    module_name: String,
    crate_name: Option<String>,
    layout: Layout,
    include: Vec<String>,
    exclude: Vec<String>,
    include_paths: Vec<String>,
    exclude_paths: Vec<String>,
    group_accessors: BTreeMap<String, String>,
    prune: bool,
    allow_version_mismatch: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

/// What [`Config::generate`] produced, with the files it read.
struct Generated {
    files: BTreeMap<PathBuf, String>,
    /// The source files read.
    read: Vec<PathBuf>,
    /// The `Cargo.toml` and `Cargo.lock` files read to check the inputs' versions.
    manifests: Vec<PathBuf>,
}

/// What the inputs declare, and the files read for it.
struct Declared {
    found: Vec<Found>,
    /// Every file read, parsed or not.
    read: Vec<PathBuf>,
    /// How many of them were not parsed (pruned by the filters).
    skipped: usize,
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
            input_dependencies: Vec::new(),
            module_name: "informers".to_owned(),
            crate_name: None,
            layout: Layout::SingleFile,
            include: Vec::new(),
            exclude: Vec::new(),
            include_paths: Vec::new(),
            exclude_paths: Vec::new(),
            group_accessors: BTreeMap::new(),
            prune: true,
            allow_version_mismatch: false,
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

    /// The dependency line of an input crate in a generated crate's `Cargo.toml`, such as
    /// `my-crds = "1.2"` or `my-crds = { path = "../my-crds" }`, replacing the line chosen for
    /// the input whose package it names (the key before `=`). Without one, an input unpacked
    /// by Cargo from a registry (a directory in `$CARGO_HOME/registry/src/`) is required by its
    /// version, `my-crds = "1.2.3"`, and any other input by its path relative to the output
    /// directory. Repeatable, once per input.
    #[must_use]
    pub fn input_dependency(mut self, line: impl Into<String>) -> Self {
        self.input_dependencies.push(line.into());
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

    /// Whether files that cannot declare a resource the filters keep are left unparsed (default
    /// `true`). The filters that prune are [`include`](Self::include) (a file whose text lacks
    /// the group and version of every included pattern),
    /// [`include_rust_path`](Self::include_rust_path) and
    /// [`exclude_rust_path`](Self::exclude_rust_path) (a module whose Rust path no resource
    /// declared in it could be kept under); [`exclude`](Self::exclude) alone prunes nothing.
    /// Files that declare modules in other files are always parsed. What is generated is the
    /// same either way; mistakes in a file left unparsed, such as a syntax error, are not
    /// reported. `false` parses every file.
    #[must_use]
    pub fn prune(mut self, prune: bool) -> Self {
        self.prune = prune;
        self
    }

    /// Generates even from an input built with other kube or k8s-openapi versions than the
    /// generated code needs (default `false`).
    ///
    /// Generated code is built with informer-runtime's kube ([`KUBE_REQUIREMENT`](crate::KUBE_REQUIREMENT))
    /// and k8s-openapi ([`K8S_OPENAPI_REQUIREMENT`](crate::K8S_OPENAPI_REQUIREMENT)), and
    /// names the input's types as theirs: an input that depends on other versions gives code
    /// that does not compile. So each input with a `Cargo.toml` is checked first: its
    /// dependencies on `kube`, `kube-core`, `kube-derive` and `k8s-openapi` (renamed ones too,
    /// and those inherited from its workspace's `[workspace.dependencies]`) must allow a
    /// version these requirements allow, and so must the versions its `Cargo.lock` (or its
    /// workspace's) holds; otherwise generating fails with
    /// [`VersionError::Mismatch`](crate::VersionError::Mismatch), naming each dependency and
    /// file. `true` skips the check.
    #[must_use]
    pub fn allow_version_mismatch(mut self, allow: bool) -> Self {
        self.allow_version_mismatch = allow;
        self
    }

    /// The generated files, by path relative to the output directory, formatted. Reads the
    /// inputs and nothing else; writes nothing.
    pub fn generate(&self) -> Result<BTreeMap<PathBuf, String>, Error> {
        Ok(self.run()?.files)
    }

    /// Generates and writes the files whose content changed into the output directory, and
    /// prints `cargo:rerun-if-changed` for every input file read, the `Cargo.toml` and
    /// `Cargo.lock` files read for the version check included (for build scripts). Like
    /// [`write`](Self::write), it removes files generated earlier that are no longer generated.
    pub fn compile(&self) -> Result<(), Error> {
        let generated = self.run()?;
        for file in generated.read.iter().chain(&generated.manifests) {
            println!("cargo:rerun-if-changed={}", file.display());
        }
        self.sync(&generated.files)?;
        Ok(())
    }

    /// The output files that are missing or out of date, and, in the [`Layout::Tree`] and
    /// [`Layout::Crate`] layouts, the generated files of the output directory that would no
    /// longer be generated ([`orphan_files`](crate::orphan_files)); writes nothing.
    pub fn stale_files(&self) -> Result<Vec<PathBuf>, Error> {
        let generated = self.run()?;
        let dir = self.resolved_out_dir()?;
        let mut stale = output::stale_files(&dir, &generated.files);
        if self.owns_out_dir() {
            stale.extend(output::orphan_files(&dir, &generated.files));
        }
        Ok(stale)
    }

    /// Generates and writes the files whose content changed; returns the files written and
    /// removed (a removed file no longer exists).
    ///
    /// In the [`Layout::Tree`] and [`Layout::Crate`] layouts the output directory belongs to
    /// the generator: generated files of an earlier run that are no longer generated (those
    /// starting with the `@generated` header line, see [`is_generated`](crate::is_generated))
    /// are removed, with the directories this leaves empty. Files without the header are
    /// never removed, and never overwritten: a file in the way of a generated one is an
    /// error ([`OutputError::NotGenerated`](crate::OutputError::NotGenerated)). The
    /// single-file layout writes its one file and touches nothing else.
    pub fn write(&self) -> Result<Vec<PathBuf>, Error> {
        let generated = self.run()?;
        self.sync(&generated.files)
    }

    /// Whether the output directory holds only this generator's output (so orphans are its).
    fn owns_out_dir(&self) -> bool {
        !matches!(self.layout, Layout::SingleFile)
    }

    fn sync(&self, files: &BTreeMap<PathBuf, String>) -> Result<Vec<PathBuf>, Error> {
        let dir = self.resolved_out_dir()?;
        let mut changed = output::write_if_changed(&dir, files)?;
        if self.owns_out_dir() {
            changed.extend(output::remove_orphans(&dir, files)?);
        }
        Ok(changed)
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
        let prune = if self.prune { Prune::new(&filter) } else { None };
        let mut declared = Declared {
            found: Vec::new(),
            read: Vec::new(),
            skipped: 0,
        };
        let mut header_inputs = Vec::new();
        let mut packages = Vec::new();
        let mut manifests = Vec::new();
        for input in &self.inputs {
            let resolved = self.resolve(input)?;
            if !self.allow_version_mismatch
                && let Some((package, dir)) = &resolved.package
            {
                manifests.extend(compat::check(dir, package)?);
            }
            let parsed = parse::parse_crate(
                &resolved.root,
                resolved.text,
                &resolved.crate_path,
                prune.as_ref(),
            )?;
            declared.read.extend(parsed.files);
            declared.skipped += parsed.skipped.len();
            declared.found.extend(parsed.found);
            header_inputs.push(resolved.crate_path.trim_start_matches("::").to_owned());
            packages.extend(resolved.package);
        }
        let total = declared.found.len();
        let mut found = std::mem::take(&mut declared.found);
        found.retain(|f| filter.keeps(&f.resource));
        if found.is_empty() {
            return Err(self.no_resources(total, &declared));
        }
        let read = declared.read;
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
            resource_items: &BTreeMap::new(),
        };
        let mut files = output::render_files(&api, &self.layout, &context)?;
        if let Layout::Crate { name } = &self.layout {
            let out_dir = absolute(&self.resolved_out_dir()?)?;
            let dependencies = self.input_dependencies(&packages, &out_dir)?;
            let features = manifest::cfg_features(&api.resources());
            let manifest = manifest::crate_manifest(name, &dependencies, &self.runtime_dependency, &features);
            files.insert(PathBuf::from("Cargo.toml"), manifest);
        }
        Ok(Generated {
            files,
            read,
            manifests,
        })
    }
}

impl Config {
    /// The `[dependencies]` lines of the input `packages` (name and directory) for a generated
    /// crate in `out_dir`: the configured lines first, else the default of each.
    fn input_dependencies(
        &self,
        packages: &[(String, PathBuf)],
        out_dir: &Path,
    ) -> Result<Vec<Dependency>, Error> {
        let mut configured = BTreeMap::new();
        for line in &self.input_dependencies {
            let package = manifest::dependency_package(line)
                .ok_or_else(|| manifest::Error::DependencyLine { line: line.clone() })?;
            if !packages.iter().any(|(name, _)| *name == package) {
                let inputs: Vec<&str> = packages.iter().map(|(name, _)| name.as_str()).collect();
                return Err(manifest::Error::UnknownInput {
                    line: line.clone(),
                    package,
                    inputs: if inputs.is_empty() {
                        "none with a Cargo.toml".to_owned()
                    } else {
                        inputs.join(", ")
                    },
                }
                .into());
            }
            configured.insert(package, line.trim().to_owned());
        }
        packages
            .iter()
            .map(|(package, dir)| {
                let line = match configured.get(package) {
                    Some(line) => line.clone(),
                    None => manifest::input_dependency(package, &absolute(dir)?, out_dir),
                };
                Ok(Dependency {
                    package: package.clone(),
                    line,
                })
            })
            .collect()
    }
}

/// How many files of a "no resources" message are named; the rest are counted.
const FILES_NAMED: usize = 3;

impl Config {
    /// No resource among `total` found in the files `declared` read: a summary of what was
    /// read and of the filters that dropped them, with what to change.
    fn no_resources(&self, total: usize, declared: &Declared) -> Error {
        let read = &declared.read;
        let mut named = read
            .iter()
            .take(FILES_NAMED)
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        if read.len() > FILES_NAMED {
            named.push_str(&format!(" and {} more", read.len() - FILES_NAMED));
        }
        if declared.skipped > 0 {
            named.push_str(&format!(
                "; {} of them not parsed, since the filters keep nothing they could declare",
                declared.skipped
            ));
        }
        let plural = |n: usize, one: &str, many: &str| if n == 1 { one.to_owned() } else { many.to_owned() };
        let read_summary = format!(
            "{} {} read ({named})",
            read.len(),
            plural(read.len(), "file", "files"),
        );
        if total == 0 && declared.skipped == 0 {
            return Error::NoResources {
                filters: String::new(),
                read: read_summary,
                hint: "; declare resources in the input or give another input".to_owned(),
            };
        }
        let filters: Vec<String> = [
            ("include", &self.include),
            ("exclude", &self.exclude),
            ("include-path", &self.include_paths),
            ("exclude-path", &self.exclude_paths),
        ]
        .into_iter()
        .flat_map(|(what, list)| list.iter().map(move |p| format!("{what} `{p}`")))
        .collect();
        Error::NoResources {
            filters: format!(" matching the filters ({})", filters.join(", ")),
            read: read_summary,
            hint: if total == 0 {
                ": none was found in the files parsed; change or remove the filters".to_owned()
            } else {
                format!(
                    ": the {total} {} found {} filtered out; change or remove the filters",
                    plural(total, "resource", "resources"),
                    plural(total, "was", "were all")
                )
            },
        }
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
                first: Box::new(first.location.clone()),
                first_path: path_of(&first.resource),
                second: Box::new(f.location.clone()),
                second_path: path_of(r),
            });
        }
    }
    Ok(())
}

/// The Rust path of `resource`'s type as written in `--exclude-path`, such as `::crds::v1::Foo`.
fn path_of(resource: &informer_templates::Resource) -> String {
    quote::ToTokens::to_token_stream(&resource.rust_path)
        .to_string()
        .replace(' ', "")
}
