//! One object a fresh server holds, with the resource it belongs to.

use serde_json::Value;

/// One object to create at start: the group, version and plural of its resource, and the
/// object.
pub(crate) struct BootstrapObject {
    /// The group of its resource.
    pub(crate) group: &'static str,
    /// The version of its resource.
    pub(crate) version: &'static str,
    /// The plural of its resource.
    pub(crate) plural: &'static str,
    /// The object.
    pub(crate) object: Value,
}

impl BootstrapObject {
    /// An object of the resource `group/version/plural`.
    pub(crate) fn new(
        group: &'static str,
        version: &'static str,
        plural: &'static str,
        object: Value,
    ) -> Self {
        Self {
            group,
            version,
            plural,
            object,
        }
    }

    /// `plural/namespace/name`, to name it in an error.
    pub(crate) fn describe(&self) -> String {
        let meta = &self.object["metadata"];
        match (meta["namespace"].as_str(), meta["name"].as_str()) {
            (Some(ns), Some(name)) => format!("{}/{ns}/{name}", self.plural),
            (None, Some(name)) => format!("{}/{name}", self.plural),
            _ => self.plural.to_string(),
        }
    }
}
