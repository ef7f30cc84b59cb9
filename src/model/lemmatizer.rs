//! Lemmatization for tokenized text: a word's lemma is an edit of its form ([`LemmaRule`]: strip
//! a prefix and a suffix of the lowercased form, add others, then case the result), one class
//! among the edits seen in training. Frequent words are looked up ([`LemmaDict`]: the edit each
//! training form had with its UPOS and FEATS); the others are classified by an averaged
//! perceptron over the form's affixes, its shape and its predicted UPOS, XPOS and FEATS, among
//! the edits that apply to the form (Chrupała 2008, Müller et al. 2015; UDPipe 1's guesser).
//!
//! A rule records the strings it strips, not only their lengths, so that it applies only where
//! the form ends (starts) as the training form did: "ies → y" is a candidate for "flies", not
//! for "flips". The edit of a pair is read around the longest common substring of the
//! lowercased form and lemma (`went → go` shares nothing: the rule strips the whole form and
//! applies only to forms ending in it). Casing is one of four ([`Casing`]), preferred in that
//! order. A pair that no casing explains (63 of en_ewt's 204,577 words, such as `mcdonald's` →
//! `McDonald`) is left out of training.
//!
//! Every word gets a lemma: the identity rule (the form, lowercased or as written) applies to
//! every form, so a word no rule explains keeps its form, in the casing the classifier prefers.
//! Multiword-token parts are words like any other; numbers and punctuation are forms whose
//! shape the classifier reads (in every treebank here their lemma is the form).
//!
//! An edit the classifier chooses for a word the dictionary does not know loses to the form
//! itself (in the casing of that edit), decided when lemmatizing from what a model file already
//! stores, so that old models benefit: where it would leave no letter or digit of the form
//! (`%s` → `%`), edit a form of one or two characters (`t` → `trillion`) or one of three whose
//! edit changes as much as it keeps ([`fits_unseen`]), or strip a one-letter prefix from a form
//! whose first two characters began no training word with that edit (`dpkg` → `thpkg`, from
//! en_ewt's typo `dat` → `that`). A URL, an e-mail address, a path or an option
//! ([`crate::model::whole_token`]) is its own lemma, as written; a curly apostrophe is read as
//! a straight one ([`crate::model::apostrophe`]). On the dev sets, from gold tokens, these
//! changed no lemma that was right (en_ewt 97.28 → 97.32, el_gdt 93.82 → 93.83, hu_szeged
//! 92.80 → 92.83); stricter rules measured worse: every edit keeping three characters
//! (hu_szeged: 42 right lemmas lost for 17 fixed; `ok`, `fő`, `ér` are stems), the stripped
//! suffix and the character before it scoring the edit alone (en_ewt −0.22, el_gdt −1.43,
//! hu_szeged −4.84), a dictionary entry found without the word's FEATS checked like an unseen
//! word (en_ewt: 22 right lemmas lost, such as `broke` → `break`, for 2 fixed).
//!
//! Speed (`perf record`, raw text of en_ewt dev ×4, one thread): the rules that apply to a word
//! not in the dictionary are checked by comparing affix bytes in place ([`LemmaRule::applies`]);
//! through `memcmp` those calls took 11% of the whole parse. The classifier scores the prefix of
//! rules (numbered by frequency) that holds the candidates: scoring the candidates alone,
//! bit-identical, made the parse 5% slower (0.876 → 0.925 s user time, 8 alternating runs).
//!
//! This module owns lemma rules, the dictionary, the classifier and its training; the weights
//! themselves are `perceptron`'s and `model_file`'s.

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::base::hash::{combine, hash_str, IdentityBuildHasher, Templates};
use crate::corpus::{Column, Sentence};
use crate::learn::perceptron::{Perceptron, Weights};
use crate::learn::scorer::Scorer;
use crate::model::apostrophe;
use crate::model::whole_token;

/// Name and version of the lemmatizer's features and rules; stored in models.
pub const LEMMATIZER_FEATURE_SET: &str = "lemma-rules+affixes/1";

/// Training words whose lowercased form and UPOS were seen at most this often train the
/// classifier: it lemmatizes the words the dictionary does not know, and rare words are like
/// them (frequent irregular words would teach it rules that unseen words almost never need).
const CLASSIFIER_MAX_COUNT: u32 = 2;

/// A rule must explain this many training words to be one of the classifier's classes. Rules
/// seen once are mostly a single word's, which the dictionary has, but not only: leaving them
/// out cost 0.2–0.3 lemma accuracy with predicted tags on hu_szeged and el_gdt dev (1.4 on
/// el_gdt's unseen forms), for a classifier twice as fast.
const CLASSIFIER_MIN_RULE_COUNT: u32 = 1;

/// Longest suffix (in characters) a feature reads.
const MAX_AFFIX: usize = 6;

/// Longest prefix (in characters) a feature reads (shorter than the form).
const MAX_PREFIX: usize = 3;

