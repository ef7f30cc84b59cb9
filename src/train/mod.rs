//! Training: reading gold treebanks into oracle-ready form, and the online training loop of
//! Goldberg & Nivre (2012): Algorithm 2 (static oracle) and Algorithm 3 (dynamic oracle with
//! exploration). The loop is generic over the learner ([`crate::learn::Learner`]: the averaged
//! perceptron, logistic regression, confidence-weighted, cost-sensitive and plain
//! passive-aggressive) and the transition system: each decision gives the learner the cost
//! of every legal transition, and a roll-in policy ([`RollIn`]) chooses what to follow.
//!
//! Training is deterministic for a given seed: the sentence order of each epoch and every
//! exploration coin come from one ChaCha8 stream. After each epoch the averaged weights are
//! scored on the dev set, and the epoch with the best dev LAS is kept. This module drives
//! learning; the pieces it drives live in `transition` (the model's system and its oracles),
//! `features` and `learn`.
//!
//! With a pseudo-projective scheme ([`TrainingSet::projective`]), non-projective full trees
//! are lifted (Nivre & Nilsson 2005) and trained on like the others, their lifted labels
//! interned; the model records the scheme and its parses are lowered back.
//!
//! Training and dev sentences may be partial annotations: a word whose HEAD is `_` has no gold
//! arc, and a DEPREL of `_` under a known HEAD leaves the label open. Training learns from the
//! annotated arcs only, through the dynamic oracle over the partial tree
//! ([`GoldTree::partial`]; Goldberg & Nivre 2013 on learning from partial trees); dev scores
//! and calibration data count only annotated words, and a word whose label is open scores as
//! labelled right when its head is.

pub mod eval;
pub mod plot;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::base::hash::{combine, hash_str, IdentityBuildHasher};
use crate::base::label::{Label, LabelSet};
use crate::corpus::tree::{gold_heads, is_projective, is_projective_partial, partial_heads, PartialHeads};
use crate::corpus::{Column, CorpusError, ErrorKind, Format, Reader, Sentence};
use crate::learn::confidence::{fit_temperature, Decision, Isotonic, Reliability};
use crate::learn::cw::{ConfidenceWeighted, CwOptions};
use crate::learn::logistic::{Logistic, RdaOptions};
use crate::learn::passive_aggressive::{CostUse, PassiveAggressive};
use crate::learn::perceptron::{Perceptron, Weights};
use crate::learn::scorer::Scorer;
use crate::learn::{self, Learner};
use crate::model::features::{encode_sentence, feature_set, Extractor, TokenAttrs};
use crate::model::file::ModelFile;
use crate::model::tagger::{accuracy, jackknife, load_tagging, train_tagger, TagSet, Tagger, TaggerModel};
use crate::model::{Model, TrainingInfo};
use crate::parse::parser::{Parser, TransitionScores};
use crate::train::eval::{attachment, Counts, Scores};
use crate::transition::projective::{lift, parse_mark, Scheme, DOWN, UP};
use crate::transition::{Configuration, Transition};
use crate::transition::{Encoding, GoldTree, System, TransitionSystem};

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
    /// The transition system the model parses with.
    pub system: System,
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
    /// Settings of the confidence-weighted learner.
    pub cw: CwOptions,
    /// The passive-aggressive learners' largest step `C`.
    pub pa_c: f32,
    /// Learning to search: the reference policy's roll-in probability decays as
    /// `(1 − α)^(epoch − 1)` (see [`RollIn::Mixture`]).
    pub rollin_alpha: f64,
    /// Features seen fewer times than this on the oracle's path through the training data are
    /// left out (Haulrich 2009, §5.3); 1 keeps every feature, as the papers' settings do. The
    /// command line's default is [`DEFAULT_MIN_FEATURE_COUNT`].
    pub min_feature_count: u32,
}

/// Which learner fits the weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LearnerKind {
    /// Averaged perceptron, updated when the prediction is not zero-cost (Goldberg & Nivre 2012).
    Perceptron,
    /// Multinomial logistic regression with AdaGrad-RDA and L1, exploring by sampling from the
    /// model after `explore_k` epochs (Goldberg 2013, Algorithms 2 and 3).
    Logistic,
    /// Multi-class confidence-weighted classification, top-1, standard-deviation update
    /// (Haulrich 2009), exploring as the perceptron does.
    ConfidenceWeighted,
    /// Cost-sensitive learning to search (Chang et al. 2015): every legal transition's cost
    /// from the dynamic oracle, a cost-sensitive passive-aggressive base learner, roll-in
    /// mixing the reference and the learned policy.
    CostSensitive,
    /// The same as [`LearnerKind::CostSensitive`] with a plain multi-class base learner: the
    /// baseline of Chang et al.'s Table 4.
    PassiveAggressive,
}

impl LearnerKind {
    /// Every learner, for listings and tests.
    pub const ALL: [LearnerKind; 5] = [
        LearnerKind::Perceptron,
        LearnerKind::Logistic,
        LearnerKind::ConfidenceWeighted,
        LearnerKind::CostSensitive,
        LearnerKind::PassiveAggressive,
    ];

    /// The name used on the command line, in recipes and in reports.
    pub fn name(self) -> &'static str {
        match self {
            LearnerKind::Perceptron => "perceptron",
            LearnerKind::Logistic => "logistic",
            LearnerKind::ConfidenceWeighted => "cw",
            LearnerKind::CostSensitive => "cost-sensitive",
            LearnerKind::PassiveAggressive => "pa",
        }
    }

    /// The learner of a name ([`LearnerKind::name`]).
    pub fn from_name(name: &str) -> Option<LearnerKind> {
        LearnerKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// `min_feature_count` by default: [`DEFAULT_MIN_FEATURE_COUNT`] where it was measured to
    /// help, 1 (every feature) for the learners it hurts.
    pub fn default_min_feature_count(self) -> u32 {
        match self {
            LearnerKind::ConfidenceWeighted | LearnerKind::Logistic => 1,
            _ => DEFAULT_MIN_FEATURE_COUNT,
        }
    }

    /// `explore_k` by default: exploration starts after two epochs for the perceptron (the
    /// paper's k = 2) and the learners that explore like it, after one for the logistic
    /// learner, whose sampling explores gently.
    pub fn default_explore_k(self) -> u32 {
        match self {
            LearnerKind::Logistic => 1,
            _ => 2,
        }
    }
}

