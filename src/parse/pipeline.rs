//! Streaming, parallel parsing of files: N threads each take a batch of sentences from the
//! input, parse it, and hand it, in input order, to a [`Sink`].
//!
//! ```text
//! jobs ─▶ input (one thread at a time) ─▶ parse (N threads at once) ─▶ sink (one at a time,
//!            ▲                                                           reordering)
//!            └──────────────────────── free batches ◀────────────────────────┘
//! ```
//!
//! A fixed pool of batches circulates, so memory is bounded by the pool size times the batch
//! size, whatever the input size, and sentences are reused without allocating. Several files
//! can be open at once ([`PipelineOptions::readers`]), read in turns; each file's sentences
//! reach the sink in file order, and with one reader the files themselves come in job order.
//! A file's first batch holds at least its first [`crate::parse::fit::CHECK_WORDS`] words: they decide whether
//! the file is retagged ([`crate::parse::fit`]), and the sink hears the decision before the first sentence.
//! This module owns concurrency and ordering, and the identity of output sentences: every
//! CoNLL-U output sentence has a `# sent_id`, the input's or else `NAME-N` ([`Numbering`]).
//! Parsing is [`crate::parse::annotate`]'s, and where sentences go is the sink's.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{self, BufRead, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{bounded, select, Receiver, Sender};

use crate::corpus::{conllu, Column, CorpusError, Format, Limits, Reader, Sentence};
use crate::model::analysis::Analyze;
use crate::model::file::ModelFile;
use crate::parse::annotate::{Annotator, NoTagger, Steps};
use crate::parse::fit::{FitCheck, FitReport, Retag, Stages};
use crate::parse::raw::{NoTokenizer, RawReader, RawSentences};

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
    /// A parsed sentence and its confidence (mean arc confidence; 1 when not computed).
    fn sentence(&mut self, job: &Job, sent: &Sentence, confidence: f64) -> Result<(), Self::Error>;
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
    /// The job is over.
    fn end(&mut self, job: &Job, outcome: Outcome) -> Result<(), Self::Error>;
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

/// Numbers the sentences of one input, malformed ones included, so that every CoNLL-U output
/// sentence has a `# sent_id`: one without gets `NAME-N`, NAME the input's file name (its
/// whitespace and slashes, which the UD validator refuses in an id, as `_`) and N its place in
/// the file from 1. The same file thus gets the same ids at every parse, whole or in shards (a
/// shard counts the sentences before it), by `parse`, the daemon or the Python package alike.
#[derive(Debug)]
pub struct Numbering {
    /// `None` where the output is not CoNLL-U (CoNLL-X has no comments).
    prefix: Option<String>,
    /// The place of the next sentence, from 1.
    next: u64,
    id: String,
}

impl Numbering {
    /// Numbering for the input `path` (named by its file name), whose first sentence is number
    /// `first`; no ids unless `conllu`.
    pub fn new(path: &Path, first: u64, conllu: bool) -> Numbering {
        let name = match path.file_name().map(|n| n.to_string_lossy()) {
            Some(n) if n != crate::base::io::STDIO => n.into_owned(),
            _ => "stdin".to_string(),
        };
        let name: String = name.chars().map(|c| if c.is_whitespace() || c == '/' { '_' } else { c }).collect();
        Numbering { prefix: conllu.then_some(name), next: first, id: String::new() }
    }

    /// The id of the next sentence, which it takes; `None` without ids.
    fn take(&mut self) -> Option<&str> {
        use std::fmt::Write as _;
        let n = self.next;
        self.next += 1;
        let prefix = self.prefix.as_deref()?;
        self.id.clear();
        let _ = write!(self.id, "{prefix}-{n}");
        Some(&self.id)
    }

    /// Numbers `sent`, the next sentence: a `# sent_id` comment, unless it has one, first
    /// after any `# newdoc` and `# newpar`, where UD puts it.
    fn apply(&mut self, sent: &mut Sentence) {
        let Some(id) = self.take() else { return };
        if sent.comments.iter().any(|c| conllu::is_sent_id(c)) {
            return;
        }
        let marks = sent.comments.iter().take_while(|c| c.starts_with("# newdoc") || c.starts_with("# newpar")).count();
        sent.set_comment("sent_id", id);
        sent.comments[marks..].rotate_right(1);
    }
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
            analyze: if self.needs_tags(format) { Analyze::ALL } else { Analyze::NONE },
            write_confidence: self.confidence && conllu_out,
            mark_below: self.min_confidence.map(|t| t as f32),
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

