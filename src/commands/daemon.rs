//! `spoolparse daemon`: the long-running spool worker (the library's [`spoolparse::daemon`]).

use anyhow::Result;
use clap::Args;

use super::ConfigArg;

/// Run the spool daemon: watch a spool directory, parse every file dropped into it, and
/// write its sentences split by confidence (see config/spoolparse.toml).
#[derive(Args)]
pub struct DaemonArgs {
    #[command(flatten)]
    config: ConfigArg,
}

/// Runs `spoolparse daemon` until SIGTERM or SIGINT.
pub fn exec(args: DaemonArgs) -> Result<()> {
    Ok(spoolparse::daemon::run(&args.config.config)?)
}
