//! Seed documents: Kubernetes objects from YAML or JSON, as a `List` or as several `---`
//! documents, in the order a server can create them.
//!
//! [`TestServer::seed_str`](crate::TestServer::seed_str) and
//! [`seed_file`](crate::TestServer::seed_file) create them; [`parse`] only reads them, for
//! tests that want the objects themselves.

use serde_json::{Value, json};

use crate::status::ApiError;

/// Errors of loading seed objects.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// The file could not be read.
    #[error("failed to read the seed file {path}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The text is neither JSON nor YAML.
    #[error("failed to parse the seed documents: {0}")]
    Parse(String),
    /// A document is not a Kubernetes object.
    #[error("failed to read seed document {index}: it has no apiVersion, kind or metadata.name")]
    NotAnObject {
        /// Position among the objects (0-based).
        index: usize,
    },
    /// The server refused an object.
    #[error("failed to create seed object {name:?}")]
    Create {
        /// The object's name.
        name: String,
        /// The server's answer.
        #[source]
        source: Box<ApiError>,
    },
}

/// Expands `List`s (and typed lists like `PodList`) into their items.
fn flatten(doc: Value, out: &mut Vec<Value>) {
    let kind = doc["kind"].as_str().unwrap_or_default().to_string();
    match doc.get("items").and_then(Value::as_array) {
        Some(items) if kind.ends_with("List") => {
            let item_kind = kind.trim_end_matches("List").to_string();
            let api_version = doc["apiVersion"].clone();
            for mut item in items.clone() {
                if kind != "List"
                    && let Some(map) = item.as_object_mut()
                {
                    map.entry("kind").or_insert_with(|| json!(item_kind));
                    map.entry("apiVersion").or_insert_with(|| api_version.clone());
                }
                flatten(item, out);
            }
        }
        _ => out.push(doc),
    }
}

/// Parses seed text into objects, CustomResourceDefinitions first, then Namespaces, then the
/// rest in document order.
pub fn parse(text: &str) -> Result<Vec<Value>, SeedError> {
    let docs: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(doc) => vec![doc],
        Err(_) => serde_saphyr::from_multiple::<Value>(text).map_err(|e| SeedError::Parse(e.to_string()))?,
    };
    let mut objects = Vec::new();
    for doc in docs.into_iter().filter(|d| !d.is_null()) {
        flatten(doc, &mut objects);
    }
    for (index, o) in objects.iter().enumerate() {
        let ok = o["apiVersion"].is_string() && o["kind"].is_string() && o["metadata"]["name"].is_string();
        if !ok {
            return Err(SeedError::NotAnObject { index });
        }
    }
    let rank = |o: &Value| match o["kind"].as_str() {
        Some("CustomResourceDefinition") => 0,
        Some("Namespace") => 1,
        _ => 2,
    };
    objects.sort_by_key(rank);
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_documents() {
        let text = "
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: ns
data:
  a: \"1\"
---
apiVersion: v1
kind: Namespace
metadata:
  name: ns
---
";
        let objects = parse(text).expect("valid yaml");
        assert_eq!(objects.len(), 2);
        assert_eq!(objects[0]["kind"], "Namespace");
        assert_eq!(objects[1]["data"]["a"], "1");
    }

    #[test]
    fn json_lists() {
        let text = r#"{"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "p"}}]}"#;
        let objects = parse(text).expect("valid json");
        assert_eq!(
            objects,
            vec![json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})]
        );
        let text = r#"{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}]}"#;
        assert_eq!(parse(text).expect("valid json")[0]["kind"], "Secret");
    }

    #[test]
    fn bad_seeds() {
        assert!(matches!(parse("a: [unclosed"), Err(SeedError::Parse(_))));
        assert!(matches!(
            parse("kind: Pod"),
            Err(SeedError::NotAnObject { index: 0 })
        ));
    }
}
