//! Morphological features (UFeats) for tokenized text: after the tagger, a greedy averaged
//! perceptron predicts each word's FEATS left to right from its form's affixes and shape, its
//! predicted UPOS and XPOS, its neighbours' words and tags, the FEATS it predicted for the two
//! words before, and the FEATS values the word's form was seen with in training (its ambiguity
//! class, jackknifed as the tagger's are).
//!
//! What comes out is always a FEATS value valid for the treebank: only values seen with the
//! word's UPOS in training are chosen among ([`FeatsInventory`]). Two ways to choose, measured
//! against each other ([`FeatsMode`]): the whole FEATS string as one class, or feature by
//! feature (each category's value, or its absence, chosen among those seen with the UPOS).
//!
//! This module owns the FEATS inventory, the classifier and its training; the weights
//! themselves are `perceptron`'s and `model_file`'s.

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::base::hash::{combine, hash_str, mix, IdentityBuildHasher, Templates};
use crate::corpus::{Column, Sentence};
use crate::learn::perceptron::{argmax, Perceptron, Weights};
use crate::learn::scorer::Scorer;

/// Name and version of the feature templates; stored in models.
pub const FEATS_FEATURE_SET: &str = "ufeats+context/1";

/// A lowercased form must be seen this often with a UPOS to enter the dictionary of fixed FEATS
/// ...
const DICT_MIN_COUNT: u32 = 20;
/// ... with its most frequent FEATS at least this share of the time (as the tagger's tag
/// dictionary). On the dev sets these words are 36–60% of the tokens, their FEATS 99.9% right,
/// and they are not scored.
const DICT_MIN_SHARE: f64 = 0.97;
/// The ambiguity class of a form holds the FEATS values it had at least this share of the time.
const CLASS_MIN_SHARE: f64 = 0.05;
/// Folds that give the training words the ambiguity classes they would have in unseen text.
const CLASS_FOLDS: usize = 10;

/// How a FEATS value is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum FeatsMode {
    /// The whole string is one class, among the strings seen with the word's UPOS.
    #[default]
    Whole,
    /// Each category's value (or its absence) is chosen on its own, among those seen with the
    /// word's UPOS; the combination may be new.
    Factored,
}

/// One feature category and its values; class `offset` means the category is absent, class
/// `offset + 1 + i` that it has value `values[i]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Category {
    name: String,
    values: Vec<String>,
    offset: u16,
}

/// The FEATS values of a treebank and which go with which UPOS.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatsInventory {
    mode: FeatsMode,
    /// Whole: the strings seen (class `i` is `strings[i]`; class 0 is `_`).
    strings: Vec<String>,
    /// Factored: the categories, sorted by name as CoNLL-U sorts them (ignoring case).
    categories: Vec<Category>,
    /// Per UPOS (hashed): the classes seen with it. Whole: string classes; factored: per
    /// category that ever has a value with this UPOS, its classes seen (its absence included
    /// if seen).
    allowed: HashMap<u64, Vec<Vec<u16>>, IdentityBuildHasher>,
    #[serde(skip)]
    lookup: HashMap<String, u16>,
}

