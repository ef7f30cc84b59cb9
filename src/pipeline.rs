//! Streaming, parallel parsing of files: a reader thread cuts sentences into batches, a rayon
//! pool parses them, and the calling thread writes them back in input order.
//!
//! ```text
//! reader ──work (bounded)──▶ N workers (rayon) ──done──▶ writer (reorders by sequence number)
//!    ▲                                                          │
//!    └────────────────────── free batches ◀─────────────────────┘
//! ```
//!
//! A fixed pool of batches circulates, so memory is bounded by the pool size times the batch
//! size, whatever the input size, and sentences are reused without allocating. This module
//! owns concurrency and ordering; parsing itself is [`crate::parser`]'s.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use crossbeam_channel::{bounded, Receiver, Sender};

use crate::annotate::{Annotator, NoTagger, Steps};
use crate::corpus::{CorpusError, Format, Reader, Sentence};
use crate::model_file::ModelFile;

/// A batch of sentences with its position in the input.
#[derive(Default)]
struct Batch {
    seq: u64,
    sentences: Vec<Sentence>,
    used: usize,
    words: usize,
    /// What to do besides parsing (the same for the whole batch).
    steps: Steps,
    /// Confidence (mean arc confidence) of each sentence, when computed.
    confidence: Vec<f64>,
}

/// How to run the pipeline.
#[derive(Debug, Clone, Copy)]
pub struct PipelineOptions {
    /// Parsing threads; 1 parses in the calling thread.
    pub threads: usize,
    /// A batch is closed once it holds this many words.
    pub batch_words: usize,
    /// Read every input in this format instead of guessing from its name.
    pub format: Option<Format>,
    /// Replace the UPOS and XPOS of CoNLL-U/CoNLL-X input with the tagger's.
    pub retag: bool,
    /// Compute confidences and write them into CoNLL-U output.
    pub confidence: bool,
    /// Sentences whose confidence is below this go to the rejected output.
    pub min_confidence: Option<f64>,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions {
            threads: 1,
            batch_words: 4096,
            format: None,
            retag: false,
            confidence: false,
            min_confidence: None,
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
        Steps { tag: self.needs_tags(format), write_confidence: self.confidence && format != Format::Conllx }
    }

    fn annotator<'m>(&self, model: &'m ModelFile) -> Annotator<'m> {
        Annotator::new(model, self.confidence || self.min_confidence.is_some())
    }
}

/// Where sentences go: all to `accepted`, or, with a threshold, those below it to `rejected`.
pub struct Outputs<'a> {
    pub accepted: &'a mut (dyn Write + Send),
    pub rejected: Option<&'a mut (dyn Write + Send)>,
}

impl Outputs<'_> {
    fn write(
        &mut self,
        sent: &Sentence,
        confidence: f64,
        opts: &PipelineOptions,
        stats: &mut ParseStats,
    ) -> io::Result<()> {
        stats.sentences += 1;
        stats.words += sent.len();
        match (opts.min_confidence, self.rejected.as_deref_mut()) {
            (Some(min), Some(rejected)) if confidence < min => {
                stats.rejected += 1;
                sent.write_to(rejected)
            }
            _ => sent.write_to(self.accepted),
        }
    }
}

/// What a run parsed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseStats {
    pub sentences: usize,
    pub words: usize,
    /// Sentences sent to the rejected output.
    pub rejected: usize,
}

/// Why a run stopped.
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

/// Parses every sentence of `inputs` (each in the format its name says) and writes them to
/// `out` in input order.
pub fn parse_files(
    model: &ModelFile,
    inputs: &[PathBuf],
    out: &mut (dyn Write + Send),
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    parse_files_split(model, inputs, Outputs { accepted: out, rejected: None }, opts)
}

