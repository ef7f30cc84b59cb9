//! `spoolparse annotations`: the annotation store's segments, where each came from, and taking
//! one out again.

use anyhow::{Context, Result};
use clap::Subcommand;

use spoolparse::model::registry::compact_utc;
use spoolparse::retrain::store::Store;

use super::ConfigArg;

/// The stored annotations: one segment per file taken in from `annotated/`.
#[derive(Subcommand)]
pub enum AnnotationsAction {
    /// Every segment: number, when, source file, annotators, sentences and arcs stored.
    List {
        #[command(flatten)]
        config: ConfigArg,
    },
    /// One segment's provenance and sentences.
    Show {
        #[command(flatten)]
        config: ConfigArg,
        /// The segment's number, as `list` shows it.
        number: u64,
    },
    /// Take a segment out of the store (moved into `annotated/store/removed/`, not deleted):
    /// the next retraining cycle no longer trains on it.
    Remove {
        #[command(flatten)]
        config: ConfigArg,
        /// The segment's number, as `list` shows it.
        number: u64,
    },
}

/// Runs `spoolparse annotations list|show|remove`.
pub fn exec(action: AnnotationsAction) -> Result<()> {
    let store = |config: &ConfigArg| -> Result<Store> { Ok(Store::new(&config.load()?.paths.annotated())) };
    match action {
        AnnotationsAction::List { config } => {
            let store = store(&config)?;
            println!("{:>8}  {:<16}  {:>9}  {:>6}  source (annotators)", "segment", "stored", "sentences", "arcs");
            for s in store.list()? {
                match &s.provenance {
                    Some(p) => println!(
                        "{:>8}  {:<16}  {:>9}  {:>6}  {} ({})",
                        s.number,
                        compact_utc(p.time),
                        p.sentences,
                        p.arcs,
                        p.source,
                        if p.annotators.is_empty() { "none named".to_string() } else { p.annotators.join(", ") }
                    ),
                    None => println!("{:>8}  {:<16}  {:>9}  {:>6}  (no provenance recorded)", s.number, "?", "?", "?"),
                }
            }
            Ok(())
        }
        AnnotationsAction::Show { config, number } => {
            let store = store(&config)?;
            let segment = store.list()?.into_iter().find(|s| s.number == number);
            let segment = segment.with_context(|| format!("no segment {number} in {}", store.segments.display()))?;
            match &segment.provenance {
                Some(p) => println!(
                    "# segment {number}: {} stored {}, annotators: {}, {} sentences, {} arcs",
                    p.source,
                    compact_utc(p.time),
                    if p.annotators.is_empty() { "none named".to_string() } else { p.annotators.join(", ") },
                    p.sentences,
                    p.arcs
                ),
                None => println!("# segment {number}: no provenance recorded"),
            }
            let text = std::fs::read_to_string(&segment.path)
                .with_context(|| format!("reading {}", segment.path.display()))?;
            print!("{text}");
            Ok(())
        }
        AnnotationsAction::Remove { config, number } => {
            let to = store(&config)?.remove(number)?;
            println!("removed segment {number} (moved to {}; move it back to restore it)", to.display());
            Ok(())
        }
    }
}