impl FeatsInventory {
    /// The inventory of the (UPOS, FEATS) pairs of `words`.
    fn build<'a>(mode: FeatsMode, words: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> FeatsInventory {
        let mut inv = FeatsInventory { mode, strings: vec!["_".to_string()], ..FeatsInventory::default() };
        inv.rebuild_index();
        let mut names: Vec<(String, Vec<String>)> = Vec::new();
        for (_, feats) in words.clone() {
            if !inv.lookup.contains_key(feats) {
                inv.lookup.insert(feats.to_string(), inv.strings.len() as u16);
                inv.strings.push(feats.to_string());
            }
            for (name, value) in pairs(feats) {
                let at = match names.iter().position(|(n, _)| n == name) {
                    Some(at) => at,
                    None => {
                        names.push((name.to_string(), Vec::new()));
                        names.len() - 1
                    }
                };
                if !names[at].1.iter().any(|v| v == value) {
                    names[at].1.push(value.to_string());
                }
            }
        }
        if mode == FeatsMode::Whole {
            inv.strings = frequent_upos_last(words.clone());
            inv.rebuild_index();
        }
        names.sort_by_key(|(n, _)| n.to_lowercase());
        let mut offset = 0u16;
        for (name, values) in names {
            let n = values.len() as u16;
            inv.categories.push(Category { name, values, offset });
            offset += n + 1;
        }
        let mut allowed: HashMap<u64, Vec<Vec<u16>>, IdentityBuildHasher> = HashMap::default();
        for (upos, feats) in words {
            let classes = inv.classes_of(feats);
            let entry = allowed.entry(hash_str(upos)).or_insert_with(|| match mode {
                FeatsMode::Whole => vec![Vec::new()],
                FeatsMode::Factored => vec![Vec::new(); inv.categories.len()],
            });
            for (slot, class) in entry.iter_mut().zip(classes) {
                if !slot.contains(&class) {
                    slot.push(class);
                }
            }
        }
        // Factored: a category that never has a value with a UPOS is left out for it.
        for per_category in allowed.values_mut() {
            if mode == FeatsMode::Factored {
                for (slot, c) in per_category.iter_mut().zip(&inv.categories) {
                    if slot.iter().all(|&class| class == c.offset) {
                        slot.clear();
                    }
                }
            }
            for slot in per_category.iter_mut() {
                slot.sort_unstable();
            }
        }
        inv.allowed = allowed;
        inv
    }

    /// What scoring a word with UPOS hash `upos` takes.
    fn scope(&self, upos: u64) -> Scope {
        let Some(slots) = self.allowed.get(&upos) else { return Scope::Unknown };
        match (self.mode, slots.as_slice()) {
            (FeatsMode::Whole, [one]) if one.len() == 1 => Scope::One(one[0]),
            // Allowed classes are sorted: the last one bounds the prefix to score.
            (FeatsMode::Whole, [classes]) => Scope::First(classes.last().map_or(1, |&c| c as usize + 1)),
            _ => Scope::First(self.classes()),
        }
    }

    /// Rebuilds the lookup after deserialisation.
    pub fn rebuild_index(&mut self) {
        self.lookup = self.strings.iter().enumerate().map(|(i, s)| (s.clone(), i as u16)).collect();
    }

    /// How values are chosen.
    pub fn mode(&self) -> FeatsMode {
        self.mode
    }

    /// Number of classes the classifier scores.
    pub fn classes(&self) -> usize {
        match self.mode {
            FeatsMode::Whole => self.strings.len(),
            FeatsMode::Factored => self.categories.last().map_or(1, |c| (c.offset as usize) + c.values.len() + 1),
        }
    }

    /// Number of distinct FEATS strings seen in training.
    pub fn strings(&self) -> usize {
        self.strings.len()
    }

    /// The FEATS string of index `i` (`_` if out of range).
    fn string(&self, i: u16) -> &str {
        self.strings.get(i as usize).map_or("_", String::as_str)
    }

    /// The classes of a FEATS value: whole, one (0 if unknown); factored, one per category.
    fn classes_of(&self, feats: &str) -> Vec<u16> {
        match self.mode {
            FeatsMode::Whole => vec![self.lookup.get(feats).copied().unwrap_or(0)],
            FeatsMode::Factored => self
                .categories
                .iter()
                .map(|c| {
                    let value = pairs(feats).find(|(n, _)| *n == c.name).map(|(_, v)| v);
                    value
                        .and_then(|v| c.values.iter().position(|x| x == v))
                        .map_or(c.offset, |i| c.offset + 1 + i as u16)
                })
                .collect(),
        }
    }

    /// Chooses, by `scores`, the classes of a word whose UPOS hashes to `upos` into `out` (one
    /// per slot of [`Self::allowed`]); empty if the UPOS was never seen.
    fn decode(&self, upos: u64, scores: &[f32], out: &mut Vec<u16>) {
        out.clear();
        let Some(slots) = self.allowed.get(&upos) else { return };
        for slot in slots {
            if let Some(i) = argmax_among(slot, scores) {
                out.push(i);
            }
        }
    }

    /// Writes the FEATS string of `classes` (as [`Self::decode`] gives them) into `out`.
    fn write(&self, classes: &[u16], out: &mut String) {
        out.clear();
        match self.mode {
            FeatsMode::Whole => out.push_str(classes.first().map_or("_", |&c| &self.strings[c as usize])),
            FeatsMode::Factored => {
                for &class in classes {
                    // Categories are sorted, and so are their classes.
                    let Some(c) = self.categories.iter().rev().find(|c| c.offset <= class) else { continue };
                    if class > c.offset {
                        if !out.is_empty() {
                            out.push('|');
                        }
                        out.push_str(&c.name);
                        out.push('=');
                        out.push_str(&c.values[(class - c.offset - 1) as usize]);
                    }
                }
                if out.is_empty() {
                    out.push('_');
                }
            }
        }
    }
}

