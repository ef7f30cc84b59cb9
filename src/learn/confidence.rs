//! Probabilities and their calibration: the softmax over legal transitions with a temperature,
//! fitting that temperature on dev data, and reliability tables with expected calibration error
//! (Goldberg 2013, Table 4: ten bins of predicted probability, share correct per bin).
//!
//! For a perceptron the scores are not probabilities; `p(t) ∝ exp(score(t) / T)` over the legal
//! transitions becomes one once `T` is fitted to maximise the likelihood that the prediction
//! falls in the dynamic oracle's zero-cost set, the multi-label log-loss of Goldberg (2013,
//! Section 3) evaluated on dev. This module computes; it neither parses nor writes files.

use serde::Serialize;
use std::ops::Range;

/// Probability of class `best` under the softmax of `scores / temperature` restricted to the
/// classes `allowed` admits; 0 if `best` is out of range. Classes more than 30 nats below the
/// best are skipped (their contribution is below 1e-13).
#[inline]
pub fn probability_of(scores: &[f32], best: usize, temperature: f32, allowed: impl Fn(usize) -> bool) -> f32 {
    probability_in(scores, best, temperature, (0..scores.len()).filter(|&i| allowed(i)).map(|i| i..i + 1))
}

/// [`probability_of`] with the allowed classes given as runs of positions in increasing order,
/// which is cheaper than asking about every class.
///
/// The exponentials are [`exp_lanes`]'s, summed in `LANES` (8) lanes with a select instead
/// of a branch, so that the loop vectorises: with libm's `expf` one at a time, confidences cost
/// 14% of a one-thread parse (`perf`, en_ewt dev ×8).
#[inline]
pub fn probability_in(scores: &[f32], best: usize, temperature: f32, runs: impl Iterator<Item = Range<usize>>) -> f32 {
    let Some(&top) = scores.get(best) else { return 0.0 };
    let inverse = 1.0 / temperature;
    let z: f32 = runs.map(|run| sum_exp(scores.get(run).unwrap_or_default(), top, inverse)).sum();
    1.0 / z.max(1.0)
}

/// `Σ e^((s − top)·inverse)` over `scores`, leaving out terms below `e^−30`; with AVX2 where
/// the CPU has it (the same arithmetic in each lane, so the same result).
#[inline]
fn sum_exp(scores: &[f32], top: f32, inverse: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { sum_exp_avx2(scores, top, inverse) };
    }
    sum_exp_lanes(scores, top, inverse)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sum_exp_avx2(scores: &[f32], top: f32, inverse: f32) -> f32 {
    sum_exp_lanes(scores, top, inverse)
}

#[inline(always)]
fn sum_exp_lanes(scores: &[f32], top: f32, inverse: f32) -> f32 {
    let term = |s: f32| {
        let x = (s - top) * inverse;
        let e = exp_lanes(x);
        if x > -30.0 {
            e
        } else {
            0.0
        }
    };
    let chunks = scores.chunks_exact(LANES);
    let mut z: f32 = chunks.remainder().iter().map(|&s| term(s)).sum();
    let mut lanes = [0.0f32; LANES];
    for chunk in chunks {
        for (acc, &s) in lanes.iter_mut().zip(chunk) {
            *acc += term(s);
        }
    }
    z += lanes.iter().sum::<f32>();
    z
}

/// Lanes of the vectorised sum of exponentials.
const LANES: usize = 8;

/// `e^x` without a branch or a call, so that loops over it vectorise: within 3·10⁻⁷ of
/// `f32::exp` relative for `|x| ≤ 87` (`x` is clamped to that range; softmax callers cut off
/// far above it). Cody–Waite range reduction `x = n·ln 2 + r` with `|r| ≤ ln 2 / 2` and
/// Cephes' degree-6 polynomial for `e^r` (Moshier, Cephes `expf.c`); `2^n` is built in the
/// exponent bits.
#[inline(always)]
pub fn exp_lanes(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding and subtracting 1.5·2^23 rounds to the nearest integer in float arithmetic.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 87.0);
    let n = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_1e-4f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    // n ∈ [−126, 126]: a normal power of two.
    e * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

