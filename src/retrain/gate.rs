//! The gate: whether a candidate replaces the serving model, decided on differences beyond
//! noise. Both models parse the same sentences (the held-out annotations and
//! `retrain.heldout`); a paired bootstrap over sentences ([`bootstrap`]: sentences resampled
//! with replacement, [`Settings::bootstrap_samples`](super::Settings::bootstrap_samples)
//! times, from a fixed seed, so the same scores always give the same decision) gives the 90%
//! interval of the candidate's LAS minus the serving model's; its ends are one-sided 95% bounds.
//!
//! The rule ([`decide`]), for adaptation to the user's own text:
//! - the user's text as a whole judges once the held-out annotations hold at least
//!   `retrain.gate_min_annotation_arcs` annotated arcs: the held-out annotated sentences'
//!   corrected arcs and the arcs nobody corrected that the serving model is sure of, scored
//!   against its parse ([`super::whole_text`]). The candidate must be better there beyond noise
//!   (the interval's lower end above 0). With fewer, its point difference must not be negative
//!   (a few dozen arcs cannot show an improvement beyond noise, and must not block every cycle
//!   of a new user). The corrected arcs alone are the hardest ones, the lowest-confidence arcs
//!   of their sentences: a candidate that fixed them and broke what the serving model was sure
//!   of gained there all the same (issue 52, item 3), so they are reported, not decided on; the
//!   arcs nobody corrected and the serving model was not sure of cannot be scored at all, and
//!   the reasons say how many of them the candidate changes;
//! - the treebank (`retrain.heldout`) bounds what the user's text may cost elsewhere: the
//!   candidate is refused when it loses more than the allowed loss beyond noise (the interval's
//!   upper end below minus the allowed loss). The allowed loss is `retrain.max_las_drop`
//!   (default 0.3) when the candidate gains on the user's text as a whole beyond noise (the
//!   interval's lower end above 0), and 0 when it does not or none are held out: only a gain
//!   on the user's own text buys a loss on the
//!   treebank's (a retrained model that learned nothing new, with another seed, lost 0.38 on
//!   en_ewt's four genres by itself). A perceptron's seed alone moves en_ewt dev LAS
//!   by about 0.25 (issue 30), and the 90% interval on its 2,001 sentences was ±0.27 between the
//!   example model and candidates retrained with 2,000 corrected en_atis arcs (measured:
//!   docs/annotation.md), so a point rule refused adapted candidates for a noise-sized loss
//!   (issue 30: 29.1 → 44.6 LAS on the held-out corrected arcs, −0.27 on en_ewt dev, rejected).
//!
//! The trade-off is explicit in two keys: `max_las_drop` is what the user accepts to lose on
//! the treebank's text for their own (0: no loss beyond noise), and `gate_min_annotation_arcs`
//! is when the user's own text is trusted to judge. The default of 0.3 was measured (issue
//! 42, docs/annotation.md): on en_ewt's reviews as the user's text, 2,000 corrected arcs gain
//! 0.5 to 0.8 LAS there (a third to half of the distance to a model trained on all of it) and
//! cost the four other genres' dev 0.1 to 0.5 with gold tags, as much as another training seed
//! alone; with 0, the gate would have refused 6 of 12 such cycles (intervals such as [−0.81,
//! −0.08]), as it refused the issue's own domain (−0.66). This module decides from scores; it must
//! not parse, train or touch the models directory.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::train::eval::Counts;

/// The seed of every bootstrap: a decision depends on the scores only.
const SEED: u64 = 0x5eed_6a7e;

/// Share of the bootstrap's differences below the interval's lower end (and above its upper).
const TAIL: f64 = 0.05;

/// A paired bootstrap of two models' LAS on the same sentences.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Bootstrap {
    /// Sentences with a scored word, and scored words.
    pub sentences: usize,
    pub words: u64,
    pub serving_las: f64,
    pub candidate_las: f64,
    /// Candidate minus serving model, in LAS points.
    pub delta: f64,
    /// The 90% interval of the difference (5th and 95th percentiles of the resamples).
    pub low: f64,
    pub high: f64,
    pub samples: usize,
}

