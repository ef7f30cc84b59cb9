//! Training a neural model's parser: the dynamic oracle with exploration (Goldberg & Nivre
//! 2012, Algorithm 3, as the linear models train; Kiperwasser & Goldberg 2016 trained the same
//! over BiLSTM vectors) in minibatches. Per batch, candle encodes the sentences
//! ([`Network::encode`]); each sentence is then parsed greedily by the parse-time kernels over
//! those vectors ([`Mlp`]), following the model's prediction after `explore_k` epochs with
//! probability `1 - explore_p` and a zero-cost transition otherwise; every decision's loss
//! ([`Network::loss`]: −log of the softmax mass of the zero-cost transitions) is summed and
//! back-propagated through the MLP and the encoder, and Adam takes a step.
//!
//! Deterministic for a seed: the sentence order, the initial weights, dropout and every
//! exploration coin come from one ChaCha8 stream. After each epoch the caller scores the
//! weights on its dev data and the best epoch is kept.
//!
//! [`fine_tune`] takes a trained model further on the user's sentences (a retraining cycle's
//! corrections), the same steps from the model's weights, each batch mixing in a share of the
//! base treebank. This module drives learning; what it learns from is given to it (see
//! `crate::train::neural`).

use std::time::Instant;

use candle_core::DType;
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::model::features::TokenAttrs;
use crate::transition::{Configuration, GoldTree, System, Transition, TransitionSystem, NONE};

use super::kernels::Mlp;
use super::network::{Decisions, Dropout, Network, TagTargets, Words, OUT};
use crate::model::neural::NeuralModel;
use crate::model::neural::Spec;

/// A sentence to learn from.
pub struct Example {
    pub attrs: Vec<TokenAttrs>,
    pub forms: Vec<String>,
    pub gold: GoldTree,
    /// Per word, its gold tag in the model's tag set (a model that tags learns them,
    /// [`crate::model::neural::Spec::tags`]); [`super::network::NO_TAG`] where not known. Empty: none known.
    pub tags: Vec<u16>,
    /// Times it is trained on in each epoch.
    pub copies: u32,
}

/// How to train.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NeuralOptions {
    pub system: System,
    pub epochs: u32,
    /// Sentences per step.
    pub batch: usize,
    pub learning_rate: f64,
    /// What training drops.
    pub dropout: Dropout,
    /// Follow the model's own predictions after this many epochs…
    pub explore_k: u32,
    /// …except with this probability, when a zero-cost transition is followed.
    pub explore_p: f64,
    pub seed: u64,
}

/// The defaults (and [`NeuralOptions::schedule`] for the batches and epochs). Dropout 0.4 of
/// the values and 0.25 of the form embeddings, against 0.25 and 0.1 (BiLSTM, dev LAS):
/// hu_szeged (910 sentences) 69.91 against 67.96, which overfits with less (1% of its
/// training decisions wrong at the end; 0.5 and 0.25: 69.37); en_ewt 82.39 against 82.28.
impl Default for NeuralOptions {
    fn default() -> Self {
        NeuralOptions {
            system: System::ArcHybrid,
            epochs: 10,
            batch: 32,
            learning_rate: 2e-3,
            dropout: Dropout { values: 0.4, words: 0.25 },
            explore_k: 1,
            explore_p: 0.1,
            seed: 1,
        }
    }
}

/// Training steps the default schedule aims at. Against 4,000, on hu_szeged dev from raw text
/// (the trainer's dev LAS of seed 1 in brackets), 6,000 steps (60 epochs) gave LAS 70.46 /
/// 70.79 / 71.03 for seeds 1–3 against 69.88 / 70.09 / 70.18 (70.63 against 70.15), and 90
/// epochs (9,180 steps) 71.41 (71.57), this default's 88 71.71 (71.83); on en_ewt (the trainer's dev LAS, gold tokens, seed 1)
/// 10 epochs (3,920 steps) reached 82.39, 15 83.35, 20 (7,840) 83.44 and this default's 23
/// 83.47, from raw text 79.92, 80.92, 80.87 and 81.00. A small set gains up to about 9,000 steps, a large one less beyond 6,000;
/// 9,000 gives en_ewt 23 epochs (the whole `train` took 15:15 at 10 epochs, 23:27 at 20 and
/// 32:02 at 23, on one core each, the last beside a CI run) and hu_szeged 88 (4:44–4:57 at 39, 12:20 at 88).
pub const STEPS: f64 = 9000.0;

/// How long to train, by default, for a training set's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Sentences per step.
    pub batch: usize,
    pub epochs: u32,
}

impl NeuralOptions {
    /// The default schedule for `sentences` training sentences: about [`STEPS`] steps, in
    /// batches of 32 and at least 10 epochs; a smaller set gets smaller batches (a hundredth
    /// of it, at least 8) and more epochs (at most 90). hu_szeged (910 sentences) with 10
    /// epochs of 32 (280 steps) reached dev LAS 56.80, with 30 epochs of 8 (3,420 steps) 67.93;
    /// the steps themselves are measured at [`STEPS`].
    pub fn schedule(sentences: usize) -> Schedule {
        let batch = (sentences / 100).clamp(8, 32);
        let steps = sentences.div_ceil(batch).max(1);
        let epochs = (STEPS / steps as f64).round().clamp(10.0, 90.0) as u32;
        Schedule { batch, epochs }
    }
}

