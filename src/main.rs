//! The `spoolparse` command line: parses arguments and calls the library.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser as ClapParser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use signal_hook::consts::{SIGINT, SIGTERM};

use spoolparse::corpus::Format;
use spoolparse::daemon::config::Config as DaemonConfig;
use spoolparse::learn::confidence::Reliability;
use spoolparse::learn::cw::CwOptions;
use spoolparse::learn::logistic::RdaOptions;
use spoolparse::model::file::{self as model_file, ModelFile, Precision, Recipe, WriteOptions};
use spoolparse::model::registry::{compact_utc, Registry};
use spoolparse::model::TrainingInfo;
use spoolparse::parse::bench;
use spoolparse::parse::files::{self, Publish};
use spoolparse::parse::pipeline::{Input, PipelineError, PipelineOptions};
use spoolparse::retrain::{self, store::Store, Decision};
use spoolparse::train::eval::{evaluate_files_calibrated, Calibration, Scores};
use spoolparse::train::{self, LearnerKind, Lifting, OracleKind, Progress, TaggerOptions, TrainOptions};
use spoolparse::transition::projective::Scheme;
use spoolparse::transition::System;

#[derive(ClapParser)]
#[command(name = "spoolparse", version, about = "Fast greedy arc-eager dependency parsing")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--pseudo-projective`: a scheme, or `none`.
#[derive(Clone, Copy)]
struct ProjectiveArg(Option<Scheme>);

