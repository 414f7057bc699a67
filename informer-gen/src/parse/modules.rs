//! Walking a crate's module tree from its root file, the way rustc finds module files.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

use informer_templates::{
    Resource,
    attr::{
        self, Ctxt, Declared, Form, InformerAttrs, KubeAttrs, KubeMistakes,
        symbol::{INFORMER, KUBE},
    },
};
use proc_macro2::Ident;
use syn::{Attribute, Item, Meta, spanned::Spanned};

use super::{
    Error, attrs,
    impl_resource::{self, Implemented},
    prune::Prune,
};
use crate::Location;

/// A resource found in the sources, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The resource.
    pub(crate) resource: Resource,
    /// Where it is declared: its `#[kube(...)]` or `#[informer(...)]` attribute, or its
    /// `impl Resource` block.
    pub(crate) location: Location,
}

/// What one input crate declares.
#[derive(Debug, Clone, Default)]
pub(crate) struct ParsedCrate {
    /// Every file read, in reading order, parsed or not.
    pub(crate) files: Vec<PathBuf>,
    /// The files read but not parsed: [`Prune`] found they cannot declare a resource the
    /// filters keep.
    pub(crate) skipped: Vec<PathBuf>,
    /// The resources, in source order.
    pub(crate) found: Vec<Found>,
    /// The Rust paths of the types with `impl Metadata for X { type Ty = ObjectMeta; }`
    /// (k8s-openapi style), whether or not they are resources.
    pub(crate) object_meta: BTreeSet<String>,
}

/// Where a module's items are and where its children go.
struct Module {
    /// The file the items are in.
    file: PathBuf,
    /// The Rust path of the module, such as `::crds::v1`.
    path: String,
    cfgs: Vec<Meta>,
    /// Where `mod x;` looks for `x.rs` and `x/mod.rs`.
    child_dir: PathBuf,
    /// What `#[path = "..."]` is relative to.
    path_attr_base: PathBuf,
}

/// An `impl Resource` waiting for the `impl ListableResource` check.
struct Candidate {
    found: Found,
    type_path: String,
}

struct Walker<'a> {
    /// Which files need not be parsed; `None` parses every file.
    prune: Option<&'a Prune>,
    parsed: ParsedCrate,
    read: BTreeSet<PathBuf>,
    impls: Vec<Candidate>,
    listable: BTreeSet<String>,
    /// The attribute mistakes of every item, reported together once the crate is read.
    mistakes: Vec<(Location, attr::Error)>,
}

/// Parses the crate whose root file is `root` (its text is `text` if given, else read), with
/// items at Rust path `crate_path` (such as `::sample_crds` or `crate`). With `prune`, the files
/// it rules out are read but not parsed (nor the modules they would declare, which they have
/// none of), so only what they would have declared is missing: resources the filters drop,
/// and their mistakes.
pub(crate) fn parse_crate(
    root: &Path,
    text: Option<String>,
    crate_path: &str,
    prune: Option<&Prune>,
) -> Result<ParsedCrate, Error> {
    let mut walker = Walker {
        prune,
        parsed: ParsedCrate::default(),
        read: BTreeSet::new(),
        impls: Vec::new(),
        listable: BTreeSet::new(),
        mistakes: Vec::new(),
    };
    let dir = root.parent().map(Path::to_path_buf).unwrap_or_default();
    let module = Module {
        file: root.to_path_buf(),
        path: crate_path.to_owned(),
        cfgs: Vec::new(),
        child_dir: dir.clone(),
        path_attr_base: dir,
    };
    if let Some(file) = walker.read(root, text, None, crate_path)? {
        walker.items(&file.items, &module)?;
    }
    let Walker {
        mut parsed,
        impls,
        listable,
        mistakes,
        ..
    } = walker;
    if !mistakes.is_empty() {
        return Err(Error::Attributes { errors: mistakes });
    }
    // k8s-openapi marks the types that can be listed (and so watched) with `ListableResource`;
    // when the input uses that marker, types without it are skipped.
    let check_listable = !listable.is_empty();
    parsed.found.extend(
        impls
            .into_iter()
            .filter(|c| !check_listable || listable.contains(&c.type_path))
            .map(|c| c.found),
    );
    Ok(parsed)
}

fn syntax_error(path: &Path, err: &syn::Error) -> Error {
    Error::Syntax {
        location: Location::of(path, err.span()),
        message: err.to_string(),
    }
}

