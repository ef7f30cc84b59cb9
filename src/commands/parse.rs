//! `spoolparse parse`: parses files (or stdin) with a model, outside the daemon.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use clap::{Args, ValueEnum};
use signal_hook::consts::{SIGINT, SIGTERM};

use spoolparse::corpus::{Format, Limits};
use spoolparse::parse::files::{self, Publish};
use spoolparse::parse::fit::Retag;
use spoolparse::parse::pipeline::{Input, PipelineError, PipelineOptions};
use spoolparse::parse::precision::Threshold;
use spoolparse::parse::raw::RawSentences;

/// Parse CoNLL-U/CoNLL-X: HEAD and DEPREL are filled. Every value the input gives is kept (the
/// model's analysis fills only what it lacks, `_`), but with `--retag` (always), which
/// replaces the analysis and keeps each replaced value in MISC. DEPS are kept, with `#
/// spoolparse_deps = input` where the parsed tree is not the input's. Confidences go into MISC
/// and comments.
#[derive(Args)]
pub struct ParseArgs {
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
    /// Input format for every input (default: from the file name; `.txt` is text, `.raw` raw
    /// text).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// When the model's tagger tags CoNLL-U/CoNLL-X input. `auto`: when most of a file's first
    /// 1000 words have tags the model was not trained on (XPOS `_`, another tag set); it then
    /// predicts only what the file lacks, under what it gives: a given UPOS stays and the XPOS
    /// is chosen among its tags; every given UPOS, XPOS, FEATS and LEMMA is kept (the parser
    /// reads the tagger's XPOS where the file's is of another tag set), and FEATS and LEMMA are
    /// predicted only in a file that has none. `never`: the file's tags are parsed as they are.
    /// `always` (a bare `--retag`): the model's whole analysis replaces UPOS, XPOS, FEATS and
    /// LEMMA, each replaced value kept in MISC (`OrigUPOS=`, `OrigXPOS=`, `OrigFEATS=`,
    /// `OrigLEMMA=`, `|` as `\p`). What was replaced or kept is said on stderr, per file and
    /// column.
    #[arg(long, value_enum, default_value = "auto", num_args = 0..=1, require_equals = true,
          default_missing_value = "always")]
    retag: RetagArg,
    /// Where raw text's sentences end: `model`, where the model's tokenizer ends them (and at
    /// blank lines), or `lines`, at every line end and nowhere else (queries, titles, one
    /// sentence per line: a treebank's tokenizer runs unpunctuated lines together).
    #[arg(long, value_enum, default_value = "model")]
    raw_sentences: RawSentencesArg,
    /// Do not write `Conf=` (MISC), `# confidence` and `# tree_prob` into CoNLL-U output.
    #[arg(long)]
    no_confidence: bool,
    /// Sentences whose confidence (mean arc confidence) is below this go to --rejected.
    #[arg(long, requires = "rejected")]
    min_confidence: Option<f64>,
    /// The share of the accepted words that must be right (say 0.95): the sentences below the
    /// threshold that gives it on the model's calibration text (with probability 0.9) go to
    /// --rejected; the threshold is said on stderr. With --min-confidence too, the higher of
    /// the two thresholds is used.
    #[arg(long, requires = "rejected")]
    min_precision: Option<f64>,
    /// Output for the sentences below --min-confidence, and with `--malformed lowconf` the
    /// malformed ones (`.zst`: compressed).
    #[arg(long)]
    rejected: Option<PathBuf>,
    /// What a malformed sentence does: `fail` stops the run with its `FILE:LINE: problem`
    /// (nothing is published); `lowconf` writes it unparsed, as the daemon does (a placeholder
    /// word, the error and its raw lines in comments), to --rejected, or to --output without
    /// one, and goes on. A file that is not a corpus at all fails either way.
    #[arg(long, value_enum, default_value_t = MalformedArg::Fail)]
    malformed: MalformedArg,
    /// Do not check the model's checksums before parsing (saves a few milliseconds).
    #[arg(long)]
    no_verify: bool,
    /// Replace an existing output file. Without this an existing output file is an error,
    /// before any parsing; with it the old file stays whole until the new one is complete.
    #[arg(long)]
    overwrite: bool,
    /// Sentences with more words than this are bad input.
    #[arg(long, default_value_t = Limits::default().max_words)]
    max_sentence_words: usize,
    /// Sentences (and lines) longer than this many bytes are bad input.
    #[arg(long, default_value_t = Limits::default().max_bytes)]
    max_sentence_bytes: usize,
}

/// What `--malformed` takes.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum MalformedArg {
    /// Stop at the first malformed sentence.
    Fail,
    /// Write it unparsed to --rejected (or --output) and go on.
    Lowconf,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Conllu,
    Conllx,
    /// One sentence per line, tokens separated by whitespace.
    Text,
    /// Raw text, paragraphs separated by blank lines: tokenized and split into sentences by
    /// the model's tokenizer (`train --tokenizer`); the default for `.raw` files.
    Raw,
}

