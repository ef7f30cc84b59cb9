//! The one thing a parser needs from weights: scores for every class given active features.
//! Implemented by the trainer's in-memory [`crate::perceptron::Weights`] and by the
//! memory-mapped [`crate::model_file::TableView`], so the same parser runs on both.

/// Scores classes from hashed features.
pub trait Scorer {
    /// Number of classes scored.
    fn classes(&self) -> usize;

    /// Overwrites `scores` (one per class) with the sum of the weights of `features`.
    fn score(&self, features: &[u64], scores: &mut [f32]);
}

impl Scorer for &crate::perceptron::Weights {
    fn classes(&self) -> usize {
        crate::perceptron::Weights::classes(self)
    }

    fn score(&self, features: &[u64], scores: &mut [f32]) {
        crate::perceptron::Weights::score(self, features, scores)
    }
}

impl Scorer for crate::model_file::TableView<'_> {
    fn classes(&self) -> usize {
        self.layout().classes as usize
    }

    fn score(&self, features: &[u64], scores: &mut [f32]) {
        crate::model_file::TableView::score(self, features, scores)
    }
}