fn parse_projective(text: &str) -> Result<ProjectiveArg, String> {
    match text {
        "none" => Ok(ProjectiveArg(None)),
        _ => text
            .parse()
            .map(|s| ProjectiveArg(Some(s)))
            .map_err(|_| format!("unknown pseudo-projective scheme {text:?}: head, head+path, path or none")),
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum OracleArg {
    Static,
    Dynamic,
}

#[derive(Clone, Copy, ValueEnum)]
enum QuantizeArg {
    F32,
    F16,
    I8,
}

impl From<QuantizeArg> for Precision {
    fn from(q: QuantizeArg) -> Precision {
        match q {
            QuantizeArg::F32 => Precision::F32,
            QuantizeArg::F16 => Precision::F16,
            QuantizeArg::I8 => Precision::I8,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Conllu,
    Conllx,
    /// One sentence per line, tokens separated by whitespace.
    Text,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Conllu => Format::Conllu,
            FormatArg::Conllx => Format::Conllx,
            FormatArg::Text => Format::Text,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Train a parser on gold CoNLL-U/CoNLL-X files.
    Train {
        /// Training files (`.zst` allowed).
        #[arg(long, required = true, num_args = 1..)]
        train: Vec<PathBuf>,
        /// Dev file: scored after every epoch; the best epoch by LAS is kept.
        #[arg(long)]
        dev: Option<PathBuf>,
        /// Where to write the model.
        #[arg(long)]
        output: PathBuf,
        /// Transition system: arc-eager or arc-hybrid.
        #[arg(long, default_value = "arc-eager")]
        system: System,
        /// Pseudo-projective training (Nivre & Nilsson 2005): non-projective training trees are
        /// lifted with this label encoding (head, head+path, path) and parses lowered back;
        /// `none` skips non-projective trees and parses projective trees only.
        #[arg(long, default_value = "head", value_parser = parse_projective)]
        pseudo_projective: ProjectiveArg,
        /// Pseudo-projective training: encoded labels seen fewer times lose their mark (each
        /// label is a class, and costs parse speed); their arcs stay lifted in the output.
        #[arg(long, default_value_t = train::DEFAULT_MIN_LIFTED)]
        lift_min_count: usize,
        #[arg(long, value_enum, default_value = "dynamic")]
        oracle: OracleArg,
        /// perceptron (averaged), logistic (AdaGrad-RDA, L1: sparse), cw (confidence-weighted),
        /// cost-sensitive (learning to search with a cost-sensitive passive-aggressive learner),
        /// pa (the same with a plain multi-class one).
        #[arg(long, default_value = "perceptron", value_parser = parse_learner)]
        learner: LearnerKind,
        /// Confidence-weighted learner: φ, the margin in standard deviations.
        #[arg(long, default_value_t = TrainOptions::default().cw.phi)]
        cw_phi: f32,
        /// Confidence-weighted learner: every weight's prior variance.
        #[arg(long, default_value_t = TrainOptions::default().cw.variance)]
        cw_variance: f32,
        /// Passive-aggressive learners: the largest step C.
        #[arg(long, default_value_t = TrainOptions::default().pa_c)]
        pa_c: f32,
        /// Learning to search: the reference policy rolls in with probability (1 − α)^(epoch − 1).
        #[arg(long, default_value_t = TrainOptions::default().rollin_alpha)]
        rollin_alpha: f64,
        /// Leave out features seen fewer than N times on the oracle's path through the training
        /// data (1: keep all). Default 5 for perceptron, pa and cost-sensitive (up to +0.7 dev
        /// LAS, half the weights), 1 for logistic (it hurts) and cw (no gain on average).
        #[arg(long)]
        min_feature_count: Option<u32>,
        /// Logistic learner: learning rate α.
        #[arg(long, default_value_t = 1.0)]
        rda_alpha: f32,
        /// Logistic learner: ridge ρ.
        #[arg(long, default_value_t = 0.01)]
        rda_rho: f32,
        /// Logistic learner: L1 penalty λ (default 1/(20·training tokens)).
        #[arg(long)]
        rda_lambda: Option<f32>,
        /// Passes over the training data (at least 1).
        #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..))]
        epochs: u32,
        /// Exploration starts after this many epochs (default 2 for the perceptron, 1 for the
        /// logistic learner).
        #[arg(long)]
        explore_k: Option<u32>,
        /// Probability of following a zero-cost transition instead of the prediction.
        #[arg(long, default_value_t = 0.1)]
        explore_p: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Weight precision in the model file. i8 by default: dev LAS within 0.03 of f32 on
        /// every shared treebank (en_ewt 87.71 / 87.72, el_gdt 86.44 / 86.41, hu_szeged 77.66 /
        /// 77.63), a file 28% smaller, parsing a few % faster and scaling better on 2 threads.
        #[arg(long, value_enum, default_value = "i8")]
        quantize: QuantizeArg,
        /// Leave out weights whose absolute value is below this.
        #[arg(long, default_value_t = 0.0)]
        prune: f32,
        /// Prune further, by the smallest threshold at which the parser's weight table fits in
        /// this many MB (10^6 bytes), so that a parser-only model stays under 10 MB; 0: no bound.
        #[arg(long, default_value_t = 9.5)]
        max_table_mb: f64,
        /// Also train a part-of-speech tagger (UPOS and XPOS) for tokenized text; the parser is
        /// then trained without LEMMA and FEATS, which tokenized text does not have.
        #[arg(long)]
        tagger: bool,
        /// With --tagger: train the parser on tags predicted by K-fold jackknifing (0: on gold
        /// tags).
        #[arg(long, default_value_t = 4)]
        jackknife: usize,
        /// With --tagger: tagger training epochs (at least 1).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        tagger_epochs: u32,
        /// Replace an existing --output (atomically: whoever has the old file open keeps it);
        /// without this an existing output is an error, before any training.
        #[arg(long)]
        overwrite: bool,
    },
    /// Parse CoNLL-U/CoNLL-X: HEAD and DEPREL are filled, every other byte is kept.
    Parse {
        #[arg(long)]
        model: PathBuf,
        /// Input files (`-` or none: stdin).
        inputs: Vec<PathBuf>,
        /// Output file (`-`: stdout; `.zst`: compressed).
        #[arg(long, default_value = "-")]
        output: PathBuf,
        /// Parsing threads (input order is kept; at least 1) [default: one per CPU this process
        /// may use].
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        threads: Option<u32>,
        /// Input format for every input (default: from the file name; `.txt` is text).
        #[arg(long, value_enum)]
        format: Option<FormatArg>,
        /// Replace UPOS and XPOS of CoNLL-U/CoNLL-X input with the tagger's before parsing.
        #[arg(long)]
        retag: bool,
        /// Do not write `Conf=` (MISC), `# confidence` and `# tree_prob` into CoNLL-U output.
        #[arg(long)]
        no_confidence: bool,
        /// Sentences whose confidence (mean arc confidence) is below this go to --rejected.
        #[arg(long, requires = "rejected")]
        min_confidence: Option<f64>,
        /// Output for the sentences below --min-confidence (`.zst`: compressed).
        #[arg(long, requires = "min_confidence")]
        rejected: Option<PathBuf>,
        /// Do not check the model's checksums before parsing (saves a few milliseconds).
        #[arg(long)]
        no_verify: bool,
        /// Replace an existing output file. Without this an existing output file is an error,
        /// before any parsing; with it the old file stays whole until the new one is complete.
        #[arg(long)]
        overwrite: bool,
        /// Sentences with more words than this are bad input.
        #[arg(long, default_value_t = spoolparse::corpus::Limits::default().max_words)]
        max_sentence_words: usize,
        /// Sentences (and lines) longer than this many bytes are bad input.
        #[arg(long, default_value_t = spoolparse::corpus::Limits::default().max_bytes)]
        max_sentence_bytes: usize,
    },
    /// Print a model's metadata and sections.
    Inspect {
        model: PathBuf,
        /// Also check every section's checksum (reads the whole file).
        #[arg(long)]
        verify: bool,
    },
    /// Run the spool daemon: watch a spool directory, parse every file dropped into it, and
    /// write its sentences split by confidence (see config/spoolparse.toml).
    Daemon {
        /// The TOML configuration.
        #[arg(long, default_value = "config/spoolparse.toml")]
        config: PathBuf,
    },
    /// Run one retraining cycle in the foreground, as the daemon does on its schedule: take in
    /// `annotated/`, train on `retrain.base` plus every annotation, gate the candidate on
    /// held-out data and promote it (`models/current`) if it is not worse. Prints the decision.
    Retrain {
        #[arg(long, default_value = "config/spoolparse.toml")]
        config: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Train even with fewer than `retrain.min_new_sentences` new annotations.
        #[arg(long)]
        force: bool,
    },
    /// The daemon's models: which serves, and how it came to.
    Models {
        #[command(subcommand)]
        action: ModelsAction,
    },
    /// Parse speed in words/s on a file held in memory (no I/O, model load excluded).
    Bench {
        #[arg(long)]
        model: PathBuf,
        file: PathBuf,
        /// Parsing threads (at least 1).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        threads: u32,
        /// Measure for at least this long.
        #[arg(long, default_value_t = 5.0, value_parser = seconds)]
        seconds: f64,
        /// Time the tagger alone instead of the parser.
        #[arg(long)]
        tag_only: bool,
    },
    /// UAS/LAS of a parsed file against a gold file (CoNLL 2018 shared-task definitions).
    Eval {
        gold: PathBuf,
        system: PathBuf,
        /// Print one JSON document instead of tables (with --calibration, the calibration's
        /// tables under `calibration`).
        #[arg(long)]
        json: bool,
        /// Also report the calibration of the system's confidences (reliability tables, ECE,
        /// coverage); a SYSTEM without any `Conf=` is an error.
        #[arg(long)]
        calibration: bool,
        /// With --calibration: also the calibration of transitions, re-parsing GOLD with this
        /// model.
        #[arg(long, requires = "calibration")]
        model: Option<PathBuf>,
        /// With --calibration: draw the reliability diagram and coverage curve into this SVG.
        #[arg(long, requires = "calibration")]
        plot: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ModelsAction {
    /// The history of the serving model (configured, promoted, rolled back), newest last.
    List {
        #[arg(long, default_value = "config/spoolparse.toml")]
        config: PathBuf,
    },
    /// Serve the model that served before the current one again (the daemon switches within a
    /// second, between files).
    Rollback {
        #[arg(long, default_value = "config/spoolparse.toml")]
        config: PathBuf,
    },
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

fn main() {
    let cli = Cli::parse();
    // The daemon logs through `tracing` (journald priorities, timestamps elsewhere); the other
    // commands keep their plain stderr.
    let daemon = matches!(cli.command, Command::Daemon { .. });
    if daemon {
        spoolparse::base::logging::init();
    } else {
        restore_sigpipe();
    }
    if let Err(e) = run(cli) {
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

fn parse_learner(name: &str) -> Result<LearnerKind, String> {
    LearnerKind::from_name(name).ok_or_else(|| {
        let names: Vec<_> = LearnerKind::ALL.iter().map(|k| k.name()).collect();
        format!("unknown learner {name:?}; one of {}", names.join(", "))
    })
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Train {
            train,
            dev,
            output,
            system,
            pseudo_projective,
            lift_min_count,
            oracle,
            learner,
            cw_phi,
            cw_variance,
            pa_c,
            rollin_alpha,
            min_feature_count,
            rda_alpha,
            rda_rho,
            rda_lambda,
            epochs,
            explore_k,
            explore_p,
            seed,
            quantize,
            prune,
            max_table_mb,
            tagger,
            jackknife,
            tagger_epochs,
            overwrite,
        } => {
            if !(0.0..=1.0).contains(&explore_p) {
                bail!("--explore-p must be between 0 and 1, got {explore_p}");
            }
            let oracle = match oracle {
                OracleArg::Static => OracleKind::Static,
                OracleArg::Dynamic => OracleKind::Dynamic,
            };
            if !(0.0..=1.0).contains(&rollin_alpha) {
                bail!("--rollin-alpha must be between 0 and 1, got {rollin_alpha}");
            }
            if !(cw_phi > 0.0 && cw_variance > 0.0 && pa_c > 0.0) {
                bail!("--cw-phi, --cw-variance and --pa-c must be positive");
            }
            let rda = RdaOptions { alpha: rda_alpha, rho: rda_rho, lambda: rda_lambda };
            let opts = TrainOptions {
                system,
                learner,
                oracle,
                epochs,
                explore_k: explore_k.unwrap_or(learner.default_explore_k()),
                explore_p,
                seed,
                rda,
                cw: CwOptions { phi: cw_phi, variance: cw_variance },
                pa_c,
                rollin_alpha,
                min_feature_count: min_feature_count.unwrap_or(learner.default_min_feature_count()),
            };
            let max_table_bytes = (max_table_mb > 0.0).then_some((max_table_mb * 1e6) as u64);
            let write = WriteOptions { precision: quantize.into(), prune_below: prune, max_table_bytes };
            let tagger = tagger.then_some(TaggerOptions { epochs: tagger_epochs, jackknife });
            let lifting = pseudo_projective.0.map(|scheme| Lifting { scheme, min_count: lift_min_count });
            let output = ModelOutput { path: &output, overwrite };
            output.check(&train, dev.as_deref())?;
            run_train(&train, dev.as_deref(), output, &opts, write, tagger, lifting)
        }
        Command::Parse {
            model,
            inputs,
            output,
            threads,
            format,
            retag,
            no_confidence,
            min_confidence,
            rejected,
            no_verify,
            overwrite,
            max_sentence_words,
            max_sentence_bytes,
        } => {
            let opts = PipelineOptions {
                threads: threads.map_or_else(spoolparse::base::available_cpus, |t| t as usize).max(1),
                format: format.map(Format::from),
                retag,
                confidence: !no_confidence,
                min_confidence,
                limits: spoolparse::corpus::Limits { max_words: max_sentence_words, max_bytes: max_sentence_bytes },
                ..PipelineOptions::default()
            };
            run_parse(&model, &inputs, &output, rejected.as_deref(), opts, !no_verify, overwrite)
        }
        Command::Inspect { model, verify } => run_inspect(&model, verify),
        Command::Daemon { config } => Ok(spoolparse::daemon::run(&config)?),
        Command::Bench { model, file, threads, seconds, tag_only } => {
            let model = ModelFile::open(&model)?;
            let task = if tag_only { bench::BenchTask::Tag } else { bench::BenchTask::Parse };
            let r = bench::run(&model, &file, task, threads as usize, seconds)?;
            if r.words == 0 {
                bail!("{}: no words to time", file.display());
            }
            let cpu = r.words_per_cpu_second().map(|w| format!(", {w:.0} words per CPU-second")).unwrap_or_default();
            println!(
                "{} {:.0} words/s ({} words x {} rounds in {:.2} s, {} thread(s){cpu}, {})",
                if tag_only { "tagging" } else { "parsing" },
                r.words_per_second(),
                r.words,
                r.rounds,
                r.seconds,
                threads,
                file.display()
            );
            Ok(())
        }
        Command::Retrain { config, json, force } => run_retrain(&config, json, force),
        Command::Models { action: ModelsAction::List { config } } => {
            let config = DaemonConfig::load(&config)?;
            let registry = Registry::new(config.paths.models());
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
        Command::Models { action: ModelsAction::Rollback { config } } => {
            let config = DaemonConfig::load(&config)?;
            let change = Registry::new(config.paths.models()).rollback()?;
            println!("current: {} (was {})", change.model, change.from.unwrap_or_default());
            Ok(())
        }
        Command::Eval { gold, system, json, calibration, model, plot } => {
            for input in [&gold, &system].into_iter().chain(&model) {
                if plot.as_deref().is_some_and(|p| spoolparse::base::io::same_file(p, input)) {
                    bail!("--plot {}: the plot cannot be written over an input", input.display());
                }
            }
            let (counts, cal) = evaluate_files_calibrated(&gold, &system)?;
            let s = counts.scores();
            if !calibration {
                if json {
                    println!("{}", serde_json::to_string_pretty(&s)?);
                } else {
                    print_scores(&s);
                }
                return Ok(());
            }
            // Tables of nothing would read as perfectly calibrated (ECE 0): refused before any
            // output.
            if cal.arcs.total() == 0 {
                bail!(
                    "{}: no word has a confidence (Conf= in MISC), so there is no calibration to report: \
                     parse without --no-confidence",
                    system.display()
                );
            }
            let transitions = match model {
                Some(model) => Some(train::transition_calibration(&ModelFile::open(&model)?, &gold)?),
                None => None,
            };
            if json {
                // One JSON document: the scores, and the calibration beside them.
                let mut doc = serde_json::to_value(s)?;
                doc["calibration"] = calibration_json(&cal, transitions.as_ref());
                println!("{}", serde_json::to_string_pretty(&doc)?);
            } else {
                print_scores(&s);
                if let Some(t) = &transitions {
                    print_reliability("transitions (zero-cost)", t);
                }
                print_calibration(&cal);
            }
            if let Some(plot) = plot {
                spoolparse::train::plot::calibration_svg(&plot, &cal)?;
            }
            Ok(())
        }
    }
}

fn run_retrain(config_path: &Path, json: bool, force: bool) -> Result<()> {
    let config = DaemonConfig::load(config_path)?;
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
    let report = retrain::run_cycle(&config.retrain, &registry, &store, force, &mut progress)?;
    if json {
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

fn print_reliability(name: &str, r: &Reliability) {
    println!("\nCalibration of {name}: ECE {:.4}", r.ece());
    println!("bin       | count  | mean conf | % correct");
    for b in r.bins() {
        println!(
            "{:.1}-{:.1}   | {:6} | {:9.3} | {:9.2}",
            b.lower,
            b.upper,
            b.count,
            b.mean_confidence,
            100.0 * b.accuracy
        );
    }
}

/// A duration in seconds: a finite number, not negative (`bench --seconds inf` never ended).
fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(s),
        Ok(_) => Err("must be a finite number of seconds, 0 or more".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Confidence thresholds of the coverage table.
const COVERAGE_THRESHOLDS: [f64; 8] = [0.0, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95];

/// Shares of the most confident sentences in the table of what keeping them buys.
const TOP_SHARES: [f64; 5] = [0.5, 0.7, 0.8, 0.9, 0.95];

fn print_calibration(cal: &Calibration) {
    print_reliability("arcs (labeled attachment)", &cal.arcs);
    print_reliability("sentences (LAS)", &cal.sentences);
    println!("bin       | % of sentences whose LAS is in the same bin");
    for (b, share) in cal.sentence_bin_agreement().iter().enumerate() {
        println!("{:.1}-{:.1}   | {:6.2}", b as f64 / 10.0, (b + 1) as f64 / 10.0, share);
    }
    println!("\nCoverage: threshold | % sentences kept | LAS of kept");
    for c in cal.coverage(&COVERAGE_THRESHOLDS) {
        println!("{:9.2} | {:16.2} | {:6.2}", c.threshold, c.kept, c.las);
    }
    println!("\nMost confident sentences kept | % of words | LAS of kept");
    for share in TOP_SHARES {
        let (las, words) = cal.top_sentences(share);
        println!("{:29.0}% | {:10.1} | {:6.2}", share * 100.0, words, las);
    }
}

/// The tables of [`print_calibration`] (and of transitions, with `--model`) as JSON.
fn calibration_json(cal: &Calibration, transitions: Option<&Reliability>) -> serde_json::Value {
    let table = |r: &Reliability| serde_json::json!({ "ece": r.ece(), "bins": r.bins() });
    let top: Vec<serde_json::Value> = TOP_SHARES
        .iter()
        .map(|&share| {
            let (las, words) = cal.top_sentences(share);
            serde_json::json!({ "share": share, "words": words, "las": las })
        })
        .collect();
    serde_json::json!({
        "transitions": transitions.map(table),
        "arcs": table(&cal.arcs),
        "sentences": table(&cal.sentences),
        "sentence_bin_agreement": cal.sentence_bin_agreement(),
        "coverage": cal.coverage(&COVERAGE_THRESHOLDS),
        "most_confident": top,
    })
}

fn print_scores(s: &Scores) {
    println!("Metric      | Words  | Score");
    println!("UAS         | {:6} | {:6.2}", s.words, s.uas);
    println!("LAS         | {:6} | {:6.2}", s.words, s.las);
    println!("UAS (-punct)| {:6} | {:6.2}", s.words_no_punct, s.uas_no_punct);
    println!("LAS (-punct)| {:6} | {:6.2}", s.words_no_punct, s.las_no_punct);
    println!("UPOS        | {:6} | {:6.2}", s.words, s.upos);
    println!("XPOS        | {:6} | {:6.2}", s.words, s.xpos);
}

/// Where `train` writes its model, and whether it may replace an existing file.
#[derive(Clone, Copy)]
struct ModelOutput<'a> {
    path: &'a Path,
    overwrite: bool,
}

impl ModelOutput<'_> {
    /// Never over a training or dev file, over an existing file only with `overwrite`, and
    /// into a directory that exists. Checked before training, which may take hours, and again
    /// before writing.
    fn check(&self, train: &[PathBuf], dev: Option<&Path>) -> Result<()> {
        let path = self.path;
        for input in train.iter().map(PathBuf::as_path).chain(dev) {
            if spoolparse::base::io::same_file(path, input) {
                bail!("{}: the model cannot be written over the input {}", path.display(), input.display());
            }
        }
        if !self.overwrite && std::fs::symlink_metadata(path).is_ok() {
            bail!("{} exists; --overwrite replaces it", path.display());
        }
        let dir = spoolparse::base::io::parent_dir(path);
        if !dir.is_dir() {
            bail!("{}: no directory {} to write the model in", path.display(), dir.display());
        }
        Ok(())
    }
}

fn run_train(
    train: &[PathBuf],
    dev: Option<&Path>,
    output: ModelOutput,
    opts: &TrainOptions,
    write: WriteOptions,
    tagger: Option<TaggerOptions>,
    lifting: Option<Lifting>,
) -> Result<()> {
    let prepared = train::prepare(train, dev, tagger, lifting, opts.seed)?;
    if let (Some(t), Some((upos, xpos))) = (tagger, prepared.dev_tagging) {
        eprintln!(
            "tagger: dev UPOS {upos:.2} XPOS {xpos:.2}; parser trained on {}",
            if t.jackknife >= 2 { format!("{}-fold jackknifed tags", t.jackknife) } else { "gold tags".to_string() }
        );
    }
    let set = &prepared.set;
    let lifted = match set.projective {
        Some(scheme) => format!(
            "{} non-projective lifted ({} lifts, {scheme}; {} rare encoded labels left unmarked)",
            set.lifted_sentences, set.lifts, set.stripped_rare_lifts
        ),
        None => format!("{} non-projective skipped", set.skipped_nonprojective),
    };
    eprintln!(
        "training on {} sentences, {} words ({lifted}, {} not single-rooted skipped); {}, oracle {}",
        set.sentences.len(),
        set.words,
        set.skipped_root,
        opts.system,
        opts.oracle.name()
    );
    if set.sentences.is_empty() {
        bail!("no usable training sentence in {train:?}");
    }
    let (dev_upos, dev_xpos) = prepared.dev_tagging.unwrap_or_default();
    let info = TrainingInfo {
        train_files: train.iter().map(|p| p.display().to_string()).collect(),
        dev_file: dev.map(|p| p.display().to_string()),
        jackknife: tagger.map_or(0, |t| if t.jackknife >= 2 { t.jackknife as u32 } else { 0 }),
        dev_upos,
        dev_xpos,
        ..TrainingInfo::default()
    };
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(set.sentences.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("epoch {prefix} [{bar:40}] {pos}/{len} sentences {per_sec} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let mut on_progress = |p: Progress| match p {
        Progress::Sentences { epoch, done, .. } => {
            if let Some(bar) = &bar {
                bar.set_prefix(epoch.to_string());
                bar.set_position(done as u64);
            }
        }
        Progress::Epoch(r) => {
            let line = match &r.dev {
                Some(d) => format!(
                    "epoch {:2}: dev UAS {:.2} LAS {:.2} (no punct UAS {:.2} LAS {:.2}), {:.0} words/s, {} of {} transitions wrong",
                    r.epoch, d.uas, d.las, d.uas_no_punct, d.las_no_punct,
                    r.words as f64 / r.seconds, r.errors, r.transitions
                ),
                None => format!(
                    "epoch {:2}: {:.0} words/s, {} of {} transitions wrong",
                    r.epoch, r.words as f64 / r.seconds, r.errors, r.transitions
                ),
            };
            match &bar {
                Some(bar) => bar.println(line),
                None => eprintln!("{line}"),
            }
        }
    };
    let mut model = train::train(set, prepared.dev.as_deref(), opts, info, &mut on_progress);
    model.tagger = prepared.tagger;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let recipe = Recipe {
        learner: opts.learner.name().to_string(),
        rda_alpha: opts.rda.alpha,
        rda_rho: opts.rda.rho,
        rda_lambda: opts.rda.lambda,
        precision: write.precision,
        prune_below: write.prune_below,
        max_table_bytes: write.max_table_bytes,
        lift_min_count: lifting.map(|l| l.min_count),
        cw_phi: Some(opts.cw.phi),
        cw_variance: Some(opts.cw.variance),
        pa_c: Some(opts.pa_c),
        rollin_alpha: Some(opts.rollin_alpha),
        min_feature_count: Some(opts.min_feature_count),
    };
    let extras = model_file::Extras { recipe: Some(&recipe), tagger_from: None };
    // Again: the output may have appeared while training.
    output.check(train, dev)?;
    let output = output.path;
    let meta = model_file::write_with(&model, output, write, extras)
        .with_context(|| format!("writing the model to {}", output.display()))?;
    // Without --dev there is no dev LAS: the last epoch is kept.
    let chosen = match dev {
        Some(_) => format!("dev LAS {:.2}", model.info.dev_las),
        None => "the last; no --dev to choose by".to_string(),
    };
    eprintln!(
        "kept epoch {} ({chosen}); {} non-zero weights over {} features, {} stored; wrote {}",
        model.info.best_epoch,
        model.weights.nonzero(),
        model.weights.features(),
        meta.weights,
        output.display()
    );
    // The dev scores above are those of the full-precision weights: say what was stored scores.
    if let Some(dev) =
        prepared.dev.as_deref().filter(|_| meta.table.precision != Precision::F32 || meta.pruned_below > 0.0)
    {
        let file = ModelFile::open(output)?;
        let s = train::evaluate_dev(file.encoding(), dev, file.weights(), &file.meta().labels, file.meta().fallback);
        eprintln!(
            "as stored ({:?}, pruned below {}): dev UAS {:.2} LAS {:.2} (no punct UAS {:.2} LAS {:.2})",
            meta.table.precision, meta.pruned_below, s.uas, s.las, s.uas_no_punct, s.las_no_punct
        );
    }
    Ok(())
}

fn run_parse(
    model_path: &Path,
    inputs: &[PathBuf],
    output: &Path,
    rejected: Option<&Path>,
    opts: PipelineOptions,
    verify: bool,
    overwrite: bool,
) -> Result<()> {
    let publish = publish_for(output, rejected, overwrite)?;
    let loading = Instant::now();
    let model = Arc::new(files::open_model(model_path, verify)?);
    let load_secs = loading.elapsed().as_secs_f64();
    let inputs: Vec<Input> = if inputs.is_empty() {
        vec![Input { path: PathBuf::from("-"), range: None }]
    } else {
        inputs.iter().map(|p| Input { path: p.clone(), range: None }).collect()
    };
    // Ctrl-C or SIGTERM stops parsing at the next sentence, and the temporary outputs are
    // removed; a second one ends the process at once (say, while it waits on a terminal).
    let interrupted = Arc::new(AtomicBool::new(false));
    let by = Arc::new(AtomicUsize::new(0));
    for signal in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(signal, 128 + signal, Arc::clone(&interrupted))?;
        signal_hook::flag::register(signal, Arc::clone(&interrupted))?;
        signal_hook::flag::register_usize(signal, Arc::clone(&by), signal as usize)?;
    }
    let started = Instant::now();
    let stats = match files::parse_to_files(&model, &inputs, output, rejected, opts, publish, Some(&interrupted)) {
        Err(files::FilesError::Pipeline(PipelineError::Cancelled)) => {
            let left = match publish {
                Publish::InPlace => "what was written so far stays",
                Publish::Atomic { .. } => "no output was written",
            };
            eprintln!("spoolparse: interrupted; {left}");
            // As a shell reports a process a signal ended: 128 + the signal.
            std::process::exit(128 + by.load(Ordering::Relaxed) as i32);
        }
        result => result?,
    };
    if let Some(p) = rejected {
        eprintln!("{} of {} sentences below --min-confidence went to {}", stats.rejected, stats.sentences, p.display());
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "parsed {} sentences, {} words in {secs:.2} s ({:.0} words/s, {} thread(s), reading and writing included; \
         model mapped in {:.1} ms before)",
        stats.sentences,
        stats.words,
        stats.words as f64 / secs.max(1e-9),
        opts.threads,
        load_secs * 1000.0
    );
    Ok(())
}

/// How `parse` writes its outputs. Files are written under a temporary name and renamed when
/// complete, so that a failed or interrupted run leaves no part of one and an existing file is
/// replaced only with `overwrite`. Stdout (`-`), a device or a pipe can only be written in
/// place; if an output is one of those, both are, and an existing file among them is still
/// refused without `overwrite`.
fn publish_for(output: &Path, rejected: Option<&Path>, overwrite: bool) -> Result<Publish> {
    let outputs: Vec<&Path> = std::iter::once(output).chain(rejected).collect();
    // Followed through links: a link to /dev/null is a device.
    let in_place = |p: &Path| p.as_os_str() == "-" || std::fs::metadata(p).is_ok_and(|m| !m.is_file());
    if !overwrite {
        for p in outputs.iter().filter(|p| !in_place(p)) {
            if std::fs::symlink_metadata(p).is_ok() {
                bail!("{} exists; --overwrite replaces it", p.display());
            }
        }
    }
    if outputs.iter().any(|p| in_place(p)) {
        return Ok(Publish::InPlace);
    }
    Ok(Publish::Atomic { replace: overwrite })
}

fn run_inspect(path: &Path, verify: bool) -> Result<()> {
    let model = ModelFile::open(path)?;
    if verify {
        model.verify()?;
    }
    let m = model.meta();
    println!("model           {}", path.display());
    println!("file size       {} bytes", model.file_len());
    println!("transitions     {}", m.transition_system);
    println!("feature set     {}", m.feature_set);
    println!(
        "labels          {} ({})",
        m.labels.len(),
        (0..m.labels.len())
            .map(|i| m.labels.name(spoolparse::base::label::Label::from_index(i)))
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "weights         {} in {} features, {:?}, {} table slots, pruned below {}",
        m.weights, m.features, m.table.precision, m.table.slots, m.pruned_below
    );
    println!("temperature     {}", m.temperature);
    println!("training        {}", serde_json::to_string(&m.info)?);
    for s in model.sections() {
        println!("section {:<7} offset {:>10} length {:>10} crc32 {:08x}", s.name(), s.offset, s.len, s.crc);
    }
    if verify {
        println!("checksums       all sections verified");
    }
    Ok(())
}
