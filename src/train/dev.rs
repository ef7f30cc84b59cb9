//! A model's weights on the dev set: its attachment scores ([`evaluate_dev`], after each
//! epoch) and the greedy decisions and arc confidences that calibration is fitted on
//! ([`dev_decisions`], [`dev_arc_pairs`]). Only annotated words count: a partial dev sentence
//! is scored on its annotated arcs, and a word whose label is open scores as labelled right
//! when its head is. This module parses and counts; it must not fit or train anything.

use crate::base::label::{Label, LabelSet};
use crate::corpus::tree::is_projective_partial;
use crate::learn::confidence::Decision;
use crate::learn::perceptron::Weights;
use crate::learn::scorer::Scorer;
use crate::model::features::Extractor;
use crate::neural::NeuralScorer;
use crate::parse::parser::{Parser, TransitionScores};
use crate::transition::{Configuration, Encoding, GoldTree, System, Transition, TransitionSystem};

use super::data::{DevSentence, UNANNOTATED};
use super::eval::{attachment, Counts, Scores};

/// Parses the dev sentences with `weights` and scores their annotated words.
pub fn evaluate_dev<S: Scorer>(
    encoding: Encoding,
    dev: &[DevSentence],
    weights: S,
    labels: &LabelSet,
    fallback: Label,
) -> Scores {
    let mut counts = Counts::default();
    for c in evaluate_dev_sentences(encoding, dev, weights, labels, fallback) {
        counts.merge(&c);
    }
    counts.scores()
}

/// [`evaluate_dev`] sentence by sentence: the counts of each, in order (what a paired
/// bootstrap resamples).
pub fn evaluate_dev_sentences<S: Scorer>(
    encoding: Encoding,
    dev: &[DevSentence],
    weights: S,
    labels: &LabelSet,
    fallback: Label,
) -> Vec<Counts> {
    evaluate_sentences_with(&mut Parser::from_parts(encoding, weights, labels, fallback), dev, labels)
}

/// Parses the dev sentences with `parser` (of a model over `labels`) and scores their
/// annotated words.
pub fn evaluate_with<S: Scorer>(parser: &mut Parser<S>, dev: &[DevSentence], labels: &LabelSet) -> Scores {
    let mut counts = Counts::default();
    for c in evaluate_sentences_with(parser, dev, labels) {
        counts.merge(&c);
    }
    counts.scores()
}

/// [`evaluate_with`] sentence by sentence.
pub fn evaluate_sentences_with<S: Scorer>(
    parser: &mut Parser<S>,
    dev: &[DevSentence],
    labels: &LabelSet,
) -> Vec<Counts> {
    dev.iter()
        .map(|s| {
            parser.parse_words(&s.attrs, &s.form_refs());
            let mut counts = Counts::default();
            for (i, &gold_head) in s.heads.iter().enumerate() {
                let Some(gold_head) = gold_head else { continue };
                let w = i + 1;
                let label = labels.name(parser.labels()[w]);
                counts.add(gold_head, s.gold_deprel(i, label), &s.upos[i], parser.heads()[w] as usize, label);
            }
            counts
        })
        .collect()
}

/// The greedy decisions of `weights` (of `neural`, when given: a neural model's scorer, which
/// reads the words' forms) on the dev sentences whose gold tree the dynamic oracle handles
/// (annotated arcs projective, at most one root word, and one for a full tree), each with its
/// legal scores and zero-cost set: the data a temperature is fitted on, and what `eval
/// --calibration --model` bins.
pub fn dev_decisions<S: Scorer>(
    system: System,
    dev: &[DevSentence],
    weights: S,
    labels: &LabelSet,
    mut neural: Option<NeuralScorer>,
) -> Vec<Decision> {
    // A label the model does not know can never be predicted: map it beyond the inventory.
    let unknown = Label::from_index(labels.len());
    let mut out = Vec::new();
    let mut config = Configuration::new(0);
    let mut extractor = Extractor::new(system);
    let mut scores = TransitionScores::new(&weights, labels.len());
    let mut zero = Vec::new();
    for s in dev {
        let roots = s.heads.iter().filter(|&&h| h == Some(0)).count();
        let full = s.annotated() == s.heads.len();
        // A full tree needs one root word (the oracle's costs are exact only then); a partial
        // one at most one, and some annotated arc to learn anything from.
        if roots > 1 || (full && roots == 0) || s.annotated() == 0 || !is_projective_partial(&s.heads) {
            continue;
        }
        let arc_labels: Vec<Option<Label>> = s
            .heads
            .iter()
            .zip(&s.deprels)
            .map(|(&h, d)| match (h, d.as_str()) {
                (Some(0), _) => Some(Label::ROOT),
                (_, UNANNOTATED) => None,
                _ => Some(labels.get(d).unwrap_or(unknown)),
            })
            .collect();
        let gold = GoldTree::partial(&s.heads, &arc_labels);
        if let Some(neural) = &mut neural {
            neural.begin(&s.attrs, &s.form_refs());
        }
        config.reset(s.heads.len());
        while !system.is_terminal(&config) {
            let legal = system.legal(&config);
            match &mut neural {
                Some(neural) => scores.set_from_index_order(neural.logits(&config), &legal),
                None => scores.score(&weights, extractor.extract(&config, &s.attrs), &legal),
            }
            system.zero_cost(&config, &gold, labels.len(), &mut zero);
            let mut d = Decision::default();
            for t in legal.transitions(labels.len()) {
                d.scores.push(scores.get(t));
                d.zero_cost.push(zero.contains(&t.index()));
            }
            if d.zero_cost.contains(&true) {
                out.push(d);
            }
            system.apply(&mut config, scores.best(&legal).unwrap_or(Transition::Shift));
        }
    }
    out
}