/// One epoch's figures.
#[derive(Debug, Clone)]
pub struct NeuralEpoch {
    pub epoch: u32,
    pub words: usize,
    pub seconds: f64,
    /// Mean loss per decision.
    pub loss: f64,
    /// Decisions where the model's prediction had a cost.
    pub errors: usize,
    pub decisions: usize,
    /// The caller's dev scores of this epoch's weights, if it has dev data.
    pub dev: Option<DevScore>,
}

/// What an epoch's weights score on dev data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DevScore {
    pub las: f64,
    /// The share of words whose tags (UPOS and XPOS) a model that tags gets right, in percent.
    pub tags: Option<f64>,
}

impl DevScore {
    /// What the best epoch is chosen by: LAS, or for a model that tags the mean of LAS and
    /// its tags' accuracy (by LAS alone, an epoch before the tags are learned may be kept).
    pub fn choice(&self) -> f64 {
        self.tags.map_or(self.las, |tags| (self.las + tags) / 2.0)
    }
}

/// What training returns: the kept weights, the epoch they are from, and every epoch's figures.
pub struct Trained {
    pub model: NeuralModel,
    pub best_epoch: u32,
    pub epochs: Vec<NeuralEpoch>,
}

/// Why training stopped.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error("neural training: {0}")]
    Candle(#[from] candle_core::Error),
    #[error("neural training: {0}")]
    Net(#[from] crate::model::neural::NetError),
}

/// The decisions of a greedy parse of one sentence with exploration, appended to `out`: each
/// item's row among the batch's rows (`first` is node 0's, `absent` the absent row).
struct Explorer {
    config: Configuration,
    zero: Vec<usize>,
    mlp: Mlp,
}

impl Explorer {
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &mut self,
        system: System,
        model: &NeuralModel,
        vectors: &[f32],
        gold: &GoldTree,
        first: u32,
        absent: u32,
        explore: Option<f64>,
        rng: &mut ChaCha8Rng,
        out: &mut Decisions,
    ) -> (usize, usize) {
        let net = model.net();
        let classes = net.spec.classes;
        let labels = (classes - 2) / 2;
        self.mlp.prepare(&net, vectors);
        self.config.reset(gold.len());
        let (mut decisions, mut errors) = (0, 0);
        while !system.is_terminal(&self.config) {
            let legal = system.legal(&self.config);
            system.zero_cost(&self.config, gold, labels, &mut self.zero);
            let logits = self.mlp.logits(&net, &self.config);
            let best_of = |allowed: &dyn Fn(usize) -> bool| {
                (0..classes).filter(|&i| allowed(i)).max_by(|&a, &b| logits[a].total_cmp(&logits[b]).then(b.cmp(&a)))
            };
            let predicted = best_of(&|i| legal.allows_index(i));
            let Some(predicted) = predicted else { break };
            if self.zero.is_empty() {
                // Nothing is right (a gold tree the oracle cannot complete): follow the model.
                system.apply(&mut self.config, Transition::from_index(predicted));
                continue;
            }
            for item in &net.spec.items {
                let node = item.node(&self.config);
                out.rows.push(if node == NONE { absent } else { first + node });
                let dependent = node != NONE && item.is_dependent();
                let label =
                    if dependent { self.config.label(node).index() as u32 } else { Decisions::no_label(net.spec) };
                out.labels.push(label);
            }
            let start = out.legal.len();
            out.legal.extend((0..classes).map(|i| if legal.allows_index(i) { 0.0 } else { OUT }));
            out.zero_cost.resize(start + classes, OUT);
            for &z in &self.zero {
                out.zero_cost[start + z] = 0.0;
            }
            decisions += 1;
            let right = self.zero.contains(&predicted);
            errors += usize::from(!right);
            let follow = right || explore.is_some_and(|p| rng.gen::<f64>() > p);
            let next = if follow { predicted } else { best_of(&|i| self.zero.contains(&i)).unwrap_or(predicted) };
            system.apply(&mut self.config, Transition::from_index(next));
        }
        (decisions, errors)
    }
}

/// Sentences per window sorted by length before they are cut into batches.
const BUCKET_BATCHES: usize = 64;

/// An epoch's batches: `order` shuffled, sorted by length within windows of
/// [`BUCKET_BATCHES`] batches so that a batch pads little (the encoder computes every padded
/// position), cut into batches of `size`, and the batches shuffled.
fn batches(order: &mut [usize], examples: &[Example], size: usize, rng: &mut ChaCha8Rng) -> Vec<Vec<usize>> {
    order.shuffle(rng);
    for window in order.chunks_mut(size * BUCKET_BATCHES) {
        window.sort_by_key(|&i| examples[i].attrs.len());
    }
    let mut batches: Vec<Vec<usize>> = order.chunks(size).map(<[usize]>::to_vec).collect();
    batches.shuffle(rng);
    batches
}

