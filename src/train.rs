//! Training: reading gold treebanks into oracle-ready form, and the online training loops of
//! Goldberg & Nivre (2012): Algorithm 2 (static oracle) and Algorithm 3 (dynamic oracle with
//! `CHOOSE_NEXT_EXP` exploration), both with the averaged perceptron.
//!
//! Training is deterministic for a given seed: the sentence order of each epoch and every
//! exploration coin come from one ChaCha8 stream. After each epoch the averaged weights are
//! scored on the dev set, and the epoch with the best dev LAS is kept. This module drives
//! learning; the pieces it drives live in `arc_eager`, `oracle`, `features` and `perceptron`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::arc_eager::{Configuration, Transition};
use crate::confidence::{fit_temperature, Decision, Isotonic, Reliability};
use crate::corpus::tree::{gold_heads, is_projective, root_count};
use crate::corpus::{Column, CorpusError, Format, Reader, Sentence};
use crate::eval::{attachment, Counts, Scores};
use crate::features::{encode_sentence, Extractor, TokenAttrs, FEATURE_SET};
use crate::hash::{combine, hash_str};
use crate::label::{Label, LabelSet};
use crate::logistic::{self, AdaGradRda, RdaOptions};
use crate::model::{Model, TrainingInfo};
use crate::oracle::{static_oracle, zero_cost, GoldTree};
use crate::parser::{Parser, TransitionScores};
use crate::perceptron::{argmax, Perceptron, Weights};
use crate::scorer::Scorer;
use crate::tagger::{accuracy, jackknife, load_tagging, train_tagger, TagSet, Tagger, TaggerModel};

/// Which oracle drives training.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OracleKind {
    /// Algorithm 2: follow and learn the static oracle's single canonical sequence.
    Static,
    /// Algorithm 3: learn the zero-cost set of the dynamic oracle, exploring after epoch `k`.
    Dynamic,
}

impl OracleKind {
    /// The name used on the command line and in model metadata.
    pub fn name(self) -> &'static str {
        match self {
            OracleKind::Static => "static",
            OracleKind::Dynamic => "dynamic",
        }
    }
}

/// Training hyperparameters.
#[derive(Debug, Clone)]
pub struct TrainOptions {
    pub learner: LearnerKind,
    pub oracle: OracleKind,
    pub epochs: u32,
    /// `CHOOSE_NEXT_EXP`: explore only after this many epochs.
    pub explore_k: u32,
    /// `CHOOSE_NEXT_EXP`: probability of falling back on a zero-cost transition.
    pub explore_p: f64,
    pub seed: u64,
    /// AdaGrad-RDA settings for the logistic learner.
    pub rda: RdaOptions,
}

/// Which learner fits the weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LearnerKind {
    /// Averaged perceptron, updated when the prediction is not zero-cost (Goldberg & Nivre 2012).
    Perceptron,
    /// Multinomial logistic regression with AdaGrad-RDA and L1, exploring by sampling from the
    /// model after `explore_k` epochs (Goldberg 2013, Algorithms 2 and 3).
    Logistic,
}

impl Default for TrainOptions {
    /// The settings of the paper's experiments: 15 epochs, k = 2, p = 0.1.
    fn default() -> Self {
        TrainOptions {
            learner: LearnerKind::Perceptron,
            oracle: OracleKind::Dynamic,
            epochs: 15,
            explore_k: 2,
            explore_p: 0.1,
            seed: 1,
            rda: RdaOptions::default(),
        }
    }
}

/// A training sentence: token attributes and gold tree.
#[derive(Debug, Clone)]
pub struct TrainSentence {
    pub attrs: Vec<TokenAttrs>,
    pub gold: GoldTree,
}

/// A dev sentence: token attributes and what evaluation compares against.
#[derive(Debug, Clone)]
pub struct DevSentence {
    pub attrs: Vec<TokenAttrs>,
    pub heads: Vec<usize>,
    pub deprels: Vec<String>,
    pub upos: Vec<String>,
}