impl Module {
    /// The module's `cfg` predicates followed by an item's own.
    fn cfgs_with(&self, own: Vec<Meta>) -> Vec<Meta> {
        let mut cfgs = self.cfgs.clone();
        cfgs.extend(own);
        cfgs
    }
}

impl Walker<'_> {
    /// Reads the file of the module at Rust path `module`, declared at `from`, and parses it
    /// unless pruning rules it out (then `None`).
    fn read(
        &mut self,
        path: &Path,
        text: Option<String>,
        from: Option<Location>,
        module: &str,
    ) -> Result<Option<syn::File>, Error> {
        if !self.read.insert(path.to_path_buf())
            && let Some(location) = from
        {
            return Err(Error::ModuleLoop {
                location,
                path: path.to_path_buf(),
            });
        }
        let text = match text {
            Some(text) => text,
            None => std::fs::read_to_string(path).map_err(|source| Error::Read {
                path: path.to_path_buf(),
                source,
            })?,
        };
        self.parsed.files.push(path.to_path_buf());
        if self.prune.is_some_and(|prune| !prune.must_parse(module, &text)) {
            self.parsed.skipped.push(path.to_path_buf());
            return Ok(None);
        }
        syn::parse_file(&text)
            .map(Some)
            .map_err(|e| syntax_error(path, &e))
    }

    fn items(&mut self, items: &[Item], module: &Module) -> Result<(), Error> {
        for item in items {
            match item {
                Item::Mod(m) => self.module(m, module)?,
                Item::Struct(s) => self.derived(&s.ident, &s.attrs, module)?,
                Item::Enum(e) => self.derived(&e.ident, &e.attrs, module)?,
                Item::Impl(i) => self.implementation(i, module)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// The resource of a struct or enum deriving `CustomResource` or `Informer`, read from its
    /// `#[kube(...)]` and `#[informer(...)]` attributes by the derive's own parser.
    fn derived(&mut self, ident: &Ident, attrs: &[Attribute], module: &Module) -> Result<(), Error> {
        let derives = attrs::derives(&module.file, attrs)?;
        let custom_resource = derives.iter().any(|d| d == "CustomResource");
        if !custom_resource && !derives.iter().any(|d| d == "Informer") {
            return Ok(());
        }
        let mut cx = Ctxt::new();
        let informer = InformerAttrs::from_attrs(&mut cx, attrs);
        let kube = KubeAttrs::from_attrs(attrs);
        let declared = match attr::form_of(&kube, custom_resource) {
            Form::CustomResource => {
                attr::custom_resource(&mut cx, ident, &kube, &informer, KubeMistakes::Report)
            }
            Form::Standalone => attr::standalone(&mut cx, ident, &informer),
        };
        if !cx.is_empty() {
            // Every item's mistakes are reported, not only the first item's.
            self.mistakes.extend(
                cx.into_diagnostics()
                    .into_iter()
                    .map(|d| (Location::of(&module.file, d.span()), d.error)),
            );
            return Ok(());
        }
        let location = Location::of(&module.file, ident.span());
        let Some(declared) = declared else {
            // The parser records why it declares nothing; this is a safety net.
            self.mistakes.push((location, attr::Error::MissingInformer));
            return Ok(());
        };
        // The attribute that declares the resource, for messages about the declaration.
        let declared_by = match declared.form {
            Form::CustomResource => KUBE,
            Form::Standalone => INFORMER,
        };
        let attribute = attrs
            .iter()
            .find(|a| a.path().is_ident(declared_by))
            .map_or(location.clone(), |a| Location::of(&module.file, a.span()));
        let cfgs = module.cfgs_with(attrs::cfgs(&module.file, attrs)?);
        let Declared {
            group,
            version,
            kind,
            plural,
            scope,
            type_name,
            ..
        } = declared;
        let rust_path = rust_path(&format!("{}::{type_name}", module.path), &location)?;
        let resource = Resource::new(group, version, kind, plural, scope, rust_path).with_cfgs(cfgs);
        self.parsed.found.push(Found {
            resource,
            location: attribute,
        });
        Ok(())
    }

    fn implementation(&mut self, item: &syn::ItemImpl, module: &Module) -> Result<(), Error> {
        match impl_resource::classify(&module.file, item)? {
            Implemented::Other => {}
            Implemented::Listable(self_ty) => {
                self.listable.insert(resolve(&self_ty, &module.path));
            }
            Implemented::ObjectMeta(self_ty) => {
                self.parsed.object_meta.insert(resolve(&self_ty, &module.path));
            }
            Implemented::Resource {
                self_ty,
                group,
                version,
                kind,
                plural,
                scope,
            } => {
                let cfgs = module.cfgs_with(attrs::cfgs(&module.file, &item.attrs)?);
                let type_path = resolve(&self_ty, &module.path);
                let location = Location::of(&module.file, item.impl_token.span());
                let rust_path = rust_path(&type_path, &location)?;
                let resource = Resource::new(group, version, kind, plural, scope, rust_path).with_cfgs(cfgs);
                self.impls.push(Candidate {
                    found: Found { resource, location },
                    type_path,
                });
            }
        }
        Ok(())
    }

    fn module(&mut self, item: &syn::ItemMod, parent: &Module) -> Result<(), Error> {
        let own_cfgs = attrs::cfgs(&parent.file, &item.attrs)?;
        if attrs::is_test_only(&own_cfgs) {
            return Ok(());
        }
        let name = item.ident.to_string();
        let dir_name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
        let path_attr = attrs::path_attr(&parent.file, &item.attrs)?;
        let mut cfgs = parent.cfgs.clone();
        cfgs.extend(own_cfgs.iter().cloned());
        let path = format!("{}::{name}", parent.path);
        let location = Location::of(&parent.file, item.ident.span());
        if let Some((_, items)) = &item.content {
            let dir = match &path_attr {
                Some(p) => parent.path_attr_base.join(p),
                None => parent.child_dir.join(&dir_name),
            };
            let module = Module {
                file: parent.file.clone(),
                path,
                cfgs,
                child_dir: dir.clone(),
                path_attr_base: dir,
            };
            return self.items(items, &module);
        }
        let (file, mod_rs) = match &path_attr {
            // A file named by `#[path]` owns its directory like a `mod.rs`.
            Some(p) => (parent.path_attr_base.join(p), true),
            None => {
                let flat = parent.child_dir.join(format!("{dir_name}.rs"));
                let nested = parent.child_dir.join(&dir_name).join("mod.rs");
                if flat.is_file() {
                    (flat, false)
                } else if nested.is_file() {
                    (nested, true)
                } else if !own_cfgs.is_empty() {
                    // A module behind a `cfg` may legitimately not exist.
                    return Ok(());
                } else {
                    return Err(Error::ModuleNotFound {
                        location,
                        module: name,
                        candidates: format!("{} and {}", flat.display(), nested.display()),
                    });
                }
            }
        };
        let Some(parsed) = self.read(&file, None, Some(location), &path)? else {
            return Ok(());
        };
        let file_dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let module = Module {
            child_dir: if mod_rs {
                file_dir.clone()
            } else {
                file_dir.join(&dir_name)
            },
            path_attr_base: file_dir,
            file,
            path,
            cfgs,
        };
        self.items(&parsed.items, &module)
    }
}

/// The absolute path of a type written `path` inside module `module` (`Foo`, `self::Foo`,
/// `super::Foo` or `crate::x::Foo`).
fn resolve(path: &syn::Path, module: &str) -> String {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let mut base: Vec<&str> = module.split("::").collect();
    let mut rest = segments.as_slice();
    while let Some((first, tail)) = rest.split_first() {
        match first.as_str() {
            "self" => {}
            "super" => {
                if base.len() > 1 {
                    base.pop();
                }
            }
            "crate" => base.truncate(if module.starts_with("::") { 2 } else { 1 }),
            _ => break,
        }
        rest = tail;
    }
    let mut all: Vec<&str> = base;
    all.extend(rest.iter().map(String::as_str));
    all.join("::")
}

/// `type_path` parsed, for the resource declared at `location`.
fn rust_path(type_path: &str, location: &Location) -> Result<syn::Path, Error> {
    syn::parse_str(type_path).map_err(|e| Error::TypePath {
        location: location.clone(),
        path: type_path.to_owned(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn paths_resolve_against_the_module() {
        let foo: syn::Path = syn::parse_quote!(Foo);
        assert_eq!(resolve(&foo, "::c::a::b"), "::c::a::b::Foo");
        let sup: syn::Path = syn::parse_quote!(super::Foo);
        assert_eq!(resolve(&sup, "::c::a::b"), "::c::a::Foo");
        let krate: syn::Path = syn::parse_quote!(crate::x::Foo);
        assert_eq!(resolve(&krate, "::c::a::b"), "::c::x::Foo");
        assert_eq!(resolve(&krate, "crate::a"), "crate::x::Foo");
    }
}
