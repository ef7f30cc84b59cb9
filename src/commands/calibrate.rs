//! `spoolparse calibrate`: fits a model's whole-pipeline confidence on a gold file and writes
//! the model with it (`train --dev` does this itself; this refits it on other annotated text,
//! such as the user's own domain).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;

use spoolparse::learn::precision;
use spoolparse::model::file::{self as model_file, ModelFile, PipelineConfidence};
use spoolparse::train::pipeline_confidence::fit_pipeline_confidence;

/// Fits the confidence a model writes on a gold CoNLL-U file, parsed from its raw text (`#
/// text`), from its words, and with unknown words, and writes the model with it.
#[derive(Args)]
pub struct CalibrateArgs {
    /// The model to calibrate.
    #[arg(long)]
    model: PathBuf,
    /// The gold file to fit on (CoNLL-U with `# text`, `.zst` allowed).
    #[arg(long)]
    dev: PathBuf,
    /// Where to write the calibrated model.
    #[arg(long)]
    output: PathBuf,
    /// Replace an existing --output.
    #[arg(long)]
    overwrite: bool,
}

/// What the fit printed and stored, in one line.
pub fn describe(c: &PipelineConfidence) -> String {
    format!(
        "fitted on {} arcs of {} ({}); arc ECE from {} {:.4} before, {:.4} after (2-fold cross-fitted)",
        c.arcs,
        c.fitted_on,
        c.inputs.join(", "),
        c.inputs.first().map_or("?", String::as_str),
        c.ece_before,
        c.ece_crossfit
    )
}

/// The precisions `inspect` and `calibrate` show the thresholds of.
const PRECISIONS: [f64; 3] = [0.9, 0.95, 0.98];

/// The threshold `--min-precision` takes for a few precisions, with the share of the
/// calibration text's words each keeps, in one line.
pub fn describe_precisions(c: &PipelineConfidence) -> String {
    if c.sentences.is_empty() {
        return "no calibration sentences (fitted before models kept them: `spoolparse calibrate` refits)".into();
    }
    let each: Vec<String> = PRECISIONS
        .iter()
        .map(|&p| match precision::choose(&c.sentences, p) {
            Ok(ch) => format!("{p}: confidence ≥ {:.2}, {:.1}% of the words kept", ch.threshold, 100.0 * ch.kept),
            Err(_) => format!("{p}: out of reach"),
        })
        .collect();
    format!(
        "{} (on {} sentences of {}, with probability {})",
        each.join("; "),
        c.sentences.len(),
        c.sentences_source(),
        1.0 - precision::RISK
    )
}

/// Runs `spoolparse calibrate`.
pub fn exec(args: CalibrateArgs) -> Result<()> {
    let CalibrateArgs { model, dev, output, overwrite } = args;
    if !overwrite && std::fs::symlink_metadata(&output).is_ok() {
        bail!("{} exists; --overwrite replaces it", output.display());
    }
    if spoolparse::base::io::same_file(&output, &dev) {
        bail!("--output {}: the model cannot be written over the gold file", output.display());
    }
    let file = Arc::new(ModelFile::open(&model)?);
    let confidence = fit_pipeline_confidence(&file, &dev)
        .with_context(|| format!("fitting the confidence of {} on {}", model.display(), dev.display()))?;
    let Some(confidence) = confidence else {
        bail!("{}: no arc to fit on (or every arc right, or every arc wrong)", dev.display());
    };
    eprintln!("confidence: {}", describe(&confidence));
    eprintln!("min precision: {}", describe_precisions(&confidence));
    model_file::write_with_confidence(&file, &confidence, &output)
        .with_context(|| format!("writing the model to {}", output.display()))?;
    eprintln!("wrote {}", output.display());
    Ok(())
}
