//! What the answered sentences of the uniform sample ([`super::sample`]) say of the published
//! text, for the Models view: the precision of `accepted/` at the threshold the daemon serves
//! with, and the thresholds that `--min-precision` 0.90, 0.95 and 0.98 would get on the user's
//! text ([`crate::learn::precision::choose`], the same Learn-then-Test sequence as on the
//! model's calibration text).
//!
//! Each answer counts the words published right (its `Decision::sample`), at the confidence
//! they were published with, by the model its file names (`# model`): the figures are of the
//! serving model's answered sentences once there are some, else (just after a promotion, or
//! for files that name no model) of all, and say which. This module reads the audit log's decisions; it writes
//! nothing.

use serde::Serialize;

use super::answers::Decision;
use crate::daemon::sink::model_label;
use crate::learn::precision::{self, Measured, SentenceRow};
use crate::model::file::ModelFile;
use crate::parse::precision::Threshold;

/// The precisions a user is shown the thresholds of.
pub const TARGETS: [f64; 3] = [0.90, 0.95, 0.98];

/// The threshold the daemon is configured with: `parse.min_confidence` as given, and
/// `parse.min_precision`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked {
    pub min_confidence: Option<f64>,
    pub min_precision: Option<f64>,
}

/// A sampled sentence answered whole: what it measured, and the model that published it.
#[derive(Debug, Clone, PartialEq)]
pub struct Answered {
    pub row: SentenceRow,
    pub published_by: Option<String>,
}

/// What the answered samples say, as `/api/models` gives it (`precision`).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Sampled sentences answered whole, whichever model published them.
    pub answered: usize,
    /// Whether the figures below are of the sentences the serving model published (else, none
    /// of those being answered yet, of all).
    pub of_serving_model: bool,
    /// The sentences the figures are of, and their words.
    pub sentences: usize,
    pub words: u64,
    /// The serving threshold (from the model's calibration text, for a precision), or why
    /// there is none: `None` with no `error` when none is configured.
    pub threshold: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The answered words at or above it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_threshold: Option<Measured>,
    /// Per precision of [`TARGETS`], the threshold chosen on the answers.
    pub targets: Vec<Target>,
}

/// A precision, and the threshold the answers give for it.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub target: f64,
    /// `None`: the answers cannot promise it (too few, or too many wrong).
    pub threshold: Option<f64>,
    /// Share of the answered words kept at it, and their precision.
    pub kept: Option<f64>,
    pub precision: Option<f64>,
}

/// The sampled sentences answered whole in `decisions` (each once: the first answer).
pub fn answered(decisions: &[Decision]) -> Vec<Answered> {
    let mut seen = std::collections::HashSet::new();
    decisions
        .iter()
        .filter(|d| d.decision == "whole" && seen.insert(d.source.as_str()))
        .filter_map(|d| Some(Answered { row: d.sample?, published_by: d.published_by.clone() }))
        .collect()
}

/// What the `answered` sentences say (those `model` published, if any) at the threshold
/// `asked` gives on `model`, and for each of [`TARGETS`].
pub fn summary(answered: &[Answered], model: &ModelFile, asked: Asked) -> Summary {
    let serving = model_label(model);
    let of_serving: Vec<SentenceRow> =
        answered.iter().filter(|a| a.published_by.as_deref() == Some(serving.as_str())).map(|a| a.row).collect();
    let of_serving_model = !of_serving.is_empty();
    let rows = if of_serving_model { of_serving } else { answered.iter().map(|a| a.row).collect() };
    let rows = rows.as_slice();
    let resolved = Threshold::resolve(model, asked.min_confidence, asked.min_precision);
    let (threshold, error) = match resolved {
        Ok(t) => (t.min_confidence, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let targets = TARGETS
        .iter()
        .map(|&target| match precision::choose(rows, target) {
            Ok(c) => Target { target, threshold: Some(c.threshold), kept: Some(c.kept), precision: Some(c.precision) },
            Err(_) => Target { target, threshold: None, kept: None, precision: None },
        })
        .collect();
    Summary {
        answered: answered.len(),
        of_serving_model,
        sentences: rows.len(),
        words: rows.iter().map(|r| u64::from(r.words)).sum(),
        threshold,
        error,
        at_threshold: threshold.filter(|_| !rows.is_empty()).map(|t| precision::measure(rows, t)),
        targets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(kind: &str, source: &str, sample: Option<SentenceRow>) -> Decision {
        Decision {
            time: 0,
            annotator: "ana".into(),
            decision: kind.into(),
            task: "t".into(),
            source: source.into(),
            sent_id: "s".into(),
            ms: 0,
            arcs: Vec::new(),
            reason: None,
            file: None,
            sample,
            published_by: None,
        }
    }

    #[test]
    fn only_whole_answers_to_sampled_sentences_count_and_each_sentence_once() {
        let row = |c| Some(SentenceRow { confidence: c, words: 5, right: 4 });
        let decisions = [
            decision("whole", "a#0", row(0.9)),
            decision("whole", "a#0", row(0.1)),
            decision("answer", "a#1", None),
            decision("held", "a#2", None),
            decision("whole", "a#3", None),
            decision("whole", "a#4", row(0.5)),
        ];
        let answered = answered(&decisions);
        assert_eq!(answered.iter().map(|a| a.row.confidence).collect::<Vec<_>>(), [0.9, 0.5]);
    }
}
