//! The encoding and decoding modes, with cases ported from apimachinery's
//! `pkg/runtime/serializer/cbor/internal/modes` tests (named in the comments).

use serde_json::{Value, json};

use super::error::MAX_NESTED_LEVELS;
use super::*;

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The hex of `value` encoded, without the self-described prefix.
fn encoded(value: Value) -> String {
    let bytes = encode_answer(&value).expect("encodes");
    let text = to_hex(&bytes);
    text.strip_prefix("d9d9f7").expect("self-described").to_owned()
}

fn decoded(data: &str) -> Result<Value, String> {
    decode_value(&hex(data)).map_err(|e| e.go_text())
}

#[test]
fn answers_are_self_described_with_byte_strings_in_bytewise_key_order() {
    let pod = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a"}});
    // {'kind': 'Pod', 'metadata': {'name': 'a'}, 'apiVersion': 'v1'}: shorter keys first
    assert_eq!(
        encoded(pod),
        concat!(
            "a3",
            "446b696e64",
            "43506f64",
            "486d65746164617461",
            "a1",
            "446e616d65",
            "4161",
            "4a61706956657273696f6e",
            "427631",
        )
    );
}

/// `TestEncode` "string marshalled to byte string".
#[test]
fn strings_are_byte_strings() {
    assert_eq!(encoded(json!("a")), "4161");
    assert_eq!(encoded(json!("")), "40");
    let long = "x".repeat(24);
    assert_eq!(encoded(json!(long)), format!("5818{}", "78".repeat(24)));
}

#[test]
fn integers_take_their_shortest_form_and_past_int64_become_floats() {
    for (value, want) in [
        (json!(0), "00"),
        (json!(23), "17"),
        (json!(24), "1818"),
        (json!(255), "18ff"),
        (json!(256), "190100"),
        (json!(65536), "1a00010000"),
        (json!(4294967296_i64), "1b0000000100000000"),
        (json!(-1), "20"),
        (json!(-25), "3818"),
        (json!(i64::MIN), "3b7fffffffffffffff"),
        // 2^64 - 1 is a float64 in Go's unstructured objects, exactly 2^64 as a float32
        (json!(u64::MAX), "fa5f800000"),
    ] {
        assert_eq!(encoded(value.clone()), want, "{value}");
    }
}

/// `ShortestFloat16`: the narrowest float that keeps the value (the `TestRoundtrip` floats).
#[test]
fn floats_take_their_shortest_exact_form() {
    for (value, want) in [
        (json!(1.0), "f93c00"),
        (json!(1.5), "f93e00"),
        (json!(-0.0), "f98000"),
        (json!(65504.0), "f97bff"),
        (json!(100000.0), "fa47c35000"),
        (json!(0.1), "fb3fb999999999999a"),
        (json!(f64::MAX), "fb7fefffffffffffff"),
    ] {
        assert_eq!(encoded(value.clone()), want, "{value}");
    }
}

#[test]
fn watch_events_are_maps_of_type_and_a_self_described_object() {
    let line = br#"{"type":"ADDED","object":{"kind":"Pod"}}"#;
    let item = watch_item(line).expect("an event");
    assert_eq!(
        to_hex(&item),
        concat!(
            "d9d9f7",
            "a2",
            "4474797065",
            "454144444544",
            "466f626a656374",
            "d9d9f7",
            "a1446b696e6443506f64",
        )
    );
    assert_eq!(watch_item(b"this is not JSON {\n"), None);
}

#[test]
fn answers_decode_back_to_the_same_json() {
    let object = json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "labels": {"a": "b"}},
        "spec": {"n": 3, "x": 1.5, "big": -9_000_000_000_i64, "on": true, "none": null, "list": [1, "two", []]},
    });
    let bytes = encode_answer(&object).expect("encodes");
    assert_eq!(decode_object(&bytes).expect("decodes"), object);
}

/// `TestDecode` "unsigned integer" and "negative integer".
#[test]
fn integers_must_fit_int64() {
    assert_eq!(decoded("0a"), Ok(json!(10)));
    assert_eq!(decoded("1b7fffffffffffffff"), Ok(json!(i64::MAX)));
    assert_eq!(decoded("3b7fffffffffffffff"), Ok(json!(i64::MIN)));
    assert_eq!(
        decoded("1bffffffffffffffff"),
        Err("cbor: cannot unmarshal positive integer into Go value of type int64 (18446744073709551615 overflows Go's int64)".to_owned())
    );
    assert_eq!(
        decoded("3bffffffffffffffff"),
        Err("cbor: cannot unmarshal negative integer into Go value of type int64 (-18446744073709551616 overflows Go's int64)".to_owned())
    );
}

/// `TestDecode` "byte string" and "text string".
#[test]
fn strings_decode_to_strings() {
    assert_eq!(decoded("40"), Ok(json!("")));
    assert_eq!(decoded("d64401020304"), Ok(json!("AQIDBA==")));
    assert_eq!(decoded("d54401020304"), Ok(json!("AQIDBA")));
    assert_eq!(decoded("d74401020304"), Ok(json!("01020304")));
    assert_eq!(decoded("7f616161626163ff"), Ok(json!("abc")));
    assert_eq!(decoded("60"), Ok(json!("")));
    assert_eq!(decoded("6180"), Err("cbor: invalid UTF-8 string".to_owned()));
}

