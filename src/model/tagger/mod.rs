//! Part-of-speech tagging, so that tokenized text can be parsed: a greedy averaged-perceptron
//! tagger (Collins 2002) predicting UPOS and XPOS together as one joint tag, left to right,
//! each decision seeing the two previous predicted tags. A first pass runs right to left; the
//! second, left to right, sees besides its own previous tags the first pass's tags of the next
//! two words (right context, which a greedy left-to-right tagger lacks). The second pass is
//! trained on jackknifed first-pass tags, so that it learns from tags as noisy as it will get.
//!
//! Partial supervision ([`TagSentence::partial`], for corrections that fixed some words' tags):
//! such a sentence is tagged as any other, its predictions being the history as always, but
//! only the checked words update the weights and count in the tag dictionary and ambiguity
//! classes; a word whose UPOS alone was checked trains towards the best-scoring tag with it.
//!
//! Features: the word, its lowercase form, prefixes and suffixes of up to 4 characters, its
//! shape, the words at ±1 and ±2, suffixes of the neighbours, the previous tag and the previous
//! two tags, and the ambiguity classes (the set of tags seen in training) of the word and of its
//! neighbours at -1, +1 and +2. Training words get their classes by 10-fold jackknifing, so that
//! rare words lack a class as often as in unseen text. Frequent words seen with one tag almost always (a tag dictionary) get that tag
//! without scoring (as in Honnibal's perceptron tagger). Word attributes are hashed once per
//! sentence; extraction writes into a reused buffer. This module owns tagging and its
//! training; the weights themselves are `perceptron`'s and `model_file`'s.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::base::hash::Templates;
use crate::corpus::{Column, Sentence};
use crate::learn::perceptron::{argmax, Perceptron, Weights};
use crate::learn::scorer::Scorer;

mod lexicon;

pub use lexicon::{word_attrs, TagDict, TagSet, WordAttrs};
use lexicon::{PAD, UNKNOWN_CLASS};

/// Name and version of the tagger's feature templates; stored in models.
pub const TAGGER_FEATURE_SET: &str = "collins-2002+shape+ambiguity/2";

/// Folds that give the training words the ambiguity classes they would have in unseen text.
const CLASS_FOLDS: usize = 10;

/// Tag history value before the first word.
const START: u64 = 0x5747_0000_0000_0001;

/// Folds used to give the second pass first-pass tags of its own training data.
const SECOND_PASS_FOLDS: usize = 4;

/// Writes the features of word `i` given the two previous predicted tags (and, in the second
/// pass, the first pass's tags of all words) into `out`.
fn extract(words: &[WordAttrs], i: usize, prev: u64, prev2: u64, right: Option<&[u16]>, out: &mut Vec<u64>) {
    out.clear();
    let at = |j: isize| -> &WordAttrs {
        if j < 0 || j as usize >= words.len() {
            &PAD
        } else {
            &words[j as usize]
        }
    };
    let i = i as isize;
    let w = at(i);
    let mut templates = Templates::new(out, 0x7a66);
    let mut push = |vals: &[u64]| templates.push(vals);
    push(&[]);
    push(&[w.form]);
    push(&[w.lower]);
    for k in 0..4 {
        push(&[w.prefix[k]]);
        push(&[w.suffix[k]]);
    }
    push(&[w.shape]);
    push(&[u64::from(i == 0), w.shape]);
    push(&[at(i - 1).lower]);
    push(&[at(i - 2).lower]);
    push(&[at(i + 1).lower]);
    push(&[at(i + 2).lower]);
    push(&[at(i - 1).suffix[2]]);
    push(&[at(i + 1).suffix[2]]);
    push(&[at(i + 1).shape]);
    push(&[at(i - 1).lower, w.lower]);
    push(&[w.lower, at(i + 1).lower]);
    push(&[prev]);
    push(&[prev2, prev]);
    push(&[prev, w.lower]);
    push(&[prev, w.suffix[2]]);
    push(&[prev, at(i + 1).lower]);
    push(&[prev, w.shape]);
    push(&[prev, w.suffix[0]]);
    push(&[at(i - 1).shape]);
    push(&[at(i + 2).suffix[2]]);
    push(&[at(i + 1).suffix[0], w.lower]);
    push(&[w.len]);
    push(&[at(i - 1).lower, at(i + 1).lower]);
    push(&[at(i - 1).suffix[1]]);
    push(&[at(i + 1).prefix[1]]);
    push(&[at(i + 1).shape, w.shape]);
    push(&[prev2, prev, w.lower]);
    push(&[at(i - 1).lower, w.suffix[2]]);
    push(&[w.class]);
    push(&[at(i - 1).class]);
    push(&[at(i + 1).class]);
    push(&[at(i + 2).class]);
    push(&[prev, w.class]);
    push(&[w.class, at(i + 1).class]);
    push(&[at(i - 1).class, w.class]);
    if let Some(first) = right {
        let tag_at = |j: isize| history((j >= 0).then(|| first.get(j as usize).copied()).flatten()) ^ 0x5249_4748;
        let (r1, r2) = (tag_at(i + 1), tag_at(i + 2));
        push(&[r1]);
        push(&[r1, r2]);
        push(&[prev, r1]);
        push(&[r1, w.lower]);
        push(&[r1, w.suffix[2]]);
        push(&[tag_at(i)]);
        push(&[r1, w.class]);
    }
}

