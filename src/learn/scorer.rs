//! The one thing a parser needs from weights: scores for every class given active features.
//! Implemented by the trainer's in-memory [`crate::learn::perceptron::Weights`] and by the
//! memory-mapped weight table of a model file (`crate::model::file::TableView`, which
//! implements it where it is defined, a layer up), so the same parser runs on both.

use serde::{Deserialize, Serialize};

/// The order in which a weight store numbers the classes it scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ClassOrder {
    /// The classes' own indices (transition indices for a parser, tag indices for a tagger).
    #[default]
    Index,
    /// A parser's score order ([`crate::transition::Transition::score_position`]), in which the
    /// legal transitions of a configuration form a prefix that can be scored alone.
    Score,
}

/// Scores classes from hashed features.
pub trait Scorer {
    /// Number of classes scored.
    fn classes(&self) -> usize;

    /// Overwrites `scores` with the sum of the weights of `features`, one per class in
    /// [`Scorer::class_order`]; a shorter `scores` gets the first classes only.
    fn score(&self, features: &[u64], scores: &mut [f32]);

    /// Adds the weights of `features` to `scores`, in the same order as [`Scorer::score`]:
    /// scoring features `a` then `b` gives exactly the scores of `a` and `b` together.
    fn add(&self, features: &[u64], scores: &mut [f32]);

    /// How `score` orders classes.
    fn class_order(&self) -> ClassOrder {
        ClassOrder::Index
    }
}

impl Scorer for &crate::learn::perceptron::Weights {
    fn classes(&self) -> usize {
        crate::learn::perceptron::Weights::classes(self)
    }

    fn score(&self, features: &[u64], scores: &mut [f32]) {
        crate::learn::perceptron::Weights::score(self, features, scores)
    }

    fn add(&self, features: &[u64], scores: &mut [f32]) {
        crate::learn::perceptron::Weights::add(self, features, scores)
    }
}
