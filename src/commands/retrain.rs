//! `spoolparse retrain`: one retraining cycle in the foreground, as the daemon runs on its
//! schedule.

use anyhow::{bail, Result};
use clap::Args;

use spoolparse::model::registry::Registry;
use spoolparse::retrain::reference::Reference;
use spoolparse::retrain::{self, store::Store, Decision};

use super::ConfigArg;

/// Run one retraining cycle in the foreground, as the daemon does on its schedule: take in
/// `annotated/`, train on `retrain.base` plus every annotation, gate the candidate on
/// held-out data and promote it (`models/current`) if it is not worse. Prints the decision.
///
/// Exit status: 0 the candidate was promoted; 3 it was rejected by the gate; 4 nothing was
/// trained (fewer new annotations than `retrain.min_new_sentences` and, with a teacher, fewer
/// words of new text than `retrain.unlabeled_min_new_words`; see --force); 1 an error.
#[derive(Args)]
pub struct RetrainArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Train even with fewer than `retrain.min_new_sentences` new annotations (and too little
    /// new text for the teacher).
    #[arg(long)]
    force: bool,
    /// Move a candidate the gate rejects into DIR (under its own name) instead of removing it:
    /// to score it on data of your own, or see why it failed.
    #[arg(long, value_name = "DIR")]
    keep_rejected: Option<std::path::PathBuf>,
}

/// Exit status of a cycle whose candidate the gate rejected.
pub const EXIT_REJECTED: i32 = 3;
/// Exit status of a cycle that trained nothing (too few new annotations, too little new text).
pub const EXIT_SKIPPED: i32 = 4;

/// Runs `spoolparse retrain`, and exits with [`EXIT_REJECTED`] or [`EXIT_SKIPPED`] unless the
/// candidate was promoted.
pub fn exec(args: RetrainArgs) -> Result<()> {
    let decision = run(args)?;
    let status = match decision {
        Some(Decision::Promoted) => return Ok(()),
        Some(Decision::Rejected) => EXIT_REJECTED,
        Some(Decision::Skipped) | None => EXIT_SKIPPED,
    };
    std::io::Write::flush(&mut std::io::stdout())?;
    std::process::exit(status)
}

/// Runs the cycle and prints its report; returns its decision.
fn run(args: RetrainArgs) -> Result<Option<Decision>> {
    let config_path = &args.config.config;
    let config = args.config.load()?;
    // Before anything is created (a first model served, the models directory).
    if config.retrain.base.is_empty() || config.retrain.heldout.is_none() {
        bail!(
            "{}: a retraining cycle needs [retrain] base (gold training files) and heldout (a gold file never \
             trained on)",
            config_path.display()
        );
    }
    let registry = Registry::new(config.paths.models());
    if registry.current_name()?.is_none() {
        // Nothing has served yet: the configured model is the one to improve on.
        registry.serve(&config.paths.model)?;
    }
    let store = Store::new(&config.paths.annotated()).with_reference(Reference::new(&registry, &config.retrain)?);
    let mut progress = |line: &str| eprintln!("{line}");
    let options = retrain::CycleOptions { force: args.force, keep_rejected_in: args.keep_rejected };
    let report = retrain::run_cycle(&config.retrain, &registry, &store, &options, &mut progress)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(report.decision);
    }
    let decision = report.decision.map_or("none", Decision::name);
    let whole = report.gate.as_ref().and_then(|g| g.annotations_whole.as_ref());
    match (&report.candidate, whole) {
        (Some(c), Some(w)) => println!(
            "{decision}: {} (held-out LAS {:.2}, your text LAS {:.2}, its corrected arcs {:.2}) against {} ({:.2}, \
             {:.2}, {:.2})",
            c.model,
            c.heldout_las,
            w.candidate_las,
            c.annotations_las,
            report.current.model,
            report.current.heldout_las,
            w.serving_las,
            report.current.annotations_las
        ),
        (Some(c), None) => println!(
            "{decision}: {} (held-out LAS {:.2}) against {} ({:.2})",
            c.model, c.heldout_las, report.current.model, report.current.heldout_las
        ),
        (None, _) => println!("{decision}"),
    }
    for r in &report.reasons {
        println!("  {r}");
    }
    if let Some(f) = &report.report_file {
        println!("  report: {f}");
    }
    Ok(report.decision)
}
