//! The list and map strategies of the built-in Kubernetes types, read from k8s-openapi's
//! `DeepMerge` impls, for the embedded API server's strategic merge patches and field
//! ownership: `informer-testserver/src/admission/builtin_schema/`.
//!
//! k8s-openapi encodes each field's merge strategy from the Kubernetes OpenAPI schema
//! (`x-kubernetes-list-type`, `x-kubernetes-patch-merge-key`, `x-kubernetes-map-type`) in
//! calls such as `merge_strategies::list::map(&mut self.ports, other.ports, &[|lhs, rhs|
//! lhs.container_port == rhs.container_port], ..)`. This generator reads them with syn, maps
//! Rust field names to JSON names through each type's `Deserialize` impl, and writes one table
//! of types (their fields' strategies and nested types) and one of resource kinds.

use std::{
    collections::BTreeMap,
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
};

use syn::{Expr, ExprCall, Fields, ImplItem, Item, Stmt, Type};

/// The Kubernetes version whose types are read (k8s-openapi's newest module).
pub const KUBE_MODULE: &str = "v1_37";

/// Errors of the generator.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A source file could not be read.
    #[error("failed to read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A source file is not Rust syn can parse.
    #[error("failed to parse {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What syn said.
        message: String,
    },
    /// The generated file is not Rust syn can parse (a bug of this generator).
    #[error("failed to format the generated table: {0}")]
    Format(String),
}

/// How a field merges.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Strategy {
    /// A scalar or a struct merged field by field.
    Granular,
    /// A list replaced as a whole.
    AtomicList,
    /// A list of unique scalars.
    SetList,
    /// A list of items identified by these JSON key fields.
    MapList(Vec<String>),
    /// A map merged key by key.
    GranularMap,
    /// A map replaced as a whole.
    AtomicMap,
}

/// One field of a type.
#[derive(Debug, Clone)]
struct FieldInfo {
    json: String,
    strategy: Strategy,
    /// The k8s-openapi type of the field, of its items or of its map values, when it is a struct
    /// of the crate.
    nested: Option<String>,
}

/// What one source file holds.
#[derive(Debug, Default)]
struct FileTypes {
    /// Struct name → (Rust field name → crate type path of the field's struct, if any).
    structs: BTreeMap<String, BTreeMap<String, Option<String>>>,
    /// Struct name → (Rust field name → strategy with Rust key field names).
    strategies: BTreeMap<String, Vec<(String, Strategy)>>,
    /// Struct name → (Rust field name → JSON name).
    json_names: BTreeMap<String, BTreeMap<String, String>>,
    /// Struct name → (group, version, kind).
    resources: BTreeMap<String, (String, String, String)>,
}

/// Every type file of k8s-openapi's newest module, parsed, with its module path.
fn parse_all(package_dir: &Path) -> Result<Vec<(String, FileTypes)>, Error> {
    let root = package_dir.join("src").join(KUBE_MODULE);
    let mut files = Vec::new();
    collect_files(&root, &mut files)?;
    files.sort();
    let mut parsed: Vec<(String, FileTypes)> = Vec::new();
    for file in &files {
        let module = module_path(&root, file);
        if module.is_empty() {
            // `list.rs` and `mod.rs` of the version: generic containers, no resource type
            continue;
        }
        parsed.push((module, read_file(file)?));
    }
    Ok(parsed)
}

/// What other generators need to know of k8s-openapi's types.
#[derive(Debug, Default)]
pub struct OpenapiTypes {
    /// Type path (`api::core::v1::Pod`) → (Rust field name → JSON name).
    pub json_names: BTreeMap<String, BTreeMap<String, String>>,
    /// (group, version, kind, type path) of every resource.
    pub kinds: Vec<(String, String, String, String)>,
}

/// The JSON names and resource kinds of the k8s-openapi sources at `package_dir`.
pub fn openapi_types(package_dir: &Path) -> Result<OpenapiTypes, Error> {
    let mut types = OpenapiTypes::default();
    for (module, file) in parse_all(package_dir)? {
        for (name, names) in file.json_names {
            types.json_names.insert(format!("{module}::{name}"), names);
        }
        for (name, (group, version, kind)) in file.resources {
            types
                .kinds
                .push((group, version, kind, format!("{module}::{name}")));
        }
    }
    types.kinds.sort();
    Ok(types)
}

