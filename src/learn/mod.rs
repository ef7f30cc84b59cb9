//! Classifiers and their learners, over hashed features and dense class indices; this layer
//! knows nothing of transition systems or sentences.
//!
//! - [`Learner`]: what training needs from any learner: scores, an update from one decision
//!   with the cost of every legal class, and the weights to parse with;
//! - [`rows`]: the sparse per-feature store the learners train in;
//! - [`scorer`]: the scoring interface every weight store implements;
//! - [`perceptron`]: the averaged perceptron and the read-only weights every learner produces;
//! - [`logistic`]: multinomial logistic regression trained with AdaGrad-RDA (L1);
//! - [`cw`]: multi-class confidence-weighted classification;
//! - [`passive_aggressive`]: the averaged passive-aggressive learner, cost-sensitive or plain
//!   multi-class;
//! - [`confidence_model`]: the whole pipeline's arc confidence, a logistic regression on
//!   every stage's signals;
//! - [`confidence`]: probabilities from scores, temperature fitting, isotonic calibration,
//!   reliability and ECE;
//! - [`precision`]: the sentence-confidence threshold for a precision asked for, by a
//!   Clopper–Pearson bound over calibration sentences.

pub mod confidence;
pub mod confidence_model;
pub mod cw;
pub mod logistic;
pub mod passive_aggressive;
pub mod perceptron;
pub mod precision;
pub mod rows;
pub mod scorer;

use crate::learn::perceptron::Weights;

/// One decision to learn from: the state's active features, the learner's scores of every
/// class on them (from [`Learner::score`]), and every legal class with its cost. The classes
/// of least cost are the correct ones; the others are worse by their cost difference (for a
/// parser: the dynamic oracle's count of gold arcs lost).
#[derive(Debug, Clone, Copy)]
pub struct Decision<'a> {
    pub features: &'a [u64],
    pub scores: &'a [f32],
    /// `(class, cost)` of each legal class; never empty.
    pub costs: &'a [(usize, u32)],
}

impl Decision<'_> {
    /// The least cost of a legal class.
    pub fn min_cost(&self) -> u32 {
        self.costs.iter().map(|&(_, c)| c).min().unwrap_or(0)
    }

    /// The best-scored legal class whose cost passes `keep` (lowest index on ties), with its
    /// cost.
    fn best_where(&self, keep: impl Fn(u32) -> bool) -> Option<(usize, u32)> {
        let mut best: Option<(usize, u32)> = None;
        for &(class, cost) in self.costs {
            let better = match best {
                None => true,
                Some((b, _)) => {
                    self.scores[class] > self.scores[b] || (self.scores[class] == self.scores[b] && class < b)
                }
            };
            if keep(cost) && better {
                best = Some((class, cost));
            }
        }
        best
    }

    /// The best-scored legal class: the prediction.
    pub fn predicted(&self) -> (usize, u32) {
        self.best_where(|_| true).unwrap_or((0, 0))
    }

    /// The best-scored correct class (of least cost).
    pub fn best_correct(&self) -> usize {
        let min = self.min_cost();
        self.best_where(|c| c == min).map_or(0, |(class, _)| class)
    }

    /// The best-scored wrong class and its cost, if any legal class costs more than the least.
    pub fn best_wrong(&self) -> Option<(usize, u32)> {
        let min = self.min_cost();
        self.best_where(|c| c > min)
    }
}

/// A learner being trained: the training loop is generic over it (and over the transition
/// system), so each learner is one implementation of this trait.
pub trait Learner {
    /// Writes the current score of every class for `features` into `scores` (the scores that
    /// predict during training).
    fn score(&self, features: &[u64], scores: &mut [f32]);

    /// Learns from one decision. Called for every decision, right or wrong (averaging learners
    /// count them).
    fn learn(&mut self, decision: &Decision);

    /// The weights to parse with: averaged for the averaging learners, the means for
    /// confidence-weighted, the current weights otherwise.
    fn weights(&self) -> Weights;
}

#[cfg(test)]
pub(crate) mod testing {
    //! A toy problem every learner must solve.

    use super::*;

    /// Three classes, each signalled by one feature, with a feature (10) shared by all and a
    /// third class that costs 2 where the other wrong one costs 1.
    pub fn learns_a_separable_problem(learner: &mut dyn Learner) {
        let data = [(vec![1u64, 10], 0usize), (vec![2, 10], 1), (vec![3, 10], 2)];
        let mut scores = vec![0.0; 3];
        for _ in 0..10 {
            for (f, y) in &data {
                learner.score(f, &mut scores);
                let costs: Vec<(usize, u32)> =
                    (0..3).map(|c| (c, if c == *y { 0 } else { 1 + u32::from(c == 2) })).collect();
                learner.learn(&Decision { features: f, scores: &scores, costs: &costs });
            }
        }
        let w = learner.weights();
        for (f, y) in &data {
            w.score(f, &mut scores);
            let best = (0..3).max_by(|&a, &b| scores[a].total_cmp(&scores[b])).unwrap();
            assert_eq!(best, *y, "scores {scores:?} for features {f:?}");
        }
    }

    #[test]
    fn a_decision_names_its_prediction_and_its_best_right_and_wrong_classes() {
        let scores = [0.5, 2.0, 1.0, 3.0];
        // Class 3 scores best but is illegal (absent); 1 is predicted and costs 1.
        let costs = [(0, 0), (1, 1), (2, 0)];
        let d = Decision { features: &[], scores: &scores, costs: &costs };
        assert_eq!(d.predicted(), (1, 1));
        assert_eq!(d.best_correct(), 2);
        assert_eq!(d.best_wrong(), Some((1, 1)));
        assert_eq!(Decision { costs: &[(0, 0), (2, 0)], ..d }.best_wrong(), None);
    }
}
