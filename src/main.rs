//! The `spoolparse` command line: parses the arguments and dispatches to the subcommand's room
//! in [`commands`], which checks them and calls the library.

mod commands;

use clap::{Parser, Subcommand};

use commands::{annotate, annotations, bench, calibrate, daemon, eval, inspect, models, parse, retrain, train};

#[derive(Parser)]
#[command(name = "spoolparse", version, about = "Fast greedy arc-eager dependency parsing")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Train(train::TrainArgs),
    Parse(parse::ParseArgs),
    Inspect(inspect::InspectArgs),
    Daemon(daemon::DaemonArgs),
    Retrain(retrain::RetrainArgs),
    /// The daemon's models: which serves, and how it came to.
    Models {
        #[command(subcommand)]
        action: models::ModelsAction,
    },
    /// The stored annotations: where each segment came from, and removing one.
    Annotations {
        #[command(subcommand)]
        action: annotations::AnnotationsAction,
    },
    Bench(bench::BenchArgs),
    Eval(eval::EvalArgs),
    Calibrate(calibrate::CalibrateArgs),
    Annotate(annotate::AnnotateArgs),
}

fn main() {
    let cli = Cli::parse();
    // The daemon and the workbench log through `tracing` (journald priorities, timestamps elsewhere); the other
    // commands keep their plain stderr.
    let daemon = matches!(cli.command, Command::Daemon(_) | Command::Annotate(_));
    if daemon {
        spoolparse::base::logging::init();
    } else {
        restore_sigpipe();
    }
    let result = match cli.command {
        Command::Train(args) => train::exec(args),
        Command::Parse(args) => parse::exec(args),
        Command::Inspect(args) => inspect::exec(args),
        Command::Daemon(args) => daemon::exec(args),
        Command::Retrain(args) => retrain::exec(args),
        Command::Models { action } => models::exec(action),
        Command::Annotations { action } => annotations::exec(action),
        Command::Bench(args) => bench::exec(args),
        Command::Eval(args) => eval::exec(args),
        Command::Calibrate(args) => calibrate::exec(args),
        Command::Annotate(args) => annotate::exec(args),
    };
    if let Err(e) = result {
        let message = format!("error: {e:#}");
        if daemon {
            tracing::error!("{message}");
        } else {
            // A multi-line error (a TOML error's excerpt, with a caret under the fault) stays
            // readable, and every line carries the prefix.
            for line in message.lines() {
                eprintln!("spoolparse: {line}");
            }
        }
        std::process::exit(1);
    }
}

/// Gives the command-line tools the default SIGPIPE action, as other Unix filters have: with
/// Rust's default (ignored), `spoolparse eval A B | head -1` panicked on the closed pipe. The
/// daemon keeps it ignored: a closed pipe must be an error it handles, not its death.
fn restore_sigpipe() {
    #[cfg(target_os = "linux")]
    // SAFETY: resetting a signal's action to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