/// How training chooses the transition it follows: its roll-in policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RollIn {
    /// `CHOOSE_NEXT_EXP` (Goldberg & Nivre 2012, Algorithm 3): after `k` epochs the prediction
    /// with probability `1 − p`, else the reference (the prediction if it is correct, a random
    /// correct transition otherwise).
    Explore { k: u32, p: f64 },
    /// After `k` epochs a transition sampled from the model's distribution over the legal ones
    /// (Goldberg 2013, Algorithm 3), the best-scored correct one before.
    Sample { k: u32 },
    /// Learning to search (Chang et al. 2015, §4.2): the reference with probability
    /// `(1 − α)^t`, the learned policy otherwise, `t` the epochs completed. The paper's `t`
    /// counts rounds and its value of α is lost from our copy; we decay per epoch with
    /// α = [`TrainOptions::rollin_alpha`], 0.5 by default: stored-model dev LAS with the
    /// cost-sensitive / plain passive-aggressive learners (arc-eager, 15 epochs) was
    ///
    /// | α | hu_szeged | el_gdt |
    /// | --- | --- | --- |
    /// | 0.1 | 76.56 / 76.97 | 86.48 / 86.73 |
    /// | 0.5 | 77.21 / 77.48 | 86.46 / 86.80 |
    /// | 1 (the learned policy from epoch 2) | 77.27 / 77.93 | 86.44 / 86.72 |
    ///
    /// 0.5 is the best value that still decays rather than switching at once.
    Mixture { alpha: f64 },
}

impl TrainOptions {
    /// The roll-in of the configured learner and oracle. The static oracle always follows the
    /// reference.
    pub fn roll_in(&self) -> RollIn {
        match self.learner {
            LearnerKind::Perceptron | LearnerKind::ConfidenceWeighted => {
                RollIn::Explore { k: self.explore_k, p: self.explore_p }
            }
            LearnerKind::Logistic => RollIn::Sample { k: self.explore_k },
            LearnerKind::CostSensitive | LearnerKind::PassiveAggressive => RollIn::Mixture { alpha: self.rollin_alpha },
        }
    }
}

