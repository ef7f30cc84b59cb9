//! Batches: the unit a parsing thread takes, a run of sentences of one job with their
//! confidences and malformed ones at their places; filling one from a reader, parsing one, and
//! handing one to the sink. Nothing here knows about threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::corpus::{CorpusError, Sentence};
use crate::parse::annotate::{Annotator, Steps};
use crate::parse::fit::{FitCheck, FitReport, Stages};

use super::numbering::Numbering;
use super::{Job, Outcome, PipelineOptions, Read, Sink, Source, Unreadable};

/// A sentence that could not be read, at its place in a batch.
pub(super) struct Malformed {
    pub(super) index: usize,
    pub(super) error: CorpusError,
    pub(super) text: String,
    pub(super) truncated: bool,
    pub(super) sent_id: Option<String>,
}

impl Malformed {
    /// Hands it to `sink` ([`Sink::malformed`]).
    pub(super) fn deliver<S: Sink>(self, job: &Job, sink: &mut S) -> Result<(), S::Error> {
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
pub(super) struct Batch {
    pub(super) job: Option<Arc<Job>>,
    pub(super) seq: u64,
    pub(super) sentences: Vec<Sentence>,
    pub(super) used: usize,
    pub(super) words: usize,
    /// Text bytes of the sentences read into it.
    pub(super) bytes: usize,
    /// What to do besides parsing (the same for the whole job).
    pub(super) steps: Steps,
    /// Confidence (mean arc confidence) of each sentence, when computed.
    pub(super) confidence: Vec<f64>,
    /// Sentences left unparsed, by index in `sentences` (increasing).
    pub(super) malformed: Vec<Malformed>,
    /// Set on the job's last batch.
    pub(super) end: Option<Outcome>,
    /// Set on the job's first batch (if the job has any words): for [`Sink::fit`].
    pub(super) fit: Option<FitReport>,
}

impl Batch {
    /// Empties the batch for use as number `seq` of `job`.
    pub(super) fn reset(&mut self, job: &Arc<Job>, seq: u64, steps: Steps) {
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
    pub(super) fn slot(&mut self) -> &mut Sentence {
        if self.used == self.sentences.len() {
            self.sentences.push(Sentence::default());
        }
        &mut self.sentences[self.used]
    }

    pub(super) fn is_malformed(&self, index: usize) -> bool {
        self.malformed.binary_search_by_key(&index, |m| m.index).is_ok()
    }

    /// Hands every sentence and finally the outcome to `sink`; true if that ended the job.
    pub(super) fn deliver<S: Sink>(&mut self, sink: &mut S) -> Result<bool, S::Error> {
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

/// Reads sentences of `job` into `batch` until it is full; `Some` with how the job ended if
/// it did. With `first` (the job's steps, on its first batch), the batch is not full before
/// [`crate::parse::fit::CHECK_WORDS`] words (unless it holds [`BATCH_BYTES`]); they decide the job's steps,
/// this batch's included, and the decision goes with the batch to the sink.
pub(super) fn fill_batch(
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
pub(super) fn annotate_batch(annotator: &mut Annotator<'_>, batch: &mut Batch) {
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