/// What scoring one word takes.
enum Scope {
    /// Its UPOS was never seen: no FEATS.
    Unknown,
    /// One FEATS value was ever seen with its UPOS: that one, unscored.
    One(u16),
    /// Scores of the first this many classes.
    First(usize),
}

/// The FEATS strings of the (UPOS, FEATS) pairs of `words`, `_` first, then those of the UPOS
/// seen with the fewest values, on to those of the UPOS with the most: a word is scored on
/// the prefix of the classes that holds its UPOS's values ([`Scope::First`]), so function
/// words and punctuation score a few classes and skip most of each dense row.
fn frequent_upos_last<'a>(words: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let mut by_upos: Vec<(&str, Vec<&str>)> = Vec::new();
    for (upos, feats) in words {
        let at = match by_upos.iter().position(|(u, _)| *u == upos) {
            Some(at) => at,
            None => {
                by_upos.push((upos, Vec::new()));
                by_upos.len() - 1
            }
        };
        if !by_upos[at].1.contains(&feats) {
            by_upos[at].1.push(feats);
        }
    }
    by_upos.sort_by_key(|(u, values)| (values.len(), *u));
    let mut strings = vec!["_".to_string()];
    for feats in by_upos.iter().flat_map(|(_, values)| values) {
        if !strings.iter().any(|s| s == feats) {
            strings.push(feats.to_string());
        }
    }
    strings
}

/// The best-scoring class of `classes`.
fn argmax_among(classes: &[u16], scores: &[f32]) -> Option<u16> {
    let mut best: Option<(u16, f32)> = None;
    for &c in classes {
        let s = scores.get(c as usize).copied().unwrap_or(f32::NEG_INFINITY);
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((c, s));
        }
    }
    best.map(|(c, _)| c)
}

/// The `Name=Value` pairs of a FEATS string (none for `_`).
fn pairs(feats: &str) -> impl Iterator<Item = (&str, &str)> + Clone {
    feats.split('|').filter(|p| *p != "_" && !p.is_empty()).map(|p| p.split_once('=').unwrap_or((p, "")))
}

/// Hashed attributes of one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FeatsWord {
    lower: u64,
    /// Suffixes of 1 to 5 characters, lowercased (the whole word when shorter).
    suffix: [u64; 5],
    /// Prefixes of 1 to 3 characters.
    prefix: [u64; 3],
    shape: u64,
    upos: u64,
    xpos: u64,
    /// The FEATS values the form was seen with ([`UNKNOWN_CLASS`] if not).
    class: u64,
}

const UNKNOWN_CLASS: u64 = 0x4645_4154_5300_0001;
const PAD: FeatsWord = FeatsWord { lower: 1, suffix: [1; 5], prefix: [1; 3], shape: 1, upos: 1, xpos: 1, class: 1 };
/// History value before the first word.
const START: u64 = 0x4645_4154_5300_0002;

/// Hashes a word's attributes (`scratch`: a reused buffer).
fn feats_word(form: &str, upos: &str, xpos: &str, scratch: &mut String) -> FeatsWord {
    scratch.clear();
    // A curly apostrophe is read as a straight one (`crate::model::apostrophe`).
    scratch.extend(form.chars().map(crate::model::apostrophe::read_as).flat_map(char::to_lowercase));
    let lower = scratch.as_str();
    let mut suffix = [0u64; 5];
    let mut starts = lower.char_indices().map(|(b, _)| b).rev();
    for s in suffix.iter_mut() {
        *s = hash_str(&lower[starts.next().unwrap_or(0)..]);
    }
    let mut prefix = [0u64; 3];
    let mut ends = lower.char_indices().map(|(b, _)| b).skip(1).chain(std::iter::repeat(lower.len()));
    for p in prefix.iter_mut() {
        *p = hash_str(&lower[..ends.next().unwrap_or(lower.len())]);
    }
    let mut shape = 0x5348_4150u64;
    let mut last = 0u8;
    for c in form.chars() {
        let class = if c.is_uppercase() {
            b'X'
        } else if c.is_lowercase() {
            b'x'
        } else if c.is_numeric() {
            b'd'
        } else {
            b'.'
        };
        if class != last {
            shape = combine(shape, u64::from(class));
        }
        last = class;
    }
    FeatsWord {
        lower: hash_str(lower),
        suffix,
        prefix,
        shape,
        upos: hash_str(upos),
        xpos: hash_str(xpos),
        class: UNKNOWN_CLASS,
    }
}

