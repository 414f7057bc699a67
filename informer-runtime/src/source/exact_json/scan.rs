//! The element counts of every array in a JSON text, found in one pass before decoding.

/// What an open bracket of the scan is: an object, or an array with where its count is.
#[derive(Clone, Copy)]
enum Open {
    Object,
    Array(usize),
}

/// Writes into `counts` the number of elements of every array of `json`, in the order their
/// `[` appear (the order a decoder meets them). Strings are skipped whole (with `memchr`), so
/// brackets and commas inside them do not count. The text is not validated: on malformed JSON
/// the counts are meaningless, and the decoder reports the error.
pub(crate) fn array_lengths(json: &[u8], counts: &mut Vec<u32>) {
    counts.clear();
    let mut open: Vec<Open> = Vec::new();
    let mut at = 0;
    while let Some(&byte) = json.get(at) {
        match byte {
            b'"' => at = string_end(json, at),
            b'[' => {
                open.push(Open::Array(counts.len()));
                counts.push(u32::from(!array_is_empty(json, at)));
            }
            b'{' => open.push(Open::Object),
            b',' => {
                if let Some(Open::Array(count_at)) = open.last() {
                    counts[*count_at] += 1;
                }
            }
            b']' | b'}' => {
                open.pop();
            }
            _ => {}
        }
        at += 1;
    }
}

/// Whether the array opening at `at` closes before any element.
fn array_is_empty(json: &[u8], at: usize) -> bool {
    json.get(at + 1..)
        .unwrap_or_default()
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_none_or(|&b| b == b']')
}

/// The index of the quote that closes the string opening at `start` (the end of the text if
/// it is not closed).
///
/// Most strings of an object are short (keys, names, flags), so the text is searched eight
/// bytes at a time in a `u64` rather than through a `memchr` call per string.
fn string_end(json: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    loop {
        at = quote_or_backslash(json, at);
        match json.get(at) {
            Some(b'"') | None => return at.min(json.len()),
            // an escape: skip the backslash and the escaped byte
            Some(_) => at += 2,
        }
    }
}

/// The index of the first `"` or `\` at or after `from`, or the end of the text.
fn quote_or_backslash(json: &[u8], mut from: usize) -> usize {
    while let Some(word) = json.get(from..from + 8) {
        let word = u64::from_le_bytes(word.try_into().expect("a slice of eight bytes"));
        let found = bytes_equal_to(word, b'"') | bytes_equal_to(word, b'\\');
        if found != 0 {
            return from + (found.trailing_zeros() / 8) as usize;
        }
        from += 8;
    }
    let rest = json.get(from..).unwrap_or_default();
    from + rest
        .iter()
        .position(|&byte| byte == b'"' || byte == b'\\')
        .unwrap_or(rest.len())
}

/// A word whose lowest set bit is the high bit of the first byte of `word` equal to `byte`
/// (little-endian order), or zero if none is: the classic zero-byte test on `word ^ byte`.
/// Bytes above the first match may be flagged wrongly; only the lowest flag is read.
fn bytes_equal_to(word: u64, byte: u8) -> u64 {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let diff = word ^ (ONES * u64::from(byte));
    diff.wrapping_sub(ONES) & !diff & HIGHS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lengths(json: &str) -> Vec<u32> {
        let mut counts = vec![99];
        array_lengths(json.as_bytes(), &mut counts);
        counts
    }

    #[test]
    fn counts_arrays_in_the_order_they_open() {
        assert_eq!(lengths("[]"), [0]);
        assert_eq!(lengths("[1]"), [1]);
        assert_eq!(lengths(" [ 1 , 2 ,3 ] "), [3]);
        assert_eq!(lengths("[[1,2],[],[3]]"), [3, 2, 0, 1]);
        assert_eq!(
            lengths(r#"{"a":[{"b":[true,false,null]},{"c":{}}],"d":[-1.5e3],"e":{}}"#),
            [2, 3, 1]
        );
        assert_eq!(lengths(r#"{"a":1}"#), Vec::<u32>::new());
    }

    #[test]
    fn brackets_commas_and_escaped_quotes_inside_strings_do_not_count() {
        assert_eq!(lengths(r#"["a,b]", "[", "\"],[", "\\"]"#), [4]);
        assert_eq!(lengths(r#"{"k,[":["\u005d", "x\\\"y,"]}"#), [2]);
    }

    /// Array lengths of a value in the order their `[` are written.
    fn walked(value: &serde_json::Value, out: &mut Vec<u32>) {
        match value {
            serde_json::Value::Array(items) => {
                out.push(u32::try_from(items.len()).expect("small"));
                items.iter().for_each(|item| walked(item, out));
            }
            serde_json::Value::Object(members) => members.values().for_each(|v| walked(v, out)),
            _ => {}
        }
    }

    fn random_value(rng: &mut fastrand::Rng, depth: u32) -> serde_json::Value {
        const PIECES: [&str; 8] = ["a", "[", "]", ",", "\\", "\"", "{}", "é"];
        let string = |rng: &mut fastrand::Rng| -> String {
            (0..rng.usize(0..24))
                .map(|_| PIECES[rng.usize(..PIECES.len())])
                .collect()
        };
        match if depth == 0 { rng.u8(0..3) } else { rng.u8(0..5) } {
            0 => serde_json::Value::from(string(rng)),
            1 => serde_json::Value::from(rng.i64(-1000..1000)),
            2 => serde_json::Value::Null,
            3 => (0..rng.usize(0..4))
                .map(|_| random_value(rng, depth - 1))
                .collect(),
            _ => serde_json::Value::Object(
                (0..rng.usize(0..4))
                    .map(|_| (string(rng), random_value(rng, depth - 1)))
                    .collect(),
            ),
        }
    }

    /// Random documents with strings full of brackets, commas, quotes and backslashes, compact
    /// and pretty-printed: the scan agrees with a walk of the decoded value.
    #[test]
    fn agrees_with_a_walk_of_the_decoded_value() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..2000 {
            let value = random_value(&mut rng, 4);
            let mut expected = Vec::new();
            walked(&value, &mut expected);
            for text in [
                value.to_string(),
                serde_json::to_string_pretty(&value).expect("serializes"),
            ] {
                assert_eq!(lengths(&text), expected, "{text}");
            }
        }
    }

    /// The word-at-a-time search finds what a byte-by-byte search finds, wherever the quote or
    /// backslash falls in or across the eight-byte words, with high bytes (UTF-8) around it.
    #[test]
    fn finds_the_first_quote_or_backslash_at_any_offset() {
        for len in 0..40 {
            for special in [b'"', b'\\'] {
                for at in 0..=len {
                    let mut text = vec![0xC3; len];
                    if at < len {
                        text[at] = special;
                    }
                    for from in 0..=len + 1 {
                        let expected = (from..len)
                            .find(|&i| text[i] == b'"' || text[i] == b'\\')
                            .unwrap_or(len.max(from));
                        assert_eq!(
                            quote_or_backslash(&text, from),
                            expected,
                            "length {len}, {} at {at}, from {from}",
                            special as char
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn malformed_text_ends_without_panicking() {
        for text in [r#"["abc"#, r#"["a\"#, "]]]", "[[[", r#"{"a":[1,"#, "\\", "\""] {
            let _ = lengths(text);
        }
    }
}