/// Bootstraps the LAS difference of `candidate` over `serving`, per sentence counts of the same
/// sentences in the same order, with `samples` resamples (at least 1).
pub fn bootstrap(serving: &[Counts], candidate: &[Counts], samples: usize) -> Bootstrap {
    debug_assert_eq!(serving.len(), candidate.len());
    // Per sentence: scored words and the difference in right labelled attachments.
    let pairs: Vec<(u64, i64)> = serving
        .iter()
        .zip(candidate)
        .filter(|(s, _)| s.words > 0)
        .map(|(s, c)| (s.words, c.label_correct as i64 - s.label_correct as i64))
        .collect();
    let words: u64 = pairs.iter().map(|p| p.0).sum();
    let las = |counts: &[Counts]| {
        let right: u64 = counts.iter().map(|c| c.label_correct).sum();
        if words == 0 {
            0.0
        } else {
            100.0 * right as f64 / words as f64
        }
    };
    let (serving_las, candidate_las) = (las(serving), las(candidate));
    let mut out = Bootstrap {
        sentences: pairs.len(),
        words,
        serving_las,
        candidate_las,
        delta: candidate_las - serving_las,
        samples: samples.max(1),
        ..Bootstrap::default()
    };
    if pairs.is_empty() {
        return out;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut deltas: Vec<f64> = (0..out.samples)
        .map(|_| {
            let (mut w, mut d) = (0u64, 0i64);
            for _ in 0..pairs.len() {
                let (pw, pd) = pairs[rng.gen_range(0..pairs.len())];
                w += pw;
                d += pd;
            }
            100.0 * d as f64 / w.max(1) as f64
        })
        .collect();
    deltas.sort_by(f64::total_cmp);
    let at = |q: f64| deltas[((deltas.len() - 1) as f64 * q).round() as usize];
    (out.low, out.high) = (at(TAIL), at(1.0 - TAIL));
    out
}

/// What the gate saw: the bootstraps it decided on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Figures {
    /// On `retrain.heldout`.
    pub heldout: Bootstrap,
    /// On the held-out annotations' annotated arcs (none without any): reported; it says
    /// whether the annotations are numerous enough to judge.
    pub annotations: Option<Bootstrap>,
    /// Whether the annotations were numerous enough to be the main judge.
    pub annotations_judge: bool,
    /// The user's text as a whole, what the gate decides on: the held-out annotated sentences'
    /// annotated words and those the serving model is sure of, against its parse
    /// (`super::whole_text`; none without held-out annotations).
    #[serde(default)]
    pub annotations_whole: Option<Bootstrap>,
    /// Of the arcs there that nobody corrected and the serving model was not sure of (their
    /// gold unknown, so scored nowhere), how many the candidate changes.
    #[serde(default)]
    pub uncertain: Option<Uncertain>,
}

/// The arcs of the held-out annotated sentences that no figure can score: nobody corrected
/// them and the serving model was not sure of them.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Uncertain {
    pub arcs: u64,
    /// Those whose head or label the candidate's parse changes.
    pub changed: u64,
}

/// The user's text, as the gate measured it: the annotated arcs, and the whole text around
/// them (see [`Figures::annotations_whole`]).
#[derive(Debug, Clone)]
pub struct UserText {
    pub asked: Bootstrap,
    pub whole: Bootstrap,
    pub uncertain: Uncertain,
}

/// The gate's settings ([`super::Settings`]'s keys of the same names).
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub max_las_drop: f64,
    pub min_annotation_arcs: usize,
}

fn interval(b: &Bootstrap) -> String {
    format!("difference {:+.2}, 90% interval [{:+.2}, {:+.2}]", b.delta, b.low, b.high)
}