/// What training says of forms: their ambiguity classes (lowercased form → hash of the sorted
/// FEATS values it was seen with), and the FEATS of frequent, practically unambiguous ones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatsDict {
    classes: HashMap<u64, u64, IdentityBuildHasher>,
    /// Lowercased form and UPOS ([`fixed_key`]) → index of its FEATS string.
    fixed: HashMap<u64, u16, IdentityBuildHasher>,
}

/// The key of a word in the dictionary of fixed FEATS.
fn fixed_key(w: &FeatsWord) -> u64 {
    combine(w.lower, w.upos)
}

impl FeatsDict {
    /// The ambiguity classes of the (lowercased form, FEATS string hash) pairs of `words`, and
    /// no fixed FEATS.
    fn build(words: impl Iterator<Item = (u64, u64)>) -> FeatsDict {
        let mut counts: HashMap<u64, HashMap<u64, u32>> = HashMap::new();
        for (lower, feats) in words {
            *counts.entry(lower).or_default().entry(feats).or_default() += 1;
        }
        let classes = counts
            .into_iter()
            .map(|(lower, values)| {
                let total: u32 = values.values().sum();
                let mut set: Vec<u64> = values
                    .into_iter()
                    .filter(|&(_, c)| f64::from(c) >= CLASS_MIN_SHARE * f64::from(total))
                    .map(|(v, _)| v)
                    .collect();
                set.sort_unstable();
                (lower, set.iter().fold(0x4643_4c53_u64, |h, &v| combine(h, v)))
            })
            .collect();
        FeatsDict { classes, fixed: HashMap::default() }
    }

    /// Adds the fixed FEATS of the ([`fixed_key`], FEATS string index) pairs of `words`.
    fn with_fixed(mut self, words: impl Iterator<Item = (u64, u16)>) -> FeatsDict {
        let mut counts: HashMap<u64, HashMap<u16, u32>> = HashMap::new();
        for (key, feats) in words {
            *counts.entry(key).or_default().entry(feats).or_default() += 1;
        }
        self.fixed = counts
            .into_iter()
            .filter_map(|(key, values)| {
                let total: u32 = values.values().sum();
                let (&feats, &best) = values.iter().max_by_key(|&(&f, &c)| (c, std::cmp::Reverse(f)))?;
                (total >= DICT_MIN_COUNT && f64::from(best) / f64::from(total) >= DICT_MIN_SHARE)
                    .then_some((key, feats))
            })
            .collect();
        self
    }

    /// The fixed FEATS (string index) of a word, if it has one.
    fn get(&self, w: &FeatsWord) -> Option<u16> {
        self.fixed.get(&fixed_key(w)).copied()
    }

    fn annotate(&self, words: &mut [FeatsWord]) {
        for w in words {
            w.class = self.classes.get(&w.lower).copied().unwrap_or(UNKNOWN_CLASS);
        }
    }

    /// Number of forms.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }
}

/// Writes the features of word `i` given the FEATS predicted for the two words before.
fn extract(words: &[FeatsWord], i: usize, h1: u64, h2: u64, out: &mut Vec<u64>) {
    out.clear();
    let at = |j: isize| if j < 0 || j as usize >= words.len() { &PAD } else { &words[j as usize] };
    let i = i as isize;
    let (w, p1, n1, p2, n2) = (at(i), at(i - 1), at(i + 1), at(i - 2), at(i + 2));
    let u = w.upos;
    let mut t = Templates::new(out, 0x4645_4154);
    t.push(&[]);
    t.push(&[u]);
    t.push(&[u, w.xpos]);
    t.push(&[w.lower]);
    t.push(&[u, w.lower]);
    for k in 0..5 {
        t.push(&[w.suffix[k]]);
        t.push(&[u, w.suffix[k]]);
    }
    for k in 0..3 {
        t.push(&[w.prefix[k]]);
    }
    t.push(&[w.shape]);
    t.push(&[u, w.shape]);
    t.push(&[w.class]);
    t.push(&[u, w.class]);
    t.push(&[p1.upos]);
    t.push(&[n1.upos]);
    t.push(&[p2.upos]);
    t.push(&[n2.upos]);
    t.push(&[u, p1.upos]);
    t.push(&[u, n1.upos]);
    t.push(&[p1.upos, u, n1.upos]);
    t.push(&[p1.lower]);
    t.push(&[n1.lower]);
    t.push(&[u, p1.lower]);
    t.push(&[u, n1.lower]);
    t.push(&[u, p1.suffix[1]]);
    t.push(&[u, n1.suffix[1]]);
    t.push(&[u, n1.suffix[2]]);
    t.push(&[u, p1.class]);
    t.push(&[u, n1.class]);
    t.push(&[h1]);
    t.push(&[u, h1]);
    t.push(&[u, p1.upos, h1]);
    t.push(&[h1, h2]);
}

