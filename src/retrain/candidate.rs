//! The parser a cycle trains, of the serving model's kind: a linear one trained anew on the
//! base and the annotations with the serving model's recipe ([`linear`]), or a neural one
//! ([`neural`]) fine-tuned from the serving weights (`retrain.neural_from = "serving"`, the
//! default) or trained from random weights (`"scratch"`); and what the rest of the cycle asks
//! of either ([`Candidate`]): its calibration, and the sections written beside its tables.
//!
//! Fine-tuning rather than retraining is what a neural model offers a shifted domain: the
//! corrections move weights that already parse the base treebank, and each batch mixes base
//! sentences in (`retrain.fine_tune_base_share`) so that they move them only where they
//! speak. The number of steps is fixed (`retrain.fine_tune_steps`) and the last step's weights
//! are kept: choosing on held-out data would bias the gate that reads it.
//!
//! This module trains and calibrates; the gate, installing and the report's other figures are
//! the parent's.

use super::settings::{NeuralStart, FINE_TUNE_BATCH};
use super::{Report, RetrainError, Settings};
use crate::base::label::LabelSet;
use crate::model::file::{ModelFile, Recipe};
use crate::model::neural::{NeuralModel, Sections};
use crate::model::{Model, TrainingInfo};
use crate::neural::trainer::NeuralEpoch;
use crate::neural::{FineTuneOptions, NeuralOptions};
use crate::train::completion::{Completion, Confidence};
use crate::train::neural::{calibrate_neural, calibrated_arc_ece_neural, fine_tune_neural, FineTuneData, NewLabel};
use crate::train::{self, DevSentence, LearnerKind, OracleKind, TrainOptions, TrainingSet};
use crate::transition::Transition;

/// A trained candidate: its model (labels, inventory, analysis, calibration) and, for a
/// neural one, the weights it scores with.
pub(super) struct Candidate {
    pub model: Model,
    pub neural: Option<NeuralModel>,
}

impl Candidate {
    /// Fits the arc calibration on `dev`, recording the dev scores and ECE in the model's info.
    pub fn calibrate(&mut self, dev: &[DevSentence]) {
        match &self.neural {
            None => train::calibrate(&mut self.model, dev),
            Some(neural) => calibrate_neural(&mut self.model, neural, dev),
        }
    }

    /// Arc ECE on `dev`'s annotated words with the calibration as fitted.
    pub fn calibrated_arc_ece(&self, dev: &[DevSentence]) -> f64 {
        match &self.neural {
            None => train::calibrated_arc_ece(&self.model, dev),
            Some(neural) => calibrated_arc_ece_neural(&self.model, neural, dev),
        }
    }

    /// Calibrates for a cycle ([`Candidate::calibrate`]): on the held-out file, then on the
    /// held-out annotations once they hold `retrain.calibration_min_arcs` annotated arcs, with
    /// the arc ECE of each fit in `report`.
    pub fn calibrate_for_cycle(
        &mut self,
        heldout: &[DevSentence],
        annotations: &[DevSentence],
        settings: &Settings,
        report: &mut Report,
    ) {
        self.calibrate(heldout);
        report.temperature = self.model.temperature;
        report.heldout_arc_ece_raw = self.model.info.dev_arc_ece_raw;
        report.heldout_arc_ece_crossfit = self.model.info.dev_arc_ece_crossfit;
        report.calibrated_on = "heldout".into();
        if report.annotations_heldout_arcs > 0 {
            report.annotations_arc_ece_heldout_fit = Some(self.calibrated_arc_ece(annotations));
            if report.annotations_heldout_arcs >= settings.calibration_min_arcs {
                // The user's text is what the confidences must describe, once there is enough
                // of it for an isotonic fit; below that, the treebank's larger sample is steadier.
                self.calibrate(annotations);
                report.temperature = self.model.temperature;
                report.annotations_arc_ece_refit = Some(self.model.info.dev_arc_ece_crossfit);
                report.calibrated_on = "annotations".into();
            }
        }
    }

