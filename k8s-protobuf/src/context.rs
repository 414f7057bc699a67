//! What a decode carries from a message to the messages inside it: how deep it is, and which
//! fields below it are passed over unread.

use crate::{Error, ErrorKind};

/// How deep messages may nest: deeper input is an error rather than a stack overflow (a JSON
/// schema nests in itself). Kubernetes objects nest about a dozen deep.
pub const MAX_DEPTH: u32 = 100;

/// Fields a decode passes over without reading them, named by field number from the top-level
/// message: the cheapest way to drop what a cache would drop anyway (an object's
/// `managedFields`, the `kubectl.kubernetes.io/last-applied-configuration` annotation), since
/// skipped bytes are neither parsed nor allocated.
///
/// ```
/// use k8s_protobuf::{SkipFields, decode_message_with};
/// use k8s_openapi::api::core::v1::Pod;
///
/// // Pod.metadata (1) → ObjectMeta.managedFields (17)
/// let skip = SkipFields::new().field(&[1, 17]);
/// let pod: Pod = decode_message_with(&[], &skip)?;
/// assert!(pod.metadata.managed_fields.is_none());
/// # Ok::<_, k8s_protobuf::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkipFields {
    node: Node,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    /// The field is skipped whole.
    Whole,
    /// Some fields of the field's message are skipped, sorted by number.
    Within(Vec<(u32, Node)>),
    /// Some entries of the field's map are skipped, by key.
    Keys(Vec<String>),
}

impl Default for Node {
    fn default() -> Self {
        Self::Within(Vec::new())
    }
}

impl SkipFields {
    /// Skips nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether nothing is skipped.
    pub fn is_empty(&self) -> bool {
        matches!(&self.node, Node::Within(fields) if fields.is_empty())
    }

    /// Also skips the field at `path` (field numbers from the top-level message; the last
    /// names the skipped field) whole. An empty path skips nothing.
    #[must_use]
    pub fn field(mut self, path: &[u32]) -> Self {
        if let Some((last, parents)) = path.split_last()
            && let Some(fields) = self.within(parents)
        {
            match fields.binary_search_by_key(last, |(tag, _)| *tag) {
                Ok(at) => fields[at].1 = Node::Whole,
                Err(at) => fields.insert(at, (*last, Node::Whole)),
            }
        }
        self
    }

    /// Also skips the entries of the map at `path` whose keys are `keys`.
    #[must_use]
    pub fn map_entries<S: Into<String>>(mut self, path: &[u32], keys: impl IntoIterator<Item = S>) -> Self {
        let Some((last, parents)) = path.split_last() else {
            return self;
        };
        let Some(fields) = self.within(parents) else {
            return self;
        };
        let at = match fields.binary_search_by_key(last, |(tag, _)| *tag) {
            Ok(at) => at,
            Err(at) => {
                fields.insert(at, (*last, Node::Keys(Vec::new())));
                at
            }
        };
        if let Node::Keys(existing) = &mut fields[at].1 {
            existing.extend(keys.into_iter().map(Into::into));
            existing.sort();
            existing.dedup();
        }
        self
    }

    /// The fields of the message at `path`, made a level of fields where there was none;
    /// `None` below a field skipped whole (its parts are skipped with it) or a map.
    fn within(&mut self, path: &[u32]) -> Option<&mut Vec<(u32, Node)>> {
        let mut node = &mut self.node;
        for tag in path {
            let Node::Within(fields) = node else {
                return None;
            };
            let at = match fields.binary_search_by_key(tag, |(t, _)| *t) {
                Ok(at) => at,
                Err(at) => {
                    fields.insert(at, (*tag, Node::default()));
                    at
                }
            };
            node = &mut fields[at].1;
        }
        match node {
            Node::Within(fields) => Some(fields),
            Node::Whole | Node::Keys(_) => None,
        }
    }
}

/// The state of a decode at one message: its depth and what is skipped below it. Small and
/// `Copy`: it is passed by value from message to message.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    depth: u32,
    skip: Option<&'a Node>,
}

impl Default for Context<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Context<'a> {
    /// The context of a top-level message that skips nothing.
    pub const fn new() -> Self {
        Self { depth: 0, skip: None }
    }

    /// The context of a top-level message that skips `skip`.
    pub fn skipping(skip: &'a SkipFields) -> Self {
        Self {
            depth: 0,
            skip: (!skip.is_empty()).then_some(&skip.node),
        }
    }

    /// Whether field `tag` of this message is skipped whole.
    #[inline(always)]
    pub fn skips(self, tag: u32) -> bool {
        match self.skip {
            None => false,
            Some(node) => matches!(child(node, tag), Some(Node::Whole)),
        }
    }

    /// The context of the message in field `tag`.
    #[inline(always)]
    pub fn enter(self, tag: u32) -> Self {
        Self {
            depth: self.depth + 1,
            skip: match self.skip {
                None => None,
                Some(node) => child(node, tag),
            },
        }
    }

    /// An error once messages nest deeper than [`MAX_DEPTH`].
    #[inline(always)]
    pub fn check_depth(self) -> Result<(), Error> {
        if self.depth > MAX_DEPTH {
            return Err(Error::new(ErrorKind::TooDeep));
        }
        Ok(())
    }

    /// The keys skipped in this map field.
    #[inline]
    pub fn skipped_keys(self) -> &'a [String] {
        match self.skip {
            Some(Node::Keys(keys)) => keys,
            _ => &[],
        }
    }
}

fn child(node: &Node, tag: u32) -> Option<&Node> {
    let Node::Within(fields) = node else {
        return None;
    };
    fields.iter().find(|(t, _)| *t == tag).map(|(_, node)| node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipped_fields_are_found_by_their_path() {
        let skip = SkipFields::new()
            .field(&[1, 17])
            .map_entries(&[1, 12], ["kubectl.kubernetes.io/last-applied-configuration"]);
        let top = Context::skipping(&skip);
        assert!(!top.skips(1));
        let metadata = top.enter(1);
        assert!(metadata.skips(17));
        assert!(!metadata.skips(12));
        assert_eq!(
            metadata.enter(12).skipped_keys(),
            ["kubectl.kubernetes.io/last-applied-configuration"]
        );
        assert!(top.enter(2).skipped_keys().is_empty());
        assert!(!top.enter(2).skips(17));
    }

    #[test]
    fn a_field_skipped_whole_stays_skipped_whole() {
        let skip = SkipFields::new().field(&[1]).field(&[1, 17]);
        assert!(Context::skipping(&skip).skips(1));
        assert!(SkipFields::new().is_empty());
        assert!(!SkipFields::new().field(&[1]).is_empty());
    }

    #[test]
    fn depth_is_limited() {
        let mut cx = Context::new();
        for _ in 0..MAX_DEPTH {
            cx = cx.enter(1);
        }
        assert!(cx.check_depth().is_ok());
        assert_eq!(
            cx.enter(1).check_depth().map_err(|e| e.kind().clone()),
            Err(ErrorKind::TooDeep)
        );
    }
}
