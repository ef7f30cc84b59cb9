//! A task as the page shows it: a sentence re-parsed by the serving model around the arcs the
//! annotator has set ([`crate::parse::constrained`]), each word with its arc, its calibrated
//! confidence (the whole pipeline's, [`crate::parse::confidence`], for models that have one:
//! what `parse` writes for the sentence with its tags given, with distinct values and no
//! floor; a constrained word's is 1), whether to check it, and for those to check the
//! next-best heads.
//!
//! Next-best heads ([`Reparser::view`]): for a word to check, every head within
//! [`ALTERNATIVE_REACH`] words (and the root) is tried as one more constraint, and the tree the
//! model then finds is scored by its probability (the product of its transitions'). An
//! alternative's `conf` is its tree's share of the probability of all the trees tried, the
//! current one included: how much the model would rather have the word there, everything else
//! re-derived. About 13 constrained parses per checked word.
//!
//! Words to check: the [`super::queue::CHECK_WORDS`] unconstrained words likeliest wrong, by
//! their calibrated probability as the answers so far correct it ([`super::error_model`]).
//!
//! This module reads a model; it keeps no state between requests and writes nothing.

use serde::Serialize;

use super::error_model::{self, ErrorModel, Pattern};
use crate::base::label::{Label, LabelSet};
use crate::corpus::{Column, Sentence};
use crate::model::analysis::Analyzer;
use crate::model::features::{encode_sentence, Morphology, TokenAttrs};
use crate::model::file::{ModelFile, TableView};
use crate::parse::confidence::{ArcConfidence, Parsed};
use crate::parse::constrained::{Arc, ConstraintError, Constraints};
use crate::parse::parser::Parser;

/// Heads tried as alternatives: this many words on each side, and the root.
pub const ALTERNATIVE_REACH: u32 = 6;

/// Alternatives offered per checked word.
pub const ALTERNATIVES: usize = 3;

/// One word of a task, as `/api/next` and `/api/reparse` give it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WordView {
    pub id: u32,
    pub form: String,
    /// The word's tags and lemma as the task has them (what the annotator may fix), and its
    /// FEATS.
    pub upos: String,
    pub xpos: String,
    pub lemma: String,
    pub feats: String,
    pub head: u32,
    pub deprel: String,
    pub conf: f32,
    pub check: bool,
    /// Set by the annotator (a constraint of this parse).
    pub fixed: bool,
    pub alternatives: Vec<Alternative>,
}

/// A next-best head for a word.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Alternative {
    pub head: u32,
    pub deprel: String,
    pub conf: f32,
}

/// Re-parses sentences of one model with constraints; one per request (it owns the parser's
/// buffers).
pub struct Reparser<'m> {
    parser: Parser<'m, TableView<'m>>,
    /// The whole pipeline's confidence, and the tagger whose lexicon it reads.
    confidence: ArcConfidence<'m>,
    analyzer: Option<Analyzer<'m, TableView<'m>>>,
    labels: &'m LabelSet,
    morphology: Morphology,
    attrs: Vec<TokenAttrs>,
}

