//! The averaged multiclass perceptron (Collins 2002; Freund & Schapire 1999) over hashed
//! features, and the read-only [`Weights`] every learner produces for parsing.
//!
//! Weights live in the sparse rows of [`crate::learn::rows`]. Averaging uses the standard
//! trick of keeping, besides `w`, the sum `u` of `c·Δw` (with `c` the instance counter); the
//! average is `w − u/c`, with no per-instance work. Updates of any size
//! ([`Perceptron::update_by`]) average the same way, so the passive-aggressive learners train
//! in this store.
//! This module owns learning and scoring; it knows nothing of transition systems.

use std::collections::HashMap;

use crate::base::hash::IdentityBuildHasher;
use crate::learn::rows::{Cell, Rows};
use crate::learn::{Decision, Learner};

/// Read-only weights: feature hash → sparse row of `(class, weight)`.
#[derive(Debug, Clone, Default)]
pub struct Weights {
    classes: usize,
    rows: HashMap<u64, (u32, u32), IdentityBuildHasher>,
    entries: Vec<(u16, f32)>,
}

impl Weights {
    /// Number of classes scored.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// Number of non-zero weights.
    pub fn nonzero(&self) -> usize {
        self.entries.len()
    }

    /// Number of features with at least one non-zero weight.
    pub fn features(&self) -> usize {
        self.rows.len()
    }

    /// Weights from rows of `(class, weight)` per feature (empty rows are dropped).
    pub fn from_rows(classes: usize, rows: impl Iterator<Item = (u64, Vec<(u16, f32)>)>) -> Weights {
        let mut w = Weights { classes, rows: HashMap::default(), entries: Vec::new() };
        for (f, row) in rows {
            if row.is_empty() {
                continue;
            }
            let start = w.entries.len() as u32;
            w.entries.extend(row);
            w.rows.insert(f, (start, w.entries.len() as u32 - start));
        }
        w
    }

    /// Every feature with its row of `(class, weight)`.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = (u64, &[(u16, f32)])> + '_ {
        self.rows.iter().map(|(&f, &(start, len))| (f, &self.entries[start as usize..(start + len) as usize]))
    }

    /// Writes the score of every class for the active `features` into `scores`.
    #[inline]
    pub fn score(&self, features: &[u64], scores: &mut [f32]) {
        scores.fill(0.0);
        self.add(features, scores);
    }

    /// Adds the weights of the active `features` to `scores`.
    #[inline]
    pub fn add(&self, features: &[u64], scores: &mut [f32]) {
        for f in features {
            if let Some(&(start, len)) = self.rows.get(f) {
                for &(class, w) in &self.entries[start as usize..(start + len) as usize] {
                    if let Some(s) = scores.get_mut(class as usize) {
                        *s += w;
                    }
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    class: u16,
    w: f32,
    /// Σ c·Δw over this weight's updates.
    u: f64,
}

impl Cell for Entry {
    fn class(&self) -> usize {
        usize::from(self.class)
    }
}

/// An averaged perceptron being trained.
#[derive(Debug, Clone)]
pub struct Perceptron {
    classes: usize,
    rows: Rows<Entry>,
    /// Instance counter `c` (starts at 1).
    instances: u64,
}

impl Perceptron {
    /// A zero model over `classes` classes.
    pub fn new(classes: usize) -> Perceptron {
        assert!(classes <= u16::MAX as usize, "too many classes");
        Perceptron { classes, rows: Rows::default(), instances: 1 }
    }

    /// Number of classes.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// Writes the current (non-averaged) score of every class into `scores`.
    #[inline]
    pub fn score(&self, features: &[u64], scores: &mut [f32]) {
        scores.fill(0.0);
        for &f in features {
            for e in self.rows.get(f).unwrap_or_default() {
                scores[e.class()] += e.w;
            }
        }
    }

    /// Counts one training instance (one transition), whether or not it led to an update.
    #[inline]
    pub fn tick(&mut self) {
        self.instances += 1;
    }

    /// The perceptron update: `+1` for class `good`, `−1` for class `bad` on every feature.
    pub fn update(&mut self, features: &[u64], good: usize, bad: usize) {
        self.update_by(features, good, bad, 1.0);
    }

    /// An update of size `step`: `+step` for class `good`, `−step` for class `bad` on every
    /// feature (the passive-aggressive learners choose the step).
    pub fn update_by(&mut self, features: &[u64], good: usize, bad: usize, step: f32) {
        let c = self.instances as f64;
        for &f in features {
            let row = self.rows.row_mut(f);
            for (class, delta) in [(good, step), (bad, -step)] {
                let e = Rows::cell_in(row, class, || Entry { class: class as u16, w: 0.0, u: 0.0 });
                e.w += delta;
                e.u += c * f64::from(delta);
            }
        }
    }

    /// The averaged weights `w − u/c`, keeping only non-zero ones.
    pub fn averaged(&self) -> Weights {
        let c = self.instances as f64;
        let mut out = Weights { classes: self.classes, rows: HashMap::default(), entries: Vec::new() };
        out.rows.reserve(self.rows.features());
        for (f, row) in self.rows.iter() {
            let start = out.entries.len() as u32;
            for e in row {
                let avg = (f64::from(e.w) - e.u / c) as f32;
                if avg != 0.0 {
                    out.entries.push((e.class, avg));
                }
            }
            let len = out.entries.len() as u32 - start;
            if len > 0 {
                out.rows.insert(f, (start, len));
            }
        }
        out
    }
}

/// The perceptron of Goldberg & Nivre (2012, Algorithm 3): when the prediction is not among
/// the correct classes, `+1` for the best-scored correct class and `−1` for the prediction.
impl Learner for Perceptron {
    fn score(&self, features: &[u64], scores: &mut [f32]) {
        Perceptron::score(self, features, scores)
    }

    fn learn(&mut self, d: &Decision) {
        let (predicted, cost) = d.predicted();
        if cost > d.min_cost() {
            self.update(d.features, d.best_correct(), predicted);
        }
        self.tick();
    }

    fn weights(&self) -> Weights {
        self.averaged()
    }
}

/// The index of the highest score among the classes `allowed` admits (lowest index on ties);
/// `None` if it admits none.
#[inline]
pub fn argmax(scores: &[f32], allowed: impl Fn(usize) -> bool) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &s) in scores.iter().enumerate() {
        if allowed(i) && best.is_none_or(|(_, b)| s > b) {
            best = Some((i, s));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_a_separable_problem_and_averages() {
        let mut p = Perceptron::new(3);
        let data = [(vec![1u64, 10], 0usize), (vec![2, 10], 1), (vec![3, 10], 2)];
        let mut scores = vec![0.0; 3];
        for _ in 0..5 {
            for (f, y) in &data {
                p.score(f, &mut scores);
                let pred = argmax(&scores, |_| true).unwrap();
                if pred != *y {
                    p.update(f, *y, pred);
                }
                p.tick();
            }
        }
        let w = p.averaged();
        for (f, y) in &data {
            w.score(f, &mut scores);
            assert_eq!(argmax(&scores, |_| true), Some(*y));
        }
        assert!(w.nonzero() > 0);
    }

    #[test]
    fn learns_a_separable_problem_through_the_learner_trait() {
        crate::learn::testing::learns_a_separable_problem(&mut Perceptron::new(3));
    }

    #[test]
    fn argmax_respects_mask() {
        assert_eq!(argmax(&[5.0, 1.0, 3.0], |i| i != 0), Some(2));
        assert_eq!(argmax(&[5.0], |_| false), None);
    }
}
