//! `spoolparse bench`: parse (or tag) speed on a file held in memory.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use spoolparse::model::file::ModelFile;
use spoolparse::parse::bench::{self, BenchTask};

/// Parse speed in words/s on a file held in memory (no I/O, model load excluded).
#[derive(Args)]
pub struct BenchArgs {
    #[arg(long)]
    model: PathBuf,
    file: PathBuf,
    /// Parsing threads (at least 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    threads: u32,
    /// Measure for at least this long.
    #[arg(long, default_value_t = 5.0, value_parser = seconds)]
    seconds: f64,
    /// Time the tagger alone instead of the parser (the same as `--stage tag`).
    #[arg(long, conflicts_with = "stage")]
    tag_only: bool,
    /// What to time: `parse` (on the file's own tags), one stage of the analysis of a model
    /// trained with --tagger (`tag`; `feats` and `lemmas` from the file's own tags and FEATS),
    /// or the whole analysis (`analysis`).
    #[arg(long, value_enum, default_value = "parse")]
    stage: Stage,
}

/// `--stage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Stage {
    Parse,
    Tag,
    Feats,
    Lemmas,
    Analysis,
}

/// A duration in seconds: a finite number, not negative (`bench --seconds inf` never ended).
fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(s),
        Ok(_) => Err("must be a finite number of seconds, 0 or more".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `spoolparse bench`.
pub fn exec(args: BenchArgs) -> Result<()> {
    let BenchArgs { model, file, threads, seconds, tag_only, stage } = args;
    let model = ModelFile::open(&model)?;
    let (task, name) = match (tag_only, stage) {
        (true, _) | (_, Stage::Tag) => (BenchTask::Tag, "tagging"),
        (_, Stage::Parse) => (BenchTask::Parse, "parsing"),
        (_, Stage::Feats) => (BenchTask::Feats, "FEATS"),
        (_, Stage::Lemmas) => (BenchTask::Lemmas, "lemmas"),
        (_, Stage::Analysis) => (BenchTask::Analysis, "analysis"),
    };
    if matches!(task, BenchTask::Feats) && model.feats().is_none() {
        bail!("{}: the model predicts no FEATS", model.path().display());
    }
    if matches!(task, BenchTask::Lemmas) && model.lemmatizer().is_none() {
        bail!("{}: the model predicts no lemmas", model.path().display());
    }
    let r = bench::run(&model, &file, task, threads as usize, seconds)?;
    if r.words == 0 {
        bail!("{}: no words to time", file.display());
    }
    let cpu = r.words_per_cpu_second().map(|w| format!(", {w:.0} words per CPU-second")).unwrap_or_default();
    println!(
        "{name} {:.0} words/s ({} words x {} rounds in {:.2} s, {} thread(s){cpu}, {})",
        r.words_per_second(),
        r.words,
        r.rounds,
        r.seconds,
        threads,
        file.display()
    );
    Ok(())
}
