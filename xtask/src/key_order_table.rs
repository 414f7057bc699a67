//! The key order of the built-in Kubernetes types' JSON, for the embedded API server's
//! encoder: `informer-testserver/src/key_order/table.rs`.
//!
//! Go's `encoding/json` writes a struct's fields in declaration order (and a map's keys
//! sorted). k8s-pb's prost messages declare their fields in the order of Kubernetes'
//! `generated.proto` files, which go-to-protobuf writes in the Go structs' declaration order
//! (a pod spec's `volumes`, `initContainers`, `containers`, numbered 1, 20 and 2), so the
//! fields of each message as k8s-pb declares them, with Go's JSON names
//! ([`crate::go_fields`]), are the JSON key order. A struct embedded inline (a volume's
//! `VolumeSource`) contributes its fields at its position.

use std::{collections::BTreeMap, fmt::Write as _};

use crate::{
    builtin_schema::{Error, OpenapiTypes},
    protobuf_table::{ProtoField, special},
};

/// What a field's value holds, for the encoder.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Child {
    /// A scalar, a list or map of scalars, or a message with a JSON form of its own (time,
    /// quantity): written as it is.
    Plain,
    /// A message (or a list of them).
    Message(String),
    /// A map whose values are a message.
    Map(String),
    /// An embedded object of any kind (`RawExtension`): ordered by its own `apiVersion` and
    /// `kind`.
    Embedded,
}

/// A message's JSON fields in order, inline messages spliced in.
fn flattened(
    path: &str,
    messages: &BTreeMap<String, Vec<ProtoField>>,
    depth: usize,
) -> Result<Vec<(String, Child)>, Error> {
    if depth > 8 {
        return Err(Error::Format(format!("{path} embeds itself inline")));
    }
    let mut out = Vec::new();
    for field in messages.get(path).into_iter().flatten() {
        let child = child(&field.wire);
        if field.json.is_empty() {
            if let Child::Message(inner) = &child {
                out.extend(flattened(inner, messages, depth + 1)?);
            }
            continue;
        }
        out.push((field.json.clone(), child));
    }
    Ok(out)
}

/// The child of a field's wire type (`Message("path")`, `MapMessage("path")`, a scalar).
fn child(wire: &str) -> Child {
    let message = |prefix: &str| {
        wire.strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix("(\""))
            .and_then(|rest| rest.strip_suffix("\")"))
            .map(str::to_owned)
    };
    let target = |path: String| match special(&path) {
        "None" => Some(path),
        "SchemaOrBool" | "SchemaOrArray" | "SchemaOrStringArray" => {
            // a schema, or a bool or list beside it: the schema's order
            let module = path.rsplit_once("::").map_or("", |(m, _)| m);
            Some(format!("{module}::JsonSchemaProps"))
        }
        _ => None,
    };
    if let Some(path) = message("MapMessage") {
        return target(path).map_or(Child::Plain, Child::Map);
    }
    if let Some(path) = message("Message") {
        if path == "apimachinery::pkg::runtime::RawExtension" {
            return Child::Embedded;
        }
        return target(path).map_or(Child::Plain, Child::Message);
    }
    Child::Plain
}

/// The generated file: every message's JSON keys in order with what each holds, and every
/// built-in kind's message.
pub fn generate(
    messages: &BTreeMap<String, Vec<ProtoField>>,
    openapi: &OpenapiTypes,
    pb_version: &str,
) -> Result<String, Error> {
    let index: BTreeMap<&str, usize> = messages
        .keys()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();
    let at = |path: &str| {
        index
            .get(path)
            .copied()
            .ok_or_else(|| Error::Format(format!("a field refers to the unknown message {path}")))
    };
    let mut out = String::new();
    out.push_str(
        "#![cfg_attr(rustfmt, rustfmt::skip)]\nuse super::spec::{Child::*, Message};\n\
         /// Every built-in message with its JSON keys in Go's order, sorted by path; a child\n\
         /// names its message by its index here.\n\
         pub(crate) static MESSAGES: &[Message] = &[\n",
    );
    for path in messages.keys() {
        let _ = writeln!(out, "    Message {{ path: {path:?}, fields: &[");
        for (json, child) in flattened(path, messages, 0)? {
            let child = match child {
                Child::Plain => "Plain".to_owned(),
                Child::Embedded => "Embedded".to_owned(),
                Child::Message(p) => format!("Msg({} /* {p} */)", at(&p)?),
                Child::Map(p) => format!("Map({} /* {p} */)", at(&p)?),
            };
            let _ = writeln!(out, "        ({json:?}, {child}),");
        }
        out.push_str("    ] },\n");
    }
    out.push_str(
        "];\n/// Every built-in kind (group, version, kind) and the index of its message.\n\
         pub(crate) static KINDS: &[(&str, &str, &str, usize)] = &[\n",
    );
    for (group, version, kind, path) in &openapi.kinds {
        if let Some(i) = index.get(path.as_str()) {
            let _ = writeln!(out, "    ({group:?}, {version:?}, {kind:?}, {i}),");
        }
    }
    out.push_str("];\n");
    syn::parse_file(&out).map_err(|e| Error::Format(e.to_string()))?;
    Ok(format!(
        "// @generated by `cargo xtask codegen` from k8s-pb {pb_version}'s declaration order, with JSON names from Kubernetes' Go types (xtask/data/go_fields.tsv). DO NOT EDIT.\n\
         // The JSON key order of the built-in Kubernetes types.\n{out}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(tag: u32, json: &str, wire: &str) -> ProtoField {
        ProtoField {
            tag,
            json: json.into(),
            wire: wire.into(),
            repeated: false,
            presence: "Always",
        }
    }

    #[test]
    fn inline_messages_splice_their_fields_in_place() {
        let messages: BTreeMap<String, Vec<ProtoField>> = [
            (
                "api::core::v1::Volume".to_owned(),
                vec![
                    field(1, "name", "String"),
                    field(2, "", "Message(\"api::core::v1::VolumeSource\")"),
                ],
            ),
            (
                "api::core::v1::VolumeSource".to_owned(),
                vec![
                    field(1, "hostPath", "Message(\"api::core::v1::HostPathVolumeSource\")"),
                    field(2, "emptyDir", "String"),
                ],
            ),
        ]
        .into();
        let fields = flattened("api::core::v1::Volume", &messages, 0).expect("flattened");
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["name", "hostPath", "emptyDir"]);
    }

    #[test]
    fn special_messages_are_written_as_they_are() {
        assert_eq!(
            child("Message(\"apimachinery::pkg::apis::meta::v1::Time\")"),
            Child::Plain
        );
        assert_eq!(
            child("Message(\"apimachinery::pkg::runtime::RawExtension\")"),
            Child::Embedded
        );
        assert_eq!(
            child("MapMessage(\"api::core::v1::Container\")"),
            Child::Map("api::core::v1::Container".into())
        );
        assert_eq!(
            child(
                "Message(\"apiextensions_apiserver::pkg::apis::apiextensions::v1::JsonSchemaPropsOrBool\")"
            ),
            Child::Message("apiextensions_apiserver::pkg::apis::apiextensions::v1::JsonSchemaProps".into())
        );
    }
}
