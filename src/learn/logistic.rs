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

use crate::learn::perceptron::Weights;
use crate::learn::rows::{Cell, Rows};
use crate::learn::{Decision, Learner};

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

impl Cell for Acc {
    fn class(&self) -> usize {
        usize::from(self.class)
    }
}

/// A logistic model being trained with AdaGrad-RDA.
#[derive(Debug)]
pub struct AdaGradRda {
    classes: usize,
    opts: RdaOptions,
    /// λ, resolved.
    lambda: f32,
    rows: Rows<Acc>,
    /// Updates so far (`j`).
    updates: u64,
}

impl AdaGradRda {
    /// A zero model over `classes` classes, for training data of `tokens` tokens.
    pub fn new(classes: usize, opts: RdaOptions, tokens: usize) -> AdaGradRda {
        let lambda = opts.lambda.unwrap_or(1.0 / (20.0 * tokens.max(1) as f32));
        AdaGradRda { classes, opts, lambda, rows: Rows::default(), updates: 0 }
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
        for &f in features {
            for a in self.rows.get(f).unwrap_or_default() {
                scores[a.class()] += self.weight(a);
            }
        }
    }

    /// One AdaGrad-RDA update (Algorithm 2): `gradient[c]` is `f_c − p_c` for every class
    /// (0 for illegal ones); every active feature receives it.
    pub fn update(&mut self, features: &[u64], gradient: &[f32]) {
        for &f in features {
            let row = self.rows.row_mut(f);
            for (class, &d) in gradient.iter().enumerate() {
                if d.abs() < MIN_GRADIENT {
                    continue;
                }
                let a = Rows::cell_in(row, class, || Acc { class: class as u16, g: 0.0, big_g: 0.0 });
                a.g += d;
                a.big_g += d * d;
            }
        }
        self.updates += 1;
    }

    /// Accumulators held: the training memory that matters.
    pub fn accumulators(&self) -> usize {
        self.rows.cells()
    }

    /// The current weights, non-zero ones only.
    pub fn weights(&self) -> Weights {
        Weights::from_rows(
            self.classes,
            self.rows.iter().map(|(f, row)| {
                let entries: Vec<(u16, f32)> =
                    row.iter().map(|a| (a.class, self.weight(a))).filter(|&(_, w)| w != 0.0).collect();
                (f, entries)
            }),
        )
    }
}

/// The logistic learner: AdaGrad-RDA on the gradient of the log-loss of the correct (least
/// cost) set of each decision, with the scratch masks it needs.
#[derive(Debug)]
pub struct Logistic {
    rda: AdaGradRda,
    legal: Vec<bool>,
    zero: Vec<bool>,
    probs: Vec<f32>,
    gradient: Vec<f32>,
}

impl Logistic {
    /// A zero model over `classes` classes, for training data of `tokens` tokens.
    pub fn new(classes: usize, opts: RdaOptions, tokens: usize) -> Logistic {
        Logistic {
            rda: AdaGradRda::new(classes, opts, tokens),
            legal: vec![false; classes],
            zero: vec![false; classes],
            probs: vec![0.0; classes],
            gradient: vec![0.0; classes],
        }
    }
}

impl Learner for Logistic {
    fn score(&self, features: &[u64], scores: &mut [f32]) {
        self.rda.score(features, scores)
    }

    fn learn(&mut self, d: &Decision) {
        let min = d.min_cost();
        self.legal.fill(false);
        self.zero.fill(false);
        for &(class, cost) in d.costs {
            self.legal[class] = true;
            self.zero[class] = cost == min;
        }
        gradient(d.scores, &self.legal, &self.zero, &mut self.probs, &mut self.gradient);
        self.rda.update(d.features, &self.gradient);
    }

    fn weights(&self) -> Weights {
        self.rda.weights()
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
    fn learns_a_separable_problem_through_the_learner_trait() {
        let opts = RdaOptions { lambda: Some(0.0), ..RdaOptions::default() };
        crate::learn::testing::learns_a_separable_problem(&mut Logistic::new(3, opts, 100));
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