/// Training data ready for the oracles, with what was left out.
#[derive(Debug, Default)]
pub struct TrainingSet {
    pub sentences: Vec<TrainSentence>,
    pub labels: Option<LabelSet>,
    pub words: usize,
    pub skipped_nonprojective: usize,
    pub skipped_root: usize,
    /// Order-sensitive hash of every token line read (see `TrainingInfo::train_fingerprint`).
    pub fingerprint: u64,
    /// Whether features read LEMMA and FEATS (see `Model::morphology`).
    pub morphology: bool,
}

/// Reads gold training files. The root label is taken from the first root arc seen; sentences
/// that are not projective, or not single-rooted with that label only on the root arc, are
/// skipped and counted.
pub fn load_training(paths: &[PathBuf]) -> Result<TrainingSet, CorpusError> {
    load_training_with(paths, true, &mut |_, _| {})
}

/// [`load_training`], with features reading LEMMA and FEATS only with `morphology`, and
/// `retag(i, sentence)` called on the `i`-th sentence of the files (counting from 0, skipped
/// ones included) before its features are taken, to put predicted tags in.
pub fn load_training_with(
    paths: &[PathBuf],
    morphology: bool,
    retag: &mut dyn FnMut(usize, &mut Sentence),
) -> Result<TrainingSet, CorpusError> {
    let mut set = TrainingSet { morphology, ..TrainingSet::default() };
    let mut index = 0;
    for path in paths {
        for sent in Reader::open(path, Format::from_path(path))? {
            let mut sent = sent?;
            for t in sent.token_lines() {
                set.fingerprint = combine(set.fingerprint, hash_str(t.text()));
            }
            retag(index, &mut sent);
            index += 1;
            let heads = gold_heads(&sent, path)?;
            let deprels: Vec<&str> = sent.words().map(|w| w.get(Column::Deprel)).collect();
            let labels = set.labels.get_or_insert_with(|| {
                let root = heads.iter().position(|&h| h == 0).map_or("root", |i| deprels[i]);
                LabelSet::new(root)
            });
            let root_name = labels.name(Label::ROOT).to_string();
            let root_ok =
                root_count(&heads) == 1 && heads.iter().zip(&deprels).all(|(&h, &d)| (h == 0) == (d == root_name));
            if !root_ok {
                set.skipped_root += 1;
                continue;
            }
            if !is_projective(&heads) {
                set.skipped_nonprojective += 1;
                continue;
            }
            let arc_labels: Vec<Label> = deprels.iter().map(|d| labels.intern(d)).collect();
            let mut attrs = Vec::new();
            encode_sentence(&sent, morphology, &mut attrs);
            set.words += sent.len();
            set.sentences.push(TrainSentence { attrs, gold: GoldTree::new(&heads, &arc_labels) });
        }
    }
    Ok(set)
}

/// Reads a gold dev file for per-epoch evaluation.
pub fn load_dev(path: &Path) -> Result<Vec<DevSentence>, CorpusError> {
    load_dev_with(path, true, &mut |_| {})
}

/// [`load_dev`] with the `morphology` switch and a `retag` hook as in [`load_training_with`].
pub fn load_dev_with(
    path: &Path,
    morphology: bool,
    retag: &mut dyn FnMut(&mut Sentence),
) -> Result<Vec<DevSentence>, CorpusError> {
    let mut out = Vec::new();
    for sent in Reader::open(path, Format::from_path(path))? {
        let mut sent = sent?;
        let heads = gold_heads(&sent, path)?;
        // Evaluation compares against gold UPOS (punctuation), so take it before retagging.
        let upos = sent.words().map(|w| w.get(Column::Upos).to_string()).collect();
        retag(&mut sent);
        let mut attrs = Vec::new();
        encode_sentence(&sent, morphology, &mut attrs);
        out.push(DevSentence {
            attrs,
            heads,
            deprels: sent.words().map(|w| w.get(Column::Deprel).to_string()).collect(),
            upos,
        });
    }
    Ok(out)
}