    /// How many sentences (malformed ones included) bytes `range` of `job`'s file hold, read
    /// as the job reads them.
    fn count(&self, job: &Job, range: Range<u64>) -> Result<u64, JobError> {
        let mut reader = self.source(job, Some(range))?;
        let (mut sent, mut numbering) = (Sentence::default(), Numbering::new(&job.path, 1, false));
        let mut n = 0;
        loop {
            match self.read(&mut reader, &mut sent, job.format, &mut numbering) {
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

    /// Reads the next sentence of `reader` into `sent`, converting CoNLL-X if asked, and
    /// numbers it.
    fn read(&self, reader: &mut Source, sent: &mut Sentence, format: Format, numbering: &mut Numbering) -> Read {
        match reader.read_next(sent) {
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
                numbering.apply(sent);
                Read::Sentence
            }
            Some(Err(e)) if e.kind.is_unreadable() => Read::Unreadable(e),
            Some(Err(e)) => Read::Malformed(Malformed {
                index: 0,
                error: e,
                text: reader.sentence_text().to_string(),
                truncated: reader.sentence_text_truncated(),
                sent_id: numbering.take().map(str::to_string),
            }),
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

/// A sentence that could not be read, at its place in a batch.
struct Malformed {
    index: usize,
    error: CorpusError,
    text: String,
    truncated: bool,
    sent_id: Option<String>,
}

impl Malformed {
    /// Hands it to `sink` ([`Sink::malformed`]).
    fn deliver<S: Sink>(self, job: &Job, sink: &mut S) -> Result<(), S::Error> {
        let Malformed { error, text, truncated, sent_id, .. } = self;
        sink.malformed(job, Unreadable { error, text: &text, truncated, sent_id: sent_id.as_deref() })
    }
}

/// A batch is closed once its sentences hold this many bytes of text, whatever their words:
/// with the sentence limit, this bounds a batch's memory at about 2 MiB on any input.
const BATCH_BYTES: usize = 1 << 20;

/// A batch slot that held a sentence above this many bytes gives its allocations back.
const SLOT_BYTES: usize = 64 << 10;

/// A batch of sentences of one job, with its position in the job.
#[derive(Default)]
struct Batch {
    job: Option<Arc<Job>>,
    seq: u64,
    sentences: Vec<Sentence>,
    used: usize,
    words: usize,
    /// Text bytes of the sentences read into it.
    bytes: usize,
    /// What to do besides parsing (the same for the whole job).
    steps: Steps,
    /// Confidence (mean arc confidence) of each sentence, when computed.
    confidence: Vec<f64>,
    /// Sentences left unparsed, by index in `sentences` (increasing).
    malformed: Vec<Malformed>,
    /// Set on the job's last batch.
    end: Option<Outcome>,
    /// Set on the job's first batch (if the job has any words): for [`Sink::fit`].
    fit: Option<FitReport>,
}

impl Batch {
    /// Empties the batch for use as number `seq` of `job`.
    fn reset(&mut self, job: &Arc<Job>, seq: u64, steps: Steps) {
        self.job = Some(Arc::clone(job));
        self.seq = seq;
        self.used = 0;
        self.words = 0;
        self.bytes = 0;
        self.steps = steps;
        // A slot keeps the allocations of the largest sentence it ever held: let go of huge
        // ones, or every slot could end up holding a sentence of the maximum size.
        for s in &mut self.sentences {
            if s.bytes_read() > SLOT_BYTES {
                *s = Sentence::default();
            }
        }
        self.confidence.clear();
        self.malformed.clear();
        self.end = None;
        self.fit = None;
    }

    /// The next free sentence slot.
    fn slot(&mut self) -> &mut Sentence {
        if self.used == self.sentences.len() {
            self.sentences.push(Sentence::default());
        }
        &mut self.sentences[self.used]
    }

    fn is_malformed(&self, index: usize) -> bool {
        self.malformed.binary_search_by_key(&index, |m| m.index).is_ok()
    }

    /// Hands every sentence and finally the outcome to `sink`; true if that ended the job.
    fn deliver<S: Sink>(&mut self, sink: &mut S) -> Result<bool, S::Error> {
        let Some(job) = self.job.as_deref() else { return Ok(false) };
        if let Some(report) = self.fit.take() {
            sink.fit(job, &report)?;
        }
        let mut malformed = self.malformed.drain(..).peekable();
        for (i, s) in self.sentences[..self.used].iter().enumerate() {
            match malformed.next_if(|m| m.index == i) {
                Some(m) => m.deliver(job, sink)?,
                None => sink.sentence(job, s, self.confidence.get(i).copied().unwrap_or(1.0))?,
            }
        }
        match self.end.take() {
            Some(outcome) => sink.end(job, outcome).map(|()| true),
            None => Ok(false),
        }
    }
}

/// Parses every sentence of `inputs` (each in the format its name says) and writes them to
/// `out` in input order; stops at the first bad sentence.
pub fn parse_files(
    model: &Arc<ModelFile>,
    inputs: &[PathBuf],
    out: &mut (dyn Write + Send),
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    parse_files_split(model, inputs, Outputs { accepted: out, rejected: None, cancel: None }, opts)
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
    if opts.threads <= 1 {
        run_sequential(jobs, &mut sink, &opts)?;
    } else {
        let (tx, rx) = crossbeam_channel::unbounded();
        for job in jobs {
            let _ = tx.send(job);
        }
        drop(tx);
        let opts = PipelineOptions { readers: 1, ..opts };
        run(&rx, &mut sink, &opts, &AtomicBool::new(false)).map_err(|e| match e {
            RunError::Pool(e) => PipelineError::Pool(e),
            RunError::Sink(e) => e,
        })?;
    }
    Ok(sink.stats)
}

/// A plain file below this size is parsed by the shared pipeline, whatever the threads.
const MIN_PARALLEL_BYTES: u64 = 1 << 20;

/// With several threads and one whole plain file of at least [`MIN_PARALLEL_BYTES`]: the
/// file's sentence-aligned byte ranges, one per thread.
fn parallel_ranges(inputs: &[Input], opts: &PipelineOptions) -> Option<Vec<Range<u64>>> {
    let [input] = inputs else { return None };
    // Raw text is never split (`shard_ranges` says why): its tokenizing, on the reading thread,
    // is a fifth of the time, so the parsing threads still share the rest.
    if opts.threads <= 1 || input.range.is_some() {
        return None;
    }
    let meta = std::fs::metadata(&input.path).ok()?;
    if !meta.is_file() || meta.len() < MIN_PARALLEL_BYTES {
        return None;
    }
    let share = meta.len().div_ceil(opts.threads as u64);
    // A file that cannot be split is parsed by the shared pipeline, which reports what is wrong.
    let ranges = crate::corpus::shard::shard_ranges(&input.path, opts.format_of(&input.path), share).ok()??;
    (ranges.len() > 1).then_some(ranges)
}

/// Parses the ranges of `path` at once, each by its own one-thread pipeline: the first writes
/// to `out` as it goes, the others to anonymous temporary files (in `TMPDIR`), appended to
/// `out` in order once the first is done. The output is the same bytes as one pipeline's.
///
/// Why: the shared pipeline's threads take turns on one reader and one writer, and two of them
/// reach 1.75× one thread on en_ewt dev ×24, where two pipelines over the two halves of the
/// file reach 2.0–2.1× (measured through the Python package's `parse_file(byte_range=…)`, the
/// closing note of issue 13). The price is disk: all but the first share of the output is
/// held in `TMPDIR` until the first share is written. On bad input the error is the first
/// range's, else the next one's; the output then holds the first range's parses only.
fn parse_ranges_in_parallel(
    model: &Arc<ModelFile>,
    path: &Path,
    ranges: Vec<Range<u64>>,
    mut spills: Vec<Spill>,
    mut out: Outputs<'_>,
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    let opts = PipelineOptions { threads: 1, ..opts };
    let cancel = out.cancel;
    let job = |range: &Range<u64>| Input { path: path.to_path_buf(), range: Some(range.clone()) };
    let (first, results) = std::thread::scope(|scope| {
        let handles: Vec<_> = ranges[1..]
            .iter()
            .zip(spills.iter_mut())
            .map(|(range, (accepted, rejected))| {
                let input = [job(range)];
                scope.spawn(move || {
                    let rejected = rejected.as_mut().map(|r| r as &mut (dyn Write + Send));
                    let out = Outputs { accepted, rejected, cancel };
                    parse_inputs_split(model, &input, out, opts)
                })
            })
            .collect();
        // `&mut &mut dyn Write` is itself a writer: a borrow of `out` for this scope only.
        let first_out = Outputs {
            accepted: &mut out.accepted,
            rejected: out.rejected.as_mut().map(|r| r as &mut (dyn Write + Send)),
            cancel,
        };
        let first = parse_inputs_split(model, &[job(&ranges[0])], first_out, opts);
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(PipelineError::Pool("a parsing thread panicked".into()))))
            .collect();
        (first, results)
    });
    let mut stats = first?;
    for result in results {
        stats.add(result?);
    }
    for (accepted, rejected) in spills {
        append(accepted, out.accepted)?;
        if let (Some(spill), Some(out)) = (rejected, out.rejected.as_deref_mut()) {
            append(spill, out)?;
        }
    }
    Ok(stats)
}

/// Where a range other than the first writes: its accepted and, if asked, rejected output.
type Spill = (io::BufWriter<std::fs::File>, Option<io::BufWriter<std::fs::File>>);

/// `n` spills, each with a rejected stream if `rejected`.
fn spills(n: usize, rejected: bool) -> io::Result<Vec<Spill>> {
    let spill = || crate::base::io::anonymous_temporary().map(io::BufWriter::new);
    (0..n).map(|_| Ok((spill()?, if rejected { Some(spill()?) } else { None }))).collect()
}

/// Copies what was written to `spill` to the end of `out`.
fn append(spill: io::BufWriter<std::fs::File>, out: &mut (dyn Write + Send)) -> Result<(), PipelineError> {
    use std::io::Seek;
    let mut file = spill.into_inner().map_err(|e| PipelineError::Write(e.into_error()))?;
    file.rewind().map_err(PipelineError::Write)?;
    io::copy(&mut file, out).map_err(PipelineError::Write)?;
    Ok(())
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
    let outcome = run_reader(&job, reader, numbering, &mut sink, &opts)?;
    sink.end(&job, outcome)?;
    Ok(sink.stats)
}

/// Where sentences go: all to `accepted`, or, with a threshold, those below it to `rejected`.
pub struct Outputs<'a> {
    pub accepted: &'a mut (dyn Write + Send),
    pub rejected: Option<&'a mut (dyn Write + Send)>,
    /// Once set (by another thread), the run stops at the next sentence with
    /// [`PipelineError::Cancelled`].
    pub cancel: Option<&'a AtomicBool>,
}

/// What a run parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseStats {
    pub sentences: usize,
    pub words: usize,
    /// Sentences sent to the rejected output (malformed ones written there included).
    pub rejected: usize,
    /// Malformed sentences written as unparsed placeholders (with
    /// [`PipelineOptions::keep_malformed`]; counted in `sentences` too, with no words).
    pub malformed: usize,
    /// The inputs that were retagged or that the model does not fit ([`FitReport::is_notable`]),
    /// each once, in input order.
    pub notes: Vec<InputNote>,
}

/// What was found about one input's columns ([`Sink::fit`]), when there is something to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputNote {
    pub path: PathBuf,
    pub report: FitReport,
}