/// `TestDecode` "array" and "map".
#[test]
fn maps_need_unique_string_keys() {
    assert_eq!(decoded("9f9f8080ff9f8080ffff"), Ok(json!([[[], []], [[], []]])));
    assert_eq!(decoded("a143414243187b"), Ok(json!({"ABC": 123})));
    assert_eq!(
        decoded("bf61610161629f0203ffff"),
        Ok(json!({"a": 1, "b": [2, 3]}))
    );
    let duplicate = "cbor: found duplicate map key \"A\" at map element index 1";
    assert_eq!(decoded("a2614101614102"), Err(duplicate.to_owned()));
    assert_eq!(decoded("a2414101414102"), Err(duplicate.to_owned()));
    assert_eq!(decoded("a2414101614102"), Err(duplicate.to_owned()));
    assert_eq!(
        decoded("a1fb40091eb851eb851f63706965"),
        Err("cbor: cannot unmarshal primitives into Go value of type string".to_owned())
    );
    assert_eq!(
        decoded("a1016161"),
        Err("cbor: cannot unmarshal positive integer into Go value of type string".to_owned())
    );
}

/// `TestDecode` "floating-point number" and "simple value".
#[test]
fn nan_infinity_and_unknown_simple_values_are_refused() {
    let nan = "cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN";
    let inf = "cbor: data item of cbor type primitives is not accepted by protocol: floating-point infinity";
    for data in ["f97e00", "fa7fc00000", "fb7ff8000000000000"] {
        assert_eq!(decoded(data), Err(nan.to_owned()), "{data}");
    }
    for data in ["f97c00", "fa7f800000", "fb7ff0000000000000", "f9fc00"] {
        assert_eq!(decoded(data), Err(inf.to_owned()), "{data}");
    }
    assert_eq!(decoded("f93e00"), Ok(json!(1.5)));
    assert_eq!(decoded("fb0000000000000001"), Ok(json!(5e-324)));
    assert_eq!(decoded("f4"), Ok(json!(false)));
    assert_eq!(decoded("f5"), Ok(json!(true)));
    assert_eq!(decoded("f6"), Ok(Value::Null));
    assert_eq!(
        decoded("f7"),
        Err("cbor: data item of cbor type primitives is not accepted by protocol: simple value 23 is not recognized".to_owned())
    );
    for (data, value) in [("e0", 0), ("f3", 19), ("f820", 32), ("f8ff", 255)] {
        assert_eq!(
            decoded(data),
            Err(format!(
                "cbor: data item of cbor type primitives is not accepted by protocol: simple value {value} is not recognized"
            )),
            "{data}"
        );
    }
    // reserved: two-byte forms of the one-byte simple values
    assert!(decoded("f818").is_err());
}

/// `TestDecode` "tag": times become RFC 3339 strings, bignums are refused, other tags are
/// their content.
#[test]
fn tags() {
    assert_eq!(
        decoded("c074323030362d30312d30325431353a30343a30355a"),
        Ok(json!("2006-01-02T15:04:05Z"))
    );
    assert_eq!(
        decoded("c054323030362d30312d30325431353a30343a30355a"),
        Err("cbor: tag number 0 must be followed by text string, got byte string".to_owned())
    );
    assert!(decoded("c06474657874").is_err());
    assert_eq!(decoded("c11a43b940e5"), Ok(json!("2006-01-02T15:04:05Z")));
    assert_eq!(decoded("c1f93c00"), Ok(json!("1970-01-01T00:00:01Z")));
    assert_eq!(decoded("c1fb3ff0000000000000"), Ok(json!("1970-01-01T00:00:01Z")));
    assert!(decoded("c11b0000003afff44181").is_err());
    let bignum = "cbor: data item of cbor type tag is not accepted by protocol: bignum";
    assert_eq!(decoded("c249010000000000000000"), Err(bignum.to_owned()));
    assert_eq!(decoded("c34100"), Err(bignum.to_owned()));
    assert_eq!(
        decoded("c26161"),
        Err("cbor: tag number 2 or 3 must be followed by byte string, got UTF-8 text string".to_owned())
    );
    assert_eq!(decoded("d9d9f7a1616101"), Ok(json!({"a": 1})));
    assert_eq!(decoded("d82a6161"), Ok(json!("a")));
}