/// Parses the dev sentences with `weights` and scores them.
pub fn evaluate_dev<S: Scorer>(dev: &[DevSentence], weights: S, labels: &LabelSet, fallback: Label) -> Scores {
    let mut parser = Parser::from_parts(weights, labels, fallback);
    let mut counts = Counts::default();
    for s in dev {
        parser.parse_attrs(&s.attrs);
        for i in 0..s.heads.len() {
            let w = i + 1;
            let label = labels.name(parser.labels()[w]);
            counts.add(s.heads[i], &s.deprels[i], &s.upos[i], parser.heads()[w] as usize, label);
        }
    }
    counts.scores()
}

/// The greedy decisions of `weights` on the dev sentences whose gold tree the dynamic oracle
/// handles (projective, one root word), each with its legal scores and zero-cost set: the data a
/// temperature is fitted on.
pub fn dev_decisions<S: Scorer>(dev: &[DevSentence], weights: S, labels: &LabelSet) -> Vec<Decision> {
    // A label the model does not know can never be predicted: map it beyond the inventory.
    let unknown = Label::from_index(labels.len());
    let mut out = Vec::new();
    let mut config = Configuration::new(0);
    let mut extractor = Extractor::new();
    let mut scores = TransitionScores::new(&weights, labels.len());
    let mut zero = Vec::new();
    for s in dev {
        if root_count(&s.heads) != 1 || !is_projective(&s.heads) {
            continue;
        }
        let arc_labels: Vec<Label> = s
            .heads
            .iter()
            .zip(&s.deprels)
            .map(|(&h, d)| if h == 0 { Label::ROOT } else { labels.get(d).unwrap_or(unknown) })
            .collect();
        let gold = GoldTree::new(&s.heads, &arc_labels);
        config.reset(s.heads.len());
        while !config.is_terminal() {
            let legal = config.legal();
            scores.score(&weights, extractor.extract(&config, &s.attrs), &legal);
            zero_cost(&config, &gold, labels.len(), &mut zero);
            let mut d = Decision::default();
            for t in legal.transitions(labels.len()) {
                d.scores.push(scores.get(t));
                d.zero_cost.push(zero.contains(&t.index()));
            }
            if d.zero_cost.contains(&true) {
                out.push(d);
            }
            config.apply(scores.best(&legal).unwrap_or(Transition::Shift));
        }
    }
    out
}

/// Per dev sentence, per word: the raw confidence of its arc (the probability of the transition
/// that attached it at `temperature`) and whether the arc is right (head and universal label).
pub fn dev_arc_pairs(
    dev: &[DevSentence],
    weights: &Weights,
    labels: &LabelSet,
    fallback: Label,
    temperature: f32,
) -> Vec<Vec<(f32, f32)>> {
    let mut parser = Parser::from_parts(weights, labels, fallback).with_confidence(temperature);
    dev.iter()
        .map(|s| {
            parser.parse_attrs(&s.attrs);
            (0..s.heads.len())
                .map(|i| {
                    let w = i + 1;
                    let head = parser.heads()[w] as usize;
                    let (_, right) = attachment(s.heads[i], &s.deprels[i], head, labels.name(parser.labels()[w]));
                    (parser.arc_confidence()[w], f32::from(u8::from(right)))
                })
                .collect()
        })
        .collect()
}

/// Arc-level ECE of raw confidences, and of isotonic-calibrated ones estimated honestly by
/// 2-fold cross-fitting (calibrator fitted on even sentences, measured on odd ones, and back).
pub fn arc_ece(pairs: &[Vec<(f32, f32)>]) -> (f64, f64) {
    let mut raw = Reliability::default();
    let mut cross = Reliability::default();
    for half in 0..2 {
        let mut fit_on: Vec<(f32, f32)> =
            pairs.iter().enumerate().filter(|(i, _)| i % 2 != half).flat_map(|(_, p)| p.iter().copied()).collect();
        let Some(iso) = Isotonic::fit(&mut fit_on) else { continue };
        for (_, sent) in pairs.iter().enumerate().filter(|(i, _)| i % 2 == half) {
            for &(c, y) in sent {
                raw.add(f64::from(c), f64::from(y));
                cross.add(f64::from(iso.apply(c)), f64::from(y));
            }
        }
    }
    (raw.ece(), cross.ece())
}