/// What the steps of an epoch or of a fine-tuning round add up to.
#[derive(Default)]
struct Tally {
    loss_sum: f64,
    decisions: usize,
    errors: usize,
    words: usize,
}

impl Tally {
    fn report(&self, epoch: u32, started: Instant, dev: Option<DevScore>) -> NeuralEpoch {
        NeuralEpoch {
            epoch,
            words: self.words,
            seconds: started.elapsed().as_secs_f64(),
            loss: self.loss_sum / self.decisions.max(1) as f64,
            errors: self.errors,
            decisions: self.decisions,
            dev,
        }
    }
}

/// A network and its optimizer: one step explores a batch's parses and follows the gradient of
/// their loss, for training from scratch and fine-tuning alike.
struct Learner {
    network: Network,
    adam: AdamW,
    explorer: Explorer,
    decisions: Decisions,
    tags: TagTargets,
}

impl Learner {
    fn new(network: Network, learning_rate: f64) -> Result<Learner, TrainError> {
        let params = ParamsAdamW { lr: learning_rate, weight_decay: 0.0, ..ParamsAdamW::default() };
        let adam = AdamW::new(network.vars.clone(), params)?;
        let explorer = Explorer { config: Configuration::new(0), zero: Vec::new(), mlp: Mlp::default() };
        Ok(Learner { network, adam, explorer, decisions: Decisions::default(), tags: TagTargets::default() })
    }

    /// One step on `batch`: each sentence parsed greedily over the batch's vectors, with
    /// exploration at rate `explore` (none: along zero-cost transitions), then one Adam step.
    fn step(
        &mut self,
        batch: &[&Example],
        system: System,
        dropout: Dropout,
        explore: Option<f64>,
        rng: &mut ChaCha8Rng,
        tally: &mut Tally,
    ) -> Result<(), TrainError> {
        let words_of: Vec<Words> = batch.iter().map(|e| Words { attrs: &e.attrs, forms: &e.forms }).collect();
        let encoded = self.network.encode(&words_of, Some((dropout, &mut *rng)))?;
        let vectors: Vec<f32> = encoded.vectors.to_dtype(DType::F32)?.flatten_all()?.to_vec1()?;
        let snapshot = self.network.model()?;
        self.explorer.mlp.prepare_labels(&snapshot.net());
        let d = self.network.spec.dim;
        let absent = Decisions::absent(batch.len() * encoded.len);
        self.decisions.clear();
        self.tags.clear();
        let tagging = self.network.spec.tags > 0;
        for (b, example) in batch.iter().enumerate() {
            let first = b * encoded.len;
            if tagging {
                self.tags.add(first as u32, &example.tags);
            }
            let n = example.attrs.len();
            let own = &vectors[first * d..(first + n) * d];
            let (c, e) = self.explorer.decide(
                system,
                &snapshot,
                own,
                &example.gold,
                first as u32,
                absent,
                explore,
                rng,
                &mut self.decisions,
            );
            tally.decisions += c;
            tally.errors += e;
            tally.words += n - 1;
        }
        if self.decisions.is_empty() && self.tags.rows.is_empty() {
            return Ok(());
        }
        let loss = self.network.joint_loss(&encoded, &self.decisions, &self.tags)?;
        let decided = self.decisions.len(&self.network.spec) as f64;
        tally.loss_sum += f64::from(loss.to_dtype(DType::F32)?.to_scalar::<f32>()?) * decided;
        self.adam.backward_step(&loss)?;
        Ok(())
    }

    /// Linear decay from `rate` to a tenth of it as `done` goes from 0 to 1: the last steps
    /// settle (measured below).
    fn decay(&mut self, rate: f64, done: f64) {
        self.adam.set_learning_rate(rate * (1.0 - 0.9 * done));
    }
}

/// Trains a parser of `spec` on `examples`; `dev` scores weights after each epoch (the best
/// [`DevScore::choice`] is kept), and `progress` hears of each epoch.
pub fn train(
    spec: Spec,
    examples: &[Example],
    opts: &NeuralOptions,
    dev: &mut dyn FnMut(&NeuralModel) -> Option<DevScore>,
    progress: &mut dyn FnMut(&NeuralEpoch),
) -> std::result::Result<Trained, TrainError> {
    keep_freed_memory();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut learner = Learner::new(Network::new(spec, DType::F32, &mut rng)?, opts.learning_rate)?;
    let mut order: Vec<usize> =
        examples.iter().enumerate().flat_map(|(i, e)| std::iter::repeat_n(i, e.copies as usize)).collect();
    let mut best: Option<(f64, u32, NeuralModel)> = None;
    let mut epochs = Vec::new();
    for epoch in 1..=opts.epochs {
        let started = Instant::now();
        learner.decay(opts.learning_rate, f64::from(epoch - 1) / f64::from(opts.epochs.max(2) - 1));
        let explore = (epoch > opts.explore_k).then_some(opts.explore_p);
        let mut tally = Tally::default();
        for batch in batches(&mut order, examples, opts.batch.max(1), &mut rng) {
            let batch: Vec<&Example> = batch.iter().map(|&i| &examples[i]).collect();
            learner.step(&batch, opts.system, opts.dropout, explore, &mut rng, &mut tally)?;
        }
        let model = learner.network.model()?;
        let score = dev(&model);
        let report = tally.report(epoch, started, score);
        progress(&report);
        epochs.push(report);
        // Without dev scores the last epoch is kept.
        let score = score.map_or(f64::from(epoch), |s| s.choice());
        if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
            best = Some((score, epoch, model));
        }
    }
    let (model, best_epoch) = match best {
        Some((_, epoch, model)) => (model, epoch),
        None => (learner.network.model()?, 0),
    };
    Ok(Trained { model, best_epoch, epochs })
}