impl<'m> Reparser<'m> {
    /// A re-parser for `model`, with its calibrated confidences.
    pub fn new(model: &'m ModelFile) -> Reparser<'m> {
        let meta = model.meta();
        let confidence = ArcConfidence::new(model.confidence().map(|c| &c.model), &meta.labels);
        let parser = confidence.parser(model);
        let analyzer = model.analyzer();
        Reparser { parser, confidence, analyzer, labels: &meta.labels, morphology: meta.morphology, attrs: Vec::new() }
    }

    /// The model's label for `name`, if it has one (and it is a plain UD label, not one of
    /// the pseudo-projective encoding's).
    pub fn label(&self, name: &str) -> Option<Label> {
        self.labels.get(name).filter(|_| !name.contains(['↑', '↓']))
    }

    /// The labels an annotator may choose, sorted.
    pub fn label_names(&self) -> Vec<String> {
        let mut names: Vec<String> = (0..self.labels.len())
            .map(|i| self.labels.name(Label::from_index(i)).to_string())
            .filter(|n| !n.contains(['↑', '↓']))
            .collect();
        names.sort();
        names
    }

    /// Parses `sent` with `constraints` and shows it: the `check` words (or, when empty, the
    /// [`super::queue::CHECK_WORDS`] unconstrained words likeliest wrong by `errors`) flagged,
    /// with their alternatives.
    pub fn view(
        &mut self,
        sent: &Sentence,
        constraints: &Constraints,
        check: &[u32],
        errors: &ErrorModel,
    ) -> Vec<WordView> {
        encode_sentence(sent, self.morphology, &mut self.attrs);
        // A neural model reads the forms too (their characters, suffixes and shapes).
        let forms = self.parser.forms_of(sent);
        self.parser.parse_words_constrained(&self.attrs, &forms, constraints);
        let heads = self.parser.heads().to_vec();
        let labels = self.parser.labels().to_vec();
        let mut conf = self.parser.arc_confidence().to_vec();
        if self.confidence.has_model() {
            let parsed = Parsed { heads: &heads, labels: &labels, probabilities: &conf };
            self.confidence.read(sent, parsed, self.analyzer.as_ref().map(|a| &a.tagger), false);
            conf.copy_from_slice(self.confidence.confidence());
            for arc in constraints.arcs() {
                conf[arc.word as usize] = 1.0;
            }
        }
        let best_log = self.parser.log_tree_probability();
        let mut words: Vec<WordView> = sent
            .words()
            .enumerate()
            .map(|(i, w)| {
                let id = i as u32 + 1;
                WordView {
                    id,
                    form: w.get(Column::Form).to_string(),
                    upos: w.get(Column::Upos).to_string(),
                    xpos: w.get(Column::Xpos).to_string(),
                    lemma: w.get(Column::Lemma).to_string(),
                    feats: w.get(Column::Feats).to_string(),
                    head: heads[id as usize],
                    deprel: self.labels.name(labels[id as usize]).to_string(),
                    conf: conf[id as usize],
                    check: false,
                    fixed: constraints.head(id).is_some(),
                    alternatives: Vec::new(),
                }
            })
            .collect();
        let check: Vec<u32> = if check.is_empty() { likeliest_wrong(&words, errors) } else { check.to_vec() };
        for w in words.iter_mut() {
            w.check = check.contains(&w.id) && !w.fixed;
        }
        for w in words.iter_mut().filter(|w| w.check) {
            w.alternatives = self.alternatives(&forms, constraints, w.id, w.head, best_log);
        }
        words
    }

    /// The next-best heads of `word` (now on `current`), given `constraints`; `forms` as
    /// [`Reparser::view`] gave them to the parser.
    fn alternatives(
        &mut self,
        forms: &[&str],
        constraints: &Constraints,
        word: u32,
        current: u32,
        current_log: f64,
    ) -> Vec<Alternative> {
        let n = constraints.len() as u32;
        let lo = word.saturating_sub(ALTERNATIVE_REACH).max(1);
        let hi = (word + ALTERNATIVE_REACH).min(n);
        let mut tried: Vec<(f64, u32, Label)> = Vec::new();
        for head in std::iter::once(0).chain(lo..=hi).filter(|&h| h != word && h != current) {
            let Ok(with) = with_arc(constraints, Arc { word, head, label: None }) else { continue };
            self.parser.parse_words_constrained(&self.attrs, forms, &with);
            tried.push((self.parser.log_tree_probability(), head, self.parser.labels()[word as usize]));
        }
        // Shares of the probability of every tree tried, the current one included.
        let max = tried.iter().map(|t| t.0).fold(current_log, f64::max);
        let total: f64 = tried.iter().map(|t| (t.0 - max).exp()).sum::<f64>() + (current_log - max).exp();
        tried.sort_by(|a, b| b.0.total_cmp(&a.0));
        tried
            .into_iter()
            .take(ALTERNATIVES)
            .map(|(log, head, label)| Alternative {
                head,
                deprel: self.labels.name(label).to_string(),
                conf: ((log - max).exp() / total) as f32,
            })
            .collect()
    }
}

/// `constraints` and one more arc.
pub fn with_arc(constraints: &Constraints, arc: Arc) -> Result<Constraints, ConstraintError> {
    Constraints::new(constraints.len(), constraints.arcs().chain(std::iter::once(arc)))
}

/// The pattern of `word`'s arc in the parse `words` (see [`error_model::pattern`]).
pub fn arc_pattern(words: &[WordView], word: &WordView) -> Pattern {
    let head_upos = match word.head {
        0 => "ROOT",
        h => words.get(h as usize - 1).map_or("ROOT", |w| w.upos.as_str()),
    };
    error_model::pattern(&word.upos, &word.deprel, head_upos)
}

/// The [`super::queue::CHECK_WORDS`] words without a constraint likeliest wrong.
fn likeliest_wrong(words: &[WordView], errors: &ErrorModel) -> Vec<u32> {
    let mut ranked: Vec<(f32, u32)> = words
        .iter()
        .filter(|w| !w.fixed)
        .map(|w| (errors.adjusted(arc_pattern(words, w).key, 1.0 - w.conf), w.id))
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.into_iter().take(super::queue::CHECK_WORDS).map(|(_, id)| id).collect()
}
