//! Calibration of a model's confidence on gold data: the softmax temperature and isotonic arc
//! calibrator that [`calibrate`] fits into a model (with the arc ECE it records, [`arc_ece`]),
//! and the transition calibration of a stored model on a gold file
//! ([`transition_calibration`]). The dev parses they are fitted on come from [`super::dev`];
//! this module fits and measures, it must not change the weights.

use std::path::Path;

use crate::corpus::CorpusError;
use crate::learn::confidence::{fit_temperature, Isotonic, Reliability};
use crate::model::file::ModelFile;
use crate::model::Model;
use crate::neural::NeuralScorer;

use super::data::{load_dev_with, DevSentence};
use super::dev::{dev_arc_pairs, dev_decisions};

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

/// Fits the model's confidence on `dev`: the softmax temperature (on the greedy decisions'
/// zero-cost sets, [`dev_decisions`]), the isotonic arc calibrator, and the arc ECE before
/// and after it (2-fold cross-fitted, [`arc_ece`]) in the training info. Partial dev
/// sentences count with their annotated words only.
pub fn calibrate(model: &mut Model, dev: &[DevSentence]) {
    model.temperature = fit_temperature(&dev_decisions(model.system, dev, &model.weights, &model.labels, None));
    let pairs = dev_arc_pairs(model.encoding(), dev, &model.weights, &model.labels, model.fallback, model.temperature);
    let (raw, cross) = arc_ece(&pairs);
    model.info.dev_arc_ece_raw = raw;
    model.info.dev_arc_ece_crossfit = cross;
    model.arc_calibration = Isotonic::fit(&mut pairs.into_iter().flatten().collect::<Vec<_>>());
}

/// Arc ECE of `model`'s calibrated confidences (its temperature and arc calibrator, as it
/// parses) on `dev`'s annotated words: how well a calibration fitted elsewhere holds there.
pub fn calibrated_arc_ece(model: &Model, dev: &[DevSentence]) -> f64 {
    let pairs = dev_arc_pairs(model.encoding(), dev, &model.weights, &model.labels, model.fallback, model.temperature);
    calibrated_ece(&pairs, model.arc_calibration.as_ref())
}

/// Arc ECE of (confidence, right) pairs once `calibration` maps the confidences.
pub fn calibrated_ece(pairs: &[Vec<(f32, f32)>], calibration: Option<&Isotonic>) -> f64 {
    let mut r = Reliability::default();
    for &(c, y) in pairs.iter().flatten() {
        let c = calibration.map_or(c, |iso| iso.apply(c));
        r.add(f64::from(c), f64::from(y));
    }
    r.ece()
}

/// Calibration of transitions (Goldberg 2013, Table 4): `model` parses the gold file greedily
/// (a neural model with its scorer, on the words' forms); each predicted transition's
/// probability is binned, and it counts as correct when the dynamic oracle gives it zero cost.
/// Sentences the oracle does not handle (non-projective, not single-rooted) are left out.
pub fn transition_calibration(model: &ModelFile, gold_path: &Path) -> Result<Reliability, CorpusError> {
    let meta = model.meta();
    let dev = load_dev_with(gold_path, meta.morphology, &mut |_| {})?;
    let neural = model.neural().map(NeuralScorer::new);
    let mut r = Reliability::default();
    for d in dev_decisions(model.system(), &dev, model.weights(), &meta.labels, neural) {
        let best = crate::learn::perceptron::argmax(&d.scores, |_| true).unwrap_or(0);
        let p = crate::learn::confidence::probability_of(&d.scores, best, meta.temperature, |_| true);
        r.add(f64::from(p), if d.zero_cost[best] { 1.0 } else { 0.0 });
    }
    Ok(r)
}
