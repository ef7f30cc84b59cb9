//! The whole pipeline's arc confidence at parse time ([`crate::learn::confidence_model`]): what
//! each stage knew of each arc of a parsed sentence, read off the tagger, the parser and the
//! tokenizer's margins ([`ArcConfidence::read`]), and the confidence the model gives it. The
//! annotator ([`super::annotate`]) and the workbench's constrained re-parses use it, so that
//! both show the same numbers; it decides nothing.

use crate::base::label::{universal, Label, LabelSet, UD_RELATIONS};
use crate::corpus::{Column, Sentence, Upos};
use crate::learn::confidence_model::{ArcSignals, ConfidenceModel};
use crate::learn::scorer::Scorer;
use crate::model::file::{ModelFile, TableView};
use crate::model::tagger::Tagger;
use crate::parse::parser::Parser;
use crate::transition::projective::parse_mark;

/// The universal relation of each label of `labels` (of its base, without pseudo-projective
/// marks), as an index into [`UD_RELATIONS`].
fn universal_relations(labels: &LabelSet) -> Vec<Option<u8>> {
    labels
        .names()
        .map(|name| {
            let relation = universal(parse_mark(name).base);
            UD_RELATIONS.iter().position(|&r| r == relation).map(|i| i as u8)
        })
        .collect()
}

/// One sentence's parse, as the signals are read off it.
pub struct Parsed<'a> {
    /// Heads and labels by word (index 0 unused).
    pub heads: &'a [u32],
    pub labels: &'a [Label],
    /// The parser's probability of the transition that attached each word (index 0 unused).
    pub probabilities: &'a [f32],
}

/// The signals of a sentence's arcs and their confidences, with reusable buffers: one per
/// thread.
pub struct ArcConfidence<'m> {
    model: Option<&'m ConfidenceModel>,
    /// Each of the model's labels' universal relation ([`ArcSignals::relation`]).
    relations: Vec<Option<u8>>,
    signals: Vec<ArcSignals>,
    confidence: Vec<f32>,
}

impl<'m> ArcConfidence<'m> {
    /// Reads signals for a parser of `labels`; with `model`, [`ArcConfidence::confidence`]
    /// gives its confidences.
    pub fn new(model: Option<&'m ConfidenceModel>, labels: &LabelSet) -> Self {
        ArcConfidence { model, relations: universal_relations(labels), signals: Vec::new(), confidence: Vec::new() }
    }

    /// Whether there is a model to give confidences.
    pub fn has_model(&self) -> bool {
        self.model.is_some()
    }

    /// A parser of `model` computing the probabilities this confidence reads: the parser's own
    /// where there is a pipeline model (it weighs them itself), mapped by the model file's
    /// isotonic calibrator otherwise.
    pub fn parser(&self, model: &'m ModelFile) -> Parser<'m, TableView<'m>> {
        let parser = Parser::new(model).with_confidence(model.meta().temperature);
        match self.has_model() {
            true => parser,
            false => parser.with_calibration(model.meta().arc_calibration.as_ref()),
        }
    }

    /// The signals of the last sentence read (index 0 unused).
    pub fn signals(&self) -> &[ArcSignals] {
        &self.signals
    }

    /// The model's confidence in each arc of the last sentence read (index 0 unused); empty
    /// without a model.
    pub fn confidence(&self) -> &[f32] {
        &self.confidence
    }

    /// Reads the signals of every arc of `sent`, parsed as `parse` says, and gives each its
    /// confidence. `tagger` is the model's (its lexicon says which forms are unknown), and
    /// `tagged` says it just tagged `sent` (its margins and lexicon lookups are then this
    /// sentence's).
    pub fn read<S: Scorer>(
        &mut self,
        sent: &Sentence,
        parse: Parsed<'_>,
        tagger: Option<&Tagger<'_, S>>,
        tagged: bool,
    ) {
        let n = sent.len();
        let Parsed { heads, labels, probabilities: raw } = parse;
        let margins = match tagger {
            Some(t) if tagged => t.margins(),
            _ => &[],
        };
        self.signals.clear();
        self.signals.push(ArcSignals::default());
        // Without a lexicon (a model without a tagger) every form counts as known.
        let mut unknown = 0usize;
        match tagger {
            Some(t) if tagged => {
                for known in t.known() {
                    unknown += usize::from(!known);
                    self.signals.push(ArcSignals { dependent_unknown: !known, ..ArcSignals::default() });
                }
            }
            Some(t) => {
                for w in sent.words() {
                    let known = t.knows(w.get(Column::Form));
                    unknown += usize::from(!known);
                    self.signals.push(ArcSignals { dependent_unknown: !known, ..ArcSignals::default() });
                }
            }
            None => {}
        }
        self.signals.resize(n + 1, ArcSignals::default());
        let share = unknown as f32 / n.max(1) as f32;
        let sentence_parser = raw.iter().skip(1).sum::<f32>() / n.max(1) as f32;
        let margin =
            |i: usize| if i == 0 { f32::INFINITY } else { margins.get(i - 1).copied().unwrap_or(f32::INFINITY) };
        // Text that came tokenized has no tokenizer's doubt.
        let tokenized = &sent.tokenization;
        let sentence_margin = if tokenized.words.is_empty() { f32::INFINITY } else { tokenized.sentence };
        for (w, word) in (1..=n).zip(sent.words()) {
            let h = heads[w] as usize;
            let s = &mut self.signals[w];
            s.parser = raw[w];
            s.head_parser = if h == 0 { 1.0 } else { raw[h] };
            s.sentence_parser = sentence_parser;
            s.relation = self.relations.get(labels[w].index()).copied().flatten();
            s.upos = Upos::parse(word.get(Column::Upos)).map(Upos::index);
            s.dependent_tag = margin(w);
            s.head_tag = margin(h);
            s.unknown_share = share;
            s.words = n as u32;
            s.distance = if h == 0 { 0 } else { w.abs_diff(h) as u32 };
            s.token_margin = tokenized.words.get(w - 1).copied().unwrap_or(f32::INFINITY);
            s.sentence_margin = sentence_margin;
        }
        self.confidence.clear();
        if let Some(model) = self.model {
            self.confidence.push(0.0);
            self.confidence.extend(self.signals[1..].iter().map(|s| model.apply(s)));
        }
    }
}
