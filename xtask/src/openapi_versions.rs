//! k8s-openapi's structs in every Kubernetes version it has a module for (`v1_33`, ...): each
//! field's Rust name, JSON name and type shape, read with syn, for the protobuf decoders that
//! fill those structs.
//!
//! A type or field may exist in some versions only; [`Versions`] keeps each version apart so
//! that the generated code can gate what it writes on the version k8s-openapi is built for.

use std::{
    collections::BTreeMap,
    fs,
    path::{Path, PathBuf},
};

use syn::{Fields, GenericArgument, Item, PathArguments, Type};

use crate::builtin_schema::{Error, collect_files, module_path};

/// The shape of a field's Rust type, as far as a decoder needs it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shape {
    /// `Option<T>`.
    Option(Box<Shape>),
    /// `Vec<T>`.
    Vec(Box<Shape>),
    /// `BTreeMap<String, T>`.
    Map(Box<Shape>),
    /// `Box<T>`.
    Boxed(Box<Shape>),
    /// `String`.
    String,
    /// `bool`.
    Bool,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `f64`.
    F64,
    /// `crate::ByteString`.
    ByteString,
    /// A type of the crate, by its path below the version module (`api::core::v1::PodSpec`).
    Named(String),
}

impl Shape {
    /// Reads a field type of k8s-openapi's sources.
    fn of(ty: &Type) -> Result<Self, String> {
        let Type::Path(path) = ty else {
            return Err(format!("unexpected type {}", quote::quote!(#ty)));
        };
        let segments: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let last = path.path.segments.last().ok_or("an empty type path")?;
        let arguments = || -> Result<Vec<Shape>, String> {
            let PathArguments::AngleBracketed(args) = &last.arguments else {
                return Err(format!("{} without type arguments", last.ident));
            };
            args.args
                .iter()
                .filter_map(|a| match a {
                    GenericArgument::Type(t) => Some(Shape::of(t)),
                    _ => None,
                })
                .collect()
        };
        let one = |wrap: fn(Box<Shape>) -> Shape| -> Result<Shape, String> {
            let mut args = arguments()?;
            let inner = args.pop().ok_or("a generic type without arguments")?;
            Ok(wrap(Box::new(inner)))
        };
        match last.ident.to_string().as_str() {
            "Option" => one(Shape::Option),
            "Vec" => one(Shape::Vec),
            "Box" => one(Shape::Boxed),
            "BTreeMap" => {
                let args = arguments()?;
                match args.as_slice() {
                    [Shape::String, value] => Ok(Shape::Map(Box::new(value.clone()))),
                    _ => Err("a map whose keys are not strings".into()),
                }
            }
            "String" => Ok(Shape::String),
            // a borrowed form of what the crate's own types hold (watch_event.rs's bookmarks)
            "Cow" => one(|inner| *inner),
            "bool" => Ok(Shape::Bool),
            "i32" => Ok(Shape::I32),
            "i64" => Ok(Shape::I64),
            "f64" => Ok(Shape::F64),
            "ByteString" => Ok(Shape::ByteString),
            _ if segments.first().is_some_and(|s| s == "crate") => Ok(Shape::Named(segments[1..].join("::"))),
            // a type local to its file (watch_event.rs's `BookmarkObjectMeta`)
            other if segments.len() == 1 => Ok(Shape::Named(other.to_owned())),
            other => Err(format!("unexpected type {other}")),
        }
    }

    /// The type inside `Option`, and whether there was one.
    pub fn optional(&self) -> (bool, &Shape) {
        match self {
            Shape::Option(inner) => (true, inner),
            other => (false, other),
        }
    }
}

/// One field of a struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The Rust name (`type_`, `pod_ip`).
    pub rust: String,
    /// The JSON name (`type`, `podIP`).
    pub json: String,
    /// The Rust type.
    pub shape: Shape,
}

/// One struct of one version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Struct {
    /// Its fields, in declaration order.
    pub fields: Vec<Field>,
    /// Whether it derives `Default` (a struct with a required time does not).
    pub default: bool,
    /// Whether it is a newtype of `serde_json::Value`: an empty Go struct, `{}` in JSON.
    pub opaque: bool,
}

/// A resource kind: its group, version and kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Kind {
    /// The API group (`""` for the core group).
    pub group: String,
    /// The API version (`v1`).
    pub version: String,
    /// The kind (`Pod`).
    pub kind: String,
}

