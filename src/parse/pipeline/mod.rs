//! Streaming, parallel parsing of files: N threads each take a batch of sentences from the
//! input, parse it, and hand it, in input order, to a [`Sink`].
//!
//! ```text
//! jobs ─▶ input (one thread at a time) ─▶ parse (N threads at once) ─▶ sink (one at a time,
//!            ▲                                                           reordering, numbering)
//!            └──────────────────────── free batches ◀────────────────────────┘
//! ```
//!
//! Past a job's first batch, batches hold text, not sentences: the input only cuts it, raw
//! text into pieces where a sentence surely ends ([`crate::parse::raw::Splitter`]) and other
//! formats into blocks of whole sentences' lines ([`Reader::read_block`]), and the thread
//! that parses a batch first reads it, tokenizing raw text, so that reading, a fifth of a
//! raw-text parse and a twentieth of a CoNLL-U one, runs on every thread at once. Sentences
//! are numbered where they are delivered, in order, since a batch's sentences are only
//! counted once it is read. How busy each stage was is counted ([`BusyTime`]).
//! A fixed pool of batches circulates, so memory is bounded by the pool size times the batch
//! size, whatever the input size, and sentences are reused without allocating. Several files
//! can be open at once ([`PipelineOptions::readers`]), read in turns; each file's sentences
//! reach the sink in file order, and with one reader the files themselves come in job order.
//! A file's first batch holds at least its first [`crate::parse::fit::CHECK_WORDS`] words: they decide whether
//! the file is retagged ([`crate::parse::fit`]), and the sink hears the decision before the first sentence.
//! This module owns concurrency and ordering, and the identity of output sentences: every
//! CoNLL-U output sentence has a `# sent_id`, the input's or else `NAME-N` ([`Numbering`]).
//! Parsing is [`crate::parse::annotate`]'s, and where sentences go is the sink's.
//!
//! - `busy`: where the time goes, stage by stage;
//! - `numbering`: the `# sent_id` of sentences without one;
//! - `batch`: batches of sentences, filled from a reader, parsed, delivered;
//! - `pool`: running jobs, in the calling thread or by a pool of threads;
//! - `outputs`: the sink of `parse` and what a run parsed;
//! - `ranges`: one big file as shards parsed at once;
//! - `render`: sentences rendered as text where they are parsed.

mod batch;
mod busy;
mod numbering;
mod outputs;
mod pool;
mod ranges;
mod render;

use std::io::{BufRead, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::corpus::{Column, CorpusError, Format, Limits, Reader, Sentence};
use crate::model::analysis::{Analyze, Given};
use crate::model::file::ModelFile;
use crate::parse::annotate::{Annotator, NoTagger, Steps};
use crate::parse::fit::{FitReport, Retag};
use crate::parse::given::GivenCounts;
use crate::parse::raw::{NoTokenizer, RawReader, RawSentences};

use batch::Malformed;
pub use busy::{Busy, BusyTime, Stage};
pub use numbering::Numbering;
use outputs::OutputsSink;
pub use outputs::{InputNote, ParseStats, PipelineError};
use pool::run_reader;
pub use pool::{run, run_sequential, RunError};
use ranges::{parallel_ranges, parse_ranges_in_parallel, spills};
pub use render::{HeldBack, Written};

/// One input file to parse.
#[derive(Clone)]
pub struct Job {
    /// 0, 1, 2, … in the order jobs are sent to [`run`]; with one reader, jobs reach the sink
    /// in this order.
    pub id: u64,
    pub path: PathBuf,
    pub format: Format,
    /// The model that parses the whole file (a model swap happens between files).
    pub model: Arc<ModelFile>,
    /// Only these bytes of the file (a shard that starts at a sentence, see
    /// [`crate::corpus::shard`]); `None` for the whole file.
    pub range: Option<Range<u64>>,
}

/// An input of [`parse_inputs_split`]: a file, or a shard of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub path: PathBuf,
    /// Only these bytes of the file (see [`Job::range`]).
    pub range: Option<Range<u64>>,
}

/// How a job ended, as told to [`Sink::end`] after its last sentence.
#[derive(Debug)]
pub enum Outcome {
    /// Every sentence of the file was handed to the sink.
    Complete,
    /// The file could not be read (or not be parsed at all) from some point on.
    Failed(JobError),
    /// Reading stopped early because the run was asked to abandon in-flight files.
    Abandoned,
}