/// A form the dictionary does not know is edited only if it has more characters than this
/// ([`fits_unseen`]).
const MIN_EDITED: usize = 2;

/// Forms of at most this many characters are short: an edit of one the dictionary does not
/// know must keep more of it than it changes ([`fits_unseen`]).
const SHORT_FORM: usize = 3;

/// How a lemma's letters are cased, given the lowercased result of a rule's edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Casing {
    /// All lowercase.
    Lower,
    /// Each character uppercase where the form's character at the same position is.
    Keep,
    /// The first character uppercase, the rest lowercase.
    Title,
    /// All uppercase.
    Upper,
}

impl Casing {
    /// In the order preferred when several give the lemma.
    const ALL: [Casing; 4] = [Casing::Lower, Casing::Keep, Casing::Title, Casing::Upper];

    /// Writes `lower` cased as `self` says (against `form`) into `out`.
    fn apply(self, form: &str, lower: &str, out: &mut String) {
        out.clear();
        match self {
            Casing::Lower => out.push_str(lower),
            Casing::Upper => out.extend(lower.chars().flat_map(char::to_uppercase)),
            Casing::Title => {
                let mut chars = lower.chars();
                if let Some(c) = chars.next() {
                    out.extend(c.to_uppercase());
                }
                out.push_str(chars.as_str());
            }
            Casing::Keep => {
                let mut form_chars = form.chars();
                for c in lower.chars() {
                    if form_chars.next().is_some_and(char::is_uppercase) {
                        out.extend(c.to_uppercase());
                    } else {
                        out.push(c);
                    }
                }
            }
        }
    }
}

/// An edit from a form to its lemma: on the lowercased form, strip `strip_prefix` and
/// `strip_suffix`, add `add_prefix` and `add_suffix`, then case the result.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LemmaRule {
    pub strip_prefix: String,
    pub add_prefix: String,
    pub strip_suffix: String,
    pub add_suffix: String,
    pub casing: Casing,
}

impl LemmaRule {
    /// The rule that leaves the form as it is, lowercased: it applies to every form.
    pub fn identity() -> LemmaRule {
        LemmaRule {
            strip_prefix: String::new(),
            add_prefix: String::new(),
            strip_suffix: String::new(),
            add_suffix: String::new(),
            casing: Casing::Lower,
        }
    }

    /// The rule that turns `form` into `lemma`, if a casing explains it (`None` for an
    /// unspecified or empty lemma too).
    pub fn learn(form: &str, lemma: &str) -> Option<LemmaRule> {
        if lemma.is_empty() || lemma == "_" && form != "_" {
            return None;
        }
        let (f, l) = (form.to_lowercase(), lemma.to_lowercase());
        let fc: Vec<(usize, char)> = f.char_indices().collect();
        let lc: Vec<(usize, char)> = l.char_indices().collect();
        // Longest common substring, in characters (the first of the longest).
        let (mut best, mut fi, mut li) = (0, 0, 0);
        for i in 0..fc.len() {
            for j in 0..lc.len() {
                let k = fc[i..].iter().zip(&lc[j..]).take_while(|(a, b)| a.1 == b.1).count();
                if k > best {
                    (best, fi, li) = (k, i, j);
                }
            }
        }
        let byte = |chars: &[(usize, char)], s: &str, i: usize| chars.get(i).map_or(s.len(), |&(b, _)| b);
        let (f_start, f_end) = (byte(&fc, &f, fi), byte(&fc, &f, fi + best));
        let (l_start, l_end) = (byte(&lc, &l, li), byte(&lc, &l, li + best));
        let mut rule = if best == 0 {
            LemmaRule { strip_suffix: f.clone(), add_suffix: l.clone(), ..LemmaRule::identity() }
        } else {
            LemmaRule {
                strip_prefix: f[..f_start].to_string(),
                add_prefix: l[..l_start].to_string(),
                strip_suffix: f[f_end..].to_string(),
                add_suffix: l[l_end..].to_string(),
                casing: Casing::Lower,
            }
        };
        let mut out = String::new();
        for casing in Casing::ALL {
            rule.casing = casing;
            if rule.apply(form, &f, &mut out) && out == lemma {
                return Some(rule);
            }
        }
        None
    }

    /// Whether the rule applies to a form lowercased as `lower`: the form starts and ends with
    /// what it strips, and something is left.
    pub fn applies(&self, lower: &str) -> bool {
        let (p, s) = (self.strip_prefix.len(), self.strip_suffix.len());
        let (form, prefix, suffix) = (lower.as_bytes(), self.strip_prefix.as_bytes(), self.strip_suffix.as_bytes());
        p + s <= lower.len()
            && bytes_equal(&form[..p], prefix)
            && bytes_equal(&form[form.len() - s..], suffix)
            && (p + s < lower.len() || !self.add_prefix.is_empty() || !self.add_suffix.is_empty())
    }

