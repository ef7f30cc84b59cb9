//! A sentence-confidence threshold for a precision the user asks for (`--min-precision P`):
//! the lowest threshold whose accepted words are right at `P` or better, with probability at
//! least `1 - RISK` over the calibration text the model carries.
//!
//! **The bound.** On calibration text (sentences with their confidence, words and words right,
//! [`SentenceRow`]), the words of the sentences at or above a threshold `t` are `n` words of
//! which `k` are right. The one-sided Clopper–Pearson (1934) bound says the precision at `t` is
//! at least `P` when `P(X ≥ k) ≤ α` for `X ~ Binomial(n, P)`, that is when the regularized
//! incomplete beta function `I_P(k, n − k + 1)` is at most `α` ([`binomial_tail`]).
//!
//! **Many thresholds, one promise.** Testing every candidate and keeping the lowest that passes
//! would pick the luckiest. The candidates are a grid fixed in advance (`0.00, 0.01, …, 0.99`,
//! [`GRID`]), tested in a fixed sequence (Learn then Test, Angelopoulos, Bates, Candès, Jordan
//! and Lei 2021): from a start, down the grid to looser thresholds, each at level `RISK`, until
//! the first that fails; the last that passed is chosen, and the claim it makes fails with
//! probability at most `RISK`. The sequence's start is chosen on half of the sentences (the
//! even ones: the threshold whose bound is highest there), and the tests are made on the other
//! half, so that the start is independent of what is tested. Every grid point tested on all
//! sentences at `RISK / GRID` (Bonferroni) instead kept 41.3% of en_atis dev's words at
//! P = 0.95 where this keeps 50.0% (el_gdt at 0.9: 24.4% both), though this one also divides
//! by the design effect below.
//!
//! **Words go together.** A sentence's words are right or wrong together more often than
//! independent words would be (a wrong head drags its dependents' labels, a tokenizer's slip its
//! neighbours): from raw text, the design effect (the precision's variance across sentences over
//! the binomial's) is 1.8–2.0 on en_atis dev and 2.4–3.6 on el_gdt dev at the thresholds that
//! matter. Counted as independent, the words overstate what the calibration text shows, and the
//! bound fails more often than it says (in simulation, 17% of the draws for a promised 10%,
//! `the_precision_holds_with_the_stated_probability`). So the counts are divided by the design
//! effect first (Korn & Graubard 1998's effective sample size, `Tally::effective`).
//!
//! **What it assumes.** The user's text is like the calibration text: how often the bound held
//! over random halves of held-out text, and on text of another domain, is measured in
//! docs/commands.md ("A precision, not a threshold").
//!
//! This module knows numbers, not models: the rows are collected by
//! [`crate::train::pipeline_confidence`] and stored in the model file, and the threshold is
//! resolved at the edge ([`crate::parse::precision`]).

use serde::{Deserialize, Serialize};

/// The bound fails (the accepted words are right less often than asked) with at most this
/// probability.
pub const RISK: f64 = 0.1;
/// Thresholds tried: `j / GRID` for `j` in `0..GRID`.
pub const GRID: usize = 100;

/// One sentence of calibration text, as the model parsed it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SentenceRow {
    /// The sentence's confidence (its mean arc confidence, as `parse` writes it).
    pub confidence: f64,
    /// Its words, and those whose head and label were right.
    pub words: u32,
    pub right: u32,
}

/// The threshold chosen for a precision, with what it gave on the calibration text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    /// The precision asked for.
    pub target: f64,
    /// Sentences of at least this confidence are accepted.
    pub threshold: f64,
    /// Share of the calibration text's words accepted at `threshold`.
    pub kept: f64,
    /// Share of those that were right.
    pub precision: f64,
    /// The Clopper–Pearson lower bound at level `RISK` on the precision of the half the
    /// threshold was tested on.
    pub bound: f64,
}

/// The words of the sentences at or above a threshold, with the sums their spread across
/// sentences is computed from.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    sentences: u64,
    words: u64,
    right: u64,
    /// Sums over the sentences of `words²`, `right²` and `words · right`.
    words2: f64,
    right2: f64,
    cross: f64,
}