impl ParseStats {
    /// Adds a later part's figures (of the same file or another) to these.
    fn add(&mut self, more: ParseStats) {
        self.sentences += more.sentences;
        self.words += more.words;
        self.rejected += more.rejected;
        self.malformed += more.malformed;
        for note in more.notes {
            self.note(note);
        }
    }

    /// Keeps `note` unless its input has one (a file parsed in shards is reported once).
    fn note(&mut self, note: InputNote) {
        if !self.notes.iter().any(|n| n.path == note.path) {
            self.notes.push(note);
        }
    }
}

/// Why a run of [`parse_files`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    #[error("writing the output: {0}")]
    Write(io::Error),
    #[error("could not start the thread pool: {0}")]
    Pool(String),
    #[error(transparent)]
    NoTagger(#[from] NoTagger),
    #[error(transparent)]
    NoTokenizer(#[from] NoTokenizer),
    /// [`Outputs::cancel`] was set.
    #[error("interrupted")]
    Cancelled,
}

impl From<io::Error> for PipelineError {
    // Not `#[from]`, which would also make it the `source` and print it twice in error chains.
    fn from(e: io::Error) -> Self {
        PipelineError::Write(e)
    }
}

/// The sink of [`parse_files_split`]: one output stream (or two); a malformed sentence is an
/// error, or with [`PipelineOptions::keep_malformed`] an unparsed placeholder.
struct OutputsSink<'a> {
    out: Outputs<'a>,
    min_confidence: Option<f64>,
    keep_malformed: bool,
    stats: ParseStats,
}