    /// Writes the lemma of `form` (lowercased: `lower`) into `out`; false, leaving `out`
    /// unspecified, if the rule does not apply ([`Self::applies`]).
    pub fn apply(&self, form: &str, lower: &str, out: &mut String) -> bool {
        if !self.applies(lower) {
            return false;
        }
        let middle = &lower[self.strip_prefix.len()..lower.len() - self.strip_suffix.len()];
        let edited = [self.add_prefix.as_str(), middle, self.add_suffix.as_str()];
        match self.casing {
            Casing::Lower => {
                out.clear();
                edited.iter().for_each(|part| out.push_str(part));
            }
            casing => casing.apply(form, &edited.concat(), out),
        }
        true
    }
}

/// Whether `a` and `b` hold the same bytes, compared one by one: affixes are a few bytes, and
/// `==`, `starts_with` and `ends_with` call `memcmp` for them (see the module doc).
#[inline]
fn bytes_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The dictionary keys of a word, most specific first: its form with its UPOS and FEATS, and
/// with its UPOS alone; then the same with its form lowercased. The form as written comes first
/// because casing is part of the rule: lowercased, en_ewt's "I" (kept as written) and "i"
/// (title-cased to "I") would share one entry, the first's, and every "i" would stay "i" (98
/// of en_ewt dev's lemma errors).
fn dict_keys(form: &str, lower: &str, upos: &str, feats: &str) -> [u64; 4] {
    let (upos, feats) = (hash_str(upos), hash_str(feats));
    let exact = combine(combine(hash_str(form), 0x4558_4143_5400), upos);
    let folded = combine(hash_str(lower), upos);
    let without = 0x4c45_4d4d_4100;
    [combine(exact, feats), combine(exact, without), combine(folded, feats), combine(folded, without)]
}

/// The rule each training word had, by form, UPOS and FEATS (and by form and UPOS alone, and the
/// same with the form lowercased): the most frequent one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LemmaDict {
    entries: HashMap<u64, u16, IdentityBuildHasher>,
}

