//! Fitting the whole pipeline's arc confidence ([`crate::learn::confidence_model`]) on a gold
//! file, parsed three ways by the model being fitted:
//!
//! - **raw text**: the file's text (`# text`, by paragraph, as [`tokenizer::load_raw`] rebuilds
//!   it) tokenized, analyzed and parsed as `parse --format raw` would; each system word is right
//!   when the official evaluator would count it for LAS ([`align::labeled_words`]), so a word
//!   the tokenizer made up, or a sentence it cut elsewhere, teaches the model what those cost;
//! - **gold tokens**: the file's words, analyzed and parsed (as tokenized text, or CoNLL-U with
//!   `--retag`);
//! - **unknown forms**: every other sentence's words, with a share of their forms (a third, two
//!   thirds, all, in turn) written backwards, analyzed and parsed, and scored against the same
//!   gold tree: text whose words the model never saw, in its own script and word order. Dev
//!   has few sentences of unknown words, so without these the model cannot learn what such
//!   sentences are worth; with them, the confidence falls with the share of unknown words as
//!   the parser's accuracy does (another language is parsed worse still, its word order being
//!   unknown too; through the en_ewt model, arc ECE from raw text on Hungarian 0.535 → 0.076,
//!   on Greek 0.441 → 0.034: docs/commands.md, "The whole pipeline's confidence").
//!
//! This module parses and fits; it writes no file, and the model's weights are not changed.

use std::path::Path;
use std::sync::Arc;

use crate::corpus::{Column, CorpusError, Format, Reader, Sentence};
use crate::learn::confidence::Reliability;
use crate::learn::confidence_model::{ArcSignals, ConfidenceModel};
use crate::learn::precision::SentenceRow;
use crate::model::analysis::Analyze;
use crate::model::file::{ModelFile, PipelineConfidence};
use crate::model::tokenizer;
use crate::parse::annotate::{Annotator, Steps};
use crate::parse::raw::{RawReader, RawSentences};

use super::align::{self, Document};
use super::eval::{attachment, EvalError};

/// One arc to fit on: its signals, whether it was right, its sentence (for cross-fitting) and
/// how its text was given.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub signals: ArcSignals,
    pub right: bool,
    /// Index of its sentence (the system's, from raw text) among those of its input.
    pub sentence: usize,
    pub input: Input,
}

/// How the text of a [`Row`] was given to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    RawText,
    GoldTokens,
    UnknownForms,
}

impl Input {
    /// The input's name, as `CONFMETA` and `train` say it.
    pub fn name(self) -> &'static str {
        match self {
            Input::RawText => "raw text",
            Input::GoldTokens => "gold tokens",
            Input::UnknownForms => "unknown forms",
        }
    }
}

/// Why the confidence could not be fitted.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    #[error(transparent)]
    Eval(#[from] EvalError),
}

/// The steps a model's analysis runs on text that comes without tags.
fn steps(model: &ModelFile) -> Steps {
    let analyze = if model.analyzer().is_some() { Analyze::ALL } else { Analyze::NONE };
    Steps { analyze, ..Steps::default() }
}

/// Parses `gold`'s sentences (their forms replaced by `forms` where it says) and judges each
/// arc against the gold tree.
fn gold_token_rows(
    model: &ModelFile,
    gold: &[Sentence],
    input: Input,
    mut forms: impl FnMut(usize, &mut Sentence) -> bool,
    rows: &mut Vec<Row>,
) {
    let mut annotator = Annotator::new(model, true).collecting_signals();
    let steps = steps(model);
    for (i, g) in gold.iter().enumerate() {
        let mut sent = g.clone();
        if !forms(i, &mut sent) {
            continue;
        }
        let Ok(gold_heads) = crate::corpus::tree::gold_heads(g, Path::new("")) else { continue };
        if annotator.annotate(&mut sent, steps).is_err() {
            return;
        }
        let Ok(Some(heads)) = sent.heads() else { continue };
        for (w, (gw, sw)) in g.words().zip(sent.words()).enumerate() {
            let (_, las) = attachment(gold_heads[w], gw.get(Column::Deprel), heads[w], sw.get(Column::Deprel));
            rows.push(Row { signals: annotator.signals()[w + 1], right: las, sentence: i, input });
        }
    }
}

