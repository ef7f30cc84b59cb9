//! Retraining from annotations: one cycle trains a candidate on the base treebank plus every
//! stored correction, gates it on held-out data, and promotes it in the models directory.
//!
//! A cycle (Goldberg & Nivre 2012, Algorithm 3 with the model's own hyperparameters):
//! 1. takes in what waits in `annotated/` ([`store`]) and reads the store, deduplicated;
//! 2. splits the annotations by a hash of their identity: a fixed share (default 10%) is held
//!    out, for ever the same sentences, so that no candidate ever trains on it;
//! 3. trains with the dynamic oracle and exploration on `retrain.base` plus the rest of the
//!    annotations, partial ones included (only their annotated arcs cost anything, see
//!    [`crate::transition::GoldTree::partial`]), with the serving model's learner, exploration
//!    settings, seed, storage precision and number of epochs (its best epoch: the held-out
//!    file is not used to choose an epoch, so that the gate that reads it is not biased
//!    towards the candidate); a neural serving model's candidate is fine-tuned from its
//!    weights instead, each batch mixing the annotations with base sentences ([`candidate`]:
//!    on en_atis, 2,000 corrected arcs took the neural en_ewt model's dev LAS from 75.18 to
//!    86.59, en_ewt dev 88.29 to 88.10, docs/annotation.md). Two keys change what a linear
//!    candidate is trained on:
//!    - `retrain.completion` completes each partial annotation first
//!      ([`crate::train::completion`]): `serving` adds the serving model's arcs of its best
//!      tree that holds the annotated arcs (those whose calibrated confidence reaches
//!      `completion_min_conf`; the others stay unannotated), `refresh` does so and completes
//!      again with the candidate after each epoch; default `none`;
//!    - `retrain.annotation_weight` trains on each annotated sentence that many times per
//!      epoch, shuffled among the base sentences; default 5;
//!
//!    measured on en_atis (docs/annotation.md, "Adapting to your own text"): 2,000 corrected
//!    low-confidence arcs took en_atis dev LAS from 71.10 to 79.17 with partial costs, 81.11
//!    with `annotation_weight = 5` (en_ewt dev 81.73 → 81.80 and 81.74), and completion lost
//!    3 to 4 points of that (75.60 `serving`, 75.93 with `completion_min_conf = 0.9`, 76.84
//!    `refresh`): in the corrected sentences, the serving model's arcs of confidence 0.9 or
//!    more are right only 77.6% of the time on this shift (its confidences were calibrated on
//!    en_ewt), so completion mostly teaches the model its own domain errors. So completion
//!    stays `none` by default, and weighting is 5;
//! 4. refits the calibration (temperature, isotonic map) on `retrain.heldout`, a gold file
//!    never trained on, or on the held-out annotations once they hold
//!    `retrain.calibration_min_arcs` annotated arcs (the user's text is what confidences must
//!    describe; below that the treebank's larger sample is steadier), reporting the arc ECE on
//!    the held-out annotations of both fits;
//!
//!    `--min-precision` chooses the candidate's threshold on the sentences the workbench drew
//!    uniformly from what was published and had reviewed whole ([`sampled`]: never trained on)
//!    once they hold `retrain.calibration_min_arcs` words, else on `retrain.heldout`
//!    ([`choose_on_samples`]);
//! 5. installs the candidate in the models directory under a new immutable name (checked in
//!    full first, so a half-written one never has a name), and scores it and the serving model
//!    as stored on `retrain.heldout` and on the held-out annotations;
//! 6. promotes it (moves `models/current`) if the gate ([`gate`]: a paired bootstrap over
//!    sentences, [`scoring`]) finds it better beyond noise on the user's text as a whole (the
//!    held-out annotated sentences' corrected arcs and those the serving model is sure of,
//!    [`whole_text`]) once the held-out annotations hold `retrain.gate_min_annotation_arcs`
//!    arcs (not worse there before that), and not worse
//!    than `max_las_drop` beyond noise on `retrain.heldout`, and the model it was gated
//!    against still serves (checked under the models directory's lock, so a model configured
//!    or rolled back to meanwhile is never replaced by a candidate that never faced it);
//!    otherwise removes it. A JSON report named like the candidate stays in the models
//!    directory either way;
//! 7. prunes the models directory, after every cycle, so that copies a killed cycle left go too.
//!
//! With `retrain.self_training` (off by default: on en_atis it cost 2.6 LAS alone and 0.5 with
//! 2,000 corrections, docs/annotation.md), the most confident sentences of the daemon's own
//! output (`accepted/`) are trained on as if annotated, once each per epoch; the gate judges the
//! candidate as any other.
//!
//! With `retrain.teacher` and `retrain.unlabeled` (uptraining, Petrov et al. 2010;
//! [`uptraining`]), an accurate model parses the user's unlabeled text and a linear candidate
//! also trains on its confident parses, except on sentences annotated or held out.
//!
//! The parser's tagger is kept unless annotators checked tags: the tags in annotated sentences
//! are otherwise the tagger's own predictions, so the candidate keeps the serving model's
//! tagger as it is (its sections are copied). With `retrain.retrain_tagger` (`"auto"`, the
//! default, when the annotations trained on hold a checked tag; or `true`), the words of
//! annotated sentences whose tags a person checked also train a new tagger, with
//! `retrain.base`: every word of a sentence that says `# tags = reviewed` ([`TAGS_KEY`]), the
//! words `# tags_checked` and `# upos_checked` list ([`TAGS_CHECKED_KEY`], [`UPOS_CHECKED_KEY`]:
//! written by the workbench when an annotator fixes or confirms a tag); the others are tagged
//! as the tagger would but never trained on (partial supervision, [`crate::model::tagger::TagSentence::partial`]);
//! on en_atis, 2,000 corrected arcs with 2,033 tag fixes took dev UPOS from 83.47 to 96.55 and
//! LAS to 86.03 (83.04 with the arcs alone; docs/annotation.md). The candidate is then scored
//! on `retrain.heldout` as its own tagger tags it. The base data is read with gold tags, so a
//! model first trained on jackknifed tags is retrained on gold ones. Without `retrain_tagger`,
//! the parser trains on such sentences as the serving tagger tags them: the tags it will be
//! given (`annotations_retagged` in the report). The lemmatizer is retrained alike, when
//! annotations hold lemmas a person checked (`# lemmas_checked`, [`LEMMAS_CHECKED_KEY`]): on
//! `retrain.base` and those words; the FEATS classifier is always kept. The candidate analyzes
//! `retrain.heldout` with its own stages where it has new ones, the serving model's otherwise
//! (LEMMA and FEATS included: a parser reading the analysis is scored on what it will be
//! given).
//!
//! `training_data.rs` holds what the parser trains on (the base, the annotations as the parser
//! will see them, self-training), `uptraining.rs` a teacher's parses of unlabeled text; `candidate.rs` the training of either kind and its
//! calibration; `analysis.rs` the stages before the parser (what was
//! checked, retraining them); `settings.rs` the `[retrain]` settings and the schedule;
//! `report.rs` the report; `state.rs` what the schedule remembers between cycles.
//!
//! This module owns the cycle and its report; it must not know about the daemon (which runs
//! [`run_cycle`] on a schedule in a background thread) nor about the spool.