impl LemmaDict {
    /// The rule for a word, if the dictionary has one.
    pub fn get(&self, form: &str, lower: &str, upos: &str, feats: &str) -> Option<u16> {
        dict_keys(form, lower, upos, feats).iter().find_map(|k| self.entries.get(k)).copied()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The rules of a lemmatizer, indexed by the suffix they strip.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSet {
    rules: Vec<LemmaRule>,
    /// Rules `0..classified`, the most frequent, are the classifier's classes.
    classified: u16,
    #[serde(skip)]
    lookup: HashMap<LemmaRule, u16>,
    /// Stripped suffix → the rules that strip it.
    #[serde(skip)]
    by_suffix: HashMap<u64, Vec<u16>, IdentityBuildHasher>,
    #[serde(skip)]
    longest_suffix: usize,
}

impl RuleSet {
    /// A set holding the identity rule (index 0).
    pub fn new() -> RuleSet {
        let mut set = RuleSet::default();
        set.intern(LemmaRule::identity());
        set
    }

    /// The index of `rule`, adding it if new.
    pub fn intern(&mut self, rule: LemmaRule) -> u16 {
        if let Some(&i) = self.lookup.get(&rule) {
            return i;
        }
        let i = self.rules.len() as u16;
        self.add_to_index(&rule, i);
        self.lookup.insert(rule.clone(), i);
        self.rules.push(rule);
        i
    }

    fn add_to_index(&mut self, rule: &LemmaRule, i: u16) {
        self.longest_suffix = self.longest_suffix.max(rule.strip_suffix.chars().count());
        self.by_suffix.entry(hash_str(&rule.strip_suffix)).or_default().push(i);
    }

    /// Rebuilds the indexes after deserialisation.
    pub fn rebuild_index(&mut self) {
        let rules = std::mem::take(&mut self.rules);
        self.lookup.clear();
        self.by_suffix.clear();
        self.longest_suffix = 0;
        for (i, r) in rules.iter().enumerate() {
            self.add_to_index(r, i as u16);
            self.lookup.insert(r.clone(), i as u16);
        }
        self.rules = rules;
    }

    /// Rule `i`.
    pub fn get(&self, i: u16) -> &LemmaRule {
        &self.rules[i as usize]
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// True if there is no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The set of `rules` (the identity rule first), the first `classified` of them classified.
    fn of(rules: Vec<LemmaRule>, classified: u16) -> RuleSet {
        let mut set = RuleSet { rules, classified, ..RuleSet::default() };
        set.rebuild_index();
        set
    }

    /// The number of rules the classifier chooses among (the first ones).
    pub fn classified(&self) -> usize {
        self.classified as usize
    }

    /// Appends to `out` the rules whose stripped suffix `lower` ends with (its prefix is checked
    /// when a rule is applied).
    fn candidates(&self, lower: &str, out: &mut Vec<u16>) {
        out.clear();
        let starts = lower.char_indices().map(|(b, _)| b).rev().take(self.longest_suffix);
        for start in std::iter::once(lower.len()).chain(starts) {
            if let Some(rules) = self.by_suffix.get(&hash_str(&lower[start..])) {
                out.extend_from_slice(rules);
            }
        }
    }
}

/// A word's attributes as the lemmatizer reads them.
pub struct LemmaInput<'a> {
    pub form: &'a str,
    pub upos: &'a str,
    pub xpos: &'a str,
    pub feats: &'a str,
    /// First word of its sentence.
    pub first: bool,
}

/// The character class of `c`, for word shapes.
fn char_class(c: char) -> u8 {
    if c.is_uppercase() {
        b'X'
    } else if c.is_lowercase() {
        b'x'
    } else if c.is_numeric() {
        b'd'
    } else {
        b'.'
    }
}

/// Writes the classifier's features of a word (lowercased form `lower`) into `out`; returns
/// where its prefix features start in `out` (the prefix of `k + 1` characters at `2 * k`).
fn extract(w: &LemmaInput, lower: &str, out: &mut Vec<u64>) -> usize {
    out.clear();
    let mut t = Templates::new(out, 0x4c45_4d4d);
    let (upos, xpos, feats) = (hash_str(w.upos), hash_str(w.xpos), hash_str(w.feats));
    // Shape: the classes of the first character, of the rest, and whether it has a digit.
    let mut chars = w.form.chars();
    let first = chars.next().map_or(0, char_class);
    let rest = chars.fold(0u64, |acc, c| acc | 1 << (char_class(c) & 7));
    let shape = combine(u64::from(first), rest);
    t.push(&[]);
    t.push(&[upos]);
    t.push(&[upos, xpos]);
    t.push(&[upos, feats]);
    t.push(&[hash_str(lower)]);
    t.push(&[upos, hash_str(lower)]);
    t.push(&[shape]);
    t.push(&[shape, upos, u64::from(w.first)]);
    let ends = lower.char_indices().map(|(b, _)| b).rev().take(MAX_AFFIX);
    for (k, start) in ends.enumerate() {
        let suffix = hash_str(&lower[start..]);
        t.push(&[k as u64, suffix]);
        t.push(&[k as u64, suffix, upos]);
        if k < 4 {
            t.push(&[k as u64, suffix, upos, feats]);
        }
    }
    let prefixes = t.pushed();
    let starts = lower.char_indices().map(|(b, _)| b).skip(1).take(MAX_PREFIX);
    for (k, end) in starts.enumerate() {
        let prefix = hash_str(&lower[..end]);
        t.push(&[k as u64, prefix]);
        t.push(&[k as u64, prefix, upos]);
    }
    if w.feats != "_" {
        for pair in w.feats.split('|') {
            t.push(&[upos, hash_str(pair)]);
        }
    }
    prefixes
}

/// A trained lemmatizer in memory.
#[derive(Debug, Clone)]
pub struct LemmatizerModel {
    pub rules: RuleSet,
    pub dict: LemmaDict,
    pub weights: Weights,
    /// Accuracy (percent) on the dev file's gold tokens, when trained with one.
    pub dev_accuracy: Option<f64>,
}

/// A word of a lemmatizer's training data: what the lemmatizer is given, and the rule of its
/// gold lemma (`None`: no rule explains it, or nobody checked it).
struct Example {
    form: String,
    upos: String,
    xpos: String,
    feats: String,
    first: bool,
    rule: Option<u16>,
    /// How often its lowercased form and UPOS were seen in training.
    count: u32,
}

/// Trains a lemmatizer on the gold lemmas of `gold`, reading the UPOS, XPOS and FEATS of the
/// same words in `input` (the predictions it will be given; `gold` itself for gold tags). Words
/// whose gold lemma is `_` are left out, and so are the words of a sentence for which `checked`
/// says no lemma was checked (1-based word ids; corrections that checked some lemmas only).
pub fn train_lemmatizer(
    gold: &[Sentence],
    input: &[Sentence],
    checked: &dyn Fn(usize, u32) -> bool,
    epochs: u32,
    seed: u64,
) -> LemmatizerModel {
    let mut rules = RuleSet::new();
    let mut examples = Vec::new();
    let mut counts: HashMap<u64, u32> = HashMap::new();
    let mut dict_counts: HashMap<u64, HashMap<u16, u32>> = HashMap::new();
    for (si, (g, inp)) in gold.iter().zip(input).enumerate() {
        for (i, (gw, iw)) in g.words().zip(inp.words()).enumerate() {
            let form = apostrophe::read_form(gw.get(Column::Form));
            let form = form.as_ref();
            let rule = if checked(si, i as u32 + 1) {
                LemmaRule::learn(form, &apostrophe::read_form(gw.get(Column::Lemma))).map(|r| rules.intern(r))
            } else {
                None
            };
            let lower = form.to_lowercase();
            if let Some(r) = rule {
                let (gu, gf) = (gw.get(Column::Upos), gw.get(Column::Feats));
                let keys = dict_keys(form, &lower, gu, gf);
                for key in keys {
                    *dict_counts.entry(key).or_default().entry(r).or_default() += 1;
                }
                *counts.entry(keys[3]).or_default() += 1;
            }
            examples.push(Example {
                form: form.to_string(),
                upos: iw.get(Column::Upos).to_string(),
                xpos: iw.get(Column::Xpos).to_string(),
                feats: iw.get(Column::Feats).to_string(),
                first: i == 0,
                rule,
                count: 0,
            });
        }
    }
    for e in &mut examples {
        e.count = counts.get(&dict_keys(&e.form, &e.form.to_lowercase(), &e.upos, "_")[3]).copied().unwrap_or(0);
    }
    // Rules renumbered by frequency, the identity first: the classifier's classes are a prefix.
    let mut frequency = vec![0u32; rules.len()];
    for r in examples.iter().filter_map(|e| e.rule) {
        frequency[r as usize] += 1;
    }
    let mut order: Vec<u16> = (1..rules.len() as u16).collect();
    order.sort_by_key(|&r| (std::cmp::Reverse(frequency[r as usize]), r));
    order.insert(0, 0);
    let mut renumbered = vec![0u16; rules.len()];
    for (new, &old) in order.iter().enumerate() {
        renumbered[old as usize] = new as u16;
    }
    let classified = 1 + order[1..].iter().filter(|&&r| frequency[r as usize] >= CLASSIFIER_MIN_RULE_COUNT).count();
    let rules = RuleSet::of(order.iter().map(|&r| rules.get(r).clone()).collect(), classified as u16);
    for e in &mut examples {
        e.rule = e.rule.map(|r| renumbered[r as usize]);
    }
    let entries = dict_counts
        .into_iter()
        .filter_map(|(key, rules)| {
            rules
                .into_iter()
                .max_by_key(|&(r, c)| (c, std::cmp::Reverse(renumbered[r as usize])))
                .map(|(r, _)| (key, renumbered[r as usize]))
        })
        .collect();
    let dict = LemmaDict { entries };
    let classes = rules.classified();
    let mut p = Perceptron::new(classes);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..examples.len())
        .filter(|&i| {
            examples[i].rule.is_some_and(|r| (r as usize) < classes) && examples[i].count <= CLASSIFIER_MAX_COUNT
        })
        .collect();
    let (mut feats, mut scores, mut candidates) = (Vec::new(), vec![0.0f32; classes], Vec::new());
    for _ in 0..epochs {
        order.shuffle(&mut rng);
        for &i in &order {
            let e = &examples[i];
            let Some(gold) = e.rule else { continue };
            let w = LemmaInput { form: &e.form, upos: &e.upos, xpos: &e.xpos, feats: &e.feats, first: e.first };
            let lower = e.form.to_lowercase();
            extract(&w, &lower, &mut feats);
            p.score(&feats, &mut scores);
            applicable(&rules, &lower, &mut candidates);
            let guess = best_rule(&candidates, &scores);
            if guess != gold {
                p.update(&feats, gold as usize, guess as usize);
            }
            p.tick();
        }
    }
    LemmatizerModel { rules, dict, weights: p.averaged(), dev_accuracy: None }
}

/// Fills `out` with the classifier's rules that apply to a form lowercased as `lower`.
fn applicable(rules: &RuleSet, lower: &str, out: &mut Vec<u16>) {
    rules.candidates(lower, out);
    out.retain(|&r| r < rules.classified && rules.get(r).applies(lower));
}

/// Whether `rule` (which applies to `lower`) may lemmatize a word that the dictionary does not
/// know (an unseen form, or one seen with other tags): an edit that changes the form must
/// keep a letter or a digit of it (`%s` is not the plural of `%`), a form of one or two
/// characters is not edited at all (en_ewt's `t` → `trillion`, `r2` → `b2`), and one of three
/// whose edit changes as many characters as it keeps, and no digit, neither (`sok` → `s`).
/// Casing is not an edit: the identity in any casing always fits.
pub fn fits_unseen(rule: &LemmaRule, lower: &str) -> bool {
    let changed = [&rule.strip_prefix, &rule.strip_suffix, &rule.add_prefix, &rule.add_suffix]
        .iter()
        .map(|s| s.chars().count())
        .sum::<usize>();
    if changed == 0 {
        return true;
    }
    let Some(kept) = lower.get(rule.strip_prefix.len()..lower.len().saturating_sub(rule.strip_suffix.len())) else {
        return false;
    };
    let (kept_chars, form_chars) = (kept.chars().count(), lower.chars().count());
    let keeps_digit = kept.chars().any(|c| c.is_numeric());
    kept.chars().any(char::is_alphanumeric)
        && form_chars > MIN_EDITED
        && (form_chars > SHORT_FORM || changed < kept_chars || keeps_digit)
}

/// The best-scoring rule of `candidates` (the identity rule if there is none).
fn best_rule(candidates: &[u16], scores: &[f32]) -> u16 {
    let mut best: Option<(u16, f32)> = None;
    for &r in candidates {
        let s = scores.get(r as usize).copied().unwrap_or(0.0);
        if best.is_none_or(|(b, bs)| s > bs || s == bs && r < b) {
            best = Some((r, s));
        }
    }
    best.map_or(0, |(r, _)| r)
}

/// What [`Lemmatizer::rule_for`] chose: a rule, or the form itself in a casing.
enum Chosen {
    Rule(u16),
    Form(Casing),
}

/// A lemmatizer over borrowed weights, with reusable buffers.
pub struct Lemmatizer<'m, S: Scorer> {
    weights: S,
    rules: &'m RuleSet,
    dict: &'m LemmaDict,
    feats: Vec<u64>,
    scores: Vec<f32>,
    candidates: Vec<u16>,
    lower: String,
    lemma: String,
}

