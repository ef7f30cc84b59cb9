//! Completion of partial annotations: each partially annotated training sentence is parsed by a
//! model under its annotated arcs ([`Parser::parse_constrained`]), and the model's other arcs
//! join the gold tree, those whose confidence reaches a threshold; training then has a cost on
//! every arc kept instead of on the annotated ones only (Li et al. 2016, "Training dependency
//! parsers with partial annotation").
//!
//! [`Completion`] remembers the sentences as annotated, so that completing again (with a better
//! model, after an epoch: [`super::train_refreshing`]) starts from the annotations, never from
//! an earlier completion. A completion is kept only if the training set's own rules hold for
//! it: projective under the set's scheme (the decoder's parse before lowering, so that lifted
//! labels stay lifted), the root label on the root arc only, and labels the set knows (an arc
//! whose label the set does not know stays unannotated: completion never adds a class).
//!
//! This module changes gold trees of a [`TrainingSet`]; it must not read files nor train.

use crate::base::label::{Label, LabelSet};
use crate::corpus::tree::is_projective_partial;
use crate::learn::confidence::Isotonic;
use crate::learn::scorer::Scorer;
use crate::parse::constrained::{Arc, Constraints};
use crate::parse::parser::Parser;
use crate::transition::projective::parse_mark;
use crate::transition::{Encoding, GoldTree, System, NONE};

use super::data::TrainingSet;

/// How a model's confidences are read when completing: its softmax temperature and arc
/// calibration (the serving model's, also for the candidate's weights between epochs: a
/// candidate is trained as the serving model was, and has no calibration of its own yet).
#[derive(Debug, Clone, Copy)]
pub struct Confidence<'a> {
    pub temperature: f32,
    pub calibration: Option<&'a Isotonic>,
    /// Arcs of the model below this (calibrated) confidence stay unannotated.
    pub min: f32,
}

/// What one [`Completion::complete`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Completed {
    /// Partial sentences given some model arc.
    pub sentences: usize,
    /// Model arcs added to the gold trees.
    pub arcs: usize,
    /// Unannotated words left so (confidence below the threshold, or a label the set lacks).
    pub left_open: usize,
    /// Partial sentences whose completion broke a rule of the set (kept as annotated).
    pub refused: usize,
}

/// The partial sentences of a training set as annotated, to be completed by a model.
#[derive(Debug, Clone)]
pub struct Completion {
    /// Index in the set and annotated tree of each partial sentence.
    annotated: Vec<(usize, GoldTree)>,
}

impl Completion {
    /// Remembers the partial sentences of `set` as they are now.
    pub fn of(set: &TrainingSet) -> Completion {
        let annotated =
            set.sentences.iter().enumerate().filter(|(_, s)| s.gold.is_partial()).map(|(i, s)| (i, s.gold.clone()));
        Completion { annotated: annotated.collect() }
    }

    /// Number of partial sentences.
    pub fn len(&self) -> usize {
        self.annotated.len()
    }

    /// Whether the set had no partial sentence.
    pub fn is_empty(&self) -> bool {
        self.annotated.is_empty()
    }

