//! `[retrain]`: the settings of a retraining cycle ([`Settings`]), their defaults and checks,
//! and when the next scheduled cycle is due. This module owns reading and checking them; what
//! a cycle does with them is the parent's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::TaggerRetraining;
use crate::model::registry::unix_time;
use crate::parse::raw::RawSentences;

/// Words of teacher parses a cycle trains on at most, by default: half of en_ewt train, so that
/// uptraining at most doubles a cycle's training; on en_atis 10,000 words gained as much as
/// 48,863 (docs/annotation.md#uptraining-the-fast-tier-from-your-own-text).
pub const DEFAULT_UNLABELED_MAX_WORDS: usize = 100_000;

/// Words of new unlabeled text that make a scheduled cycle run without new annotations, by
/// default: on en_atis 10,000 words of the domain's text gained as much as all 48,863 did
/// (docs/annotation.md#uptraining-the-fast-tier-from-your-own-text), so a night's text of that
/// size is worth a cycle.
pub const DEFAULT_UNLABELED_MIN_NEW_WORDS: usize = 10_000;

/// `[retrain]` in the daemon's configuration, also read by `spoolparse retrain`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Whether the daemon retrains on its schedule (`spoolparse retrain` works either way).
    pub enabled: bool,
    /// Retrain this long after the last cycle started: `90s`, `30m`, `6h`, `1d`.
    pub every: Option<String>,
    /// Or once a day at this local time, `HH:MM`.
    pub at: Option<String>,
    /// A scheduled cycle waits until this many sentences were annotated since the last one, or,
    /// with a `teacher`, until `unlabeled_min_new_words` words of new text arrived.
    pub min_new_sentences: usize,
    /// Gold treebank files trained on in every cycle.
    pub base: Vec<PathBuf>,
    /// A gold file never trained on: calibration and the gate.
    pub heldout: Option<PathBuf>,
    /// How much held-out LAS (points) a candidate that gains on the held-out annotations may
    /// lose beyond noise and still be promoted ([`super::gate`]).
    pub max_las_drop: f64,
    /// Share of the annotations held out for the gate (chosen by hashing their identity).
    pub annotation_heldout: f64,
    /// Model files kept in the models directory (the serving one always is).
    pub keep_models: usize,
    /// Training epochs; default: the serving model's best epoch.
    pub epochs: Option<u32>,
    /// The seed of training's shuffles and exploration; default: the serving model's (so a
    /// cycle on the same data trains the same candidate; another seed measures the noise).
    pub seed: Option<u64>,
    /// Whether an annotation may use a DEPREL that is neither a UD relation nor a label of the
    /// serving model (a new class); refused by default, as a typo would become one.
    pub allow_new_labels: bool,
    /// How partial annotations are completed before training ([`CompletionKind`]).
    pub completion: CompletionKind,
    /// Completed arcs whose calibrated confidence is below this stay unannotated (no cost).
    pub completion_min_conf: f32,
    /// Times each annotated sentence is trained on per epoch (the base treebank's: once),
    /// interleaved with the base at random.
    pub annotation_weight: u32,
    /// Feature augmentation (Daumé III 2007, [`crate::train::domain`]): the annotations (and
    /// self-training's sentences) also train a copy of every feature of their own, which the
    /// treebank's sentences never fire, and the candidate parses with both copies summed.
    pub domain_features: bool,
    /// Held-out annotated arcs from which the annotations judge a candidate (an improvement
    /// beyond noise required) and the calibration is fitted on them ([`super::gate`]).
    pub gate_min_annotation_arcs: usize,
    /// Resamples of the gate's paired bootstrap.
    pub bootstrap_samples: usize,
    /// Held-out annotated arcs from which the calibration is refitted on them instead of on
    /// `retrain.heldout`.
    pub calibration_min_arcs: usize,
    /// When a cycle retrains the tagger on `retrain.base` plus the annotated words whose tags a
    /// person checked; otherwise the serving model's tagger is kept.
    pub retrain_tagger: TaggerRetraining,
    /// Tagger training epochs when `retrain_tagger`.
    pub tagger_epochs: u32,
    /// Self-training: the daemon's own parses in this directory (its `accepted/` output,
    /// `.conllu[.zst]`) whose `# confidence` reaches `self_training_min_conf` are trained on
    /// as if annotated (the `self_training_max` most confident). Off when absent.
    pub self_training: Option<PathBuf>,
    pub self_training_min_conf: f64,
    pub self_training_max: usize,
    /// Uptraining ([`super::uptraining`]): this accurate model (of `train --neural`) parses
    /// `unlabeled` (files, or folders of `.raw`, `.txt`, `.conllu`, `.conllx` files, `.zst`
    /// allowed; the daemon's configuration gives its own published output by default,
    /// [`Settings::default_unlabeled`]) and its parses whose `# confidence` reaches
    /// `teacher_min_confidence` are trained on, each `teacher_weight` times an epoch, at most
    /// `unlabeled_max_words` words of them (0: no bound), the sentences of raw text ending as
    /// `unlabeled_sentences` says. Off when absent.
    pub teacher: Option<PathBuf>,
    pub unlabeled: Vec<PathBuf>,
    pub unlabeled_max_words: usize,
    /// With a `teacher`, a scheduled cycle with fewer than `min_new_sentences` new annotations
    /// still runs when the files of `unlabeled` changed since the last cycle that trained hold
    /// this many words (0: new text alone never makes a cycle run): the nightly cycle of a user
    /// who corrects nothing.
    pub unlabeled_min_new_words: usize,
    pub teacher_min_confidence: f64,
    pub teacher_weight: u32,
    pub unlabeled_sentences: RawSentences,
    /// How a neural serving model's candidate is trained ([`NeuralStart`]).
    pub neural_from: NeuralStart,
    /// Fine-tuning: Adam steps of [`FINE_TUNE_BATCH`] sentences, the share of each batch drawn
    /// from `retrain.base` (the rest from the annotations trained on), and the first step's
    /// learning rate (decayed linearly to a tenth).
    pub fine_tune_steps: u32,
    pub fine_tune_base_share: f64,
    pub fine_tune_learning_rate: f64,
}

