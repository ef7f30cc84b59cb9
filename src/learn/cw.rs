//! Multi-class confidence-weighted classification (Crammer, Dredze & Kulesza 2009), as
//! Haulrich (2009) used it in a transition-based parser: a Gaussian over the weights, a mean
//! and a variance per weight, and on every decision the update that makes the correct class
//! beat the best-scored wrong one with probability η under that Gaussian.
//!
//! - **Top-1** (Crammer et al. 2009, Haulrich §3): one constraint per decision, between the
//!   best-scored correct class `y` and the best-scored wrong class `ŷ`. With binary features
//!   the difference vector `Δ = φ(x, y) − φ(x, ŷ)` is +1 on `(f, y)` and −1 on `(f, ŷ)` for
//!   every active feature `f`, so its margin is `m = score(y) − score(ŷ)` and its variance
//!   `v = Σ_f σ²(f, y) + σ²(f, ŷ)`.
//! - **The standard-deviation update** (Crammer, Dredze & Pereira 2008, eq. 10), with the
//!   diagonal approximation: with `ψ = 1 + φ²/2`, `ζ = 1 + φ²` and `φ = Φ⁻¹(η)`,
//!   `α = max(0, (−m·ψ + sqrt(m²φ⁴/4 + v·φ²·ζ)) / (v·ζ))`,
//!   `u = ¼(−α·v·φ + sqrt(α²v²φ² + 4v))²`; then `μ ← μ + α·Σ·Δ` and
//!   `1/σ² ← 1/σ² + α·φ/sqrt(u)` for each weight on `Δ`.
//!
//! Unlike the perceptron it updates right predictions whose margin is not confident enough
//! (`α > 0` whenever `m < φ·sqrt(v)`), and a weight's steps shrink as its variance does: rare
//! features keep large steps, which is why Haulrich found pruning them hurts. Variances live
//! only here, during training; the model stores the means, without averaging.

use crate::learn::perceptron::Weights;
use crate::learn::rows::{Cell, Rows};
use crate::learn::{Decision, Learner};

/// Confidence-weighted hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CwOptions {
    /// `φ = Φ⁻¹(η)`: how many standard deviations the margin must clear.
    pub phi: f32,
    /// Every weight's variance before its first update (the prior `a·I`).
    pub variance: f32,
}

impl Default for CwOptions {
    /// φ = 1 (η ≈ 0.84) and a unit prior; see `train`'s documentation for the measured choice.
    fn default() -> Self {
        CwOptions { phi: 1.0, variance: 1.0 }
    }
}

#[derive(Debug, Clone, Copy)]
struct Gaussian {
    class: u16,
    mean: f32,
    variance: f32,
}

impl Cell for Gaussian {
    fn class(&self) -> usize {
        usize::from(self.class)
    }
}

/// A confidence-weighted model being trained.
#[derive(Debug, Clone)]
pub struct ConfidenceWeighted {
    classes: usize,
    opts: CwOptions,
    rows: Rows<Gaussian>,
}

impl ConfidenceWeighted {
    /// The prior over `classes` classes: every mean 0, every variance `opts.variance`.
    pub fn new(classes: usize, opts: CwOptions) -> ConfidenceWeighted {
        assert!(classes <= u16::MAX as usize, "too many classes");
        ConfidenceWeighted { classes, opts, rows: Rows::default() }
    }

    fn variance(&self, f: u64, class: usize) -> f32 {
        self.rows.cell(f, class).map_or(self.opts.variance, |g| g.variance)
    }

    /// The step `α` and the variance factor `α·φ/sqrt(u)` of eq. 10 for a constraint of margin
    /// `m` and variance `v`; `None` when the constraint already holds (`α = 0`).
    fn step(&self, m: f32, v: f32) -> Option<(f32, f32)> {
        let phi = self.opts.phi;
        if v <= 0.0 {
            return None;
        }
        let (psi, zeta) = (1.0 + phi * phi / 2.0, 1.0 + phi * phi);
        let alpha = (-m * psi + (m * m * phi.powi(4) / 4.0 + v * phi * phi * zeta).sqrt()) / (v * zeta);
        if alpha.is_nan() || alpha <= 0.0 {
            return None;
        }
        let root = -alpha * v * phi + (alpha * alpha * v * v * phi * phi + 4.0 * v).sqrt();
        let u = root * root / 4.0;
        Some((alpha, alpha * phi / u.sqrt()))
    }
}