/// A trained FEATS classifier in memory.
#[derive(Debug, Clone)]
pub struct FeatsModel {
    pub inventory: FeatsInventory,
    pub dict: FeatsDict,
    pub weights: Weights,
    /// Accuracy (percent) on the dev file's gold tokens, when trained with one.
    pub dev_accuracy: Option<f64>,
}

/// A sentence for training: its words as the classifier sees them, and their gold classes (one
/// vector per word, `None` where nobody checked the word's FEATS).
struct FeatsSentence {
    words: Vec<FeatsWord>,
    gold: Vec<Option<Vec<u16>>>,
    /// Hash of each word's gold FEATS string.
    gold_hash: Vec<u64>,
    /// Each word's [`fixed_key`] with its gold UPOS, and its gold FEATS string's index.
    gold_key: Vec<(u64, u16)>,
}

/// Copies of `sentences` with the ambiguity classes unseen text would get (see the tagger's).
fn annotated_jackknifed(sentences: &[FeatsSentence]) -> Vec<Vec<FeatsWord>> {
    let k = CLASS_FOLDS;
    let mut out: Vec<Vec<FeatsWord>> = sentences.iter().map(|s| s.words.clone()).collect();
    for fold in 0..k {
        let dict = FeatsDict::build(
            sentences
                .iter()
                .enumerate()
                .filter(|(i, _)| i % k != fold)
                .flat_map(|(_, s)| s.words.iter().zip(&s.gold_hash).zip(&s.gold).filter(|(_, g)| g.is_some()))
                .map(|((w, &h), _)| (w.lower, h)),
        );
        for (_, words) in out.iter_mut().enumerate().filter(|(i, _)| i % k == fold) {
            dict.annotate(words);
        }
    }
    out
}

/// Trains the classifier on the gold FEATS of `gold`, reading FORM, UPOS and XPOS from the same
/// words of `input` (the tags it will be given). Words for which `checked` (sentence index,
/// 1-based word id) is false are not trained on.
pub fn train_feats(
    gold: &[Sentence],
    input: &[Sentence],
    checked: &dyn Fn(usize, u32) -> bool,
    mode: FeatsMode,
    epochs: u32,
    seed: u64,
) -> FeatsModel {
    let seen: Vec<(&str, &str)> = gold
        .iter()
        .enumerate()
        .flat_map(|(si, g)| {
            g.words()
                .enumerate()
                .filter(move |(i, _)| checked(si, *i as u32 + 1))
                .map(|(_, w)| (w.get(Column::Upos), w.get(Column::Feats)))
        })
        .collect();
    let inventory = FeatsInventory::build(mode, seen.iter().copied());
    let mut scratch = String::new();
    let sentences: Vec<FeatsSentence> = gold
        .iter()
        .zip(input)
        .enumerate()
        .map(|(si, (g, inp))| {
            let words = inp
                .words()
                .map(|w| feats_word(w.get(Column::Form), w.get(Column::Upos), w.get(Column::Xpos), &mut scratch))
                .collect();
            let gold = g
                .words()
                .enumerate()
                .map(|(i, w)| checked(si, i as u32 + 1).then(|| inventory.classes_of(w.get(Column::Feats))))
                .collect();
            let gold_hash = g.words().map(|w| hash_str(w.get(Column::Feats))).collect();
            let gold_key = g
                .words()
                .map(|w| {
                    let attrs = feats_word(w.get(Column::Form), w.get(Column::Upos), "_", &mut scratch);
                    (fixed_key(&attrs), inventory.lookup.get(w.get(Column::Feats)).copied().unwrap_or(0))
                })
                .collect();
            FeatsSentence { words, gold, gold_hash, gold_key }
        })
        .collect();
    let dict = FeatsDict::build(
        sentences
            .iter()
            .flat_map(|s| s.words.iter().zip(&s.gold_hash).zip(&s.gold).filter(|(_, g)| g.is_some()))
            .map(|((w, &h), _)| (w.lower, h)),
    )
    .with_fixed(
        sentences.iter().flat_map(|s| s.gold_key.iter().zip(&s.gold).filter(|(_, g)| g.is_some()).map(|(&k, _)| k)),
    );
    let annotated = annotated_jackknifed(&sentences);
    let classes = inventory.classes();
    let mut p = Perceptron::new(classes);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..sentences.len()).collect();
    let (mut feats, mut scores, mut predicted, mut string) =
        (Vec::new(), vec![0.0f32; classes], Vec::new(), String::new());
    for _ in 0..epochs {
        order.shuffle(&mut rng);
        for &si in &order {
            let (s, words) = (&sentences[si], &annotated[si]);
            let (mut h1, mut h2) = (START, START);
            for (i, w) in words.iter().enumerate() {
                if let Some(fixed) = dict.get(w) {
                    (h2, h1) = (h1, mix(hash_str(inventory.string(fixed))));
                    continue;
                }
                extract(words, i, h1, h2, &mut feats);
                p.score(&feats, &mut scores);
                inventory.decode(w.upos, &scores, &mut predicted);
                if let Some(gold) = &s.gold[i] {
                    update(&mut p, &inventory, w.upos, &feats, gold, &predicted, &scores);
                    p.tick();
                }
                inventory.write(&predicted, &mut string);
                (h2, h1) = (h1, mix(hash_str(&string)));
            }
        }
    }
    FeatsModel { inventory, dict, weights: p.averaged(), dev_accuracy: None }
}