fn history(tag: Option<u16>) -> u64 {
    tag.map_or(START, |t| u64::from(t) + 1)
}

/// What is known of one word's tag in a training sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gold {
    /// Its joint tag is right.
    Tag,
    /// Only its UPOS is: any joint tag with that UPOS is right (its tag is one of them).
    Upos,
    /// Nobody checked it: its tag is what the annotator was shown, never trained on.
    Unchecked,
}

/// A sentence for tagger training: word attributes and tags, gold throughout or (partial
/// supervision, from corrections that fixed some words' tags) on some words only.
#[derive(Debug, Clone)]
pub struct TagSentence {
    pub words: Vec<WordAttrs>,
    pub tags: Vec<u16>,
    /// Per word, what its tag is worth; `None`: every tag is gold ([`Gold::Tag`]).
    pub gold: Option<Vec<Gold>>,
}

impl TagSentence {
    /// The sentence read right to left.
    fn reversed(&self) -> TagSentence {
        TagSentence {
            words: self.words.iter().rev().copied().collect(),
            tags: self.tags.iter().rev().copied().collect(),
            gold: self.gold.as_ref().map(|g| g.iter().rev().copied().collect()),
        }
    }

    /// What is known of word `i`'s tag.
    pub fn gold(&self, i: usize) -> Gold {
        self.gold.as_ref().map_or(Gold::Tag, |g| g[i])
    }

    /// The words and gold (UPOS, XPOS) of `sent`, tags interned into `tags`.
    pub fn from_sentence(sent: &Sentence, tags: &mut TagSet) -> TagSentence {
        TagSentence {
            words: sent.words().map(|w| word_attrs(w.get(Column::Form))).collect(),
            tags: sent.words().map(|w| tags.intern(w.get(Column::Upos), w.get(Column::Xpos))).collect(),
            gold: None,
        }
    }

    /// The words of `sent` with what `checked` says a person checked of each word's tag (by
    /// 1-based word id): [`Gold::Tag`], its UPOS and XPOS; [`Gold::Upos`], its UPOS alone (its
    /// tag is then the one the set has with that UPOS and XPOS, else the first with that UPOS);
    /// [`Gold::Unchecked`], nothing (never trained on, and no tag made up for it).
    pub fn partial(sent: &Sentence, checked: impl Fn(u32) -> Gold, tags: &mut TagSet) -> TagSentence {
        let mut out = TagSentence { words: Vec::new(), tags: Vec::new(), gold: Some(Vec::new()) };
        for (i, w) in sent.words().enumerate() {
            let (upos, xpos) = (w.get(Column::Upos), w.get(Column::Xpos));
            let gold = checked(i as u32 + 1);
            let tag = match gold {
                Gold::Unchecked => tags.find(upos, xpos).unwrap_or(0),
                Gold::Upos => match tags.find(upos, xpos).or_else(|| tags.with_upos(upos)) {
                    Some(t) => t,
                    None => tags.intern(upos, xpos),
                },
                Gold::Tag => tags.intern(upos, xpos),
            };
            out.words.push(word_attrs(w.get(Column::Form)));
            out.tags.push(tag);
            out.gold.get_or_insert_with(Vec::new).push(gold);
        }
        out
    }
}

/// A trained tagger in memory.
#[derive(Debug, Clone)]
pub struct TaggerModel {
    pub tags: TagSet,
    pub dict: TagDict,
    /// Left-to-right pass.
    pub first: Weights,
    /// Pass with right context (the first pass's tags).
    pub second: Weights,
}

/// What a word's tag may be, from what its sentence gives of it ([`Tagger::tag_given`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowed {
    /// Any tag: nothing given, or nothing the tag set has.
    Any,
    /// A tag with the same UPOS as tag `0` (the first of the set with it): the UPOS is given.
    Upos(u16),
    /// This tag: its UPOS and XPOS are given.
    Tag(u16),
}

impl Allowed {
    /// Whether tag `t` may be chosen; `upos_of[t]` is the first tag with `t`'s UPOS.
    fn admits(self, t: usize, upos_of: &[u16]) -> bool {
        match self {
            Allowed::Any => true,
            Allowed::Upos(u) => upos_of.get(t) == Some(&u),
            Allowed::Tag(x) => t == x as usize,
        }
    }
}