impl<'m> Lemmatizer<'m, &'m Weights> {
    /// A lemmatizer over a model in memory.
    pub fn from_model(model: &'m LemmatizerModel) -> Self {
        Lemmatizer::new(&model.weights, &model.rules, &model.dict)
    }
}

impl<'m, S: Scorer> Lemmatizer<'m, S> {
    /// A lemmatizer over its weights, rules and dictionary.
    pub fn new(weights: S, rules: &'m RuleSet, dict: &'m LemmaDict) -> Self {
        let classes = weights.classes();
        Lemmatizer {
            weights,
            rules,
            dict,
            feats: Vec::new(),
            scores: vec![0.0; classes],
            candidates: Vec::new(),
            lower: String::new(),
            lemma: String::new(),
        }
    }

    /// The lemma of one word (a curly apostrophe in its form read as a straight one). A URL,
    /// an e-mail address, a path or an option ([`whole_token`]) is its own lemma, as written.
    pub fn lemma_of(&mut self, w: &LemmaInput) -> &str {
        if whole_token::is_whole(w.form) {
            self.lemma.clear();
            self.lemma.push_str(w.form);
            return &self.lemma;
        }
        let form = apostrophe::read_form(w.form);
        let w = &LemmaInput { form: &form, ..*w };
        self.lower.clear();
        self.lower.extend(w.form.chars().flat_map(char::to_lowercase));
        let rule = match self.rule_for(w) {
            Chosen::Rule(r) => self.rules.get(r),
            Chosen::Form(casing) => &LemmaRule { casing, ..LemmaRule::identity() },
        };
        if !rule.apply(w.form, &self.lower, &mut self.lemma) {
            self.lemma.clear();
            self.lemma.push_str(w.form);
        }
        &self.lemma
    }

