//! Greedy parsing: at each step the highest-scoring legal transition, until the configuration
//! is terminal; then the tree is completed and, for a pseudo-projective model, lowered. A [`Parser`] owns every buffer it needs and reuses it from sentence to sentence, so
//! parsing allocates nothing per sentence once the buffers have grown. This module applies a
//! model; it does not train one.
//!
//! Every step scores every feature. Stopping early was measured (issue 17; a throwaway build,
//! en_ewt dev ×8, whole-process `spoolparse parse --threads 1`, three interleaved runs): the
//! buffer features and the next K templates were scored first, and the rest only when the two
//! best legal transitions were less than M apart. Scoring 16 + 20 templates at every step
//! parsed 1.4–1.5× as fast as all 88 (16 + 5: about 2×), which puts the lookups at about 60% of
//! a parse and the rest (reading, extraction, the softmax, writing) at 40%. But the model's
//! weights are trained to be summed whole: with the stored en_ewt model, dev LAS 88.09 became
//! 81.60 (K 20, M 40), 87.68 (K 20, M 80), 87.80 (K 30, M 80) and 88.09 at M 150, and at M 80
//! too few steps stop early to gain anything (0.98–1.06×). Trained for it (a throwaway branch:
//! at each training step the perceptron also learned from the first 16 + 20 features alone, as
//! a classifier of its own, in the spirit of Strubell et al. 2015), the prefix decides far
//! more steps, but the whole model loses LAS; en_ewt dev, LAS as stored, speed from single
//! runs as above:
//!
//! | prefix learned from | LAS, all features | stopping at M 80 | M 60 | M 40 |
//! | --- | ---: | --- | --- | --- |
//! | every step | 87.32 | 87.31, 56% stop, 1.32× | | 87.10, 80%, 1.46× |
//! | 30% of steps | 87.77 | 87.77, 47%, 1.23× | 87.74, 62%, 1.29× | 87.55, 76%, 1.34× |
//! | 10% of steps | 87.84 | 87.86, 42%, 1.08× | 87.77, 58%, 1.20× | |
//!
//! About 1.25× for 0.3 LAS, then: not enough to be worth a second kind of model (its own
//! calibration, too), and far from the 1.6× that issue 17's 8× would need.

use std::ops::Range;

use crate::base::label::{Label, LabelSet};
use crate::corpus::{Column, Sentence};
use crate::learn::confidence::{probability_in, probability_of, Isotonic};
use crate::learn::perceptron::argmax;
use crate::learn::scorer::{ClassOrder, Scorer};
use crate::model::features::{encode_sentence, Extractor, Morphology, TokenAttrs, BUFFER_FEATURES};
use crate::model::file::{ModelFile, TableView};
use crate::neural::NeuralScorer;
use crate::parse::constrained::{impose, Constraints};
use crate::transition::projective::{parse_mark, Lowerer, Mark, Scheme};
use crate::transition::{Configuration, Encoding, Legal, System, Transition, TransitionSystem};

/// The transition scores of one configuration, read through the class order of the weights
/// ([`ClassOrder`]): in score order only the prefix that holds the legal transitions is
/// scored, so the weights of illegal ones are never read. The sum of the buffer features
/// ([`BUFFER_FEATURES`]) is kept and reused while they stay the same, as they do over REDUCE
/// and LEFT-ARC; the scores are exactly those of scoring all features at once.
#[derive(Debug, Clone)]
pub struct TransitionScores {
    order: ClassOrder,
    labels: usize,
    scores: Vec<f32>,
    /// Classes scored: in score order a prefix, else all.
    scored: usize,
    /// The buffer features whose sum `buffer_sum` holds, over its first `buffer_scored` classes.
    buffer: Vec<u64>,
    buffer_sum: Vec<f32>,
    buffer_scored: usize,
}

impl TransitionScores {
    /// Scores for `weights`, over an inventory of `labels` labels.
    pub fn new<S: Scorer>(weights: &S, labels: usize) -> Self {
        TransitionScores {
            order: weights.class_order(),
            labels,
            scores: vec![0.0; weights.classes()],
            scored: 0,
            buffer: vec![0; BUFFER_FEATURES],
            buffer_sum: vec![0.0; weights.classes()],
            buffer_scored: 0,
        }
    }

