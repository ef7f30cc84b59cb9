//! The online training loop of Goldberg & Nivre (2012) ([`train`]): Algorithm 2 (static oracle)
//! and Algorithm 3 (dynamic oracle with exploration), the same loop for every learner and
//! transition system, following the roll-in of [`TrainOptions::roll_in`], with the feature
//! cutoff of [`TrainOptions::min_feature_count`].
//!
//! Training is deterministic for a given seed: the sentence order of each epoch and every
//! exploration coin come from one ChaCha8 stream. After each epoch the averaged weights are
//! scored on the dev set, and the epoch with the best dev LAS is kept. This module drives
//! learning; the pieces it drives live in `transition` (the model's system and its oracles),
//! `features` and `learn`.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::base::hash::IdentityBuildHasher;
use crate::base::label::{Label, LabelSet};
use crate::learn::cw::ConfidenceWeighted;
use crate::learn::logistic::Logistic;
use crate::learn::passive_aggressive::{CostUse, PassiveAggressive};
use crate::learn::perceptron::{Perceptron, Weights};
use crate::learn::{self, Learner};
use crate::model::features::Extractor;
use crate::model::{Model, TrainingInfo};
use crate::transition::{Configuration, Encoding, System, Transition, TransitionSystem};

use super::calibration::calibrate;
use super::data::{DevSentence, TrainingSet};
use super::dev::evaluate_dev;
use super::domain::{Domain, DomainFeatures};
use super::eval::Scores;
use super::options::{LearnerKind, OracleKind, RollIn, TrainOptions};

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
pub(crate) fn fallback_label(set: &TrainingSet, labels: &LabelSet) -> Label {
    if let Some(l) = labels.get("dep") {
        return l;
    }
    let mut freq = vec![0usize; labels.len()];
    for s in &set.sentences {
        for l in (1..=s.gold.len() as u32).filter_map(|w| s.gold.label(w)) {
            freq[l.index()] += 1;
        }
    }
    freq[0] = 0;
    let best = (0..freq.len()).max_by_key(|&i| freq[i]).unwrap_or(0);
    Label::from_index(best)
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

/// `CHOOSE_NEXT_EXP` (Goldberg & Nivre 2012, Algorithm 3): once `exploring`, follow the
/// prediction with probability `1 − p`; otherwise `CHOOSE_NEXT_AMB`: the prediction if it has
/// zero cost, else a random zero-cost transition.
fn choose_next(exploring: bool, p: f64, predicted: usize, zero: &[usize], rng: &mut ChaCha8Rng) -> usize {
    if exploring && rng.gen::<f64>() > p {
        return predicted;
    }
    if zero.contains(&predicted) {
        predicted
    } else {
        zero[rng.gen_range(0..zero.len())]
    }
}

/// The model's distribution over the legal classes (`costs` lists them) into `probs`, 0 for
/// the others.
fn softmax_over(scores: &[f32], costs: &[(usize, u32)], probs: &mut [f32]) {
    probs.fill(0.0);
    let top = costs.iter().map(|&(c, _)| scores[c]).fold(f32::NEG_INFINITY, f32::max);
    let mut z = 0.0f32;
    for &(c, _) in costs {
        probs[c] = (scores[c] - top).exp();
    }
    for &p in probs.iter() {
        z += p;
    }
    for p in probs.iter_mut() {
        *p /= z;
    }
}

/// Trains a model on `train`, keeping the epoch with the best LAS on `dev` (the last epoch
/// without dev data), and calibrates it on `dev` ([`calibrate`]).
///
/// With [`OracleKind::Static`], a partial sentence has no canonical transition sequence to
/// follow (the static oracle needs every arc): its correct set is the dynamic oracle's
/// zero-cost set over the partial tree, and training follows the best-scored transition in
/// it, never exploring, as it follows the static oracle's one transition in full sentences.
pub fn train(
    set: &TrainingSet,
    dev: Option<&[DevSentence]>,
    opts: &TrainOptions,
    info: TrainingInfo,
    progress: &mut dyn FnMut(Progress),
) -> Model {
    train_set(Set::Fixed(set), dev, opts, info, progress)
}

/// What [`train_refreshing`] calls after each epoch but the last: the epoch, the averaged
/// weights so far (over the set's labels), the label for repaired words, and the set, whose
/// gold trees it may replace (the sentences, their order and their labels stay).
pub type BetweenEpochs<'a> = &'a mut dyn FnMut(u32, &Weights, Label, &mut TrainingSet);

/// [`train`], calling `between` after each epoch but the last: retraining re-completes partial
/// annotations with the model being trained ([`super::completion`]), so that the trees it
/// learns from improve as the model does.
pub fn train_refreshing(
    set: &mut TrainingSet,
    dev: Option<&[DevSentence]>,
    opts: &TrainOptions,
    info: TrainingInfo,
    progress: &mut dyn FnMut(Progress),
    between: BetweenEpochs<'_>,
) -> Model {
    train_set(Set::Refreshing(set, between), dev, opts, info, progress)
}

/// The training set of a run: fixed, or with gold trees replaced between epochs.
enum Set<'a, 'b> {
    Fixed(&'a TrainingSet),
    Refreshing(&'a mut TrainingSet, BetweenEpochs<'b>),
}

impl Set<'_, '_> {
    fn get(&self) -> &TrainingSet {
        match self {
            Set::Fixed(s) => s,
            Set::Refreshing(s, _) => s,
        }
    }
}

fn train_set(
    set: Set<'_, '_>,
    dev: Option<&[DevSentence]>,
    opts: &TrainOptions,
    info: TrainingInfo,
    progress: &mut dyn FnMut(Progress),
) -> Model {
    let classes = Transition::count(set.get().labels.as_ref().map_or(1, LabelSet::len));
    match opts.learner {
        LearnerKind::Perceptron => train_with(Perceptron::new(classes), set, dev, opts, info, progress),
        LearnerKind::Logistic => {
            let words = set.get().words;
            train_with(Logistic::new(classes, opts.rda, words), set, dev, opts, info, progress)
        }
        LearnerKind::ConfidenceWeighted => {
            train_with(ConfidenceWeighted::new(classes, opts.cw), set, dev, opts, info, progress)
        }
        LearnerKind::CostSensitive => {
            let pa = PassiveAggressive::new(classes, opts.pa_c, CostUse::Sensitive);
            train_with(pa, set, dev, opts, info, progress)
        }
        LearnerKind::PassiveAggressive => {
            let pa = PassiveAggressive::new(classes, opts.pa_c, CostUse::Multiclass);
            train_with(pa, set, dev, opts, info, progress)
        }
    }
}

/// Each sentence's index, as many times as its [`TrainSentence::copies`](super::TrainSentence::copies): one epoch's examples, before shuffling.
fn examples(set: &TrainingSet) -> Vec<usize> {
    set.sentences.iter().enumerate().flat_map(|(i, s)| std::iter::repeat_n(i, s.copies as usize)).collect()
}

/// The features that occur at least `min` times on the reference path through the training
/// data (each sentence parsed by its oracle, lowest-index correct transition first).
fn frequent_features(set: &TrainingSet, system: System, labels: usize, min: u32) -> HashSet<u64, IdentityBuildHasher> {
    let mut counts: HashMap<u64, u32, IdentityBuildHasher> = HashMap::default();
    let mut extractor = Extractor::new(system);
    let mut config = Configuration::new(0);
    let mut zero = Vec::new();
    for sent in &set.sentences {
        config.reset(sent.gold.len());
        while !system.is_terminal(&config) {
            for &f in extractor.extract(&config, &sent.attrs) {
                *counts.entry(f).or_default() += 1;
            }
            system.zero_cost(&config, &sent.gold, labels, &mut zero);
            let next = zero.first().map_or(Transition::Shift, |&c| Transition::from_index(c));
            if !system.legal(&config).allows(next) {
                break;
            }
            system.apply(&mut config, next);
        }
    }
    counts.into_iter().filter(|&(_, n)| n >= min).map(|(f, _)| f).collect()
}

/// [`train`] with a given learner: the loop is the same for every learner (and system); the
/// learner sees each decision with the cost of every legal transition, and the roll-in
/// ([`TrainOptions::roll_in`]) picks the transition to follow.
fn train_with<L: Learner>(
    mut learner: L,
    mut set: Set<'_, '_>,
    dev: Option<&[DevSentence]>,
    opts: &TrainOptions,
    mut info: TrainingInfo,
    progress: &mut dyn FnMut(Progress),
) -> Model {
    let labels = set.get().labels.clone().unwrap_or_else(|| LabelSet::new("root"));
    let fallback = fallback_label(set.get(), &labels);
    let classes = Transition::count(labels.len());
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut order = examples(set.get());
    let mut config = Configuration::new(0);
    let system = opts.system;
    let encoding = Encoding { system, projective: set.get().projective };
    let roll_in = opts.roll_in();
    let kept = (opts.min_feature_count > 1)
        .then(|| frequent_features(set.get(), system, labels.len(), opts.min_feature_count));
    let mut extractor = Extractor::new(system);
    let mut kept_features: Vec<u64> = Vec::new();
    let mut scores = vec![0.0f32; classes];
    let mut probs = vec![0.0f32; classes];
    let mut costs: Vec<(usize, u32)> = Vec::with_capacity(classes);
    let mut zero: Vec<usize> = Vec::with_capacity(classes);
    let mut best: Option<(f64, u32, Weights, Scores)> = None;
    let mut domain = opts.domain_features.then(DomainFeatures::default);

    for epoch in 1..=opts.epochs {
        let started = Instant::now();
        order.shuffle(&mut rng);
        let (mut errors, mut transitions) = (0usize, 0usize);
        let sentences = &set.get().sentences;
        for (done, &i) in order.iter().enumerate() {
            let sent = &sentences[i];
            config.reset(sent.gold.len());
            while !system.is_terminal(&config) {
                let mut feats = extractor.extract(&config, &sent.attrs);
                if let Some(kept) = &kept {
                    kept_features.clear();
                    kept_features.extend(feats.iter().filter(|f| kept.contains(f)));
                    feats = &kept_features;
                }
                if let (Some(d), Domain::User) = (domain.as_mut(), sent.domain) {
                    feats = d.augment(feats);
                }
                learner.score(feats, &mut scores);
                // The cost of every legal transition: the static oracle's one at 0 and the
                // others at 1, or the dynamic oracle's (also under the static oracle for a
                // partial tree, which it cannot follow).
                match opts.oracle {
                    OracleKind::Static if !sent.gold.is_partial() => {
                        let gold = system.static_oracle(&config, &sent.gold).unwrap_or(Transition::Shift).index();
                        costs.clear();
                        costs.extend(
                            system
                                .legal(&config)
                                .transitions(labels.len())
                                .map(|t| (t.index(), u32::from(t.index() != gold))),
                        );
                    }
                    _ => system.costs(&config, &sent.gold, labels.len(), &mut costs),
                }
                debug_assert!(costs.iter().any(|&(_, c)| c == 0), "some legal transition costs nothing");
                let decision = learn::Decision { features: feats, scores: &scores, costs: &costs };
                let min = decision.min_cost();
                zero.clear();
                zero.extend(costs.iter().filter(|&&(_, c)| c == min).map(|&(class, _)| class));
                let (predicted, cost) = decision.predicted();
                errors += usize::from(cost > min);
                let best_zero = decision.best_correct();
                learner.learn(&decision);
                let next = match (opts.oracle, roll_in) {
                    (OracleKind::Static, _) => best_zero,
                    (OracleKind::Dynamic, RollIn::Explore { k, p }) => {
                        choose_next(epoch > k, p, predicted, &zero, &mut rng)
                    }
                    (OracleKind::Dynamic, RollIn::Mixture { alpha }) => {
                        let p_reference = (1.0 - alpha).powi(epoch as i32 - 1);
                        choose_next(true, p_reference, predicted, &zero, &mut rng)
                    }
                    (OracleKind::Dynamic, RollIn::Sample { k }) if epoch > k => {
                        softmax_over(&scores, &costs, &mut probs);
                        sample(&probs, &mut rng).unwrap_or(predicted)
                    }
                    (OracleKind::Dynamic, RollIn::Sample { .. }) => best_zero,
                };
                transitions += 1;
                system.apply(&mut config, Transition::from_index(next));
            }
            if done % 256 == 0 {
                progress(Progress::Sentences { epoch, done, total: order.len() });
            }
        }
        progress(Progress::Sentences { epoch, done: order.len(), total: order.len() });
        let train_seconds = started.elapsed().as_secs_f64();
        let weights = match &domain {
            Some(d) => d.fold(&learner.weights()),
            None => learner.weights(),
        };
        let dev_scores = dev.map(|d| evaluate_dev(encoding, d, &weights, &labels, fallback));
        let report =
            EpochReport { epoch, words: set.get().words, seconds: train_seconds, errors, transitions, dev: dev_scores };
        progress(Progress::Epoch(&report));
        let las = dev_scores.map_or(f64::from(epoch), |s| s.las);
        if let Set::Refreshing(s, between) = &mut set {
            if epoch < opts.epochs {
                between(epoch, &weights, fallback, s);
            }
        }
        if best.as_ref().is_none_or(|(b, ..)| las > *b) {
            best = Some((las, epoch, weights, dev_scores.unwrap_or_default()));
        }
    }
    let set = set.get();

    let (_, best_epoch, weights, dev_scores) = best.unwrap_or_else(|| {
        let weights = domain.take().map_or_else(|| learner.weights(), |d| d.fold(&learner.weights()));
        (0.0, 0, weights, Scores::default())
    });
    info.oracle = opts.oracle.name().to_string();
    info.epochs = opts.epochs;
    info.best_epoch = best_epoch;
    info.explore_k = opts.explore_k;
    info.explore_p = opts.explore_p;
    info.seed = opts.seed;
    set.record_in(&mut info);
    info.dev_uas = dev_scores.uas;
    info.dev_las = dev_scores.las;
    let mut model = set.parser_model(system, labels, fallback, weights, info);
    if let Some(d) = dev {
        calibrate(&mut model, d);
    }
    model
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::fixtures::{conllu, dev_of, set_of, small_model, FULL};

    #[test]
    fn every_system_oracle_and_learner_trains_on_partial_sentences() {
        for system in System::ALL {
            for oracle in [OracleKind::Static, OracleKind::Dynamic] {
                for learner in LearnerKind::ALL {
                    let model = small_model(system, oracle, learner);
                    let dev = dev_of(&conllu(&[&FULL]));
                    let scores = evaluate_dev(model.encoding(), &dev, &model.weights, &model.labels, model.fallback);
                    assert_eq!(scores.las, 100.0, "{system} {oracle:?} {learner:?}");
                }
            }
        }
    }

    /// Transitions per epoch of training on `set` (no exploration: the oracle's path).
    fn transitions_per_epoch(set: &TrainingSet) -> Vec<usize> {
        let opts = TrainOptions { epochs: 2, explore_k: 9, ..TrainOptions::default() };
        let mut seen = Vec::new();
        train(set, None, &opts, TrainingInfo::default(), &mut |p| {
            if let Progress::Epoch(r) = p {
                seen.push(r.transitions)
            }
        });
        seen
    }

    #[test]
    fn a_sentence_with_copies_is_trained_on_that_many_times_per_epoch() {
        let mut set = set_of(&conllu(&[&FULL, &FULL])).unwrap();
        let once = transitions_per_epoch(&set);
        set.sentences[1].copies = 4;
        let more = transitions_per_epoch(&set);
        // The oracle's path through FULL is as long in every copy.
        let per_copy = once[0] / 2;
        assert!(per_copy > 0);
        assert_eq!(once, [2 * per_copy; 2]);
        assert_eq!(more, [5 * per_copy; 2]);
        set.sentences[0].copies = 0;
        assert_eq!(transitions_per_epoch(&set), [4 * per_copy; 2]);
    }

    #[test]
    fn training_refreshing_may_replace_gold_trees_between_epochs_and_learns_from_the_new_ones() {
        let partial = [("_", "_"), ("3", "nsubj"), ("0", "root"), ("_", "_")];
        let mut set = set_of(&conllu(&[&partial])).unwrap();
        // FULL's tree over the set's labels (those it lacks added: the labels stay as they are
        // through training).
        let labels = set.labels.as_mut().unwrap();
        let names = FULL.map(|(_, d)| labels.intern(d));
        let full = crate::transition::GoldTree::new(&[2, 3, 0, 3], &names);
        let opts = TrainOptions { epochs: 8, explore_k: 9, ..TrainOptions::default() };
        let mut calls = Vec::new();
        let mut errors = Vec::new();
        let model = train_refreshing(
            &mut set,
            None,
            &opts,
            TrainingInfo::default(),
            &mut |p| {
                if let Progress::Epoch(r) = p {
                    errors.push(r.errors)
                }
            },
            &mut |epoch, _, _, set| {
                calls.push(epoch);
                set.sentences[0].gold = full.clone();
            },
        );
        // After every epoch but the last, and the replaced tree is what was learned: the model
        // built on the partial tree alone does not get FULL's det and punct arcs.
        assert_eq!(calls, [1, 2, 3, 4, 5, 6, 7]);
        let dev = dev_of(&conllu(&[&FULL]));
        let las = |m: &Model| evaluate_dev(m.encoding(), &dev, &m.weights, &m.labels, m.fallback).las;
        let mut partial_only = set_of(&conllu(&[&partial])).unwrap();
        partial_only.labels = set.labels.clone();
        let partial_only = train(&partial_only, None, &opts, TrainingInfo::default(), &mut |_| {});
        assert!(!set.sentences[0].gold.is_partial());
        assert_eq!(las(&model), 100.0);
        assert!(las(&partial_only) < 100.0, "{}", las(&partial_only));
    }

    #[test]
    fn with_domain_features_the_user_s_tree_wins_where_the_treebank_disagrees_ten_to_one() {
        let user = [("2", "det"), ("3", "obj"), ("0", "root"), ("3", "punct")];
        let mut set = set_of(&conllu(&[&FULL, &user])).unwrap();
        set.sentences[0].copies = 10;
        set.sentences[1].domain = Domain::User;
        let user_dev = dev_of(&conllu(&[&user]));
        let las = |domain_features| {
            let opts = TrainOptions { epochs: 5, domain_features, ..TrainOptions::default() };
            let m = train(&set, None, &opts, TrainingInfo::default(), &mut |_| {});
            evaluate_dev(m.encoding(), &user_dev, &m.weights, &m.labels, m.fallback).las
        };
        // Pooled, the treebank's ten copies outvote the user's one on the same words; with the
        // user's copy of each feature, the model written parses the user's text the user's way.
        assert_eq!(las(false), 75.0);
        assert_eq!(las(true), 100.0);
    }

    #[test]
    fn the_feature_cutoff_keeps_only_features_seen_often_enough_on_the_oracle_path() {
        let set = set_of(&conllu(&[&FULL, &FULL, &FULL])).unwrap();
        let all = frequent_features(&set, System::ArcEager, set.labels.as_ref().unwrap().len(), 1);
        let twice = frequent_features(&set, System::ArcEager, set.labels.as_ref().unwrap().len(), 2);
        let more = frequent_features(&set, System::ArcEager, set.labels.as_ref().unwrap().len(), 4);
        // Each sentence is seen three times, so the cutoff 2 keeps everything and the cutoff 4
        // only features that occur more than once per sentence (shared by configurations).
        assert_eq!(all, twice);
        assert!(!more.is_empty() && more.len() < all.len(), "{} of {}", more.len(), all.len());
        let opts = TrainOptions { epochs: 2, min_feature_count: 4, ..TrainOptions::default() };
        let model = train(&set, None, &opts, TrainingInfo::default(), &mut |_| {});
        assert!(model.weights.rows().all(|(f, _)| more.contains(&f)));
    }
}