    /// The edit of a word (`self.lower` holds its form lowercased): its dictionary entry, or
    /// the classifier's best among the rules that apply, if it fits a word the dictionary does
    /// not know ([`fits_unseen`]) and the form begins as the training words of a rule that
    /// strips a prefix did; otherwise the form itself, cased as that best rule would.
    fn rule_for(&mut self, w: &LemmaInput) -> Chosen {
        let (rules, lower) = (self.rules, self.lower.as_str());
        if let Some(r) = self.dict.get(w.form, lower, w.upos, w.feats).filter(|&r| rules.get(r).applies(lower)) {
            return Chosen::Rule(r);
        }
        applicable(rules, lower, &mut self.candidates);
        // One rule applies (the identity, often): nothing to choose.
        let mut prefixes = None;
        if self.candidates.len() > 1 {
            // Rules are numbered by frequency: only the prefix holding the candidates.
            let n = self.candidates.iter().max().map_or(0, |&r| r as usize + 1).min(self.scores.len());
            prefixes = Some(extract(w, lower, &mut self.feats));
            self.weights.score(&self.feats, &mut self.scores[..n]);
        }
        let best = best_rule(&self.candidates, &self.scores);
        let rule = rules.get(best);
        let (fits, chars) = (fits_unseen(rule, lower), lower.chars().count());
        if fits && prefixes.is_none_or(|at| self.prefix_learned(best, chars, at)) {
            Chosen::Rule(best)
        } else {
            Chosen::Form(rule.casing)
        }
    }

    /// Whether rule `r`, if it strips a one-character prefix, was learned for forms that begin
    /// as this one does: the classifier's feature of the form's first two characters scores
    /// `r` above nothing. `dpkg` → `thpkg`, learned from en_ewt's `dat` → `that`, fails: no
    /// training word with that edit began with `dp`. Longer prefixes are not checked: they are
    /// Hungarian's verb particles (`meg`, `el`), whose feature need not carry the rule alone.
    /// `chars`: the form's length; `prefixes`: where [`extract`] wrote its prefix features into
    /// `self.feats`.
    fn prefix_learned(&mut self, r: u16, chars: usize, prefixes: usize) -> bool {
        if self.rules.get(r).strip_prefix.chars().count() != 1 {
            return true;
        }
        // The prefix of two characters is the second prefix feature.
        let Some(&feature) = self.feats.get(prefixes + 2).filter(|_| chars > 2) else {
            return true;
        };
        let scores = &mut self.scores[..r as usize + 1];
        self.weights.score(&[feature], scores);
        scores[r as usize] > 0.0
    }

