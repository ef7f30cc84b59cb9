//! The averaged passive-aggressive learner (PA-I, Crammer et al. 2006), the base learner of
//! cost-sensitive learning to search (Chang et al. 2015): every legal class comes with its
//! cost, and a wrong class must score below the correct one by a margin that grows with how
//! much worse it is.
//!
//! Each decision is one constraint, the max-loss one of Crammer et al. (2006, §6, cost-
//! sensitive multi-class): with `y` the best-scored class of least cost and `ρ(c)` class
//! `c`'s cost above the least, `ŷ = argmax_{c wrong} score(c) + sqrt(ρ(c))` and its loss
//! `ℓ = score(ŷ) − score(y) + sqrt(ρ(ŷ))`. If `ℓ > 0`, `+τ` goes to `(f, y)` and `−τ` to
//! `(f, ŷ)` for every active feature `f`, `τ = min(C, ℓ / ‖Δ‖²)` with `‖Δ‖² = 2·|features|`.
//!
//! [`CostUse::Multiclass`] is the same learner told only which classes are correct (`ρ = 1`
//! for every wrong class): the plain multi-class base learner that Chang et al. (Table 4)
//! compare against. The weights are averaged as the perceptron's are (the same store).

use crate::learn::perceptron::{Perceptron, Weights};
use crate::learn::{Decision, Learner};

/// Whether the margins use the costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostUse {
    /// A wrong class's margin is the square root of its extra cost.
    Sensitive,
    /// Every wrong class needs a margin of 1, whatever its cost.
    Multiclass,
}

/// An averaged passive-aggressive model being trained.
#[derive(Debug, Clone)]
pub struct PassiveAggressive {
    weights: Perceptron,
    /// PA-I's aggressiveness `C`: the largest step.
    c: f32,
    costs: CostUse,
}

impl PassiveAggressive {
    /// A zero model over `classes` classes.
    pub fn new(classes: usize, c: f32, costs: CostUse) -> PassiveAggressive {
        PassiveAggressive { weights: Perceptron::new(classes), c, costs }
    }

    /// The margin class `class` of extra cost `extra` must be beaten by.
    fn margin(&self, extra: u32) -> f32 {
        match self.costs {
            CostUse::Sensitive => (extra as f32).sqrt(),
            CostUse::Multiclass => 1.0,
        }
    }
}

impl Learner for PassiveAggressive {
    fn score(&self, features: &[u64], scores: &mut [f32]) {
        self.weights.score(features, scores)
    }

    fn learn(&mut self, d: &Decision) {
        let (min, right) = (d.min_cost(), d.best_correct());
        let violation = d
            .costs
            .iter()
            .filter(|&&(_, cost)| cost > min)
            .map(|&(class, cost)| (class, d.scores[class] - d.scores[right] + self.margin(cost - min)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        if let Some((wrong, loss)) = violation.filter(|&(_, loss)| loss > 0.0 && !d.features.is_empty()) {
            let tau = self.c.min(loss / (2 * d.features.len()) as f32);
            self.weights.update_by(d.features, right, wrong, tau);
        }
        self.weights.tick();
    }

    fn weights(&self) -> Weights {
        self.weights.averaged()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_a_separable_problem_through_the_learner_trait() {
        for costs in [CostUse::Sensitive, CostUse::Multiclass] {
            crate::learn::testing::learns_a_separable_problem(&mut PassiveAggressive::new(3, 1.0, costs));
        }
    }

    /// Two wrong classes score alike; one costs 4 more than the right class, the other 1.
    fn one_step(costs: CostUse) -> [f32; 3] {
        let mut pa = PassiveAggressive::new(3, 1.0, costs);
        let d = Decision { features: &[5], scores: &[0.0, 0.0, 0.0], costs: &[(0, 0), (1, 1), (2, 4)] };
        pa.learn(&d);
        let mut after = [0.0f32; 3];
        pa.score(&[5], &mut after);
        after
    }

    #[test]
    fn the_cost_sensitive_margin_pushes_the_costliest_class_down_by_its_cost() {
        // Max-loss: class 2 (margin sqrt 4 = 2) is the violated constraint; τ = min(1, 2/2) = 1.
        assert_eq!(one_step(CostUse::Sensitive), [1.0, 0.0, -1.0]);
        // Told only right and wrong, the lowest-index wrong class is pushed, by the unit margin.
        assert_eq!(one_step(CostUse::Multiclass), [0.5, -0.5, 0.0]);
    }
}
