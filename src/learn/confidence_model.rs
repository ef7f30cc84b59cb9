//! The whole pipeline's arc confidence: a logistic regression of "this arc is right" on what
//! each stage knew when it made the arc (Platt 1999's scaling, widened from one score to a few
//! signals), fitted on dev parsed as a user's text is parsed.
//!
//! The parser's transition probability alone ([`super::confidence`]) cannot see what went
//! wrong before the parser: a word the tokenizer cut out of the wrong characters, a tag the
//! tagger guessed, a word or a whole language it never saw. [`ArcSignals`] holds those
//! signals for one arc; [`ConfidenceModel`] weighs them. Its output is a smooth function of
//! the parser's probability and the other signals, so arcs the model is unsure of get distinct
//! confidences (an isotonic map pools them into a few values: from raw text, 158 of the 1,282
//! arcs of half of en_ewt dev below 0.5 had exactly 0.250; with this model, at most 16 of
//! 1,600 share a value).
//!
//! This module knows numbers, not sentences: the caller ([`crate::parse::confidence`]) reads the
//! signals off the stages, and training ([`crate::train::pipeline_confidence`]) collects the
//! rows it is fitted on. What each signal adds, measured on held-out dev halves, is in
//! docs/commands.md ("The whole pipeline's confidence").

use serde::{Deserialize, Serialize};

/// What the pipeline knew of one arc, each stage's view of it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ArcSignals {
    /// The parser's probability of the transition that attached the word (at the model's
    /// temperature); 0 for a word no transition attached.
    pub parser: f32,
    /// The tagger's score margin for the dependent's tag, and for its head's (infinite for a
    /// word the tag dictionary fixes, or when the tags were given); the root's is infinite.
    pub dependent_tag: f32,
    pub head_tag: f32,
    /// Whether the training data lacked the dependent's form (counted into `unknown_share`;
    /// not weighed itself, see [`ArcSignals::features`]).
    pub dependent_unknown: bool,
    /// Share of the sentence's words whose form the training data lacked.
    pub unknown_share: f32,
    /// Words in the sentence.
    pub words: u32,
    /// Words between the dependent and its head (0 for the root).
    pub distance: u32,
    /// The parser's probability of the transition that attached the head (1 for the root).
    pub head_parser: f32,
    /// The mean of the parser's probabilities over the sentence's arcs.
    pub sentence_parser: f32,
    /// The arc's universal relation (an index into `base::label::UD_RELATIONS`), and the
    /// dependent's UPOS (into `corpus::UPOS_TAGS`), if they are UD's.
    pub relation: Option<u8>,
    pub upos: Option<u8>,
    /// The tokenizer's least score margin among the decisions that made the dependent's token,
    /// and among those where its sentence ends or does not (infinite for text that came
    /// tokenized, and for a sentence a paragraph ended).
    pub token_margin: f32,
    pub sentence_margin: f32,
}

/// Features per arc, the constant included.
pub const FEATURES: usize = DENSE + RELATIONS + UPOS;

/// Features before the one-hot relation and UPOS.
const DENSE: usize = 18;
/// UD's universal relations and UPOS tags (`base::label::UD_RELATIONS`, `corpus::UPOS_TAGS`;
/// this layer does not read them).
const RELATIONS: usize = 37;
const UPOS: usize = 17;

/// The share of unknown forms past which a sentence counts as unlike the training data.
const UNKNOWN_KNEE: f32 = 0.3;

/// Knots (in logits of the parser's probability) of the hinges that bend the parser's curve.
const KNOTS: [f32; 4] = [-1.0, 1.0, 3.0, 5.0];

/// How sure a score margin is, in 0..=1 (1 for the dictionary's and given tags, and for text
/// that came tokenized).
fn sureness(margin: f32) -> f32 {
    if margin.is_finite() {
        (margin.max(0.0).ln_1p() / 6.0).min(1.0)
    } else {
        1.0
    }
}

impl ArcSignals {
    /// The dense features: all but the one-hot relation and UPOS.
    fn dense(&self) -> [f32; DENSE] {
        let logit_of = |p: f32| {
            let p = p.clamp(1e-4, 1.0 - 1e-4);
            (p / (1.0 - p)).ln()
        };
        let logit = logit_of(self.parser);
        let hinge = |k: f32| (logit - k).max(0.0) / 4.0;
        // Unknown words matter past the share dev sentences commonly have: below it the
        // parser's probability already knows them (in-domain text with a name or two), above
        // it that probability means less and less (a hinge, its product with the logit, and
        // its square; fitted on dev's sentences with forms written backwards). Per-word
        // unknown flags and a plain share, tried first, ranked en_ewt dev's sentences half a
        // point worse for no better calibration.
        let beyond = (self.unknown_share.clamp(0.0, 1.0) - UNKNOWN_KNEE).max(0.0);
        [
            1.0,
            logit / 4.0,
            hinge(KNOTS[0]),
            hinge(KNOTS[1]),
            hinge(KNOTS[2]),
            hinge(KNOTS[3]),
            f32::from(u8::from(self.parser <= 0.0)),
            sureness(self.dependent_tag),
            sureness(self.head_tag),
            beyond,
            beyond * logit / 4.0,
            beyond * beyond,
            (self.words.max(1) as f32).ln() / 4.0,
            (self.distance as f32).ln_1p() / 4.0,
            sureness(self.token_margin),
            sureness(self.sentence_margin),
            logit_of(self.head_parser) / 4.0,
            logit_of(self.sentence_parser) / 4.0,
        ]
    }