#[test]
fn malformed_data_items_are_refused_before_decoding() {
    assert_eq!(decoded(""), Err("unexpected EOF".to_owned()));
    assert_eq!(decoded("a2616101"), Err("unexpected EOF".to_owned()));
    assert_eq!(decoded("6461"), Err("unexpected EOF".to_owned()));
    assert_eq!(decoded("9f01"), Err("unexpected EOF".to_owned()));
    assert_eq!(
        decoded("0101"),
        Err("cbor: 1 bytes of extraneous data starting at index 1".to_owned())
    );
    assert_eq!(decoded("ff"), Err("cbor: unexpected \"break\" code".to_owned()));
    assert_eq!(
        decoded("1c"),
        Err("cbor: invalid additional information 28 for type positive integer".to_owned())
    );
    assert_eq!(
        decoded("5f6161ff"),
        Err("cbor: wrong element type UTF-8 text string for indefinite-length byte string".to_owned())
    );
    let deep = format!("{}00", "81".repeat(MAX_NESTED_LEVELS + 1));
    assert_eq!(
        decoded(&deep),
        Err(format!("cbor: exceeded max nested level {MAX_NESTED_LEVELS}"))
    );
    let fine = format!("{}00", "81".repeat(MAX_NESTED_LEVELS));
    assert!(decoded(&fine).is_ok());
}

#[test]
fn which_errors_hide_the_kind_of_a_body() {
    let top = decode_object(&hex("a2614101614102")).expect_err("top-level duplicate");
    assert!(top.error.hides_kind());
    // {"kind": "W", "spec": {"a": 1, "a": 2}}
    let body = hex("a2646b696e6461576473706563a2616101616102");
    let nested = decode_object(&body).expect_err("nested duplicate");
    assert!(!nested.error.hides_kind());
    assert_eq!(nested.type_meta, Some((String::new(), "W".to_owned())));
    let array = decode_object(&hex("80")).expect_err("not a map");
    assert_eq!(
        array.error.go_text(),
        "cbor: cannot unmarshal array into Go value of type v1.TypeMeta (cannot decode CBOR array to struct without toarray option)"
    );
    // the top level as the lax decoding into TypeMeta reads it
    let cases = [
        // {3.14: 'x'}
        (
            "a1fb40091eb851eb851f4178",
            "cbor: cannot unmarshal primitives into Go value of type string (map key is of type primitives and cannot be used to match struct field name)",
        ),
        // {'kind': 5}
        (
            "a1446b696e6405",
            "cbor: cannot unmarshal positive integer into Go struct field v1.TypeMeta.kind of type string",
        ),
        // {"\xff": 1}
        ("a161ff01", "cbor: invalid UTF-8 string"),
        // {'kind': "\xff"}
        ("a1446b696e6461ff", "cbor: invalid UTF-8 string"),
    ];
    for (data, text) in cases {
        let error = decode_object(&hex(data)).expect_err(data).error;
        assert!(error.hides_kind(), "{data}");
        assert_eq!(error.go_text(), text, "{data}");
    }
    // integer keys and a null kind are passed over: the kind is read (empty)
    let integer_key = decode_object(&hex("a20101446b696e6441570a")).expect_err("extraneous");
    assert!(integer_key.error.hides_kind());
    let read = decode_object(&hex("a2446b696e64f601a0")).expect_err("integer key");
    assert_eq!(read.error, Error::KeyType("positive integer"));
    assert!(!read.error.hides_kind());
    // a string that is not UTF-8 is found after the kind was read
    let utf8 = decode_object(&hex("a2646b696e646157647370656361ff")).expect_err("utf-8");
    assert_eq!(utf8.error, Error::InvalidUtf8);
    assert!(!utf8.error.hides_kind());
}

/// Never a panic, whatever the bytes: every prefix of a valid body and some mangled ones.
#[test]
fn arbitrary_bytes_never_panic() {
    let body = encode_answer(&json!({"kind": "Pod", "spec": {"a": [1, 2.5, "x", null, {"b": true}]}}))
        .expect("encodes");
    for end in 0..body.len() {
        let _ = decode_object(&body[..end]);
    }
    let mut state = 0x2545_f491_u32;
    for _ in 0..2000 {
        let mut mangled = body.clone();
        for _ in 0..3 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let at = state as usize % mangled.len();
            mangled[at] = (state >> 8) as u8;
        }
        let _ = decode_object(&mangled);
    }
    // a huge announced length
    assert_eq!(
        decode_value(&hex("5bffffffffffffffff")).map_err(|e| e.go_text()),
        Err("unexpected EOF".to_owned())
    );
}

/// `TestEncode` "[]byte marshalled to byte string in expected base64 encoding tag": the `[]byte`
/// fields of built-in kinds, in objects and lists; a custom resource's strings stay strings.
#[test]
fn byte_slice_fields_are_tagged_byte_strings() {
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "data": {"k": "AQI="}});
    // {'data': {'k': 22(h'0102')}, 'kind': 'Secret', 'apiVersion': 'v1'}
    assert_eq!(
        encoded(secret),
        concat!(
            "a3",
            "4464617461",
            "a1416bd6420102",
            "446b696e64",
            "46536563726574",
            "4a61706956657273696f6e",
            "427631",
        )
    );
    let list = json!({"apiVersion": "v1", "kind": "SecretList", "items": [{"data": {"k": "AQI="}}]});
    assert!(encoded(list).contains("a1416bd6420102"));
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "data": {"k": "AQI="}});
    assert!(encoded(widget).contains("a1416b444151493d"));
}