    /// The sections written beside the model's own: a neural model's weights.
    pub fn sections(&self) -> Sections {
        self.neural.as_ref().map_or_else(Vec::new, NeuralModel::sections)
    }
}

/// The serving model's recipe (a default one for a model written before recipes were kept)
/// and the linear training options it gives, with `retrain.epochs` and `retrain.seed` where set
/// (the serving model's best epoch and seed otherwise).
pub(super) fn recipe_of(current: &ModelFile, settings: &Settings) -> (Recipe, TrainOptions) {
    let meta = current.meta();
    let recipe = current.recipe().unwrap_or_else(|| Recipe {
        learner: "perceptron".into(),
        rda_alpha: 1.0,
        rda_rho: 0.01,
        rda_lambda: None,
        precision: meta.table.precision,
        prune_below: meta.pruned_below,
        max_table_bytes: None,
        lift_min_count: None,
        cw_phi: None,
        cw_variance: None,
        pa_c: None,
        rollin_alpha: None,
        min_feature_count: None,
    });
    let learner = LearnerKind::from_name(&recipe.learner).unwrap_or(LearnerKind::Perceptron);
    let defaults = TrainOptions::default();
    let opts = TrainOptions {
        system: current.system(),
        learner,
        oracle: OracleKind::Dynamic,
        epochs: settings.epochs.unwrap_or(meta.info.best_epoch.max(1)),
        explore_k: meta.info.explore_k,
        explore_p: if meta.info.oracle == "dynamic" { meta.info.explore_p } else { defaults.explore_p },
        seed: settings.seed.unwrap_or(meta.info.seed),
        rda: crate::learn::logistic::RdaOptions {
            alpha: recipe.rda_alpha,
            rho: recipe.rda_rho,
            lambda: recipe.rda_lambda,
        },
        cw: crate::learn::cw::CwOptions {
            phi: recipe.cw_phi.unwrap_or(defaults.cw.phi),
            variance: recipe.cw_variance.unwrap_or(defaults.cw.variance),
        },
        pa_c: recipe.pa_c.unwrap_or(defaults.pa_c),
        rollin_alpha: recipe.rollin_alpha.unwrap_or(defaults.rollin_alpha),
        min_feature_count: recipe.min_feature_count.unwrap_or(defaults.min_feature_count),
        domain_features: settings.domain_features,
    };
    (recipe, opts)
}

/// Trains a linear candidate on `set` with `opts` (the serving model's recipe), completing
/// partial annotations again after each epoch with `refresh` (`retrain.completion =
/// "refresh"`).
pub(super) fn linear(
    set: &mut TrainingSet,
    opts: &TrainOptions,
    refresh: Option<(&Completion, Confidence)>,
    info: TrainingInfo,
    report: &mut Report,
    progress: &mut dyn FnMut(&str),
) -> Candidate {
    let mut refreshed = None;
    let mut on_epoch = |p: train::Progress| {
        if let train::Progress::Epoch(r) = p {
            progress(&format!("epoch {}: {} of {} transitions wrong", r.epoch, r.errors, r.transitions));
        }
    };
    let model = match refresh {
        Some((completion, confidence)) => {
            let system = opts.system;
            train::train_refreshing(set, None, opts, info, &mut on_epoch, &mut |_, weights, fallback, set| {
                let labels = set.labels.clone().unwrap_or_else(|| LabelSet::new("root"));
                refreshed = Some(completion.complete(set, system, weights, &labels, fallback, confidence));
            })
        }
        None => train::train(set, None, opts, info, &mut on_epoch),
    };
    report.refreshed_arcs = refreshed.map_or(0, |d| d.arcs);
    Candidate { model, neural: None }
}

/// Refuses the settings that only a linear model's training reads, for a neural serving model
/// (`name`): silently ignored, they would make a cycle other than the one configured.
pub(super) fn check_neural_settings(settings: &Settings, name: &str) -> Result<(), RetrainError> {
    let refuse = |key: &str| {
        Err(RetrainError::Settings(format!(
            "{key} needs a linear serving model, and {name} is neural (train --neural): remove it from [retrain]"
        )))
    };
    if settings.completion != super::CompletionKind::None {
        return refuse("retrain.completion");
    }
    if settings.domain_features {
        return refuse("retrain.domain_features");
    }
    // A teacher's parses train the fast tier; the neural one learns from corrections.
    if settings.teacher.is_some() {
        return refuse("retrain.teacher");
    }
    Ok(())
}

