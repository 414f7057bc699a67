//! The protobuf field numbers of the built-in Kubernetes messages, read from the `k8s-pb`
//! crate's prost types, with JSON names and presence from Kubernetes' Go types
//! ([`crate::go_fields`]; k8s-openapi's names for a field the Go table lacks), for the
//! protobuf the runtime and the embedded API server share: `apimachinery/src/protobuf/table.rs`.
//!
//! k8s-pb is generated from Kubernetes' `generated.proto` files; each field carries its wire
//! type and number in an attribute such as `#[prost(message, optional, tag = "1")]`.

use std::{collections::BTreeMap, fmt::Write as _, fs, path::Path};

use syn::{Attribute, Fields, Item, Type};

use crate::{
    builtin_schema::{Error, OpenapiTypes, collect_files, module_path},
    go_fields::GoField,
};

/// One field of a message, as k8s-pb declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoField {
    /// The field number.
    pub tag: u32,
    /// The JSON name; empty for a message embedded inline.
    pub json: String,
    /// `String`, `Bytes`, `Bool`, `Int32`, `Int64`, `Double`, `Message("path")`, `MapString`,
    /// `MapBytes` or `MapMessage("path")`.
    pub wire: String,
    /// Whether the field is a list.
    pub repeated: bool,
    /// `Pointer`, `OmitEmpty` or `Always` (see the runtime's `Presence`).
    pub presence: &'static str,
}

/// How a zero value read from the wire is kept: Go's protobuf writes every field that is
/// not a pointer, and its JSON leaves out zero values of `omitempty` fields. A field the Go
/// table lacks (newer in k8s-pb than the Go sources) keeps what the wire says.
fn presence(go: Option<&GoField>) -> &'static str {
    match go {
        Some(f) if !f.pointer && f.omit_empty => "OmitEmpty",
        Some(f) if !f.pointer => "Always",
        _ => "Pointer",
    }
}

/// The generated file's content for the k8s-pb sources at `pb_dir`, with JSON names and
/// kinds from k8s-openapi.
pub fn generate(
    pb_dir: &Path,
    pb_version: &str,
    openapi: &OpenapiTypes,
    go: &[GoField],
) -> Result<String, Error> {
    let mut messages = read_messages(pb_dir, openapi, go)?;
    for fields in messages.values_mut() {
        fields.sort_by_key(|f| f.tag);
    }
    let kinds: Vec<&(String, String, String, String)> = openapi
        .kinds
        .iter()
        .filter(|(_, _, _, path)| messages.contains_key(path))
        .collect();
    render(&messages, &kinds, pb_version)
}

