//! The stages before the parser in a retraining cycle: what annotators checked of them (tags
//! and lemmas, by the comments the workbench writes: [`TAGS_KEY`], [`TAGS_CHECKED_KEY`],
//! [`UPOS_CHECKED_KEY`], [`LEMMAS_CHECKED_KEY`]), when a cycle retrains the tagger and the
//! lemmatizer on them ([`TaggerRetraining`]), how, and how the candidate then analyzes the
//! held-out file. The FEATS classifier is never retrained here: the workbench does not fix
//! FEATS. This module owns those stages' part of a cycle; the cycle itself is the parent's.

use std::path::Path;

use serde::Deserialize;

use super::{held_out_annotation, store, Report, RetrainError, Settings};
use crate::corpus::{Format, Reader, Sentence};
use crate::learn::scorer::Scorer;
use crate::model::analysis::{AnalysisScores, Analyze, Analyzer};
use crate::model::features::Morphology;
use crate::model::file::ModelFile;
use crate::model::lemmatizer::{train_lemmatizer, Lemmatizer, LemmatizerModel};
use crate::model::tagger::{accuracy, load_tagging, train_tagger, Gold, TagSentence, TagSet, Tagger, TaggerModel};
use crate::parse::fit::{FitCheck, FitReport, Retag, Stages};
use crate::train::{self, DevSentence};

/// When a cycle retrains the tagger (`retrain.retrain_tagger`: `"auto"`, `true`, `false`).
///
/// `"auto"`, the default: when the annotations trained on hold a checked tag. On en_atis,
/// 2,000 corrected arcs with 2,033 tag fixes gave dev LAS 86.03 with a retrained tagger and
/// 83.76 with the tagger kept; without tag fixes a retrained tagger changed nothing (82.93
/// against 83.04) and made the cycle several times longer (docs/annotation.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(try_from = "TaggerRetrainingIn")]
pub enum TaggerRetraining {
    /// Never: the serving tagger is kept.
    Never,
    /// When the annotations trained on hold a checked tag.
    #[default]
    Auto,
    /// Every cycle.
    Always,
}

/// `retrain.retrain_tagger` as TOML gives it: a boolean or a name.
#[derive(Deserialize)]
#[serde(untagged)]
enum TaggerRetrainingIn {
    Bool(bool),
    Name(String),
}

impl TryFrom<TaggerRetrainingIn> for TaggerRetraining {
    type Error = String;

    fn try_from(value: TaggerRetrainingIn) -> Result<Self, Self::Error> {
        match value {
            TaggerRetrainingIn::Bool(true) => Ok(TaggerRetraining::Always),
            TaggerRetrainingIn::Bool(false) => Ok(TaggerRetraining::Never),
            TaggerRetrainingIn::Name(n) if n == "auto" => Ok(TaggerRetraining::Auto),
            TaggerRetrainingIn::Name(n) => Err(format!("retrain_tagger is \"auto\", true or false, not {n:?}")),
        }
    }
}

impl TaggerRetraining {
    /// Whether a cycle on `annotations` retrains the stage that learns from what `checked`
    /// finds checked in an annotation (tags for the tagger, lemmas for the lemmatizer).
    pub(super) fn retrains<T>(
        self,
        annotations: &[store::Annotation],
        settings: &Settings,
        checked: fn(&Sentence) -> Option<T>,
    ) -> bool {
        match self {
            TaggerRetraining::Never => false,
            TaggerRetraining::Always => true,
            TaggerRetraining::Auto => annotations
                .iter()
                .any(|a| !held_out_annotation(a, settings.annotation_heldout) && checked(&a.sentence).is_some()),
        }
    }
}

/// `# tags = reviewed`: every UPOS and XPOS of an annotated sentence was checked by a person,
/// and a cycle with `retrain.retrain_tagger` trains the tagger on them.
pub const TAGS_KEY: &str = "tags";

/// Whether a person reviewed the tags of `sent` ([`TAGS_KEY`]).
pub fn tags_reviewed(sent: &crate::corpus::Sentence) -> bool {
    sent.comment(TAGS_KEY) == Some("reviewed")
}

/// `# tags_checked = 3 7`: a person checked the UPOS and XPOS of these words (1-based ids); a
/// cycle with `retrain.retrain_tagger` trains the tagger on them (see [`TagSentence::partial`]).
pub const TAGS_CHECKED_KEY: &str = "tags_checked";

/// `# upos_checked = 2`: a person checked the UPOS of these words, not their XPOS (the tagger
/// trains them towards its tag with that UPOS that scores best).
pub const UPOS_CHECKED_KEY: &str = "upos_checked";