/// One dev decision for temperature fitting: legal scores and which of them have zero cost.
#[derive(Debug, Clone, Default)]
pub struct Decision {
    pub scores: Vec<f32>,
    pub zero_cost: Vec<bool>,
}

/// Mean log-likelihood of the zero-cost sets under temperature `t`.
fn log_likelihood(decisions: &[Decision], t: f64) -> f64 {
    let mut total = 0.0;
    for d in decisions {
        let top = d.scores.iter().fold(f32::NEG_INFINITY, |m, &s| m.max(s)) as f64;
        let (mut all, mut zero) = (0.0f64, 0.0f64);
        for (&s, &z) in d.scores.iter().zip(&d.zero_cost) {
            let e = ((s as f64 - top) / t).exp();
            all += e;
            if z {
                zero += e;
            }
        }
        total += (zero.max(1e-300) / all).ln();
    }
    total / decisions.len().max(1) as f64
}

/// The temperature that maximises the likelihood of the zero-cost sets (golden-section search
/// over log T in [0.01, 100]); 1 without decisions.
pub fn fit_temperature(decisions: &[Decision]) -> f32 {
    if decisions.is_empty() {
        return 1.0;
    }
    let f = |x: f64| log_likelihood(decisions, x.exp());
    let (mut a, mut b) = (0.01f64.ln(), 100f64.ln());
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (b - g * (b - a), a + g * (b - a));
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..60 {
        if fc > fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    ((a + b) / 2.0).exp() as f32
}

/// One bin of a reliability table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Bin {
    pub lower: f64,
    pub upper: f64,
    pub count: u64,
    /// Mean predicted probability in the bin.
    pub mean_confidence: f64,
    /// Share (0–1) of correct items (or mean outcome) in the bin.
    pub accuracy: f64,
}

/// A reliability table: ten equal-width bins of predicted probability.
#[derive(Debug, Clone, Default)]
pub struct Reliability {
    count: [u64; 10],
    confidence: [f64; 10],
    outcome: [f64; 10],
    /// Per bin, the sum of p(1 − p): the variance of the bin's count of right items were the
    /// probabilities exact ([`Reliability::ece_floor`]).
    variance: [f64; 10],
}

impl Reliability {
    /// Adds an item predicted with probability `p` whose outcome is `correct` (1 right, 0 wrong,
    /// or a share in between, such as a sentence's LAS).
    pub fn add(&mut self, p: f64, correct: f64) {
        let bin = ((p * 10.0).floor() as usize).min(9);
        self.count[bin] += 1;
        self.confidence[bin] += p;
        self.outcome[bin] += correct;
        self.variance[bin] += p * (1.0 - p);
    }

    /// The ten bins.
    pub fn bins(&self) -> Vec<Bin> {
        (0..10)
            .map(|i| {
                let n = self.count[i].max(1) as f64;
                Bin {
                    lower: i as f64 / 10.0,
                    upper: (i + 1) as f64 / 10.0,
                    count: self.count[i],
                    mean_confidence: self.confidence[i] / n,
                    accuracy: self.outcome[i] / n,
                }
            })
            .collect()
    }

    /// Items added.
    pub fn total(&self) -> u64 {
        self.count.iter().sum()
    }

