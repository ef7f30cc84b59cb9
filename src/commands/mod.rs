//! The subcommands of `spoolparse`, one file each (as cargo keeps them): its clap arguments,
//! their checks into the library's option types, and its `exec`. Nothing here parses, trains or
//! serves: that is the library's; a command only turns a command line into a library call and
//! its result into what the user reads.

pub mod annotate;
pub mod annotations;
pub mod bench;
pub mod calibrate;
pub mod daemon;
pub mod eval;
pub mod inspect;
pub mod models;
pub mod parse;
pub mod retrain;
pub mod train;

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use spoolparse::daemon::config::Config;

/// `--config`, for the commands that work on the daemon's configuration.
#[derive(Args)]
pub struct ConfigArg {
    /// The daemon's TOML configuration.
    #[arg(long, default_value = "config/spoolparse.toml")]
    pub config: PathBuf,
}

impl ConfigArg {
    /// Reads and checks the configuration.
    pub fn load(&self) -> Result<Config> {
        Ok(Config::load(&self.config)?)
    }
}
