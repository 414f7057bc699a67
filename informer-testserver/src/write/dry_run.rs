//! `dryRun=All`: a write that runs every step of a real one (defaults, validation, admission,
//! preconditions) and answers with the object it would store, without storing it, emitting a
//! watch event or taking a revision.
//!
//! Like kube-apiserver, a dry-run create answers with the new `uid` and `creationTimestamp` but
//! no `resourceVersion`, a dry-run update or patch with the stored object's `resourceVersion`,
//! and a dry-run delete with the object as it is (or as it would be marked for deletion, when it
//! has finalizers).

use serde_json::{Value, json};

use crate::status::ApiError;

/// The only value kube-apiserver accepts for `dryRun`.
const ALL: &str = "All";

/// The options object a write's query is decoded into, which names the 422 of a bad `dryRun`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OptionsKind {
    /// POST
    Create,
    /// PUT
    Update,
    /// PATCH
    Patch,
    /// DELETE
    Delete,
}

impl OptionsKind {
    fn kind(self) -> &'static str {
        match self {
            Self::Create => "CreateOptions",
            Self::Update => "UpdateOptions",
            Self::Patch => "PatchOptions",
            Self::Delete => "DeleteOptions",
        }
    }
}

/// Whether the `dryRun` values ask for a dry run: none means a real write, `All` a dry run, and
/// anything else is the 422 Invalid kube-apiserver answers.
pub(crate) fn from_values(values: &[String], kind: OptionsKind) -> Result<bool, ApiError> {
    if values.iter().all(|v| v == ALL) {
        return Ok(!values.is_empty());
    }
    let listed = values
        .iter()
        .map(|v| format!("{v:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let detail = format!("Unsupported value: []string{{{listed}}}: supported values: \"{ALL}\"");
    Err(ApiError::new(
        422,
        "Invalid",
        format!("{}.meta.k8s.io \"\" is invalid: dryRun: {detail}", kind.kind()),
    )
    .with_details(json!({
        "group": "meta.k8s.io",
        "kind": kind.kind(),
        "causes": [{"reason": "FieldValueNotSupported", "message": detail, "field": "dryRun"}],
    })))
}

/// The `dryRun` of a request: the query's values, or for a delete those of the
/// `DeleteOptions` body when it has some (kube clients send them there).
pub(crate) fn requested(
    query: &[String],
    delete_options: Option<&Value>,
    kind: OptionsKind,
) -> Result<bool, ApiError> {
    let from_body = delete_options
        .and_then(|o| o.get("dryRun"))
        .and_then(Value::as_array);
    match from_body {
        Some(values) => {
            let values: Vec<String> = values
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect();
            from_values(&values, kind)
        }
        None => from_values(query, kind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::context::WriteContext;
    use crate::registry::{Registry, ResourceType, builtin_types};
    use crate::storage::state::{State, UpdateMode};
    use crate::write::session::WriteSession;

    fn dry_session(s: &mut State) -> WriteSession<'_> {
        WriteSession::new(
            s,
            WriteContext {
                dry_run: true,
                ..WriteContext::default()
            },
        )
    }

    fn values(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn only_all_is_accepted() {
        assert_eq!(from_values(&[], OptionsKind::Create), Ok(false));
        assert_eq!(from_values(&values(&["All"]), OptionsKind::Create), Ok(true));
        let err = from_values(&values(&["Some"]), OptionsKind::Update).expect_err("invalid");
        assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
        assert_eq!(
            err.message,
            "UpdateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\""
        );
        assert_eq!(err.to_status()["details"]["causes"][0]["field"], "dryRun");
    }

    #[test]
    fn delete_options_body_wins() {
        let query = values(&["bad"]);
        let body = json!({"dryRun": ["All"]});
        assert_eq!(requested(&query, Some(&body), OptionsKind::Delete), Ok(true));
        assert!(requested(&query, None, OptionsKind::Delete).is_err());
    }

    #[test]
    fn dry_writes_change_nothing() {
        let mut s = State::new(Registry::with_types(builtin_types()), 100);
        crate::admission::namespace_lifecycle::create_test_namespace(&mut s, "ns");
        let cm = ResourceType::new("", "v1", "ConfigMap", "configmaps", true);
        let dry = dry_session(&mut s)
            .create(&cm, Some("ns"), json!({"metadata": {"name": "a"}}))
            .expect("dry create");
        assert!(dry["metadata"]["uid"].is_string());
        assert!(dry["metadata"].get("resourceVersion").is_none());
        // the namespace and its default ServiceAccount
        assert_eq!(s.store.resource_version(), 2);
        assert!(s.get(&cm, Some("ns"), "a").is_err());

        let real = s
            .write()
            .create(
                &cm,
                Some("ns"),
                json!({"metadata": {"name": "a"}, "data": {"k": "1"}}),
            )
            .expect("create");
        let mut changed = real.clone();
        changed["data"]["k"] = json!("2");
        let dry = dry_session(&mut s)
            .update(&cm, Some("ns"), "a", changed, UpdateMode::Main)
            .expect("dry update");
        assert_eq!(dry["data"]["k"], "2");
        assert_eq!(dry["metadata"]["resourceVersion"], "3");
        let dry = dry_session(&mut s)
            .delete(&cm, Some("ns"), "a", &Value::Null)
            .expect("dry delete");
        assert_eq!(dry["metadata"]["resourceVersion"], "3");
        assert_eq!(s.store.resource_version(), 3);
        assert_eq!(s.get(&cm, Some("ns"), "a").expect("kept")["data"]["k"], "1");
        assert!(!s.store.is_dry_run());
    }
}