/// Parses the raw text of `path` as `parse --format raw` does and judges each system word as
/// the official evaluator would.
fn raw_text_rows(model: &Arc<ModelFile>, path: &Path, gold: &Document, rows: &mut Vec<Row>) -> Result<(), FitError> {
    let text = tokenizer::load_raw(&[path.to_path_buf()])?.text();
    let Ok(mut reader) = RawReader::new(
        Box::new(std::io::Cursor::new(text.into_bytes())),
        path,
        Arc::clone(model),
        RawSentences::Model,
        true,
    ) else {
        return Ok(());
    };
    let mut annotator = Annotator::new(model, true).collecting_signals();
    let steps = steps(model);
    let (mut system, mut signals) = (Vec::new(), Vec::new());
    let mut sent = Sentence::default();
    while let Some(read) = reader.read_next(&mut sent) {
        read?;
        if annotator.annotate(&mut sent, steps).is_err() {
            return Ok(());
        }
        signals.push(annotator.signals()[1..].to_vec());
        system.push(sent.clone());
    }
    let document = Document::from_sentences(system.into_iter().map(Ok), path)?;
    let right = align::labeled_words(gold, &document)?;
    let arcs = signals.iter().enumerate().flat_map(|(i, s)| s.iter().map(move |s| (i, *s)));
    for ((sentence, signals), right) in arcs.zip(right) {
        rows.push(Row { signals, right, sentence, input: Input::RawText });
    }
    Ok(())
}

/// Writes a share of the sentence's forms backwards (sentence `i` of every other pair: a
/// third, two thirds or all of its words, in turn); false for the sentences left as they are.
fn unknown_forms(i: usize, sent: &mut Sentence) -> bool {
    if i % 2 == 1 {
        return false;
    }
    let replaced = |w: usize| match (i / 2) % 3 {
        0 => w.is_multiple_of(3),
        1 => !w.is_multiple_of(3),
        _ => true,
    };
    let mut reversed = String::new();
    for w in (1..=sent.len()).filter(|&w| replaced(w)) {
        reversed.clear();
        reversed.extend(sent.word(w).get(Column::Form).chars().rev());
        sent.set_column(w, Column::Form, &reversed);
    }
    true
}

/// Arc ECE of `rows` of `input` under `confidence`.
fn ece(rows: &[Row], input: Input, confidence: impl Fn(&Row) -> f32) -> f64 {
    let mut r = Reliability::default();
    for row in rows.iter().filter(|r| r.input == input) {
        r.add(f64::from(confidence(row)), f64::from(u8::from(row.right)));
    }
    r.ece()
}

