//! What the tagger knows of words, apart from its weights: the joint tag set ([`TagSet`]),
//! a word's hashed attributes ([`word_attrs`]: form, lowercase form, affixes, shape), and what
//! training says of each form ([`TagDict`]: the fixed tag of frequent unambiguous words, the
//! ambiguity class of every word seen often enough, and so whether a form is known at all).
//! This module hashes and counts; tagging and training are [`super`]'s.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{Gold, TagSentence};
use crate::base::hash::{combine, fnv_byte, mix, IdentityBuildHasher, FNV_OFFSET};
use crate::model::apostrophe;

/// A word must be seen this often to enter the tag dictionary ...
const DICT_MIN_COUNT: u32 = 20;
/// ... with its most frequent tag at least this share of the time.
const DICT_MIN_SHARE: f64 = 0.97;
/// The ambiguity class of a word holds the tags it had at least this share of the time.
const CLASS_MIN_SHARE: f64 = 0.05;
/// The joint (UPOS, XPOS) tags of a tagger.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagSet {
    tags: Vec<(String, String)>,
    #[serde(skip)]
    lookup: HashMap<(String, String), u16>,
}

impl TagSet {
    /// The index of a tag, adding it if new.
    pub fn intern(&mut self, upos: &str, xpos: &str) -> u16 {
        let key = (upos.to_string(), xpos.to_string());
        if let Some(&i) = self.lookup.get(&key) {
            return i;
        }
        let i = self.tags.len() as u16;
        self.tags.push(key.clone());
        self.lookup.insert(key, i);
        i
    }

    /// The index of a tag, if known.
    pub fn find(&self, upos: &str, xpos: &str) -> Option<u16> {
        self.tags.iter().position(|(u, x)| u == upos && x == xpos).map(|i| i as u16)
    }

    /// The first tag with this UPOS (the first seen in training: a frequent one), if any.
    pub fn with_upos(&self, upos: &str) -> Option<u16> {
        self.tags.iter().position(|(u, _)| u == upos).map(|i| i as u16)
    }

    /// UPOS and XPOS of tag `i`.
    pub fn get(&self, i: u16) -> (&str, &str) {
        let (u, x) = &self.tags[i as usize];
        (u, x)
    }

    /// Number of tags.
    pub fn len(&self) -> usize {
        self.tags.len()
    }

    /// True if no tag is known.
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }

    /// Rebuilds the lookup after deserialisation.
    pub fn rebuild_index(&mut self) {
        self.lookup = self.tags.iter().enumerate().map(|(i, t)| (t.clone(), i as u16)).collect();
    }
}

/// Hashed attributes of one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordAttrs {
    pub(super) form: u64,
    pub(super) lower: u64,
    pub(super) prefix: [u64; 4],
    pub(super) suffix: [u64; 4],
    pub(super) shape: u64,
    /// Length in characters, capped at 10.
    pub(super) len: u64,
    /// The word's ambiguity class: the set of tags it had in training ([`UNKNOWN_CLASS`] until
    /// [`TagDict::annotate`] looks it up).
    pub(super) class: u64,
}

/// Ambiguity class of a word not seen (often enough) in training.
pub(super) const UNKNOWN_CLASS: u64 = 0x554e_4b4e_4f57_4e00;

pub(super) const PAD: WordAttrs =
    WordAttrs { form: 1, lower: 1, prefix: [1; 4], suffix: [1; 4], shape: 1, len: 0, class: 1 };

/// [`WordAttrs::lower`] of a form alone, as [`word_attrs`] hashes it.
fn lower_hash(form: &str) -> u64 {
    if form.is_ascii() {
        // Lowercased byte by byte, and no curly apostrophe: the same hash, for 0.39% of a
        // CoNLL-U parse's instructions (`ArcConfidence::read` asks of every word; en_ewt dev,
        // scripts/benchmarks/instructions.sh).
        return mix(form.bytes().fold(FNV_OFFSET, |h, b| fnv_byte(h, b.to_ascii_lowercase())));
    }
    let mut buf = [0u8; 4];
    let lower = form
        .chars()
        .map(apostrophe::read_as)
        .flat_map(char::to_lowercase)
        .fold(FNV_OFFSET, |h, lc| lc.encode_utf8(&mut buf).as_bytes().iter().fold(h, |h, &b| fnv_byte(h, b)));
    mix(lower)
}