/// What the fine-tuning line says of the labels the model is grown for: "; new labels
/// obl:tmod (from obl), goeswith".
fn new_labels_line(labels: &[NewLabel]) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let each = labels.iter().map(|l| match &l.parent {
        Some(p) => format!("{} (from {p})", l.name),
        None => l.name.clone(),
    });
    format!("; new labels {}", each.collect::<Vec<_>>().join(", "))
}

/// Trains a neural candidate for `current` (serving `start`) on `set`: fine-tuned from
/// `start`, or from scratch with its architecture, as `retrain.neural_from` says.
pub(super) fn neural(
    settings: &Settings,
    current: &ModelFile,
    start: &NeuralModel,
    set: &TrainingSet,
    info: TrainingInfo,
    report: &mut Report,
    progress: &mut dyn FnMut(&str),
) -> Result<Candidate, RetrainError> {
    let meta = current.meta();
    let seed = settings.seed.unwrap_or(meta.info.seed);
    let dropout = NeuralOptions::default().dropout;
    report.neural_from = Some(settings.neural_from.name().to_string());
    let line = |what: &str, e: &NeuralEpoch| {
        let speed = e.words as f64 / e.seconds;
        format!(
            "{what} {}: loss {:.4}, {speed:.0} words/s, {} of {} decisions wrong",
            e.epoch, e.loss, e.errors, e.decisions
        )
    };
    // A model that tags goes on learning the tags of the sentences' columns.
    let tags = current.tagger().map(|(tagger, _, _)| &tagger.tags).filter(|_| start.spec.tags > 0);
    let (model, neural) = match settings.neural_from {
        NeuralStart::Serving => {
            let data = FineTuneData::of(set, &meta.labels, meta.fallback, tags);
            report.new_labels = data.new_labels.iter().map(|l| l.name.clone()).collect();
            report.fine_tune_steps = settings.fine_tune_steps;
            report.fine_tune_base_share = settings.fine_tune_base_share;
            let opts = FineTuneOptions {
                system: current.system(),
                steps: settings.fine_tune_steps,
                batch: FINE_TUNE_BATCH,
                base_share: settings.fine_tune_base_share,
                learning_rate: settings.fine_tune_learning_rate,
                dropout,
                explore_p: meta.info.explore_p,
                seed,
            };
            progress(&format!(
                "fine-tuning {} from its weights: {} steps of {FINE_TUNE_BATCH} sentences, {:.0}% from the base \
                 ({} annotated sentences, {} base sentences{})",
                file_name(current),
                opts.steps,
                100.0 * opts.base_share,
                data.user.len(),
                data.base.len(),
                new_labels_line(&data.new_labels)
            ));
            let mut on_round = |e: &NeuralEpoch| progress(&line("fine-tuning round", e));
            fine_tune_neural(set, &data, start, &opts, info, &mut on_round)?
        }
        NeuralStart::Scratch => {
            let schedule = NeuralOptions::schedule(set.sentences.len());
            let opts = NeuralOptions {
                system: current.system(),
                epochs: settings.epochs.unwrap_or(schedule.epochs),
                batch: schedule.batch,
                explore_k: meta.info.explore_k,
                explore_p: meta.info.explore_p,
                seed,
                ..NeuralOptions::default()
            };
            report.epochs = opts.epochs;
            let labels = set.labels.as_ref().map_or(1, LabelSet::len);
            let spec = crate::model::neural::Spec { classes: Transition::count(labels), ..start.spec.clone() };
            train::train_neural(set, None, Some(spec), tags, &opts, info, &mut |e| progress(&line("epoch", e)))?
        }
    };
    Ok(Candidate { model, neural: Some(neural) })
}

fn file_name(model: &ModelFile) -> String {
    crate::model::registry::file_name(model.path())
}