/// The types of one version module.
#[derive(Debug, Default)]
pub struct Version {
    /// The module's name (`v1_37`).
    pub module: String,
    /// Every struct by its path below the module (`api::core::v1::Pod`).
    pub structs: BTreeMap<String, Struct>,
    /// Every enum by its path below the module.
    pub enums: Vec<String>,
    /// The kind of every resource type, by its path.
    pub kinds: BTreeMap<String, Kind>,
}

/// Every version module of k8s-openapi, oldest first.
#[derive(Debug, Default)]
pub struct Versions {
    /// The versions.
    pub versions: Vec<Version>,
}

impl Versions {
    /// Reads every `v1_NN` module of the k8s-openapi sources at `package_dir`.
    pub fn read(package_dir: &Path) -> Result<Self, Error> {
        let src = package_dir.join("src");
        let entries = fs::read_dir(&src).map_err(|source| Error::Read {
            path: src.clone(),
            source,
        })?;
        let mut modules: Vec<(u32, String)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let minor = name.strip_prefix("v1_")?.parse().ok()?;
                e.path().is_dir().then_some((minor, name))
            })
            .collect();
        modules.sort();
        let versions = modules
            .into_iter()
            .map(|(_, module)| read_version(&src.join(&module), module))
            .collect::<Result<_, _>>()?;
        Ok(Self { versions })
    }

    /// The `(major, minor)` of every version.
    pub fn numbers(&self) -> Vec<(u32, u32)> {
        self.versions
            .iter()
            .filter_map(|v| Some((1, v.module.strip_prefix("v1_")?.parse().ok()?)))
            .collect()
    }
}

fn read_version(root: &Path, module: String) -> Result<Version, Error> {
    let mut files = Vec::new();
    collect_files(root, &mut files)?;
    files.sort();
    let mut version = Version {
        module,
        ..Version::default()
    };
    for file in &files {
        let module = module_path(root, file);
        if module.is_empty() {
            continue;
        }
        read_file(file, &module, &mut version)?;
    }
    Ok(version)
}

fn read_file(path: &PathBuf, module: &str, version: &mut Version) -> Result<(), Error> {
    let text = fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.clone(),
        source,
    })?;
    let file = syn::parse_file(&text).map_err(|e| Error::Parse {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let mut local: BTreeMap<String, Vec<(String, Shape)>> = BTreeMap::new();
    let mut defaults = BTreeMap::new();
    for item in &file.items {
        match item {
            Item::Struct(item) => {
                defaults.insert(item.ident.to_string(), derives_default(&item.attrs));
                if is_opaque(&item.fields) {
                    version.structs.insert(
                        format!("{module}::{}", item.ident),
                        Struct {
                            fields: Vec::new(),
                            default: false,
                            opaque: true,
                        },
                    );
                    continue;
                }
                let Fields::Named(fields) = &item.fields else {
                    continue;
                };
                let mut out = Vec::new();
                for field in &fields.named {
                    let Some(ident) = &field.ident else { continue };
                    let shape = Shape::of(&field.ty).map_err(|message| Error::Parse {
                        path: path.clone(),
                        message: format!("{}.{ident}: {message}", item.ident),
                    })?;
                    out.push((ident.to_string(), shape));
                }
                local.insert(item.ident.to_string(), out);
            }
            Item::Enum(item) => version.enums.push(format!("{module}::{}", item.ident)),
            Item::Impl(item) => {
                if let Some((name, kind)) = resource_kind(item) {
                    version.kinds.insert(format!("{module}::{name}"), kind);
                }
            }
            _ => {}
        }
    }
    let json = json_names(&text, |name| local.contains_key(name));
    for (name, fields) in local {
        // a struct without a `Deserialize` of its own is a helper (watch_event.rs's bookmarks)
        let Some(names) = json.get(&name) else { continue };
        let names = Some(names);
        let fields = fields
            .into_iter()
            .map(|(rust, shape)| {
                let json = names
                    .and_then(|n| n.get(&rust))
                    .cloned()
                    .ok_or_else(|| Error::Parse {
                        path: path.clone(),
                        message: format!("{name}.{rust} has no JSON name in its Deserialize impl"),
                    })?;
                Ok(Field { rust, json, shape })
            })
            .collect::<Result<_, Error>>()?;
        let default = defaults.get(&name).copied().unwrap_or(false);
        version.structs.insert(
            format!("{module}::{name}"),
            Struct {
                fields,
                default,
                opaque: false,
            },
        );
    }
    Ok(())
}

/// Whether `#[derive(..)]` names `Default`.
fn derives_default(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        let text = quote::ToTokens::to_token_stream(&a.meta).to_string();
        text.split(|c: char| !c.is_alphanumeric())
            .any(|word| word == "Default")
    })
}