/// Every message of the k8s-pb sources at `pb_dir` by path, with its fields in the order
/// k8s-pb declares them: the order of Kubernetes' `generated.proto`, which is the order of the
/// Go struct's fields (and so of Go's JSON).
pub fn read_messages(
    pb_dir: &Path,
    openapi: &OpenapiTypes,
    go: &[GoField],
) -> Result<BTreeMap<String, Vec<ProtoField>>, Error> {
    // k8s-pb spells some Go names differently (`HpaScalingPolicy` for `HPAScalingPolicy`)
    let go: BTreeMap<(String, u32), &GoField> = go
        .iter()
        .map(|f| ((f.message.to_lowercase(), f.tag), f))
        .collect();
    let root = pb_dir.join("src");
    let mut files = Vec::new();
    collect_files(&root, &mut files)?;
    // k8s-pb has one `mod.rs` per protobuf package
    files.retain(|f| f.file_name().is_some_and(|n| n == "mod.rs"));
    files.sort();
    let mut messages: BTreeMap<String, Vec<ProtoField>> = BTreeMap::new();
    for file in &files {
        let module = module_path(&root, file);
        let text = fs::read_to_string(file).map_err(|source| Error::Read {
            path: file.clone(),
            source,
        })?;
        let parsed = syn::parse_file(&text).map_err(|e| Error::Parse {
            path: file.clone(),
            message: e.to_string(),
        })?;
        for item in &parsed.items {
            let Item::Struct(item) = item else { continue };
            let Fields::Named(fields) = &item.fields else {
                continue;
            };
            let path = format!("{module}::{}", item.ident);
            let names = openapi.json_names.get(&path);
            let mut out = Vec::new();
            for field in &fields.named {
                let Some(ident) = &field.ident else { continue };
                let Some((wire, repeated, tag)) = prost_attribute(&field.attrs) else {
                    continue;
                };
                let rust = ident.to_string().trim_start_matches("r#").to_owned();
                // A message field k8s-openapi's type does not have is embedded inline in JSON
                // (Go's `json:",inline"`: a volume's `VolumeSource`, a probe's handler).
                let go_field = go.get(&(path.to_lowercase(), tag)).copied();
                let inline = match go_field {
                    Some(f) => f.json.is_empty(),
                    None => wire == "message" && names.is_some_and(|n| !has_field(n, &rust)),
                };
                let json = match go_field {
                    Some(f) => f.json.clone(),
                    None if inline => String::new(),
                    None => json_name(names, &rust),
                };
                let wire = match wire.as_str() {
                    "message" => format!("Message({:?})", resolve(&module, &field.ty)),
                    "map:string, message" => format!("MapMessage({:?})", resolve(&module, &field.ty)),
                    other => other.to_owned(),
                };
                out.push(ProtoField {
                    tag,
                    json,
                    wire,
                    repeated,
                    presence: presence(go_field),
                });
            }
            messages.insert(path, out);
        }
    }
    Ok(messages)
}

/// Whether k8s-openapi's Rust field name `name` and k8s-pb's `rust` name one field: the
/// crates split some acronyms differently (`non_resource_urls`, `non_resource_ur_ls`), and
/// k8s-openapi suffixes keywords with `_` (`type_`).
fn same_field(name: &str, rust: &str) -> bool {
    let plain = |s: &str| s.chars().filter(|c| *c != '_').collect::<String>();
    plain(name) == plain(rust)
}

fn has_field(names: &BTreeMap<String, String>, rust: &str) -> bool {
    names.keys().any(|name| same_field(name, rust))
}

