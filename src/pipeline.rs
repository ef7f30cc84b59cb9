//! Streaming, parallel parsing of files: reader threads cut sentences into batches, a rayon
//! pool parses them, and the calling thread hands them, in input order, to a [`Sink`].
//!
//! ```text
//! jobs ─▶ readers ──work (bounded)──▶ N workers (rayon) ──done──▶ writer: Sink (reorders)
//!            ▲                                                        │
//!            └───────────────────── free batches ◀────────────────────┘
//! ```
//!
//! A fixed pool of batches circulates, so memory is bounded by the pool size times the batch
//! size, whatever the input size, and sentences are reused without allocating. Several files
//! can be in flight (one per reader); each file's sentences reach the sink in file order, and
//! with one reader the files themselves come in job order. This module owns concurrency and
//! ordering; parsing is [`crate::annotate`]'s, and where sentences go is the sink's.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{bounded, select, Receiver, Sender};

use crate::annotate::{Annotator, NoTagger, Steps};
use crate::corpus::{CorpusError, Format, Limits, Reader, Sentence};
use crate::model_file::ModelFile;

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
}

/// Where parsed sentences go. Its methods are called from one thread, for each job in file
/// order: any number of `sentence`/`malformed`, then `end` once.
pub trait Sink {
    type Error;
    /// A parsed sentence and its confidence (mean arc confidence; 1 when not computed).
    fn sentence(&mut self, job: &Job, sent: &Sentence, confidence: f64) -> Result<(), Self::Error>;
    /// A sentence that could not be read, with the text of its lines as read (empty unless
    /// [`PipelineOptions::keep_malformed`]; `truncated` if lines were left out of it because
    /// the sentence is beyond the limits).
    fn malformed(&mut self, job: &Job, error: CorpusError, text: &str, truncated: bool) -> Result<(), Self::Error>;
    /// The job is over.
    fn end(&mut self, job: &Job, outcome: Outcome) -> Result<(), Self::Error>;
}

/// How to run the pipeline.
#[derive(Debug, Clone, Copy)]
pub struct PipelineOptions {
    /// Parsing threads; 1 parses in the calling thread (with a single input stream).
    pub threads: usize,
    /// Files read at the same time. With more than one, files reach the sink interleaved.
    pub readers: usize,
    /// A batch is closed once it holds this many words.
    pub batch_words: usize,
    /// Batches in circulation per parsing thread: bounds memory.
    pub batches_per_thread: usize,
    /// Read every input in this format instead of guessing from its name.
    pub format: Option<Format>,
    /// Replace the UPOS and XPOS of CoNLL-U/CoNLL-X input with the tagger's.
    pub retag: bool,
    /// Compute confidences and write them into CoNLL-U output.
    pub confidence: bool,
    /// Sentences whose confidence is below this go to the rejected output.
    pub min_confidence: Option<f64>,
    /// Rewrite CoNLL-X input as CoNLL-U (so that it can carry confidences and comments).
    pub conllx_as_conllu: bool,
    /// Keep the text of malformed sentences for [`Sink::malformed`].
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
            batches_per_thread: 4,
            format: None,
            retag: false,
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

    fn needs_tags(&self, format: Format) -> bool {
        self.retag || format == Format::Text
    }

    fn steps(&self, format: Format) -> Steps {
        // CoNLL-X has no MISC column and no comments to put confidences in.
        let conllu_out = format != Format::Conllx || self.conllx_as_conllu;
        Steps { tag: self.needs_tags(format), write_confidence: self.confidence && conllu_out }
    }

