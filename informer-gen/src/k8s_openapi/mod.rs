//! The crate of informers for every built-in Kubernetes resource, generated from k8s-openapi's
//! own sources ([`K8sOpenapi`]).

mod build_script;
mod exclusions;
mod indexes;
mod locate;
mod manifest;
mod versions;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use informer_templates::{Api, RenderOptions, Resource};

pub use build_script::version_build_script;
use exclusions::EXCLUSIONS;
pub use exclusions::Exclusion;
use indexes::{WELL_KNOWN_INDEXES, index_doc_lines, render_indexes};
pub use locate::Package;
use locate::locate;
pub use manifest::ManifestStyle;
pub use versions::KubeVersion;
use versions::{VersionedResource, read_versions};

use crate::{
    Error, Layout,
    filter::GvrPattern,
    output::{self, Context},
};

/// Generates a crate of informers for every built-in Kubernetes resource from k8s-openapi's
/// own sources.
///
/// k8s-openapi ships one module per Kubernetes version (`src/v1_33` … `src/v1_37`) and
/// compiles the one its version feature selects. `K8sOpenapi` reads the `impl Resource`,
/// `impl ListableResource` and `impl Metadata` blocks of every version module, keeps the
/// listable resources with `ObjectMeta` (minus the [exclusions](Self::DEFAULT_EXCLUSIONS)),
/// and writes a crate whose items are gated:
///
/// - on the Kubernetes version, for resources that exist in some versions only:
///   `#[cfg(any(k8s_1_33, k8s_1_34))]`, with a generated build script that sets the
///   `k8s_1_NN` cfg from the version k8s-openapi publishes to its dependents
///   (`DEP_K8S_OPENAPI_*_VERSION`);
/// - on one Cargo feature per API group, named after the group accessor (`apps`, `core`),
///   all enabled by default.
///
/// The modules of some resources also get typed index handles (`pub static`
/// `informer_runtime::cache::Index`) for the indexes controllers usually need, such as
/// `core::v1::POD_BY_NODE_NAME` (pods by `spec.nodeName`); the crate's documentation lists them.
///
/// Files are prettyplease-formatted and start with the `@generated` header and
/// `#![cfg_attr(rustfmt, rustfmt::skip)]`, so `cargo fmt --check` leaves them alone.
///
/// ```no_run
/// use informer_gen::{K8sOpenapi, ManifestStyle};
///
/// let generator = K8sOpenapi::new()
///     .version_prefix("0.29.")
///     .crate_name("k8s-informers")
///     .manifest_style(ManifestStyle::Workspace);
/// let stale = generator.stale_files("k8s-informers".as_ref()).expect("generated");
/// assert!(stale.is_empty(), "regenerate: {stale:?}");
/// ```
#[derive(Debug, Clone)]
pub struct K8sOpenapi {
    source: Option<PathBuf>,
    manifest_path: Option<PathBuf>,
    version_prefix: Option<String>,
    crate_name: String,
    style: ManifestStyle,
    runtime_path: String,
    regenerate: Option<String>,
    exclusions: Vec<Exclusion>,
}

/// What [`K8sOpenapi::generate`] produced (`informer_gen::K8sOpenapiOutput`).
#[derive(Debug, Clone)]
pub struct Generated {
    /// The files, by path relative to the crate directory.
    pub files: BTreeMap<PathBuf, String>,
    /// The k8s-openapi package read.
    pub package: Package,
    /// The Kubernetes versions and how many resources each gets.
    pub per_version: Vec<(KubeVersion, usize)>,
    /// The resources generated, in any version.
    pub resources: usize,
    /// The `group/version/plural` of the listable resources left out.
    pub excluded: Vec<String>,
}

impl Default for K8sOpenapi {
    fn default() -> Self {
        Self::new()
    }
}

impl K8sOpenapi {
    /// The listable resources left out by default, each with the reason.
    pub const DEFAULT_EXCLUSIONS: &'static [Exclusion] = EXCLUSIONS;