mod analysis;
mod candidate;
mod checks;
pub mod gate;
pub mod reference;
mod report;
mod scoring;
mod settings;
mod state;
pub mod store;
mod training_data;
mod uptraining;
mod whole_text;

use analysis::{analyzed_heldout, retrain_lemmatizer_on, retrain_tagger_on, CandidateAnalysis};
pub use analysis::{
    checked_lemmas, checked_tags, tags_reviewed, TaggerRetraining, LEMMAS_CHECKED_KEY, TAGS_CHECKED_KEY, TAGS_KEY,
    UPOS_CHECKED_KEY,
};
pub use report::{Decision, GateScores, Report};
use scoring::Gated;
pub use settings::{parse_interval, parse_time_of_day, CompletionKind, NeuralStart, Settings, FINE_TUNE_BATCH};
pub use state::State;
use training_data::training_data;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::base::hash::hash_str;
use crate::corpus::CorpusError;
use crate::model::analysis::Analyze;
use crate::model::file::{self as model_file, Extras, ModelError, ModelFile, WriteOptions};
use crate::model::registry::{compact_utc, file_name, unix_time, Event, Registry, RegistryError};
use crate::train::completion::{Completion, Confidence};
use crate::train::{self, DevSentence};
use store::{Store, StoreError};

/// Why a cycle could not run (a rejected candidate is not an error: see [`Report`]).
#[derive(Debug, thiserror::Error)]
pub enum RetrainError {
    #[error("{0}")]
    Settings(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: std::io::Error },
    #[error(transparent)]
    Neural(#[from] crate::neural::trainer::TrainError),
    #[error(transparent)]
    Teacher(#[from] crate::train::teacher::TeacherError),
    #[error("another retraining cycle is running (it holds {})", .0.display())]
    Busy(PathBuf),
    #[error("no model serves yet in {}: start the daemon once, or run it with the configured model", .0.display())]
    NoModel(PathBuf),
}

const LOCK: &str = ".retrain.lock";

/// The lock of a running cycle, released explicitly when dropped: closing the file alone would
/// leave it held while a process forked in the meantime (before its exec closes the descriptor)
/// still shares it, and the next cycle would be refused as busy (seen in the tests, whose other
/// threads spawn processes).
struct CycleLock(fs::File);

impl Drop for CycleLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RetrainError {
    let path = path.to_path_buf();
    move |error| RetrainError::Io { path, error }
}

/// Whether an annotation is held out for the gate: a fixed share of identities, chosen by hash
/// (every split goes through [`held_out_annotation`], which holds out the sampled ones too).
fn held_out(id: &str, share: f64) -> bool {
    ((hash_str(id) % 10_000) as f64) < share * 10_000.0
}

/// The comment of a correction of a sentence the workbench drew uniformly from everything
/// published and had reviewed whole (`# workbench_sample = uniform`).
pub const SAMPLE_KEY: &str = "workbench_sample";

/// Whether `sent` is such a sampled sentence, reviewed whole.
pub fn sampled(sent: &crate::corpus::Sentence) -> bool {
    sent.comment(SAMPLE_KEY).is_some() && sent.comment(store::REVIEWED_KEY) == Some("all")
}

/// Whether an annotation is never trained on: a sampled sentence (it measures how often what is
/// published is right, which a model trained on it would overstate), and the held-out share.
pub fn held_out_annotation(a: &store::Annotation, share: f64) -> bool {
    sampled(&a.sentence) || held_out(&a.id, share)
}

/// A file in `annotated/` (a dot-file: ingest passes it over) that asks the daemon's next look
/// at annotations to run a cycle now, as `spoolparse retrain --force` would; the correction
/// workbench's "retrain now" writes it, and the daemon removes it when it starts the cycle.
pub const RETRAIN_REQUEST: &str = ".retrain-requested";

/// Fits the whole pipeline's confidence of the candidate written at `tmp` on the held-out
/// file (as `train --dev` fits a new model's), and writes the candidate again with it; a file
/// with nothing to fit on leaves it with the parser's own calibration.
fn refit_confidence(tmp: &Path, heldout: &Path) -> Result<(), ModelError> {
    let file = std::sync::Arc::new(ModelFile::open(tmp)?);
    match crate::train::pipeline_confidence::fit_pipeline_confidence(&file, heldout) {
        Ok(Some(confidence)) => model_file::write_with_confidence(&file, &confidence, tmp),
        Ok(None) => Ok(()),
        Err(e) => Err(ModelError::Io { path: heldout.to_path_buf(), error: std::io::Error::other(e) }),
    }
}

/// Gives the candidate written at `tmp` the user's own text to choose `--min-precision`'s
/// threshold on, once the held-out annotations hold `min_words` words of sampled sentences
/// ([`sampled`]: drawn uniformly from what was published, reviewed whole): those sentences,
/// written to `file` (kept beside the cycle's report, so that `inspect` names a file that
/// exists), parsed by the candidate and scored with its confidence as fitted on the held-out
/// file. Returns how many sentences it chooses on (0: too few, and the held-out file's stay).
fn choose_on_samples(
    tmp: &Path,
    samples: &[&crate::corpus::Sentence],
    min_words: usize,
    file: &Path,
) -> Result<usize, ModelError> {
    let words: usize = samples.iter().map(|s| s.len()).sum();
    if samples.is_empty() || words < min_words {
        return Ok(0);
    }
    let io = |error| ModelError::Io { path: file.to_path_buf(), error };
    let mut text = Vec::new();
    for s in samples {
        s.write_to(&mut text).map_err(io)?;
    }
    crate::base::io::write_atomically(file, &text).map_err(io)?;
    let model = std::sync::Arc::new(ModelFile::open(tmp)?);
    let Some(mut confidence) = model.confidence().cloned() else { return Ok(0) };
    let rows =
        crate::train::pipeline_confidence::scored_sentences(&model, file).map_err(|e| io(std::io::Error::other(e)))?;
    if rows.is_empty() {
        return Ok(0);
    }
    let chosen = rows.len();
    confidence.sentences = rows;
    confidence.sentences_from = Some(file.display().to_string());
    model_file::write_with_confidence(&model, &confidence, tmp)?;
    Ok(chosen)
}

/// How one cycle is run, beside its settings.
#[derive(Debug, Clone, Default)]
pub struct CycleOptions {
    /// Train even with fewer than `retrain.min_new_sentences` new annotations.
    pub force: bool,
    /// A rejected candidate is moved into this directory (to score it, or see why it failed)
    /// instead of removed.
    pub keep_rejected_in: Option<PathBuf>,
}

/// Runs one cycle: ingest, train, gate, promote. Without `options.force`, a cycle with fewer
/// than `min_new_sentences` new annotations trains nothing and reports [`Decision::Skipped`].
/// `progress` receives one line per step.
pub fn run_cycle(
    settings: &Settings,
    registry: &Registry,
    store: &Store,
    options: &CycleOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, RetrainError> {
    let started_at = Instant::now();
    let mut report = Report { started: unix_time(), ..Report::default() };
    let heldout_path =
        settings.heldout.clone().ok_or_else(|| RetrainError::Settings("retrain.heldout is not set".into()))?;
    if settings.base.is_empty() {
        return Err(RetrainError::Settings("retrain.base lists no gold training file".into()));
    }
    fs::create_dir_all(registry.dir()).map_err(io_err(registry.dir()))?;
    let lock_path = registry.dir().join(LOCK);
    let lock = fs::File::create(&lock_path).map_err(io_err(&lock_path))?;
    if lock.try_lock().is_err() {
        return Err(RetrainError::Busy(lock_path));
    }
    let _cycle = CycleLock(lock);
    // A cycle killed while writing leaves its candidate (megabytes) behind, and cron-only users
    // never start a daemon, whose start sweeps it. Only dead processes' temporaries go: a
    // daemon (this one, too) may be installing a model here at this moment.
    match crate::base::io::sweep_dead_temporaries(registry.dir()) {
        Ok(0) => {}
        Ok(n) => progress(&format!("removed {n} temporary files left by a killed run")),
        Err(e) => progress(&format!("could not sweep temporary files in {}: {e}", registry.dir().display())),
    }

    let ingested = store.ingest()?;
    for file in &ingested.by_file {
        progress(&format!("annotations: {file}"));
    }
    for why in ingested.rejected.iter().chain(&ingested.suspect) {
        progress(&format!("annotation not stored: {why}"));
    }
    let contents = store.read()?;
    let state = State::read(registry.dir());
    report.annotations = contents.annotations.len();
    report.annotations_new = state.new_sentences(&contents);
    if let Some(why) =
        (!options.force).then(|| why_skip(settings, &state, &mut report, progress)).transpose()?.flatten()
    {
        report.decision = Some(Decision::Skipped);
        report.reasons.push(why);
        // The schedule moves on: the next look is one interval later, not at once.
        State { last_started: Some(report.started), ..state }.write(registry.dir())?;
        report.seconds = started_at.elapsed().as_secs_f64();
        return Ok(report);
    }
    State { last_started: Some(report.started), ..state }.write(registry.dir())?;

    let current_name = registry.current_name().map_err(io_err(registry.dir()))?;
    let current_name = current_name.ok_or_else(|| RetrainError::NoModel(registry.dir().to_path_buf()))?;
    let current = registry.open(&current_name)?;
    let start = current.neural().map(|net| crate::model::neural::NeuralModel::of(&net));
    if start.is_some() {
        candidate::check_neural_settings(settings, &current_name)?;
    }
    let meta = current.meta();
    let morphology = meta.morphology;
    let (recipe, opts) = candidate::recipe_of(&current, settings);

    let mut serving = current.analyzer();
    let data =
        training_data(settings, &current, &contents, store, &heldout_path, serving.as_mut(), &mut report, progress)?;
    let (mut set, heldout_sentences, retrain_tagger) = (data.set, data.heldout, data.retrain_tagger);
    // As the serving model was trained (its recipe records the count).
    set.strip_rare_encoded_labels(recipe.lift_min_count.unwrap_or(train::DEFAULT_MIN_LIFTED));
    report.completion = settings.completion.name().to_string();
    report.annotation_weight = settings.annotation_weight;
    report.domain_features = settings.domain_features;
    let completion = Completion::of(&set);
    let confidence = Confidence {
        temperature: meta.temperature,
        calibration: meta.arc_calibration.as_ref(),
        min: settings.completion_min_conf,
    };
    if settings.completion != CompletionKind::None {
        let done =
            completion.complete(&mut set, current.system(), current.weights(), &meta.labels, meta.fallback, confidence);
        report.completed_sentences = done.sentences;
        report.completed_arcs = done.arcs;
        report.completion_left_open = done.left_open;
        report.completion_refused = done.refused;
        progress(&format!(
            "completion by the serving model: {} arcs added to {} of {} partial sentences ({} left open, {} refused)",
            done.arcs,
            done.sentences,
            completion.len(),
            done.left_open,
            done.refused
        ));
    }
    report.train_examples = set.sentences.iter().map(|s| s.copies as usize).sum();
    report.train_sentences = set.sentences.len();
    report.train_words = set.words;
    report.train_partial_sentences = set.partial_sentences;
    report.train_skipped_nonprojective = set.skipped_nonprojective;
    report.train_skipped_root = set.skipped_root;
    report.epochs = opts.epochs;
    report.learner = recipe.learner.clone();
    report.explore_k = opts.explore_k;
    report.explore_p = opts.explore_p;

    // Held-out gold data and annotations, analyzed as the serving model analyzes tokenized text
    // (and as the candidate's own stages do, where it has new ones): each model is scored on the
    // tags it will be given, not on the annotations' own (an XPOS `_` that the candidate,
    // trained on such annotations, reads better than the serving model).
    let mut serving_analysis = |sent: &mut crate::corpus::Sentence| {
        if let Some(a) = serving.as_mut() {
            a.analyze(sent, Analyze::ALL)
        }
    };
    let analyzed_annotations = |analyze: &mut dyn FnMut(&mut crate::corpus::Sentence)| {
        heldout_sentences
            .iter()
            .map(|&s| DevSentence::analyzed(s.clone(), &store.segments, morphology, analyze))
            .collect::<Result<Vec<_>, _>>()
    };
    let heldout = train::load_dev_with(&heldout_path, morphology, &mut serving_analysis)?;
    let heldout_annotations = analyzed_annotations(&mut serving_analysis)?;
    report.annotations_heldout = heldout_annotations.len();
    report.annotations_heldout_arcs = heldout_annotations.iter().map(DevSentence::annotated).sum();
    let new_tagger = match (retrain_tagger, serving.as_mut()) {
        (true, Some(serving)) => Some(retrain_tagger_on(
            settings,
            &contents.annotations,
            &heldout_path,
            serving,
            meta.info.seed,
            &mut report,
            progress,
        )?),
        _ => None,
    };
    let new_lemmatizer = match current.lemmatizer().is_some()
        && settings.retrain_tagger.retrains(&contents.annotations, settings, checked_lemmas)
    {
        true => Some(retrain_lemmatizer_on(
            settings,
            &contents.annotations,
            &heldout_path,
            &current,
            &mut report,
            progress,
        )?),
        false => None,
    };
    let (candidate_heldout, candidate_annotations) = match new_tagger.is_some() || new_lemmatizer.is_some() {
        true => {
            let mut analysis = CandidateAnalysis::new(&new_tagger, &new_lemmatizer, serving.as_mut());
            let annotations = analyzed_annotations(&mut |x| analysis.analyze(x))?;
            (Some(analyzed_heldout(&heldout_path, morphology, &mut analysis)?), Some(annotations))
        }
        false => (None, None),
    };
    let candidate_heldout = candidate_heldout.as_deref().unwrap_or(&heldout);
    let candidate_annotations = candidate_annotations.as_deref().unwrap_or(&heldout_annotations);

    if start.is_some() {
        // Set by the neural training, whose schedule is its own.
        (report.epochs, report.learner) = (0, "neural".into());
    }
    progress(&format!(
        "training on {} sentences, {} words ({} partial; {} annotations, {} held out){}",
        set.sentences.len(),
        set.words,
        set.partial_sentences,
        contents.annotations.len(),
        heldout_annotations.len(),
        match start {
            None => format!(", {} epochs, {} learner, dynamic oracle", opts.epochs, recipe.learner),
            Some(_) => String::new(),
        }
    ));
    let train_started = Instant::now();
    let info = crate::model::TrainingInfo {
        train_files: settings
            .base
            .iter()
            .map(|p| p.display().to_string())
            .chain([store.segments.display().to_string()])
            .collect(),
        dev_file: Some(heldout_path.display().to_string()),
        ..crate::model::TrainingInfo::default()
    };
    let mut trained = match &start {
        None => {
            let refresh = (settings.completion == CompletionKind::Refresh).then_some((&completion, confidence));
            candidate::linear(&mut set, &opts, refresh, info, &mut report, progress)
        }
        Some(start) => candidate::neural(settings, &current, start, &set, info, &mut report, progress)?,
    };
    report.train_seconds = train_started.elapsed().as_secs_f64();
    trained.model.tagger = new_tagger;
    trained.model.lemmatizer = new_lemmatizer;
    trained.calibrate_for_cycle(candidate_heldout, candidate_annotations, settings, &mut report);

    // Write, install (checked in full, immutable name), then score as stored.
    let tmp = registry.dir().join(format!("candidate.model.tmp{}", std::process::id()));
    let write = WriteOptions {
        precision: recipe.precision,
        prune_below: recipe.prune_below,
        max_table_bytes: recipe.max_table_bytes,
    };
    // What the candidate has no new one of (tagger, FEATS, lemmatizer, tokenizer) is the serving
    // model's, copied as it is.
    let sections = trained.sections();
    let extras = Extras { recipe: Some(&recipe), tagger_from: Some(&current), sections: &sections };
    let samples: Vec<&crate::corpus::Sentence> = heldout_sentences.iter().copied().filter(|s| sampled(s)).collect();
    let samples_file = registry.dir().join(format!("samples-{}.conllu", compact_utc(report.started)));
    let written = model_file::write_with(&trained.model, &tmp, write, extras)
        .and_then(|_| refit_confidence(&tmp, &heldout_path))
        .and_then(|_| choose_on_samples(&tmp, &samples, settings.calibration_min_arcs, &samples_file));
    report.precision_sentences = *written.as_ref().unwrap_or(&0);
    report.precision_on = Some(match report.precision_sentences {
        0 => heldout_path.display().to_string(),
        _ => samples_file.display().to_string(),
    });
    let installed = written
        .map_err(RetrainError::from)
        .and_then(|_| Ok(registry.install_as(&tmp, &format!("retrained-{}", compact_utc(report.started)))?));
    let _ = fs::remove_file(&tmp);
    let candidate = installed?;
    let candidate_name = file_name(candidate.path());

    let (current_scores, scores, heldout_bootstrap, user) = scoring::score(
        Gated { model: &current, heldout: &heldout, annotations: &heldout_annotations },
        Gated { model: &candidate, heldout: candidate_heldout, annotations: candidate_annotations },
        &heldout_sentences,
        settings.bootstrap_samples,
    );
    report.current = current_scores;
    let rule =
        gate::Rule { max_las_drop: settings.max_las_drop, min_annotation_arcs: settings.gate_min_annotation_arcs };
    let (mut promote, figures, reasons) = gate::decide(rule, heldout_bootstrap, user);
    report.reasons.extend(reasons);
    report.gate = Some(figures);
    report.candidate = Some(scores);
    // From here to the switch `current` stays as it is: a model configured or rolled back to
    // during the cycle is not the one the candidate was gated against, and keeps serving.
    let lock = registry.lock()?;
    let serving = lock.current_name().map_err(io_err(registry.dir()))?;
    if promote && serving.as_deref() != Some(current_name.as_str()) {
        promote = false;
        report.reasons.push(format!(
            "{} serves since the cycle started (the candidate was gated against {current_name}): not promoted",
            serving.as_deref().unwrap_or("no model")
        ));
    }
    report.decision = Some(if promote { Decision::Promoted } else { Decision::Rejected });

    let stem = candidate_name.strip_suffix(".model").unwrap_or(&candidate_name).to_string();
    let report_path = registry.dir().join(format!("{stem}.json"));
    report.report_file = Some(report_path.display().to_string());
    report.seconds = started_at.elapsed().as_secs_f64();
    let bytes = serde_json::to_vec_pretty(&report).map_err(|e| io_err(&report_path)(std::io::Error::other(e)))?;
    crate::base::io::write_atomically(&report_path, &bytes).map_err(io_err(&report_path))?;
    drop(candidate);
    if promote {
        lock.switch(Event::Promoted, &candidate_name)?;
    } else {
        let path = registry.dir().join(&candidate_name);
        match &options.keep_rejected_in {
            Some(dir) => {
                let kept = dir.join(&candidate_name);
                fs::create_dir_all(dir).map_err(io_err(dir))?;
                // Another file system: copied, then removed here.
                if fs::rename(&path, &kept).is_err() {
                    fs::copy(&path, &kept).map_err(io_err(&kept))?;
                    fs::remove_file(&path).map_err(io_err(&path))?;
                }
                progress(&format!("rejected candidate kept as {}", kept.display()));
            }
            None => fs::remove_file(&path).map_err(io_err(&path))?,
        }
    }
    drop(lock);
    // After every cycle, so that the copies a killed cycle left go too.
    for name in registry.prune(settings.keep_models)? {
        progress(&format!("removed {name} (retrain.keep_models = {})", settings.keep_models));
    }
    State::seen(report.started, &contents).write(registry.dir())?;
    Ok(report)
}

/// Why a cycle not forced trains nothing, if it does not: fewer than `min_new_sentences` new
/// annotations and, with a teacher, fewer than `unlabeled_min_new_words` words of new text
/// (counted into `report`).
fn why_skip(
    settings: &Settings,
    state: &State,
    report: &mut Report,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<String>, RetrainError> {
    if report.annotations_new >= settings.min_new_sentences {
        return Ok(None);
    }
    let mut why = format!(
        "{} new annotated sentences since the last cycle, fewer than retrain.min_new_sentences = {}",
        report.annotations_new, settings.min_new_sentences
    );
    let Some(words) = uptraining::new_text_words(settings, state.last_trained)? else { return Ok(Some(why)) };
    report.unlabeled_new_words = words;
    let enough = settings.unlabeled_min_new_words;
    if words >= enough {
        progress(&format!("{why}, but new unlabeled text for the teacher: {enough} words or more"));
        return Ok(None);
    }
    why += &format!(", and {words} words of new unlabeled text, fewer than retrain.unlabeled_min_new_words = {enough}");
    Ok(Some(why))
}