    /// Scores the legal transitions of a configuration with active `features` (as
    /// [`crate::model::features::Extractor::extract`] lists them).
    #[inline]
    pub fn score<S: Scorer>(&mut self, weights: &S, features: &[u64], legal: &Legal) {
        let n = match self.order {
            ClassOrder::Index => self.scores.len(),
            ClassOrder::Score => legal.score_prefix(self.labels).min(self.scores.len()),
        };
        self.scored = n;
        if features.len() < BUFFER_FEATURES {
            weights.score(features, &mut self.scores[..n]);
            return;
        }
        let (buffer, rest) = features.split_at(BUFFER_FEATURES);
        if self.buffer_scored < n || self.buffer[..] != *buffer {
            weights.score(buffer, &mut self.buffer_sum[..n]);
            self.buffer.copy_from_slice(buffer);
            self.buffer_scored = n;
        }
        self.scores[..n].copy_from_slice(&self.buffer_sum[..n]);
        weights.add(rest, &mut self.scores[..n]);
    }

    /// Whether the class at `pos` of `scores` is legal.
    #[inline]
    fn allows(&self, legal: &Legal, pos: usize) -> bool {
        match self.order {
            ClassOrder::Index => legal.allows_index(pos),
            ClassOrder::Score => legal.allows(Transition::from_score_position(pos, self.labels)),
        }
    }

    fn transition(&self, pos: usize) -> Transition {
        match self.order {
            ClassOrder::Index => Transition::from_index(pos),
            ClassOrder::Score => Transition::from_score_position(pos, self.labels),
        }
    }

    fn position(&self, t: Transition) -> usize {
        match self.order {
            ClassOrder::Index => t.index(),
            ClassOrder::Score => t.score_position(self.labels),
        }
    }

    /// Takes the scores of a configuration from `logits`, every transition's in index order (a
    /// neural model's): those of the legal prefix in score order, else all.
    #[inline]
    pub fn set_from_index_order(&mut self, logits: &[f32], legal: &Legal) {
        let n = match self.order {
            ClassOrder::Index => self.scores.len(),
            ClassOrder::Score => legal.score_prefix(self.labels).min(self.scores.len()),
        };
        self.scored = n;
        for pos in 0..n {
            self.scores[pos] = logits[self.transition(pos).index()];
        }
    }

    /// The score of `t` (meaningful for legal transitions only).
    pub fn get(&self, t: Transition) -> f32 {
        self.scores.get(self.position(t)).copied().unwrap_or(f32::NEG_INFINITY)
    }

    /// The highest-scoring legal transition, the lowest class index among equals (whatever
    /// the order); `None` if none is legal.
    #[inline]
    pub fn best(&self, legal: &Legal) -> Option<Transition> {
        let scores = &self.scores[..self.scored];
        if self.order == ClassOrder::Index {
            return argmax(scores, |i| legal.allows_index(i)).map(Transition::from_index);
        }
        let legal_runs = self.legal_runs(legal);
        // Two passes: the maximum (a branch-free loop the compiler vectorises), then the lowest
        // transition index among the legal classes that reach it (ties are rare, but parses must
        // not depend on the order classes are stored in).
        let max = legal_runs.clone().map(|run| max_of(&scores[run])).fold(f32::NEG_INFINITY, f32::max);
        let mut best: Option<(usize, usize)> = None;
        let mut first_legal = None;
        for run in legal_runs {
            first_legal = first_legal.or(Some(run.start));
            // Lane by lane into a bit mask, which the compiler turns into vector compares.
            let chunks = scores[run.clone()].chunks(LANES);
            for (c, chunk) in chunks.enumerate() {
                let mut hits = chunk.iter().enumerate().fold(0u32, |m, (i, &s)| m | u32::from(s == max) << i);
                while hits != 0 {
                    let pos = run.start + c * LANES + hits.trailing_zeros() as usize;
                    let index = self.transition(pos).index();
                    if best.is_none_or(|(_, b)| index < b) {
                        best = Some((pos, index));
                    }
                    hits &= hits - 1;
                }
            }
        }
        // Without a maximum (only NaN scores, from a corrupt model), any legal transition.
        best.map(|(pos, _)| pos).or(first_legal).map(|pos| self.transition(pos))
    }

