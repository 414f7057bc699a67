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
fn string_end(json: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    while let Some(found) = memchr::memchr2(b'"', b'\\', json.get(at..).unwrap_or_default()) {
        at += found;
        if json[at] == b'"' {
            return at;
        }
        // an escape: skip the backslash and the escaped byte
        at += 2;
    }
    json.len()
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
            (0..rng.usize(0..6))
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

    #[test]
    fn malformed_text_ends_without_panicking() {
        for text in [r#"["abc"#, r#"["a\"#, "]]]", "[[[", r#"{"a":[1,"#, "\\", "\""] {
            let _ = lengths(text);
        }
    }
}