/// How to fine-tune a trained model ([`fine_tune`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FineTuneOptions {
    pub system: System,
    /// Adam steps, each on one batch.
    pub steps: u32,
    /// Sentences per step.
    pub batch: usize,
    /// The share of each batch drawn from the base treebank; the rest are the user's.
    pub base_share: f64,
    /// The first step's learning rate, decayed linearly to a tenth of it.
    pub learning_rate: f64,
    pub dropout: Dropout,
    /// A zero-cost transition is followed instead of the model's prediction with this
    /// probability, from the first step: the model's own predictions are already meaningful.
    pub explore_p: f64,
    pub seed: u64,
}

/// Steps per round of fine-tuning that `progress` hears of.
const ROUND_STEPS: u32 = 50;

/// An endless draw of indices below `n`, each once per pass in an order shuffled anew.
struct Passes {
    order: Vec<usize>,
    next: usize,
}

impl Passes {
    fn new(n: usize) -> Passes {
        Passes { order: (0..n).collect(), next: n }
    }

    fn draw(&mut self, rng: &mut ChaCha8Rng) -> Option<usize> {
        if self.order.is_empty() {
            return None;
        }
        if self.next == self.order.len() {
            self.order.shuffle(rng);
            self.next = 0;
        }
        self.next += 1;
        Some(self.order[self.next - 1])
    }
}

/// Fine-tunes `start` (every weight, one decaying rate, a fresh Adam state) on the user's
/// sentences with the dynamic oracle and exploration (Goldberg & Nivre 2012, Algorithm 3),
/// each batch mixed with a share of base sentences so that the corrections move the model only
/// where they speak; the copies of examples are not read (the share is the weighting). The
/// last step's weights are returned: choosing a step on held-out data would bias the gate that
/// reads it. `progress` hears of every [`ROUND_STEPS`] steps.
pub fn fine_tune(
    start: &NeuralModel,
    user: &[Example],
    base: &[Example],
    opts: &FineTuneOptions,
    progress: &mut dyn FnMut(&NeuralEpoch),
) -> std::result::Result<Trained, TrainError> {
    keep_freed_memory();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut learner = Learner::new(Network::from_model(start, DType::F32)?, opts.learning_rate)?;
    let size = opts.batch.max(1);
    let from_base = match (user.is_empty(), base.is_empty()) {
        (true, _) => size,
        (false, true) => 0,
        (false, false) => ((size as f64 * opts.base_share).round() as usize).min(size - 1),
    };
    let (mut users, mut bases) = (Passes::new(user.len()), Passes::new(base.len()));
    let mut epochs = Vec::new();
    let (mut tally, mut started) = (Tally::default(), Instant::now());
    for step in 1..=opts.steps {
        learner.decay(opts.learning_rate, f64::from(step - 1) / f64::from(opts.steps.max(2) - 1));
        let mut batch: Vec<&Example> =
            (0..size - from_base).filter_map(|_| users.draw(&mut rng)).map(|i| &user[i]).collect();
        batch.extend((0..from_base).filter_map(|_| bases.draw(&mut rng)).map(|i| &base[i]));
        if batch.is_empty() {
            break;
        }
        learner.step(&batch, opts.system, opts.dropout, Some(opts.explore_p), &mut rng, &mut tally)?;
        if step % ROUND_STEPS == 0 || step == opts.steps {
            let report = std::mem::take(&mut tally).report(step.div_ceil(ROUND_STEPS), started, None);
            progress(&report);
            epochs.push(report);
            started = Instant::now();
        }
    }
    let best_epoch = epochs.last().map_or(0, |e| e.epoch);
    Ok(Trained { model: learner.network.model()?, best_epoch, epochs })
}

/// Tells the allocator to keep freed memory for reuse: candle allocates every tensor of every
/// step afresh, and glibc otherwise maps and unmaps each large one, faulting its pages in
/// again (measured on 2,000 en_ewt sentences: 2,211 words/s before, 2,678 after, system time
/// 4.6 s to 0.5 s).
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's thresholds; any values are valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::base::label::LabelSet;
    use crate::corpus::{Column, Format, Reader};
    use crate::model::features::{encode_sentence, Morphology};
    use crate::model::neural::{CharEncoder, Context};
    use crate::neural::kernels::{tag_scores, Encoder};
    use candle_core::{Device, Tensor};

    /// Sentences of different lengths (so that batches pad), with a lifted-free projective
    /// tree each.
    const TEXT: &str = "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_

