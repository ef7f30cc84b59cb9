//! Training the accurate tier ([`train_neural`]): the training set's sentences (with the tags,
//! FEATS and lemmas the analysis gives them, jackknifed as for the linear parser) become the
//! neural trainer's examples ([`crate::neural::trainer`]); after each epoch the weights parse
//! the dev set through the one parser both kinds share, and the best epoch's are kept; the arc
//! confidence is then calibrated on dev as the linear model's is (isotonic, with its ECE
//! cross-fitted). This module adapts and assembles; the learning is the neural layer's.

use std::collections::HashMap;

use crate::base::label::LabelSet;
use crate::learn::confidence::Isotonic;
use crate::learn::perceptron::Weights;
use crate::model::features::{attrs_tag_key, form_key};
use crate::model::neural::{NeuralModel, Spec};
use crate::model::{Model, TrainingInfo};
use crate::neural::trainer::{self, NeuralEpoch, TrainError};
use crate::neural::{Example, FineTuneOptions, NeuralOptions, NeuralScorer};
use crate::parse::parser::Parser;
use crate::transition::{Encoding, Transition};

use super::calibration::{arc_ece, calibrated_ece};
use super::data::{DevSentence, TrainingSet};
use super::dev::{arc_pairs_with, evaluate_with};
use super::domain::Domain;
use super::options::DEFAULT_MIN_FEATURE_COUNT;
use super::training_loop::fallback_label;

/// A parser that scores with `neural` (its linear table `empty`).
fn parser<'m>(
    encoding: Encoding,
    empty: &'m Weights,
    neural: &'m NeuralModel,
    labels: &'m LabelSet,
    model: &Model,
) -> Parser<'m, &'m Weights> {
    Parser::from_parts(encoding, empty, labels, model.fallback)
        .with_morphology(model.morphology)
        .with_neural(Some(NeuralScorer::new(neural.net())))
}

/// The linear table of a neural model: never scored, it holds the model's inventory, a row
/// for each FORM and (UPOS, XPOS) pair seen at least [`DEFAULT_MIN_FEATURE_COUNT`] times in
/// training under the keys a linear parser's table has them ([`form_key`], [`crate::model::features::tag_key`]), so
/// that the check of a file's fit to the model ([`crate::parse::fit`]) reads both kinds alike.
fn inventory(set: &TrainingSet, classes: usize) -> Weights {
    let mut counts: HashMap<u64, u32> = HashMap::new();
    for s in &set.sentences {
        for (form, attrs) in s.forms.iter().zip(&s.attrs[1..]) {
            *counts.entry(form_key(form)).or_default() += s.copies;
            *counts.entry(attrs_tag_key(attrs)).or_default() += s.copies;
        }
    }
    let mut keys: Vec<u64> =
        counts.into_iter().filter(|&(_, n)| n >= DEFAULT_MIN_FEATURE_COUNT).map(|(k, _)| k).collect();
    keys.sort_unstable();
    Weights::from_rows(classes, keys.into_iter().map(|k| (k, vec![(0, 1.0)])))
}

/// Trains a neural parser of `spec` (the default architecture for the set's labels if
/// `None`) on `set`, choosing the epoch by LAS on `dev`. The model returned has an empty
/// linear table and no analysis (the caller adds its own); the neural weights come beside it.
pub fn train_neural(
    set: &TrainingSet,
    dev: Option<&[DevSentence]>,
    spec: Option<Spec>,
    opts: &NeuralOptions,
    mut info: TrainingInfo,
    progress: &mut dyn FnMut(&NeuralEpoch),
) -> Result<(Model, NeuralModel), TrainError> {
    let labels = set.labels.clone().unwrap_or_else(|| LabelSet::new("root"));
    let classes = Transition::count(labels.len());
    let spec = spec.unwrap_or_else(|| Spec::default_for(classes));
    let examples: Vec<Example> = set
        .sentences
        .iter()
        .map(|s| Example { attrs: s.attrs.clone(), forms: s.forms.clone(), gold: s.gold.clone(), copies: s.copies })
        .collect();
    let encoding = Encoding { system: opts.system, projective: set.projective };
    let empty = Weights::from_rows(classes, std::iter::empty());
    let fallback = fallback_label(set, &labels);
    let mut model = set.parser_model(opts.system, labels, fallback, inventory(set, classes), TrainingInfo::default());
    let mut score = |neural: &NeuralModel| {
        dev.map(|d| evaluate_with(&mut parser(encoding, &empty, neural, &model.labels, &model), d, &model.labels).las)
    };
    let trained = trainer::train(spec, &examples, opts, &mut score, progress)?;
    drop(examples);
    info.oracle = "dynamic".to_string();
    info.epochs = opts.epochs;
    info.best_epoch = trained.best_epoch;
    info.explore_k = opts.explore_k;
    info.explore_p = opts.explore_p;
    info.seed = opts.seed;
    set.record_in(&mut info);
    model.info = info;
    if let Some(dev) = dev {
        calibrate_neural(&mut model, &trained.model, dev);
    }
    Ok((model, trained.model))
}