impl Default for TrainOptions {
    /// The settings of the paper's experiments: 15 epochs, k = 2, p = 0.1.
    fn default() -> Self {
        TrainOptions {
            system: System::ArcEager,
            learner: LearnerKind::Perceptron,
            oracle: OracleKind::Dynamic,
            epochs: 15,
            explore_k: 2,
            explore_p: 0.1,
            seed: 1,
            rda: RdaOptions::default(),
            cw: CwOptions::default(),
            pa_c: 1.0,
            rollin_alpha: 0.5,
            min_feature_count: 1,
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
    /// Gold head of each word (0 = root), `None` where HEAD is `_`: such a word is not
    /// annotated and not scored.
    pub heads: Vec<Option<usize>>,
    /// Gold DEPREL of each word; `_` under a known head leaves the label open (any label is
    /// right).
    pub deprels: Vec<String>,
    /// Gold UPOS of each word (for scores without punctuation).
    pub upos: Vec<String>,
}

/// The DEPREL of a word whose label is not annotated.
const UNANNOTATED: &str = "_";

/// Refuses a sentence whose DEPREL column holds `↑` or `↓` anywhere: pseudo-projective
/// labels are made of them ([`crate::transition::projective`]), so a gold label with one would
/// be lowered as a lifted arc at parse time, or make lifting refuse the whole training set.
pub fn check_marks(sent: &Sentence, path: &Path) -> Result<(), CorpusError> {
    let marked = sent.words().enumerate().find(|(_, w)| w.get(Column::Deprel).contains([UP, DOWN]));
    match marked {
        None => Ok(()),
        Some((i, w)) => {
            let deprel = w.get(Column::Deprel);
            Err(CorpusError {
                path: path.to_path_buf(),
                line: sent.line_of_word(i + 1),
                kind: ErrorKind::ReservedMark {
                    word: i + 1,
                    deprel: deprel.to_string(),
                    base: parse_mark(deprel).base.to_string(),
                },
            })
        }
    }
}

/// The heads of `sent`, full or partial: a full tree is read by [`gold_heads`] (so a tree with
/// several root words is no error here), one with a HEAD of `_` by [`partial_heads`].
fn annotated_heads(sent: &Sentence, path: &Path) -> Result<PartialHeads, CorpusError> {
    match sent.heads() {
        Ok(None) => partial_heads(sent, path),
        _ => Ok(gold_heads(sent, path)?.into_iter().map(Some).collect()),
    }
}

impl DevSentence {
    /// Reads a gold dev sentence, which may be a partial annotation (HEAD and DEPREL `_`),
    /// with features reading LEMMA and FEATS only with `morphology`. Errors name `path` and the
    /// line (see [`partial_heads`]).
    pub fn from_sentence(sent: &Sentence, path: &Path, morphology: bool) -> Result<DevSentence, CorpusError> {
        let heads = annotated_heads(sent, path)?;
        let mut attrs = Vec::new();
        encode_sentence(sent, morphology, &mut attrs);
        Ok(DevSentence {
            attrs,
            heads,
            deprels: sent.words().map(|w| w.get(Column::Deprel).to_string()).collect(),
            upos: sent.words().map(|w| w.get(Column::Upos).to_string()).collect(),
        })
    }

    /// Number of words with an annotated head: the words that are scored.
    pub fn annotated(&self) -> usize {
        self.heads.iter().filter(|h| h.is_some()).count()
    }

    /// The gold DEPREL to score word `i` (0-based) against, given the system's `label`: the
    /// system's own when the gold label is open.
    fn gold_deprel<'a>(&'a self, i: usize, label: &'a str) -> &'a str {
        match self.deprels[i].as_str() {
            UNANNOTATED => label,
            d => d,
        }
    }
}

/// Training data ready for the oracles, with what was left out.
#[derive(Debug, Default)]
pub struct TrainingSet {
    pub sentences: Vec<TrainSentence>,
    pub labels: Option<LabelSet>,
    /// Words of the kept sentences, annotated or not.
    pub words: usize,
    /// Kept sentences with some HEAD or DEPREL `_`, trained on their annotated arcs only.
    pub partial_sentences: usize,
    /// Words with an annotated head in the kept sentences (every word of a full tree).
    pub annotated_words: usize,
    pub skipped_nonprojective: usize,
    pub skipped_root: usize,
    /// Sentences without any annotated arc (every HEAD `_`): nothing to learn from.
    pub skipped_unannotated: usize,
    /// Order-sensitive hash of every token line read (see `TrainingInfo::train_fingerprint`).
    pub fingerprint: u64,
    /// Whether features read LEMMA and FEATS (see `Model::morphology`).
    pub morphology: bool,
    /// Pseudo-projective lifting of non-projective full trees (Nivre & Nilsson 2005): with a
    /// scheme they are lifted and kept, without one skipped.
    pub projective: Option<Scheme>,
    /// Non-projective trees kept by lifting, and the lift operations made.
    pub lifted_sentences: usize,
    pub lifts: usize,
    /// Arcs whose encoded label [`TrainingSet::strip_rare_encoded_labels`] replaced by its base.
    pub stripped_rare_lifts: usize,
}

impl TrainingSet {
    /// Adds one gold sentence, full or partial (HEAD or DEPREL `_`), and folds its token lines,
    /// as given, into the fingerprint. Features read LEMMA and FEATS as `self.morphology` says.
    /// Errors name `path` and the line: a bad HEAD, a cycle, and in a partial annotation a
    /// second word with HEAD 0 (see [`partial_heads`]).
    ///
    /// The root label is the DEPREL of the root arc of the first sentence added ("root" if
    /// that sentence has no annotated root word or leaves its DEPREL open). Skipped and
    /// counted: sentences without any annotated arc; sentences whose annotated arcs cannot be
    /// completed into a projective tree ([`is_projective_partial`]; for a full tree,
    /// [`is_projective`]); full trees without exactly one root word; and sentences with the
    /// root label on another arc than the root arc, or another label on the root arc (among
    /// annotated DEPREL). A partial annotation without a root word is fine. Labels are
    /// interned from annotated DEPREL only.
    pub fn add(&mut self, sent: &Sentence, path: &Path) -> Result<(), CorpusError> {
        self.fingerprint_lines(sent);
        self.add_tree(sent, path)
    }

    /// Replaces the labels that a pseudo-projective encoding made (`d↑h`, `p↓`, ...) and that
    /// occur fewer than `min` times by their base label (`d`, `p`), and renumbers the labels.
    /// The trees stay projective and are all trained on; a lifted arc whose label lost its
    /// mark is simply not lowered (Nivre & Nilsson's baseline, for that arc only).
    ///
    /// Each label is a class of every LEFT-ARC and RIGHT-ARC, so encoded labels cost parse
    /// speed in proportion to their number, and most occur once or twice: too rarely to be
    /// learned (see [`DEFAULT_MIN_LIFTED`] for the measurements).
    pub fn strip_rare_encoded_labels(&mut self, min: usize) {
        let Some(labels) = &self.labels else { return };
        let mut counts = vec![0usize; labels.len()];
        for s in &self.sentences {
            for l in s.gold.labels() {
                counts[l.index()] += 1;
            }
        }
        let mut kept = LabelSet::new(labels.name(Label::ROOT));
        let mut stripped = 0;
        let renumber: Vec<Label> = (0..labels.len())
            .map(|i| {
                let name = labels.name(Label::from_index(i));
                let mark = parse_mark(name);
                if (mark.lifted || mark.down) && counts[i] < min {
                    stripped += counts[i];
                    kept.intern(mark.base)
                } else {
                    kept.intern(name)
                }
            })
            .collect();
        if kept.len() == labels.len() {
            return;
        }
        for s in &mut self.sentences {
            s.gold.map_labels(|l| renumber[l.index()]);
        }
        self.labels = Some(kept);
        self.stripped_rare_lifts += stripped;
    }

    /// Folds the token lines of `sent` into the fingerprint.
    fn fingerprint_lines(&mut self, sent: &Sentence) {
        for t in sent.token_lines() {
            self.fingerprint = combine(self.fingerprint, hash_str(t.text()));
        }
    }

    /// [`TrainingSet::add`] without the fingerprint.
    fn add_tree(&mut self, sent: &Sentence, path: &Path) -> Result<(), CorpusError> {
        check_marks(sent, path)?;
        let heads = annotated_heads(sent, path)?;
        let annotated = heads.iter().filter(|h| h.is_some()).count();
        if annotated == 0 {
            self.skipped_unannotated += 1;
            return Ok(());
        }
        // DEPREL only where the head is annotated; `None` also where the label is left open.
        let deprels: Vec<Option<&str>> = sent
            .words()
            .zip(&heads)
            .map(|(w, h)| h.and(Some(w.get(Column::Deprel))).filter(|&d| d != UNANNOTATED))
            .collect();
        let partial = annotated < heads.len() || deprels.contains(&None);
        let labels = self.labels.get_or_insert_with(|| {
            let root = heads.iter().zip(&deprels).find_map(|(&h, &d)| if h == Some(0) { d } else { None });
            LabelSet::new(root.unwrap_or("root"))
        });
        let root_name = labels.name(Label::ROOT).to_string();
        let roots = heads.iter().filter(|&&h| h == Some(0)).count();
        // A full tree needs its one root word; a partial annotation may leave it open (and
        // `partial_heads` refused two).
        let root_ok = (roots == 1 || (partial && roots == 0))
            && heads.iter().zip(&deprels).all(|(&h, &d)| d.is_none_or(|d| (h == Some(0)) == (d == root_name)));
        if !root_ok {
            self.skipped_root += 1;
            return Ok(());
        }
        // A full tree takes the path it always took (labels interned in word order).
        let mut full: Option<Vec<usize>> = (!partial).then(|| heads.iter().flatten().copied().collect());
        let mut full_deprels: Vec<String> = deprels.iter().flatten().map(|d| d.to_string()).collect();
        let projective = match &mut full {
            Some(full) if !is_projective(full) => match self.projective {
                Some(scheme) => {
                    let lifts = lift(full, &mut full_deprels, scheme).map_err(|e| CorpusError {
                        path: path.to_path_buf(),
                        line: sent.line_of_word(1),
                        kind: ErrorKind::Unliftable(e.to_string()),
                    })?;
                    self.lifted_sentences += 1;
                    self.lifts += lifts;
                    true
                }
                None => false,
            },
            Some(_) => true,
            None => is_projective_partial(&heads),
        };
        if !projective {
            self.skipped_nonprojective += 1;
            return Ok(());
        }
        let gold = match full {
            Some(full) => {
                let arc_labels: Vec<Label> = full_deprels
                    .iter()
                    .map(|d| {
                        // A lifted label's base and head labels are interned too, so that
                        // lowering finds them whether or not they occur unlifted.
                        let mark = parse_mark(d);
                        if mark.lifted {
                            labels.intern(mark.base);
                            mark.up.map(|u| labels.intern(u));
                        }
                        labels.intern(d)
                    })
                    .collect();
                GoldTree::new(&full, &arc_labels)
            }
            None => {
                let arc_labels: Vec<Option<Label>> = deprels.iter().map(|d| d.map(|d| labels.intern(d))).collect();
                GoldTree::partial(&heads, &arc_labels)
            }
        };
        let mut attrs = Vec::new();
        encode_sentence(sent, self.morphology, &mut attrs);
        self.words += sent.len();
        self.annotated_words += annotated;
        self.partial_sentences += usize::from(partial);
        self.sentences.push(TrainSentence { attrs, gold });
        Ok(())
    }
}

/// Pseudo-projective training: the label encoding of lifted trees, and how many times an
/// encoded label must occur to be kept ([`TrainingSet::strip_rare_encoded_labels`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifting {
    pub scheme: Scheme,
    pub min_count: usize,
}

/// The command line's default [`TrainOptions::min_feature_count`] for the perceptron and the
/// passive-aggressive learners: features seen fewer than 5 times on the oracle's path through
/// the training data are left out. Rare features are where these learners overfit; leaving
/// them out gains dev LAS on every shared treebank and halves the number of weights. Parsing
/// is as fast (en_ewt, whole-process `parse`, `scripts/compare-speed.sh`, 5 rounds: 1.007×
/// one thread, 1.03× two threads: the 9.5 MB bound holds both tables at the same size; on
/// el_gdt and hu_szeged the table shrinks below it). Measured with `scripts/compare-learners.sh`
/// (perceptron, arc-eager, 15 epochs, the stored default model: i8, 9.5 MB bound, Head
/// lifting; dev LAS over all words; `TAG=fN EXTRA="--min-feature-count N"`):
///
/// | cutoff | en_ewt | el_gdt | hu_szeged | en_ewt weights |
/// |---:|---:|---:|---:|---:|
/// | 1 (none) | 87.60 | 86.44 | 77.66 | 3,557,970 |
/// | 2 | 87.85 | 86.79 | 77.53 | 2,459,788 |
/// | 3 | 87.99 | 86.94 | 78.16 | 2,174,740 |
/// | 5 | **88.09** | **87.11** | **78.40** | 1,826,330 |
/// | 7 | 87.76 | 86.73 | 78.02 | 1,620,260 |
/// | 10 | 87.80 | 86.73 | 77.56 | 1,387,259 |
///
/// With seed 2, cutoff 1 against 5: en_ewt 87.59 / 87.60, el_gdt 86.35 / 86.77, hu_szeged
/// 77.26 / 77.68: the gain is real on el_gdt and hu_szeged (+0.4 to +0.7) and within seed
/// noise on en_ewt (+0.0 to +0.5). The passive-aggressive learners gain as much (hu_szeged:
/// pa 77.48 → 78.38, cost-sensitive 77.21 → 77.95). The logistic learner loses (hu_szeged
/// 77.32 → 76.20: L1 already prunes it), and the confidence-weighted one gains nothing on
/// average (cutoff 1 / 5 / 10: en_ewt 87.08 / 87.26 / 87.22, el_gdt 86.51 / 86.67 / 86.00,
/// hu_szeged 76.90 / 76.46 / 75.75): CW gives rare features large steps on purpose (Haulrich
/// 2009, Figure 2). Their default is 1 ([`LearnerKind::default_min_feature_count`]).
pub const DEFAULT_MIN_FEATURE_COUNT: u32 = 5;

/// The default `min_count` of [`Lifting`]: encoded labels seen fewer than 10 times in training
/// lose their mark. Measured with `scripts/compare-systems.sh` (arc-eager, Head, seed 1; dev
/// LAS, and `spoolparse parse` speed on en_ewt dev ×8, one thread, against the model without
/// pseudo-projective training):
///
/// | min count | en_ewt labels | en_ewt LAS | el_gdt LAS | hu_szeged LAS | en_ewt speed |
/// |---:|---:|---:|---:|---:|---:|
/// | (no lifting) | 51 | 87.93 | 86.09 | 76.05 | 1.00× |
/// | 1 | 136 | 87.94 | 86.59 | 77.59 | 0.58× |
/// | 3 | 83 | 87.81 | 86.43 | 77.36 | 0.82× |
/// | 10 | 57 | 87.72 | 86.41 | 77.63 | 0.98× |
/// | 30 | 54 | 87.74 | 86.41 | 77.19 | 0.98× |
///
/// Every label is a class of LEFT-ARC and RIGHT-ARC, so the 85 lifted labels of en_ewt at
/// count 1 (most seen once) nearly triple the scoring work. On en_ewt, seeds move dev LAS by
/// ±0.15 (without lifting 87.93, 87.70, 87.64; count 10: 87.72, 87.64, 87.84), so lifting
/// neither helps nor hurts there; on hu_szeged it gains 1.6 points at every count. Count 10
/// keeps nearly all of that gain for 2% of speed; `--lift-min-count 1` trades 42% of the speed
/// for up to 0.2 more LAS on el_gdt.
pub const DEFAULT_MIN_LIFTED: usize = 10;

impl Lifting {
    /// `scheme` with the default minimum count.
    pub fn new(scheme: Scheme) -> Lifting {
        Lifting { scheme, min_count: DEFAULT_MIN_LIFTED }
    }
}

/// Reads gold training files, full or partial annotations, as [`TrainingSet::add`] does.
pub fn load_training(paths: &[PathBuf]) -> Result<TrainingSet, CorpusError> {
    load_training_with(paths, true, None, &mut |_, _| {})
}

/// [`load_training`], with features reading LEMMA and FEATS only with `morphology`, and
/// `retag(i, sentence)` called on the `i`-th sentence of the files (counting from 0, skipped
/// ones included) before its features are taken, to put predicted tags in.
pub fn load_training_with(
    paths: &[PathBuf],
    morphology: bool,
    lifting: Option<Lifting>,
    retag: &mut dyn FnMut(usize, &mut Sentence),
) -> Result<TrainingSet, CorpusError> {
    let projective = lifting.map(|l| l.scheme);
    let mut set = TrainingSet { morphology, projective, ..TrainingSet::default() };
    let mut index = 0;
    for path in paths {
        for sent in Reader::open(path, Format::from_path(path))? {
            let mut sent = sent?;
            // The fingerprint is of the file as read, before retagging.
            set.fingerprint_lines(&sent);
            retag(index, &mut sent);
            index += 1;
            set.add_tree(&sent, path)?;
        }
    }
    if let Some(l) = lifting {
        set.strip_rare_encoded_labels(l.min_count);
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
        // Evaluation compares against gold UPOS (punctuation), so that is read before
        // retagging; the features then see the retagged words.
        let mut dev = DevSentence::from_sentence(&sent, path, morphology)?;
        retag(&mut sent);
        encode_sentence(&sent, morphology, &mut dev.attrs);
        out.push(dev);
    }
    Ok(out)
}

/// Parses the dev sentences with `weights` and scores their annotated words.
pub fn evaluate_dev<S: Scorer>(
    encoding: Encoding,
    dev: &[DevSentence],
    weights: S,
    labels: &LabelSet,
    fallback: Label,
) -> Scores {
    let mut parser = Parser::from_parts(encoding, weights, labels, fallback);
    let mut counts = Counts::default();
    for s in dev {
        parser.parse_attrs(&s.attrs);
        for (i, &gold_head) in s.heads.iter().enumerate() {
            let Some(gold_head) = gold_head else { continue };
            let w = i + 1;
            let label = labels.name(parser.labels()[w]);
            counts.add(gold_head, s.gold_deprel(i, label), &s.upos[i], parser.heads()[w] as usize, label);
        }
    }
    counts.scores()
}

/// The greedy decisions of `weights` on the dev sentences whose gold tree the dynamic oracle
/// handles (annotated arcs projective, at most one root word, and one for a full tree), each
/// with its legal scores and zero-cost set: the data a temperature is fitted on.
pub fn dev_decisions<S: Scorer>(system: System, dev: &[DevSentence], weights: S, labels: &LabelSet) -> Vec<Decision> {
    // A label the model does not know can never be predicted: map it beyond the inventory.
    let unknown = Label::from_index(labels.len());
    let mut out = Vec::new();
    let mut config = Configuration::new(0);
    let mut extractor = Extractor::new(system);
    let mut scores = TransitionScores::new(&weights, labels.len());
    let mut zero = Vec::new();
    for s in dev {
        let roots = s.heads.iter().filter(|&&h| h == Some(0)).count();
        let full = s.annotated() == s.heads.len();
        // A full tree needs one root word (the oracle's costs are exact only then); a partial
        // one at most one, and some annotated arc to learn anything from.
        if roots > 1 || (full && roots == 0) || s.annotated() == 0 || !is_projective_partial(&s.heads) {
            continue;
        }
        let arc_labels: Vec<Option<Label>> = s
            .heads
            .iter()
            .zip(&s.deprels)
            .map(|(&h, d)| match (h, d.as_str()) {
                (Some(0), _) => Some(Label::ROOT),
                (_, UNANNOTATED) => None,
                _ => Some(labels.get(d).unwrap_or(unknown)),
            })
            .collect();
        let gold = GoldTree::partial(&s.heads, &arc_labels);
        config.reset(s.heads.len());
        while !system.is_terminal(&config) {
            let legal = system.legal(&config);
            scores.score(&weights, extractor.extract(&config, &s.attrs), &legal);
            system.zero_cost(&config, &gold, labels.len(), &mut zero);
            let mut d = Decision::default();
            for t in legal.transitions(labels.len()) {
                d.scores.push(scores.get(t));
                d.zero_cost.push(zero.contains(&t.index()));
            }
            if d.zero_cost.contains(&true) {
                out.push(d);
            }
            system.apply(&mut config, scores.best(&legal).unwrap_or(Transition::Shift));
        }
    }
    out
}

/// Per dev sentence, per annotated word: the raw confidence of its arc (the probability of the
/// transition that attached it at `temperature`) and whether the arc is right (head and
/// universal label, the head alone where the label is open). Unannotated words are left out.
pub fn dev_arc_pairs(
    encoding: Encoding,
    dev: &[DevSentence],
    weights: &Weights,
    labels: &LabelSet,
    fallback: Label,
    temperature: f32,
) -> Vec<Vec<(f32, f32)>> {
    let mut parser = Parser::from_parts(encoding, weights, labels, fallback).with_confidence(temperature);
    dev.iter()
        .map(|s| {
            parser.parse_attrs(&s.attrs);
            s.heads
                .iter()
                .enumerate()
                .filter_map(|(i, &gold_head)| {
                    let w = i + 1;
                    let head = parser.heads()[w] as usize;
                    let label = labels.name(parser.labels()[w]);
                    let (_, right) = attachment(gold_head?, s.gold_deprel(i, label), head, label);
                    Some((parser.arc_confidence()[w], f32::from(u8::from(right))))
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
    let classes = Transition::count(set.labels.as_ref().map_or(1, LabelSet::len));
    match opts.learner {
        LearnerKind::Perceptron => train_with(Perceptron::new(classes), set, dev, opts, info, progress),
        LearnerKind::Logistic => {
            train_with(Logistic::new(classes, opts.rda, set.words), set, dev, opts, info, progress)
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
    set: &TrainingSet,
    dev: Option<&[DevSentence]>,
    opts: &TrainOptions,
    mut info: TrainingInfo,
    progress: &mut dyn FnMut(Progress),
) -> Model {
    let labels = set.labels.clone().unwrap_or_else(|| LabelSet::new("root"));
    let fallback = fallback_label(set, &labels);
    let classes = Transition::count(labels.len());
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut order: Vec<usize> = (0..set.sentences.len()).collect();
    let mut config = Configuration::new(0);
    let system = opts.system;
    let encoding = Encoding { system, projective: set.projective };
    let roll_in = opts.roll_in();
    let kept =
        (opts.min_feature_count > 1).then(|| frequent_features(set, system, labels.len(), opts.min_feature_count));
    let mut extractor = Extractor::new(system);
    let mut kept_features: Vec<u64> = Vec::new();
    let mut scores = vec![0.0f32; classes];
    let mut probs = vec![0.0f32; classes];
    let mut costs: Vec<(usize, u32)> = Vec::with_capacity(classes);
    let mut zero: Vec<usize> = Vec::with_capacity(classes);
    let mut best: Option<(f64, u32, Weights, Scores)> = None;

    for epoch in 1..=opts.epochs {
        let started = Instant::now();
        order.shuffle(&mut rng);
        let (mut errors, mut transitions) = (0usize, 0usize);
        for (done, &i) in order.iter().enumerate() {
            let sent = &set.sentences[i];
            config.reset(sent.gold.len());
            while !system.is_terminal(&config) {
                let mut feats = extractor.extract(&config, &sent.attrs);
                if let Some(kept) = &kept {
                    kept_features.clear();
                    kept_features.extend(feats.iter().filter(|f| kept.contains(f)));
                    feats = &kept_features;
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
        let weights = learner.weights();
        let dev_scores = dev.map(|d| evaluate_dev(encoding, d, &weights, &labels, fallback));
        let report =
            EpochReport { epoch, words: set.words, seconds: train_seconds, errors, transitions, dev: dev_scores };
        progress(Progress::Epoch(&report));
        let las = dev_scores.map_or(f64::from(epoch), |s| s.las);
        if best.as_ref().is_none_or(|(b, ..)| las > *b) {
            best = Some((las, epoch, weights, dev_scores.unwrap_or_default()));
        }
    }

    let (_, best_epoch, weights, dev_scores) = best.unwrap_or_else(|| (0.0, 0, learner.weights(), Scores::default()));
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
    let mut model = Model {
        system,
        projective: set.projective,
        feature_set: feature_set(system).to_string(),
        labels,
        fallback,
        weights,
        info,
        morphology: set.morphology,
        tagger: None,
        temperature: 1.0,
        arc_calibration: None,
    };
    if let Some(d) = dev {
        calibrate(&mut model, d);
    }
    model
}

/// Fits the model's confidence on `dev`: the softmax temperature (on the greedy decisions'
/// zero-cost sets, [`dev_decisions`]), the isotonic arc calibrator, and the arc ECE before
/// and after it (2-fold cross-fitted, [`arc_ece`]) in the training info. Partial dev
/// sentences count with their annotated words only.
pub fn calibrate(model: &mut Model, dev: &[DevSentence]) {
    model.temperature = fit_temperature(&dev_decisions(model.system, dev, &model.weights, &model.labels));
    let pairs = dev_arc_pairs(model.encoding(), dev, &model.weights, &model.labels, model.fallback, model.temperature);
    let (raw, cross) = arc_ece(&pairs);
    model.info.dev_arc_ece_raw = raw;
    model.info.dev_arc_ece_crossfit = cross;
    model.arc_calibration = Isotonic::fit(&mut pairs.into_iter().flatten().collect::<Vec<_>>());
}

/// Calibration of transitions (Goldberg 2013, Table 4): `model` parses the gold file greedily;
/// each predicted transition's probability is binned, and it counts as correct when the dynamic
/// oracle gives it zero cost. Sentences the oracle does not handle (non-projective, not
/// single-rooted) are left out.
pub fn transition_calibration(model: &ModelFile, gold_path: &Path) -> Result<Reliability, CorpusError> {
    let meta = model.meta();
    let dev = load_dev_with(gold_path, meta.morphology, &mut |_| {})?;
    let mut r = Reliability::default();
    for d in dev_decisions(model.system(), &dev, model.weights(), &meta.labels) {
        let best = crate::learn::perceptron::argmax(&d.scores, |_| true).unwrap_or(0);
        let p = crate::learn::confidence::probability_of(&d.scores, best, meta.temperature, |_| true);
        r.add(f64::from(p), if d.zero_cost[best] { 1.0 } else { 0.0 });
    }
    Ok(r)
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
    lifting: Option<Lifting>,
    seed: u64,
) -> Result<Prepared, CorpusError> {
    let Some(topts) = tagger else {
        let set = load_training_with(train, true, lifting, &mut |_, _| {})?;
        let dev = dev.map(load_dev).transpose()?;
        return Ok(Prepared { set, dev, tagger: None, dev_tagging: None });
    };
    let mut tags = TagSet::default();
    let tag_sentences = load_tagging(train, &mut tags)?;
    let predicted =
        (topts.jackknife >= 2).then(|| jackknife(&tag_sentences, &tags, topts.jackknife, topts.epochs, seed));
    let model = train_tagger(&tag_sentences, &tags, topts.epochs, seed);
    let set = load_training_with(train, false, lifting, &mut |i, sent| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TrainingInfo;
    use crate::transition::NONE;

    /// "The cat sat .": word (HEAD, DEPREL) pairs of the full tree.
    const FULL: [(&str, &str); 4] = [("2", "det"), ("3", "nsubj"), ("0", "root"), ("3", "punct")];

    /// CoNLL-U text of sentences over the words of [`FULL`], each given as (HEAD, DEPREL) per word.
    fn conllu(sentences: &[&[(&str, &str)]]) -> String {
        let forms = [("The", "DET"), ("cat", "NOUN"), ("sat", "VERB"), (".", "PUNCT")];
        let mut text = String::new();
        for words in sentences {
            for (i, (head, deprel)) in words.iter().enumerate() {
                let (form, upos) = forms[i % forms.len()];
                text.push_str(&format!("{}\t{form}\t{form}\t{upos}\t_\t_\t{head}\t{deprel}\t_\t_\n", i + 1));
            }
            text.push('\n');
        }
        text
    }

    fn sentences(text: &str) -> Vec<Sentence> {
        Reader::new(text.as_bytes(), Path::new("t.conllu"), Format::Conllu).map(|s| s.expect("well-formed")).collect()
    }

    fn set_of(text: &str) -> Result<TrainingSet, CorpusError> {
        let mut set = TrainingSet::default();
        for s in sentences(text) {
            set.add(&s, Path::new("t.conllu"))?;
        }
        Ok(set)
    }

    /// A non-projective tree over the words of [`FULL`]: `det` from word 1 to word 3 crosses
    /// the root word 2, so Head lifting relabels it `det↑nsubj` under word 2.
    const NON_PROJECTIVE: [(&str, &str); 4] = [("2", "nsubj"), ("0", "root"), ("1", "det"), ("2", "punct")];

    #[test]
    fn rare_lifted_labels_lose_their_mark_and_the_others_are_renumbered() {
        let path = Path::new("t.conllu");
        for (copies, min, kept) in [(1, 2, false), (2, 2, true)] {
            let mut set = TrainingSet { projective: Some(Scheme::Head), ..TrainingSet::default() };
            let mut text: Vec<&[(&str, &str)]> = vec![&FULL; 3];
            text.extend(std::iter::repeat_n(&NON_PROJECTIVE[..], copies));
            for sent in sentences(&conllu(&text)) {
                set.add(&sent, path).unwrap();
            }
            assert_eq!(set.lifted_sentences, copies);
            set.strip_rare_encoded_labels(min);
            let labels = set.labels.as_ref().unwrap();
            assert_eq!(labels.get("det↑nsubj").is_some(), kept, "{copies} copies, min {min}");
            assert_eq!(set.sentences.len(), 3 + copies);
            assert_eq!(set.stripped_rare_lifts, if kept { 0 } else { copies });
            // Renumbering keeps every tree's labels; the lifted arc keeps its mark or loses it.
            let lifted = if kept { "det↑nsubj" } else { "det" };
            for (i, s) in set.sentences.iter().enumerate() {
                let names: Vec<&str> = s.gold.labels().map(|l| labels.name(l)).collect();
                let expected =
                    if i < 3 { ["det", "nsubj", "root", "punct"] } else { ["nsubj", "root", lifted, "punct"] };
                assert_eq!(names, expected, "sentence {i}");
            }
        }
    }

    #[test]
    fn add_reads_full_trees_as_load_training_does() {
        let two_roots = [("0", "root"), ("3", "nsubj"), ("0", "root"), ("3", "punct")];
        let crossing = [("3", "det"), ("4", "nsubj"), ("0", "root"), ("3", "punct")];
        let text = conllu(&[&FULL, &two_roots, &crossing, &FULL]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.conllu");
        std::fs::write(&path, &text).unwrap();
        let loaded = load_training_with(std::slice::from_ref(&path), false, None, &mut |_, _| {}).unwrap();
        let mut added = TrainingSet::default();
        for s in sentences(&text) {
            added.add(&s, &path).unwrap();
        }
        for set in [&loaded, &added] {
            assert_eq!((set.sentences.len(), set.words, set.annotated_words), (2, 8, 8));
            assert_eq!((set.skipped_root, set.skipped_nonprojective, set.partial_sentences), (1, 1, 0));
            assert!(set.sentences.iter().all(|s| !s.gold.is_partial()));
        }
        assert_ne!(loaded.fingerprint, 0);
        assert_eq!(loaded.fingerprint, added.fingerprint);
        assert_eq!(loaded.labels, added.labels);
    }

    #[test]
    fn partial_sentences_keep_their_annotated_arcs_only() {
        let partial = [("_", "_"), ("3", "nsubj"), ("0", "root"), ("_", "_")];
        let open_labels = [("2", "det"), ("3", "_"), ("0", "_"), ("3", "punct")];
        let unannotated = [("_", "_"); 4];
        // 1 <- 2 and 1 -> 3 annotated, 2 not: no completion is projective.
        let uncompletable = [("2", "amod"), ("_", "_"), ("1", "obl"), ("_", "_")];
        let root_label_below = [("_", "_"), ("3", "root"), ("_", "_"), ("_", "_")];
        let set = set_of(&conllu(&[&partial, &open_labels, &unannotated, &uncompletable, &root_label_below])).unwrap();
        assert_eq!(set.sentences.len(), 2);
        assert_eq!((set.words, set.annotated_words, set.partial_sentences), (8, 6, 2));
        assert_eq!((set.skipped_unannotated, set.skipped_nonprojective, set.skipped_root), (1, 1, 1));
        let labels = set.labels.as_ref().unwrap();
        // Labels come from annotated DEPREL only, in order: never `_`, nor from skipped sentences.
        assert_eq!(
            (0..labels.len()).map(|i| labels.name(Label::from_index(i))).collect::<Vec<_>>(),
            ["root", "nsubj", "det", "punct"]
        );
        let gold = &set.sentences[0].gold;
        assert!(gold.is_partial());
        assert_eq!((gold.annotated(), gold.head(1), gold.head(2), gold.head(4)), (2, NONE, 3, NONE));
        assert_eq!(gold.label(2), labels.get("nsubj"));
        let gold = &set.sentences[1].gold;
        assert!(gold.is_partial());
        assert_eq!((gold.annotated(), gold.label(2), gold.label(3)), (4, None, Some(Label::ROOT)));
    }

    #[test]
    fn partial_sentences_with_two_root_words_are_errors() {
        let two_roots = [("0", "root"), ("_", "_"), ("0", "root"), ("_", "_")];
        let e = set_of(&conllu(&[&FULL, &two_roots])).unwrap_err();
        assert_eq!(e.to_string(), "t.conllu:8: words 1 and 3 both have HEAD 0: a tree has one root word");
    }

    #[test]
    fn the_root_label_comes_from_the_first_sentence() {
        let top = [("2", "det"), ("3", "nsubj"), ("0", "TOP"), ("3", "punct")];
        let open_root = [("2", "det"), ("3", "nsubj"), ("0", "_"), ("_", "_")];
        let set = set_of(&conllu(&[&top, &open_root])).unwrap();
        assert_eq!(set.labels.unwrap().name(Label::ROOT), "TOP");
        assert_eq!(set.sentences.len(), 2);
        // A first sentence without an annotated root DEPREL gives the UD default.
        let set = set_of(&conllu(&[&open_root, &top])).unwrap();
        assert_eq!(set.labels.unwrap().name(Label::ROOT), "root");
        assert_eq!((set.sentences.len(), set.skipped_root), (1, 1));
    }

    /// A model trained on a few copies of [`FULL`], with `oracle`, on full and partial copies.
    fn small_model(system: System, oracle: OracleKind, learner: LearnerKind) -> Model {
        let partial = [("_", "_"), ("3", "nsubj"), ("0", "root"), ("_", "_")];
        let open_labels = [("2", "det"), ("3", "_"), ("0", "_"), ("3", "punct")];
        let set = set_of(&conllu(&[&FULL, &partial, &open_labels, &FULL, &partial])).unwrap();
        let opts = TrainOptions { system, oracle, learner, epochs: 3, explore_k: 1, ..TrainOptions::default() };
        train(&set, None, &opts, TrainingInfo::default(), &mut |_| {})
    }

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

    #[test]
    fn learner_names_round_trip_and_each_learner_has_its_roll_in() {
        for kind in LearnerKind::ALL {
            assert_eq!(LearnerKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(LearnerKind::from_name("svm"), None);
        let roll_in = |learner| TrainOptions { learner, ..TrainOptions::default() }.roll_in();
        assert_eq!(roll_in(LearnerKind::ConfidenceWeighted), roll_in(LearnerKind::Perceptron));
        assert!(matches!(roll_in(LearnerKind::CostSensitive), RollIn::Mixture { .. }));
        assert!(matches!(roll_in(LearnerKind::Logistic), RollIn::Sample { .. }));
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

    fn dev_of(text: &str) -> Vec<DevSentence> {
        sentences(text).iter().map(|s| DevSentence::from_sentence(s, Path::new("t.conllu"), true).unwrap()).collect()
    }

    #[test]
    fn dev_scores_and_calibration_data_count_annotated_words_only() {
        let model = small_model(System::ArcEager, OracleKind::Dynamic, LearnerKind::Perceptron);
        let score =
            |dev: &[DevSentence]| evaluate_dev(model.encoding(), dev, &model.weights, &model.labels, model.fallback);
        // Gold that the model gets wrong on words 1 and 4 and right on 2 and 3.
        let wrong_ends = [("3", "nsubj"), ("3", "nsubj"), ("0", "root"), ("2", "punct")];
        let full = score(&dev_of(&conllu(&[&wrong_ends])));
        assert_eq!((full.words, full.uas), (4, 50.0));
        let right_only = [("_", "_"), ("3", "nsubj"), ("0", "root"), ("_", "_")];
        let dev = dev_of(&conllu(&[&right_only]));
        assert_eq!((dev[0].annotated(), dev[0].heads[0], dev[0].heads[2]), (2, None, Some(0)));
        let partial = score(&dev);
        assert_eq!((partial.words, partial.uas, partial.las), (2, 100.0, 100.0));
        // An open label under a right head is a right labelled attachment.
        let open = [("2", "_"), ("3", "_"), ("0", "_"), ("3", "_")];
        let open = score(&dev_of(&conllu(&[&open])));
        assert_eq!((open.words, open.las), (4, 100.0));
        let pairs = dev_arc_pairs(model.encoding(), &dev, &model.weights, &model.labels, model.fallback, 1.0);
        assert_eq!(pairs[0].len(), 2);
        assert!(pairs[0].iter().all(|&(_, right)| right == 1.0));
        assert!(!dev_decisions(model.system, &dev, &model.weights, &model.labels).is_empty());
        let unannotated = dev_of(&conllu(&[&[("_", "_"); 4]]));
        assert_eq!(score(&unannotated).words, 0);
        assert!(dev_decisions(model.system, &unannotated, &model.weights, &model.labels).is_empty());
    }

    #[test]
    fn load_dev_reads_partial_annotations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.conllu");
        let partial = [("_", "_"), ("3", "nsubj"), ("0", "root"), ("_", "_")];
        std::fs::write(&path, conllu(&[&FULL, &partial])).unwrap();
        let dev = load_dev(&path).unwrap();
        assert_eq!(dev.iter().map(DevSentence::annotated).collect::<Vec<_>>(), [4, 2]);
        assert_eq!(dev[0].heads, [Some(2), Some(3), Some(0), Some(3)]);
        let two_roots = [("0", "root"), ("_", "_"), ("0", "root"), ("_", "_")];
        std::fs::write(&path, conllu(&[&FULL, &two_roots])).unwrap();
        let e = load_dev(&path).unwrap_err().to_string();
        assert!(e.ends_with("dev.conllu:8: words 1 and 3 both have HEAD 0: a tree has one root word"), "{e}");
    }
}
