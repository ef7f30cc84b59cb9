//! `spoolparse annotate`: serves the correction workbench (the library's
//! [`spoolparse::workbench`]).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;

use spoolparse::workbench::{self, Options};

use super::ConfigArg;

/// Serve the correction workbench: a page and JSON API that queue the daemon's low-confidence
/// sentences, re-parse them around corrections and write the answers into `annotated/`.
#[derive(Args)]
pub struct AnnotateArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Listen here instead of `[annotate] listen`: an address or a name with a port
    /// (`127.0.0.1:8040`, `localhost:8040`); loopback unless tokens are configured.
    #[arg(long)]
    listen: Option<String>,
    /// CoNLL-U files to queue besides the daemon's `lowconf/` (words marked `LowConf=Yes`).
    #[arg(long)]
    input: Vec<PathBuf>,
    /// One task in this many is a sentence of the uniform sample of what was published, to be
    /// reviewed whole (instead of `[annotate] sample_every`; 0: none, 1: every task while the
    /// sample lasts).
    #[arg(long, value_name = "N")]
    sample_every: Option<u32>,
}

/// Runs `spoolparse annotate` until SIGTERM or SIGINT.
pub fn exec(args: AnnotateArgs) -> Result<()> {
    let config = args.config.load()?;
    let stop = Arc::new(AtomicBool::new(false));
    workbench::stop_on_signals(&stop).context("installing the signal handlers")?;
    let options = Options { listen: args.listen, inputs: args.input, sample_every: args.sample_every };
    Ok(workbench::run(&config, &options, &stop)?)
}
