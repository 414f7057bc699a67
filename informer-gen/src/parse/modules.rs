//! Walking a crate's module tree from its root file, the way rustc finds module files.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

use informer_templates::Resource;
use syn::{Item, Meta, spanned::Spanned};

use super::{
    Error, attrs,
    impl_resource::{self, Implemented},
    kube_attrs::{self, Declared},
};
use crate::Location;

/// A resource found in the sources, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The resource.
    pub resource: Resource,
    /// Where it is declared.
    pub location: Location,
}

/// What one input crate declares.
#[derive(Debug, Clone, Default)]
pub struct ParsedCrate {
    /// Every file read, in reading order.
    pub files: Vec<PathBuf>,
    /// The resources, in source order.
    pub found: Vec<Found>,
    /// The Rust paths of the types with `impl Metadata for X { type Ty = ObjectMeta; }`
    /// (k8s-openapi style), whether or not they are resources.
    pub object_meta: BTreeSet<String>,
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

#[derive(Default)]
struct Walker {
    parsed: ParsedCrate,
    read: BTreeSet<PathBuf>,
    impls: Vec<Candidate>,
    listable: BTreeSet<String>,
}

/// Parses the crate whose root file is `root` (its text is `text` if given, else read), with
/// items at Rust path `crate_path` (such as `::sample_crds` or `crate`).
pub fn parse_crate(root: &Path, text: Option<String>, crate_path: &str) -> Result<ParsedCrate, Error> {
    let mut walker = Walker::default();
    let dir = root.parent().map(Path::to_path_buf).unwrap_or_default();
    let module = Module {
        file: root.to_path_buf(),
        path: crate_path.to_owned(),
        cfgs: Vec::new(),
        child_dir: dir.clone(),
        path_attr_base: dir,
    };
    let file = walker.read(root, text, None)?;
    walker.items(&file.items, &module)?;
    let Walker {
        mut parsed,
        impls,
        listable,
        ..
    } = walker;
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

impl Walker {
    fn read(
        &mut self,
        path: &Path,
        text: Option<String>,
        from: Option<Location>,
    ) -> Result<syn::File, Error> {
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
        syn::parse_file(&text).map_err(|e| syntax_error(path, &e))
    }

    fn items(&mut self, items: &[Item], module: &Module) -> Result<(), Error> {
        for item in items {
            match item {
                Item::Mod(m) => self.module(m, module)?,
                Item::Struct(s) => self.structure(s, module)?,
                Item::Enum(e) => {
                    let derives = attrs::derives(&module.file, &e.attrs)?;
                    if derives.iter().any(|d| d == "Informer") {
                        let cfgs = attrs::cfgs(&module.file, &e.attrs)?;
                        let declared = kube_attrs::informer(&module.file, &e.attrs, &e.ident)?;
                        self.declare(declared, module, cfgs, e.ident.span());
                    }
                }
                Item::Impl(i) => self.implementation(i, module)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn structure(&mut self, item: &syn::ItemStruct, module: &Module) -> Result<(), Error> {
        let derives = attrs::derives(&module.file, &item.attrs)?;
        let mut declared = Vec::new();
        if derives.iter().any(|d| d == "CustomResource") {
            declared.push(kube_attrs::custom_resource(&module.file, item)?);
        }
        if derives.iter().any(|d| d == "Informer") {
            declared.push(kube_attrs::informer(&module.file, &item.attrs, &item.ident)?);
        }
        if !declared.is_empty() {
            let cfgs = attrs::cfgs(&module.file, &item.attrs)?;
            for d in declared {
                self.declare(d, module, cfgs.clone(), item.ident.span());
            }
        }
        Ok(())
    }

    fn declare(&mut self, declared: Declared, module: &Module, cfgs: Vec<Meta>, span: proc_macro2::Span) {
        let location = Location::of(&module.file, span);
        let type_path = format!("{}::{}", module.path, declared.type_name);
        if let Some(resource) = resource(declared, &type_path, module, cfgs) {
            self.parsed.found.push(Found { resource, location });
        }
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
                let cfgs = attrs::cfgs(&module.file, &item.attrs)?;
                let type_path = resolve(&self_ty, &module.path);
                let declared = Declared {
                    group,
                    version,
                    kind,
                    plural,
                    scope,
                    type_name: String::new(),
                };
                let location = Location::of(&module.file, item.impl_token.span());
                if let Some(resource) = resource(declared, &type_path, module, cfgs) {
                    self.impls.push(Candidate {
                        found: Found { resource, location },
                        type_path,
                    });
                }
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
        let parsed = self.read(&file, None, Some(location))?;
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

fn resource(declared: Declared, type_path: &str, module: &Module, own_cfgs: Vec<Meta>) -> Option<Resource> {
    let rust_path: syn::Path = syn::parse_str(type_path).ok()?;
    let mut cfgs = module.cfgs.clone();
    cfgs.extend(own_cfgs);
    Some(
        Resource::new(
            declared.group,
            declared.version,
            declared.kind,
            declared.plural,
            declared.scope,
            rust_path,
        )
        .with_cfgs(cfgs),
    )
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