/// What a person checked of each word's tag in `sent` (index 0 is word 1): every tag under
/// `# tags = reviewed`, else the words [`TAGS_CHECKED_KEY`] and [`UPOS_CHECKED_KEY`] list
/// (ids that are not numbers of its words are ignored); `None` if nothing.
pub fn checked_tags(sent: &crate::corpus::Sentence) -> Option<Vec<Gold>> {
    if tags_reviewed(sent) {
        return Some(vec![Gold::Tag; sent.len()]);
    }
    let mut gold = vec![Gold::Unchecked; sent.len()];
    for (key, level) in [(UPOS_CHECKED_KEY, Gold::Upos), (TAGS_CHECKED_KEY, Gold::Tag)] {
        let ids = sent.comment(key).unwrap_or_default().split_whitespace();
        for id in ids.filter_map(|id| id.parse::<usize>().ok()).filter(|&id| id >= 1 && id <= sent.len()) {
            gold[id - 1] = level;
        }
    }
    gold.iter().any(|&g| g != Gold::Unchecked).then_some(gold)
}

/// `# lemmas_checked = 3 7`: a person checked the LEMMA of these words (1-based ids); a cycle
/// with `retrain.retrain_tagger` trains the lemmatizer on them.
pub const LEMMAS_CHECKED_KEY: &str = "lemmas_checked";

/// Which words of `sent` had their lemma checked by a person ([`LEMMAS_CHECKED_KEY`]; index 0
/// is word 1), `None` if none.
pub fn checked_lemmas(sent: &crate::corpus::Sentence) -> Option<Vec<bool>> {
    let mut checked = vec![false; sent.len()];
    let ids = sent.comment(LEMMAS_CHECKED_KEY).unwrap_or_default().split_whitespace();
    for id in ids.filter_map(|id| id.parse::<usize>().ok()).filter(|&id| id >= 1 && id <= sent.len()) {
        checked[id - 1] = true;
    }
    checked.contains(&true).then_some(checked)
}

/// Trains a tagger on `retrain.base` and the checked tags of the annotations that are not held
/// out (each `annotation_weight` times; the words nobody checked are tagged as the tagger would
/// but not trained on, [`TagSentence::partial`]), and reports its UPOS accuracy on `heldout`
/// beside the serving tagger's.
pub(super) fn retrain_tagger_on<S: Scorer>(
    settings: &Settings,
    annotations: &[store::Annotation],
    heldout: &Path,
    serving: &mut Analyzer<'_, S>,
    seed: u64,
    report: &mut Report,
    progress: &mut dyn FnMut(&str),
) -> Result<TaggerModel, RetrainError> {
    let mut tags = TagSet::default();
    let mut sentences = load_tagging(&settings.base, &mut tags)?;
    for a in annotations.iter().filter(|a| !held_out_annotation(a, settings.annotation_heldout)) {
        let Some(checked) = checked_tags(&a.sentence) else { continue };
        report.tagger_annotations += 1;
        report.tagger_annotated_words += checked.iter().filter(|&&g| g != Gold::Unchecked).count();
        let s = TagSentence::partial(&a.sentence, |id| checked[id as usize - 1], &mut tags);
        sentences.extend(std::iter::repeat_n(s, settings.annotation_weight as usize));
    }
    progress(&format!(
        "training the tagger on {} sentences ({} annotated, {} words with checked tags), {} epochs",
        sentences.len(),
        report.tagger_annotations,
        report.tagger_annotated_words,
        settings.tagger_epochs
    ));
    let model = train_tagger(&sentences, &tags, settings.tagger_epochs, seed);
    let mut gold_tags = TagSet::default();
    let gold = load_tagging(&[heldout.to_path_buf()], &mut gold_tags)?;
    report.heldout_upos_serving = Some(accuracy(&mut serving.tagger, &gold, &gold_tags).0);
    report.heldout_upos_candidate = Some(accuracy(&mut Tagger::from_model(&model), &gold, &gold_tags).0);
    report.tagger_retrained = true;
    Ok(model)
}