impl<'a> OutputsSink<'a> {
    fn new(out: Outputs<'a>, opts: &PipelineOptions) -> Self {
        OutputsSink {
            out,
            min_confidence: opts.min_confidence,
            keep_malformed: opts.keep_malformed,
            stats: ParseStats::default(),
        }
    }
}

impl Sink for OutputsSink<'_> {
    type Error = PipelineError;

    fn sentence(&mut self, _: &Job, sent: &Sentence, confidence: f64) -> Result<(), PipelineError> {
        if self.out.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(PipelineError::Cancelled);
        }
        self.stats.sentences += 1;
        self.stats.words += sent.len();
        match (self.min_confidence, self.out.rejected.as_deref_mut()) {
            (Some(min), Some(rejected)) if confidence < min => {
                self.stats.rejected += 1;
                sent.write_to(rejected)?;
            }
            _ => sent.write_to(self.out.accepted)?,
        }
        Ok(())
    }

    fn malformed(&mut self, _: &Job, bad: Unreadable<'_>) -> Result<(), PipelineError> {
        if !self.keep_malformed {
            return Err(bad.error.into());
        }
        self.stats.sentences += 1;
        self.stats.malformed += 1;
        let out = match self.out.rejected.as_deref_mut() {
            Some(rejected) => {
                self.stats.rejected += 1;
                rejected
            }
            None => &mut *self.out.accepted,
        };
        let enhanced = crate::corpus::unparsed::has_enhanced_deps(bad.text);
        let placeholder = crate::corpus::unparsed::Placeholder { sent_id: bad.sent_id, enhanced };
        placeholder.write(out, &bad.error.to_string(), bad.text, bad.truncated)?;
        Ok(())
    }

    fn fit(&mut self, job: &Job, report: &FitReport) -> Result<(), PipelineError> {
        if report.is_notable() {
            self.stats.note(InputNote { path: job.path.clone(), report: *report });
        }
        Ok(())
    }

    fn end(&mut self, _: &Job, outcome: Outcome) -> Result<(), PipelineError> {
        match outcome {
            Outcome::Complete | Outcome::Abandoned => Ok(()),
            Outcome::Failed(JobError::Corpus(e)) => Err(e.into()),
            Outcome::Failed(JobError::NoTagger { error, .. }) => Err(error.into()),
            Outcome::Failed(JobError::NoTokenizer { error, .. }) => Err(error.into()),
        }
    }
}