/// What happened in one epoch.
#[derive(Debug, Clone)]
pub struct EpochReport {
    pub epoch: u32,
    pub words: usize,
    pub seconds: f64,
    /// Transitions whose prediction was wrong (not zero-cost / not the static oracle's).
    pub errors: usize,
    pub transitions: usize,
    pub dev: Option<Scores>,
}

/// Events reported during training, for progress bars and logs.
pub enum Progress<'a> {
    /// `done` of `total` sentences of epoch `epoch` are through.
    Sentences { epoch: u32, done: usize, total: usize },
    /// An epoch is finished.
    Epoch(&'a EpochReport),
}

/// The label for repaired (headless) words: `dep` if the treebank has it, else the most
/// frequent non-root label.
fn fallback_label(set: &TrainingSet, labels: &LabelSet) -> Label {
    if let Some(l) = labels.get("dep") {
        return l;
    }
    let mut freq = vec![0usize; labels.len()];
    for s in &set.sentences {
        for w in 1..=s.gold.len() as u32 {
            freq[s.gold.label(w).index()] += 1;
        }
    }
    freq[0] = 0;
    let best = (0..freq.len()).max_by_key(|&i| freq[i]).unwrap_or(0);
    Label::from_index(best)
}

/// A learner being trained.
enum Learner {
    Perceptron(Perceptron),
    /// The optimiser and per-class scratch: legal and zero-cost masks, probabilities, gradient.
    Logistic {
        rda: AdaGradRda,
        legal: Vec<bool>,
        zero: Vec<bool>,
        probs: Vec<f32>,
        gradient: Vec<f32>,
    },
}

impl Learner {
    fn score(&self, features: &[u64], scores: &mut [f32]) {
        match self {
            Learner::Perceptron(p) => p.score(features, scores),
            Learner::Logistic { rda, .. } => rda.score(features, scores),
        }
    }

    /// The weights to parse with: averaged for the perceptron, current for AdaGrad-RDA.
    fn weights(&self) -> Weights {
        match self {
            Learner::Perceptron(p) => p.averaged(),
            Learner::Logistic { rda, .. } => rda.weights(),
        }
    }
}

/// Samples a class from a distribution (Goldberg 2013, Algorithm 3, line 9).
fn sample(probs: &[f32], rng: &mut ChaCha8Rng) -> Option<usize> {
    let mut r = rng.gen::<f32>();
    for (c, &p) in probs.iter().enumerate() {
        if p > 0.0 {
            if r < p {
                return Some(c);
            }
            r -= p;
        }
    }
    probs.iter().rposition(|&p| p > 0.0)
}

/// `CHOOSE_NEXT_EXP` (Goldberg & Nivre 2012, Algorithm 3): after `k` epochs follow the
/// prediction with probability `1 − p`; otherwise `CHOOSE_NEXT_AMB`: the prediction if it has
/// zero cost, else a random zero-cost transition.
fn choose_next(epoch: u32, opts: &TrainOptions, predicted: usize, zero: &[usize], rng: &mut ChaCha8Rng) -> usize {
    if epoch > opts.explore_k && rng.gen::<f64>() > opts.explore_p {
        return predicted;
    }
    if zero.contains(&predicted) {
        predicted
    } else {
        zero[rng.gen_range(0..zero.len())]
    }
}