/// Trains a lemmatizer on `retrain.base` (gold) and the checked lemmas of the annotations that
/// are not held out (each `annotation_weight` times, reading their UPOS and FEATS as written),
/// and reports its lemma accuracy on `heldout` beside the serving model's.
pub(super) fn retrain_lemmatizer_on(
    settings: &Settings,
    annotations: &[store::Annotation],
    heldout: &Path,
    current: &ModelFile,
    report: &mut Report,
    progress: &mut dyn FnMut(&str),
) -> Result<LemmatizerModel, RetrainError> {
    let mut sentences = Vec::new();
    for path in &settings.base {
        for sent in Reader::open(path, Format::from_path(path))? {
            sentences.push(sent?);
        }
    }
    let base = sentences.len();
    let mut checked: Vec<Vec<bool>> = Vec::new();
    for a in annotations.iter().filter(|a| !held_out_annotation(a, settings.annotation_heldout)) {
        let Some(words) = checked_lemmas(&a.sentence) else { continue };
        report.lemmatizer_annotations += 1;
        report.lemmatizer_annotated_words += words.iter().filter(|&&c| c).count();
        for _ in 0..settings.annotation_weight {
            sentences.push(a.sentence.clone());
            checked.push(words.clone());
        }
    }
    progress(&format!(
        "training the lemmatizer on {} sentences ({} annotated, {} words with checked lemmas), {} epochs",
        sentences.len(),
        report.lemmatizer_annotations,
        report.lemmatizer_annotated_words,
        settings.tagger_epochs
    ));
    let is_checked =
        |si: usize, id: u32| si < base || checked[si - base].get(id as usize - 1).copied().unwrap_or(false);
    let model = train_lemmatizer(&sentences, &sentences, &is_checked, settings.tagger_epochs, current.meta().info.seed);
    // Both lemmatize the held-out file as the serving model's other stages analyze it.
    let mut gold = Vec::new();
    for sent in Reader::open(heldout, Format::from_path(heldout))? {
        gold.push(sent?);
    }
    let mut analyzed = gold.clone();
    if let Some(mut serving) = current.analyzer() {
        analyzed.iter_mut().for_each(|s| serving.analyze(s, Analyze::ALL));
    }
    report.heldout_lemmas_serving = Some(AnalysisScores::of(&gold, &analyzed).lemmas);
    let mut candidate = Lemmatizer::from_model(&model);
    analyzed.iter_mut().for_each(|s| candidate.lemmatize(s));
    report.heldout_lemmas_candidate = Some(AnalysisScores::of(&gold, &analyzed).lemmas);
    report.lemmatizer_retrained = true;
    Ok(model)
}

/// What the daemon would write over an annotation's columns before parsing it: its tags (and
/// the FEATS and LEMMA it lacks) when the serving parser does not know its tags
/// ([`crate::parse::fit`], decided on the one sentence as on a file); `None` when they fit.
pub(super) fn unfit_tags(model: &ModelFile, sent: &Sentence) -> Option<Analyze> {
    let mut check = FitCheck::new(model);
    check.add(sent);
    let fit = FitReport::decide(check.counts(), Format::Conllu, Retag::Auto, Stages::of(model));
    fit.tag().then(|| fit.analyze())
}

/// How the candidate analyzes text: each stage its own where it has a new one, the serving
/// model's otherwise.
pub(super) struct CandidateAnalysis<'a, 'm, S: Scorer> {
    tagger: Option<Tagger<'a, &'a crate::learn::perceptron::Weights>>,
    lemmatizer: Option<Lemmatizer<'a, &'a crate::learn::perceptron::Weights>>,
    serving: Option<&'a mut Analyzer<'m, S>>,
}

impl<'a, 'm, S: Scorer> CandidateAnalysis<'a, 'm, S> {
    pub(super) fn new(
        tagger: &'a Option<TaggerModel>,
        lemmatizer: &'a Option<LemmatizerModel>,
        serving: Option<&'a mut Analyzer<'m, S>>,
    ) -> Self {
        CandidateAnalysis {
            tagger: tagger.as_ref().map(Tagger::from_model),
            lemmatizer: lemmatizer.as_ref().map(Lemmatizer::from_model),
            serving,
        }
    }

    /// Tags, FEATS and lemmas of `sent`, as the candidate writes them.
    pub(super) fn analyze(&mut self, sent: &mut Sentence) {
        match (self.tagger.as_mut(), self.serving.as_mut()) {
            (Some(t), _) => t.tag(sent),
            (None, Some(a)) => a.analyze(sent, Analyze { tags: true, ..Analyze::NONE }),
            (None, None) => {}
        }
        if let Some(a) = self.serving.as_mut() {
            a.analyze(sent, Analyze { feats: true, lemmas: self.lemmatizer.is_none(), ..Analyze::NONE });
        }
        if let Some(l) = self.lemmatizer.as_mut() {
            l.lemmatize(sent);
        }
    }
}

/// The held-out file as the candidate analyzes it ([`CandidateAnalysis`]).
pub(super) fn analyzed_heldout<S: Scorer>(
    heldout: &Path,
    morphology: Morphology,
    analysis: &mut CandidateAnalysis<'_, '_, S>,
) -> Result<Vec<DevSentence>, RetrainError> {
    Ok(train::load_dev_with(heldout, morphology, &mut |sent| analysis.analyze(sent))?)
}