    /// In score order, the runs of positions of the scores that hold legal transitions:
    /// SHIFT, RIGHT-ARC_root, the other RIGHT-ARCs, REDUCE, and the LEFT-ARCs but LEFT-ARC_root
    /// (never legal), each if legal and not empty, in increasing position.
    fn legal_runs(&self, legal: &Legal) -> impl Iterator<Item = Range<usize>> + Clone {
        let (l, n) = (self.labels, self.scored);
        let runs = [
            (0..1, legal.shift),
            (1..2, legal.right_root),
            (2..l + 1, legal.right),
            (l + 1..l + 2, legal.reduce),
            (l + 3..n, legal.left),
        ];
        runs.into_iter().filter_map(move |(run, allowed)| {
            (allowed && run.start < run.end.min(n)).then(|| run.start..run.end.min(n))
        })
    }

    /// The probability of legal transition `t`: softmax over the legal transitions at
    /// `temperature`.
    pub fn probability(&self, legal: &Legal, t: Transition, temperature: f32) -> f32 {
        let scores = &self.scores[..self.scored];
        match self.order {
            ClassOrder::Index => probability_of(scores, self.position(t), temperature, |pos| self.allows(legal, pos)),
            ClassOrder::Score => probability_in(scores, self.position(t), temperature, self.legal_runs(legal)),
        }
    }
}

/// Lanes of the vectorisable loops over scores.
const LANES: usize = 8;

/// The largest of `xs` (NaN ignored; −∞ if empty), lane by lane so that the compiler vectorises
/// it: a plain running maximum is a serial chain it must not reorder.
#[inline]
fn max_of(xs: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (m, &s) in lanes.iter_mut().zip(chunk) {
            *m = if s > *m { s } else { *m };
        }
    }
    lanes.into_iter().chain(tail.iter().copied()).fold(f32::NEG_INFINITY, f32::max)
}

/// What each label of `labels` says about its arc under a pseudo-projective encoding, with
/// the labels it names looked up (training interns every base and head label it encodes, so
/// `fallback` is only for a label set that does not come from it).
fn marks(labels: &LabelSet, fallback: Label) -> Vec<Mark<Label>> {
    (0..labels.len())
        .map(|i| parse_mark(labels.name(Label::from_index(i))).map(|name| labels.get(name).unwrap_or(fallback)))
        .collect()
}

/// A sentence's confidence: the mean of its arc confidences (by word, index 0 unused).
pub fn mean_confidence(arcs: &[f32]) -> f64 {
    let arcs = &arcs[1.min(arcs.len())..];
    arcs.iter().map(|&c| f64::from(c)).sum::<f64>() / arcs.len().max(1) as f64
}

/// A greedy parser over borrowed weights, with its reusable scratch space.
pub struct Parser<'m, S: Scorer> {
    system: System,
    /// With a pseudo-projective model: its scheme, each label's mark, and the work space.
    lowering: Option<(Scheme, Vec<Mark<Label>>, Lowerer)>,
    weights: S,
    labels: &'m LabelSet,
    fallback: Label,
    morphology: Morphology,
    /// Softmax temperature for probabilities; `None` skips computing them.
    temperature: Option<f32>,
    /// Post-hoc calibration of arc confidences.
    calibration: Option<&'m Isotonic>,
    config: Configuration,
    extractor: Extractor,
    scores: TransitionScores,
    attrs: Vec<TokenAttrs>,
    heads: Vec<u32>,
    arc_labels: Vec<Label>,
    /// Probability of the transition that attached each word (index 0 unused).
    arc_confidence: Vec<f32>,
    /// Sum of the log-probabilities of the last parse's transitions.
    log_tree_prob: f64,
    repaired: usize,
    /// Scratch for constrained decoding: legal transitions by score.
    ranked: Vec<(f32, Transition)>,
    /// A neural model's scorer: with it the transitions are scored by it, not by `weights`
    /// (which are then an empty table).
    neural: Option<NeuralScorer<'m>>,
    /// Per word (index 0 unused), after a constrained parse: the rank (0: the best) by score,
    /// among the legal transitions, of the transition that attached it.
    ranks: Vec<u32>,
}

/// [`Parser::ranks`] of a constrained arc that no transition built.
pub const NOT_BUILT: u32 = u32::MAX;

impl<'m> Parser<'m, TableView<'m>> {
    /// A parser for a model file.
    pub fn new(model: &'m ModelFile) -> Self {
        let meta = model.meta();
        Parser::from_parts(model.encoding(), model.weights(), &meta.labels, meta.fallback)
            .with_morphology(meta.morphology)
            .with_neural(model.neural().map(NeuralScorer::new))
    }
}