    /// Expected calibration error: the count-weighted mean of |accuracy − confidence|.
    pub fn ece(&self) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        (0..10).map(|i| (self.outcome[i] - self.confidence[i]).abs()).sum::<f64>() / total as f64
    }

    /// The ECE that exact probabilities would be expected to show on these items: each bin's
    /// count of right items then differs from its sum of probabilities by chance alone, with
    /// variance Σ p(1 − p), and the expected absolute value of that difference is
    /// √(2·variance/π) (normal approximation). An ECE near this floor is as good as the file
    /// can tell: half of en_ewt dev from raw text (12,600 arcs) gives 0.007, half of el_gdt
    /// dev (4,800) 0.011, so a goal below that cannot be checked on so few arcs.
    pub fn ece_floor(&self) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        let expected_abs = |v: f64| (2.0 * v / std::f64::consts::PI).sqrt();
        self.variance.iter().map(|&v| expected_abs(v)).sum::<f64>() / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_branch_free_exponential_matches_libm() {
        let mut worst = 0.0f64;
        for i in -870_000..=870_000 {
            let x = i as f32 * 1e-4;
            let (ours, libm) = (f64::from(exp_lanes(x)), f64::from(x.exp()));
            worst = worst.max(((ours - libm) / libm).abs());
        }
        assert!(worst < 3e-7, "worst relative error {worst:e}");
        assert_eq!(exp_lanes(0.0), 1.0);
        assert!(exp_lanes(-1000.0) > 0.0 && exp_lanes(-1000.0) < 1e-37);
    }

    #[test]
    fn probabilities_over_runs_match_the_plain_softmax() {
        let scores: Vec<f32> = (0..37).map(|i| ((i * 7919) % 23) as f32 * 0.37 - 4.0).collect();
        let runs = [0..1, 2..20, 25..37];
        for temperature in [0.3f32, 1.0, 2.5] {
            for best in [0, 5, 30] {
                let allowed = |i: usize| runs.iter().any(|r| r.contains(&i));
                let top = scores[best];
                let z: f64 = (0..scores.len())
                    .filter(|&i| allowed(i))
                    .map(|i| f64::from((scores[i] - top) / temperature).exp())
                    .sum();
                let p = probability_in(&scores, best, temperature, runs.iter().cloned());
                assert!(
                    (f64::from(p) - 1.0 / z.max(1.0)).abs() < 1e-6,
                    "T {temperature} best {best}: {p} vs {}",
                    1.0 / z
                );
            }
        }
    }

    #[test]
    fn probabilities_sum_to_one_over_allowed_classes() {
        let scores = [2.0f32, 1.0, 0.5, 10.0];
        let allowed = |i: usize| i != 3;
        let p0 = probability_of(&scores, 0, 1.0, allowed);
        let z: f32 = [2.0f32, 1.0, 0.5].iter().map(|s| s.exp()).sum();
        assert!((p0 - 2.0f32.exp() / z).abs() < 1e-6);
        // A high temperature flattens, a low one sharpens.
        assert!(probability_of(&scores, 0, 10.0, allowed) < p0);
        assert!(probability_of(&scores, 0, 0.1, allowed) > p0);
    }

    #[test]
    fn fitted_temperature_recovers_the_generating_one() {
        // Scores whose softmax at T = 4 gives the empirical zero-cost frequencies.
        let mut decisions = Vec::new();
        let scores = vec![4.0f32, 0.0, -4.0];
        let t = 4.0f64;
        let z: f64 = scores.iter().map(|&s| (s as f64 / t).exp()).sum();
        let probs: Vec<f64> = scores.iter().map(|&s| (s as f64 / t).exp() / z).collect();
        for (class, &p) in probs.iter().enumerate() {
            for _ in 0..(p * 10_000.0).round() as usize {
                let mut zero = vec![false; 3];
                zero[class] = true;
                decisions.push(Decision { scores: scores.clone(), zero_cost: zero });
            }
        }
        let fitted = fit_temperature(&decisions);
        assert!((fitted - 4.0).abs() < 0.05, "{fitted}");
    }

    #[test]
    fn ece_is_zero_when_calibrated_and_large_when_not() {
        let mut r = Reliability::default();
        for i in 0..100 {
            r.add(0.75, if i % 4 == 0 { 0.0 } else { 1.0 });
        }
        assert!(r.ece() < 1e-9);
        let mut r = Reliability::default();
        for _ in 0..100 {
            r.add(0.95, 0.0);
        }
        assert!((r.ece() - 0.95).abs() < 1e-9);
        assert_eq!(r.bins()[9].count, 100);
    }

    #[test]
    fn the_ece_floor_is_what_exact_probabilities_show_by_chance() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        // 5,000 items spread as arcs are (most sure), outcomes drawn from their probabilities.
        let ps: Vec<f64> = (0..5000).map(|_| 1.0 - rng.gen::<f64>().powi(4)).collect();
        let draws = 200;
        let mut mean = 0.0;
        let mut floor = 0.0;
        for _ in 0..draws {
            let mut r = Reliability::default();
            for &p in &ps {
                r.add(p, f64::from(u8::from(rng.gen::<f64>() < p)));
            }
            mean += r.ece() / draws as f64;
            floor = r.ece_floor();
        }
        assert!(floor > 0.003, "{floor}");
        assert!((mean - floor).abs() < 0.1 * floor, "mean ECE {mean} over {draws} draws, floor {floor}");
        // Probabilities off by 5 points show well above it.
        let mut r = Reliability::default();
        for &p in &ps {
            r.add((p + 0.05).min(1.0), f64::from(u8::from(rng.gen::<f64>() < p)));
        }
        assert!(r.ece() > 3.0 * r.ece_floor(), "{} {}", r.ece(), r.ece_floor());
    }
}