/// [`run`] in the calling thread, one sentence at a time: no threads to start or feed.
pub fn run_sequential<S: Sink>(
    jobs: impl IntoIterator<Item = Arc<Job>>,
    sink: &mut S,
    opts: &PipelineOptions,
) -> Result<(), S::Error> {
    for job in jobs {
        let outcome = match opts.open(&job) {
            Err(e) => Outcome::Failed(e),
            Ok((reader, numbering)) => run_reader(&job, reader, numbering, sink, opts)?,
        };
        sink.end(&job, outcome)?;
    }
    Ok(())
}

/// Reads, parses and hands to `sink` every sentence of `job` from `reader`, one at a time;
/// returns how the job ended (for [`Sink::end`], which is left to the caller).
fn run_reader<S: Sink>(
    job: &Arc<Job>,
    mut reader: Source,
    mut numbering: Numbering,
    sink: &mut S,
    opts: &PipelineOptions,
) -> Result<Outcome, S::Error> {
    let mut annotator = opts.annotator(&job.model);
    let mut steps = opts.steps(job.format);
    // The first sentences decide the steps of the file (see `fill_batch`): they are read, parsed
    // and handed on as a batch, the rest one at a time.
    let mut first = Batch::default();
    first.reset(job, 0, steps);
    let end = fill_batch(opts, &AtomicBool::new(false), &mut reader, &mut numbering, job, &mut first, Some(&mut steps));
    annotate_batch(&mut annotator, &mut first);
    first.deliver(sink)?;
    if let Some(outcome) = end {
        return Ok(outcome);
    }
    let mut sent = Sentence::default();
    loop {
        match opts.read(&mut reader, &mut sent, job.format, &mut numbering) {
            Read::End => return Ok(Outcome::Complete),
            Read::Unreadable(e) => return Ok(Outcome::Failed(e.into())),
            Read::Malformed(m) => m.deliver(job, sink)?,
            Read::Sentence => {
                // Checked when the job was opened: the model can tag if the job needs it.
                let _ = annotator.annotate(&mut sent, steps);
                sink.sentence(job, &sent, annotator.confidence().0)?;
            }
        }
    }
}

