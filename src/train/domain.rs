//! Feature augmentation for domain adaptation (Daumé III 2007, "Frustratingly easy domain
//! adaptation", §3: every feature gets a shared copy and a per-domain copy).
//!
//! A retraining cycle trains on the base treebank and on the user's annotations together. With
//! [`super::TrainOptions::domain_features`], a sentence of the user's domain ([`Domain::User`])
//! fires each of its features twice: the feature itself (shared with the treebank) and its
//! user copy ([`user_copy`]); a treebank sentence fires only the shared one. So the treebank
//! and the user's text train the shared weights together, and the user copies learn where the
//! user's text differs: the treebank's many sentences no longer pull back, epoch after epoch,
//! what the corrections taught (they are scored without the user copies). The daemon parses
//! only the user's text, so the model written is the sum of the two copies ([`DomainFeatures::fold`]):
//! one table, as many features as without augmentation, parsing as fast.
//!
//! This module owns the copies and their folding; which sentences are the user's is the
//! caller's, and it must not know about learners or transition systems.

use std::collections::HashMap;

use crate::base::hash::{combine, IdentityBuildHasher};
use crate::learn::perceptron::Weights;

/// Where a training sentence comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Domain {
    /// The treebank the model was trained on.
    #[default]
    Base,
    /// The text the user parses: annotations, and the daemon's own output when self-training.
    User,
}

/// Salt of the user copies: any constant other templates do not use.
const USER_SALT: u64 = 0x5553_4552_434f_5059; // "USERCOPY"

/// The user copy of feature `f`.
pub fn user_copy(f: u64) -> u64 {
    combine(f, USER_SALT)
}

/// The user copies made during training, to fold them back into their features.
#[derive(Debug, Default)]
pub struct DomainFeatures {
    /// User copy → the feature it copies.
    copies: HashMap<u64, u64, IdentityBuildHasher>,
    augmented: Vec<u64>,
}

impl DomainFeatures {
    /// `features` and their user copies: what a user sentence's configuration fires.
    pub fn augment(&mut self, features: &[u64]) -> &[u64] {
        self.augmented.clear();
        self.augmented.extend_from_slice(features);
        for &f in features {
            let copy = user_copy(f);
            self.copies.entry(copy).or_insert(f);
            self.augmented.push(copy);
        }
        &self.augmented
    }

    /// The weights to parse the user's text with: each user copy's row added to its feature's
    /// (shared + user, Daumé's target-domain model), the copies gone.
    pub fn fold(&self, weights: &Weights) -> Weights {
        if self.copies.is_empty() {
            return weights.clone();
        }
        let mut rows: HashMap<u64, Vec<(u16, f32)>, IdentityBuildHasher> = HashMap::default();
        for (f, row) in weights.rows() {
            let target = rows.entry(self.copies.get(&f).copied().unwrap_or(f)).or_default();
            for &(class, w) in row {
                match target.iter_mut().find(|(c, _)| *c == class) {
                    Some((_, sum)) => *sum += w,
                    None => target.push((class, w)),
                }
            }
        }
        // A stable order: the table written from these rows does not depend on hashing order.
        let mut rows: Vec<_> = rows.into_iter().collect();
        rows.sort_unstable_by_key(|&(f, _)| f);
        Weights::from_rows(
            weights.classes(),
            rows.into_iter().map(|(f, mut row)| {
                row.retain(|&(_, w)| w != 0.0);
                row.sort_unstable_by_key(|&(c, _)| c);
                (f, row)
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_adds_each_user_copy_to_its_feature_and_scores_as_both_did() {
        let mut domain = DomainFeatures::default();
        let features = [11u64, 22, 33];
        let augmented = domain.augment(&features).to_vec();
        assert_eq!(augmented.len(), 6);
        assert_eq!(&augmented[..3], &features);
        // Shared weights on 11 and 22, user weights on copies of 22 and 33, and a feature
        // no user sentence fired (44).
        let weights = Weights::from_rows(
            3,
            [
                (11, vec![(0, 1.0)]),
                (22, vec![(1, 2.0)]),
                (user_copy(22), vec![(1, -0.5), (2, 1.5)]),
                (user_copy(33), vec![(0, 0.25)]),
                (44, vec![(2, 4.0)]),
            ]
            .into_iter(),
        );
        let folded = domain.fold(&weights);
        assert_eq!(folded.features(), 4);
        let (mut before, mut after) = (vec![0.0; 3], vec![0.0; 3]);
        weights.score(&augmented, &mut before);
        folded.score(&features, &mut after);
        assert_eq!(before, after);
        assert_eq!(after, [1.25, 1.5, 1.5]);
        // A treebank-only feature is as it was.
        let mut only = vec![0.0; 3];
        folded.score(&[44], &mut only);
        assert_eq!(only, [0.0, 0.0, 4.0]);
    }

    #[test]
    fn without_user_sentences_folding_changes_nothing() {
        let weights = Weights::from_rows(2, [(5u64, vec![(0, 1.0)])].into_iter());
        let folded = DomainFeatures::default().fold(&weights);
        let mut scores = vec![0.0; 2];
        folded.score(&[5], &mut scores);
        assert_eq!(scores, [1.0, 0.0]);
    }
}