/// Trains a model on `train`, keeping the epoch with the best LAS on `dev` (the last epoch
/// without dev data).
pub fn train(
    set: &TrainingSet,
    dev: Option<&[DevSentence]>,
    opts: &TrainOptions,
    mut info: TrainingInfo,
    progress: &mut dyn FnMut(Progress),
) -> Model {
    let labels = set.labels.clone().unwrap_or_else(|| LabelSet::new("root"));
    let fallback = fallback_label(set, &labels);
    let classes = Transition::count(labels.len());
    let mut learner = match opts.learner {
        LearnerKind::Perceptron => Learner::Perceptron(Perceptron::new(classes)),
        LearnerKind::Logistic => Learner::Logistic {
            rda: AdaGradRda::new(classes, opts.rda, set.words),
            legal: vec![false; classes],
            zero: vec![false; classes],
            probs: vec![0.0; classes],
            gradient: vec![0.0; classes],
        },
    };
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut order: Vec<usize> = (0..set.sentences.len()).collect();
    let mut config = Configuration::new(0);
    let mut extractor = Extractor::new();
    let mut scores = vec![0.0f32; classes];
    let mut zero: Vec<usize> = Vec::with_capacity(classes);
    let mut best: Option<(f64, u32, Weights, Scores)> = None;

    for epoch in 1..=opts.epochs {
        let started = Instant::now();
        order.shuffle(&mut rng);
        let (mut errors, mut transitions) = (0usize, 0usize);
        for (done, &i) in order.iter().enumerate() {
            let sent = &set.sentences[i];
            config.reset(sent.gold.len());
            while !config.is_terminal() {
                let feats = extractor.extract(&config, &sent.attrs);
                learner.score(feats, &mut scores);
                let legal = config.legal();
                let predicted = argmax(&scores, |c| legal.allows_index(c)).unwrap_or(0);
                // The set of correct transitions: the static oracle's one, or the zero-cost set.
                match opts.oracle {
                    OracleKind::Static => {
                        zero.clear();
                        zero.push(static_oracle(&config, &sent.gold).unwrap_or(Transition::Shift).index());
                    }
                    OracleKind::Dynamic => zero_cost(&config, &sent.gold, labels.len(), &mut zero),
                }
                debug_assert!(!zero.is_empty(), "the zero-cost set is never empty");
                let wrong = !zero.contains(&predicted);
                errors += usize::from(wrong);
                let best_zero = argmax(&scores, |c| zero.contains(&c)).unwrap_or(zero[0]);
                let next = match &mut learner {
                    Learner::Perceptron(p) => {
                        if wrong {
                            p.update(feats, best_zero, predicted);
                        }
                        p.tick();
                        match opts.oracle {
                            OracleKind::Static => best_zero,
                            OracleKind::Dynamic => choose_next(epoch, opts, predicted, &zero, &mut rng),
                        }
                    }
                    Learner::Logistic { rda, legal: legal_mask, zero: zero_mask, probs, gradient: grad } => {
                        for c in 0..classes {
                            legal_mask[c] = legal.allows_index(c);
                            zero_mask[c] = zero.contains(&c);
                        }
                        logistic::gradient(&scores, legal_mask, zero_mask, probs, grad);
                        rda.update(feats, grad);
                        if opts.oracle == OracleKind::Static || epoch <= opts.explore_k {
                            best_zero
                        } else {
                            sample(probs, &mut rng).unwrap_or(predicted)
                        }
                    }
                };
                transitions += 1;
                config.apply(Transition::from_index(next));
            }
            if done % 256 == 0 {
                progress(Progress::Sentences { epoch, done, total: order.len() });
            }
        }
        progress(Progress::Sentences { epoch, done: order.len(), total: order.len() });
        let train_seconds = started.elapsed().as_secs_f64();
        let weights = learner.weights();
        let dev_scores = dev.map(|d| evaluate_dev(d, &weights, &labels, fallback));
        let report =
            EpochReport { epoch, words: set.words, seconds: train_seconds, errors, transitions, dev: dev_scores };
        progress(Progress::Epoch(&report));
        let las = dev_scores.map_or(f64::from(epoch), |s| s.las);
        if best.as_ref().is_none_or(|(b, ..)| las > *b) {
            best = Some((las, epoch, weights, dev_scores.unwrap_or_default()));
        }
    }

    let (_, best_epoch, weights, dev_scores) = best.unwrap_or_else(|| (0.0, 0, learner.weights(), Scores::default()));
    let temperature = dev.map_or(1.0, |d| fit_temperature(&dev_decisions(d, &weights, &labels)));
    let arc_calibration = dev.and_then(|d| {
        let pairs = dev_arc_pairs(d, &weights, &labels, fallback, temperature);
        let (raw, cross) = arc_ece(&pairs);
        info.dev_arc_ece_raw = raw;
        info.dev_arc_ece_crossfit = cross;
        Isotonic::fit(&mut pairs.into_iter().flatten().collect::<Vec<_>>())
    });
    info.oracle = opts.oracle.name().to_string();
    info.epochs = opts.epochs;
    info.best_epoch = best_epoch;
    info.explore_k = opts.explore_k;
    info.explore_p = opts.explore_p;
    info.seed = opts.seed;
    info.train_sentences = set.sentences.len();
    info.train_words = set.words;
    info.train_fingerprint = set.fingerprint;
    info.skipped_nonprojective = set.skipped_nonprojective;
    info.skipped_root = set.skipped_root;
    info.dev_uas = dev_scores.uas;
    info.dev_las = dev_scores.las;
    Model {
        feature_set: FEATURE_SET.to_string(),
        labels,
        fallback,
        weights,
        info,
        morphology: set.morphology,
        tagger: None,
        temperature,
        arc_calibration,
    }
}