/// The generated file's content for the k8s-openapi sources at `package_dir`.
pub fn generate(package_dir: &Path, version: &str) -> Result<String, Error> {
    let mut types: BTreeMap<String, Vec<FieldInfo>> = BTreeMap::new();
    let mut kinds: Vec<(String, String, String, String)> = Vec::new();
    let parsed = parse_all(package_dir)?;
    for (module, file) in &parsed {
        for (name, fields) in &file.structs {
            let path = format!("{module}::{name}");
            let json = file.json_names.get(name).cloned().unwrap_or_default();
            let strategies: BTreeMap<String, Strategy> = file
                .strategies
                .get(name)
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default();
            let mut infos = Vec::new();
            for (rust, nested) in fields {
                let Some(json_name) = json.get(rust) else { continue };
                let strategy = strategies.get(rust).cloned().unwrap_or(Strategy::Granular);
                let strategy = match strategy {
                    Strategy::MapList(keys) => {
                        let item_json = nested
                            .as_ref()
                            .and_then(|n| json_names_of(&parsed, n))
                            .unwrap_or_default();
                        Strategy::MapList(
                            keys.iter()
                                .map(|k| item_json.get(k).cloned().unwrap_or_else(|| k.clone()))
                                .collect(),
                        )
                    }
                    other => other,
                };
                infos.push(FieldInfo {
                    json: json_name.clone(),
                    strategy,
                    nested: nested.clone(),
                });
            }
            infos.sort_by(|a, b| a.json.cmp(&b.json));
            types.insert(path.clone(), infos);
        }
        for (name, (group, version, kind)) in &file.resources {
            kinds.push((
                group.clone(),
                version.clone(),
                kind.clone(),
                format!("{module}::{name}"),
            ));
        }
    }
    kinds.sort();
    render(&types, &kinds, version)
}

/// Every `.rs` file under `dir`.
pub(crate) fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let entries = fs::read_dir(dir).map_err(|source| Error::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// `api::core::v1` for `<root>/api/core/v1/pod.rs` (or `.../v1/mod.rs`).
pub(crate) fn module_path(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file);
    let parent = relative.parent().unwrap_or(Path::new(""));
    parent
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("::")
}

fn json_names_of(parsed: &[(String, FileTypes)], type_path: &str) -> Option<BTreeMap<String, String>> {
    let (module, name) = type_path.rsplit_once("::")?;
    parsed
        .iter()
        .filter(|(m, _)| m == module)
        .find_map(|(_, file)| file.json_names.get(name).cloned())
}

fn read_file(path: &Path) -> Result<FileTypes, Error> {
    let text = fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let file = syn::parse_file(&text).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut types = FileTypes::default();
    for item in &file.items {
        match item {
            Item::Struct(item) => {
                if let Fields::Named(fields) = &item.fields {
                    let fields = fields
                        .named
                        .iter()
                        .filter_map(|f| Some((f.ident.as_ref()?.to_string(), crate_type(&f.ty))))
                        .collect();
                    types.structs.insert(item.ident.to_string(), fields);
                }
            }
            Item::Impl(item) => read_impl(item, &mut types),
            _ => {}
        }
    }
    for name in types.structs.keys().cloned().collect::<Vec<_>>() {
        types.json_names.insert(name, BTreeMap::new());
    }
    let names = crate::openapi_versions::json_names(&text, |name| types.structs.contains_key(name));
    for (name, fields) in names {
        types.json_names.entry(name).or_default().extend(fields);
    }
    Ok(types)
}

/// The crate type inside a field type (`Option<Vec<crate::api::core::v1::EnvVar>>` →
/// `api::core::v1::EnvVar`; a `BTreeMap`'s value type), if it is one of the crate's.
fn crate_type(ty: &Type) -> Option<String> {
    let text = quote::ToTokens::to_token_stream(ty).to_string().replace(' ', "");
    let start = text.rfind("crate::")?;
    let rest = &text[start + "crate::".len()..];
    let end = rest.find(['>', ',']).unwrap_or(rest.len());
    Some(rest[..end].to_owned())
}