/// The JSON name of a field: k8s-openapi's, else the lower camel case of the Rust name.
fn json_name(names: Option<&BTreeMap<String, String>>, rust: &str) -> String {
    if let Some(names) = names {
        let found = names
            .iter()
            .find(|(name, _)| same_field(name, rust))
            .map(|(_, json)| json.clone());
        if let Some(json) = found {
            return json;
        }
    }
    let mut out = String::new();
    let mut upper = false;
    for ch in rust.chars() {
        if ch == '_' {
            upper = true;
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// `(wire, repeated, tag)` of a `#[prost(..)]` attribute: wire is the scalar type, `message`,
/// or `map:<key>, <value>` for maps.
fn prost_attribute(attrs: &[Attribute]) -> Option<(String, bool, u32)> {
    let attr = attrs.iter().find(|a| a.path().is_ident("prost"))?;
    let text = quote::ToTokens::to_token_stream(&attr.meta).to_string();
    let inner = text.split_once('(')?.1.rsplit_once(')')?.0;
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let tag = parts
        .iter()
        .find_map(|p| p.strip_prefix("tag = "))?
        .trim_matches('"')
        .parse()
        .ok()?;
    let repeated = parts.contains(&"repeated");
    let first = parts.first()?;
    if let Some(map) = first.strip_prefix("btree_map = ") {
        let map = format!("{map},{}", parts.get(1).copied().unwrap_or_default());
        let kinds = map.trim_matches('"').replace('"', "");
        let value = kinds.split(',').nth(1).unwrap_or_default().trim().to_owned();
        let wire = match value.as_str() {
            "string" => "MapString".to_owned(),
            "bytes" => "MapBytes".to_owned(),
            _ => "map:string, message".to_owned(),
        };
        return Some((wire, false, tag));
    }
    let wire = match first.split(' ').next().unwrap_or_default() {
        "string" => "String",
        "bytes" => "Bytes",
        "bool" => "Bool",
        "int32" => "Int32",
        "int64" => "Int64",
        "double" => "Double",
        "message" => "message",
        _ => return None,
    };
    Some((wire.to_owned(), repeated, tag))
}

/// The absolute message path of a field type (`Option<super::super::x::Y>` in module `a::b::c`
/// → `a::x::Y`; a bare `Y` → `a::b::c::Y`; a map's value type).
fn resolve(module: &str, ty: &Type) -> String {
    let text = quote::ToTokens::to_token_stream(ty).to_string().replace(' ', "");
    let trimmed = text.trim_end_matches(['>', ',']);
    let inner = trimmed.rsplit(['<', ',']).next().unwrap_or(trimmed).to_owned();
    let mut base: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
    let mut rest = inner.as_str();
    while let Some(after) = rest.strip_prefix("super::") {
        base.pop();
        rest = after;
    }
    if rest.contains("::") && !inner.starts_with("super::") {
        return rest.to_owned();
    }
    base.push(rest);
    base.join("::")
}

/// apimachinery's and apiextensions' messages with a JSON form of their own (Go's
/// `MarshalJSON`), by the runtime's `Special` variant.
pub fn special(path: &str) -> &'static str {
    let name = path.rsplit("::").next().unwrap_or_default();
    match (path, name) {
        ("apimachinery::pkg::apis::meta::v1::Time", _) => "Time",
        ("apimachinery::pkg::apis::meta::v1::MicroTime", _) => "MicroTime",
        ("apimachinery::pkg::apis::meta::v1::Duration", _) => "Duration",
        ("apimachinery::pkg::api::resource::Quantity", _) => "Quantity",
        ("apimachinery::pkg::util::intstr::IntOrString", _) => "IntOrString",
        ("apimachinery::pkg::runtime::RawExtension" | "apimachinery::pkg::apis::meta::v1::FieldsV1", _) => {
            "RawJson"
        }
        (p, "Json") if p.starts_with("apiextensions_apiserver::") => "RawJson",
        (p, "JsonSchemaPropsOrBool") if p.starts_with("apiextensions_apiserver::") => "SchemaOrBool",
        (p, "JsonSchemaPropsOrArray") if p.starts_with("apiextensions_apiserver::") => "SchemaOrArray",
        (p, "JsonSchemaPropsOrStringArray") if p.starts_with("apiextensions_apiserver::") => {
            "SchemaOrStringArray"
        }
        // Go's named string slices (`type ExtraValue []string`), which protobuf wraps in a
        // message of one repeated field
        ("apimachinery::pkg::apis::meta::v1::Verbs", _) | (_, "ExtraValue") => "StringList",
        _ => "None",
    }
}

/// A field's wire type with message paths replaced by their index in the table.
fn indexed_wire(wire: &str, index: &BTreeMap<&str, usize>) -> Result<String, Error> {
    for variant in ["Message", "MapMessage"] {
        if let Some(path) = wire
            .strip_prefix(variant)
            .and_then(|rest| rest.strip_prefix("(\""))
            .and_then(|rest| rest.strip_suffix("\")"))
        {
            let at = index
                .get(path)
                .ok_or_else(|| Error::Format(format!("a field refers to the unknown message {path}")))?;
            return Ok(format!("{variant}({at} /* {path} */)"));
        }
    }
    Ok(wire.to_owned())
}

fn render(
    messages: &BTreeMap<String, Vec<ProtoField>>,
    kinds: &[&(String, String, String, String)],
    version: &str,
) -> Result<String, Error> {
    let index: BTreeMap<&str, usize> = messages
        .keys()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();
    let mut out = String::new();
    out.push_str(
        "#![cfg_attr(rustfmt, rustfmt::skip)]\nuse super::spec::{FieldSpec, Kind, MessageSpec, Presence, Special, Wire};\n\
         /// Every message with its fields by number, sorted by path; a message field names its\n\
         /// message by its index here.\n\
         pub(crate) static MESSAGES: &[MessageSpec] = &[\n",
    );
    for (path, fields) in messages {
        if fields.len() > 64 {
            return Err(Error::Format(format!(
                "{path} has {} fields; the decoder tracks at most 64 per message",
                fields.len()
            )));
        }
        let _ = writeln!(
            out,
            "    MessageSpec {{ path: {path:?}, special: Special::{}, fields: &[",
            special(path)
        );
        for field in fields {
            let _ = writeln!(
                out,
                "        FieldSpec {{ tag: {}, json: {:?}, wire: Wire::{}, repeated: {}, presence: Presence::{} }},",
                field.tag,
                field.json,
                indexed_wire(&field.wire, &index)?,
                field.repeated,
                field.presence
            );
        }
        out.push_str("    ] },\n");
    }
    out.push_str(
        "];\n/// Every built-in kind and the index of its message, sorted.\npub(crate) static KINDS: &[Kind] = &[\n",
    );
    for (group, version, kind, path) in kinds {
        let at = index
            .get(path.as_str())
            .ok_or_else(|| Error::Format(format!("the kind {kind} refers to the unknown message {path}")))?;
        let _ = writeln!(
            out,
            "    Kind {{ group: {group:?}, version: {version:?}, kind: {kind:?}, message: {at} }},"
        );
    }
    out.push_str("];\n");
    syn::parse_file(&out).map_err(|e| Error::Format(e.to_string()))?;
    Ok(format!(
        "// @generated by `cargo xtask codegen` from k8s-pb {version}, with JSON names and presence from Kubernetes' Go types (xtask/data/go_fields.tsv). DO NOT EDIT.\n\
         // The field numbers and wire types of the built-in Kubernetes protobuf messages.\n{out}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prost_attributes_give_wire_type_and_number() {
        let field: syn::Field = syn::parse_quote! {
            #[prost(message, repeated, tag = "2")]
            pub items: Vec<Pod>
        };
        assert_eq!(prost_attribute(&field.attrs), Some(("message".into(), true, 2)));
        let map: syn::Field = syn::parse_quote! {
            #[prost(btree_map = "string, bytes", tag = "3")]
            pub data: BTreeMap<String, Vec<u8>>
        };
        assert_eq!(prost_attribute(&map.attrs), Some(("MapBytes".into(), false, 3)));
        let bytes: syn::Field = syn::parse_quote! {
            #[prost(bytes = "vec", optional, tag = "1")]
            pub raw: Option<Vec<u8>>
        };
        assert_eq!(prost_attribute(&bytes.attrs), Some(("Bytes".into(), false, 1)));
    }

    #[test]
    fn relative_paths_resolve_from_the_module() {
        let ty: Type = syn::parse_quote!(
            ::core::option::Option<super::super::super::apimachinery::pkg::apis::meta::v1::ObjectMeta>
        );
        assert_eq!(
            resolve("api::core::v1", &ty),
            "apimachinery::pkg::apis::meta::v1::ObjectMeta"
        );
        let local: Type = syn::parse_quote!(::prost::alloc::vec::Vec<Container>);
        assert_eq!(resolve("api::core::v1", &local), "api::core::v1::Container");
        let map: Type = syn::parse_quote!(BTreeMap<String, super::super::super::apimachinery::pkg::api::resource::Quantity,>);
        assert_eq!(
            resolve("api::core::v1", &map),
            "apimachinery::pkg::api::resource::Quantity"
        );
    }

    #[test]
    fn json_names_come_from_k8s_openapi_or_camel_case() {
        let names: BTreeMap<String, String> = [
            ("pod_ip".to_owned(), "podIP".to_owned()),
            ("type_".to_owned(), "type".to_owned()),
        ]
        .into();
        assert_eq!(json_name(Some(&names), "pod_ip"), "podIP");
        assert_eq!(json_name(Some(&names), "type"), "type");
        assert_eq!(json_name(None, "host_port"), "hostPort");
    }
}