/// Why a file could not be processed.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    #[error("{}: {error}", path.display())]
    NoTagger { path: PathBuf, error: NoTagger },
    #[error("{}: {error}", path.display())]
    NoTokenizer { path: PathBuf, error: NoTokenizer },
}

/// Where a job's sentences come from: a ten-column or tokenized-text reader, or raw text
/// through the model's tokenizer.
pub enum Source {
    // Boxed: a job holds one, moved between threads' queues as it is read.
    Corpus(Box<Reader<Box<dyn BufRead + Send>>>),
    Raw(Box<RawReader>),
}

impl Source {
    fn read_next(&mut self, sent: &mut Sentence) -> Option<Result<(), CorpusError>> {
        match self {
            Source::Corpus(r) => r.read_next(sent),
            Source::Raw(r) => r.read_next(sent),
        }
    }

    /// The text of the sentence last read, when kept (raw text: the text of a sentence with
    /// invalid UTF-8, the only kind it returns malformed).
    fn sentence_text(&self) -> &str {
        match self {
            Source::Corpus(r) => r.sentence_text(),
            Source::Raw(r) => r.sentence_text(),
        }
    }

    fn sentence_text_truncated(&self) -> bool {
        match self {
            Source::Corpus(r) => r.sentence_text_truncated(),
            Source::Raw(_) => false,
        }
    }
}

/// Where parsed sentences go. Its methods are called from one thread, for each job in file
/// order: any number of `sentence`/`malformed`, then `end` once.
pub trait Sink {
    type Error;
    /// A parsed sentence, as it is to be written (rendered by the thread that parsed it, its
    /// `# sent_id` given), and what its parse says of it.
    fn sentence(
        &mut self,
        job: &Job,
        sent: &Sentence,
        written: Written<'_>,
        verdict: Verdict,
    ) -> Result<(), Self::Error>;
    /// A sentence that could not be read, with the text of its lines as read (empty unless
    /// [`PipelineOptions::keep_malformed`]; `truncated` if lines were left out of it because
    /// the sentence is beyond the limits), and the `sent_id` its place in the input gives it
    /// when the output is CoNLL-U (for an input without its own: see [`Numbering`]).
    fn malformed(&mut self, job: &Job, bad: Unreadable<'_>) -> Result<(), Self::Error>;
    /// What the job's first words showed about its tags and forms, and whether it is retagged
    /// (see [`crate::parse::fit`]); once per job with any words, before its first sentence.
    fn fit(&mut self, job: &Job, report: &FitReport) -> Result<(), Self::Error> {
        let _ = (job, report);
        Ok(())
    }
    /// What became of the values some of the job's sentences gave, when anything did
    /// ([`crate::parse::given`]: given values put back or replaced, DEPS beside a changed
    /// tree); after those sentences, before `end`. What was done with the values the job's
    /// [`FitReport::given`] says.
    fn given(&mut self, job: &Job, counts: &GivenCounts) -> Result<(), Self::Error> {
        let _ = (job, counts);
        Ok(())
    }
    /// The job is over.
    fn end(&mut self, job: &Job, outcome: Outcome) -> Result<(), Self::Error>;
}

/// What the parse of a sentence says of it, for the sink to route it by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// The mean arc confidence; 1 when not computed.
    pub confidence: f64,
    /// Judged another language's than the model's ([`crate::parse::fit::SentenceCheck`]; only
    /// with confidences): it goes where low confidence goes.
    pub other_language: bool,
}

impl Verdict {
    /// What `annotator` found of the sentence it annotated last.
    fn of(annotator: &Annotator<'_>) -> Verdict {
        Verdict { confidence: annotator.confidence().0, other_language: annotator.other_language().is_some() }
    }

    /// Whether the sentence is kept from the accepted output at `min_confidence`.
    pub fn rejected(&self, min_confidence: f64) -> bool {
        self.confidence < min_confidence || self.other_language
    }
}

/// A sentence that could not be read, as handed to [`Sink::malformed`].
#[derive(Debug)]
pub struct Unreadable<'a> {
    pub error: CorpusError,
    /// Its lines as read (see [`Sink::malformed`]).
    pub text: &'a str,
    /// Lines were left out of `text`.
    pub truncated: bool,
    /// `NAME-N` for its place in the input; `None` when the output is not CoNLL-U.
    pub sent_id: Option<&'a str>,
}

