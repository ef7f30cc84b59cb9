//! Stable 64-bit hashing of strings and feature tuples.
//!
//! Feature hashes are stored in model files, so they must never depend on the platform, the
//! Rust version or a per-process random seed: this module owns that contract. It must not
//! allocate; it is on the hot path of feature extraction.

use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a's starting value: an empty string's hash before [`mix`].
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// One FNV-1a step: `h` with byte `b` folded in.
#[inline]
pub fn fnv_byte(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
}

/// FNV-1a over the bytes of `s`, finalised with [`mix`] so that short strings spread over all
/// 64 bits. Used once per token attribute, not per feature.
pub fn hash_str(s: &str) -> u64 {
    mix(s.bytes().fold(FNV_OFFSET, fnv_byte))
}

/// The splitmix64 finaliser: a bijective avalanche on 64 bits.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Combines an accumulated hash with one more 64-bit value (order-sensitive).
#[inline]
pub fn combine(acc: u64, value: u64) -> u64 {
    mix(acc.rotate_left(5) ^ value)
}

/// Hashes a component's feature templates into `out`, in order: the n-th [`Templates::push`]
/// hashes its values with n and the component's `salt`, so that equal values of different
/// templates (or components) give different features.
pub struct Templates<'a> {
    out: &'a mut Vec<u64>,
    n: u64,
    salt: u64,
}

impl<'a> Templates<'a> {
    /// Templates numbered from 1, appending to `out`.
    pub fn new(out: &'a mut Vec<u64>, salt: u64) -> Templates<'a> {
        Templates { out, n: 0, salt }
    }

    /// Features pushed so far.
    pub fn pushed(&self) -> usize {
        self.n as usize
    }

    /// The next template's feature, of `values`.
    #[inline]
    pub fn push(&mut self, values: &[u64]) {
        self.n += 1;
        let mut h = mix(self.n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ self.salt);
        for &v in values {
            h = combine(h, v);
        }
        self.out.push(h);
    }
}

/// A `Hasher` for keys that are already well-mixed 64-bit hashes: it passes them through.
#[derive(Default, Clone, Copy)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only reached for keys that are not u64; fold them in so the hasher stays correct.
        for &b in bytes {
            self.0 = combine(self.0, u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Builds [`IdentityHasher`]s for `HashMap<u64, _>` keyed by feature hashes.
pub type IdentityBuildHasher = BuildHasherDefault<IdentityHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_is_stable_across_builds() {
        // Model files depend on these exact values: a change here invalidates every model.
        assert_eq!(hash_str(""), mix(FNV_OFFSET));
        assert_ne!(hash_str("a"), hash_str("b"));
        assert_eq!(hash_str("dog"), hash_str("dog"));
    }

    #[test]
    fn combine_is_order_sensitive() {
        assert_ne!(combine(combine(1, 2), 3), combine(combine(1, 3), 2));
    }
}