/// The perceptron update of one word: whole, towards the gold string when the prediction
/// differs; factored, towards each category's gold class where the prediction differs (only
/// categories the UPOS can have, as decoding only chooses those).
fn update(
    p: &mut Perceptron,
    inventory: &FeatsInventory,
    upos: u64,
    feats: &[u64],
    gold: &[u16],
    predicted: &[u16],
    scores: &[f32],
) {
    match inventory.mode {
        FeatsMode::Whole => {
            let guess = predicted.first().copied().or_else(|| argmax(scores, |_| true).map(|c| c as u16));
            if let (Some(&g), Some(guess)) = (gold.first(), guess) {
                if g != guess {
                    p.update(feats, g as usize, guess as usize);
                }
            }
        }
        FeatsMode::Factored => {
            let Some(slots) = inventory.allowed.get(&upos) else { return };
            let mut guesses = predicted.iter();
            for (slot, &g) in slots.iter().zip(gold) {
                if slot.is_empty() {
                    continue;
                }
                let Some(&guess) = guesses.next() else { break };
                if g != guess {
                    p.update(feats, g as usize, guess as usize);
                }
            }
        }
    }
}

/// A FEATS classifier over borrowed weights, with reusable buffers.
pub struct FeatsTagger<'m, S: Scorer> {
    weights: S,
    inventory: &'m FeatsInventory,
    dict: &'m FeatsDict,
    words: Vec<FeatsWord>,
    feats: Vec<u64>,
    scores: Vec<f32>,
    classes: Vec<u16>,
    scratch: String,
    string: String,
}

impl<'m> FeatsTagger<'m, &'m Weights> {
    /// A classifier over a model in memory.
    pub fn from_model(model: &'m FeatsModel) -> Self {
        FeatsTagger::new(&model.weights, &model.inventory, &model.dict)
    }
}

impl<'m, S: Scorer> FeatsTagger<'m, S> {
    /// A classifier over its weights, inventory and ambiguity classes.
    pub fn new(weights: S, inventory: &'m FeatsInventory, dict: &'m FeatsDict) -> Self {
        let classes = weights.classes().max(inventory.classes());
        FeatsTagger {
            weights,
            inventory,
            dict,
            words: Vec::new(),
            feats: Vec::new(),
            scores: vec![0.0; classes],
            classes: Vec::new(),
            scratch: String::new(),
            string: String::new(),
        }
    }