/// How to run the pipeline.
#[derive(Debug, Clone, Copy)]
pub struct PipelineOptions {
    /// Parsing threads; 1 parses in the calling thread (with a single input stream).
    pub threads: usize,
    /// Files open at the same time, read in turns, a batch each. With more than one, files reach
    /// the sink interleaved.
    pub readers: usize,
    /// A batch is closed once it holds this many words.
    pub batch_words: usize,
    /// Batches in circulation per parsing thread: bounds memory.
    pub batches_per_thread: usize,
    /// Read every input in this format instead of guessing from its name.
    pub format: Option<Format>,
    /// When to replace the UPOS and XPOS of CoNLL-U/CoNLL-X input with the tagger's.
    pub retag: Retag,
    /// Where raw text's sentences end.
    pub raw_sentences: RawSentences,
    /// Compute confidences and write them into CoNLL-U output.
    pub confidence: bool,
    /// Sentences whose confidence is below this go to the rejected output.
    pub min_confidence: Option<f64>,
    /// Rewrite CoNLL-X input as CoNLL-U (so that it can carry confidences and comments).
    pub conllx_as_conllu: bool,
    /// Keep the text of malformed sentences for [`Sink::malformed`]. The sink of
    /// [`parse_files_split`] then writes each as an unparsed placeholder
    /// ([`crate::corpus::unparsed`]) to the rejected output (the accepted one if there is none)
    /// instead of stopping at it.
    pub keep_malformed: bool,
    /// Sentences beyond these are malformed (and never held whole in memory).
    pub limits: Limits,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions {
            threads: 1,
            readers: 1,
            batch_words: 4096,
            // A thread holds the batch it parses, and about one more waits for its turn: more
            // only costs memory to warm up (page faults on short runs).
            batches_per_thread: 2,
            format: None,
            retag: Retag::Auto,
            raw_sentences: RawSentences::Model,
            confidence: false,
            min_confidence: None,
            conllx_as_conllu: false,
            keep_malformed: false,
            limits: Limits::default(),
        }
    }
}

impl PipelineOptions {
    fn format_of(&self, path: &std::path::Path) -> Format {
        self.format.unwrap_or_else(|| Format::from_path(path))
    }

    /// Whether every sentence must be tagged, whatever the input's tags.
    fn needs_tags(&self, format: Format) -> bool {
        self.retag == Retag::Always || matches!(format, Format::Text | Format::Raw)
    }

    /// Whether input in `format` is written as CoNLL-U.
    fn writes_conllu(&self, format: Format) -> bool {
        format != Format::Conllx || self.conllx_as_conllu
    }

    fn steps(&self, format: Format) -> Steps {
        // CoNLL-X has no MISC column and no comments to put confidences in.
        let conllu_out = self.writes_conllu(format);
        Steps {
            // Until a file's first words decide ([`crate::parse::fit`]).
            analyze: match (self.needs_tags(format), format) {
                (false, _) => Analyze::NONE,
                (true, Format::Text | Format::Raw) => Analyze::ALL,
                (true, _) => Analyze { given: Given::Recorded, ..Analyze::ALL },
            },
            write_confidence: self.confidence && conllu_out,
            mark_below: self.min_confidence.map(|t| t as f32),
            // CoNLL-X made CoNLL-U has DEPS `_` by then.
            mark_deps: conllu_out,
        }
    }

