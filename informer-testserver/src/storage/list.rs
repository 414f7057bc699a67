//! Lists: selectors, `resourceVersion`/`resourceVersionMatch`, and `limit`/`continue` paging over
//! a consistent snapshot.
//!
//! A continue token encodes the snapshot revision and the last key returned. The next page is
//! served from the snapshot rebuilt from the event history; once the history no longer reaches
//! back to that revision (compaction), the token is expired (410 `Expired`).

use serde_json::{Map, Value, json};

use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::options::{ListOptions, ResourceVersion, VersionMatch};
use crate::storage::state::{State, with_type, without_type};
use crate::storage::store::ObjectKey;

/// Errors of continue tokens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ContinueError {
    /// The token is not one this server issued.
    #[error("failed to decode the continue token")]
    Malformed,
}

/// The position a continue token resumes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContinueToken {
    /// Snapshot revision.
    pub(crate) rv: u64,
    /// Last key returned.
    pub(crate) after: ObjectKey,
}

impl ContinueToken {
    /// Opaque text form (hex of a small JSON document).
    pub(crate) fn encode(&self) -> String {
        let doc = json!({"v": "meta.k8s.io/v1", "rv": self.rv, "ns": self.after.0, "name": self.after.1});
        doc.to_string().bytes().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses a token made by [`ContinueToken::encode`].
    pub(crate) fn decode(token: &str) -> Result<Self, ContinueError> {
        if !token.len().is_multiple_of(2) || !token.is_ascii() {
            return Err(ContinueError::Malformed);
        }
        let bytes = (0..token.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&token[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| ContinueError::Malformed)?;
        let doc: Value = serde_json::from_slice(&bytes).map_err(|_| ContinueError::Malformed)?;
        let rv = doc["rv"].as_u64().ok_or(ContinueError::Malformed)?;
        let ns = doc["ns"].as_str().ok_or(ContinueError::Malformed)?;
        let name = doc["name"].as_str().ok_or(ContinueError::Malformed)?;
        Ok(Self {
            rv,
            after: (ns.to_string(), name.to_string()),
        })
    }
}

/// Serves a list request: the `<Kind>List` document.
pub(crate) fn list(state: &State, rt: &ResourceType, options: &ListOptions) -> Result<Value, ApiError> {
    let current = state.store.resource_version();
    let (snapshot_rv, after, objects) = match &options.continue_token {
        Some(token) => {
            let token = ContinueToken::decode(token)
                .map_err(|e| ApiError::bad_request(format!("continue key is not valid: {e}")))?;
            let objects = state
                .store
                .snapshot(rt, Some(token.rv))
                .map_err(|e| match e.code {
                    410 => ApiError::expired_continue(),
                    _ => ApiError::bad_request(
                        "continue key is not valid: the resource version is in the future",
                    ),
                })?;
            (token.rv, Some(token.after), objects)
        }
        None => {
            let at = match (options.resource_version, options.version_match) {
                (ResourceVersion::At(rv), Some(VersionMatch::Exact)) => Some(rv),
                (ResourceVersion::At(rv), _) if rv > current => return Err(ApiError::too_large(rv, current)),
                _ => None,
            };
            let objects = state.store.snapshot(rt, at).map_err(|e| match e.code {
                410 => ApiError::new(
                    410,
                    "Expired",
                    "The resourceVersion for the provided list is too old.",
                ),
                _ => e,
            })?;
            (at.unwrap_or(current), None, objects)
        }
    };
    let mut matching = objects
        .into_iter()
        .filter(|(k, _)| after.as_ref().is_none_or(|a| k > a))
        .filter(|(_, o)| options.filter.matches(o));
    // kube-apiserver's items of a built-in list carry no type (Go's typed list drops it);
    // those of a custom resource are unstructured and keep theirs
    let builtin = state.registry.is_builtin(rt);
    let item = |object| {
        if builtin {
            without_type(object)
        } else {
            with_type(object, rt)
        }
    };
    let mut items = Vec::new();
    let mut last = None;
    for (k, o) in matching.by_ref() {
        items.push(item(o));
        last = Some(k);
        if options.limit.is_some_and(|l| items.len() >= l) {
            break;
        }
    }
    let remaining = matching.count();
    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), json!(snapshot_rv.to_string()));
    if remaining > 0
        && let Some(last) = last
    {
        metadata.insert(
            "continue".into(),
            json!(
                ContinueToken {
                    rv: snapshot_rv,
                    after: last
                }
                .encode()
            ),
        );
        if !options.filter.has_selectors() {
            metadata.insert("remainingItemCount".into(), json!(remaining));
        }
    }
    Ok(json!({
        "kind": format!("{}List", rt.kind),
        "apiVersion": rt.api_version(),
        "metadata": metadata,
        "items": items,
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::registry::{Registry, builtin_types};

    fn pods() -> ResourceType {
        ResourceType::new("", "v1", "Pod", "pods", true)
    }

    fn state_with(n: usize) -> State {
        let mut s = State::new(Registry::with_types(builtin_types()), 100);
        crate::admission::namespace_lifecycle::create_test_namespace(&mut s, "ns");
        for i in 0..n {
            let labels = if i % 2 == 0 {
                json!({"even": "true"})
            } else {
                json!({})
            };
            s.write()
                .create(
                    &pods(),
                    Some("ns"),
                    json!({"metadata": {"name": format!("p{i}"), "labels": labels}}),
                )
                .expect("created");
        }
        s
    }

    fn opts(pairs: &[(&str, &str)]) -> ListOptions {
        let q: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ListOptions::parse(&q, None).expect("valid options")
    }

    fn names(list: &Value) -> Vec<String> {
        list["items"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn items_of_a_custom_resource_list_keep_their_type_and_those_of_a_built_in_list_have_none() {
        let widgets = ResourceType::new("example.com", "v1", "Widget", "widgets", true);
        let mut s = state_with(1);
        s.registry
            .add(widgets.clone(), Some("widgets.example.com".into()));
        s.write()
            .create(&widgets, Some("ns"), json!({"metadata": {"name": "w"}}))
            .expect("created");
        let list = list(&s, &widgets, &opts(&[])).expect("listed");
        assert_eq!(list["kind"], "WidgetList");
        assert_eq!(list["items"][0]["kind"], "Widget");
        assert_eq!(list["items"][0]["apiVersion"], "example.com/v1");
        let pods = super::list(&s, &pods(), &opts(&[])).expect("listed");
        assert_eq!(pods["items"][0]["metadata"]["name"], "p0");
        assert_eq!(pods["items"][0].get("kind"), None);
    }

    #[test]
    fn token_roundtrip() {
        let t = ContinueToken {
            rv: 7,
            after: ("ns".into(), "a\"b".into()),
        };
        assert_eq!(ContinueToken::decode(&t.encode()), Ok(t));
        assert!(ContinueToken::decode("zz").is_err());
        assert!(ContinueToken::decode("abc").is_err());
    }

    #[test]
    fn pages_are_consistent_snapshots() {
        let mut s = state_with(5);
        let first = list(&s, &pods(), &opts(&[("limit", "2")])).expect("page 1");
        assert_eq!(names(&first), ["p0", "p1"]);
        assert_eq!(first["metadata"]["remainingItemCount"], 3);
        assert_eq!(first["kind"], "PodList");
        // as kube-apiserver's: the items of a built-in list carry no type
        assert_eq!(first["items"][0].get("kind"), None);
        assert_eq!(first["items"][0].get("apiVersion"), None);
        let token = first["metadata"]["continue"]
            .as_str()
            .expect("continue")
            .to_string();
        s.write()
            .create(&pods(), Some("ns"), json!({"metadata": {"name": "p9"}}))
            .expect("created");
        s.write()
            .delete(&pods(), Some("ns"), "p3", &Value::Null)
            .expect("deleted");
        let second = list(&s, &pods(), &opts(&[("limit", "10"), ("continue", &token)])).expect("page 2");
        assert_eq!(names(&second), ["p2", "p3", "p4"]);
        assert_eq!(second["metadata"]["resourceVersion"], "7");
        assert!(second["metadata"].get("continue").is_none());
        s.store.compact();
        let err = list(&s, &pods(), &opts(&[("continue", &token)])).expect_err("expired");
        assert_eq!((err.code, err.reason.as_str()), (410, "Expired"));
    }

    #[test]
    fn selectors_and_exact_versions() {
        let mut s = state_with(4);
        let even = list(
            &s,
            &pods(),
            &opts(&[("labelSelector", "even=true"), ("limit", "1")]),
        )
        .expect("list");
        assert_eq!(names(&even), ["p0"]);
        assert!(even["metadata"].get("remainingItemCount").is_none());
        s.write()
            .delete(&pods(), Some("ns"), "p0", &Value::Null)
            .expect("deleted");
        let exact = list(
            &s,
            &pods(),
            &opts(&[("resourceVersion", "4"), ("resourceVersionMatch", "Exact")]),
        )
        .expect("exact");
        assert_eq!(names(&exact), ["p0", "p1"]);
        assert_eq!(exact["metadata"]["resourceVersion"], "4");
        let newer = list(&s, &pods(), &opts(&[("resourceVersion", "4")])).expect("not older than");
        assert_eq!(newer["metadata"]["resourceVersion"], "7");
        let err = list(&s, &pods(), &opts(&[("resourceVersion", "50")])).expect_err("too large");
        assert_eq!(err.code, 504);
        let fields = list(&s, &pods(), &opts(&[("fieldSelector", "metadata.name=p2")])).expect("fields");
        assert_eq!(names(&fields), ["p2"]);
    }
}