/// `--raw-sentences` (of `parse`, and of `train` for its unlabeled text).
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum RawSentencesArg {
    Model,
    Lines,
}

impl From<RawSentencesArg> for RawSentences {
    fn from(r: RawSentencesArg) -> RawSentences {
        match r {
            RawSentencesArg::Model => RawSentences::Model,
            RawSentencesArg::Lines => RawSentences::Lines,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum RetagArg {
    Auto,
    Always,
    Never,
}

impl From<RetagArg> for Retag {
    fn from(r: RetagArg) -> Retag {
        match r {
            RetagArg::Auto => Retag::Auto,
            RetagArg::Always => Retag::Always,
            RetagArg::Never => Retag::Never,
        }
    }
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Conllu => Format::Conllu,
            FormatArg::Conllx => Format::Conllx,
            FormatArg::Text => Format::Text,
            FormatArg::Raw => Format::Raw,
        }
    }
}

/// A parse as the library takes it: inputs, outputs and the pipeline's options.
struct ParseJob {
    model: PathBuf,
    inputs: Vec<Input>,
    output: PathBuf,
    rejected: Option<PathBuf>,
    opts: PipelineOptions,
    min_precision: Option<f64>,
    verify: bool,
    overwrite: bool,
}

/// Nothing to refuse here: clap bounds the numbers, and the library checks the confidence
/// threshold (for Python callers too) and the files.
impl From<ParseArgs> for ParseJob {
    fn from(a: ParseArgs) -> ParseJob {
        let opts = PipelineOptions {
            threads: a.threads.map_or_else(spoolparse::base::available_cpus, |t| t as usize).max(1),
            format: a.format.map(Format::from),
            retag: a.retag.into(),
            raw_sentences: a.raw_sentences.into(),
            confidence: !a.no_confidence,
            min_confidence: a.min_confidence,
            keep_malformed: a.malformed == MalformedArg::Lowconf,
            limits: Limits { max_words: a.max_sentence_words, max_bytes: a.max_sentence_bytes },
            ..PipelineOptions::default()
        };
        let inputs = if a.inputs.is_empty() { vec![PathBuf::from("-")] } else { a.inputs };
        ParseJob {
            model: a.model,
            inputs: inputs.into_iter().map(|path| Input { path, range: None }).collect(),
            output: a.output,
            rejected: a.rejected,
            opts,
            min_precision: a.min_precision,
            verify: !a.no_verify,
            overwrite: a.overwrite,
        }
    }
}

/// Runs `spoolparse parse`.
pub fn exec(args: ParseArgs) -> Result<()> {
    let job = ParseJob::from(args);
    let (output, rejected, mut opts) = (job.output.as_path(), job.rejected.as_deref(), job.opts);
    let thresholded = opts.min_confidence.is_some() || job.min_precision.is_some();
    if rejected.is_some() && !thresholded && !opts.keep_malformed {
        bail!(
            "--rejected takes the sentences below --min-confidence or --min-precision or, with --malformed lowconf, \
             the malformed ones"
        );
    }
    let publish = publish_for(output, rejected, job.overwrite)?;
    let loading = Instant::now();
    let model = Arc::new(files::open_model(&job.model, job.verify)?);
    let load_secs = loading.elapsed().as_secs_f64();
    let threshold = Threshold::resolve(&model, opts.min_confidence, job.min_precision)
        .map_err(|e| anyhow!("--min-precision: {e}"))?;
    if let Some(line) = threshold.describe() {
        eprintln!("spoolparse: {line}");
    }
    opts.min_confidence = threshold.min_confidence;
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
    let stats = match files::parse_to_files(&model, &job.inputs, output, rejected, opts, publish, Some(&interrupted)) {
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
    for note in &stats.notes {
        let kind = if note.report.is_unfit() { "warning" } else { "note" };
        let held = match (rejected, note.report.holds_back()) {
            (Some(p), true) => format!("; every sentence went to {}", p.display()),
            _ => String::new(),
        };
        eprintln!("spoolparse: {kind}: {}: {}{held}", note.path.display(), note.describe());
    }
    if let (Some(p), Some(_)) = (rejected, opts.min_confidence) {
        let below = stats.rejected - stats.malformed;
        let other = match stats.other_language {
            0 => String::new(),
            n => {
                format!(" ({n} of them judged another language's, `# {}`)", spoolparse::parse::fit::OTHER_LANGUAGE_KEY)
            }
        };
        eprintln!(
            "{below} of {} sentences below the minimum confidence (or of another language) went to {}{other}",
            stats.sentences,
            p.display()
        );
    }
    if opts.keep_malformed {
        let to = rejected.unwrap_or(output);
        eprintln!("{} malformed sentences went to {} unparsed", stats.malformed, to.display());
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
    match stats.shards {
        0 => eprintln!("{}", stats.busy.describe()),
        // Each shard's pipeline reads and writes for itself: the only shared serial step is
        // appending the shards' outputs, which the busy time does not count.
        n => eprintln!(
            "{} (summed over {n} shards parsed at once, each reading and writing its own)",
            stats.busy.describe()
        ),
    }
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
