//! The sentence threshold a run uses, from `--min-confidence` and `--min-precision` (and the
//! daemon's `parse.min_confidence` and `parse.min_precision`): a precision is turned into a
//! threshold once, when the model is opened, on the calibration sentences the model carries
//! ([`crate::learn::precision`]); the pipeline only ever sees a threshold. Given both, the
//! higher threshold is used, so that neither promise is loosened. This module decides and
//! describes; it parses nothing.

use crate::learn::precision::{self, Choice, RISK};
use crate::model::file::ModelFile;

/// Why no threshold could be chosen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PrecisionError {
    #[error("the precision asked for must be within 0..1 (got {0})")]
    OutOfRange(f64),
    #[error(
        "{model}: the model carries no calibration text to choose a threshold for a precision on (it was \
         trained without --dev, or before models kept it): refit its confidence with `spoolparse calibrate \
         --model {model} --dev GOLD.conllu --output NEW`, GOLD held-out annotated text of its kind"
    )]
    NoCalibration { model: String },
    #[error(
        "no threshold gives a precision of {target} on {model}'s calibration text ({fitted_on}) with probability \
         {level}: {best}; ask for less, or calibrate on more text"
    )]
    Unreachable { model: String, target: f64, fitted_on: String, level: f64, best: String },
}

/// The threshold of a run, and how it came about.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// Sentences below this confidence are rejected; `None`: none is.
    pub min_confidence: Option<f64>,
    /// The threshold the precision asked for gave, when one was.
    pub choice: Option<Choice>,
    /// The file the model's calibration sentences come from.
    pub fitted_on: String,
    /// `min_confidence` is the threshold given, over the precision's lower one.
    pub given_wins: bool,
}

impl Threshold {
    /// The threshold for `model` of a run given `min_confidence` and `min_precision`.
    pub fn resolve(
        model: &ModelFile,
        min_confidence: Option<f64>,
        min_precision: Option<f64>,
    ) -> Result<Threshold, PrecisionError> {
        let Some(target) = min_precision else {
            return Ok(Threshold { min_confidence, choice: None, fitted_on: String::new(), given_wins: false });
        };
        if !(0.0..=1.0).contains(&target) {
            return Err(PrecisionError::OutOfRange(target));
        }
        let name = model.path().display().to_string();
        let calibration = model.confidence().filter(|c| !c.sentences.is_empty());
        let Some(calibration) = calibration else { return Err(PrecisionError::NoCalibration { model: name }) };
        let choice =
            precision::choose(&calibration.sentences, target).map_err(|short| PrecisionError::Unreachable {
                model: name,
                target,
                fitted_on: calibration.sentences_source().to_string(),
                level: 1.0 - RISK,
                best: match short.start {
                    Some((t, bound)) => {
                        format!("the likeliest threshold, confidence ≥ {t:.2}, promises {:.1}%", 100.0 * bound)
                    }
                    None => "it has no sentence".to_string(),
                },
            })?;
        let given_wins = min_confidence.is_some_and(|c| c > choice.threshold);
        Ok(Threshold {
            min_confidence: Some(min_confidence.map_or(choice.threshold, |c| c.max(choice.threshold))),
            choice: Some(choice),
            fitted_on: calibration.sentences_source().to_string(),
            given_wins,
        })
    }

    /// What the precision gave, in a line for the log (`None` without one).
    pub fn describe(&self) -> Option<String> {
        let c = self.choice?;
        let mut line = format!(
            "a precision of {} is sentences of confidence ≥ {:.2} (on the model's calibration text, {}: {:.1}% of \
             the words kept, {:.1}% of them right; at least {:.1}% with probability {})",
            c.target,
            c.threshold,
            self.fitted_on,
            100.0 * c.kept,
            100.0 * c.precision,
            100.0 * c.bound,
            1.0 - RISK
        );
        if self.given_wins {
            if let Some(t) = self.min_confidence {
                line.push_str(&format!("; the minimum confidence given, {t}, is higher and is used"));
            }
        }
        Some(line)
    }
}