    fn annotator<'m>(&self, model: &'m ModelFile) -> Annotator<'m> {
        Annotator::new(model, self.confidence || self.min_confidence.is_some())
    }

    /// Opens a job's input, or says why it cannot be parsed at all.
    fn open(&self, job: &Job) -> Result<Reader<Box<dyn io::BufRead + Send>>, JobError> {
        if self.needs_tags(job.format) && job.model.tagger().is_none() {
            return Err(JobError::NoTagger { path: job.path.clone(), error: NoTagger });
        }
        let reader = Reader::open(&job.path, job.format)?.with_limits(self.limits);
        Ok(if self.keep_malformed { reader.keep_text() } else { reader })
    }

    /// Reads the next sentence of `reader` into `sent`, converting CoNLL-X if asked.
    fn read(&self, reader: &mut Reader<Box<dyn io::BufRead + Send>>, sent: &mut Sentence, format: Format) -> Read {
        match reader.read_next(sent) {
            None => Read::End,
            Some(Ok(())) => {
                if format == Format::Conllx && self.conllx_as_conllu {
                    sent.conllx_to_conllu();
                }
                Read::Sentence
            }
            Some(Err(e)) if e.kind.is_unreadable() => Read::Unreadable(e),
            Some(Err(e)) => Read::Malformed(Malformed {
                index: 0,
                error: e,
                text: reader.sentence_text().to_string(),
                truncated: reader.sentence_text_truncated(),
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
        let mut malformed = self.malformed.drain(..).peekable();
        for (i, s) in self.sentences[..self.used].iter().enumerate() {
            match malformed.next_if(|m| m.index == i) {
                Some(m) => sink.malformed(job, m.error, &m.text, m.truncated)?,
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
    parse_files_split(model, inputs, Outputs { accepted: out, rejected: None }, opts)
}

/// [`parse_files`] with every sentence written, in input order, to exactly one of two outputs:
/// the rejected one if its confidence is below `opts.min_confidence`, the accepted one otherwise.
pub fn parse_files_split(
    model: &Arc<ModelFile>,
    inputs: &[PathBuf],
    out: Outputs<'_>,
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    if model.tagger().is_none() && inputs.iter().any(|p| opts.needs_tags(opts.format_of(p))) {
        return Err(NoTagger.into());
    }
    let jobs = inputs.iter().enumerate().map(|(i, path)| {
        Arc::new(Job { id: i as u64, path: path.clone(), format: opts.format_of(path), model: Arc::clone(model) })
    });
    let mut sink = OutputsSink { out, min_confidence: opts.min_confidence, stats: ParseStats::default() };
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

/// Where sentences go: all to `accepted`, or, with a threshold, those below it to `rejected`.
pub struct Outputs<'a> {
    pub accepted: &'a mut (dyn Write + Send),
    pub rejected: Option<&'a mut (dyn Write + Send)>,
}

/// What a run parsed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseStats {
    pub sentences: usize,
    pub words: usize,
    /// Sentences sent to the rejected output.
    pub rejected: usize,
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
}

impl From<io::Error> for PipelineError {
    // Not `#[from]`, which would also make it the `source` and print it twice in error chains.
    fn from(e: io::Error) -> Self {
        PipelineError::Write(e)
    }
}

/// The sink of [`parse_files_split`]: one output stream (or two), any bad input an error.
struct OutputsSink<'a> {
    out: Outputs<'a>,
    min_confidence: Option<f64>,
    stats: ParseStats,
}

impl Sink for OutputsSink<'_> {
    type Error = PipelineError;

    fn sentence(&mut self, _: &Job, sent: &Sentence, confidence: f64) -> Result<(), PipelineError> {
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

    fn malformed(&mut self, _: &Job, error: CorpusError, _: &str, _: bool) -> Result<(), PipelineError> {
        Err(error.into())
    }

    fn end(&mut self, _: &Job, outcome: Outcome) -> Result<(), PipelineError> {
        match outcome {
            Outcome::Complete | Outcome::Abandoned => Ok(()),
            Outcome::Failed(JobError::Corpus(e)) => Err(e.into()),
            Outcome::Failed(JobError::NoTagger { error, .. }) => Err(error.into()),
        }
    }
}

/// [`run`] in the calling thread, one sentence at a time: no threads to start or feed.
pub fn run_sequential<S: Sink>(
    jobs: impl IntoIterator<Item = Arc<Job>>,
    sink: &mut S,
    opts: &PipelineOptions,
) -> Result<(), S::Error> {
    let mut sent = Sentence::default();
    for job in jobs {
        let mut annotator = opts.annotator(&job.model);
        let steps = opts.steps(job.format);
        let outcome = match opts.open(&job) {
            Err(e) => Outcome::Failed(e),
            Ok(mut reader) => loop {
                match opts.read(&mut reader, &mut sent, job.format) {
                    Read::End => break Outcome::Complete,
                    Read::Unreadable(e) => break Outcome::Failed(e.into()),
                    Read::Malformed(m) => sink.malformed(&job, m.error, &m.text, m.truncated)?,
                    Read::Sentence => {
                        // Checked when the job was opened: the model can tag if the job needs it.
                        let _ = annotator.annotate(&mut sent, steps);
                        sink.sentence(&job, &sent, annotator.confidence().0)?;
                    }
                }
            },
        };
        sink.end(&job, outcome)?;
    }
    Ok(())
}

/// Parses the files of `jobs` (until the channel is closed) and hands their sentences to `sink`.
/// Once `abandon` is set, files being read are given up ([`Outcome::Abandoned`]).
pub fn run<S: Sink>(
    jobs: &Receiver<Arc<Job>>,
    sink: &mut S,
    opts: &PipelineOptions,
    abandon: &AtomicBool,
) -> Result<(), RunError<S::Error>> {
    let threads = opts.threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("spoolparse-parse-{i}"))
        .build()
        .map_err(|e| RunError::Pool(e.to_string()))?;
    let pool_size = threads * opts.batches_per_thread.max(2) + opts.readers;
    let (free_tx, free_rx) = bounded::<Batch>(pool_size);
    let (work_tx, work_rx) = bounded::<Batch>(pool_size);
    let (done_tx, done_rx) = bounded::<Batch>(pool_size);
    // Closed when the writer stops, which wakes readers waiting for a job.
    let (stop_tx, stop_rx) = bounded::<()>(0);
    for _ in 0..pool_size {
        let _ = free_tx.send(Batch::default());
    }
    let mut result = Ok(());
    std::thread::scope(|scope| {
        let mut readers = 0;
        for i in 0..opts.readers.max(1) {
            let (free_rx, work_tx, stop_rx) = (free_rx.clone(), work_tx.clone(), stop_rx.clone());
            match std::thread::Builder::new()
                .name(format!("spoolparse-read-{i}"))
                .spawn_scoped(scope, move || read_jobs(jobs, opts, abandon, &free_rx, &work_tx, &stop_rx))
            {
                Ok(_) => readers += 1,
                Err(e) => result = Err(RunError::Pool(e.to_string())),
            }
        }
        drop(work_tx);
        if readers == 0 {
            return;
        }
        scope.spawn(|| {
            pool.scope(|s| {
                for _ in 0..threads {
                    let (work_rx, done_tx) = (work_rx.clone(), done_tx.clone());
                    s.spawn(move |_| parse_batches(opts, &work_rx, &done_tx));
                }
            });
            drop(done_tx);
        });
        // A reader that could not start only means fewer files in flight.
        result = write_in_order(&done_rx, &free_tx, sink, opts.readers <= 1).map_err(RunError::Sink);
        // On a sink error, stop the readers and drain so that every thread can finish.
        drop(stop_tx);
        drop(free_tx);
        if result.is_err() {
            abandon.store(true, Ordering::SeqCst);
        }
        while done_rx.recv().is_ok() {}
    });
    result
}

/// Why [`run`] stopped before its jobs ran out.
#[derive(Debug, thiserror::Error)]
pub enum RunError<E> {
    #[error("could not start the pipeline's threads: {0}")]
    Pool(String),
    #[error(transparent)]
    Sink(E),
}

/// Reads jobs until there are none left (or the writer has stopped).
fn read_jobs(
    jobs: &Receiver<Arc<Job>>,
    opts: &PipelineOptions,
    abandon: &AtomicBool,
    free: &Receiver<Batch>,
    work: &Sender<Batch>,
    stop: &Receiver<()>,
) {
    loop {
        let job = select! {
            recv(jobs) -> job => match job { Ok(job) => job, Err(_) => return },
            recv(stop) -> _ => return,
        };
        if read_job(&job, opts, abandon, free, work).is_none() {
            return;
        }
    }
}

/// Reads one job into batches; `None` once the other side has stopped.
fn read_job(
    job: &Arc<Job>,
    opts: &PipelineOptions,
    abandon: &AtomicBool,
    free: &Receiver<Batch>,
    work: &Sender<Batch>,
) -> Option<()> {
    let steps = opts.steps(job.format);
    let mut seq = 0;
    let mut batch = free.recv().ok()?;
    batch.reset(job, seq, steps);
    let outcome = match opts.open(job) {
        Err(e) => Outcome::Failed(e),
        Ok(mut reader) => loop {
            if abandon.load(Ordering::Relaxed) {
                break Outcome::Abandoned;
            }
            let index = batch.used;
            match opts.read(&mut reader, batch.slot(), job.format) {
                Read::End => break Outcome::Complete,
                Read::Unreadable(e) => break Outcome::Failed(e.into()),
                Read::Malformed(m) => {
                    batch.bytes += m.text.len();
                    batch.malformed.push(Malformed { index, ..m });
                }
                Read::Sentence => {
                    let s = &batch.sentences[index];
                    batch.words += s.len();
                    batch.bytes += s.bytes_read();
                }
            }
            batch.used += 1;
            if batch.words >= opts.batch_words || batch.used >= opts.batch_words || batch.bytes >= BATCH_BYTES {
                work.send(batch).ok()?;
                seq += 1;
                batch = free.recv().ok()?;
                batch.reset(job, seq, steps);
            }
        },
    };
    batch.end = Some(outcome);
    work.send(batch).ok()
}

fn parse_batches(opts: &PipelineOptions, work: &Receiver<Batch>, done: &Sender<Batch>) {
    let mut next = work.recv().ok();
    // One annotator per model: it is rebuilt only when a batch of another model comes.
    while let Some(mut batch) = next.take() {
        let Some(model) = batch.job.as_ref().map(|j| Arc::clone(&j.model)) else { return };
        let mut annotator = opts.annotator(&model);
        loop {
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
            if done.send(batch).is_err() {
                return;
            }
            match work.recv() {
                Ok(b) if b.job.as_ref().is_some_and(|j| Arc::ptr_eq(&j.model, &model)) => batch = b,
                Ok(b) => {
                    next = Some(b);
                    break;
                }
                Err(_) => return,
            }
        }
    }
}

/// Per-job reordering state of the writer.
#[derive(Default)]
struct Pending {
    next: u64,
    batches: BTreeMap<u64, Batch>,
}

/// Hands batches to `sink` in file order (and, if `ordered_jobs`, in job order).
fn write_in_order<S: Sink>(
    done: &Receiver<Batch>,
    free: &Sender<Batch>,
    sink: &mut S,
    ordered_jobs: bool,
) -> Result<(), S::Error> {
    let mut pending: HashMap<u64, Pending> = HashMap::new();
    // Job ids are 0, 1, 2, … in the order the jobs were sent.
    let mut next_job = 0;
    while let Ok(batch) = done.recv() {
        let Some(id) = batch.job.as_ref().map(|j| j.id) else { continue };
        pending.entry(id).or_default().batches.insert(batch.seq, batch);
        let mut ready = if ordered_jobs { next_job } else { id };
        while let Some(p) = pending.get_mut(&ready) {
            let Some(mut batch) = p.batches.remove(&p.next) else { break };
            p.next += 1;
            let ended = batch.deliver(sink)?;
            // The readers may have stopped already; the batch is then simply dropped.
            let _ = free.send(batch);
            if ended {
                pending.remove(&ready);
                if !ordered_jobs {
                    break;
                }
                next_job += 1;
                ready = next_job;
            }
        }
    }
    Ok(())
}