    fn annotator<'m>(&self, model: &'m ModelFile) -> Annotator<'m> {
        Annotator::new(model, self.confidence || self.min_confidence.is_some())
    }

    /// Opens a job's input, with the numbering of its sentences, or says why it cannot be
    /// parsed at all.
    fn open(&self, job: &Job) -> Result<(Source, Numbering), JobError> {
        if self.needs_tags(job.format) && job.model.tagger().is_none() {
            return Err(JobError::NoTagger { path: job.path.clone(), error: NoTagger });
        }
        let conllu = self.writes_conllu(job.format);
        let (reader, first) = match &job.range {
            None => (self.source(job, None)?, 1),
            Some(range) => {
                // A shard's sentences are numbered as in the whole file: count those before it.
                let before = if conllu && range.start > 0 { self.count(job, 0..range.start)? } else { 0 };
                (self.source(job, Some(range.clone()))?, before + 1)
            }
        };
        Ok((reader, Numbering::new(&job.path, first, conllu)))
    }

    /// Opens `job`'s file (bytes `range` of it), configured.
    fn source(&self, job: &Job, range: Option<Range<u64>>) -> Result<Source, JobError> {
        if job.format == Format::Raw {
            let starts_file = range.as_ref().is_none_or(|r| r.start == 0);
            let input = match range {
                None => crate::base::io::open_input(&job.path),
                Some(range) => crate::base::io::open_input_range(&job.path, range),
            }
            .map_err(|e| CorpusError { path: job.path.clone(), line: 0, kind: e.into() })?;
            let reader = RawReader::new(input, &job.path, Arc::clone(&job.model), self.raw_sentences, starts_file)
                .map_err(|error| JobError::NoTokenizer { path: job.path.clone(), error })?;
            return Ok(Source::Raw(Box::new(reader)));
        }
        let reader = match range {
            None => Reader::open(&job.path, job.format)?,
            Some(range) => Reader::open_range(&job.path, job.format, range)?,
        };
        Ok(Source::Corpus(Box::new(self.configure(reader))))
    }

    /// How many sentences (malformed ones included) bytes `range` of `job`'s file hold: counted
    /// from their lines ([`crate::corpus::shard::count_sentences`]), but for raw text, which is
    /// read as the job reads it.
    fn count(&self, job: &Job, range: Range<u64>) -> Result<u64, JobError> {
        if job.format != Format::Raw {
            return crate::corpus::shard::count_sentences(&job.path, job.format, range)
                .map_err(|e| CorpusError { path: job.path.clone(), line: 0, kind: e.into() }.into());
        }
        let mut reader = self.source(job, Some(range))?;
        let mut sent = Sentence::default();
        let mut n = 0;
        loop {
            match self.read(&mut reader, &mut sent, job.format) {
                Read::Sentence | Read::Malformed(_) => n += 1,
                Read::End => return Ok(n),
                Read::Unreadable(e) => return Err(e.into()),
            }
        }
    }

    /// Applies the limits, and keeps malformed sentences' text if asked.
    fn configure(&self, reader: Reader<Box<dyn BufRead + Send>>) -> Reader<Box<dyn BufRead + Send>> {
        let reader = reader.with_limits(self.limits);
        if self.keep_malformed {
            reader.keep_text()
        } else {
            reader
        }
    }

    /// Reads the next sentence of `reader` into `sent`, converting CoNLL-X if asked (numbering
    /// is the delivery's, in order).
    fn read(&self, reader: &mut Source, sent: &mut Sentence, format: Format) -> Read {
        let result = reader.read_next(sent);
        self.judge(result, sent, format, || (reader.sentence_text().to_string(), reader.sentence_text_truncated()))
    }

    /// What a reader's `result` for `sent` is to the pipeline, `sent` converted from CoNLL-X if
    /// asked; `text` gives a malformed sentence's text as read, and whether it was truncated.
    fn judge(
        &self,
        result: Option<Result<(), CorpusError>>,
        sent: &mut Sentence,
        format: Format,
        text: impl FnOnce() -> (String, bool),
    ) -> Read {
        match result {
            None => Read::End,
            Some(Ok(())) => {
                if format == Format::Conllx && self.conllx_as_conllu {
                    sent.conllx_to_conllu();
                    // CoNLL-U gives each sentence its `# text`; CoNLL-X has no spacing to
                    // restore it from: the forms, spaced, as CoNLL-U reads words without
                    // SpaceAfter=No.
                    let text = sent.words().map(|w| w.get(Column::Form)).collect::<Vec<_>>().join(" ");
                    sent.set_comment("text", &text);
                }
                Read::Sentence
            }
            Some(Err(e)) if e.kind.is_unreadable() => Read::Unreadable(e),
            Some(Err(error)) => {
                let (text, truncated) = text();
                Read::Malformed(Malformed { index: 0, error, text, truncated, sent_id: None })
            }
        }
    }
}

/// What one read gave.
enum Read {
    Sentence,
    Malformed(Malformed),
    Unreadable(CorpusError),
    End,
}

/// Parses every sentence of `inputs` (each in the format its name says) and writes them to
/// `out` in input order; stops at the first bad sentence.
pub fn parse_files(
    model: &Arc<ModelFile>,
    inputs: &[PathBuf],
    out: &mut (dyn Write + Send),
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    parse_files_split(model, inputs, Outputs { accepted: out, rejected: None, cancel: None, confidences: None }, opts)
}