/// [`parse_files`] with every sentence written, in input order, to exactly one of two outputs:
/// the rejected one if its confidence is below `opts.min_confidence`, the accepted one otherwise.
pub fn parse_files_split(
    model: &ModelFile,
    inputs: &[PathBuf],
    mut out: Outputs<'_>,
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    if model.tagger().is_none() && inputs.iter().any(|p| opts.needs_tags(opts.format_of(p))) {
        return Err(NoTagger.into());
    }
    if opts.threads <= 1 {
        return parse_sequential(model, inputs, &mut out, opts);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .thread_name(|i| format!("spoolparse-parse-{i}"))
        .build()
        .map_err(|e| PipelineError::Pool(e.to_string()))?;
    let pool_size = opts.threads * 4;
    let (free_tx, free_rx) = bounded::<Batch>(pool_size);
    let (work_tx, work_rx) = bounded::<Batch>(pool_size);
    let (done_tx, done_rx) = bounded::<Batch>(pool_size);
    for _ in 0..pool_size {
        let _ = free_tx.send(Batch::default());
    }
    let read_error: Mutex<Option<CorpusError>> = Mutex::new(None);
    let mut result = Ok(ParseStats::default());
    std::thread::scope(|scope| {
        scope.spawn(|| {
            if let Err(e) = read_batches(inputs, opts, &free_rx, work_tx) {
                if let Ok(mut slot) = read_error.lock() {
                    *slot = Some(e);
                }
            }
        });
        scope.spawn(|| {
            pool.scope(|s| {
                for _ in 0..opts.threads {
                    let (work_rx, done_tx) = (work_rx.clone(), done_tx.clone());
                    s.spawn(move |_| parse_batches(model, &opts, &work_rx, &done_tx));
                }
            });
            drop(done_tx);
        });
        result = write_in_order(&done_rx, &free_tx, &mut out, &opts);
        // On a write error, drain so that the other threads can finish.
        drop(free_tx);
        while done_rx.recv().is_ok() {}
    });
    if let Some(e) = read_error.into_inner().ok().flatten() {
        return Err(e.into());
    }
    result
}

fn parse_sequential(
    model: &ModelFile,
    inputs: &[PathBuf],
    out: &mut Outputs<'_>,
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    let mut annotator = opts.annotator(model);
    let mut sent = Sentence::default();
    let mut stats = ParseStats::default();
    for input in inputs {
        let format = opts.format_of(input);
        let mut reader = Reader::open(input, format)?;
        while let Some(read) = reader.read_next(&mut sent) {
            read?;
            annotator.annotate(&mut sent, opts.steps(format))?;
            out.write(&sent, annotator.confidence().0, &opts, &mut stats)?;
        }
    }
    Ok(stats)
}

impl Batch {
    /// Empties the batch for use as number `seq`.
    fn reset(&mut self, seq: u64, steps: Steps) {
        self.seq = seq;
        self.used = 0;
        self.words = 0;
        self.steps = steps;
        self.confidence.clear();
    }
}

/// Hands `batch` to the workers and takes the next free batch as number `seq`; `None` once the
/// other side has stopped.
fn hand_over(batch: Batch, seq: u64, steps: Steps, work: &Sender<Batch>, free: &Receiver<Batch>) -> Option<Batch> {
    work.send(batch).ok()?;
    let mut next = free.recv().ok()?;
    next.reset(seq, steps);
    Some(next)
}

fn read_batches(
    inputs: &[PathBuf],
    opts: PipelineOptions,
    free: &Receiver<Batch>,
    work: Sender<Batch>,
) -> Result<(), CorpusError> {
    let mut seq = 0;
    let Ok(mut batch) = free.recv() else { return Ok(()) };
    batch.reset(seq, Steps::default());
    for input in inputs {
        let format = opts.format_of(input);
        let steps = opts.steps(format);
        if batch.used > 0 && batch.steps != steps {
            // A batch is processed as a whole: close it when the steps change.
            seq += 1;
            let Some(next) = hand_over(batch, seq, steps, &work, free) else { return Ok(()) };
            batch = next;
        }
        batch.steps = steps;
        let mut reader = Reader::open(input, format)?;
        loop {
            if batch.used == batch.sentences.len() {
                batch.sentences.push(Sentence::default());
            }
            match reader.read_next(&mut batch.sentences[batch.used]) {
                None => break,
                Some(Err(e)) => return Err(e),
                Some(Ok(())) => {}
            }
            batch.words += batch.sentences[batch.used].len();
            batch.used += 1;
            if batch.words >= opts.batch_words {
                seq += 1;
                let Some(next) = hand_over(batch, seq, steps, &work, free) else { return Ok(()) };
                batch = next;
            }
        }
    }
    if batch.used > 0 {
        let _ = work.send(batch);
    }
    Ok(())
}

fn parse_batches(model: &ModelFile, opts: &PipelineOptions, work: &Receiver<Batch>, done: &Sender<Batch>) {
    let mut annotator = opts.annotator(model);
    while let Ok(mut batch) = work.recv() {
        batch.confidence.clear();
        for s in &mut batch.sentences[..batch.used] {
            // Checked before starting: the model can tag whenever a batch needs it.
            let _ = annotator.annotate(s, batch.steps);
            batch.confidence.push(annotator.confidence().0);
        }
        if done.send(batch).is_err() {
            return;
        }
    }
}

fn write_in_order(
    done: &Receiver<Batch>,
    free: &Sender<Batch>,
    out: &mut Outputs<'_>,
    opts: &PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    let mut pending: BTreeMap<u64, Batch> = BTreeMap::new();
    let mut next = 0u64;
    let mut stats = ParseStats::default();
    while let Ok(batch) = done.recv() {
        pending.insert(batch.seq, batch);
        while let Some(batch) = pending.remove(&next) {
            for (s, &c) in batch.sentences[..batch.used].iter().zip(&batch.confidence) {
                out.write(s, c, opts, &mut stats)?;
            }
            next += 1;
            // The reader may have stopped already; the batch is then simply dropped.
            let _ = free.send(batch);
        }
    }
    Ok(stats)
}