impl<'m, S: Scorer> Parser<'m, S> {
    /// A parser for any weights of a model with `encoding`, as during training.
    pub fn from_parts(encoding: Encoding, weights: S, labels: &'m LabelSet, fallback: Label) -> Self {
        let system = encoding.system;
        Parser {
            system,
            lowering: encoding.projective.map(|scheme| (scheme, marks(labels, fallback), Lowerer::new())),
            labels,
            fallback,
            morphology: Morphology::Columns,
            temperature: None,
            calibration: None,
            config: Configuration::new(0),
            extractor: Extractor::new(system),
            scores: TransitionScores::new(&weights, labels.len()),
            weights,
            attrs: Vec::new(),
            heads: Vec::new(),
            arc_labels: Vec::new(),
            arc_confidence: Vec::new(),
            log_tree_prob: 0.0,
            repaired: 0,
            ranked: Vec::new(),
            ranks: Vec::new(),
            neural: None,
        }
    }

    /// Scores transitions with a neural model's `scorer` (none: with the weights).
    pub fn with_neural(mut self, scorer: Option<NeuralScorer<'m>>) -> Self {
        self.neural = scorer;
        self
    }

    /// Whether a neural model scores the transitions: it reads the words' forms, so sentences
    /// must come with them ([`Parser::parse_words`]).
    pub fn is_neural(&self) -> bool {
        self.neural.is_some()
    }

    /// What features read for LEMMA and FEATS (default the columns); must match how the
    /// weights were trained.
    pub fn with_morphology(mut self, morphology: Morphology) -> Self {
        self.morphology = morphology;
        self
    }