    /// Writes the LEMMA of every word of `sent`, from its FORM, UPOS, XPOS and FEATS.
    pub fn lemmatize(&mut self, sent: &mut Sentence) {
        for id in 1..=sent.len() {
            let w = sent.word(id);
            let input = LemmaInput {
                form: w.get(Column::Form),
                upos: w.get(Column::Upos),
                xpos: w.get(Column::Xpos),
                feats: w.get(Column::Feats),
                first: id == 1,
            };
            self.lemma_of(&input);
            sent.set_column(id, Column::Lemma, &self.lemma);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lemma_of(rule: &LemmaRule, form: &str) -> Option<String> {
        let mut out = String::new();
        rule.apply(form, &form.to_lowercase(), &mut out).then_some(out)
    }

    #[test]
    fn rules_reproduce_the_pairs_they_were_learned_from() {
        for (form, lemma) in [
            ("flies", "fly"),
            ("Dogs", "dog"),
            ("iPhones", "iPhone"),
            ("pittsburgh", "Pittsburgh"),
            ("NASA", "NASA"),
            ("went", "go"),
            ("legnagyobb", "nagy"),
            ("ανθρώπου", "άνθρωπος"),
            ("házban", "ház"),
            (".", "."),
            ("1990", "1990"),
        ] {
            let rule = LemmaRule::learn(form, lemma).unwrap_or_else(|| panic!("{form} → {lemma}"));
            assert_eq!(lemma_of(&rule, form).as_deref(), Some(lemma), "{rule:?}");
        }
        assert_eq!(LemmaRule::learn("dogs", "_"), None);
        assert_eq!(LemmaRule::learn("mcdonald's", "McDonald"), None, "no casing explains it");
    }

    #[test]
    fn a_rule_applies_only_where_the_form_has_what_it_strips() {
        let rule = LemmaRule::learn("flies", "fly").unwrap();
        assert_eq!(rule.strip_suffix, "ies");
        assert_eq!(lemma_of(&rule, "cries").as_deref(), Some("cry"));
        assert_eq!(lemma_of(&rule, "flips"), None);
        assert_eq!(lemma_of(&rule, "ies"), Some("y".to_string()));
        let strip = LemmaRule::learn("házban", "ház").unwrap();
        assert_eq!(lemma_of(&strip, "ban"), None, "nothing would be left");
        let suppletive = LemmaRule::learn("went", "go").unwrap();
        assert_eq!(lemma_of(&suppletive, "underwent").as_deref(), Some("undergo"));
        assert_eq!(lemma_of(&suppletive, "want"), None);
    }

    #[test]
    fn casing_is_preferred_lower_then_kept_then_title() {
        assert_eq!(LemmaRule::learn("dogs", "dog").unwrap().casing, Casing::Lower);
        assert_eq!(LemmaRule::learn("The", "the").unwrap().casing, Casing::Lower);
        assert_eq!(LemmaRule::learn("iPhone", "iPhone").unwrap().casing, Casing::Keep);
        assert_eq!(LemmaRule::learn("paris", "Paris").unwrap().casing, Casing::Title);
        assert_eq!(LemmaRule::learn("usa", "USA").unwrap().casing, Casing::Upper);
    }

    fn sentence(words: &[(&str, &str, &str)]) -> Sentence {
        Sentence::of_words(&words.iter().map(|&(f, l, u)| [f, l, u, "_", "_"]).collect::<Vec<_>>())
    }

    #[test]
    fn unseen_words_get_the_rules_of_words_that_end_alike() {
        let mut data = Vec::new();
        for (i, stem) in ["walk", "talk", "jump", "play", "kick", "push", "pull", "melt"].iter().enumerate() {
            data.push(sentence(&[
                ("they", "they", "PRON"),
                (&format!("{stem}ed"), stem, "VERB"),
                (&format!("{stem}s"), stem, "NOUN"),
                (["is", "was"][i % 2], "be", "AUX"),
            ]));
        }
        let model = train_lemmatizer(&data, &data, &|_, _| true, 10, 1);
        let mut lemmatizer = Lemmatizer::from_model(&model);
        let mut lemma = |form: &str, upos: &str| {
            lemmatizer.lemma_of(&LemmaInput { form, upos, xpos: "_", feats: "_", first: false }).to_string()
        };
        assert_eq!(lemma("cooked", "VERB"), "cook");
        assert_eq!(lemma("hats", "NOUN"), "hat");
        assert_eq!(lemma("was", "AUX"), "be", "from the dictionary");
        assert_eq!(lemma("Walked", "VERB"), "walk", "the dictionary is read lowercased");
        // No rule explains an unseen word ending in nothing known: it keeps its form.
        assert_eq!(lemma("xyzzy", "X"), "xyzzy");
    }

    /// A lemmatizer trained on plural nouns (`cats` → `cat`), the typos `dat` → `that` and
    /// `dis` → `this` (as en_ewt has them) and words that are their own lemma.
    fn typo_and_plural_model() -> LemmatizerModel {
        let mut data = Vec::new();
        for stem in ["cat", "dog", "hat", "cup", "pen", "map", "box", "key", "toy", "day"] {
            data.push(sentence(&[(&format!("{stem}s"), stem, "NOUN"), ("run", "run", "VERB")]));
        }
        for (typo, word) in [("dat", "that"), ("dis", "this"), ("dese", "these"), ("dose", "those")] {
            data.push(sentence(&[(typo, word, "DET"), ("tree", "tree", "NOUN")]));
        }
        for own in ["apt", "grep", "sed", "perl", "zsh", "vim"] {
            data.push(sentence(&[(own, own, "DET"), (own, own, "NOUN")]));
        }
        train_lemmatizer(&data, &data, &|_, _| true, 10, 1)
    }

    fn lemma_with(model: &LemmatizerModel, form: &str, upos: &str) -> String {
        let mut lemmatizer = Lemmatizer::from_model(model);
        lemmatizer.lemma_of(&LemmaInput { form, upos, xpos: "_", feats: "_", first: false }).to_string()
    }

    #[test]
    fn an_unseen_form_keeps_its_form_where_an_edit_would_leave_no_letter_or_rewrite_two_characters() {
        let model = typo_and_plural_model();
        assert_eq!(lemma_with(&model, "mugs", "NOUN"), "mug", "the plural edit still applies");
        assert_eq!(lemma_with(&model, "%s", "NOUN"), "%s", "no letter would be left");
        assert_eq!(lemma_with(&model, "$s", "NOUN"), "$s");
        assert_eq!(lemma_with(&model, "xs", "NOUN"), "xs", "a form of two characters is not edited");
        assert_eq!(lemma_with(&model, "ds", "DET"), "ds");
    }

    #[test]
    fn a_one_letter_prefix_edit_applies_only_to_forms_that_begin_as_its_training_words() {
        let model = typo_and_plural_model();
        assert_eq!(lemma_with(&model, "dpkg", "DET"), "dpkg", "no training word began with `dp`");
        assert_eq!(lemma_with(&model, "dhcp", "DET"), "dhcp");
        assert_eq!(lemma_with(&model, "Dpkg", "DET"), "dpkg", "cased as the edit would have been");
    }

    #[test]
    fn a_url_an_address_a_path_or_an_option_is_its_own_lemma_as_written() {
        let model = typo_and_plural_model();
        for form in ["/usr/share/docs", "~/.config/maps", "https://x.org/Keys", "jean-pierre@x-y.org", "--keys", "-s"] {
            assert_eq!(lemma_with(&model, form, "NOUN"), form);
        }
    }

    #[test]
    fn a_curly_apostrophe_is_lemmatized_as_a_straight_one() {
        let data: Vec<Sentence> = (0..5)
            .map(|_| {
                sentence(&[
                    ("it", "it", "PRON"),
                    ("'s", "be", "AUX"),
                    ("n't", "not", "PART"),
                    ("Bob", "Bob", "PROPN"),
                    ("'s", "'s", "PART"),
                ])
            })
            .chain(["cats", "dogs"].map(|f| sentence(&[(f, &f[..3], "NOUN")])))
            .collect();
        let model = train_lemmatizer(&data, &data, &|_, _| true, 5, 1);
        assert_eq!(lemma_with(&model, "’s", "AUX"), "be");
        assert_eq!(lemma_with(&model, "’s", "PART"), "'s");
        assert_eq!(lemma_with(&model, "n’t", "PART"), "not");
    }

    #[test]
    fn unchecked_lemmas_are_not_trained_on() {
        let mut data: Vec<Sentence> = ["zork", "flurb", "snark", "quux", "frob", "glorp"]
            .iter()
            .map(|stem| sentence(&[(&format!("{stem}s"), stem, "NOUN")]))
            .collect();
        data.push(sentence(&[("blicks", "WRONG", "NOUN")]));
        let lemma = |checked: &dyn Fn(usize, u32) -> bool| {
            let model = train_lemmatizer(&data, &data, checked, 5, 1);
            let mut lemmatizer = Lemmatizer::from_model(&model);
            lemmatizer
                .lemma_of(&LemmaInput { form: "blicks", upos: "NOUN", xpos: "_", feats: "_", first: false })
                .to_string()
        };
        assert_eq!(lemma(&|si, _| si < 6), "blick");
        assert_eq!(lemma(&|_, _| true), "WRONG", "checked, the word is learned");
    }
}
