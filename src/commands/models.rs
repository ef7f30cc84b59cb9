//! `spoolparse models`: the daemon's models directory: which model serves, how it came to, and
//! rolling back.

use anyhow::Result;
use clap::Subcommand;

use spoolparse::model::registry::{compact_utc, Registry};

use super::ConfigArg;

/// The daemon's models: which serves, and how it came to.
#[derive(Subcommand)]
pub enum ModelsAction {
    /// The history of the serving model (configured, promoted, rolled back), newest last.
    List {
        #[command(flatten)]
        config: ConfigArg,
    },
    /// Serve the model that served before the current one again (the daemon switches within a
    /// second, between files).
    Rollback {
        #[command(flatten)]
        config: ConfigArg,
    },
}

/// Runs `spoolparse models list|rollback`.
pub fn exec(action: ModelsAction) -> Result<()> {
    match action {
        ModelsAction::List { config } => list(&Registry::new(config.load()?.paths.models())),
        ModelsAction::Rollback { config } => {
            let change = Registry::new(config.load()?.paths.models()).rollback()?;
            println!("current: {} (was {})", change.model, change.from.unwrap_or_default());
            Ok(())
        }
    }
}

fn list(registry: &Registry) -> Result<()> {
    let current = registry.current_name()?;
    let history = registry.history()?;
    if history.is_empty() {
        println!("no model has served from {} yet", registry.dir().display());
    }
    let serving = history.iter().rposition(|c| Some(&c.model) == current.as_ref());
    for (i, c) in history.iter().enumerate() {
        let mark = if Some(i) == serving { "*" } else { " " };
        let present = if registry.dir().join(&c.model).exists() { "" } else { " (removed)" };
        println!("{mark} {}  {:<10} {}{present}", compact_utc(c.time), c.event.name(), c.model);
    }
    Ok(())
}