/// Whether a struct is `X(pub crate::serde_json::Value)`.
fn is_opaque(fields: &Fields) -> bool {
    let Fields::Unnamed(fields) = fields else {
        return false;
    };
    let [only] = fields.unnamed.iter().collect::<Vec<_>>()[..] else {
        return false;
    };
    let Type::Path(path) = &only.ty else { return false };
    let segments: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
    segments.ends_with(&["serde_json".to_owned(), "Value".to_owned()])
}

/// `(type name, kind)` of an `impl crate::Resource for X` block.
fn resource_kind(item: &syn::ItemImpl) -> Option<(String, Kind)> {
    let (trait_path, _) = item.trait_.as_ref()?;
    if trait_path.segments.last()?.ident != "Resource" {
        return None;
    }
    let Type::Path(self_ty) = item.self_ty.as_ref() else {
        return None;
    };
    let name = self_ty.path.segments.last()?.ident.to_string();
    let constant = |wanted: &str| {
        item.items.iter().find_map(|i| match i {
            syn::ImplItem::Const(c) if c.ident == wanted => match &c.expr {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
    };
    Some((
        name,
        Kind {
            group: constant("GROUP")?,
            version: constant("VERSION")?,
            kind: constant("KIND")?,
        },
    ))
}

/// Struct name → (Rust field name → JSON name), from the `"json" => Field::Key_rust` arms of
/// each struct's `Deserialize` impl (the impls follow their struct in the file); `is_struct`
/// tells a struct's impl from the one of its nested `Field` enum.
pub(crate) fn json_names(
    text: &str,
    is_struct: impl Fn(&str) -> bool,
) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut names: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("impl<'de> crate::serde::Deserialize<'de> for ") {
            if let Some(name) = rest.split_whitespace().next().filter(|n| is_struct(n)) {
                current = Some(name.to_owned());
            }
            continue;
        }
        let Some(name) = &current else { continue };
        let Some((json, rust)) = line.split_once("\" => Field::Key_") else {
            continue;
        };
        names.entry(name.clone()).or_default().insert(
            rust.trim_end_matches(',').to_owned(),
            json.trim_start_matches('"').to_owned(),
        );
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_of_field_types() {
        let shape = |ty: Type| Shape::of(&ty).expect("a known shape");
        assert_eq!(
            shape(syn::parse_quote!(
                Option<std::vec::Vec<crate::api::core::v1::Container>>
            )),
            Shape::Option(Box::new(Shape::Vec(Box::new(Shape::Named(
                "api::core::v1::Container".into()
            )))))
        );
        assert_eq!(
            shape(syn::parse_quote!(
                std::collections::BTreeMap<std::string::String, std::vec::Vec<std::string::String>>
            )),
            Shape::Map(Box::new(Shape::Vec(Box::new(Shape::String))))
        );
        assert_eq!(shape(syn::parse_quote!(crate::ByteString)), Shape::ByteString);
        assert!(Shape::of(&syn::parse_quote!(std::collections::BTreeMap<i32, i32>)).is_err());
    }

    #[test]
    fn json_names_come_from_the_deserialize_impl() {
        let text = r#"
impl<'de> crate::serde::Deserialize<'de> for Pod {
                            "apiVersion" => Field::Key_api_version,
                            "podIP" => Field::Key_pod_ip,
"#;
        let names = json_names(text, |name| name == "Pod");
        assert_eq!(names["Pod"]["pod_ip"], "podIP");
    }
}
