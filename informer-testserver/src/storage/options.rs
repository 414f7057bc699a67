//! Query parameters of list and watch requests (`metav1.ListOptions`).

use std::collections::HashMap;
use std::time::Duration;

use crate::selector::{ObjectFilter, parse_field_selector, parse_label_selector};
use crate::status::ApiError;

/// The `resourceVersion` parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResourceVersion {
    /// Absent or empty: the most recent state.
    Latest,
    /// `"0"`: any state.
    Any,
    /// A revision.
    At(u64),
}

/// The `resourceVersionMatch` parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VersionMatch {
    /// `NotOlderThan`
    NotOlderThan,
    /// `Exact`
    Exact,
}

/// Parsed list/watch options.
#[derive(Debug, Clone)]
pub(crate) struct ListOptions {
    /// Namespace and selectors.
    pub(crate) filter: ObjectFilter,
    /// `watch=true|1`
    pub(crate) watch: bool,
    /// `resourceVersion`
    pub(crate) resource_version: ResourceVersion,
    /// `resourceVersionMatch`
    pub(crate) version_match: Option<VersionMatch>,
    /// `limit` (0 or absent: no limit)
    pub(crate) limit: Option<usize>,
    /// `continue`
    pub(crate) continue_token: Option<String>,
    /// `allowWatchBookmarks`
    pub(crate) allow_bookmarks: bool,
    /// `sendInitialEvents`
    pub(crate) send_initial_events: Option<bool>,
    /// `timeoutSeconds`
    pub(crate) timeout: Option<Duration>,
}

fn parse_bool(name: &str, value: &str) -> Result<bool, ApiError> {
    match value {
        "true" | "1" | "True" | "TRUE" | "t" | "T" => Ok(true),
        "false" | "0" | "False" | "FALSE" | "f" | "F" | "" => Ok(false),
        _ => Err(ApiError::bad_request(format!(
            "invalid value {value:?} for {name}: expected a boolean"
        ))),
    }
}

impl ListOptions {
    /// Parses and validates the query (already split into pairs) for a namespace.
    pub(crate) fn parse(query: &HashMap<String, String>, namespace: Option<&str>) -> Result<Self, ApiError> {
        let get = |k: &str| query.get(k).map(String::as_str);
        let labels = parse_label_selector(get("labelSelector").unwrap_or_default())
            .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?;
        let fields = parse_field_selector(get("fieldSelector").unwrap_or_default())
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let resource_version = match get("resourceVersion").unwrap_or_default() {
            "" => ResourceVersion::Latest,
            "0" => ResourceVersion::Any,
            rv => ResourceVersion::At(rv.parse::<u64>().map_err(|_| {
                ApiError::bad_request(format!(
                    "invalid resource version \"{rv}\": must be an unsigned integer"
                ))
            })?),
        };
        let version_match = match get("resourceVersionMatch").unwrap_or_default() {
            "" => None,
            "NotOlderThan" => Some(VersionMatch::NotOlderThan),
            "Exact" => Some(VersionMatch::Exact),
            other => {
                return Err(ApiError::invalid_list_options(
                    "resourceVersionMatch",
                    &format!("unsupported value {other:?}: supported values: \"Exact\", \"NotOlderThan\""),
                ));
            }
        };
        let limit = match get("limit").unwrap_or_default() {
            "" => None,
            l => match l.parse::<i64>() {
                Ok(l) if l > 0 => Some(usize::try_from(l).unwrap_or(usize::MAX)),
                Ok(_) => None,
                Err(_) => return Err(ApiError::bad_request(format!("invalid limit {l:?}"))),
            },
        };
        let timeout = match get("timeoutSeconds").unwrap_or_default() {
            "" => None,
            t => match t.parse::<i64>() {
                Ok(t) if t > 0 => Some(Duration::from_secs(t.unsigned_abs())),
                Ok(_) => None,
                Err(_) => return Err(ApiError::bad_request(format!("invalid timeoutSeconds {t:?}"))),
            },
        };
        let send_initial_events = match get("sendInitialEvents") {
            None => None,
            Some(v) => Some(parse_bool("sendInitialEvents", v)?),
        };
        let options = Self {
            filter: ObjectFilter {
                namespace: namespace.map(str::to_string),
                labels,
                fields,
            },
            watch: parse_bool("watch", get("watch").unwrap_or_default())?,
            resource_version,
            version_match,
            limit,
            continue_token: get("continue").filter(|c| !c.is_empty()).map(str::to_string),
            allow_bookmarks: parse_bool(
                "allowWatchBookmarks",
                get("allowWatchBookmarks").unwrap_or_default(),
            )?,
            send_initial_events,
            timeout,
        };
        options.validate()?;
        Ok(options)
    }