impl Tally {
    fn of<'r>(rows: impl IntoIterator<Item = &'r SentenceRow>, threshold: f64) -> Tally {
        let mut t = Tally::default();
        for r in rows.into_iter().filter(|r| r.confidence >= threshold) {
            let (w, k) = (f64::from(r.words), f64::from(r.right));
            t.sentences += 1;
            t.words += u64::from(r.words);
            t.right += u64::from(r.right);
            t.words2 += w * w;
            t.right2 += k * k;
            t.cross += w * k;
        }
        t
    }

    fn precision(&self) -> f64 {
        self.right as f64 / self.words.max(1) as f64
    }

    /// Words and words right as so many independent words: divided by the design effect, the
    /// ratio of the precision's variance across sentences to what independent words would give
    /// (Korn & Graubard 1998's effective sample size; at least 1, and 1 where every word or
    /// none is right).
    fn effective(&self) -> (f64, f64) {
        let (n, k) = (self.words as f64, self.right as f64);
        let p = k / n.max(1.0);
        if self.sentences < 2 || p <= 0.0 || p >= 1.0 {
            return (n, k);
        }
        let m = self.sentences as f64;
        let mean_words = n / m;
        // The ratio estimator's variance: Σ (right − p words)² / (m (m − 1)) / mean_words².
        let spread = (self.right2 - 2.0 * p * self.cross + p * p * self.words2).max(0.0);
        let variance = spread / (m * (m - 1.0)) / (mean_words * mean_words);
        let design = (variance / (p * (1.0 - p) / n)).max(1.0);
        (n / design, k / design)
    }

    /// How likely this many right words are, or more, if the precision were `target`.
    fn tail(&self, target: f64) -> f64 {
        let (n, k) = self.effective();
        if self.right == 0 {
            1.0
        } else {
            binomial_tail(n, k, target)
        }
    }

    fn bound(&self, alpha: f64) -> f64 {
        let (n, k) = self.effective();
        lower_bound(n, k, alpha)
    }
}

/// The grid's thresholds, strictest first.
fn grid() -> impl Iterator<Item = f64> {
    (0..GRID).rev().map(|j| j as f64 / GRID as f64)
}

/// Why no threshold was chosen: the start of the sequence failed its test, with its bound on
/// the testing half (`None`: the calibration text has no word).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shortfall {
    pub start: Option<(f64, f64)>,
}

/// The lowest threshold of the fixed sequence whose accepted words are right at `target` or
/// better with probability `1 - RISK` (module doc), or where the sequence's start fell short
/// (too little calibration text, or a precision the model never gives).
pub fn choose(rows: &[SentenceRow], target: f64) -> Result<Choice, Shortfall> {
    let (start_half, test_half) = halves(rows);
    let tested = |t: f64| Tally::of(test_half.iter().copied(), t);
    let start = grid()
        .filter_map(|t| {
            let tally = Tally::of(start_half.iter().copied(), t);
            (tally.words > 0).then(|| (t, tally.bound(RISK)))
        })
        // The strictest of equal bounds (`max_by` would keep the last).
        .fold(None, |best: Option<(f64, f64)>, (t, b)| match best {
            Some((_, top)) if top >= b => best,
            _ => Some((t, b)),
        });
    let Some((start, _)) = start else { return Err(Shortfall { start: None }) };
    let passed = grid().filter(|&t| t <= start).take_while(|&t| tested(t).tail(target) <= RISK).last();
    let Some(threshold) = passed else {
        return Err(Shortfall { start: Some((start, tested(start).bound(RISK))) });
    };
    let all = Tally::of(rows, threshold);
    let total: u64 = rows.iter().map(|r| u64::from(r.words)).sum();
    Ok(Choice {
        target,
        threshold,
        kept: all.words as f64 / total.max(1) as f64,
        precision: all.precision(),
        bound: tested(threshold).bound(RISK),
    })
}

/// What the sentences at or above a threshold give, measured (not chosen): for a threshold set
/// beforehand, on text it was not chosen on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Measured {
    /// Sentences and words at or above the threshold.
    pub sentences: u64,
    pub words: u64,
    /// Their share of all the words.
    pub kept: f64,
    /// The share of them that were right, and its Clopper–Pearson lower bound at level `RISK`
    /// (over the effective words, as [`choose`] counts them).
    pub precision: f64,
    pub bound: f64,
}