/// The rows [`fit_pipeline_confidence`] fits on, and the inputs they came from (raw text first
/// when the model reads it).
pub fn collect_rows(model: &Arc<ModelFile>, path: &Path) -> Result<(Vec<Row>, Vec<Input>), FitError> {
    let gold: Vec<Sentence> = Reader::open(path, Format::from_path(path))?.collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    let mut inputs = Vec::new();
    // A file whose text does not spell its words (no `# text`, or text edited apart from
    // them) is fitted on its words alone.
    if model.tokenizer().is_some() && model.analyzer().is_some() {
        let mut raw = Vec::new();
        let read = Document::from_sentences(gold.iter().cloned().map(Ok), path)
            .map_err(FitError::from)
            .and_then(|document| raw_text_rows(model, path, &document, &mut raw));
        match read {
            Ok(()) => {
                rows.extend(raw);
                inputs.push(Input::RawText);
            }
            Err(FitError::Eval(EvalError::Mismatch { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    gold_token_rows(model, &gold, Input::GoldTokens, |_, _| true, &mut rows);
    inputs.push(Input::GoldTokens);
    if model.analyzer().is_some() {
        gold_token_rows(model, &gold, Input::UnknownForms, unknown_forms, &mut rows);
        inputs.push(Input::UnknownForms);
    }
    Ok((rows, inputs))
}

/// Fits `model`'s whole-pipeline confidence on the gold file `path` (module doc); `None` when
/// the file has no arc to learn from.
pub fn fit_pipeline_confidence(model: &Arc<ModelFile>, path: &Path) -> Result<Option<PipelineConfidence>, FitError> {
    let (rows, inputs) = collect_rows(model, path)?;
    let fit = |keep: &dyn Fn(&Row) -> bool| {
        let pairs: Vec<(ArcSignals, bool)> = rows.iter().filter(|r| keep(r)).map(|r| (r.signals, r.right)).collect();
        ConfidenceModel::fit(&pairs)
    };
    let Some(whole) = fit(&|_| true) else { return Ok(None) };
    // Measured where users' text comes from: raw text when the model reads it.
    let measured = inputs[0];
    let meta = model.meta();
    let before = ece(&rows, measured, |r| {
        meta.arc_calibration.as_ref().map_or(r.signals.parser, |iso| iso.apply(r.signals.parser))
    });
    let halves = [fit(&|r| r.sentence % 2 == 1), fit(&|r| r.sentence % 2 == 0)];
    let crossfitted = |r: &Row| match &halves[r.sentence % 2] {
        Some(m) => m.apply(&r.signals),
        None => whole.apply(&r.signals),
    };
    let crossfit = ece(&rows, measured, crossfitted);
    let sentences = sentence_rows(rows.iter().filter(|r| r.input == measured), crossfitted);
    Ok(Some(PipelineConfidence {
        model: whole,
        fitted_on: path.display().to_string(),
        inputs: inputs.iter().map(|i| i.name().to_string()).collect(),
        arcs: rows.len() as u64,
        ece_before: before,
        ece_crossfit: crossfit,
        sentences,
        sentences_from: None,
    }))
}

/// The sentences of the gold file `path` as `model` parses them (its raw text, where the model
/// reads raw text), each with the confidence `parse` gives it with the model's fitted
/// confidence and its words right: what `--min-precision` chooses on when `path` is the user's
/// own text, which the confidence was not fitted on (so nothing is cross-fitted). Empty for a
/// model without a fitted confidence.
pub fn scored_sentences(model: &Arc<ModelFile>, path: &Path) -> Result<Vec<SentenceRow>, FitError> {
    let Some(confidence) = model.confidence() else { return Ok(Vec::new()) };
    let (rows, inputs) = collect_rows(model, path)?;
    let measured = inputs[0];
    Ok(sentence_rows(rows.iter().filter(|r| r.input == measured), |r| confidence.model.apply(&r.signals)))
}

/// Each sentence of `rows` (consecutive rows of one input) with its confidence, the mean of its
/// arcs' `confidence` as `parse` computes a sentence's, and its words right.
pub fn sentence_rows<'r>(
    rows: impl IntoIterator<Item = &'r Row>,
    confidence: impl Fn(&Row) -> f32,
) -> Vec<SentenceRow> {
    let mut out: Vec<SentenceRow> = Vec::new();
    let mut sum = 0.0f64;
    let mut last = None;
    for row in rows {
        if last != Some(row.sentence) {
            if let Some(s) = out.last_mut() {
                s.confidence = sum / f64::from(s.words);
            }
            out.push(SentenceRow { confidence: 0.0, words: 0, right: 0 });
            (sum, last) = (0.0, Some(row.sentence));
        }
        let s = out.last_mut().expect("pushed above");
        s.words += 1;
        s.right += u32::from(row.right);
        sum += f64::from(confidence(row));
    }
    if let Some(s) = out.last_mut() {
        s.confidence = sum / f64::from(s.words);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_row_holds_its_words_right_and_their_mean_confidence() {
        let row = |sentence, right| Row { signals: ArcSignals::default(), right, sentence, input: Input::RawText };
        let rows = [row(0, true), row(0, false), row(1, true), row(3, true), row(3, true), row(3, false)];
        let confidences = [0.5f32, 0.25, 1.0, 0.5, 0.5, 0.25];
        let by_row = |r: &Row| confidences[rows.iter().position(|x| std::ptr::eq(x, r)).unwrap()];
        let got = sentence_rows(&rows, by_row);
        let want = [(0.375, 2, 1), (1.0, 1, 1), (1.25 / 3.0, 3, 2)];
        assert_eq!(got.len(), want.len());
        for (g, (c, w, r)) in got.iter().zip(want) {
            assert!((g.confidence - c).abs() < 1e-12 && g.words == w && g.right == r, "{g:?}");
        }
    }
}