/// A monotone map from raw to calibrated probability, fitted by isotonic regression (pool
/// adjacent violators) of outcomes on predictions and applied by linear interpolation between
/// the fitted blocks' centres.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Isotonic {
    /// Block centres (increasing).
    xs: Vec<f32>,
    /// Calibrated values at the centres (non-decreasing).
    ys: Vec<f32>,
}

/// At most this many blocks are kept (neighbours are merged beyond it).
const MAX_KNOTS: usize = 200;

impl Isotonic {
    /// Fits the map to `(prediction, outcome)` pairs (outcomes in 0..=1); `None` without data.
    pub fn fit(pairs: &mut [(f32, f32)]) -> Option<Isotonic> {
        if pairs.is_empty() {
            return None;
        }
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Blocks of (sum x, sum y, count), merged while they violate monotonicity.
        let mut blocks: Vec<(f64, f64, f64)> = Vec::new();
        for group in pairs.chunk_by(|a, b| a.0 == b.0) {
            // Equal predictions form one block: pooling must not depend on their order.
            let n = group.len() as f64;
            let y: f64 = group.iter().map(|p| f64::from(p.1)).sum();
            blocks.push((f64::from(group[0].0) * n, y, n));
            while blocks.len() > 1 {
                let (b, a) = (blocks[blocks.len() - 1], blocks[blocks.len() - 2]);
                if a.1 / a.2 < b.1 / b.2 {
                    break;
                }
                blocks.pop();
                let last = blocks.len() - 1;
                blocks[last] = (a.0 + b.0, a.1 + b.1, a.2 + b.2);
            }
        }
        // Merge neighbours (monotonicity is kept) until few enough knots remain.
        while blocks.len() > MAX_KNOTS {
            let merged: Vec<_> = blocks
                .chunks(2)
                .map(|c| c.iter().fold((0.0, 0.0, 0.0), |s, b| (s.0 + b.0, s.1 + b.1, s.2 + b.2)))
                .collect();
            blocks = merged;
        }
        let xs = blocks.iter().map(|b| (b.0 / b.2) as f32).collect();
        let ys = blocks.iter().map(|b| (b.1 / b.2) as f32).collect();
        Some(Isotonic { xs, ys })
    }

    /// The calibrated probability for a raw one.
    pub fn apply(&self, x: f32) -> f32 {
        let (xs, ys) = (&self.xs, &self.ys);
        let Some(&last) = ys.last() else { return x };
        let i = xs.partition_point(|&k| k <= x);
        if i == 0 {
            return ys[0];
        }
        if i == xs.len() {
            return last;
        }
        let (x0, x1, y0, y1) = (xs[i - 1], xs[i], ys[i - 1], ys[i]);
        if x1 <= x0 {
            return y1;
        }
        y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    }
}

#[cfg(test)]
mod isotonic_tests {
    use super::*;

    #[test]
    fn isotonic_map_is_monotone_and_fixes_overconfidence() {
        // Predictions of 0.95 that are right 80% of the time, 0.5 right 50% of the time.
        let mut pairs = Vec::new();
        for i in 0..1000 {
            pairs.push((0.95f32, if i % 5 == 0 { 0.0 } else { 1.0 }));
            pairs.push((0.5f32, if i % 2 == 0 { 0.0 } else { 1.0 }));
        }
        let iso = Isotonic::fit(&mut pairs).unwrap();
        assert!((iso.apply(0.95) - 0.8).abs() < 1e-3);
        assert!((iso.apply(0.5) - 0.5).abs() < 1e-3);
        let mut prev = 0.0;
        for k in 0..=100 {
            let y = iso.apply(k as f32 / 100.0);
            assert!(y >= prev - 1e-6);
            prev = y;
        }
    }
}
