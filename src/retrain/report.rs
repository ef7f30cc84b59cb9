//! What a cycle decided and did ([`Report`]), as written beside the candidate in the models
//! directory and printed by `spoolparse retrain --json`; the workbench's Models view reads it.
//! This module owns the report's shape; filling it in is the cycle's.

use serde::{Deserialize, Serialize};

use super::gate;

/// What a cycle decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The candidate serves from now on.
    Promoted,
    /// The candidate failed the gate and was removed.
    Rejected,
    /// Too few new annotations: nothing was trained.
    Skipped,
}

impl Decision {
    /// The name used in reports, logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Decision::Promoted => "promoted",
            Decision::Rejected => "rejected",
            Decision::Skipped => "skipped",
        }
    }
}

/// One model's scores in the gate.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GateScores {
    /// Model file name.
    pub model: String,
    pub heldout_uas: f64,
    pub heldout_las: f64,
    /// LAS over the annotated arcs of the held-out annotations (0 without any).
    pub annotations_las: f64,
}

/// Everything a cycle did, as written beside the candidate and printed by `retrain --json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub decision: Option<Decision>,
    /// Why, in words.
    pub reasons: Vec<String>,
    /// Unix seconds.
    pub started: u64,
    pub seconds: f64,
    pub current: GateScores,
    pub candidate: Option<GateScores>,
    /// Annotated sentences stored (deduplicated), of which held out, and new since the last
    /// cycle.
    pub annotations: usize,
    pub annotations_heldout: usize,
    pub annotations_heldout_arcs: usize,
    pub annotations_new: usize,
    /// Training data: sentences, words, of which partial sentences and annotated words.
    pub train_sentences: usize,
    pub train_words: usize,
    pub train_partial_sentences: usize,
    pub train_skipped_nonprojective: usize,
    pub train_skipped_root: usize,
    pub epochs: u32,
    pub learner: String,
    pub explore_k: u32,
    pub explore_p: f64,
    pub train_seconds: f64,
    /// `retrain.completion`, and what the serving model's completion did (partial sentences
    /// given model arcs, arcs added, unannotated words left open, completions refused).
    pub completion: String,
    pub completed_sentences: usize,
    pub completed_arcs: usize,
    pub completion_left_open: usize,
    pub completion_refused: usize,
    /// With `refresh`: model arcs in the completions of the last re-completion.
    pub refreshed_arcs: usize,
    /// `retrain.annotation_weight`, and sentences trained on per epoch (copies counted).
    pub annotation_weight: u32,
    pub train_examples: usize,
    /// `retrain.domain_features`: the annotations trained a copy of every feature of their own.
    #[serde(default)]
    pub domain_features: bool,
    /// Sentences of the daemon's own output trained on (`retrain.self_training`).
    pub self_training_sentences: usize,
    /// `retrain.teacher`: sentences of `retrain.unlabeled` the teacher parsed, and of its
    /// confident parses those trained on (each `retrain.teacher_weight` times).
    #[serde(default)]
    pub teacher_parsed: usize,
    #[serde(default)]
    pub teacher_sentences: usize,
    /// Words of unlabeled text changed since the last cycle that trained, counted up to
    /// `retrain.unlabeled_min_new_words` and no further (0 when not counted: with enough new
    /// annotations, without a teacher, or with the setting 0).
    #[serde(default)]
    pub unlabeled_new_words: usize,
    /// The gate's paired bootstraps.
    pub gate: Option<gate::Figures>,
    /// With `retrain.retrain_tagger`: annotated sentences with checked tags trained on (each
    /// `annotation_weight` times) and their words whose tags were checked, and UPOS accuracy
    /// on `retrain.heldout` of the serving model's tagger and the candidate's.
    pub tagger_retrained: bool,
    pub tagger_annotations: usize,
    pub tagger_annotated_words: usize,
    /// Annotated sentences the parser trained on as the serving tagger tags them (the tags it
    /// will be given): without `retrain.retrain_tagger`, those with checked tags; and those whose
    /// tags the parser does not know (XPOS `_`, another tag set), as the daemon retags them.
    pub annotations_retagged: usize,
    pub heldout_upos_serving: Option<f64>,
    pub heldout_upos_candidate: Option<f64>,
    /// When annotations trained on hold checked lemmas ([`LEMMAS_CHECKED_KEY`]) and
    /// `retrain.retrain_tagger` allows: the lemmatizer was retrained on `retrain.base` and those
    /// sentences' checked lemmas, and its lemma accuracy on `retrain.heldout` (analyzed as
    /// the serving model analyzes it) with the serving model's lemmatizer's.
    #[serde(default)]
    pub lemmatizer_retrained: bool,
    #[serde(default)]
    pub lemmatizer_annotations: usize,
    #[serde(default)]
    pub lemmatizer_annotated_words: usize,
    #[serde(default)]
    pub heldout_lemmas_serving: Option<f64>,
    #[serde(default)]
    pub heldout_lemmas_candidate: Option<f64>,
    /// Calibration refitted on the held-out file.
    pub temperature: f32,
    pub heldout_arc_ece_raw: f64,
    pub heldout_arc_ece_crossfit: f64,
    /// Where the candidate's calibration was fitted: `heldout` (`retrain.heldout`) or
    /// `annotations` (the held-out annotations, once `retrain.calibration_min_arcs`).
    pub calibrated_on: String,
    /// Arc ECE on the held-out annotations of the candidate calibrated on `retrain.heldout`,
    /// and (refitted on them) 2-fold cross-fitted; `None` without held-out annotations.
    pub annotations_arc_ece_heldout_fit: Option<f64>,
    pub annotations_arc_ece_refit: Option<f64>,
    /// The sentences `--min-precision` chooses the candidate's threshold on: the file, and how
    /// many of the user's sampled sentences it holds (0: `retrain.heldout`, until the held-out
    /// annotations hold `retrain.calibration_min_arcs` words of sampled sentences).
    #[serde(default)]
    pub precision_on: Option<String>,
    #[serde(default)]
    pub precision_sentences: usize,
    /// With a neural serving model: how the candidate was trained (`retrain.neural_from`:
    /// `serving`, fine-tuned from its weights, or `scratch`), the fine-tuning's steps and base
    /// share, and the annotated labels the model lacked, for which the candidate was grown
    /// ([`crate::neural::grow`]).
    #[serde(default)]
    pub neural_from: Option<String>,
    #[serde(default)]
    pub fine_tune_steps: u32,
    #[serde(default)]
    pub fine_tune_base_share: f64,
    #[serde(default)]
    pub new_labels: Vec<String>,
    /// Where the report is.
    pub report_file: Option<String>,
}
