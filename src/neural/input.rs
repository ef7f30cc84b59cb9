//! What a word gives the encoder: the rows of its hashed embeddings ([`hashed_rows`]) and the
//! character ids of its form ([`char_ids`]). Training and parsing both call these, so the two
//! see the same inputs; this module looks nothing up in the weights.

use crate::base::hash::hash_str;
use crate::model::features::TokenAttrs;

use crate::model::neural::spec::{Chars, Key, Spec};

/// Character id of the start of a word.
pub const BOW: usize = 0;
/// Character id of the end of a word.
pub const EOW: usize = 1;

/// A distinct salt per key, so that equal hashes of different keys use unrelated rows.
fn salt(key: Key) -> u64 {
    match key {
        Key::Lower => 0x243f_6a88_85a3_08d3,
        Key::Upos => 0x1319_8a2e_0370_7344,
        Key::Tag => 0xa409_3822_299f_31d0,
        Key::Feats => 0x082e_fa98_ec4e_6c89,
        Key::Suffix => 0x4528_21e6_38d0_1377,
        Key::Shape => 0xbe54_66cf_34e9_0c6c,
    }
}

/// The row of hash `h` in a table of `2^bits` rows (Fibonacci hashing of the salted hash).
#[inline]
fn row(h: u64, key: Key, bits: u32) -> usize {
    ((h ^ salt(key)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
}

/// The word's shape: upper `X`, lower `x`, digit `d`, anything else itself; runs of a class
/// cut at two (`Xxx` for "London", `dd.d` for "12.5").
fn shape(form: &str) -> u64 {
    let mut s = String::with_capacity(8);
    let (mut last, mut run) = ('\0', 0);
    for c in form.chars() {
        let class = if c.is_uppercase() {
            'X'
        } else if c.is_lowercase() {
            'x'
        } else if c.is_numeric() {
            'd'
        } else {
            c
        };
        run = if class == last { run + 1 } else { 1 };
        last = class;
        if run <= 2 {
            s.push(class);
        }
    }
    hash_str(&s)
}

/// The last three characters of `form`, lowercased.
fn suffix(form: &str) -> u64 {
    let start = form.char_indices().rev().nth(2).map_or(0, |(i, _)| i);
    hash_str(&form[start..].to_lowercase())
}

/// What a word's hashed embeddings read of its form alone (its suffix and shape): computed
/// once per form, where the parse-time encoder caches it with the form's character vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormKeys {
    suffix: u64,
    shape: u64,
}

impl FormKeys {
    pub fn of(form: &str) -> FormKeys {
        FormKeys { suffix: suffix(form), shape: shape(form) }
    }
}

/// Fills `out` (one per [`Spec::hashed`]) with the rows of a word's hashed embeddings.
pub fn hashed_rows(spec: &Spec, attrs: &TokenAttrs, form: FormKeys, out: &mut Vec<usize>) {
    out.clear();
    out.extend(spec.hashed.iter().map(|h| {
        let hash = match h.key {
            Key::Lower => attrs.lower,
            Key::Upos => attrs.upos,
            Key::Tag => attrs.tag,
            Key::Feats => attrs.feats,
            Key::Suffix => form.suffix,
            Key::Shape => form.shape,
        };
        row(hash, h.key, h.bits)
    }));
}

/// Fills `out` with the character ids of `form`: [`BOW`], its characters (the first and last
/// `max_chars / 2` of a longer word), [`EOW`].
pub fn char_ids(chars: &Chars, form: &str, out: &mut Vec<usize>) {
    out.clear();
    out.push(BOW);
    let rows = (1usize << chars.bits) - 2;
    let id = |c: char| 2 + (crate::base::hash::mix(u64::from(c)) as usize % rows);
    let n = form.chars().count();
    let half = chars.max_chars / 2;
    if n <= chars.max_chars {
        out.extend(form.chars().map(id));
    } else {
        out.extend(form.chars().take(half).map(id));
        out.extend(form.chars().skip(n - half).map(id));
    }
    out.push(EOW);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_cut_runs_at_two_and_keep_other_characters() {
        assert_eq!(shape("London"), hash_str("Xxx"));
        assert_eq!(shape("12.5"), hash_str("dd.d"));
        assert_ne!(shape("ab"), shape("AB"));
    }

    #[test]
    fn long_words_keep_their_ends_between_the_boundary_marks() {
        let chars = Chars { bits: 8, dim: 4, filters: 4, max_chars: 4, encoder: Default::default() };
        let mut ids = Vec::new();
        char_ids(&chars, "abcdef", &mut ids);
        let mut ends = Vec::new();
        char_ids(&chars, "abef", &mut ends);
        assert_eq!(ids, ends);
        assert_eq!((ids[0], ids[5]), (BOW, EOW));
        assert!(ids[1..5].iter().all(|&i| (2..256).contains(&i)));
        char_ids(&chars, "", &mut ids);
        assert_eq!(ids, [BOW, EOW]);
    }
}