impl Learner for ConfidenceWeighted {
    fn score(&self, features: &[u64], scores: &mut [f32]) {
        scores.fill(0.0);
        for &f in features {
            for g in self.rows.get(f).unwrap_or_default() {
                scores[g.class()] += g.mean;
            }
        }
    }

    fn learn(&mut self, d: &Decision) {
        let Some((wrong, _)) = d.best_wrong() else { return };
        let right = d.best_correct();
        let m = d.scores[right] - d.scores[wrong];
        let v: f32 = d.features.iter().map(|&f| self.variance(f, right) + self.variance(f, wrong)).sum();
        let Some((alpha, shrink)) = self.step(m, v) else { return };
        let prior = self.opts.variance;
        for &f in d.features {
            let row = self.rows.row_mut(f);
            for (class, sign) in [(right, 1.0f32), (wrong, -1.0f32)] {
                let g = Rows::cell_in(row, class, || Gaussian { class: class as u16, mean: 0.0, variance: prior });
                g.mean += sign * alpha * g.variance;
                g.variance = 1.0 / (1.0 / g.variance + shrink);
            }
        }
    }

    fn weights(&self) -> Weights {
        Weights::from_rows(
            self.classes,
            self.rows.iter().map(|(f, row)| {
                (f, row.iter().filter(|g| g.mean != 0.0).map(|g| (g.class, g.mean)).collect::<Vec<_>>())
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_a_separable_problem_through_the_learner_trait() {
        crate::learn::testing::learns_a_separable_problem(&mut ConfidenceWeighted::new(3, CwOptions::default()));
    }

    #[test]
    fn one_update_solves_the_constraint_of_eq_10_and_shrinks_the_variances() {
        let mut cw = ConfidenceWeighted::new(2, CwOptions::default());
        let features = [1u64, 2];
        let (scores, costs) = ([0.0f32; 2], [(0, 0), (1, 1)]);
        // Δ has four unit entries, each of prior variance 1: v = 4, m = 0.
        let (alpha, shrink) = cw.step(0.0, 4.0).unwrap();
        cw.learn(&Decision { features: &features, scores: &scores, costs: &costs });
        let mut after = [0.0f32; 2];
        cw.score(&features, &mut after);
        let margin = after[0] - after[1];
        // μ ← μ + α·Σ·Δ moves the margin by α·v, to exactly φ·sqrt(u) (u: Δ's variance under
        // the updated covariance, sqrt(u) = α·φ/shrink).
        let phi = cw.opts.phi;
        assert!((margin - alpha * 4.0).abs() < 1e-5, "margin {margin}, α·v {}", alpha * 4.0);
        assert!((margin - phi * alpha * phi / shrink).abs() < 1e-5, "margin {margin} ≠ φ·sqrt(u)");
        for (f, class) in [(1, 0), (1, 1), (2, 0), (2, 1)] {
            assert!((cw.variance(f, class) - 1.0 / (1.0 + shrink)).abs() < 1e-6);
        }
        // A constraint that holds with room to spare changes nothing.
        let before = cw.clone();
        cw.learn(&Decision { features: &features, scores: &[10.0, 0.0], costs: &costs });
        assert_eq!(format!("{:?}", cw.rows.cell(1, 0)), format!("{:?}", before.rows.cell(1, 0)));
        // Nor does a decision with no wrong class.
        cw.learn(&Decision { features: &features, scores: &scores, costs: &[(0, 0), (1, 0)] });
        assert_eq!(format!("{:?}", cw.rows.cell(2, 1)), format!("{:?}", before.rows.cell(2, 1)));
    }

    #[test]
    fn rare_features_keep_larger_steps_than_frequent_ones() {
        let mut cw = ConfidenceWeighted::new(2, CwOptions::default());
        let costs = [(0, 0), (1, 1)];
        let mut scores = [0.0f32; 2];
        // Feature 1 is seen 20 times, feature 2 once; then one update on both.
        for _ in 0..20 {
            scores.fill(0.0); // always a violated margin
            cw.learn(&Decision { features: &[1], scores: &scores, costs: &costs });
        }
        let before = (cw.rows.cell(1, 0).unwrap().mean, 0.0);
        cw.learn(&Decision { features: &[1, 2], scores: &[0.0, 0.0], costs: &costs });
        let step_frequent = cw.rows.cell(1, 0).unwrap().mean - before.0;
        let step_rare = cw.rows.cell(2, 0).unwrap().mean - before.1;
        assert!(step_rare > 10.0 * step_frequent, "rare {step_rare}, frequent {step_frequent}");
    }
}