/// What a pass may choose for each word: `allowed` (`None`: any tag) with the map of tags to
/// their UPOS that [`Allowed::admits`] reads.
#[derive(Clone, Copy)]
struct Constraint<'a> {
    allowed: Option<&'a [Allowed]>,
    upos_of: &'a [u16],
}

impl Constraint<'_> {
    const NONE: Constraint<'static> = Constraint { allowed: None, upos_of: &[] };

    fn at(&self, i: usize) -> Allowed {
        self.allowed.and_then(|a| a.get(i).copied()).unwrap_or(Allowed::Any)
    }
}

/// `allowed`, or `None` (any tag) when it is empty.
fn constrained(allowed: &[Allowed]) -> Option<&[Allowed]> {
    (!allowed.is_empty()).then_some(allowed)
}

/// The best tag `allow` admits and its margin over the next best it admits.
fn best_allowed(scores: &[f32], allow: Allowed, upos_of: &[u16]) -> (u16, f32) {
    match allow {
        Allowed::Any => best_of_all(scores),
        _ => best_admitted(scores, |j| allow.admits(j, upos_of)),
    }
}

/// The best tag `admits` admits and its margin over the next best it admits.
fn best_admitted(scores: &[f32], admits: impl Fn(usize) -> bool) -> (u16, f32) {
    let best = argmax(scores, &admits).unwrap_or(0);
    let second = scores
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != best && admits(j))
        .map(|(_, &s)| s)
        .fold(f32::NEG_INFINITY, f32::max);
    (best as u16, scores.get(best).map_or(0.0, |&b| b - second))
}

/// [`best_admitted`] when every tag is admitted, in one pass without branches on the scores, in
/// four lanes so that the comparisons of one do not wait on another's: the two passes with a
/// closure per tag took 5% of a raw-text parse's time (`perf record`, en_ewt, one thread). The
/// same tag and margin: the first of the highest scores, and the highest of the others
/// (`f32::max` ignores a NaN in both). Where no score beats −∞, or the first is NaN, the two
/// passes decide (the first score is then the best, whatever it is).
fn best_of_all(scores: &[f32]) -> (u16, f32) {
    const LANES: usize = 4;
    let (mut best, mut top, mut second) = ([usize::MAX; LANES], [f32::NEG_INFINITY; LANES], [f32::NEG_INFINITY; LANES]);
    let mut step = |i: usize, s: f32| {
        let l = i % LANES;
        let better = s > top[l];
        second[l] = second[l].max(if better { top[l] } else { s });
        best[l] = if better { i } else { best[l] };
        top[l] = if better { s } else { top[l] };
    };
    let (chunks, rest) = scores.as_chunks::<LANES>();
    for (c, chunk) in chunks.iter().enumerate() {
        for (l, &s) in chunk.iter().enumerate() {
            step(c * LANES + l, s);
        }
    }
    for (j, &s) in rest.iter().enumerate() {
        step(chunks.len() * LANES + j, s);
    }
    // The lane of the highest score, the one of its first index among equals.
    let winner = (0..LANES).filter(|&l| best[l] != usize::MAX).reduce(|w, l| {
        if top[l] > top[w] || top[l] == top[w] && best[l] < best[w] {
            l
        } else {
            w
        }
    });
    match winner {
        Some(w) if !scores[0].is_nan() => {
            let others = (0..LANES).filter(|&l| l != w).map(|l| top[l]);
            let second = second.into_iter().chain(others).fold(f32::NEG_INFINITY, f32::max);
            (best[w] as u16, top[w] - second)
        }
        _ => best_admitted(scores, |_| true),
    }
}

/// One greedy left-to-right pass over `words` into `out`; with `right`, the second pass. Each
/// word's tag is one `constraint` allows: a given tag unscored, else the tag dictionary's if
/// allowed, else the best-scoring allowed one. With `margins`, each word's score margin goes
/// there ([`Tagger::margins`]).
#[allow(clippy::too_many_arguments)]
fn tag_pass<S: Scorer>(
    weights: &S,
    dict: &TagDict,
    words: &[WordAttrs],
    right: Option<&[u16]>,
    constraint: Constraint<'_>,
    feats: &mut Vec<u64>,
    scores: &mut [f32],
    out: &mut Vec<u16>,
    mut margins: Option<&mut Vec<f32>>,
) {
    out.clear();
    if let Some(m) = margins.as_deref_mut() {
        m.clear();
    }
    let (mut prev, mut prev2) = (None, None);
    for (i, w) in words.iter().enumerate() {
        let allow = constraint.at(i);
        let fixed = match allow {
            Allowed::Tag(t) => Some(t),
            _ => dict.get(w).filter(|&t| allow.admits(t as usize, constraint.upos_of)),
        };
        let (tag, margin) = match fixed {
            Some(t) => (t, f32::INFINITY),
            None => {
                extract(words, i, history(prev), history(prev2), right, feats);
                weights.score(feats, scores);
                best_allowed(scores, allow, constraint.upos_of)
            }
        };
        if let Some(m) = margins.as_deref_mut() {
            m.push(margin);
        }
        out.push(tag);
        prev2 = prev;
        prev = Some(tag);
    }
}