/// Per dev sentence, per annotated word: the raw confidence of its arc (the probability of the
/// transition that attached it at `temperature`) and whether the arc is right (head and
/// universal label, the head alone where the label is open). Unannotated words are left out.
pub fn dev_arc_pairs(
    encoding: Encoding,
    dev: &[DevSentence],
    weights: &Weights,
    labels: &LabelSet,
    fallback: Label,
    temperature: f32,
) -> Vec<Vec<(f32, f32)>> {
    arc_pairs_with(
        &mut Parser::from_parts(encoding, weights, labels, fallback).with_confidence(temperature),
        dev,
        labels,
    )
}

/// [`dev_arc_pairs`] with `parser` (of a model over `labels`, computing confidences).
pub fn arc_pairs_with<S: Scorer>(
    parser: &mut Parser<S>,
    dev: &[DevSentence],
    labels: &LabelSet,
) -> Vec<Vec<(f32, f32)>> {
    dev.iter()
        .map(|s| {
            parser.parse_words(&s.attrs, &s.form_refs());
            s.heads
                .iter()
                .enumerate()
                .filter_map(|(i, &gold_head)| {
                    let w = i + 1;
                    let head = parser.heads()[w] as usize;
                    let label = labels.name(parser.labels()[w]);
                    let (_, right) = attachment(gold_head?, s.gold_deprel(i, label), head, label);
                    Some((parser.arc_confidence()[w], f32::from(u8::from(right))))
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::fixtures::{conllu, dev_of, small_model};
    use crate::train::{LearnerKind, OracleKind};

    #[test]
    fn dev_scores_and_calibration_data_count_annotated_words_only() {
        let model = small_model(System::ArcEager, OracleKind::Dynamic, LearnerKind::Perceptron);
        let score =
            |dev: &[DevSentence]| evaluate_dev(model.encoding(), dev, &model.weights, &model.labels, model.fallback);
        // Gold that the model gets wrong on words 1 and 4 and right on 2 and 3.
        let wrong_ends = [("3", "nsubj"), ("3", "nsubj"), ("0", "root"), ("2", "punct")];
        let full = score(&dev_of(&conllu(&[&wrong_ends])));
        assert_eq!((full.words, full.uas), (4, 50.0));
        let right_only = [("_", "_"), ("3", "nsubj"), ("0", "root"), ("_", "_")];
        let dev = dev_of(&conllu(&[&right_only]));
        assert_eq!((dev[0].annotated(), dev[0].heads[0], dev[0].heads[2]), (2, None, Some(0)));
        let partial = score(&dev);
        assert_eq!((partial.words, partial.uas, partial.las), (2, 100.0, 100.0));
        // An open label under a right head is a right labelled attachment.
        let open = [("2", "_"), ("3", "_"), ("0", "_"), ("3", "_")];
        let open = score(&dev_of(&conllu(&[&open])));
        assert_eq!((open.words, open.las), (4, 100.0));
        let pairs = dev_arc_pairs(model.encoding(), &dev, &model.weights, &model.labels, model.fallback, 1.0);
        assert_eq!(pairs[0].len(), 2);
        assert!(pairs[0].iter().all(|&(_, right)| right == 1.0));
        assert!(!dev_decisions(model.system, &dev, &model.weights, &model.labels, None).is_empty());
        let unannotated = dev_of(&conllu(&[&[("_", "_"); 4]]));
        assert_eq!(score(&unannotated).words, 0);
        assert!(dev_decisions(model.system, &unannotated, &model.weights, &model.labels, None).is_empty());
    }
}
