//! Fields a lister-watcher skips as it reads each object, named by their JSON path.

use std::{fmt, str::FromStr};

/// The annotation `kubectl apply` writes the whole applied object into.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// A field of every object, named by its JSON path from the object's root
/// (`metadata.managedFields`), or an entry of a map field, named by its key in brackets
/// (`metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]`).
///
/// A lister-watcher that skips a field passes over it as it reads each object, without
/// parsing or allocating it: the object in the cache never holds it, as if a transform had
/// removed it, but the field cost nothing. Controllers that drop `managedFields` with a
/// transform spend about a third of a pod's decoding on what they drop.
///
/// ```
/// use informer_runtime::source::FieldPath;
///
/// let managed: FieldPath = "metadata.managedFields".parse()?;
/// assert_eq!(managed, FieldPath::managed_fields());
/// let last_applied = FieldPath::last_applied_configuration();
/// assert_eq!(
///     last_applied.to_string(),
///     "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"
/// );
/// assert!("metadata..name".parse::<FieldPath>().is_err());
/// # Ok::<_, informer_runtime::source::FieldPathError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath {
    fields: Vec<String>,
    key: Option<String>,
}

/// A field path that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "failed to parse the field path {path:?}: {reason}; write it as `metadata.managedFields` or `metadata.annotations[some/key]`"
)]
pub struct FieldPathError {
    path: String,
    reason: &'static str,
}

impl FieldPath {
    /// `metadata.managedFields`: server-side apply's record of field owners, often the largest
    /// part of an object, which controllers rarely read.
    pub fn managed_fields() -> Self {
        Self {
            fields: vec!["metadata".into(), "managedFields".into()],
            key: None,
        }
    }

    /// The `kubectl.kubernetes.io/last-applied-configuration` annotation: a copy of the
    /// object as `kubectl apply` last applied it.
    pub fn last_applied_configuration() -> Self {
        Self {
            fields: vec!["metadata".into(), "annotations".into()],
            key: Some(LAST_APPLIED_ANNOTATION.into()),
        }
    }

    /// The JSON names of the fields from the root, the last the skipped one (or the map).
    pub fn fields(&self) -> &[String] {
        &self.fields
    }

    /// The key of the skipped map entry, if the path names one.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }
}

impl FromStr for FieldPath {
    type Err = FieldPathError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = |reason| FieldPathError {
            path: text.to_owned(),
            reason,
        };
        let (fields, key) = match text.split_once('[') {
            Some((fields, rest)) => {
                let key = rest
                    .strip_suffix(']')
                    .ok_or_else(|| error("a map key in brackets must end the path"))?;
                if key.is_empty() {
                    return Err(error("the map key is empty"));
                }
                (fields, Some(key.to_owned()))
            }
            None => (text, None),
        };
        let fields: Vec<String> = fields.split('.').map(str::to_owned).collect();
        if fields.iter().any(String::is_empty) {
            return Err(error("a field name is empty"));
        }
        if fields
            .iter()
            .any(|f| f.contains([']', '[']) || f.chars().any(char::is_whitespace))
        {
            return Err(error("a field name holds a bracket or a space"));
        }
        Ok(Self { fields, key })
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fields.join("."))?;
        if let Some(key) = &self.key {
            write!(f, "[{key}]")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_and_print_back() {
        for text in [
            "metadata.managedFields",
            "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]",
            "status",
        ] {
            let path: FieldPath = text.parse().expect("valid");
            assert_eq!(path.to_string(), text);
        }
        let path: FieldPath = "metadata.labels[app]".parse().expect("valid");
        assert_eq!(path.fields(), ["metadata", "labels"]);
        assert_eq!(path.key(), Some("app"));
    }

    #[test]
    fn malformed_paths_say_what_is_wrong() {
        for (text, reason) in [
            ("", "a field name is empty"),
            ("metadata.", "a field name is empty"),
            (
                "metadata.annotations[a",
                "a map key in brackets must end the path",
            ),
            ("metadata.annotations[]", "the map key is empty"),
            (
                "metadata.annotations[a]b",
                "a map key in brackets must end the path",
            ),
            ("meta data", "a field name holds a bracket or a space"),
        ] {
            let error = text.parse::<FieldPath>().expect_err(text);
            assert_eq!(error.reason, reason, "{text}");
            assert!(error.to_string().starts_with("failed to parse the field path"));
        }
    }
}