/// Trains one pass (`right`: first-pass tags per sentence, for the second pass).
fn train_pass(
    sentences: &[TagSentence],
    right: Option<&[Vec<u16>]>,
    dict: &TagDict,
    tags: &TagSet,
    epochs: u32,
    seed: u64,
) -> Weights {
    let classes = tags.len().max(1);
    let mut p = Perceptron::new(classes);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..sentences.len()).collect();
    let mut feats = Vec::new();
    let mut scores = vec![0.0f32; classes];
    for _ in 0..epochs {
        order.shuffle(&mut rng);
        for &si in &order {
            let s = &sentences[si];
            let r = right.map(|r| r[si].as_slice());
            let (mut prev, mut prev2) = (None, None);
            for (i, &gold) in s.tags.iter().enumerate() {
                let predicted = match dict.get(&s.words[i]) {
                    Some(t) => t,
                    None => {
                        extract(&s.words, i, history(prev), history(prev2), r, &mut feats);
                        p.score(&feats, &mut scores);
                        let guess = argmax(&scores, |_| true).unwrap_or(0) as u16;
                        // The words of a partial sentence are tagged as the tagger would (their
                        // predictions are the history, as for every word), but only a checked
                        // one teaches anything: towards its tag, or towards the best-scoring
                        // tag with its UPOS when only that was checked.
                        let target = match s.gold(i) {
                            Gold::Tag => Some(gold),
                            Gold::Upos => {
                                let upos = tags.get(gold).0;
                                if tags.get(guess).0 == upos {
                                    Some(guess)
                                } else {
                                    argmax(&scores, |t| tags.get(t as u16).0 == upos).map(|t| t as u16)
                                }
                            }
                            Gold::Unchecked => None,
                        };
                        if let Some(target) = target {
                            if guess != target {
                                p.update(&feats, target as usize, guess as usize);
                            }
                            p.tick();
                        }
                        guess
                    }
                };
                prev2 = prev;
                prev = Some(predicted);
            }
        }
    }
    p.averaged()
}

/// Copies of `sentences` with ambiguity classes as unseen text would get them: the words of
/// the sentences of each of [`CLASS_FOLDS`] folds get the classes of the other folds, so that
/// rare words are unknown in training as often as in unseen text (with the classes of all the
/// training data, every training word would have a class holding its tag).
fn annotated_jackknifed(sentences: &[TagSentence]) -> Vec<TagSentence> {
    let k = CLASS_FOLDS;
    let mut out = sentences.to_vec();
    for fold in 0..k {
        let others: Vec<TagSentence> =
            sentences.iter().enumerate().filter(|(i, _)| i % k != fold).map(|(_, s)| s.clone()).collect();
        let fold_dict = TagDict::build(&others);
        for s in out.iter_mut().enumerate().filter(|(i, _)| i % k == fold).map(|(_, s)| s) {
            fold_dict.annotate(&mut s.words);
        }
    }
    out
}

/// Trains both passes for `epochs` epochs each (sentence order shuffled per epoch with `seed`).
pub fn train_tagger(sentences: &[TagSentence], tags: &TagSet, epochs: u32, seed: u64) -> TaggerModel {
    let dict = TagDict::build(sentences);
    let classes = tags.len().max(1);
    // The first pass runs right to left, so the tags it hands the second pass were themselves
    // predicted with their right context.
    let reversed: Vec<TagSentence> = sentences.iter().map(TagSentence::reversed).collect();
    let first = train_pass(&annotated_jackknifed(&reversed), None, &dict, tags, epochs, seed);
    // First-pass tags of the training data, each from a first pass that did not see it.
    let k = SECOND_PASS_FOLDS;
    let mut right = vec![Vec::new(); sentences.len()];
    let (mut feats, mut scores) = (Vec::new(), vec![0.0f32; classes]);
    for fold in 0..k {
        let train: Vec<TagSentence> =
            reversed.iter().enumerate().filter(|(i, _)| i % k != fold).map(|(_, s)| s.clone()).collect();
        let fold_dict = TagDict::build(&train);
        let train = annotated_jackknifed(&train);
        let weights = train_pass(&train, None, &fold_dict, tags, epochs, seed.wrapping_add(fold as u64 + 1));
        for (i, s) in reversed.iter().enumerate().filter(|(i, _)| i % k == fold) {
            let mut words = s.words.clone();
            fold_dict.annotate(&mut words);
            let (out, none) = (&mut right[i], Constraint::NONE);
            tag_pass(&&weights, &fold_dict, &words, None, none, &mut feats, &mut scores, out, None);
            right[i].reverse();
        }
    }
    let second =
        train_pass(&annotated_jackknifed(sentences), Some(&right), &dict, tags, epochs, seed.wrapping_add(100));
    TaggerModel { tags: tags.clone(), dict, first, second }
}

