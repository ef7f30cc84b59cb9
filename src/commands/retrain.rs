//! `spoolparse retrain`: one retraining cycle in the foreground, as the daemon runs on its
//! schedule.

use anyhow::{bail, Result};
use clap::Args;

use spoolparse::model::registry::Registry;
use spoolparse::retrain::{self, store::Store, Decision};

use super::ConfigArg;

/// Run one retraining cycle in the foreground, as the daemon does on its schedule: take in
/// `annotated/`, train on `retrain.base` plus every annotation, gate the candidate on
/// held-out data and promote it (`models/current`) if it is not worse. Prints the decision.
#[derive(Args)]
pub struct RetrainArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Train even with fewer than `retrain.min_new_sentences` new annotations.
    #[arg(long)]
    force: bool,
}

/// Runs `spoolparse retrain`.
pub fn exec(args: RetrainArgs) -> Result<()> {
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
    let store = Store::new(&config.paths.annotated()).with_root_label_of(&registry);
    let mut progress = |line: &str| eprintln!("{line}");
    let report = retrain::run_cycle(&config.retrain, &registry, &store, args.force, &mut progress)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    let decision = report.decision.map_or("none", Decision::name);
    match &report.candidate {
        Some(c) => println!(
            "{decision}: {} (held-out LAS {:.2}, annotations LAS {:.2}) against {} ({:.2}, {:.2})",
            c.model,
            c.heldout_las,
            c.annotations_las,
            report.current.model,
            report.current.heldout_las,
            report.current.annotations_las
        ),
        None => println!("{decision}"),
    }
    for r in &report.reasons {
        println!("  {r}");
    }
    if let Some(f) = &report.report_file {
        println!("  report: {f}");
    }
    Ok(())
}