/// Sentences per step of fine-tuning: the batch the default schedule trains with on a
/// treebank of en_ewt's size ([`crate::neural::NeuralOptions::schedule`]).
pub const FINE_TUNE_BATCH: usize = 32;

/// Where a neural serving model's candidate starts (`retrain.neural_from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NeuralStart {
    /// From the serving weights, fine-tuned on the annotations with the base mixed in.
    #[default]
    Serving,
    /// From random weights, on the base and the annotations, as `train --neural` trains.
    Scratch,
}

impl NeuralStart {
    /// The name in the configuration and the reports.
    pub fn name(self) -> &'static str {
        match self {
            NeuralStart::Serving => "serving",
            NeuralStart::Scratch => "scratch",
        }
    }
}

/// How a cycle completes partially annotated sentences before training on them
/// (`retrain.completion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CompletionKind {
    /// Trained on as annotated: only annotated arcs cost anything.
    #[default]
    None,
    /// Completed once by the serving model's constrained parse.
    Serving,
    /// Completed by the serving model, then again by the candidate after each epoch.
    Refresh,
}

impl CompletionKind {
    /// The name in the configuration and the reports.
    pub fn name(self) -> &'static str {
        match self {
            CompletionKind::None => "none",
            CompletionKind::Serving => "serving",
            CompletionKind::Refresh => "refresh",
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            enabled: false,
            every: None,
            at: None,
            min_new_sentences: 1,
            base: Vec::new(),
            heldout: None,
            max_las_drop: 0.3,
            annotation_heldout: 0.1,
            keep_models: 5,
            epochs: None,
            seed: None,
            allow_new_labels: false,
            completion: CompletionKind::None,
            completion_min_conf: 0.0,
            annotation_weight: 5,
            domain_features: false,
            gate_min_annotation_arcs: 500,
            bootstrap_samples: 1000,
            calibration_min_arcs: 2000,
            retrain_tagger: TaggerRetraining::Auto,
            tagger_epochs: 10,
            self_training: None,
            self_training_min_conf: 0.95,
            self_training_max: 2000,
            teacher: None,
            unlabeled: Vec::new(),
            unlabeled_max_words: DEFAULT_UNLABELED_MAX_WORDS,
            unlabeled_min_new_words: DEFAULT_UNLABELED_MIN_NEW_WORDS,
            teacher_min_confidence: crate::train::teacher::DEFAULT_MIN_CONFIDENCE,
            teacher_weight: 1,
            unlabeled_sentences: RawSentences::Model,
            neural_from: NeuralStart::Serving,
            fine_tune_steps: 400,
            fine_tune_base_share: 0.5,
            fine_tune_learning_rate: 5e-4,
        }
    }
}