    /// The checks of kube-apiserver's `ValidateListOptions`.
    fn validate(&self) -> Result<(), ApiError> {
        if let Some(_send) = self.send_initial_events {
            if !self.watch {
                return Err(ApiError::invalid_list_options(
                    "sendInitialEvents",
                    "sendInitialEvents is forbidden for list",
                ));
            }
            if self.version_match != Some(VersionMatch::NotOlderThan) {
                return Err(ApiError::invalid_list_options(
                    "resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if !self.allow_bookmarks {
                return Err(ApiError::invalid_list_options(
                    "allowWatchBookmarks",
                    "sendInitialEvents requires setting allowWatchBookmarks to true",
                ));
            }
        } else if self.watch && self.version_match.is_some() {
            return Err(ApiError::invalid_list_options(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        } else if self.version_match.is_some() && self.resource_version == ResourceVersion::Latest {
            return Err(ApiError::invalid_list_options(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if self.version_match == Some(VersionMatch::Exact) && self.resource_version == ResourceVersion::Any {
            return Err(ApiError::invalid_list_options(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
        if self.continue_token.is_some() && self.resource_version != ResourceVersion::Latest {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<ListOptions, ApiError> {
        let q = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ListOptions::parse(&q, None)
    }

    #[test]
    fn parses_list_options() {
        let o = parse(&[
            ("resourceVersion", "5"),
            ("resourceVersionMatch", "Exact"),
            ("limit", "2"),
        ])
        .expect("valid");
        assert_eq!(o.resource_version, ResourceVersion::At(5));
        assert_eq!(o.version_match, Some(VersionMatch::Exact));
        assert_eq!(o.limit, Some(2));
        let o = parse(&[("watch", "1"), ("timeoutSeconds", "3")]).expect("valid");
        assert!(o.watch);
        assert_eq!(o.timeout, Some(Duration::from_secs(3)));
        assert_eq!(
            parse(&[("resourceVersion", "0")])
                .expect("valid")
                .resource_version,
            ResourceVersion::Any
        );
    }

    #[test]
    fn rejects_invalid_combinations() {
        let code = |p: &[(&str, &str)]| parse(p).map(|_| 0).unwrap_or_else(|e| e.code);
        assert_eq!(code(&[("resourceVersion", "x")]), 400);
        assert_eq!(code(&[("labelSelector", "a in")]), 400);
        assert_eq!(code(&[("resourceVersionMatch", "Exact")]), 422);
        assert_eq!(
            code(&[("resourceVersion", "0"), ("resourceVersionMatch", "Exact")]),
            422
        );
        assert_eq!(code(&[("continue", "abc"), ("resourceVersion", "3")]), 400);
        assert_eq!(code(&[("watch", "true"), ("sendInitialEvents", "true")]), 422);
        assert_eq!(
            code(&[
                ("watch", "true"),
                ("sendInitialEvents", "true"),
                ("resourceVersionMatch", "NotOlderThan"),
                ("allowWatchBookmarks", "true")
            ]),
            0
        );
        assert_eq!(
            code(&[
                ("watch", "true"),
                ("sendInitialEvents", "true"),
                ("resourceVersionMatch", "NotOlderThan")
            ]),
            422
        );
        assert_eq!(
            code(&[
                ("watch", "true"),
                ("sendInitialEvents", "true"),
                ("resourceVersionMatch", "NotOlderThan"),
                ("resourceVersion", "0"),
                ("allowWatchBookmarks", "true")
            ]),
            0
        );
        assert_eq!(code(&[("watch", "maybe")]), 400);
    }
}