/// A tagger over borrowed weights, with reusable buffers.
pub struct Tagger<'m, S: Scorer> {
    first: S,
    second: S,
    tags: &'m TagSet,
    dict: &'m TagDict,
    words: Vec<WordAttrs>,
    feats: Vec<u64>,
    scores: Vec<f32>,
    first_out: Vec<u16>,
    /// The words with their ambiguity classes, left to right and right to left.
    annotated: Vec<WordAttrs>,
    reversed: Vec<WordAttrs>,
    out: Vec<u16>,
    /// Per word of the last sentence, the second pass's score margin of its tag.
    margins: Vec<f32>,
    /// Per tag, the first tag with its UPOS ([`Allowed::Upos`]).
    upos_of: Vec<u16>,
    /// What each word of the sentence being tagged may get, left to right and right to left.
    allowed: Vec<Allowed>,
    allowed_reversed: Vec<Allowed>,
}

impl<'m> Tagger<'m, &'m Weights> {
    /// A tagger over a model in memory.
    pub fn from_model(model: &'m TaggerModel) -> Self {
        Tagger::new(&model.first, &model.second, &model.tags, &model.dict)
    }
}

impl<'m, S: Scorer> Tagger<'m, S> {
    /// A tagger over the weights of its two passes.
    pub fn new(first: S, second: S, tags: &'m TagSet, dict: &'m TagDict) -> Self {
        let classes = first.classes().max(second.classes());
        Tagger {
            first,
            second,
            tags,
            dict,
            words: Vec::new(),
            feats: Vec::new(),
            scores: vec![0.0; classes],
            first_out: Vec::new(),
            annotated: Vec::new(),
            reversed: Vec::new(),
            out: Vec::new(),
            margins: Vec::new(),
            upos_of: (0..tags.len() as u16).map(|t| tags.with_upos(tags.get(t).0).unwrap_or(t)).collect(),
            allowed: Vec::new(),
            allowed_reversed: Vec::new(),
        }
    }

    /// Per word of the last sentence tagged, how far its tag's score was above the next best
    /// tag's in the second pass (infinite for a word the tag dictionary fixes): how sure the
    /// tagger was, which the whole-pipeline confidence reads.
    pub fn margins(&self) -> &[f32] {
        &self.margins
    }

    /// Whether the training data had a word of this form, ignoring case ([`TagDict::knows`]).
    pub fn knows(&self, form: &str) -> bool {
        self.dict.knows(form)
    }

