//! Fields that decoding passes over without building them, whatever the wire format: the
//! tree of what [`FieldPath`]s name in one object, a list or a watch event. A JSON value that is
//! skipped is still parsed (JSON gives no length to jump by); a CBOR one is passed over by its
//! heads. Nothing is allocated for either.

use crate::source::FieldPath;

/// What is skipped in one value of the text, and below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Skip {
    /// The value is skipped whole.
    Whole,
    /// In an object: the fields named, each with what is skipped in it.
    Fields(Vec<(String, Skip)>),
    /// In an object read as a map: the entries of these keys.
    Keys(Vec<String>),
    /// In an array: this, in every element.
    Each(Box<Skip>),
}

/// What happens to one entry of an object.
pub(crate) enum Entry<'s> {
    /// Passed over.
    Skipped,
    /// Decoded, with this skipped below it.
    Kept(Option<&'s Skip>),
}

impl Skip {
    /// What `paths` skip in one object; `None` when they skip nothing.
    pub(crate) fn of_objects(paths: &[FieldPath]) -> Option<Self> {
        let mut root = Self::Fields(Vec::new());
        for path in paths {
            root.insert(path.fields(), path.key());
        }
        (root != Self::Fields(Vec::new())).then_some(root)
    }

    /// What is skipped in a watch event (`{"type": .., "object": <object>}`).
    pub(crate) fn in_watch_event(self) -> Self {
        Self::Fields(vec![("object".to_owned(), self)])
    }

    /// What is skipped in a list (`{.., "items": [<object>, ..]}`).
    pub(crate) fn in_list(self) -> Self {
        Self::Fields(vec![("items".to_owned(), Self::Each(Box::new(self)))])
    }

    fn insert(&mut self, fields: &[String], key: Option<&str>) {
        let Self::Fields(entries) = self else {
            // below a field skipped whole, or a map: nothing more to skip
            return;
        };
        let Some((first, rest)) = fields.split_first() else {
            return;
        };
        let at = match entries.iter().position(|(name, _)| name == first) {
            Some(at) => at,
            None => {
                let child = match (rest.is_empty(), key) {
                    (true, Some(_)) => Self::Keys(Vec::new()),
                    (true, None) => Self::Whole,
                    (false, _) => Self::Fields(Vec::new()),
                };
                entries.push((first.clone(), child));
                entries.len() - 1
            }
        };
        let child = &mut entries[at].1;
        match (rest.is_empty(), key, child) {
            (true, None, child) => *child = Self::Whole,
            (true, Some(key), Self::Keys(keys)) => {
                if !keys.iter().any(|k| k == key) {
                    keys.push(key.to_owned());
                }
            }
            (false, _, child) => child.insert(rest, key),
            // a map entry of a field skipped whole, or of a field with skipped fields
            (true, Some(_), _) => {}
        }
    }

    /// What happens to the entry `name` of an object this applies to.
    #[inline]
    pub(crate) fn entry(&self, name: &str) -> Entry<'_> {
        match self {
            Self::Fields(fields) => match fields.iter().find(|(field, _)| field == name) {
                Some((_, Self::Whole)) => Entry::Skipped,
                Some((_, below)) => Entry::Kept(Some(below)),
                None => Entry::Kept(None),
            },
            Self::Keys(keys) if keys.iter().any(|key| key == name) => Entry::Skipped,
            _ => Entry::Kept(None),
        }
    }

    /// What is skipped in each element of an array this applies to.
    #[inline]
    pub(crate) fn element(&self) -> Option<&Self> {
        match self {
            Self::Each(element) => Some(element),
            _ => None,
        }
    }

    /// Whether this reads an object's entries by name (else the object is decoded as it is).
    #[inline]
    pub(crate) fn reads_entries(&self) -> bool {
        matches!(self, Self::Fields(_) | Self::Keys(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_a_tree_of_what_is_skipped() {
        let skip = Skip::of_objects(&[
            FieldPath::managed_fields(),
            FieldPath::last_applied_configuration(),
            "metadata.annotations[b]".parse().expect("a path"),
        ])
        .expect("something skipped");
        assert_eq!(
            skip,
            Skip::Fields(vec![(
                "metadata".into(),
                Skip::Fields(vec![
                    ("managedFields".into(), Skip::Whole),
                    (
                        "annotations".into(),
                        Skip::Keys(vec![crate::source::LAST_APPLIED_ANNOTATION.into(), "b".into()])
                    ),
                ])
            )])
        );
        assert!(matches!(skip.entry("spec"), Entry::Kept(None)));
        let Entry::Kept(Some(metadata)) = skip.entry("metadata") else {
            panic!("metadata is read field by field");
        };
        assert!(matches!(metadata.entry("managedFields"), Entry::Skipped));
        assert_eq!(Skip::of_objects(&[]), None);
        let list = skip.in_list();
        let Entry::Kept(Some(items)) = list.entry("items") else {
            panic!("items");
        };
        assert!(items.element().is_some_and(Skip::reads_entries));
    }

    #[test]
    fn a_field_skipped_whole_stays_whole() {
        let whole: FieldPath = "metadata".parse().expect("a path");
        let skip = Skip::of_objects(&[whole, FieldPath::managed_fields()]).expect("skipped");
        assert!(matches!(skip.entry("metadata"), Entry::Skipped));
    }
}