    /// Writes the FEATS of every word of `sent`, from its FORM, UPOS and XPOS.
    pub fn tag(&mut self, sent: &mut Sentence) {
        self.words.clear();
        for w in sent.words() {
            let word = feats_word(w.get(Column::Form), w.get(Column::Upos), w.get(Column::Xpos), &mut self.scratch);
            self.words.push(word);
        }
        self.dict.annotate(&mut self.words);
        let (mut h1, mut h2) = (START, START);
        for i in 0..self.words.len() {
            let upos = self.words[i].upos;
            let feats = match (self.dict.get(&self.words[i]), self.inventory.scope(upos)) {
                (Some(fixed), _) => self.inventory.string(fixed),
                (None, Scope::Unknown) => "_",
                (None, Scope::One(class)) => self.inventory.string(class),
                (None, Scope::First(n)) => {
                    let n = n.min(self.scores.len());
                    let scores = &mut self.scores[..n];
                    extract(&self.words, i, h1, h2, &mut self.feats);
                    self.weights.score(&self.feats, scores);
                    self.inventory.decode(upos, scores, &mut self.classes);
                    self.inventory.write(&self.classes, &mut self.string);
                    &self.string
                }
            };
            sent.set_column(i + 1, Column::Feats, feats);
            (h2, h1) = (h1, mix(hash_str(feats)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(words: &[(&str, &str, &str)]) -> Sentence {
        Sentence::of_words(&words.iter().map(|&(f, u, feats)| [f, "_", u, "_", feats]).collect::<Vec<_>>())
    }

    fn data() -> Vec<Sentence> {
        let nouns = ["ház", "kert", "fal", "kapu", "tető", "ablak"];
        (0..60)
            .map(|i| {
                let n = nouns[i % 6];
                sentence(&[
                    ("a", "DET", "Definite=Def|PronType=Art"),
                    (&format!("{n}ban"), "NOUN", "Case=Ine|Number=Sing"),
                    (&format!("{n}ak"), "NOUN", "Case=Nom|Number=Plur"),
                    ("van", "VERB", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"),
                    ("és", "CCONJ", "_"),
                ])
            })
            .collect()
    }

    fn tag(model: &FeatsModel, words: &[(&str, &str)]) -> Vec<String> {
        let mut sent = sentence(&words.iter().map(|&(f, u)| (f, u, "_")).collect::<Vec<_>>());
        FeatsTagger::from_model(model).tag(&mut sent);
        sent.words().map(|w| w.get(Column::Feats).to_string()).collect()
    }

    #[test]
    fn both_modes_learn_features_from_suffixes_and_keep_them_valid_for_the_upos() {
        let data = data();
        for mode in [FeatsMode::Whole, FeatsMode::Factored] {
            let model = train_feats(&data, &data, &|_, _| true, mode, 5, 1);
            let out = tag(&model, &[("a", "DET"), ("vízban", "NOUN"), ("és", "CCONJ"), ("fák", "PROPN")]);
            assert_eq!(out[0], "Definite=Def|PronType=Art", "{mode:?}");
            assert_eq!(out[1], "Case=Ine|Number=Sing", "{mode:?}");
            assert_eq!(out[2], "_", "{mode:?}: no features were seen with CCONJ");
            assert_eq!(out[3], "_", "{mode:?}: an unseen UPOS gets none");
        }
    }

    #[test]
    fn factored_categories_are_written_in_conllu_order() {
        let data = vec![sentence(&[("x", "NOUN", "Number[psor]=Sing|Case=Nom|Number=Plur")]); 3];
        let model = train_feats(&data, &data, &|_, _| true, FeatsMode::Factored, 3, 1);
        assert_eq!(tag(&model, &[("x", "NOUN")]), ["Case=Nom|Number=Plur|Number[psor]=Sing"]);
    }

    #[test]
    fn unchecked_words_are_not_trained_on() {
        let mut data = data();
        // "kertban" shown with wrong features, never checked.
        for _ in 0..30 {
            data.push(sentence(&[("kertban", "NOUN", "Case=Nom|Number=Plur")]));
        }
        let checked = train_feats(&data, &data, &|si, _| si < 60, FeatsMode::Whole, 5, 1);
        assert_eq!(tag(&checked, &[("kertban", "NOUN")]), ["Case=Ine|Number=Sing"]);
        // The unchecked words are what would have taught otherwise.
        let all = train_feats(&data, &data, &|_, _| true, FeatsMode::Whole, 5, 1);
        assert_eq!(tag(&all, &[("kertban", "NOUN")]), ["Case=Nom|Number=Plur"]);
    }
}