/// Parses the files of `jobs` (until the channel is closed) and hands their sentences to `sink`.
/// Once `abandon` is set, files being read are given up ([`Outcome::Abandoned`]).
///
/// Every thread does every step for the batches it takes: it reads a batch (one thread at a
/// time: the input is one stream), parses it, and delivers it, with every earlier batch that is
/// ready, to the sink (again one at a time). A batch is thus read and parsed by the same core,
/// its text still in that core's cache; with a reader thread and a writer thread beside the
/// parsers, moving each sentence between cores cost about 15% more CPU in all, and two threads
/// parsed at 1.6 times the speed of one.
pub fn run<S: Sink + Send>(
    jobs: &Receiver<Arc<Job>>,
    sink: &mut S,
    opts: &PipelineOptions,
    abandon: &AtomicBool,
) -> Result<(), RunError<S::Error>>
where
    S::Error: Send,
{
    let threads = opts.threads.max(1);
    let pool_size = threads * opts.batches_per_thread.max(2);
    let (free_tx, free_rx) = bounded::<Batch>(pool_size);
    for _ in 0..pool_size {
        let _ = free_tx.send(Batch::default());
    }
    // Closed when delivery fails, which wakes a thread waiting for a job.
    let (stop_tx, stop_rx) = bounded::<()>(0);
    let shared = Shared {
        opts,
        abandon,
        jobs,
        stop: stop_rx,
        stop_tx: Mutex::new(Some(stop_tx)),
        input: Mutex::new(OpenFiles::default()),
        inbox: Mutex::new(Vec::new()),
        output: Mutex::new(Delivery { pending: HashMap::new(), next_job: 0, sink, result: Ok(()) }),
        free: free_tx,
        failed: AtomicBool::new(false),
    };
    let mut started = 0;
    let mut spawn_error = None;
    std::thread::scope(|scope| {
        for i in 0..threads {
            let (shared, free_rx) = (&shared, free_rx.clone());
            match std::thread::Builder::new()
                .name(format!("spoolparse-parse-{i}"))
                .spawn_scoped(scope, move || shared.work(&free_rx))
            {
                Ok(_) => started += 1,
                Err(e) => spawn_error = Some(e.to_string()),
            }
        }
        if started == 0 {
            shared.fail();
        }
    });
    if started == 0 {
        return Err(RunError::Pool(spawn_error.unwrap_or_default()));
    }
    let delivery = shared.output.into_inner().map_err(|_| RunError::Pool("a parsing thread panicked".into()))?;
    delivery.result.map_err(RunError::Sink)
}

/// Why [`run`] stopped before its jobs ran out.
#[derive(Debug, thiserror::Error)]
pub enum RunError<E> {
    #[error("could not start the pipeline's threads: {0}")]
    Pool(String),
    #[error(transparent)]
    Sink(E),
}

/// The files being read, at most [`PipelineOptions::readers`] at a time, taken in turns.
#[derive(Default)]
struct OpenFiles {
    open: VecDeque<Open>,
    /// The jobs channel is closed and drained.
    exhausted: bool,
}

/// A file being read.
struct Open {
    job: Arc<Job>,
    reader: Option<(Source, Numbering)>,
    /// Why it cannot be read at all, when opening failed.
    error: Option<JobError>,
    seq: u64,
    steps: Steps,
}

/// The sink and its reordering state, used by one thread at a time.
struct Delivery<'s, S: Sink> {
    pending: HashMap<u64, Pending>,
    /// Job ids are 0, 1, 2, … in the order the jobs were sent.
    next_job: u64,
    sink: &'s mut S,
    result: Result<(), S::Error>,
}