    /// Per word of the last sentence tagged, whether the training data had its form (ignoring
    /// case): [`Tagger::knows`] of each, without hashing the forms again.
    pub fn known(&self) -> impl Iterator<Item = bool> + '_ {
        self.annotated.iter().map(|w| w.class != UNKNOWN_CLASS)
    }

    /// Tags words given by their attributes; returns one tag per word.
    pub fn tag_words(&mut self, words: &[WordAttrs]) -> &[u16] {
        self.allowed.clear();
        self.tag_allowed(words)
    }

    /// Tags words as [`Tagger::tag_words`], each with a tag `allowed` admits (one per word):
    /// both passes choose under it, so the right context the second pass reads is chosen so
    /// too. A word the tag dictionary fixes gets its tag only where that is allowed.
    pub fn tag_words_allowed(&mut self, words: &[WordAttrs], allowed: &[Allowed]) -> &[u16] {
        self.allowed.clear();
        self.allowed.extend_from_slice(allowed);
        self.tag_allowed(words)
    }

    /// Tags `words` under `self.allowed` (empty: any tag).
    fn tag_allowed(&mut self, words: &[WordAttrs]) -> &[u16] {
        let (feats, scores) = (&mut self.feats, &mut self.scores);
        self.annotated.clear();
        self.annotated.extend_from_slice(words);
        self.dict.annotate(&mut self.annotated);
        self.reversed.clear();
        self.reversed.extend(self.annotated.iter().rev());
        self.allowed_reversed.clear();
        self.allowed_reversed.extend(self.allowed.iter().rev());
        let first = Constraint { allowed: constrained(&self.allowed_reversed), upos_of: &self.upos_of };
        tag_pass(&self.first, self.dict, &self.reversed, None, first, feats, scores, &mut self.first_out, None);
        self.first_out.reverse();
        let second = Constraint { allowed: constrained(&self.allowed), upos_of: &self.upos_of };
        tag_pass(
            &self.second,
            self.dict,
            &self.annotated,
            Some(&self.first_out),
            second,
            feats,
            scores,
            &mut self.out,
            Some(&mut self.margins),
        );
        &self.out
    }

    /// What the tag set admits for a word given `upos` and `xpos` (`_`: not given): the pair
    /// if the set has it, else any tag with the UPOS if it has one, else any tag.
    pub fn allowed(&self, upos: &str, xpos: &str) -> Allowed {
        if upos == "_" {
            return Allowed::Any;
        }
        match self.tags.find(upos, xpos) {
            Some(t) if xpos != "_" => Allowed::Tag(t),
            _ => self.tags.with_upos(upos).map_or(Allowed::Any, Allowed::Upos),
        }
    }

    /// Tags `sent`, writing UPOS and XPOS of its words.
    pub fn tag(&mut self, sent: &mut Sentence) {
        self.allowed.clear();
        self.tag_sentence(sent);
    }

    /// Tags `sent` under what it gives ([`Tagger::allowed`] of each word's UPOS and XPOS): a
    /// word with a UPOS the tag set has keeps it and gets the best-scoring XPOS with it, one
    /// whose UPOS and XPOS the set has keeps both, the others are tagged freely. Writes UPOS
    /// and XPOS of every word: a given value the set lacks is written over.
    pub fn tag_given(&mut self, sent: &mut Sentence) {
        let mut allowed = std::mem::take(&mut self.allowed);
        allowed.clear();
        allowed.extend(sent.words().map(|w| self.allowed(w.get(Column::Upos), w.get(Column::Xpos))));
        self.allowed = allowed;
        self.tag_sentence(sent);
    }

    /// Tags `sent` from a neural model's `scores` (as many per word as the tag set has tags,
    /// in its order) instead of the two passes: each word gets its best-scoring tag, under what
    /// the sentence gives of it if `given` (as [`Tagger::tag_given`]), and its margin over the
    /// next best ([`Tagger::margins`]; the tag dictionary fixes nothing here: the model reads
    /// the whole sentence; the forms are still looked up for [`Tagger::known`]). Writes UPOS and
    /// XPOS of every word.
    pub fn tag_scored(&mut self, sent: &mut Sentence, scores: &[f32], given: bool) {
        let tags = self.tags.len();
        self.annotated.clear();
        self.annotated.extend(sent.words().map(|w| word_attrs(w.get(Column::Form))));
        self.dict.annotate(&mut self.annotated);
        self.out.clear();
        self.margins.clear();
        for (i, word_scores) in scores.chunks_exact(tags).take(sent.len()).enumerate() {
            let allow = match given {
                true => self.allowed(sent.word(i + 1).get(Column::Upos), sent.word(i + 1).get(Column::Xpos)),
                false => Allowed::Any,
            };
            let (tag, margin) = best_allowed(word_scores, allow, &self.upos_of);
            self.out.push(tag);
            self.margins.push(margin);
        }
        for (i, &t) in self.out.iter().enumerate() {
            let (upos, xpos) = self.tags.get(t);
            sent.set_tags(i + 1, upos, xpos);
        }
    }

    /// Tags `sent` under `self.allowed` and writes UPOS and XPOS.
    fn tag_sentence(&mut self, sent: &mut Sentence) {
        let mut words = std::mem::take(&mut self.words);
        words.clear();
        words.extend(sent.words().map(|w| word_attrs(w.get(Column::Form))));
        self.tag_allowed(&words);
        self.words = words;
        for (i, &t) in self.out.iter().enumerate() {
            let (upos, xpos) = self.tags.get(t);
            sent.set_tags(i + 1, upos, xpos);
        }
    }
}

/// Reads the words and gold joint tags of every sentence of `paths`, in file order.
pub fn load_tagging(
    paths: &[std::path::PathBuf],
    tags: &mut TagSet,
) -> Result<Vec<TagSentence>, crate::corpus::CorpusError> {
    let mut out = Vec::new();
    for path in paths {
        for sent in crate::corpus::Reader::open(path, crate::corpus::Format::from_path(path))? {
            out.push(TagSentence::from_sentence(&sent?, tags));
        }
    }
    Ok(out)
}