/// Fits `model`'s arc calibration (isotonic) for the parse of `neural` on `dev`, and records
/// its dev UAS, LAS and arc ECE (raw and cross-fitted), as a linear model's is calibrated
/// ([`super::calibrate`]; a neural model's temperature stays 1: its softmax is trained).
pub fn calibrate_neural(model: &mut Model, neural: &NeuralModel, dev: &[DevSentence]) {
    let (scores, pairs) = with_confidence(model, neural, |p| {
        (evaluate_with(p, dev, &model.labels), arc_pairs_with(p, dev, &model.labels))
    });
    model.info.dev_uas = scores.uas;
    model.info.dev_las = scores.las;
    let (raw, cross) = arc_ece(&pairs);
    model.info.dev_arc_ece_raw = raw;
    model.info.dev_arc_ece_crossfit = cross;
    model.arc_calibration = Isotonic::fit(&mut pairs.into_iter().flatten().collect::<Vec<_>>());
}

/// Arc ECE of `model`'s calibrated confidences for the parse of `neural` on `dev`'s annotated
/// words ([`super::calibrated_arc_ece`] for a neural model).
pub fn calibrated_arc_ece_neural(model: &Model, neural: &NeuralModel, dev: &[DevSentence]) -> f64 {
    let pairs = with_confidence(model, neural, |p| arc_pairs_with(p, dev, &model.labels));
    calibrated_ece(&pairs, model.arc_calibration.as_ref())
}

/// `f` of a parser that scores with `neural` and computes confidences (temperature 1: the
/// softmax is trained), without `model`'s arc calibration.
fn with_confidence<R>(model: &Model, neural: &NeuralModel, f: impl FnOnce(&mut Parser<&Weights>) -> R) -> R {
    let empty = Weights::from_rows(model.weights.classes(), std::iter::empty());
    f(&mut parser(model.encoding(), &empty, neural, &model.labels, model).with_confidence(1.0))
}

/// What a trained neural model is fine-tuned on ([`fine_tune_neural`]).
pub struct FineTuneData {
    /// The user's sentences (annotations, self-training's).
    pub user: Vec<Example>,
    /// The base treebank's.
    pub base: Vec<Example>,
    /// Annotated labels the model lacks: their arcs train the head alone.
    pub forgotten_labels: usize,
    /// The model's labels, and its label for a word the parse leaves unlabelled.
    labels: LabelSet,
    fallback: crate::base::label::Label,
}

impl FineTuneData {
    /// The sentences of `set` as examples for a model whose labels are `labels` (and
    /// `fallback` its label for a word the parse leaves unlabelled): its output classes are
    /// fixed, so each arc's label is found by name there, and one it lacks is forgotten (its
    /// head stays annotated).
    pub fn of(set: &TrainingSet, labels: &LabelSet, fallback: crate::base::label::Label) -> FineTuneData {
        let names = set.labels.as_ref();
        let to_model = |l: crate::base::label::Label| names.and_then(|n| labels.get(n.name(l)));
        let mut data =
            FineTuneData { user: Vec::new(), base: Vec::new(), forgotten_labels: 0, labels: labels.clone(), fallback };
        for s in &set.sentences {
            let mut gold = s.gold.clone();
            data.forgotten_labels += gold.relabel(to_model);
            let example = Example { attrs: s.attrs.clone(), forms: s.forms.clone(), gold, copies: 1 };
            match s.domain {
                Domain::User => data.user.push(example),
                Domain::Base => data.base.push(example),
            }
        }
        data
    }
}