impl Settings {
    /// With a `teacher` and no `unlabeled`, the daemon's own published parses (`accepted/` and
    /// `lowconf/` under `output`, which the teacher parses again, trees ignored): the user's
    /// recent text, newest first, up to `unlabeled_max_words`.
    pub fn default_unlabeled(&mut self, output: &Path) {
        if self.teacher.is_some() && self.unlabeled.is_empty() {
            self.unlabeled = vec![output.join("accepted"), output.join("lowconf")];
        }
    }

    /// Checks values whose type does not say they are wrong: `Err((key, problem))`, with the
    /// key's full name (`retrain.every`).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if let Some(every) = &self.every {
            parse_interval(every).map_err(|e| ("retrain.every", e))?;
        }
        if let Some(at) = &self.at {
            parse_time_of_day(at).map_err(|e| ("retrain.at", e))?;
        }
        if self.every.is_some() && self.at.is_some() {
            return Err(("retrain.at", "cannot be given with retrain.every: give one of them".into()));
        }
        if self.enabled && self.every.is_none() && self.at.is_none() {
            return Err(("retrain.enabled", "needs `every` (an interval) or `at` (a daily time)".into()));
        }
        if self.enabled && (self.base.is_empty() || self.heldout.is_none()) {
            return Err(("retrain.enabled", "needs retrain.base (gold training files) and retrain.heldout".into()));
        }
        // Found here, not as `: cannot open` without a key when a cycle runs.
        if self.base.iter().any(|p| p.as_os_str().is_empty()) {
            return Err(("retrain.base", "must not list an empty path".into()));
        }
        if let Some(heldout) = &self.heldout {
            if heldout.as_os_str().is_empty() {
                return Err(("retrain.heldout", "must not be empty".into()));
            }
            // Held-out data that is also trained on inflates the held-out LAS of every candidate,
            // and the gate that reads it would promote on a biased score.
            if let Some(base) = self.base.iter().find(|b| crate::base::io::same_file(b, heldout)) {
                return Err((
                    "retrain.heldout",
                    format!(
                        "{} is also in retrain.base (as {}): held-out data must never be trained on",
                        heldout.display(),
                        base.display()
                    ),
                ));
            }
        }
        if !(0.0..1.0).contains(&self.annotation_heldout) {
            return Err(("retrain.annotation_heldout", format!("must be in [0, 1) (got {})", self.annotation_heldout)));
        }
        if self.max_las_drop.is_nan() || self.max_las_drop < 0.0 {
            return Err(("retrain.max_las_drop", format!("must be at least 0 (got {})", self.max_las_drop)));
        }
        if self.keep_models == 0 {
            return Err(("retrain.keep_models", "must be at least 1 (got 0)".into()));
        }
        if self.epochs == Some(0) {
            return Err(("retrain.epochs", "must be at least 1 (got 0)".into()));
        }
        if !(0.0..=1.0).contains(&self.completion_min_conf) {
            return Err((
                "retrain.completion_min_conf",
                format!("must be in [0, 1] (got {})", self.completion_min_conf),
            ));
        }
        if self.annotation_weight == 0 {
            return Err(("retrain.annotation_weight", "must be at least 1 (got 0)".into()));
        }
        for (key, value) in [
            ("retrain.self_training_min_conf", self.self_training_min_conf),
            ("retrain.teacher_min_confidence", self.teacher_min_confidence),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err((key, format!("must be in [0, 1] (got {value})")));
            }
        }
        if self.teacher.is_none() && !self.unlabeled.is_empty() {
            return Err(("retrain.unlabeled", "needs retrain.teacher, the model that parses it".into()));
        }
        if self.teacher.iter().chain(&self.unlabeled).any(|p| p.as_os_str().is_empty()) {
            return Err(("retrain.unlabeled", "must not list an empty path, nor retrain.teacher be one".into()));
        }
        if self.teacher_weight == 0 {
            return Err(("retrain.teacher_weight", "must be at least 1 (got 0)".into()));
        }
        if self.tagger_epochs == 0 {
            return Err(("retrain.tagger_epochs", "must be at least 1 (got 0)".into()));
        }
        if self.fine_tune_steps == 0 {
            return Err(("retrain.fine_tune_steps", "must be at least 1 (got 0)".into()));
        }
        if !(0.0..1.0).contains(&self.fine_tune_base_share) {
            return Err((
                "retrain.fine_tune_base_share",
                format!("must be in [0, 1) (got {}): a batch holds at least one annotation", self.fine_tune_base_share),
            ));
        }
        if !(self.fine_tune_learning_rate > 0.0 && self.fine_tune_learning_rate.is_finite()) {
            return Err((
                "retrain.fine_tune_learning_rate",
                format!("must be above 0 (got {})", self.fine_tune_learning_rate),
            ));
        }
        if self.bootstrap_samples == 0 {
            return Err(("retrain.bootstrap_samples", "must be at least 1 (got 0)".into()));
        }
        Ok(())
    }

    /// When the next scheduled cycle is due, the last one having started at `last` (Unix
    /// seconds; `None`: never); `None` without a schedule.
    pub fn next_due(&self, last: Option<u64>) -> Option<u64> {
        if let Some(every) = self.every.as_deref().and_then(|e| parse_interval(e).ok()) {
            return Some(last.map_or(0, |l| l + every.as_secs()));
        }
        let (h, m) = self.at.as_deref().and_then(|a| parse_time_of_day(a).ok())?;
        let after = last.unwrap_or_else(|| unix_time().saturating_sub(86_400));
        Some(next_local_time(after, h, m))
    }
}

