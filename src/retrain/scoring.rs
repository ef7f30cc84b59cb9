//! The gate's scores: the serving model and the candidate parse the same sentences (the
//! held-out file and the held-out annotations, each as it analyzes text), and the per-sentence
//! counts become the bootstraps [`super::gate`] decides on. This module parses; it must not
//! decide, train or touch the models directory.

use crate::corpus::Sentence;
use crate::model::file::ModelFile;
use crate::model::registry::file_name;
use crate::parse::parser::Parser;
use crate::train::eval::{Counts, Scores};
use crate::train::{self, DevSentence};

use super::gate::{self, Bootstrap, UserText};
use super::report::GateScores;
use super::whole_text;

/// The sentences a model is gated on, as that model analyzes them.
#[derive(Clone, Copy)]
pub(super) struct Gated<'a> {
    pub model: &'a ModelFile,
    /// `retrain.heldout`.
    pub heldout: &'a [DevSentence],
    /// The held-out annotations.
    pub annotations: &'a [DevSentence],
}

/// Both models' scores, and the bootstraps of the candidate over the serving model: on the
/// held-out file, and on the user's text (none without held-out annotations), whose sentences
/// as stored are `stored` (the daemon's confidence in the serving model's arcs is read there).
pub(super) fn score(
    serving: Gated,
    candidate: Gated,
    stored: &[&Sentence],
    samples: usize,
) -> (GateScores, GateScores, Bootstrap, Option<UserText>) {
    let (serving_scores, serving_counts) = gate_scores(serving);
    let (candidate_scores, candidate_counts) = gate_scores(candidate);
    let heldout = gate::bootstrap(&serving_counts.0, &candidate_counts.0, samples);
    let user = (!serving.annotations.is_empty()).then(|| {
        let published = whole_text::as_published(serving.model, stored, serving.annotations);
        let candidate_whole = whole_text::with_references_of(&published.whole, candidate.annotations);
        UserText {
            asked: gate::bootstrap(&serving_counts.1, &candidate_counts.1, samples),
            whole: gate::bootstrap(
                &counts(serving.model, &published.whole),
                &counts(candidate.model, &candidate_whole),
                samples,
            ),
            uncertain: whole_text::changed(candidate.model, candidate.annotations, &published),
        }
    });
    (serving_scores, candidate_scores, heldout, user)
}

/// `model`'s counts on each sentence of `dev`.
fn counts(model: &ModelFile, dev: &[DevSentence]) -> Vec<Counts> {
    train::evaluate_sentences_with(&mut Parser::new(model), dev, &model.meta().labels)
}

/// A model's scores on the held-out file and the held-out annotations, as stored, with the
/// counts of each sentence of both (for the gate's bootstrap).
fn gate_scores(gated: Gated) -> (GateScores, (Vec<Counts>, Vec<Counts>)) {
    let score = |dev: &[DevSentence]| -> (Scores, Vec<Counts>) {
        let per_sentence = counts(gated.model, dev);
        let mut all = Counts::default();
        per_sentence.iter().for_each(|c| all.merge(c));
        (all.scores(), per_sentence)
    };
    let (h, heldout_counts) = score(gated.heldout);
    let (a, annotation_counts) = score(gated.annotations);
    let scores = GateScores {
        model: file_name(gated.model.path()),
        heldout_uas: h.uas,
        heldout_las: h.las,
        annotations_las: if gated.annotations.is_empty() { 0.0 } else { a.las },
    };
    (scores, (heldout_counts, annotation_counts))
}