/// [`parse_files`] with every sentence written, in input order, to exactly one of two outputs:
/// the rejected one if its confidence is below `opts.min_confidence`, the accepted one otherwise.
pub fn parse_files_split(
    model: &Arc<ModelFile>,
    inputs: &[PathBuf],
    out: Outputs<'_>,
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    let inputs: Vec<Input> = inputs.iter().map(|p| Input { path: p.clone(), range: None }).collect();
    parse_inputs_split(model, &inputs, out, opts)
}

/// [`parse_files_split`] of whole files or shards of files: the output of consecutive shards
/// that cover a file is the file's.
pub fn parse_inputs_split(
    model: &Arc<ModelFile>,
    inputs: &[Input],
    out: Outputs<'_>,
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    if model.tagger().is_none() && inputs.iter().any(|i| opts.needs_tags(opts.format_of(&i.path))) {
        return Err(NoTagger.into());
    }
    if let Some(ranges) = parallel_ranges(inputs, &opts) {
        // Without room for temporary files, the shared pipeline, which needs none.
        if let Ok(spills) = spills(ranges.len() - 1, out.rejected.is_some()) {
            return parse_ranges_in_parallel(model, &inputs[0].path, ranges, spills, out, opts);
        }
    }
    let jobs = inputs.iter().enumerate().map(|(i, input)| {
        Arc::new(Job {
            id: i as u64,
            path: input.path.clone(),
            format: opts.format_of(&input.path),
            model: Arc::clone(model),
            range: input.range.clone(),
        })
    });
    let mut sink = OutputsSink::new(out, &opts);
    let busy = BusyTime::default();
    let result = if opts.threads <= 1 {
        run_sequential(jobs, &mut sink, &opts, &busy)
    } else {
        let (tx, rx) = crossbeam_channel::unbounded();
        for job in jobs {
            let _ = tx.send(job);
        }
        drop(tx);
        let opts = PipelineOptions { readers: 1, ..opts };
        run(&rx, &mut sink, &opts, &AtomicBool::new(false), &busy).map_err(|e| match e {
            RunError::Pool(e) => PipelineError::Pool(e),
            RunError::Sink(e) => e,
        })
    };
    sink.stats.busy = busy.snapshot();
    sink.finish(result)
}

/// Parses the sentences read from `input` (called `name` in errors, in `format` unless
/// `opts.format` says otherwise) as [`parse_files_split`] parses a file, in the calling thread:
/// for text held in memory.
pub fn parse_reader(
    model: &Arc<ModelFile>,
    input: Box<dyn BufRead + Send>,
    name: &Path,
    format: Format,
    out: Outputs<'_>,
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    let format = opts.format.unwrap_or(format);
    if model.tagger().is_none() && opts.needs_tags(format) {
        return Err(NoTagger.into());
    }
    let job = Arc::new(Job { id: 0, path: name.to_path_buf(), format, model: Arc::clone(model), range: None });
    let mut sink = OutputsSink::new(out, &opts);
    let reader = if format == Format::Raw {
        Source::Raw(Box::new(RawReader::new(input, name, Arc::clone(model), opts.raw_sentences, true)?))
    } else {
        Source::Corpus(Box::new(opts.configure(Reader::new(input, name, format))))
    };
    let numbering = Numbering::new(name, 1, opts.writes_conllu(format));
    let busy = BusyTime::default();
    let result =
        run_reader(&job, reader, numbering, &mut sink, &opts, &busy).and_then(|outcome| sink.end(&job, outcome));
    sink.stats.busy = busy.snapshot();
    sink.finish(result)
}

/// Where sentences go: all to `accepted`, or, with a threshold, those below it to `rejected`.
pub struct Outputs<'a> {
    pub accepted: &'a mut (dyn Write + Send),
    pub rejected: Option<&'a mut (dyn Write + Send)>,
    /// Once set (by another thread), the run stops at the next sentence with
    /// [`PipelineError::Cancelled`].
    pub cancel: Option<&'a AtomicBool>,
    /// Gets each sentence's confidence as it is written, unrounded (`# confidence` has three
    /// decimals), in output order.
    pub confidences: Option<&'a mut Vec<f64>>,
}