/// Whether to promote, with the reasons in words (see the module doc for the rule).
pub fn decide(rule: Rule, heldout: Bootstrap, user: Option<UserText>) -> (bool, Figures, Vec<String>) {
    let mut reasons = Vec::new();
    let mut promote = true;
    // The user's text first: whether the candidate gains there decides what it may lose on
    // the treebank's.
    let mut judge = false;
    let mut gain = None;
    match &user {
        Some(UserText { asked, whole, uncertain }) if asked.words > 0 => {
            judge = asked.words as usize >= rule.min_annotation_arcs;
            let what = format!(
                "LAS {:.2} on your text as a whole: {} words of the {} held-out annotated sentences, {} corrected \
                 and {} that nobody corrected and the serving model is sure of, scored against its parse (serving \
                 model {:.2}; {})",
                whole.candidate_las,
                whole.words,
                whole.sentences,
                asked.words,
                whole.words - asked.words,
                whole.serving_las,
                interval(whole)
            );
            if judge && whole.low <= 0.0 {
                promote = false;
                reasons
                    .push(format!("{what} is not better beyond noise: is below the serving model's or within noise"));
            } else if !judge && whole.delta < -1e-9 {
                promote = false;
                reasons.push(format!(
                    "{what} is below the serving model's (fewer than retrain.gate_min_annotation_arcs = {} \
                     annotated arcs: judged on the point difference)",
                    rule.min_annotation_arcs
                ));
            } else {
                // Only a gain beyond noise buys a loss: a point gain on 55 words bought 0.57
                // points of the treebank's for +0.37 on the domain (en_ewt's reviews, 578
                // corrected arcs through the queue; the whole text, its sure arcs then read by
                // the parser's probability, +3.64 [−1.92, +9.26]; docs/annotation.md).
                gain = (whole.low > 0.0).then_some(whole.delta);
                reasons.push(what);
            }
            reasons.push(format!(
                "of which LAS {:.2} on the {} corrected arcs, the hardest ones (serving model {:.2}; {})",
                asked.candidate_las,
                asked.words,
                asked.serving_las,
                interval(asked)
            ));
            if uncertain.arcs > 0 {
                reasons.push(format!(
                    "not scored: {} arcs there that nobody corrected and the serving model was not sure of, of which \
                     the candidate changes {}",
                    uncertain.arcs, uncertain.changed
                ));
            }
        }
        _ => reasons.push("no held-out annotation yet: gated on the held-out file only".into()),
    }
    let allowed = gain.map_or(0.0, |_| rule.max_las_drop);
    let why = match gain {
        Some(g) => format!("retrain.max_las_drop {allowed}, bought with {g:+.2} LAS on your text as a whole"),
        None => "0: no gain beyond noise on your text to buy a loss with".to_string(),
    };
    let h = &heldout;
    let what = format!("held-out LAS {:.2} (serving model {:.2}; {})", h.candidate_las, h.serving_las, interval(h));
    reasons.insert(
        0,
        match h.high < -allowed {
            true => {
                promote = false;
                format!("{what} is below the serving model's by more than the allowed loss beyond noise (allowed loss {why})")
            }
            false => format!("{what}; allowed loss {why}"),
        },
    );
    let figures = Figures {
        heldout,
        annotations: user.as_ref().map(|u| u.asked.clone()),
        annotations_judge: judge,
        annotations_whole: user.as_ref().map(|u| u.whole.clone()),
        uncertain: user.map(|u| u.uncertain),
    };
    (promote, figures, reasons)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` sentences of 10 words, the i-th with `right(i)` right labelled attachments.
    fn counts(n: usize, right: impl Fn(usize) -> u64) -> Vec<Counts> {
        scored(n, 10, right)
    }

    /// `n` sentences of `words` scored words, the i-th with `right(i)` right.
    fn scored(n: usize, words: u64, right: impl Fn(usize) -> u64) -> Vec<Counts> {
        (0..n).map(|i| Counts { words, label_correct: right(i), ..Counts::default() }).collect()
    }

    /// The user's text of sentences annotated whole: every word corrected, so the whole text is
    /// the annotated arcs.
    fn whole(asked: Bootstrap) -> Option<UserText> {
        Some(UserText { whole: asked.clone(), asked, uncertain: Uncertain::default() })
    }

    #[test]
    fn the_bootstrap_is_deterministic_and_its_interval_holds_the_difference() {
        let serving = counts(300, |i| (i % 7) as u64);
        let candidate = counts(300, |i| ((i + 3) % 8) as u64);
        let a = bootstrap(&serving, &candidate, 1000);
        assert_eq!(a, bootstrap(&serving, &candidate, 1000));
        assert!(a.low < a.delta && a.delta < a.high, "{a:?}");
        // Identical models: the difference is 0 in every resample.
        let same = bootstrap(&serving, &serving, 200);
        assert_eq!((same.delta, same.low, same.high), (0.0, 0.0, 0.0));
        // Sentences without a scored word do not count.
        let mut with_empty = serving.clone();
        with_empty.push(Counts::default());
        let mut candidate_empty = candidate.clone();
        candidate_empty.push(Counts::default());
        assert_eq!(bootstrap(&with_empty, &candidate_empty, 10).sentences, 300);
    }

    #[test]
    fn a_treebank_loss_is_refused_only_beyond_noise_and_the_allowed_drop() {
        let serving = counts(2000, |i| 8 + (i % 3 == 0) as u64);
        // One sentence in 20 loses one arc: -0.5 points, an interval well below 0.
        let candidate = counts(2000, |i| 8 + (i % 3 == 0) as u64 - (i % 20 == 1) as u64);
        let lost = bootstrap(&serving, &candidate, 1000);
        assert!(lost.high < 0.0, "{lost:?}");
        let rule = |max_las_drop| Rule { max_las_drop, min_annotation_arcs: 100 };
        // A gain on the user's text (60 held-out arcs: judged on the point difference).
        let gain = bootstrap(&counts(6, |_| 5), &counts(6, |_| 6), 100);
        assert!(!decide(rule(0.0), lost.clone(), whole(gain.clone())).0);
        assert!(!decide(rule(0.3), lost.clone(), whole(gain.clone())).0);
        assert!(decide(rule(1.0), lost.clone(), whole(gain.clone())).0);
        // Without a gain there, nothing pays for the loss, whatever the allowed drop.
        let level = bootstrap(&counts(6, |_| 5), &counts(6, |_| 5), 100);
        let (promote, _, reasons) = decide(rule(1.0), lost.clone(), whole(level));
        assert!(!promote && reasons[0].contains("no gain beyond noise on your text"), "{reasons:?}");
        // Nor does a point gain within noise: one arc more in 60 sentences.
        let slight = bootstrap(&counts(60, |_| 5), &counts(60, |i| 5 + (i == 0) as u64), 1000);
        assert!(slight.delta > 0.0 && slight.low <= 0.0, "{slight:?}");
        let (promote, _, reasons) = decide(rule(1.0), lost.clone(), whole(slight));
        assert!(!promote && reasons[0].contains("no gain beyond noise"), "{reasons:?}");
        // Nor without held-out annotations (a cycle on the treebank alone, or on self-training).
        assert!(!decide(rule(1.0), lost, None).0);
        // A loss within noise passes even without any allowed drop: one sentence in 400 loses
        // one arc, and another in 500 gains one.
        let noisy = counts(2000, |i| 8 + (i % 3 == 0) as u64 - (i % 400 == 1) as u64 + (i % 500 == 2) as u64);
        let noise = bootstrap(&serving, &noisy, 1000);
        assert!(noise.delta < 0.0 && noise.high > 0.0, "{noise:?}");
        let (promote, figures, reasons) = decide(rule(0.0), noise, None);
        assert!(promote, "{reasons:?}");
        assert!(figures.annotations.is_none());
    }

    #[test]
    fn enough_held_out_annotations_must_show_an_improvement_beyond_noise() {
        let heldout = bootstrap(&counts(100, |_| 8), &counts(100, |_| 8), 100);
        let serving = counts(60, |_| 5);
        let better = bootstrap(&serving, &counts(60, |i| 5 + (i % 2) as u64), 1000);
        let noise = bootstrap(&serving, &counts(60, |i| 5 + (i == 0) as u64), 1000);
        let worse = bootstrap(&serving, &counts(60, |i| 5 - (i == 0) as u64), 1000);
        assert!(better.low > 0.0 && noise.low <= 0.0, "{better:?} {noise:?}");
        // 600 annotated arcs: they judge.
        let judge = Rule { max_las_drop: 0.0, min_annotation_arcs: 600 };
        assert!(decide(judge, heldout.clone(), whole(better.clone())).0);
        let (promote, figures, reasons) = decide(judge, heldout.clone(), whole(noise.clone()));
        assert!(!promote && figures.annotations_judge, "{reasons:?}");
        // Too few to judge: a point difference that is not negative passes, a negative one not.
        let few = Rule { max_las_drop: 0.0, min_annotation_arcs: 601 };
        let (promote, figures, _) = decide(few, heldout.clone(), whole(noise));
        assert!(promote && !figures.annotations_judge);
        assert!(!decide(few, heldout, whole(worse)).0);
    }

    #[test]
    fn a_gain_on_the_corrected_arcs_bought_by_breaking_what_the_serving_model_was_sure_of_is_refused() {
        let heldout = bootstrap(&counts(2000, |_| 8), &counts(2000, |i| 8 - (i % 40 == 1) as u64), 1000);
        assert!(heldout.delta < 0.0 && heldout.high > -0.3 && heldout.high < 0.0, "{heldout:?}");
        // 60 sentences, each with 3 corrected arcs and 7 that the serving model was sure of:
        // the candidate fixes one corrected arc in two sentences and breaks two sure ones in each.
        let asked = bootstrap(&scored(60, 3, |_| 1), &scored(60, 3, |i| 1 + (i % 2) as u64), 1000);
        let serving = counts(60, |_| 8);
        let broke = bootstrap(&serving, &counts(60, |i| 6 + (i % 2) as u64), 1000);
        assert!(asked.low > 0.0 && broke.high < 0.0, "{asked:?} {broke:?}");
        let uncertain = Uncertain { arcs: 120, changed: 30 };
        let judge = Rule { max_las_drop: 0.3, min_annotation_arcs: 100 };
        let user = |whole: &Bootstrap| Some(UserText { asked: asked.clone(), whole: whole.clone(), uncertain });
        let (promote, figures, reasons) = decide(judge, heldout.clone(), user(&broke));
        assert!(!promote, "{reasons:?}");
        assert!(reasons[1].contains("on your text as a whole") && reasons[1].contains("not better beyond noise"));
        assert!(reasons[2].contains("on the 180 corrected arcs"), "{reasons:?}");
        assert!(reasons[3].contains("120 arcs") && reasons[3].contains("changes 30"), "{reasons:?}");
        assert_eq!(figures.uncertain, Some(uncertain));
        // Below the judging count, the whole text's point loss refuses it too, and buys nothing.
        let few = Rule { min_annotation_arcs: 181, ..judge };
        let (promote, _, reasons) = decide(few, heldout.clone(), user(&broke));
        assert!(!promote && reasons[0].contains("no gain beyond noise on your text"), "{reasons:?}");
        // The same corrected arcs with the sure ones kept: the whole text gains, and buys the
        // treebank's loss within max_las_drop.
        let kept = bootstrap(&serving, &counts(60, |i| 8 + (i % 2) as u64), 1000);
        let (promote, figures, reasons) = decide(judge, heldout, user(&kept));
        assert!(promote && figures.annotations_judge, "{reasons:?}");
        assert!(reasons[0].contains(&format!("bought with {:+.2} LAS on your text as a whole", kept.delta)));
    }
}