/// The precision of the words of `rows` at or above `threshold`.
pub fn measure(rows: &[SentenceRow], threshold: f64) -> Measured {
    let tally = Tally::of(rows, threshold);
    let total: u64 = rows.iter().map(|r| u64::from(r.words)).sum();
    Measured {
        sentences: tally.sentences,
        words: tally.words,
        kept: tally.words as f64 / total.max(1) as f64,
        precision: tally.precision(),
        bound: tally.bound(RISK),
    }
}

/// The sentences that choose the sequence's start (the even ones) and those it is tested on.
fn halves(rows: &[SentenceRow]) -> (Vec<&SentenceRow>, Vec<&SentenceRow>) {
    let (mut even, mut odd) = (Vec::new(), Vec::new());
    for (i, r) in rows.iter().enumerate() {
        if i % 2 == 0 {
            even.push(r)
        } else {
            odd.push(r)
        }
    }
    (even, odd)
}

/// `P(X ≥ k)` for `X ~ Binomial(n, p)`, `0 < k ≤ n`: the regularized incomplete beta function
/// `I_p(k, n − k + 1)`, which also gives it for counts that are not whole (effective ones).
pub fn binomial_tail(n: f64, k: f64, p: f64) -> f64 {
    debug_assert!(k > 0.0 && k <= n);
    incomplete_beta(k, n - k + 1.0, p)
}