/// `90s`, `30m`, `6h`, `1d` (a number and a unit), at most 36500 days (100 years).
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    // Longer intervals are mistakes, and [`Settings::next_due`] adds the interval to a Unix
    // time, which must not overflow.
    const MAX_INTERVAL_DAYS: u64 = 36_500;
    let bad = || format!("{text:?} is not an interval like 90s, 30m, 6h or 1d");
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let unit_secs: u64 = match unit.trim() {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    if n.is_empty() {
        return Err(bad());
    }
    let too_long = || {
        format!("{text:?} is longer than {MAX_INTERVAL_DAYS}d (to retrain only by hand, leave retrain.enabled false)")
    };
    // Only digits: the number fails to parse only if it does not fit, and may still overflow
    // once multiplied (213503982334602d wrapped around to about 17 hours).
    let n: u64 = n.parse().map_err(|_| too_long())?;
    let secs = n.checked_mul(unit_secs).filter(|&s| s <= MAX_INTERVAL_DAYS * 86_400).ok_or_else(too_long)?;
    if secs == 0 {
        return Err("the interval must not be 0".into());
    }
    Ok(Duration::from_secs(secs))
}

/// `HH:MM`.
pub fn parse_time_of_day(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{text:?} is not a time of day like 03:30");
    let (h, m) = text.trim().split_once(':').ok_or_else(bad)?;
    let (h, m): (u32, u32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if h > 23 || m > 59 {
        return Err(bad());
    }
    Ok((h, m))
}

/// The first moment after `after` (Unix seconds) at which local time reads `h:m`.
fn next_local_time(after: u64, h: u32, m: u32) -> u64 {
    let offset = local_offset(after);
    let local = after as i64 + offset;
    let day = local.div_euclid(86_400) * 86_400;
    let mut at = day + i64::from(h * 3600 + m * 60);
    if at <= local {
        at += 86_400;
    }
    (at - offset).max(0) as u64
}

/// The local time zone's offset from UTC at `t`, in seconds (0 if it cannot be known).
fn local_offset(t: u64) -> i64 {
    let Ok(t) = libc::time_t::try_from(t) else { return 0 };
    // SAFETY: localtime_r reads `t` and writes only into the zeroed `tm` we own.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return 0;
    }
    tm.tm_gmtoff
}
