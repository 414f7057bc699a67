//! The step between the two of decoding a body: its kind read as apimachinery's serializer first
//! reads it (`Interpret`: a lax decoding into `metav1.TypeMeta`), on a well-formed data item. An
//! error here means kube-apiserver cannot tell the body's kind: the top level is not a map, one
//! of its keys is neither a string nor an integer, is a text string that is not UTF-8 or comes
//! twice, or `apiVersion` or `kind` is not a string. The other values are skipped unread.

use ciborium_ll::Header;

use super::error::{Error, major_name};
use super::wellformed::{Reader, head_name};

/// The fields of `TypeMeta`, as keys.
const TYPE_META: [&str; 2] = ["apiVersion", "kind"];

/// Reads the top level of `data` (already checked to be well-formed) as the lax decoding into
/// `TypeMeta` does, and refuses what it refuses.
pub(crate) fn check(data: &[u8]) -> Result<(), Error> {
    let mut reader = Reader::new(data);
    let mut head = reader.pull()?.1;
    // the self-described tag, or any other, around the object
    while let Header::Tag(_) = head {
        head = reader.pull()?.1;
    }
    let Header::Map(len) = head else {
        return Err(Error::NotAnObject(head_name(&head)));
    };
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut index = 0;
    while len.is_none_or(|len| index < len) {
        let (_, key) = reader.pull()?;
        let name = match key {
            Header::Break if len.is_none() => break,
            Header::Text(_) => {
                let text = reader.string(&key)?;
                if std::str::from_utf8(&text).is_err() {
                    return Err(Error::InvalidUtf8InTypeMeta);
                }
                Some(text)
            }
            Header::Bytes(_) => Some(reader.string(&key)?),
            // integer keys match no field of TypeMeta: skipped
            Header::Positive(_) | Header::Negative(_) => None,
            other => return Err(Error::KeyNotAField(head_name(&other))),
        };
        if let Some(name) = name {
            if seen.contains(&name) {
                return Err(Error::DuplicateKey {
                    key: String::from_utf8_lossy(&name).into_owned(),
                    index,
                    top_level: true,
                });
            }
            if let Some(field) = TYPE_META.iter().find(|f| f.as_bytes() == name.as_slice()) {
                type_meta_value(&mut reader, field)?;
            } else {
                reader.item(1)?;
            }
            seen.push(name);
        } else {
            reader.item(1)?;
        }
        index += 1;
    }
    Ok(())
}

/// The value of `apiVersion` or `kind`: a string (text that is UTF-8, or bytes) or null.
fn type_meta_value(reader: &mut Reader<'_>, field: &'static str) -> Result<(), Error> {
    let (_, head) = reader.pull()?;
    match head {
        Header::Text(_) => {
            let text = reader.string(&head)?;
            if std::str::from_utf8(&text).is_err() {
                return Err(Error::InvalidUtf8InTypeMeta);
            }
            Ok(())
        }
        Header::Bytes(_) => reader.string(&head).map(drop),
        Header::Simple(22) => Ok(()),
        other => {
            reader.push(other);
            reader.item(1)?;
            Err(Error::TypeMetaField {
                field,
                got: match other {
                    Header::Tag(_) => major_name(6),
                    other => head_name(&other),
                },
            })
        }
    }
}