/// K-fold jackknifing (as in the seed experiments): the tags of every sentence as predicted by a
/// tagger trained on the other `k - 1` folds (sentence `i` is in fold `i mod k`), so that a
/// parser trained on them sees tags as noisy as at parse time.
pub fn jackknife(sentences: &[TagSentence], tags: &TagSet, k: usize, epochs: u32, seed: u64) -> Vec<Vec<u16>> {
    use rayon::prelude::*;
    // Folds are independent: trained in parallel, each with its own seed.
    let folds: Vec<Vec<(usize, Vec<u16>)>> = (0..k)
        .into_par_iter()
        .map(|fold| {
            let train: Vec<TagSentence> =
                sentences.iter().enumerate().filter(|(i, _)| i % k != fold).map(|(_, s)| s.clone()).collect();
            let model = train_tagger(&train, tags, epochs, seed.wrapping_add(fold as u64));
            let mut tagger = Tagger::from_model(&model);
            sentences
                .iter()
                .enumerate()
                .filter(|(i, _)| i % k == fold)
                .map(|(i, s)| (i, tagger.tag_words(&s.words).to_vec()))
                .collect()
        })
        .collect();
    let mut predicted = vec![Vec::new(); sentences.len()];
    for (i, tags) in folds.into_iter().flatten() {
        predicted[i] = tags;
    }
    predicted
}