    /// Replaces the gold tree of each partial sentence of `set` by its annotated arcs plus the
    /// other arcs of `weights`' best tree that holds them, where their confidence reaches
    /// `confidence.min`. `weights` score transitions of `system` over `labels` (the serving
    /// model's, or the set's own for a model being trained on it); labels are matched by name.
    pub fn complete<S: Scorer>(
        &self,
        set: &mut TrainingSet,
        system: System,
        weights: S,
        labels: &LabelSet,
        fallback: Label,
        confidence: Confidence<'_>,
    ) -> Completed {
        let mut done = Completed::default();
        let Some(set_labels) = set.labels.as_ref() else { return done };
        let to_model: Vec<Option<Label>> =
            (0..set_labels.len()).map(|i| labels.get(set_labels.name(Label::from_index(i)))).collect();
        // A lifted label the set stripped as rare (`strip_rare_encoded_labels`) is its base.
        let to_set: Vec<Option<Label>> = (0..labels.len())
            .map(|i| {
                let name = labels.name(Label::from_index(i));
                set_labels.get(name).or_else(|| set_labels.get(parse_mark(name).base))
            })
            .collect();
        // Not lowered: the parse stays in the set's (pseudo-projective) label space.
        let encoding = Encoding { system, projective: None };
        let mut parser = Parser::from_parts(encoding, weights, labels, fallback)
            .with_confidence(confidence.temperature)
            .with_calibration(confidence.calibration);
        for (i, annotated) in &self.annotated {
            let sent = &mut set.sentences[*i];
            let n = annotated.len();
            let arcs = (1..=n as u32).filter(|&w| annotated.head(w) != NONE).map(|w| Arc {
                word: w,
                head: annotated.head(w),
                label: annotated.label(w).and_then(|l| to_model[l.index()]),
            });
            let Ok(constraints) = Constraints::new(n, arcs) else {
                done.refused += 1;
                continue;
            };
            parser.parse_constrained(&sent.attrs, &constraints);
            let mut heads = Vec::with_capacity(n);
            let mut arc_labels = Vec::with_capacity(n);
            let mut added = 0;
            for w in 1..=n as u32 {
                if annotated.head(w) != NONE {
                    heads.push(Some(annotated.head(w) as usize));
                    arc_labels.push(annotated.label(w));
                    continue;
                }
                let (head, label) = (parser.heads()[w as usize], to_set[parser.labels()[w as usize].index()]);
                // The root label goes with the root arc only, as the set requires.
                let keep = parser.arc_confidence()[w as usize] >= confidence.min
                    && label.is_some_and(|l| (head == 0) == (l == Label::ROOT));
                heads.push(keep.then_some(head as usize));
                arc_labels.push(if keep { label } else { None });
                added += usize::from(keep);
            }
            let roots = heads.iter().filter(|&&h| h == Some(0)).count();
            if roots > 1 || !is_projective_partial(&heads) {
                done.refused += 1;
                sent.gold = annotated.clone();
                continue;
            }
            sent.gold = GoldTree::partial(&heads, &arc_labels);
            done.sentences += usize::from(added > 0);
            done.arcs += added;
            done.left_open += n - annotated.annotated() - added;
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::fixtures::{conllu, set_of, small_model, FULL};
    use crate::train::{LearnerKind, OracleKind};

    fn confidence(min: f32) -> Confidence<'static> {
        Confidence { temperature: 1.0, calibration: None, min }
    }

    #[test]
    fn completion_adds_the_models_arcs_around_the_annotated_ones_and_can_start_again() {
        let model = small_model(System::ArcEager, OracleKind::Dynamic, LearnerKind::Perceptron);
        // The model parses FULL right; the annotation says word 1 hangs from 3 instead of 2.
        let partial = [("3", "det"), ("_", "_"), ("_", "_"), ("_", "_")];
        let mut set = set_of(&conllu(&[&FULL, &partial])).unwrap();
        let completion = Completion::of(&set);
        assert_eq!(completion.len(), 1);
        let labels = set.labels.clone().unwrap();
        let before = set.sentences[1].gold.clone();
        let done =
            completion.complete(&mut set, model.system, &model.weights, &model.labels, model.fallback, confidence(0.0));
        assert_eq!(done, Completed { sentences: 1, arcs: 3, left_open: 0, refused: 0 });
        let gold = &set.sentences[1].gold;
        assert!(!gold.is_partial(), "every arc is now gold");
        // The annotated arc stays; the others are the model's best tree that holds it.
        assert_eq!((gold.head(1), gold.label(1)), (3, labels.get("det")));
        let mut parser = Parser::from_parts(model.encoding(), &model.weights, &model.labels, model.fallback);
        let arc = Arc { word: 1, head: 3, label: model.labels.get("det") };
        parser.parse_constrained(&set.sentences[1].attrs, &Constraints::new(4, [arc]).unwrap());
        for w in 2..=4 {
            assert_eq!(gold.head(w), parser.heads()[w as usize], "word {w}");
            let name = model.labels.name(parser.labels()[w as usize]);
            assert_eq!(gold.label(w), labels.get(name), "word {w}");
        }
        // The full tree is not touched.
        assert_eq!(set.sentences[0].gold.annotated(), 4);
        // No model arc is that sure: the sentence is trained on as annotated, however often
        // it was completed before.
        let done =
            completion.complete(&mut set, model.system, &model.weights, &model.labels, model.fallback, confidence(1.5));
        assert_eq!((done.arcs, done.left_open), (0, 3));
        let gold = &set.sentences[1].gold;
        assert_eq!((gold.annotated(), before.annotated()), (1, 1));
        assert!(gold.is_partial());
    }

    #[test]
    fn a_label_the_set_does_not_know_leaves_the_arc_open() {
        let model = small_model(System::ArcEager, OracleKind::Dynamic, LearnerKind::Perceptron);
        // A set whose labels lack `det`: the model's det arc cannot join it.
        let no_det = [("3", "nsubj"), ("3", "nsubj"), ("0", "root"), ("3", "punct")];
        let partial = [("_", "_"), ("3", "nsubj"), ("_", "_"), ("_", "_")];
        let mut set = set_of(&conllu(&[&no_det, &partial])).unwrap();
        assert!(set.labels.as_ref().unwrap().get("det").is_none());
        let done = Completion::of(&set).complete(
            &mut set,
            model.system,
            &model.weights,
            &model.labels,
            model.fallback,
            confidence(0.0),
        );
        assert_eq!((done.arcs, done.left_open), (2, 1));
        assert_eq!(set.sentences[1].gold.head(1), NONE);
        assert!(set.labels.as_ref().unwrap().get("det").is_none(), "no class was added");
    }
}
