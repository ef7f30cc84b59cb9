//! Multinomial logistic regression over the dynamic oracle's zero-cost set, trained with
//! AdaGrad-RDA and an L1 penalty (Goldberg 2013, Section 3 and Algorithm 2).
//!
//! The loss of a state `x` with zero-cost set `Y` is `log Σ_{y∈Y} e^{w·φ(x,y)} −
//! log Σ_{y legal} e^{w·φ(x,y)}`; its gradient for class `y` is `f_y − p_y` with `f` the
//! distribution restricted to `Y` and `p` the one over the legal transitions. AdaGrad-RDA keeps
//! per weight the sum `g` and the squared sum `G` of its gradients and derives the weight
//! lazily: `w = α / sqrt(G + ρ) · shrink(g, jλ)` after `j` updates, where `shrink` moves `g`
//! towards 0 by `jλ` and stops at 0. Accumulators exist only for (feature, class) pairs that
//! received a gradient, and gradients smaller than [`MIN_GRADIENT`] are dropped: with ~100
//! classes almost all `p_y` are tiny, and storing them is what made the paper's implementation
//! need 12 GB. This module owns the optimiser; the training loop lives in `train`.

use std::collections::HashMap;

use crate::base::hash::IdentityBuildHasher;
use crate::learn::perceptron::Weights;

/// Gradients smaller than this in magnitude are not accumulated (a sparsity approximation).
pub const MIN_GRADIENT: f32 = 1e-4;

/// AdaGrad-RDA hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RdaOptions {
    /// Learning rate α.
    pub alpha: f32,
    /// Ridge ρ.
    pub rho: f32,
    /// L1 penalty λ per update; `None`: 1/(20·|training tokens|), the paper's choice.
    pub lambda: Option<f32>,
}

impl Default for RdaOptions {
    /// The paper's settings: ρ = 0.01, α = 1, λ = 1/(20·|training tokens|).
    fn default() -> Self {
        RdaOptions { alpha: 1.0, rho: 0.01, lambda: None }
    }
}

#[derive(Debug, Clone, Copy)]
struct Acc {
    class: u16,
    /// Σ gradients.
    g: f32,
    /// Σ squared gradients.
    big_g: f32,
}

/// A logistic model being trained with AdaGrad-RDA.
#[derive(Debug)]
pub struct AdaGradRda {
    classes: usize,
    opts: RdaOptions,
    /// λ, resolved.
    lambda: f32,
    index: HashMap<u64, u32, IdentityBuildHasher>,
    rows: Vec<Vec<Acc>>,
    /// Updates so far (`j`).
    updates: u64,
}

impl AdaGradRda {
    /// A zero model over `classes` classes, for training data of `tokens` tokens.
    pub fn new(classes: usize, opts: RdaOptions, tokens: usize) -> AdaGradRda {
        let lambda = opts.lambda.unwrap_or(1.0 / (20.0 * tokens.max(1) as f32));
        AdaGradRda { classes, opts, lambda, index: HashMap::default(), rows: Vec::new(), updates: 0 }
    }

    #[inline]
    fn weight(&self, a: &Acc) -> f32 {
        let threshold = self.updates as f32 * self.lambda;
        let shrunk = if a.g > threshold {
            a.g - threshold
        } else if a.g < -threshold {
            a.g + threshold
        } else {
            return 0.0;
        };
        self.opts.alpha / (a.big_g + self.opts.rho).sqrt() * shrunk
    }

    /// Writes the current score of every class for `features` into `scores`.
    pub fn score(&self, features: &[u64], scores: &mut [f32]) {
        scores.fill(0.0);
        for f in features {
            if let Some(&row) = self.index.get(f) {
                for a in &self.rows[row as usize] {
                    scores[a.class as usize] += self.weight(a);
                }
            }
        }
    }