/// How to train a tagger alongside the parser.
#[derive(Debug, Clone, Copy)]
pub struct TaggerOptions {
    pub epochs: u32,
    /// Folds for jackknifing the parser's training tags; below 2 the parser sees gold tags.
    pub jackknife: usize,
}

/// Training and dev data ready for [`train`], and the tagger trained on the way.
pub struct Prepared {
    pub set: TrainingSet,
    pub dev: Option<Vec<DevSentence>>,
    pub tagger: Option<TaggerModel>,
    /// Tagger UPOS and XPOS accuracy on the dev file.
    pub dev_tagging: Option<(f64, f64)>,
}

/// Reads the training and dev files. With a tagger: trains it on all training data, gives the
/// parser jackknifed tags (or gold tags without jackknifing) and no LEMMA/FEATS (tokenized text
/// has none), and tags the dev file with the final tagger, so that dev scores and the choice of
/// the best epoch reflect parsing of tokenized text.
pub fn prepare(
    train: &[PathBuf],
    dev: Option<&Path>,
    tagger: Option<TaggerOptions>,
    seed: u64,
) -> Result<Prepared, CorpusError> {
    let Some(topts) = tagger else {
        let set = load_training(train)?;
        let dev = dev.map(load_dev).transpose()?;
        return Ok(Prepared { set, dev, tagger: None, dev_tagging: None });
    };
    let mut tags = TagSet::default();
    let tag_sentences = load_tagging(train, &mut tags)?;
    let predicted =
        (topts.jackknife >= 2).then(|| jackknife(&tag_sentences, &tags, topts.jackknife, topts.epochs, seed));
    let model = train_tagger(&tag_sentences, &tags, topts.epochs, seed);
    let set = load_training_with(train, false, &mut |i, sent| {
        if let Some(p) = predicted.as_ref().and_then(|p| p.get(i)) {
            for (w, &t) in p.iter().enumerate() {
                let (upos, xpos) = tags.get(t);
                sent.set_tags(w + 1, upos, xpos);
            }
        }
    })?;
    let mut tagger = Tagger::from_model(&model);
    let (dev, dev_tagging) = match dev {
        None => (None, None),
        Some(path) => {
            let mut gold_tags = TagSet::default();
            let gold = load_tagging(&[path.to_path_buf()], &mut gold_tags)?;
            let acc = accuracy(&mut tagger, &gold, &gold_tags);
            (Some(load_dev_with(path, false, &mut |sent| tagger.tag(sent))?), Some(acc))
        }
    };
    Ok(Prepared { set, dev, tagger: Some(model), dev_tagging })
}
