//! Training: reading gold treebanks into oracle-ready form, and the online training loop of
//! Goldberg & Nivre (2012): Algorithm 2 (static oracle) and Algorithm 3 (dynamic oracle with
//! exploration). The loop is generic over the learner ([`crate::learn::Learner`]: the averaged
//! perceptron, logistic regression, confidence-weighted, cost-sensitive and plain
//! passive-aggressive) and the transition system: each decision gives the learner the cost
//! of every legal transition, and a roll-in policy ([`RollIn`]) chooses what to follow.
//!
//! Training and dev sentences may be partial annotations: a word whose HEAD is `_` has no gold
//! arc, and a DEPREL of `_` under a known HEAD leaves the label open. Training learns from the
//! annotated arcs only, through the dynamic oracle over the partial tree
//! ([`GoldTree::partial`](crate::transition::GoldTree::partial); Goldberg & Nivre 2013 on
//! learning from partial trees); dev scores and calibration data count only annotated words,
//! and a word whose label is open scores as labelled right when its head is.
//!
//! By file: [`options`] (what a run is told), [`data`] (the gold data it reads),
//! [`completion`] (partial annotations completed by a model's constrained parse), [`domain`]
//! (the user's text's own copy of each feature, for retraining),
//! [`training_loop`] (the epochs), [`neural`] (the accurate tier's training, adapted from the same data), [`dev`] (a model's parses of the dev set: scores and the
//! data calibration is fitted on), [`calibration`] (the parser's confidence fitted on them),
//! [`pipeline_confidence`] (the whole pipeline's, fitted on dev parsed from raw text), [`eval`]
//! (attachment scores of files), [`align`] (the same across tokenizations), [`plot`] (charts of calibration)
//! and [`teacher`] (an accurate model's parses of unlabeled text, for uptraining a fast one).

pub mod align;
pub mod calibration;
pub mod completion;
pub mod data;
pub mod dev;
pub mod domain;
pub mod eval;
#[cfg(test)]
mod fixtures;
pub mod neural;
pub mod options;
pub mod pipeline_confidence;
pub mod plot;
pub mod teacher;
pub mod training_loop;

pub use calibration::{arc_ece, calibrate, calibrated_arc_ece, transition_calibration};
pub use data::{
    check_marks, load_dev, load_dev_with, load_training, load_training_with, prepare, DevSentence, Prepared,
    TrainSentence, TrainingSet,
};
pub use dev::{
    dev_arc_pairs, dev_decisions, evaluate_dev, evaluate_dev_sentences, evaluate_sentences_with, evaluate_with,
};
pub use domain::Domain;
pub use neural::train_neural;
pub use options::{
    LearnerKind, Lifting, OracleKind, RollIn, TaggerOptions, TrainOptions, DEFAULT_MIN_FEATURE_COUNT,
    DEFAULT_MIN_LIFTED,
};
pub use training_loop::{train, train_refreshing, BetweenEpochs, EpochReport, Progress};