/// Hashes a word's attributes without allocating.
pub fn word_attrs(form: &str) -> WordAttrs {
    let (mut formh, mut lower, mut shape) = (FNV_OFFSET, FNV_OFFSET, 0x1234_5678u64);
    let mut prefix = [0u64; 4];
    let mut last_class = 0u8;
    let mut run = 0;
    let mut buf = [0u8; 4];
    let n_chars = form.chars().count();
    let mut suffix_acc = [FNV_OFFSET; 4];
    // A curly apostrophe is read as a straight one (`crate::model::apostrophe`).
    for (i, c) in form.chars().map(apostrophe::read_as).enumerate() {
        for &b in c.encode_utf8(&mut buf).as_bytes() {
            formh = fnv_byte(formh, b);
        }
        for lc in c.to_lowercase() {
            for &b in lc.encode_utf8(&mut buf).as_bytes() {
                lower = fnv_byte(lower, b);
                // The suffix of length k starts at char n_chars - k.
                for (k, acc) in suffix_acc.iter_mut().enumerate() {
                    if i + k + 1 >= n_chars {
                        *acc = fnv_byte(*acc, b);
                    }
                }
            }
        }
        if i < 4 {
            prefix[i] = lower;
        }
        let class = if c.is_uppercase() {
            b'X'
        } else if c.is_lowercase() {
            b'x'
        } else if c.is_ascii_digit() {
            b'd'
        } else if c.is_alphabetic() {
            b'a'
        } else {
            c as u32 as u8
        };
        // Runs are cut at two: "Xxxxx" -> "Xxx", "1990" -> "dd".
        run = if class == last_class { run + 1 } else { 0 };
        if run < 2 {
            shape = fnv_byte(shape, class);
        }
        last_class = class;
    }
    for p in prefix.iter_mut().skip(n_chars.min(4)) {
        *p = lower; // shorter words: the whole word
    }
    WordAttrs {
        form: mix(formh),
        lower: mix(lower),
        prefix: prefix.map(mix),
        suffix: suffix_acc.map(mix),
        shape: mix(shape),
        len: n_chars.min(10) as u64 + 1,
        class: UNKNOWN_CLASS,
    }
}

/// What training says of words: frequent, practically unambiguous words and their tag, and the
/// ambiguity class of every word seen often enough.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagDict {
    entries: HashMap<u64, u16, IdentityBuildHasher>,
    /// Lowercase form → hash of the sorted set of tags it was seen with.
    classes: HashMap<u64, u64, IdentityBuildHasher>,
}

/// Tag counts of each key of `sentences`' words (`key` picks the attribute).
fn tag_counts(sentences: &[TagSentence], key: impl Fn(&WordAttrs) -> u64) -> HashMap<u64, HashMap<u16, u32>> {
    let mut counts: HashMap<u64, HashMap<u16, u32>> = HashMap::new();
    for s in sentences {
        // A tag nobody checked is what a tagger said: neither evidence of the word's tags nor
        // a reason to stop scoring it.
        for (_, (w, &t)) in s.words.iter().zip(&s.tags).enumerate().filter(|(i, _)| s.gold(*i) != Gold::Unchecked) {
            *counts.entry(key(w)).or_default().entry(t).or_default() += 1;
        }
    }
    counts
}

/// The ambiguity class of a word seen with `tags` (counts): a hash of the sorted set of tags
/// seen at least [`CLASS_MIN_SHARE`] of the time.
fn ambiguity_class(tags: &HashMap<u16, u32>) -> u64 {
    let total: u32 = tags.values().sum();
    let mut set: Vec<u16> =
        tags.iter().filter(|&(_, &c)| f64::from(c) >= CLASS_MIN_SHARE * f64::from(total)).map(|(&t, _)| t).collect();
    set.sort_unstable();
    set.iter().fold(0x0041_4d42_4947_u64, |h, &t| combine(h, u64::from(t)))
}

impl TagDict {
    /// Builds the dictionary from tagged sentences.
    pub fn build(sentences: &[TagSentence]) -> TagDict {
        let classes = tag_counts(sentences, |w| w.lower).iter().map(|(&w, tags)| (w, ambiguity_class(tags))).collect();
        let entries = tag_counts(sentences, |w| w.form)
            .into_iter()
            .filter_map(|(form, tags)| {
                let total: u32 = tags.values().sum();
                let (&tag, &best) = tags.iter().max_by_key(|&(&t, &c)| (c, std::cmp::Reverse(t)))?;
                (total >= DICT_MIN_COUNT && f64::from(best) / f64::from(total) >= DICT_MIN_SHARE).then_some((form, tag))
            })
            .collect();
        TagDict { entries, classes }
    }

    /// The fixed tag of a word, if it has one.
    pub fn get(&self, w: &WordAttrs) -> Option<u16> {
        self.entries.get(&w.form).copied()
    }

    /// Sets the ambiguity class of every word.
    pub fn annotate(&self, words: &mut [WordAttrs]) {
        for w in words {
            w.class = self.classes.get(&w.lower).copied().unwrap_or(UNKNOWN_CLASS);
        }
    }

    /// Whether the tagger's training data had a word of this form (ignoring case): its
    /// lexicon, which the retraining store reads to tell a file unlike the training data.
    pub fn knows(&self, form: &str) -> bool {
        self.classes.contains_key(&lower_hash(form))
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lowercase_hash_alone_is_the_one_of_all_attributes() {
        for form in ["Running", "ΣΤΟ", "İstanbul", "a", "", "1990", "naïve", "DON'T", "don’t"] {
            assert_eq!(lower_hash(form), word_attrs(form).lower, "{form}");
        }
    }
}