/// The one-sided Clopper–Pearson lower bound on a proportion of `k` successes in `n` trials at
/// level `alpha`: the `p` at which `P(X ≥ k) = alpha` (0 for `k = 0`).
pub fn lower_bound(n: f64, k: f64, alpha: f64) -> f64 {
    if k <= 0.0 {
        return 0.0;
    }
    // The tail grows with p: bisect. 60 halvings reach f64's resolution on [0, 1].
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if binomial_tail(n, k, mid) < alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// `ln Γ(x)` for `x > 0` (Lanczos 1964, g = 7, nine coefficients: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + G + 0.5;
    let sum = C[1..].iter().enumerate().fold(C[0], |s, (i, c)| s + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularized incomplete beta function `I_x(a, b)`, by its continued fraction (modified
/// Lentz), on the side of `x` where it converges fast.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (a * x.ln() + b * (1.0 - x).ln() - (ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b))).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of `I_x(a, b)` (its terms as in Abramowitz & Stegun 26.5.8).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    let mut f = d;
    for m in 1..100_000 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        f *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = d * c;
        f *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// `P(X ≥ k)` summed term by term.
    fn tail_by_sum(n: u64, k: u64, p: f64) -> f64 {
        let mut ln_choose = 0.0f64; // ln C(n, 0)
        let mut sum = 0.0;
        for j in 0..=n {
            if j > 0 {
                ln_choose += ((n - j + 1) as f64).ln() - (j as f64).ln();
            }
            if j >= k {
                sum += (ln_choose + j as f64 * p.ln() + (n - j) as f64 * (1.0 - p).ln()).exp();
            }
        }
        sum
    }

    #[test]
    fn the_binomial_tail_is_the_sum_of_its_terms() {
        for n in 1..=60u64 {
            for k in 1..=n {
                for p in [0.01, 0.2, 0.5, 0.77, 0.9, 0.95, 0.99] {
                    let (fast, sum) = (binomial_tail(n as f64, k as f64, p), tail_by_sum(n, k, p));
                    assert!((fast - sum).abs() < 1e-11, "n {n} k {k} p {p}: {fast} against {sum}");
                }
            }
        }
        // Large counts, as a treebank's dev set gives.
        for (n, k, p) in [(6000, 5760, 0.95), (25_000, 24_000, 0.96), (3000, 2900, 0.95)] {
            let (fast, sum) = (binomial_tail(n as f64, k as f64, p), tail_by_sum(n, k, p));
            assert!((fast - sum).abs() < 1e-9 * sum.max(1e-12) + 1e-13, "n {n} k {k}: {fast} against {sum}");
        }
    }

    /// Between whole counts, the tail is the beta distribution's: against the density
    /// integrated by Simpson's rule.
    #[test]
    fn the_tail_of_counts_that_are_not_whole_is_the_integrated_beta_density() {
        for (a, b) in [(2.5, 3.25), (40.7, 2.2), (7.1, 7.9), (150.5, 12.5)] {
            let ln_beta = ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b);
            let density = |t: f64| ((a - 1.0) * t.ln() + (b - 1.0) * (1.0 - t).ln() - ln_beta).exp();
            for x in [0.3, 0.6, 0.85, 0.95] {
                let steps = 200_000;
                let h = x / f64::from(steps);
                let integral: f64 = (0..=steps)
                    .map(|i| {
                        let w = if i == 0 || i == steps {
                            1.0
                        } else if i % 2 == 1 {
                            4.0
                        } else {
                            2.0
                        };
                        w * density(f64::from(i) * h)
                    })
                    .sum::<f64>()
                    * h
                    / 3.0;
                let fast = incomplete_beta(a, b, x);
                assert!((fast - integral).abs() < 1e-8, "a {a} b {b} x {x}: {fast} against {integral}");
            }
        }
    }

    #[test]
    fn the_lower_bound_is_where_the_tail_reaches_the_level() {
        for (n, k) in [(10, 10), (10, 7), (100, 95), (6000, 5800), (1, 1)] {
            let l = lower_bound(n as f64, k as f64, 0.05);
            assert!((tail_by_sum(n, k, l) - 0.05).abs() < 1e-9, "n {n} k {k}: {l}");
            assert!(l <= k as f64 / n as f64);
        }
        // All right in n trials: the bound is alpha^(1/n).
        assert!((lower_bound(20.0, 20.0, 0.1) - 0.1f64.powf(1.0 / 20.0)).abs() < 1e-12);
        assert_eq!(lower_bound(20.0, 0.0, 0.1), 0.0);
    }

    /// Sentences of up to 30 words, right word by word at their confidence (uniform on 0.3..1)
    /// moved up or down for the whole sentence by `cluster` of its distance to 0 or 1.
    fn random_rows(rng: &mut impl Rng, sentences: usize, cluster: f64) -> Vec<SentenceRow> {
        (0..sentences)
            .map(|_| {
                let confidence: f64 = rng.gen_range(0.3..1.0);
                // Up or down by the same amount, so that the words are right at the confidence
                // on average.
                let shift = cluster * confidence.min(1.0 - confidence);
                let p = if rng.gen_bool(0.5) { confidence + shift } else { confidence - shift };
                let words = rng.gen_range(1..30u32);
                let right = (0..words).filter(|_| rng.gen_bool(p)).count() as u32;
                SentenceRow { confidence, words, right }
            })
            .collect()
    }

    #[test]
    fn the_effective_words_are_all_of_them_when_words_are_independent_and_a_sentence_each_when_not() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let independent: Vec<SentenceRow> = (0..2000)
            .map(|_| {
                let right = (0..10).filter(|_| rng.gen_bool(0.9)).count() as u32;
                SentenceRow { confidence: 1.0, words: 10, right }
            })
            .collect();
        let (n, _) = Tally::of(&independent, 0.0).effective();
        assert!(n > 0.85 * 20_000.0, "{n}");
        // Every word of a sentence right or every word wrong: a sentence is one word's worth.
        let together: Vec<SentenceRow> = (0..2000)
            .map(|_| SentenceRow { confidence: 1.0, words: 10, right: if rng.gen_bool(0.9) { 10 } else { 0 } })
            .collect();
        let (n, k) = Tally::of(&together, 0.0).effective();
        assert!((n - 2000.0).abs() < 20.0 && (k / n - 0.9).abs() < 0.03, "{n} {k}");
    }

    /// The procedure of the module doc written out, with the effective counts or the words as
    /// they are.
    fn reference(rows: &[SentenceRow], target: f64, effective: bool) -> Option<f64> {
        let counts = |rows: &[SentenceRow], t: f64| {
            let tally = Tally::of(rows, t);
            if effective {
                tally.effective()
            } else {
                (tally.words as f64, tally.right as f64)
            }
        };
        let half = |parity: usize| -> Vec<SentenceRow> {
            rows.iter().enumerate().filter(|(i, _)| i % 2 == parity).map(|(_, r)| *r).collect()
        };
        let (even, odd) = (half(0), half(1));
        let thresholds: Vec<f64> = (0..GRID).rev().map(|j| j as f64 / GRID as f64).collect();
        let mut start: Option<(f64, f64)> = None;
        for &t in &thresholds {
            let (n, k) = counts(&even, t);
            if n > 0.0 && start.is_none_or(|(_, b)| lower_bound(n, k, RISK) > b) {
                start = Some((t, lower_bound(n, k, RISK)));
            }
        }
        let (start, _) = start?;
        let mut chosen = None;
        for &t in thresholds.iter().filter(|&&t| t <= start) {
            let (n, k) = counts(&odd, t);
            if k <= 0.0 || binomial_tail(n, k, target) > RISK {
                break;
            }
            chosen = Some(t);
        }
        chosen
    }

    #[test]
    fn a_measured_threshold_counts_the_words_at_or_above_it() {
        let row = |confidence, words, right| SentenceRow { confidence, words, right };
        let rows = [row(0.95, 10, 10), row(0.9, 10, 8), row(0.5, 20, 5)];
        let m = measure(&rows, 0.9);
        assert_eq!((m.sentences, m.words), (2, 20));
        assert!((m.kept - 0.5).abs() < 1e-12 && (m.precision - 0.9).abs() < 1e-12, "{m:?}");
        assert!(m.bound > 0.0 && m.bound < m.precision, "{m:?}");
        let none = measure(&rows, 0.99);
        assert_eq!((none.sentences, none.words, none.kept, none.bound), (0, 0, 0.0, 0.0));
    }

    #[test]
    fn the_choice_is_the_last_threshold_of_the_sequence_that_passes() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut chosen = 0;
        for trial in 0..20 {
            let rows = random_rows(&mut rng, 60 + trial * 10, 0.1);
            for target in [0.8, 0.9, 0.95] {
                let choice = choose(&rows, target);
                assert_eq!(
                    choice.ok().map(|c| c.threshold),
                    reference(&rows, target, true),
                    "trial {trial} target {target}"
                );
                if let Ok(c) = choice {
                    chosen += 1;
                    assert!(c.bound >= target, "{c:?}");
                    let all = Tally::of(&rows, c.threshold);
                    let total: u32 = rows.iter().map(|r| r.words).sum();
                    assert!((c.kept - all.words as f64 / f64::from(total)).abs() < 1e-12);
                    assert!((c.precision - all.precision()).abs() < 1e-12);
                }
            }
        }
        // Both outcomes were compared.
        assert!((10..60).contains(&chosen), "{chosen} of 60 chosen");
    }

    /// Calibration sets drawn from populations whose words are right at their sentence's
    /// confidence (so the words at or above t are right at (1 + t) / 2), each sentence moved
    /// up or down as a whole: the chosen threshold's precision must fall short of the target in
    /// at most `RISK` of the draws (11 and 14 of 300 here, words independent and not). The words
    /// counted as independent fall short in 21 and 51, the observed precision alone in 88 and
    /// 121.
    #[test]
    fn the_precision_holds_with_the_stated_probability() {
        let true_precision = |t: f64| (1.0 + t.max(0.3)) / 2.0;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let draws = 300;
        let mut short = |cluster: f64| {
            let (mut chosen, mut as_words, mut observed) = (0, 0, 0);
            for _ in 0..draws {
                let rows = random_rows(&mut rng, 300, cluster);
                let is_short = |t: Option<f64>| usize::from(t.is_some_and(|t| true_precision(t) < 0.9));
                chosen += is_short(choose(&rows, 0.9).ok().map(|c| c.threshold));
                as_words += is_short(reference(&rows, 0.9, false));
                let point = grid().collect::<Vec<_>>().into_iter().rev().find(|&t| {
                    let tally = Tally::of(&rows, t);
                    tally.words > 0 && tally.precision() >= 0.9
                });
                observed += is_short(point);
            }
            (chosen, as_words, observed)
        };
        let (independent, clustered) = (short(0.0), short(0.9));
        for (chosen, _, _) in [independent, clustered] {
            assert!(chosen as f64 <= RISK * draws as f64, "{independent:?} {clustered:?} of {draws} short");
        }
        assert!(clustered.1 > clustered.0 && clustered.1 as f64 > RISK * draws as f64, "{clustered:?}");
        assert!(independent.2 as f64 > 2.0 * RISK * draws as f64, "{independent:?}");
    }

    #[test]
    fn no_threshold_reaches_a_precision_the_text_never_shows() {
        let rows = vec![SentenceRow { confidence: 0.99, words: 100, right: 90 }; 10];
        assert!(matches!(choose(&rows, 0.95), Err(Shortfall { start: Some((_, b)) }) if b < 0.95));
        assert_eq!(choose(&[], 0.5), Err(Shortfall { start: None }));
    }
}
