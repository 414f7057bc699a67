//! The `pod-template-hash` of a Deployment's template (kube's `controller.ComputeHash`).
//!
//! kube hashes Go's `spew` dump of the template with FNV-32a, adds the collision count as 8
//! little-endian bytes, and renders the number's decimal digits with `rand.SafeEncodeString`.
//! This hashes the template's JSON encoding instead of the `spew` dump: the same kind of
//! name (up to ten characters of `bcdfghjklmnpqrstvwxz2456789`), stable for equal templates
//! and changed by every change of the template, but not the value kube-controller-manager
//! computes for the same template.

use k8s_openapi::api::core::v1::PodTemplateSpec;

/// The alphabet of `rand.SafeEncodeString`: no vowels, no digits that read as letters.
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// FNV-32a's offset basis and prime.
const FNV_OFFSET: u32 = 0x811c_9dc5;
const FNV_PRIME: u32 = 0x0100_0193;

/// The hash of `template`, with `collision_count` (the Deployment's `status.collisionCount`)
/// mixed in when set.
pub(crate) fn template_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let encoded = serde_json::to_vec(template).unwrap_or_default();
    let mut hash = fnv32a(FNV_OFFSET, &encoded);
    if let Some(count) = collision_count {
        let mut bytes = [0_u8; 8];
        bytes[..4].copy_from_slice(&count.to_le_bytes());
        hash = fnv32a(hash, &bytes);
    }
    safe_encode(&hash.to_string())
}

fn fnv32a(mut hash: u32, bytes: &[u8]) -> u32 {
    for byte in bytes {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// kube's `rand.SafeEncodeString`: each character mapped into [`SAFE_ALPHABET`].
fn safe_encode(text: &str) -> String {
    text.chars()
        .map(|c| char::from(SAFE_ALPHABET[c as usize % SAFE_ALPHABET.len()]))
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn template(image: &str) -> PodTemplateSpec {
        serde_json::from_value(
            serde_json::json!({"spec": {"containers": [{"name": "main", "image": image}]}}),
        )
        .unwrap_or_default()
    }

    #[test]
    fn fnv32a_matches_the_reference_vectors() {
        assert_eq!(fnv32a(FNV_OFFSET, b""), 0x811c_9dc5);
        assert_eq!(fnv32a(FNV_OFFSET, b"a"), 0xe40c_292c);
        assert_eq!(fnv32a(FNV_OFFSET, b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn safe_encoding_maps_digits_as_kube_does() {
        // '0' is 48, and 48 % 27 = 21: '4'; '9' is 57, 57 % 27 = 3: 'f'
        assert_eq!(safe_encode("09"), "4f");
    }

    // kube: pkg/controller/controller_utils_test.go, TestComputeHash: equal templates hash
    // alike, and a collision count changes the hash.
    #[test]
    fn equal_templates_hash_alike_and_collisions_change_the_hash() {
        assert_eq!(
            template_hash(&template("a"), None),
            template_hash(&template("a"), None)
        );
        assert_ne!(
            template_hash(&template("a"), None),
            template_hash(&template("b"), None)
        );
        assert_ne!(
            template_hash(&template("a"), None),
            template_hash(&template("a"), Some(1))
        );
        assert_ne!(
            template_hash(&template("a"), Some(1)),
            template_hash(&template("a"), Some(2))
        );
        let labelled = PodTemplateSpec {
            metadata: Some(ObjectMeta::default()),
            ..template("a")
        };
        let hash = template_hash(&labelled, None);
        assert!(
            hash.len() <= 10 && hash.bytes().all(|b| SAFE_ALPHABET.contains(&b)),
            "{hash}"
        );
    }
}