1\tA\ta\tDET\tDT\t_\t3\tdet\t_\t_
2\tvery\tvery\tADV\tRB\t_\t3\tadvmod\t_\t_
3\tbig\tbig\tADJ\tJJ\t_\t4\tamod\t_\t_
4\tunbelievably-long-word\tword\tNOUN\tNN\t_\t5\tnsubj\t_\t_
5\tsleeps\tsleep\tVERB\tVBZ\t_\t0\troot\t_\t_
6\there\there\tADV\tRB\t_\t5\tadvmod\t_\t_
7\t!\t!\tPUNCT\t.\t_\t5\tpunct\t_\t_

";

    /// The UPOS of [`TEXT`], in the order of the tags a model that tags scores.
    const UPOS: [&str; 6] = ["DET", "NOUN", "VERB", "PUNCT", "ADV", "ADJ"];

    fn examples() -> (Vec<Example>, LabelSet) {
        let mut labels = LabelSet::new("root");
        let mut out = Vec::new();
        for sent in Reader::new(TEXT.as_bytes(), Path::new("t.conllu"), Format::Conllu) {
            let sent = sent.unwrap();
            let mut attrs = Vec::new();
            encode_sentence(&sent, Morphology::Columns, &mut attrs);
            let heads: Vec<usize> = sent.words().map(|w| w.get(Column::Head).parse().unwrap()).collect();
            let arcs: Vec<_> = sent.words().map(|w| labels.intern(w.get(Column::Deprel))).collect();
            let forms = sent.words().map(|w| w.get(Column::Form).to_string()).collect();
            let tags = sent.words().map(|w| UPOS.iter().position(|&u| u == w.get(Column::Upos)).unwrap() as u16);
            out.push(Example { attrs, forms, gold: GoldTree::new(&heads, &arcs), tags: tags.collect(), copies: 1 });
        }
        (out, labels)
    }

    /// Both contextual encoders, tiny, with the default character encoder, and the BiLSTM with
    /// the other.
    fn encoders() -> [(Context, CharEncoder); 3] {
        [
            (Context::Conv { dilations: vec![1, 2] }, CharEncoder::Conv),
            (Context::BiLstm { layers: 2 }, CharEncoder::Conv),
            (Context::BiLstm { layers: 2 }, CharEncoder::BiLstm),
        ]
    }

    /// `spec` with `encoder` over its characters.
    fn with_chars(mut spec: Spec, encoder: CharEncoder) -> Spec {
        spec.chars.encoder = encoder;
        spec
    }

    fn tiny_spec(labels: &LabelSet, context: Context) -> Spec {
        let mut spec = Spec::small_for(Transition::count(labels.len()));
        spec.context = context;
        for h in &mut spec.hashed {
            h.bits = 4;
            h.dim = 3;
        }
        spec.chars = crate::model::neural::spec::Chars {
            bits: 4,
            dim: 3,
            filters: 4,
            max_chars: 8,
            encoder: spec.chars.encoder,
        };
        spec.dim = 6;
        spec.hidden = 7;
        spec
    }

    /// A model of `spec` with every weight, biases too, drawn from ±0.5.
    fn random_model(spec: Spec, rng: &mut ChaCha8Rng) -> NeuralModel {
        let (_, total) = spec.layout();
        NeuralModel::new(spec, (0..total).map(|_| rng.gen_range(-0.5..0.5)).collect()).unwrap()
    }

    /// The decisions of a parse along zero-cost transitions, over `model`'s vectors, the
    /// batch's padded length, and how many of each example's decisions had a cost (0: its
    /// greedy parse is the gold tree).
    fn decisions(model: &NeuralModel, network: &Network, examples: &[Example]) -> (Decisions, usize, Vec<usize>) {
        let words: Vec<Words> = examples.iter().map(|e| Words { attrs: &e.attrs, forms: &e.forms }).collect();
        let encoded = network.encode(&words, None).unwrap();
        let vectors: Vec<f32> = encoded.vectors.to_dtype(DType::F32).unwrap().flatten_all().unwrap().to_vec1().unwrap();
        let mut explorer = Explorer { config: Configuration::new(0), zero: Vec::new(), mlp: Mlp::default() };
        explorer.mlp.prepare_labels(&model.net());
        let mut out = Decisions::default();
        let d = model.spec.dim;
        let absent = Decisions::absent(examples.len() * encoded.len);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut errors = Vec::new();
        for (b, e) in examples.iter().enumerate() {
            let first = b * encoded.len;
            let own = &vectors[first * d..(first + e.attrs.len()) * d];
            let gold = &e.gold;
            let (_, wrong) = explorer.decide(
                System::ArcEager,
                model,
                own,
                gold,
                first as u32,
                absent,
                Some(1.0),
                &mut rng,
                &mut out,
            );
            errors.push(wrong);
        }
        (out, encoded.len, errors)
    }

    #[test]
    fn the_default_schedule_gives_small_training_sets_smaller_batches_and_more_epochs() {
        let of = |n| {
            let s = NeuralOptions::schedule(n);
            (s.batch, s.epochs)
        };
        assert_eq!(of(12_544), (32, 23));
        assert_eq!(of(3_200), (32, 90));
        assert_eq!(of(3_199), (31, 87));
        assert_eq!(of(910), (9, 88));
        assert_eq!(of(100), (8, 90));
        assert_eq!(of(0), (8, 90));
        assert_eq!(of(1_000_000), (32, 10));
    }

    /// A tiny spec that tags the words of [`TEXT`] itself.
    fn tagging_spec(labels: &LabelSet, context: Context) -> Spec {
        tiny_spec(labels, context).tagging(UPOS.len(), false)
    }

    /// The tag targets of `examples` in a batch padded to `len`.
    fn tag_targets(examples: &[Example], len: usize) -> TagTargets {
        let mut targets = TagTargets::default();
        for (b, e) in examples.iter().enumerate() {
            targets.add((b * len) as u32, &e.tags);
        }
        targets
    }

    #[test]
    fn gradients_match_finite_differences_of_the_loss() {
        for (context, chars) in encoders() {
            let (_, labels) = examples();
            gradients_match_finite_differences_with(with_chars(tiny_spec(&labels, context.clone()), chars));
            gradients_match_finite_differences_with(with_chars(tagging_spec(&labels, context), chars));
        }
    }

    /// The gradient of [`Network::joint_loss`] (the parser's, and the tagger's for a `spec`
    /// that tags) against central differences.
    fn gradients_match_finite_differences_with(spec: Spec) {
        let (examples, _) = examples();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let model = random_model(spec, &mut rng);
        let network = Network::from_model(&model, DType::F64).unwrap();
        let (decided, len, _) = decisions(&model, &network, &examples);
        let tags = if model.spec.tags > 0 { tag_targets(&examples, len) } else { TagTargets::default() };
        let words: Vec<Words> = examples.iter().map(|e| Words { attrs: &e.attrs, forms: &e.forms }).collect();
        let loss_now = |network: &Network| -> f64 {
            let encoded = network.encode(&words, None).unwrap();
            network.joint_loss(&encoded, &decided, &tags).unwrap().to_scalar::<f64>().unwrap()
        };
        let encoded = network.encode(&words, None).unwrap();
        let grads = network.joint_loss(&encoded, &decided, &tags).unwrap().backward().unwrap();
        let eps = 1e-6;
        let mut checked = 0;
        for (var, t) in network.vars.iter().zip(model.spec.tensors()) {
            let grad: Vec<f64> = grads.get(var).unwrap().flatten_all().unwrap().to_vec1().unwrap();
            let values: Vec<f64> = var.as_tensor().flatten_all().unwrap().to_vec1().unwrap();
            // Every entry of small tensors; of an embedding table, the rows a gradient reaches
            // and a few it does not.
            let picks: Vec<usize> = if values.len() <= 64 {
                (0..values.len()).collect()
            } else {
                let mut p: Vec<usize> = (0..values.len()).filter(|&i| grad[i] != 0.0).take(24).collect();
                p.extend((0..6).map(|_| rng.gen_range(0..values.len())));
                p
            };
            for i in picks {
                let at = |x: f64| {
                    let mut v = values.clone();
                    v[i] = x;
                    var.set(&Tensor::from_vec(v, t.shape.as_slice(), &Device::Cpu).unwrap()).unwrap();
                    loss_now(&network)
                };
                let numeric = (at(values[i] + eps) - at(values[i] - eps)) / (2.0 * eps);
                at(values[i]);
                let tolerance = 1e-6 + 1e-4 * numeric.abs().max(grad[i].abs());
                assert!(
                    (numeric - grad[i]).abs() <= tolerance,
                    "{:?}, {:?}, {} tags, {}[{i}]: numeric {numeric}, backprop {}",
                    model.spec.context,
                    model.spec.chars.encoder,
                    model.spec.tags,
                    t.name,
                    grad[i]
                );
                checked += 1;
            }
        }
        assert!(checked > 200, "{checked} entries checked");
    }

    #[test]
    fn the_parse_time_kernels_compute_what_the_training_graph_computes() {
        for (context, chars) in encoders() {
            the_kernels_compute_what_the_graph_computes_with(context, chars);
        }
    }

    fn the_kernels_compute_what_the_graph_computes_with(context: Context, chars: CharEncoder) {
        let (examples, labels) = examples();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let model = random_model(with_chars(tagging_spec(&labels, context.clone()), chars), &mut rng);
        let network = Network::from_model(&model, DType::F32).unwrap();
        let words: Vec<Words> = examples.iter().map(|e| Words { attrs: &e.attrs, forms: &e.forms }).collect();
        let encoded = network.encode(&words, None).unwrap();
        let (decided, len, _) = decisions(&model, &network, &examples);
        let batched: Vec<f32> = network.logits(&encoded, &decided).unwrap().flatten_all().unwrap().to_vec1().unwrap();
        // Each sentence alone through the kernels, along the same zero-cost path.
        let net = model.net();
        let (mut encoder, mut mlp) = (Encoder::default(), Mlp::default());
        mlp.prepare_labels(&net);
        let mut config = Configuration::new(0);
        let mut zero = Vec::new();
        let mut row = 0;
        let classes = model.spec.classes;
        let targets = tag_targets(&examples, len);
        let tag_logits: Vec<f32> =
            network.tag_logits(&encoded, &targets.rows).unwrap().flatten_all().unwrap().to_vec1().unwrap();
        let mut tagged = 0;
        let mut scores = Vec::new();
        for (b, e) in examples.iter().enumerate() {
            let forms: Vec<&str> = e.forms.iter().map(String::as_str).collect();
            encoder.encode(&net, &e.attrs, &forms);
            let alone = encoder.vectors().to_vec();
            let d = model.spec.dim;
            let all: Vec<f32> = encoded.vectors.flatten_all().unwrap().to_vec1().unwrap();
            for (x, y) in alone.iter().zip(&all[b * len * d..]) {
                assert!((x - y).abs() < 1e-4, "{context:?}, {chars:?} sentence {b}: vectors {x} and {y}");
            }
            tag_scores(&net, &alone, &mut scores);
            assert_eq!(scores.len(), e.tags.len() * UPOS.len());
            let graph = &tag_logits[tagged * UPOS.len()..(tagged + e.tags.len()) * UPOS.len()];
            for (x, y) in scores.iter().zip(graph) {
                assert!((x - y).abs() < 1e-4, "{context:?} sentence {b}: tag scores {x} and {y}");
            }
            tagged += e.tags.len();
            mlp.prepare(&net, &alone);
            config.reset(e.gold.len());
            while !System::ArcEager.is_terminal(&config) {
                let logits = mlp.logits(&net, &config).to_vec();
                for (c, (x, y)) in logits.iter().zip(&batched[row * classes..(row + 1) * classes]).enumerate() {
                    assert!((x - y).abs() < 1e-4, "sentence {b}, decision {row}, class {c}: {x} and {y}");
                }
                System::ArcEager.zero_cost(&config, &e.gold, labels.len(), &mut zero);
                let best =
                    zero.iter().copied().max_by(|&a, &b| logits[a].total_cmp(&logits[b]).then(b.cmp(&a))).unwrap();
                System::ArcEager.apply(&mut config, Transition::from_index(best));
                row += 1;
            }
        }
        assert_eq!(row, decided.len(&model.spec));
    }

    /// Options under which the tiny examples are learned exactly: many epochs, no dropout.
    fn overfitting() -> NeuralOptions {
        NeuralOptions {
            system: System::ArcEager,
            epochs: 80,
            batch: 2,
            learning_rate: 0.05,
            dropout: Dropout { values: 0.0, words: 0.0 },
            ..NeuralOptions::default()
        }
    }

    /// Fine-tuning a model trained with `opts`, half of each batch the base's examples.
    fn fine_tuning(opts: &NeuralOptions) -> FineTuneOptions {
        FineTuneOptions {
            system: System::ArcEager,
            steps: 120,
            batch: 2,
            base_share: 0.5,
            learning_rate: 0.02,
            dropout: opts.dropout,
            explore_p: 0.1,
            seed: 3,
        }
    }

    #[test]
    fn training_is_deterministic_for_a_seed_and_learns_the_training_trees() {
        for (context, chars) in encoders() {
            training_is_deterministic_and_learns_with(context, chars);
        }
    }

    fn training_is_deterministic_and_learns_with(context: Context, chars: CharEncoder) {
        let (examples, labels) = examples();
        let opts = overfitting();
        let spec = with_chars(tiny_spec(&labels, context), chars);
        let run = || train(spec.clone(), &examples, &opts, &mut |_| None, &mut |_| {}).unwrap();
        let (a, b) = (run(), run());
        assert_eq!(a.model, b.model);
        let last = a.epochs.last().unwrap();
        assert_eq!(last.errors, 0, "{last:?}");
        assert!(a.epochs[0].loss > 4.0 * last.loss, "{:?}", a.epochs);
    }

    #[test]
    fn a_model_that_tags_learns_the_training_tags_with_the_trees() {
        let (examples, labels) = examples();
        let opts = overfitting();
        let spec = tagging_spec(&labels, Context::BiLstm { layers: 1 });
        let trained = train(spec, &examples, &opts, &mut |_| None, &mut |_| {}).unwrap();
        assert_eq!(errors(&trained.model, &examples), [0, 0, 0], "the trees are learned");
        for e in &examples {
            assert_eq!(best_tags(&trained.model, e), e.tags, "{:?}", e.forms);
        }
        // Without the tags to learn, the same training leaves the tag softmax as it began:
        // what the test sees is learned from them.
        let untagged: Vec<Example> =
            super::tests::examples().0.into_iter().map(|e| Example { tags: Vec::new(), ..e }).collect();
        let spec = || tagging_spec(&labels, Context::BiLstm { layers: 1 });
        let blind = train(spec(), &untagged, &opts, &mut |_| None, &mut |_| {}).unwrap();
        let tag_weights = |m: &NeuralModel| m.net().tag().unwrap().0.to_vec();
        let start =
            Network::new(spec(), DType::F32, &mut ChaCha8Rng::seed_from_u64(opts.seed)).unwrap().model().unwrap();
        assert_eq!(tag_weights(&blind.model), tag_weights(&start));
        assert_ne!(tag_weights(&trained.model), tag_weights(&start));
    }

    /// The best-scoring tag of each word of `e` by a model that tags.
    fn best_tags(model: &NeuralModel, e: &Example) -> Vec<u16> {
        let net = model.net();
        let (mut encoder, mut scores) = (Encoder::default(), Vec::new());
        let forms: Vec<&str> = e.forms.iter().map(String::as_str).collect();
        encoder.encode(&net, &e.attrs, &forms);
        tag_scores(&net, encoder.vectors(), &mut scores);
        scores
            .chunks_exact(model.spec.tags)
            .map(|s| (0..s.len()).max_by(|&a, &b| s[a].total_cmp(&s[b])).unwrap() as u16)
            .collect()
    }

    #[test]
    fn fine_tuning_a_model_that_tags_learns_the_users_tags_and_keeps_the_base() {
        let (mut examples, labels) = examples();
        let opts = overfitting();
        let spec = tagging_spec(&labels, Context::BiLstm { layers: 1 });
        let start = train(spec, &examples, &opts, &mut |_| None, &mut |_| {}).unwrap().model;
        // The user tags "cat" ADJ (index 5) where the base has it NOUN.
        let mut user = vec![examples.remove(0)];
        user[0].tags[1] = 5;
        assert_eq!(best_tags(&start, &user[0])[1], 1, "the model tags it NOUN before");
        let tune = fine_tuning(&opts);
        let tuned = fine_tune(&start, &user, &examples, &tune, &mut |_| {}).unwrap().model;
        assert_eq!(best_tags(&tuned, &user[0]), user[0].tags, "the user's tags are learned");
        for e in &examples {
            assert_eq!(best_tags(&tuned, e), e.tags, "the base's are kept: {:?}", e.forms);
        }
    }

    /// How many of each example's decisions `model` gets wrong along its zero-cost path.
    fn errors(model: &NeuralModel, examples: &[Example]) -> Vec<usize> {
        decisions(model, &Network::from_model(model, DType::F32).unwrap(), examples).2
    }

    #[test]
    fn fine_tuning_learns_the_users_tree_and_keeps_the_base_it_mixes_in() {
        let (mut examples, labels) = examples();
        let opts = overfitting();
        let spec = tiny_spec(&labels, Context::Conv { dilations: vec![1, 2] });
        let start = train(spec, &examples, &opts, &mut |_| None, &mut |_| {}).unwrap().model;
        assert_eq!(errors(&start, &examples), [0, 0, 0], "the trained model parses its trees");
        // The user's correction of the first sentence: "cat" the root, "sat" its modifier.
        let l = |name| labels.get(name).unwrap();
        let user = vec![Example {
            gold: GoldTree::new(&[2, 0, 2, 2], &[l("det"), l("root"), l("amod"), l("punct")]),
            ..examples.remove(0)
        }];
        assert!(errors(&start, &user)[0] > 0, "the model parses it otherwise before");
        let tune = fine_tuning(&opts);
        let run = || fine_tune(&start, &user, &examples, &tune, &mut |_| {}).unwrap();
        let (a, b) = (run(), run());
        assert_eq!(a.model, b.model, "deterministic for a seed");
        assert_eq!(a.epochs.len(), 3, "a round every 50 steps, and the last");
        assert_eq!(errors(&a.model, &user), [0], "the correction is learned");
        assert_eq!(errors(&a.model, &examples), [0, 0], "the base mixed in is kept");
        assert_ne!(a.model, start);
        let alone = fine_tune(&start, &user, &[], &tune, &mut |_| {}).unwrap();
        assert!(
            errors(&alone.model, &examples).iter().sum::<usize>() > 0,
            "without the base mixed in, it is forgotten"
        );
    }

    #[test]
    fn fine_tuning_a_model_grown_for_a_label_it_lacks_learns_the_label_and_keeps_the_base() {
        let (mut examples, mut labels) = examples();
        let opts = overfitting();
        let spec = tiny_spec(&labels, Context::Conv { dilations: vec![1, 2] });
        let start = train(spec, &examples, &opts, &mut |_| None, &mut |_| {}).unwrap().model;
        // The user labels "The" `det:def`, which the model lacks; the base keeps "A" a `det`.
        let det = labels.get("det").unwrap();
        let def = labels.intern("det:def");
        let mut gold = examples[0].gold.clone();
        gold.map_labels(|l| if l == det { def } else { l });
        let user = vec![Example { gold, ..examples.remove(0) }];
        let grown = crate::neural::grow::grow_labels(&start, &[Some(det)]);
        assert_eq!(errors(&grown, &user), [1], "the grown model labels it `det`, as the model did");
        assert_eq!(errors(&grown, &examples), [0, 0], "and parses the base as the model did");
        let tuned = fine_tune(&grown, &user, &examples, &fine_tuning(&opts), &mut |_| {}).unwrap().model;
        assert_eq!(errors(&tuned, &user), [0], "the new label is learned");
        assert_eq!(errors(&tuned, &examples), [0, 0], "the base mixed in is kept");
    }
}