    /// Computes transition probabilities (softmax over legal transitions at `temperature`) and
    /// from them arc and sentence confidences; off by default, as it costs time.
    pub fn with_confidence(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Maps arc confidences through `calibration` (see [`crate::learn::confidence::Isotonic`]).
    pub fn with_calibration(mut self, calibration: Option<&'m Isotonic>) -> Self {
        self.calibration = calibration;
        self
    }

    /// Parses a sentence given its token attributes (node 0 first). Heads and labels are then
    /// available from [`Parser::heads`] and [`Parser::labels`].
    pub fn parse_attrs(&mut self, attrs: &[TokenAttrs]) {
        self.decode(attrs, &[], None);
    }

    /// [`Parser::parse_attrs`] with the words' forms, which a neural model reads.
    pub fn parse_words(&mut self, attrs: &[TokenAttrs], forms: &[&str]) {
        self.decode(attrs, forms, None);
    }

    /// Parses a sentence (token attributes, node 0 first) into the best tree the model finds
    /// among those that hold `constraints` (a sentence of as many words): at each step the
    /// highest-scoring transition of those that lose the fewest constrained arcs (see
    /// [`crate::parse::constrained`]). The result holds every constraint; a constrained word's
    /// arc confidence is 1.
    pub fn parse_constrained(&mut self, attrs: &[TokenAttrs], constraints: &Constraints) {
        self.parse_words_constrained(attrs, &[], constraints);
    }

    /// [`Parser::parse_constrained`] with the words' forms, which a neural model reads.
    pub fn parse_words_constrained(&mut self, attrs: &[TokenAttrs], forms: &[&str], constraints: &Constraints) {
        debug_assert_eq!(attrs.len(), constraints.len() + 1);
        self.decode(attrs, forms, Some(constraints));
        // An arc no transition built (no projective tree holds it with the others) is imposed
        // below: the model never chose it.
        for arc in constraints.arcs() {
            let w = arc.word as usize;
            if self.heads[w] != arc.head || arc.label.is_some_and(|l| l != self.arc_labels[w]) {
                self.ranks[w] = NOT_BUILT;
            }
        }
        impose(&mut self.heads, &mut self.arc_labels, constraints, self.fallback);
        for arc in constraints.arcs() {
            self.arc_confidence[arc.word as usize] = 1.0;
        }
    }

    /// The greedy parse of a sentence (`forms` may be empty for a linear model, which does
    /// not read them).
    fn decode(&mut self, attrs: &[TokenAttrs], forms: &[&str], constraints: Option<&Constraints>) {
        let n = attrs.len() - 1;
        if let Some(neural) = &mut self.neural {
            neural.begin(attrs, forms);
        }
        self.config.reset(n);
        self.arc_confidence.clear();
        self.arc_confidence.resize(n + 1, 0.0);
        self.ranks.clear();
        if constraints.is_some() {
            self.ranks.resize(n + 1, 0);
        }
        self.log_tree_prob = 0.0;
        let system = self.system;
        while !system.is_terminal(&self.config) {
            let legal = system.legal(&self.config);
            match &mut self.neural {
                Some(neural) => self.scores.set_from_index_order(neural.logits(&self.config), &legal),
                None => {
                    let feats = self.extractor.extract(&self.config, attrs);
                    self.scores.score(&self.weights, feats, &legal);
                }
            }
            // Neither system has a dead end: something is legal.
            let (t, rank) = match constraints {
                None => (self.scores.best(&legal), 0),
                Some(c) => self.best_keeping(&legal, c).map_or((None, 0), |(t, rank)| (Some(t), rank)),
            };
            let t = t.unwrap_or(Transition::Shift);
            // Only a constrained parse ranks: the plain one is the hot path.
            if let Some(w) = constraints.and_then(|_| system.attached(&self.config, t)) {
                self.ranks[w as usize] = rank;
            }
            if let Some(temperature) = self.temperature {
                let p = self.scores.probability(&legal, t, temperature);
                self.log_tree_prob += f64::from(p).ln();
                if let Some(w) = system.attached(&self.config, t) {
                    self.arc_confidence[w as usize] = p;
                }
            }
            system.apply(&mut self.config, t);
        }
        if let Some(iso) = self.calibration {
            for c in self.arc_confidence.iter_mut().skip(1) {
                *c = iso.apply(*c);
            }
        }
        // Words attached by `finish` below have raw confidence 0 (no transition vouched for
        // them); the calibrator above maps that to how often such words are right.
        self.repaired += system.finish(&self.config, self.fallback, &mut self.heads, &mut self.arc_labels);
        if let Some((scheme, marks, lowerer)) = &mut self.lowering {
            lowerer.lower(&mut self.heads, &mut self.arc_labels, |l| marks[l.index()], *scheme);
        }
    }

    /// The highest-scoring legal transition (the lowest index among equals) of those of the
    /// least cost against `constraints`. Costs are computed in score order and the first that
    /// costs nothing is taken: no cost is lower, and it is the best of those that cost nothing.
    /// Usually that is the first tried, instead of a cost for each of the hundred or so legal
    /// transitions. With it, its rank in score order (0: the best).
    fn best_keeping(&mut self, legal: &Legal, constraints: &Constraints) -> Option<(Transition, u32)> {
        let ranked = &mut self.ranked;
        ranked.clear();
        ranked.extend(legal.transitions(self.labels.len()).map(|t| (self.scores.get(t), t)));
        ranked.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.index().cmp(&b.1.index())));
        let mut best: Option<(Transition, u32, u32)> = None;
        for (rank, &(_, t)) in ranked.iter().enumerate() {
            let cost = self.system.cost(&self.config, constraints.gold(), t);
            if cost == 0 {
                return Some((t, rank as u32));
            }
            if best.is_none_or(|(_, c, _)| cost < c) {
                best = Some((t, cost, rank as u32));
            }
        }
        best.map(|(t, _, rank)| (t, rank))
    }

    /// Parses `sent` (as given: its tags are read, its arcs are not) into the best tree that
    /// holds `constraints` ([`Parser::parse_constrained`]); the tree is then in
    /// [`Parser::heads`] and [`Parser::labels`], and each constrained word's rank in
    /// [`Parser::ranks`].
    pub fn parse_sentence_constrained(&mut self, sent: &Sentence, constraints: &Constraints) {
        let mut attrs = std::mem::take(&mut self.attrs);
        encode_sentence(sent, self.morphology, &mut attrs);
        let forms = self.forms_of(sent);
        self.parse_words_constrained(&attrs, &forms, constraints);
        self.attrs = attrs;
    }

    /// For a neural model that tags ([`crate::model::neural::Spec::tags`]), whether its words
    /// read the analysis's tags ([`crate::model::neural::Spec::reads_analysis`]); `None` for a
    /// model that does not tag.
    pub fn tags_over_analysis(&self) -> Option<bool> {
        self.neural.as_ref().filter(|n| n.tags() > 0).map(|n| n.reads_analysis())
    }

    /// For a neural model that tags ([`crate::model::neural::Spec::tags`]), the scores of
    /// every tag for each word of `sent`, tag set size per word; its encoding is kept for
    /// the parse of the same words that follows. `None` for a model that does not tag.
    pub fn tag_scores(&mut self, sent: &Sentence) -> Option<&[f32]> {
        if self.neural.as_ref().is_none_or(|n| n.tags() == 0) {
            return None;
        }
        encode_sentence(sent, self.morphology, &mut self.attrs);
        let forms = self.forms_of(sent);
        self.neural.as_mut().map(|n| n.tag(&self.attrs, &forms))
    }

    /// The forms of `sent`'s words, where the model reads them (a neural one); else none.
    pub fn forms_of<'s>(&self, sent: &'s Sentence) -> Vec<&'s str> {
        match self.neural {
            Some(_) => sent.words().map(|w| w.get(Column::Form)).collect(),
            None => Vec::new(),
        }
    }

    /// After a constrained parse, per word (index 0 unused): the rank by score (0: the
    /// model's best), among the legal transitions of its step, of the transition that
    /// attached it. A word whose arc the model would build itself ranks 0; one whose given
    /// head or label the model finds implausible ranks far down (a sentence has about twice as
    /// many legal transitions as the model has labels). A constrained arc that the transitions
    /// did not build (one no projective tree holds with the others, imposed afterwards) ranks
    /// [`NOT_BUILT`]; a word without a constraint attached after the transitions ranks 0.
    pub fn ranks(&self) -> &[u32] {
        &self.ranks
    }

    /// Parses `sent` and writes HEAD and DEPREL of its words.
    pub fn parse(&mut self, sent: &mut Sentence) {
        let mut attrs = std::mem::take(&mut self.attrs);
        encode_sentence(sent, self.morphology, &mut attrs);
        let forms = self.forms_of(sent);
        self.parse_words(&attrs, &forms);
        drop(forms);
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

    /// Per word (index 0 unused), the probability of the transition that attached it in the
    /// last parse; all 0 unless [`Parser::with_confidence`] was asked for.
    pub fn arc_confidence(&self) -> &[f32] {
        &self.arc_confidence
    }

    /// The last parse's sentence confidence (mean arc confidence) and tree probability (the
    /// product of its transitions' probabilities).
    pub fn sentence_confidence(&self) -> (f64, f64) {
        (mean_confidence(&self.arc_confidence), self.log_tree_prob.exp())
    }

    /// The natural logarithm of the last parse's tree probability (which underflows to 0 for
    /// long sentences where this does not).
    pub fn log_tree_probability(&self) -> f64 {
        self.log_tree_prob
    }

    /// Words so far that the transition sequence left without a head and
    /// [`Configuration::complete`] attached.
    pub fn repaired(&self) -> usize {
        self.repaired
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Scores in score order for `labels` labels, drawn from few values so that ties are common.
    fn scores_in_score_order(rng: &mut impl Rng, labels: usize, legal: &Legal) -> TransitionScores {
        let n = legal.score_prefix(labels);
        let mut scores = vec![f32::NAN; Transition::count(labels)];
        for s in &mut scores[..n] {
            *s = f32::from(rng.gen_range(0u8..4)) * 0.5;
        }
        TransitionScores {
            order: ClassOrder::Score,
            labels,
            scores,
            scored: n,
            buffer: Vec::new(),
            buffer_sum: Vec::new(),
            buffer_scored: 0,
        }
    }

    #[test]
    fn best_in_score_order_is_the_legal_maximum_with_the_lowest_transition_index() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..2000 {
            let labels = rng.gen_range(1..40);
            let legal = Legal {
                shift: rng.gen_bool(0.8),
                reduce: rng.gen_bool(0.5),
                left: rng.gen_bool(0.5),
                right: rng.gen_bool(0.7),
                right_root: rng.gen_bool(0.2),
            };
            let ts = scores_in_score_order(&mut rng, labels, &legal);
            // The plain definition: over transition indices, the first legal one with the
            // largest score.
            let mut expected: Option<(Transition, f32)> = None;
            for t in legal.transitions(labels) {
                let s = ts.scores[t.score_position(labels)];
                if expected.is_none_or(|(_, m)| s > m) {
                    expected = Some((t, s));
                }
            }
            assert_eq!(ts.best(&legal), expected.map(|(t, _)| t), "{legal:?}, {labels} labels");
        }
    }
}