    /// The positions of the one-hot features that are on: the relation's and the UPOS's.
    fn one_hot(&self) -> impl Iterator<Item = usize> {
        let relation = self.relation.map(usize::from).filter(|&r| r < RELATIONS).map(|r| DENSE + r);
        let upos = self.upos.map(usize::from).filter(|&u| u < UPOS).map(|u| DENSE + RELATIONS + u);
        relation.into_iter().chain(upos)
    }

    /// The feature vector the model weighs.
    pub fn features(&self) -> [f32; FEATURES] {
        let mut f = [0.0f32; FEATURES];
        f[..DENSE].copy_from_slice(&self.dense());
        for i in self.one_hot() {
            f[i] = 1.0;
        }
        f
    }
}

/// A fitted confidence model: one weight per feature of [`ArcSignals::features`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfidenceModel {
    weights: Vec<f32>,
}

/// The L2 penalty: per row, enough to keep weights of signals dev never varies (no word of
/// another script in en_ewt dev) at 0, too little to move the others; and at least a floor,
/// so that a small file (a few held-out sentences, every arc of some relation right) cannot
/// drive a weight to infinity.
const L2_PER_ROW: f64 = 1e-4;
const L2_MIN: f64 = 1.0;

/// Newton iterations: the log-loss is convex and smooth, so a few reach the optimum.
const NEWTON_STEPS: usize = 25;

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

impl ConfidenceModel {
    /// Fits the model by Newton's method on the L2-penalised log-loss of `rows` (signals, arc
    /// right); `None` without rows or without both outcomes.
    pub fn fit(rows: &[(ArcSignals, bool)]) -> Option<ConfidenceModel> {
        let right = rows.iter().filter(|r| r.1).count();
        if right == 0 || right == rows.len() {
            return None;
        }
        let xs: Vec<[f64; FEATURES]> = rows.iter().map(|(s, _)| s.features().map(f64::from)).collect();
        let lambda = (L2_PER_ROW * rows.len() as f64).max(L2_MIN);
        let mut w = [0.0f64; FEATURES];
        // Start from the share right, so the first step is small.
        let base = right as f64 / rows.len() as f64;
        w[0] = (base / (1.0 - base)).ln();
        for _ in 0..NEWTON_STEPS {
            let mut grad = [0.0f64; FEATURES];
            let mut hess = [[0.0f64; FEATURES]; FEATURES];
            for (x, (_, y)) in xs.iter().zip(rows) {
                let z: f64 = x.iter().zip(&w).map(|(a, b)| a * b).sum();
                let p = sigmoid(z);
                let g = p - f64::from(u8::from(*y));
                let h = (p * (1.0 - p)).max(1e-12);
                for i in 0..FEATURES {
                    grad[i] += g * x[i];
                    for j in 0..=i {
                        hess[i][j] += h * x[i] * x[j];
                    }
                }
            }
            for i in 0..FEATURES {
                // The constant is not penalised: it carries the base rate.
                if i > 0 {
                    grad[i] += lambda * w[i];
                    hess[i][i] += lambda;
                }
                hess[i][i] += 1e-9;
            }
            // The upper triangle mirrors the lower one summed above.
            let lower = hess;
            for (i, row) in hess.iter_mut().enumerate() {
                for (j, h) in row.iter_mut().enumerate().skip(i + 1) {
                    *h = lower[j][i];
                }
            }
            let step = solve(hess, grad)?;
            let size: f64 = step.iter().map(|s| s.abs()).fold(0.0, f64::max);
            for (wi, si) in w.iter_mut().zip(step) {
                *wi -= si;
            }
            if size < 1e-7 {
                break;
            }
        }
        Some(ConfidenceModel { weights: w.iter().map(|&x| x as f32).collect() })
    }

    /// The probability that an arc with these signals is right.
    pub fn apply(&self, signals: &ArcSignals) -> f32 {
        // The one-hot features add their weight: no need to multiply out the zeros.
        let dense: f32 = signals.dense().iter().zip(&self.weights).map(|(x, w)| x * w).sum();
        let z = dense + signals.one_hot().filter_map(|i| self.weights.get(i)).sum::<f32>();
        1.0 / (1.0 + (-z).exp())
    }

    /// The weights, in the order of [`ArcSignals::features`] (for `inspect` and the docs).
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }
}