    /// A configuration for the crate `k8s-informers`, k8s-openapi found through
    /// `cargo metadata` in the current directory, standalone manifest, default exclusions.
    pub fn new() -> Self {
        Self {
            source: None,
            manifest_path: None,
            version_prefix: None,
            crate_name: "k8s-informers".to_owned(),
            style: ManifestStyle::Standalone {
                runtime_dependency: crate::manifest::default_runtime_dependency(),
            },
            runtime_path: "::informer_runtime".to_owned(),
            regenerate: None,
            exclusions: EXCLUSIONS.to_vec(),
        }
    }

    /// Reads k8s-openapi from this package directory instead of finding it with
    /// `cargo metadata`.
    #[must_use]
    pub fn source(mut self, dir: impl Into<PathBuf>) -> Self {
        self.source = Some(dir.into());
        self
    }

    /// The `Cargo.toml` whose workspace `cargo metadata` looks in (default: the current
    /// directory's).
    #[must_use]
    pub fn manifest_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.manifest_path = Some(path.into());
        self
    }

    /// Picks the k8s-openapi whose version starts with `prefix` (`0.29.`) when the workspace
    /// has several.
    #[must_use]
    pub fn version_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.version_prefix = Some(prefix.into());
        self
    }

    /// The package name of the generated crate (default `k8s-informers`).
    #[must_use]
    pub fn crate_name(mut self, name: impl Into<String>) -> Self {
        self.crate_name = name.into();
        self
    }

    /// How the manifest names package fields and dependencies.
    #[must_use]
    pub fn manifest_style(mut self, style: ManifestStyle) -> Self {
        self.style = style;
        self
    }

    /// The Rust path of the runtime crate (default `::informer_runtime`).
    #[must_use]
    pub fn runtime_path(mut self, path: impl Into<String>) -> Self {
        self.runtime_path = path.into();
        self
    }

    /// The command that regenerates the crate, named in its docs.
    #[must_use]
    pub fn regenerate_command(mut self, command: impl Into<String>) -> Self {
        self.regenerate = Some(command.into());
        self
    }

    /// Replaces the exclusion list (default [`Self::DEFAULT_EXCLUSIONS`]).
    #[must_use]
    pub fn exclusions(mut self, exclusions: Vec<Exclusion>) -> Self {
        self.exclusions = exclusions;
        self
    }

    /// The k8s-openapi package read.
    pub fn package(&self) -> Result<Package, Error> {
        match &self.source {
            Some(dir) => Ok(Package {
                version: std::fs::read_to_string(dir.join("Cargo.toml"))
                    .ok()
                    .and_then(|text| crate::manifest::package_version(&text))
                    .unwrap_or_default(),
                dir: dir.clone(),
            }),
            None => locate(self.manifest_path.as_deref(), self.version_prefix.as_deref()),
        }
    }

    /// The crate's files (relative to its directory), formatted; writes nothing.
    pub fn generate(&self) -> Result<Generated, Error> {
        let package = self.package()?;
        let (kube_versions, found) = read_versions(&package.dir.join("src"))?;
        let patterns = self
            .exclusions
            .iter()
            .map(|e| {
                GvrPattern::parse(e.pattern).ok_or_else(|| Error::Pattern {
                    pattern: e.pattern.to_owned(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (excluded, kept): (Vec<_>, Vec<_>) = found
            .into_iter()
            .partition(|f| patterns.iter().any(|p| p.matches(&f.resource)));
        if kept.is_empty() {
            return Err(Error::NoResources {
                filters: " matching the exclusions".to_owned(),
                read: package.dir.join("src").display().to_string(),
                hint: ": every resource found is excluded; change the exclusions".to_owned(),
            });
        }
        let per_version = kube_versions
            .iter()
            .map(|v| (*v, kept.iter().filter(|f| f.versions.contains(v)).count()))
            .collect();
        let resources = gate(&kept, &kube_versions)?;
        let api = Api::new(resources)?;
        let features: Vec<String> = api.groups.iter().map(|g| g.accessor.to_string()).collect();
        let runtime: syn::Path = syn::parse_str(&self.runtime_path).map_err(|e| Error::RustPath {
            what: "runtime path",
            path: self.runtime_path.clone(),
            message: e.to_string(),
        })?;
        let options = RenderOptions::with_runtime(runtime);
        let excluded: Vec<String> = excluded.iter().map(|f| f.resource.gvr()).collect();
        let doc = self.crate_doc(
            &package,
            &kube_versions,
            &features,
            &index_doc_lines(WELL_KNOWN_INDEXES, &api),
        );
        let inputs = ["k8s_openapi".to_owned()];
        let resource_items = render_indexes(
            WELL_KNOWN_INDEXES,
            &self.crate_name.replace('-', "_"),
            &api,
            &options,
        )?;
        let context = Context {
            options: &options,
            inputs: &inputs,
            module_name: "lib",
            crate_doc: Some(&doc),
            rustfmt_skip: true,
            resource_items: &resource_items,
        };
        let layout = Layout::Crate {
            name: self.crate_name.clone(),
        };
        let mut files = output::render_files(&api, &layout, &context)?;
        files.insert(
            PathBuf::from("build.rs"),
            output::file(&context, build_script::render_build_script(&kube_versions))?,
        );
        let description = "Typed informers and listers of every built-in Kubernetes resource (generated by informer-gen from k8s-openapi)";
        let minor = package.version.split('.').take(2).collect::<Vec<_>>().join(".");
        files.insert(
            PathBuf::from("Cargo.toml"),
            manifest::render_manifest(&self.crate_name, description, &self.style, &minor, &features),
        );
        Ok(Generated {
            files,
            package,
            per_version,
            resources: kept.len(),
            excluded,
        })
    }

    /// Generates and writes the files whose content changed into `dir`, and removes the
    /// generated files of `dir` that are no longer generated (with the directories this leaves
    /// empty; files without the `@generated` header, such as a README, are left alone); returns
    /// the files written and removed.
    pub fn write(&self, dir: &Path) -> Result<(Generated, Vec<PathBuf>), Error> {
        let generated = self.generate()?;
        let mut changed = output::write_if_changed(dir, &generated.files)?;
        changed.extend(output::remove_orphans(dir, &generated.files)?);
        Ok((generated, changed))
    }

    /// The files of `dir` that differ from what would be generated, are missing, or are
    /// generated files that would no longer be generated ([`orphan_files`](crate::orphan_files)).
    pub fn stale_files(&self, dir: &Path) -> Result<Vec<PathBuf>, Error> {
        let generated = self.generate()?;
        let mut stale = output::stale_files(dir, &generated.files);
        stale.extend(output::orphan_files(dir, &generated.files));
        Ok(stale)
    }

    fn crate_doc(
        &self,
        package: &Package,
        versions: &[KubeVersion],
        features: &[String],
        indexes: &[String],
    ) -> Vec<String> {
        let first = versions.first().map(ToString::to_string).unwrap_or_default();
        let last = versions.last().map(ToString::to_string).unwrap_or_default();
        let cfgs: Vec<String> = versions.iter().map(|v| format!("`{}`", v.cfg())).collect();
        let mut doc = vec![
            format!(
                "Typed informers and listers of every built-in Kubernetes resource that can be listed and watched: the types of k8s-openapi {} for Kubernetes {first} to {last}, in client-go's shape.",
                package.version
            ),
            String::new(),
            "Start with the runtime's `SharedInformerFactory`: it owns the informers (one per type), starts them, waits for their caches and stops them. [`Informers`] is this crate's typed view of it: group, version, resource.".to_owned(),
            String::new(),
            "```no_run".to_owned(),
            "# async fn run(client: kube::Client) {".to_owned(),
            "use informer_runtime::SharedInformerFactory;".to_owned(),
            "use k8s_informers::Informers;".to_owned(),
            String::new(),
            "let factory = SharedInformerFactory::new(client);".to_owned(),
            "let informers = Informers::new(&factory);".to_owned(),
            "let deployments = informers.apps().v1().deployments();".to_owned(),
            "factory.start();".to_owned(),
            "factory.wait_for_cache_sync().await;".to_owned(),
            "let web = deployments.lister().deployments(\"shop\").get(\"web\");".to_owned(),
            "# }".to_owned(),
            "```".to_owned(),
            String::new(),
            "# With custom resources".to_owned(),
            String::new(),
            "The `Informers` that informer-gen (or `#[derive(Informer)]`) makes for a crate of custom resources is another view of the same kind: give both the same factory and they share its informers, its `start`, its `wait_for_cache_sync` and its `shutdown`.".to_owned(),
            String::new(),
            "```text".to_owned(),
            "let factory = SharedInformerFactory::new(client);".to_owned(),
            "let builtin = k8s_informers::Informers::new(&factory);".to_owned(),
            "let custom = my_crds::informers::Informers::new(&factory);".to_owned(),
            "let (pods, widgets) = (builtin.core().v1().pods(), custom.example_com().v1().widgets());".to_owned(),
            "factory.start();".to_owned(),
            "```".to_owned(),
            String::new(),
            "# Kubernetes versions".to_owned(),
            String::new(),
            "The binary chooses the Kubernetes version with one k8s-openapi feature (`v1_33`, …, `latest`); this crate enables none. Its build script reads the version k8s-openapi publishes (`DEP_K8S_OPENAPI_*_VERSION`) and sets one of the cfgs ".to_owned()
                + &cfgs.join(", ")
                + "; the informers of a resource that exists in some versions only are compiled only with those versions.",
            String::new(),
            "# Features".to_owned(),
            String::new(),
            "One Cargo feature per API group, named after its accessor, all enabled by default: ".to_owned()
                + &features.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
                + ".",
            String::new(),
            "# Build cost".to_owned(),
            String::new(),
            "The functions of this crate are `#[inline]`, so it compiles no informer itself and a group costs little to enable: the crate that calls an accessor compiles what the informer of that resource needs of its type (its decoder, its cache and the typed views of its handlers and listers; the list, watch and queue machinery is compiled once, in the runtime), as `factory.unscoped_informer::<K>()` would. [`Informers::for_resource`] and [`Informers::for_resource_metadata`] compile the informers of every enabled resource in the crate that calls them: a crate that calls them compiles less with only the groups it needs.".to_owned(),
            String::new(),
        ];
        if !indexes.is_empty() {
            doc.extend([
                "# Index handles".to_owned(),
                String::new(),
                "The modules of some resources also have typed index handles (`informer_runtime::cache::Index`) for the indexes controllers usually need: register one with the informer's `add_index`, then query it with the lister's `by_index`.".to_owned(),
                String::new(),
            ]);
            doc.extend(indexes.iter().cloned());
            doc.push(String::new());
        }
        doc.extend([
            "# Resources without informers".to_owned(),
            String::new(),
            "Every resource k8s-openapi marks listable (`ListableResource`) with `ObjectMeta` metadata gets an informer, except:".to_owned(),
            String::new(),
        ]);
        for exclusion in &self.exclusions {
            doc.push(format!(
                "- `{}`: {}.",
                exclusion.pattern,
                exclusion.reason.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
        }
        doc.extend([
            String::new(),
            "# Regenerating".to_owned(),
            String::new(),
            format!(
                "Generated by informer-gen from k8s-openapi's sources; regenerate with {} instead of editing.",
                self.regenerate.as_deref().unwrap_or("`informer_gen::K8sOpenapi::write`")
            ),
        ]);
        doc
    }
}

/// The resources of `found` gated on the versions that have them (nothing when all of
/// `versions` do) and on the feature of their group.
fn gate(found: &[VersionedResource], versions: &[KubeVersion]) -> Result<Vec<Resource>, Error> {
    let plain: Vec<Resource> = found.iter().map(|f| f.resource.clone()).collect();
    let named = Api::new(plain)?;
    let accessor = |group: &str| {
        named
            .groups
            .iter()
            .find(|g| g.name == group)
            .map(|g| g.accessor.to_string())
            .unwrap_or_default()
    };
    Ok(found
        .iter()
        .map(|f| {
            let feature = accessor(&f.resource.group);
            let mut cfgs: Vec<syn::Meta> = vec![syn::parse_quote!(feature = #feature)];
            if f.versions.len() < versions.len() {
                let each: Vec<syn::Ident> = f
                    .versions
                    .iter()
                    .map(|v| quote::format_ident!("{}", v.cfg()))
                    .collect();
                cfgs.push(match each.as_slice() {
                    [one] => syn::parse_quote!(#one),
                    _ => syn::parse_quote!(any(#(#each),*)),
                });
            }
            f.resource.clone().with_cfgs(cfgs)
        })
        .collect())
}