    /// One AdaGrad-RDA update (Algorithm 2): `gradient[c]` is `f_c − p_c` for every class
    /// (0 for illegal ones); every active feature receives it.
    pub fn update(&mut self, features: &[u64], gradient: &[f32]) {
        for &f in features {
            let next = self.rows.len() as u32;
            let row = *self.index.entry(f).or_insert(next);
            if row == next {
                self.rows.push(Vec::new());
            }
            let row = &mut self.rows[row as usize];
            for (class, &d) in gradient.iter().enumerate() {
                if d.abs() < MIN_GRADIENT {
                    continue;
                }
                match row.iter_mut().find(|a| a.class as usize == class) {
                    Some(a) => {
                        a.g += d;
                        a.big_g += d * d;
                    }
                    None => row.push(Acc { class: class as u16, g: d, big_g: d * d }),
                }
            }
        }
        self.updates += 1;
    }

    /// Accumulators held: the training memory that matters.
    pub fn accumulators(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }

    /// The current weights, non-zero ones only.
    pub fn weights(&self) -> Weights {
        Weights::from_rows(
            self.classes,
            self.index.iter().map(|(&f, &row)| {
                let entries: Vec<(u16, f32)> = self.rows[row as usize]
                    .iter()
                    .map(|a| (a.class, self.weight(a)))
                    .filter(|&(_, w)| w != 0.0)
                    .collect();
                (f, entries)
            }),
        )
    }
}

/// The gradient `f − p` of the multi-label log-loss for one state: `scores` of all classes,
/// `legal` and `zero_cost` masks by class; written into `gradient`. Returns `p` of the legal
/// classes in `probs` (0 for illegal ones), for sampling.
pub fn gradient(scores: &[f32], legal: &[bool], zero_cost: &[bool], probs: &mut [f32], gradient: &mut [f32]) {
    let top = scores.iter().zip(legal).filter(|(_, &l)| l).fold(f32::NEG_INFINITY, |m, (&s, _)| m.max(s));
    let (mut z_all, mut z_zero) = (0.0f32, 0.0f32);
    for c in 0..scores.len() {
        let e = if legal[c] { (scores[c] - top).exp() } else { 0.0 };
        probs[c] = e;
        z_all += e;
        if zero_cost[c] {
            z_zero += e;
        }
    }
    for c in 0..scores.len() {
        let p = probs[c] / z_all;
        let f = if zero_cost[c] { probs[c] / z_zero.max(f32::MIN_POSITIVE) } else { 0.0 };
        probs[c] = p;
        gradient[c] = f - p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_pushes_towards_the_zero_cost_set_and_sums_to_zero() {
        let scores = [1.0f32, 1.0, 1.0, 5.0];
        let legal = [true, true, true, false];
        let zero = [true, false, false, false];
        let (mut p, mut g) = ([0.0f32; 4], [0.0f32; 4]);
        gradient(&scores, &legal, &zero, &mut p, &mut g);
        assert!((p[0] - 1.0 / 3.0).abs() < 1e-6 && p[3] == 0.0);
        assert!((g[0] - 2.0 / 3.0).abs() < 1e-6 && (g[1] + 1.0 / 3.0).abs() < 1e-6 && g[3] == 0.0);
        assert!(g.iter().sum::<f32>().abs() < 1e-6);
    }

    #[test]
    fn learns_a_separable_problem_and_l1_zeroes_useless_features() {
        let mut m = AdaGradRda::new(2, RdaOptions { lambda: Some(0.01), ..RdaOptions::default() }, 100);
        let data = [([1u64, 9], 0usize), ([2u64, 9], 1usize)];
        let (mut scores, mut p, mut g) = (vec![0.0; 2], vec![0.0; 2], vec![0.0; 2]);
        for _ in 0..200 {
            for (f, y) in &data {
                m.score(f, &mut scores);
                let zero: Vec<bool> = (0..2).map(|c| c == *y).collect();
                gradient(&scores, &[true, true], &zero, &mut p, &mut g);
                m.update(f, &g);
            }
        }
        let w = m.weights();
        for (f, y) in &data {
            w.score(f, &mut scores);
            assert!(scores[*y] > scores[1 - *y]);
        }
        // Feature 9 fires with both classes equally: L1 keeps it at exactly zero.
        assert_eq!(w.rows().filter(|(f, _)| *f == 9).count(), 0);
    }
}
