//! Greedy parsing: at each step the highest-scoring legal transition, until the buffer is
//! empty. A [`Parser`] owns every buffer it needs and reuses it from sentence to sentence, so
//! parsing allocates nothing per sentence once the buffers have grown. This module applies a
//! model; it does not train one.

use crate::arc_eager::{Configuration, Transition};
use crate::corpus::Sentence;
use crate::features::{encode_sentence, Extractor, TokenAttrs};
use crate::label::{Label, LabelSet};
use crate::model_file::{ModelFile, TableView};
use crate::perceptron::argmax;
use crate::scorer::Scorer;

/// A greedy parser over borrowed weights, with its reusable scratch space.
pub struct Parser<'m, S: Scorer> {
    weights: S,
    labels: &'m LabelSet,
    fallback: Label,
    morphology: bool,
    config: Configuration,
    extractor: Extractor,
    scores: Vec<f32>,
    attrs: Vec<TokenAttrs>,
    heads: Vec<u32>,
    arc_labels: Vec<Label>,
    repaired: usize,
}

impl<'m> Parser<'m, TableView<'m>> {
    /// A parser for a model file.
    pub fn new(model: &'m ModelFile) -> Self {
        let meta = model.meta();
        Parser::from_parts(model.weights(), &meta.labels, meta.fallback).with_morphology(meta.morphology)
    }
}

impl<'m, S: Scorer> Parser<'m, S> {
    /// A parser for any weights, as during training.
    pub fn from_parts(weights: S, labels: &'m LabelSet, fallback: Label) -> Self {
        Parser {
            labels,
            fallback,
            morphology: true,
            config: Configuration::new(0),
            extractor: Extractor::new(),
            scores: vec![0.0; weights.classes()],
            weights,
            attrs: Vec::new(),
            heads: Vec::new(),
            arc_labels: Vec::new(),
            repaired: 0,
        }
    }

    /// Whether features read LEMMA and FEATS (default true); must match how the weights were
    /// trained.
    pub fn with_morphology(mut self, morphology: bool) -> Self {
        self.morphology = morphology;
        self
    }

    /// Parses a sentence given its token attributes (node 0 first). Heads and labels are then
    /// available from [`Parser::heads`] and [`Parser::labels`].
    pub fn parse_attrs(&mut self, attrs: &[TokenAttrs]) {
        self.config.reset(attrs.len() - 1);
        while !self.config.is_terminal() {
            let feats = self.extractor.extract(&self.config, attrs);
            self.weights.score(feats, &mut self.scores);
            let legal = self.config.legal();
            // The buffer is not empty, so SHIFT at least is legal.
            let best = argmax(&self.scores, |i| legal.allows_index(i)).unwrap_or(0);
            self.config.apply(Transition::from_index(best));
        }
        self.repaired += self.config.finish(self.fallback, &mut self.heads, &mut self.arc_labels);
    }

    /// Parses `sent` and writes HEAD and DEPREL of its words.
    pub fn parse(&mut self, sent: &mut Sentence) {
        let mut attrs = std::mem::take(&mut self.attrs);
        encode_sentence(sent, self.morphology, &mut attrs);
        self.parse_attrs(&attrs);
        self.attrs = attrs;
        for w in 1..=sent.len() {
            sent.set_attachment(w, self.heads[w] as usize, self.labels.name(self.arc_labels[w]));
        }
    }

    /// Heads of the last parse, indexed by word (index 0 unused).
    pub fn heads(&self) -> &[u32] {
        &self.heads
    }

    /// Labels of the last parse, indexed by word (index 0 unused).
    pub fn labels(&self) -> &[Label] {
        &self.arc_labels
    }

    /// Words so far that the transition sequence left without a head and
    /// [`Configuration::finish`] attached.
    pub fn repaired(&self) -> usize {
        self.repaired
    }
}
