//! Models: a trained model in memory ([`Model`], as training produces it, with its provenance
//! [`TrainingInfo`]), and what a model is made of and stored as. [`Model`] knows nothing of
//! its file format: [`mod@file`] writes it and maps it back.
//!
//! - [`features`]: Zhang & Nivre (2011) feature templates hashed to 64 bits;
//! - [`tagger`]: the part-of-speech tagger for tokenized text;
//! - [`analysis`]: the tagger, FEATS and lemma stages run and trained together;
//! - [`feats`]: morphological features (UFeats) after the tagger;
//! - [`lemmatizer`]: lemmas, from edit rules and a dictionary of training forms;
//! - [`neural`]: a neural model's architecture and weights, as the model file stores them;
//! - [`frequent_forms`]: the training text's commonest forms, which tell its language;
//! - [`tokenizer`]: the tokenizer and sentence splitter for raw text;
//! - [`whole_token`]: URLs, e-mail addresses, paths and options, which the tokenizer keeps whole;
//! - [`apostrophe`]: the curly apostrophe, read as the straight one by every stage;
//! - [`mod@file`]: the immutable, memory-mapped model file and its weight table;
//! - [`registry`]: the directory of model files a daemon serves from.

pub mod analysis;
pub mod apostrophe;
pub mod feats;
pub mod features;
pub mod file;
pub mod frequent_forms;
pub mod lemmatizer;
pub mod neural;
pub mod registry;
pub mod tagger;
pub mod tokenizer;
pub mod whole_token;

use crate::transition::projective::Scheme;
use crate::transition::{Encoding, System};

use serde::{Deserialize, Serialize};

use crate::base::label::{Label, LabelSet};
use crate::learn::confidence::Isotonic;
use crate::learn::perceptron::Weights;
use crate::model::feats::FeatsModel;
use crate::model::lemmatizer::LemmatizerModel;
use crate::model::tagger::TaggerModel;
use crate::model::tokenizer::{Scores, TokenizerModel};

/// How a model was trained and how it scored: printed by `inspect`, kept for provenance.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TrainingInfo {
    /// `static` or `dynamic`.
    pub oracle: String,
    pub epochs: u32,
    /// The epoch whose averaged weights were kept (best dev LAS).
    pub best_epoch: u32,
    pub explore_k: u32,
    pub explore_p: f64,
    pub seed: u64,
    pub train_files: Vec<String>,
    /// Order-sensitive hash of every training token line: which data made this model.
    pub train_fingerprint: u64,
    pub train_sentences: usize,
    pub train_words: usize,
    /// Training sentences left out because their gold tree is not projective.
    pub skipped_nonprojective: usize,
    /// Training sentences left out because they do not have exactly one root word (or use the
    /// root label elsewhere).
    pub skipped_root: usize,
    pub dev_file: Option<String>,
    pub dev_uas: f64,
    pub dev_las: f64,
    /// Folds used to tag the parser's training data (0: the parser saw gold tags).
    pub jackknife: u32,
    /// Tagger accuracy on the dev file (0 without a tagger).
    pub dev_upos: f64,
    pub dev_xpos: f64,
    /// Arc-level expected calibration error on dev: raw confidences, and isotonic-calibrated
    /// ones estimated by 2-fold cross-fitting.
    pub dev_arc_ece_raw: f64,
    pub dev_arc_ece_crossfit: f64,
}

/// A trained parser model.
#[derive(Debug, Clone)]
pub struct Model {
    /// The transition system the weights score.
    pub system: System,
    /// The pseudo-projective encoding its labels carry, if trained with one.
    pub projective: Option<Scheme>,
    /// Template set the weights belong to ([`crate::model::features::feature_set`]).
    pub feature_set: String,
    /// Label inventory; index 0 is the root label.
    pub labels: LabelSet,
    /// Label given to words the parser left without a head and that were repaired onto the root
    /// word (see `Configuration::finish`).
    pub fallback: Label,
    pub weights: Weights,
    pub info: TrainingInfo,
    /// What the parser's LEMMA and FEATS features read (not the columns in models meant for
    /// tagger output, which has neither).
    pub morphology: crate::model::features::Morphology,
    /// The part-of-speech tagger, for tokenized text.
    pub tagger: Option<TaggerModel>,
    /// FEATS and lemmas after the tagger (models trained before them have a tagger only).
    pub feats: Option<FeatsModel>,
    pub lemmatizer: Option<LemmatizerModel>,
    /// The tokenizer and sentence splitter, for raw text, with its dev scores (if it had a dev
    /// file).
    pub tokenizer: Option<(TokenizerModel, Option<Scores>)>,
    /// Softmax temperature that turns scores into calibrated transition probabilities (fitted
    /// on dev; 1 without dev data).
    pub temperature: f32,
    /// Post-hoc map from raw to calibrated arc confidence, fitted on dev.
    pub arc_calibration: Option<Isotonic>,
}

impl Model {
    /// How its transitions encode trees.
    pub fn encoding(&self) -> Encoding {
        Encoding { system: self.system, projective: self.projective }
    }
}