/// What the threads of [`run`] share.
struct Shared<'a, 's, S: Sink> {
    opts: &'a PipelineOptions,
    abandon: &'a AtomicBool,
    jobs: &'a Receiver<Arc<Job>>,
    stop: Receiver<()>,
    /// Dropped on a delivery error, to close `stop`.
    stop_tx: Mutex<Option<Sender<()>>>,
    input: Mutex<OpenFiles>,
    /// Parsed batches waiting for delivery, handed over by threads that found it busy.
    inbox: Mutex<Vec<Batch>>,
    output: Mutex<Delivery<'s, S>>,
    free: Sender<Batch>,
    failed: AtomicBool,
}

impl<S: Sink> Shared<'_, '_, S> {
    /// One thread's loop: read a batch, parse it, deliver; until the input is exhausted.
    fn work(&self, free: &Receiver<Batch>) {
        let mut next = self.next_batch(free);
        // One annotator per model: it is rebuilt only when a batch of another model comes.
        while let Some(mut batch) = next.take() {
            let Some(model) = batch.job.as_ref().map(|j| Arc::clone(&j.model)) else { return };
            let mut annotator = self.opts.annotator(&model);
            loop {
                annotate_batch(&mut annotator, &mut batch);
                self.deliver(batch);
                match self.next_batch(free) {
                    Some(b) if b.job.as_ref().is_some_and(|j| Arc::ptr_eq(&j.model, &model)) => batch = b,
                    other => {
                        next = other;
                        break;
                    }
                }
            }
        }
    }

    /// A free batch filled with what is to be read next; `None` once nothing is left.
    fn next_batch(&self, free: &Receiver<Batch>) -> Option<Batch> {
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        let mut batch = free.recv().ok()?;
        if self.read(&mut batch) {
            Some(batch)
        } else {
            let _ = self.free.send(batch);
            None
        }
    }

    /// Fills `batch` from the next file in turn; false once there is nothing left to read.
    fn read(&self, batch: &mut Batch) -> bool {
        let Ok(mut input) = self.input.lock() else { return false };
        if input.open.len() < self.opts.readers.max(1) && !input.exhausted {
            // Wait for a job only if nothing is open: otherwise go on with what is.
            let next = if input.open.is_empty() {
                select! {
                    recv(self.jobs) -> job => job.ok(),
                    recv(self.stop) -> _ => return false,
                }
            } else {
                self.jobs.try_recv().ok()
            };
            match next {
                Some(job) => {
                    let (reader, error) = match self.opts.open(&job) {
                        Ok(r) => (Some(r), None),
                        Err(e) => (None, Some(e)),
                    };
                    let steps = self.opts.steps(job.format);
                    input.open.push_back(Open { job, reader, error, seq: 0, steps });
                }
                None if input.open.is_empty() => {
                    input.exhausted = true;
                    return false;
                }
                None => {}
            }
        }
        let Some(mut open) = input.open.pop_front() else { return false };
        batch.reset(&open.job, open.seq, open.steps);
        let first = open.seq == 0;
        open.seq += 1;
        let outcome = match (open.error.take(), open.reader.as_mut()) {
            (Some(e), _) => Some(Outcome::Failed(e)),
            (None, Some((reader, numbering))) => {
                let steps = first.then_some(&mut open.steps);
                fill_batch(self.opts, self.abandon, reader, numbering, &open.job, batch, steps)
            }
            (None, None) => Some(Outcome::Complete),
        };
        match outcome {
            Some(outcome) => batch.end = Some(outcome),
            None => input.open.push_back(open),
        }
        true
    }

    /// Hands `batch` to the sink once every batch before it has been; if another thread is
    /// delivering, leaves it in the inbox for that thread.
    fn deliver(&self, batch: Batch) {
        if let Ok(mut inbox) = self.inbox.lock() {
            inbox.push(batch);
        }
        loop {
            let Ok(mut out) = self.output.try_lock() else { return };
            let batches: Vec<Batch> = self.inbox.lock().map(|mut i| std::mem::take(&mut *i)).unwrap_or_default();
            for batch in batches {
                if out.result.is_err() {
                    let _ = self.free.send(batch);
                    continue;
                }
                let ordered = self.opts.readers <= 1;
                out.result = out.accept(batch, &self.free, ordered);
                if out.result.is_err() {
                    self.fail();
                    // Threads waiting for a free batch must get one to see the failure.
                    for p in out.pending.drain().map(|(_, p)| p) {
                        p.batches.into_values().for_each(|b| drop(self.free.send(b)));
                    }
                }
            }
            drop(out);
            // A batch left while this thread held the sink would otherwise wait for the next.
            if self.inbox.lock().map_or(true, |i| i.is_empty()) {
                return;
            }
        }
    }