/// UPOS and XPOS accuracy (percent) of `tagger` on gold-tagged sentences.
pub fn accuracy<S: Scorer>(tagger: &mut Tagger<'_, S>, sentences: &[TagSentence], gold_tags: &TagSet) -> (f64, f64) {
    let (mut words, mut upos, mut xpos) = (0usize, 0usize, 0usize);
    for s in sentences {
        let predicted = tagger.tag_words(&s.words).to_vec();
        for (&p, &g) in predicted.iter().zip(&s.tags) {
            let (pu, px) = tagger.tags.get(p);
            let (gu, gx) = gold_tags.get(g);
            words += 1;
            upos += usize::from(pu == gu);
            xpos += usize::from(px == gx);
        }
    }
    let pct = |c: usize| if words == 0 { 0.0 } else { 100.0 * c as f64 / words as f64 };
    (pct(upos), pct(xpos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_tag_in_four_lanes_is_the_two_pass_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for case in 0..20_000 {
            let len = 1 + case % 13;
            // Few distinct values, so that ties (the first wins) and margins of 0 are common.
            let mut scores: Vec<f32> =
                (0..len).map(|_| f32::from(rand::Rng::gen_range(&mut rng, -3i8..4)) / 2.0).collect();
            if case % 97 == 0 {
                scores[case % len] = f32::NAN;
            }
            if case % 89 == 0 {
                scores[(case / 89) % len] = f32::NEG_INFINITY;
            }
            if case % 1009 == 0 {
                scores.fill(f32::NEG_INFINITY);
            }
            let (fast, slow) = (best_of_all(&scores), best_admitted(&scores, |_| true));
            assert_eq!(fast.0, slow.0, "{scores:?}");
            assert_eq!(fast.1.to_bits(), slow.1.to_bits(), "{scores:?}");
        }
        assert_eq!(best_of_all(&[]), best_admitted(&[], |_| true));
    }

    #[test]
    fn word_attributes_capture_case_affixes_and_shape() {
        let a = word_attrs("Running");
        let b = word_attrs("running");
        assert_ne!(a.form, b.form);
        assert_eq!(a.lower, b.lower);
        assert_eq!(a.suffix, b.suffix);
        assert_ne!(a.shape, b.shape);
        assert_eq!(word_attrs("1990").shape, word_attrs("2024").shape);
        assert_eq!(word_attrs("walking").suffix[2], word_attrs("talking").suffix[2]);
        assert_ne!(word_attrs("walking").suffix[3], word_attrs("walkinx").suffix[3]);
        // Short words: every prefix and suffix is the whole word.
        let a = word_attrs("a");
        assert!(a.prefix.iter().all(|&p| p == a.prefix[0]));
        assert!(a.suffix.iter().all(|&s| s == a.suffix[0]));
    }

    /// A sentence of `(form, upos, xpos)` words.
    fn sentence(words: &[(&str, &str, &str)]) -> Sentence {
        Sentence::of_words(&words.iter().map(|&(f, u, x)| [f, "_", u, x, "_"]).collect::<Vec<_>>())
    }

    /// Gold sentences in which `det` is DET/DT, `noun` NOUN/NN and `verb` VERB/VB, varied.
    fn base(tags: &mut TagSet) -> Vec<TagSentence> {
        let forms = ["cat", "dog", "bird", "fish", "tree", "car"];
        (0..60)
            .map(|i| {
                let s = sentence(&[
                    ("the", "DET", "DT"),
                    (forms[i % 6], "NOUN", "NN"),
                    (["runs", "sees", "eats"][i % 3], "VERB", "VB"),
                    ("the", "DET", "DT"),
                    (forms[(i + 1) % 6], "NOUN", "NN"),
                ]);
                TagSentence::from_sentence(&s, tags)
            })
            .collect()
    }

    fn tag_forms(model: &TaggerModel, forms: &[&str]) -> Vec<(String, String)> {
        let words: Vec<WordAttrs> = forms.iter().map(|f| word_attrs(f)).collect();
        let mut tagger = Tagger::from_model(model);
        let out = tagger.tag_words(&words).to_vec();
        out.iter().map(|&t| (model.tags.get(t).0.to_string(), model.tags.get(t).1.to_string())).collect()
    }

    #[test]
    fn given_tags_constrain_the_tagger_a_given_upos_to_its_best_tag_with_it() {
        let mut tags = TagSet::default();
        let model = train_tagger(&base(&mut tags), &tags, 5, 7);
        let mut tagger = Tagger::from_model(&model);
        let tagged = |s: &Sentence| {
            s.words().map(|w| format!("{}/{}", w.get(Column::Upos), w.get(Column::Xpos))).collect::<Vec<_>>()
        };
        let mut free = sentence(&[("the", "_", "_"), ("dog", "_", "_"), ("runs", "_", "_")]);
        tagger.tag(&mut free);
        assert_eq!(tagged(&free), ["DET/DT", "NOUN/NN", "VERB/VB"]);
        // UPOS given: "runs" as a NOUN gets the NOUN tag (its XPOS predicted), not VERB/VB; a
        // known pair is kept though the tagger would say otherwise; a UPOS the tag set lacks
        // constrains nothing.
        let mut given = sentence(&[("the", "DET", "_"), ("dog", "DET", "DT"), ("runs", "NOUN", "_")]);
        tagger.tag_given(&mut given);
        assert_eq!(tagged(&given), ["DET/DT", "DET/DT", "NOUN/NN"]);
        let mut unknown = sentence(&[("the", "INTJ", "_"), ("dog", "_", "_"), ("runs", "INTJ", "UH")]);
        tagger.tag_given(&mut unknown);
        assert_eq!(tagged(&unknown), tagged(&free));
        // The margins are among the allowed tags: a given pair is sure.
        assert_eq!(tagger.tag_words_allowed(&[word_attrs("runs")], &[Allowed::Tag(0)]), [0]);
        assert_eq!(tagger.margins(), [f32::INFINITY]);
    }

    #[test]
    fn partial_supervision_trains_on_the_checked_words_only() {
        // Word 2 checked ("zork" is a NOUN); word 3 ("blick", never seen elsewhere) unchecked,
        // shown as VERB in one copy of the data and DET in the other.
        let train = |blick: (&str, &str), checked_only: bool| {
            let mut tags = TagSet::default();
            let mut data = base(&mut tags);
            let s = sentence(&[("the", "DET", "DT"), ("zork", "NOUN", "NN"), ("blick", blick.0, blick.1)]);
            for _ in 0..20 {
                data.push(if checked_only {
                    TagSentence::partial(&s, |id| if id == 2 { Gold::Tag } else { Gold::Unchecked }, &mut tags)
                } else {
                    TagSentence::from_sentence(&s, &mut tags)
                });
            }
            train_tagger(&data, &tags, 5, 7)
        };
        let probe = ["the", "zork", "blick", "the", "blick", "zork"];
        let as_verb = train(("VERB", "VB"), true);
        let as_det = train(("DET", "DT"), true);
        assert_eq!(tag_forms(&as_verb, &probe), tag_forms(&as_det, &probe), "an unchecked tag was trained on");
        assert_eq!(tag_forms(&as_verb, &["the", "zork"])[1].0, "NOUN", "the checked word was learned");
        // The probe tells the two apart when every word is trained on.
        assert_ne!(tag_forms(&train(("VERB", "VB"), false), &probe), tag_forms(&train(("DET", "DT"), false), &probe));
    }

    #[test]
    fn a_checked_upos_without_xpos_trains_towards_a_known_tag_with_that_upos() {
        let mut tags = TagSet::default();
        let mut data = base(&mut tags);
        let known = tags.len();
        // "flurb" was shown as a verb; the annotator set its UPOS to NOUN, the XPOS unknown.
        let s = sentence(&[("the", "DET", "DT"), ("flurb", "NOUN", "_"), ("runs", "VERB", "VB")]);
        let partial = TagSentence::partial(&s, |id| if id == 2 { Gold::Upos } else { Gold::Unchecked }, &mut tags);
        assert_eq!(partial.gold, Some(vec![Gold::Unchecked, Gold::Upos, Gold::Unchecked]));
        assert_eq!(tags.len(), known, "no (NOUN, _) tag was made up");
        data.extend(std::iter::repeat_n(partial, 20));
        let model = train_tagger(&data, &tags, 5, 7);
        assert_eq!(tag_forms(&model, &["the", "flurb", "sees"])[1], ("NOUN".to_string(), "NN".to_string()));
    }
}