fn self_type(item: &syn::ItemImpl) -> Option<String> {
    match item.self_ty.as_ref() {
        Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn read_impl(item: &syn::ItemImpl, types: &mut FileTypes) {
    let Some((trait_path, _)) = &item.trait_ else {
        return;
    };
    let Some(name) = self_type(item) else { return };
    let trait_name = trait_path.segments.last().map(|s| s.ident.to_string());
    match trait_name.as_deref() {
        Some("DeepMerge") => {
            let strategies = item
                .items
                .iter()
                .filter_map(|i| match i {
                    ImplItem::Fn(f) if f.sig.ident == "merge_from" => Some(&f.block.stmts),
                    _ => None,
                })
                .flatten()
                .filter_map(strategy_of)
                .collect();
            types.strategies.insert(name, strategies);
        }
        Some("Resource") => {
            let constant = |wanted: &str| {
                item.items.iter().find_map(|i| match i {
                    ImplItem::Const(c) if c.ident == wanted => match &c.expr {
                        Expr::Lit(lit) => match &lit.lit {
                            syn::Lit::Str(s) => Some(s.value()),
                            _ => None,
                        },
                        _ => None,
                    },
                    _ => None,
                })
            };
            if let (Some(group), Some(version), Some(kind)) =
                (constant("GROUP"), constant("VERSION"), constant("KIND"))
            {
                types.resources.insert(name, (group, version, kind));
            }
        }
        _ => {}
    }
}

/// The field and strategy of one statement of a `merge_from`.
fn strategy_of(stmt: &Stmt) -> Option<(String, Strategy)> {
    let Stmt::Expr(Expr::Call(call), _) = stmt else {
        return None;
    };
    let function = call_name(call)?;
    let field = self_field(call.args.first()?)?;
    let strategy = match function.as_str() {
        "list::atomic" => Strategy::AtomicList,
        "list::set" => Strategy::SetList,
        "list::map" => Strategy::MapList(key_fields(call.args.iter().nth(2)?)),
        "map::granular" => Strategy::GranularMap,
        "map::atomic" => Strategy::AtomicMap,
        _ => Strategy::Granular,
    };
    Some((field, strategy))
}

/// `list::map` for `crate::merge_strategies::list::map`, `DeepMerge::merge_from` otherwise.
fn call_name(call: &ExprCall) -> Option<String> {
    let Expr::Path(path) = call.func.as_ref() else {
        return None;
    };
    let segments: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
    let n = segments.len();
    (n >= 2).then(|| format!("{}::{}", segments[n - 2], segments[n - 1]))
}

/// `field` in `&mut self.field`.
fn self_field(expr: &Expr) -> Option<String> {
    let Expr::Reference(reference) = expr else {
        return None;
    };
    let Expr::Field(field) = reference.expr.as_ref() else {
        return None;
    };
    match &field.member {
        syn::Member::Named(ident) => Some(ident.to_string()),
        syn::Member::Unnamed(_) => None,
    }
}

/// The Rust key fields of `&[|lhs, rhs| lhs.a == rhs.a, ..]`.
fn key_fields(expr: &Expr) -> Vec<String> {
    let Expr::Reference(reference) = expr else {
        return Vec::new();
    };
    let Expr::Array(array) = reference.expr.as_ref() else {
        return Vec::new();
    };
    array
        .elems
        .iter()
        .filter_map(|closure| {
            let Expr::Closure(closure) = closure else {
                return None;
            };
            let Expr::Binary(binary) = closure.body.as_ref() else {
                return None;
            };
            let Expr::Field(field) = binary.left.as_ref() else {
                return None;
            };
            match &field.member {
                syn::Member::Named(ident) => Some(ident.to_string()),
                syn::Member::Unnamed(_) => None,
            }
        })
        .collect()
}

fn render(
    types: &BTreeMap<String, Vec<FieldInfo>>,
    kinds: &[(String, String, String, String)],
    version: &str,
) -> Result<String, Error> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "#![cfg_attr(rustfmt, rustfmt::skip)]\n\
         use super::types::{{Field, Kind, Strategy, TypeInfo}};\n\
         /// Every struct of k8s-openapi with its fields, sorted by path.\n\
         pub(crate) static TYPES: &[TypeInfo] = &["
    );
    for (path, fields) in types {
        let _ = writeln!(out, "    TypeInfo {{ path: {path:?}, fields: &[");
        for field in fields {
            let strategy = match &field.strategy {
                Strategy::Granular => "Strategy::Granular".to_owned(),
                Strategy::AtomicList => "Strategy::AtomicList".to_owned(),
                Strategy::SetList => "Strategy::SetList".to_owned(),
                Strategy::MapList(keys) => format!("Strategy::MapList(&{keys:?})"),
                Strategy::GranularMap => "Strategy::GranularMap".to_owned(),
                Strategy::AtomicMap => "Strategy::AtomicMap".to_owned(),
            };
            let nested = match &field.nested {
                Some(nested) => format!("Some({nested:?})"),
                None => "None".to_owned(),
            };
            let _ = writeln!(
                out,
                "        Field {{ json: {:?}, strategy: {strategy}, nested: {nested} }},",
                field.json
            );
        }
        let _ = writeln!(out, "    ] }},");
    }
    let _ = writeln!(
        out,
        "];\n/// Every resource kind and its root type, sorted.\npub(crate) static KINDS: &[Kind] = &["
    );
    for (group, version, kind, root) in kinds {
        let _ = writeln!(
            out,
            "    Kind {{ group: {group:?}, version: {version:?}, kind: {kind:?}, root: {root:?} }},"
        );
    }
    out.push_str("];\n");
    // One line per field, which rustfmt is told to leave; checked to be Rust.
    syn::parse_file(&out).map_err(|e| Error::Format(e.to_string()))?;
    Ok(format!(
        "// @generated by `cargo xtask codegen` from k8s-openapi {version} (module {KUBE_MODULE}). DO NOT EDIT.\n\
         // The merge strategies of the built-in types' fields, read from k8s-openapi's `DeepMerge` impls.\n{out}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_of_a_merge_from_body() {
        let item: syn::ItemImpl = syn::parse_quote! {
            impl crate::DeepMerge for Container {
                fn merge_from(&mut self, other: Self) {
                    crate::merge_strategies::list::atomic(&mut self.args, other.args);
                    crate::merge_strategies::list::map(
                        &mut self.ports,
                        other.ports,
                        &[|lhs, rhs| lhs.container_port == rhs.container_port, |lhs, rhs| lhs.protocol == rhs.protocol],
                        |current_item, other_item| { crate::DeepMerge::merge_from(current_item, other_item); },
                    );
                    crate::merge_strategies::list::set(&mut self.finalizers, other.finalizers);
                    crate::merge_strategies::map::granular(&mut self.labels, other.labels, |c, o| {});
                    crate::DeepMerge::merge_from(&mut self.image, other.image);
                }
            }
        };
        let mut types = FileTypes::default();
        read_impl(&item, &mut types);
        assert_eq!(
            types.strategies["Container"],
            [
                ("args".to_owned(), Strategy::AtomicList),
                (
                    "ports".to_owned(),
                    Strategy::MapList(vec!["container_port".into(), "protocol".into()])
                ),
                ("finalizers".to_owned(), Strategy::SetList),
                ("labels".to_owned(), Strategy::GranularMap),
                ("image".to_owned(), Strategy::Granular),
            ]
        );
    }

    #[test]
    fn nested_crate_types_of_field_types() {
        let ty: Type = syn::parse_quote!(Option<std::vec::Vec<crate::api::core::v1::EnvVar>>);
        assert_eq!(crate_type(&ty).as_deref(), Some("api::core::v1::EnvVar"));
        let map: Type = syn::parse_quote!(
            Option<
                std::collections::BTreeMap<
                    std::string::String,
                    crate::apimachinery::pkg::api::resource::Quantity,
                >,
            >
        );
        assert_eq!(
            crate_type(&map).as_deref(),
            Some("apimachinery::pkg::api::resource::Quantity")
        );
        let plain: Type = syn::parse_quote!(Option<std::string::String>);
        assert_eq!(crate_type(&plain), None);
    }
}