    /// Stops everything after a delivery error: files being read are given up.
    fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
        self.abandon.store(true, Ordering::SeqCst);
        if let Ok(mut stop) = self.stop_tx.lock() {
            stop.take();
        }
    }
}

impl<S: Sink> Delivery<'_, S> {
    /// Files `batch` and delivers every batch that is next in order (per file, and if
    /// `ordered`, per job), returning delivered batches to the pool.
    fn accept(&mut self, batch: Batch, free: &Sender<Batch>, ordered: bool) -> Result<(), S::Error> {
        let Some(id) = batch.job.as_ref().map(|j| j.id) else { return Ok(()) };
        self.pending.entry(id).or_default().batches.insert(batch.seq, batch);
        let mut ready = if ordered { self.next_job } else { id };
        while let Some(p) = self.pending.get_mut(&ready) {
            let Some(mut batch) = p.batches.remove(&p.next) else { break };
            p.next += 1;
            let ended = batch.deliver(self.sink);
            let _ = free.send(batch);
            if ended? {
                self.pending.remove(&ready);
                if !ordered {
                    break;
                }
                self.next_job += 1;
                ready = self.next_job;
            }
        }
        Ok(())
    }
}

/// Reads sentences of `job` into `batch` until it is full; `Some` with how the job ended if
/// it did. With `first` (the job's steps, on its first batch), the batch is not full before
/// [`crate::parse::fit::CHECK_WORDS`] words (unless it holds [`BATCH_BYTES`]); they decide the job's steps,
/// this batch's included, and the decision goes with the batch to the sink.
fn fill_batch(
    opts: &PipelineOptions,
    abandon: &AtomicBool,
    reader: &mut Source,
    numbering: &mut Numbering,
    job: &Job,
    batch: &mut Batch,
    first: Option<&mut Steps>,
) -> Option<Outcome> {
    let mut check = first.is_some().then(|| FitCheck::new(&job.model));
    let outcome = loop {
        if abandon.load(Ordering::Relaxed) {
            break Some(Outcome::Abandoned);
        }
        let index = batch.used;
        match opts.read(reader, batch.slot(), job.format, numbering) {
            Read::End => break Some(Outcome::Complete),
            Read::Unreadable(e) => break Some(Outcome::Failed(e.into())),
            Read::Malformed(m) => {
                batch.bytes += m.text.len();
                batch.malformed.push(Malformed { index, ..m });
            }
            Read::Sentence => {
                let s = &batch.sentences[index];
                batch.words += s.len();
                batch.bytes += s.bytes_read();
                if let Some(check) = check.as_mut() {
                    check.add(s);
                }
            }
        }
        batch.used += 1;
        let full = batch.words >= opts.batch_words || batch.used >= opts.batch_words;
        let deciding = check.as_ref().is_some_and(|c| !c.done());
        if (full && !deciding) || batch.bytes >= BATCH_BYTES {
            break None;
        }
    };
    if let (Some(check), Some(steps)) = (check, first) {
        let counts = check.counts();
        if counts.words > 0 {
            let report = FitReport::decide(counts, job.format, opts.retag, Stages::of(&job.model));
            steps.analyze = report.analyze();
            batch.steps = *steps;
            batch.fit = Some(report);
        }
    }
    outcome
}

/// Parses every well-formed sentence of `batch` and records its confidence.
fn annotate_batch(annotator: &mut Annotator<'_>, batch: &mut Batch) {
    batch.confidence.clear();
    for i in 0..batch.used {
        if batch.is_malformed(i) {
            batch.confidence.push(0.0);
            continue;
        }
        // Checked when the job was opened: the model can tag whenever a job needs it.
        let _ = annotator.annotate(&mut batch.sentences[i], batch.steps);
        batch.confidence.push(annotator.confidence().0);
    }
}

/// Per-job reordering state of the delivery.
#[derive(Default)]
struct Pending {
    next: u64,
    batches: BTreeMap<u64, Batch>,
}