/// Solves `a x = b` for a symmetric positive definite `a` by Cholesky decomposition; `None` if
/// it is not positive definite.
fn solve(mut a: [[f64; FEATURES]; FEATURES], b: [f64; FEATURES]) -> Option<[f64; FEATURES]> {
    let n = FEATURES;
    for j in 0..n {
        let d = a[j][j] - (0..j).map(|k| a[j][k] * a[j][k]).sum::<f64>();
        if d <= 0.0 || !d.is_finite() {
            return None;
        }
        a[j][j] = d.sqrt();
        for i in j + 1..n {
            a[i][j] = (a[i][j] - (0..j).map(|k| a[i][k] * a[j][k]).sum::<f64>()) / a[j][j];
        }
    }
    let mut y = [0.0; FEATURES];
    for i in 0..n {
        y[i] = (b[i] - (0..i).map(|k| a[i][k] * y[k]).sum::<f64>()) / a[i][i];
    }
    let mut x = [0.0; FEATURES];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| a[k][i] * x[k]).sum::<f64>()) / a[i][i];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn signals(parser: f32, unknown_share: f32) -> ArcSignals {
        ArcSignals {
            parser,
            dependent_tag: f32::INFINITY,
            head_tag: f32::INFINITY,
            unknown_share,
            words: 10,
            distance: 1,
            token_margin: f32::INFINITY,
            sentence_margin: f32::INFINITY,
            ..ArcSignals::default()
        }
    }

    /// How often an arc is right in the tests' world: more often the surer the parser, less
    /// often the more words are unknown (a model of the family fitted).
    fn truth(p: f32, share: f32) -> f32 {
        let logit = (p / (1.0 - p)).ln();
        1.0 / (1.0 + (-(1.5 * logit - 2.0 * share + 0.5)).exp())
    }

    #[test]
    fn the_fit_recovers_how_often_arcs_are_right_in_each_condition() {
        // Arcs drawn right as often as `truth` says, half of them with half their words
        // unknown: the fitted model must say how often within sampling error.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut rows = Vec::new();
        for _ in 0..40_000 {
            let p: f32 = rng.gen_range(0.3..0.99);
            let share = if rng.gen_bool(0.5) { 0.0 } else { 0.5 };
            rows.push((signals(p, share), rng.gen_bool(f64::from(truth(p, share)))));
        }
        let model = ConfidenceModel::fit(&rows).expect("both outcomes");
        for p in [0.4f32, 0.7, 0.95] {
            for share in [0.0, 0.5] {
                let (fitted, expected) = (model.apply(&signals(p, share)), truth(p, share));
                assert!((fitted - expected).abs() < 0.03, "p {p}, unknown {share}: {fitted} for {expected}");
            }
        }
    }

    #[test]
    fn unsure_arcs_get_distinct_ordered_confidences() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let rows: Vec<_> = (0..5_000)
            .map(|_| {
                let p: f32 = rng.gen_range(0.0..1.0);
                (signals(p, 0.0), rng.gen_bool(f64::from(p * p)))
            })
            .collect();
        let model = ConfidenceModel::fit(&rows).expect("both outcomes");
        let mut last = 0.0;
        for i in 1..=200 {
            let c = model.apply(&signals(i as f32 / 1000.0, 0.0));
            assert!(c > last, "confidence {c} at raw {} not above {last}", i as f32 / 1000.0);
            last = c;
        }
    }

    #[test]
    fn applying_adds_the_one_hot_weights_as_the_full_feature_vector_would() {
        let weights: Vec<f32> = (0..FEATURES).map(|i| ((i * 37) % 11) as f32 * 0.1 - 0.5).collect();
        let model = ConfidenceModel { weights: weights.clone() };
        for (relation, upos) in [(None, None), (Some(3), Some(16)), (Some(36), None), (Some(200), Some(5))] {
            let s = ArcSignals { relation, upos, head_parser: 0.7, sentence_parser: 0.8, ..signals(0.6, 0.4) };
            let z: f32 = s.features().iter().zip(&weights).map(|(x, w)| x * w).sum();
            assert!((model.apply(&s) - 1.0 / (1.0 + (-z).exp())).abs() < 1e-6, "{relation:?} {upos:?}");
        }
    }

    #[test]
    fn nothing_to_learn_from_gives_no_model() {
        assert!(ConfidenceModel::fit(&[]).is_none());
        assert!(ConfidenceModel::fit(&[(signals(0.9, 0.0), true), (signals(0.5, 0.0), true)]).is_none());
    }

    #[test]
    fn cholesky_solves_a_known_system() {
        let mut a = [[0.0; FEATURES]; FEATURES];
        let mut b = [0.0; FEATURES];
        for i in 0..FEATURES {
            a[i][i] = 2.0 + i as f64;
            if i > 0 {
                a[i][i - 1] = 0.5;
                a[i - 1][i] = 0.5;
            }
        }
        let x: [f64; FEATURES] = std::array::from_fn(|i| i as f64 - 3.0);
        for i in 0..FEATURES {
            b[i] = (0..FEATURES).map(|j| a[i][j] * x[j]).sum();
        }
        let solved = solve(a, b).expect("positive definite");
        for i in 0..FEATURES {
            assert!((solved[i] - x[i]).abs() < 1e-9);
        }
    }
}
