//! The digest of a variant's module image (its PTX or cubin bytes):
//! triton-opgen writes it into the variant's description and the bridge
//! checks it before using the image, so a build folder whose PTX was edited
//! or damaged is an error naming the variant, found without a GPU, instead of
//! a driver failure (or a wrong kernel) later. FNV-1a, 64 bits: it guards
//! against accidents, not attacks.

/// `fnv1a64:` and 16 hex digits.
pub fn image_digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_reference_values() {
        assert_eq!(image_digest(b""), "fnv1a64:cbf29ce484222325");
        assert_eq!(image_digest(b"a"), "fnv1a64:af63dc4c8601ec8c");
        assert_ne!(image_digest(b".entry add("), image_digest(b".entry add_("));
    }
}