/// Fine-tunes `start`, the trained model `data` was made for, on `data`
/// ([`trainer::fine_tune`]). The model
/// returned has `set`'s inventory (the user's forms among it), no calibration and no analysis
/// (the caller adds them); the neural weights come beside it.
pub fn fine_tune_neural(
    set: &TrainingSet,
    data: &FineTuneData,
    start: &NeuralModel,
    opts: &FineTuneOptions,
    mut info: TrainingInfo,
    progress: &mut dyn FnMut(&NeuralEpoch),
) -> Result<(Model, NeuralModel), TrainError> {
    let classes = Transition::count(data.labels.len());
    let trained = trainer::fine_tune(start, &data.user, &data.base, opts, progress)?;
    info.oracle = "dynamic".to_string();
    info.explore_p = opts.explore_p;
    info.seed = opts.seed;
    set.record_in(&mut info);
    let model = set.parser_model(opts.system, data.labels.clone(), data.fallback, inventory(set, classes), info);
    Ok((model, trained.model))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::file::{self, Extras, ModelFile, WriteOptions};
    use crate::model::neural::{NEUMETA, NEURAL};
    use crate::train::fixtures::{conllu, dev_of, sentences, set_of, FULL};
    use crate::transition::System;

    /// A small neural model trained on copies of [`FULL`] and a tree of other labels over the
    /// same words, so that the parse depends on the model.
    fn trained() -> (Model, NeuralModel, Vec<DevSentence>) {
        let other = [("0", "root"), ("1", "obj"), ("2", "acl"), ("1", "punct")];
        let text = conllu(&[&FULL, &FULL, &FULL, &FULL, &other]);
        let set = set_of(&text).unwrap();
        let dev = dev_of(&conllu(&[&FULL]));
        let spec = Spec::small_for(Transition::count(set.labels.as_ref().unwrap().len()));
        let opts = NeuralOptions {
            system: System::ArcHybrid,
            epochs: 40,
            batch: 2,
            learning_rate: 0.01,
            ..NeuralOptions::default()
        };
        let (model, neural) =
            train_neural(&set, Some(&dev), Some(spec), &opts, TrainingInfo::default(), &mut |_| {}).unwrap();
        (model, neural, dev)
    }

    #[test]
    fn a_neural_model_learns_its_trees_and_parses_the_same_from_its_file() {
        let (model, neural, _) = trained();
        assert_eq!(model.info.dev_las, 100.0, "{:?}", model.info);
        assert!(model.arc_calibration.is_some());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.model");
        let sections = neural.sections();
        file::write_with(&model, &path, WriteOptions::default(), Extras { sections: &sections, ..Extras::default() })
            .unwrap();
        let opened = ModelFile::open(&path).unwrap();
        assert_eq!(NeuralModel::of(&opened.neural().unwrap()), neural);
        // The file's parser (through `Parser::new`, as every command builds it) and the
        // in-memory one give the same trees and confidences.
        let empty = Weights::from_rows(model.weights.classes(), std::iter::empty());
        let mut memory = parser(model.encoding(), &empty, &neural, &model.labels, &model).with_confidence(1.0);
        let mut mapped = Parser::new(&opened).with_confidence(1.0);
        assert!(mapped.is_neural());
        let text = conllu(&[&FULL, &[("2", "det"), ("0", "root")]]);
        for (mut sent, d) in sentences(&text).into_iter().zip(dev_of(&text)) {
            memory.parse_words(&d.attrs, &d.form_refs());
            mapped.parse(&mut sent);
            assert_eq!((memory.heads(), memory.labels()), (mapped.heads(), mapped.labels()));
            assert_eq!(memory.arc_confidence(), mapped.arc_confidence());
        }
        // The inventory holds the training forms, so the file's fit check knows them.
        assert!(opened.weights().lookup(form_key("cat")).is_some());
        assert!(opened.weights().lookup(form_key("dog")).is_none());
    }

    #[test]
    fn a_cut_mislaid_or_earlier_neural_section_is_refused_when_the_model_is_opened() {
        let (model, neural, _) = trained();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.model");
        let sections = neural.sections();
        let (meta, data) = (&sections[0].1, &sections[1].1);
        let cases = [
            (vec![(NEUMETA, meta.clone()), (NEURAL, data[..data.len() - 4].to_vec())], "neural weights hold"),
            (vec![(NEUMETA, meta.clone())], "section NEURAL is missing"),
            (vec![(NEUMETA, b"NEU2not a spec".to_vec()), (NEURAL, data.clone())], "description does not decode"),
            // An earlier build's: the spec without the format's bytes.
            (vec![(NEUMETA, meta[4..].to_vec()), (NEURAL, data.clone())], "an earlier build's: retrain it"),
        ];
        for (sections, expected) in cases {
            file::write_with(
                &model,
                &path,
                WriteOptions::default(),
                Extras { sections: &sections, ..Extras::default() },
            )
            .unwrap();
            let err = ModelFile::open(&path).err().expect("refused").to_string();
            assert!(err.contains(expected) && err.contains("bad.model"), "{err}");
        }
    }
}
