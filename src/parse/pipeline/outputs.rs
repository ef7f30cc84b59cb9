//! The sink of `parse`: sentences into one output stream, or two split by confidence, with
//! what a run parsed ([`ParseStats`]) and why it stopped ([`PipelineError`]).

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use crate::corpus::{CorpusError, Sentence};
use crate::parse::annotate::NoTagger;
use crate::parse::fit::FitReport;
use crate::parse::given::GivenCounts;
use crate::parse::raw::NoTokenizer;

use super::busy::Busy;
use super::render::HeldBack;
use super::{Job, JobError, Outcome, Outputs, PipelineOptions, Sink, Unreadable, Verdict, Written};

/// What a run parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseStats {
    pub sentences: usize,
    pub words: usize,
    /// Sentences sent to the rejected output (malformed ones written there included).
    pub rejected: usize,
    /// Sentences sent to the rejected output as another language's, one by one
    /// ([`crate::parse::fit::SentenceCheck`]; counted in `rejected` too).
    pub other_language: usize,
    /// Malformed sentences written as unparsed placeholders (with
    /// [`PipelineOptions::keep_malformed`]; counted in `sentences` too, with no words).
    pub malformed: usize,
    /// The inputs that were retagged or that the model does not fit ([`FitReport::is_notable`]),
    /// or whose given values were replaced or put back ([`GivenCounts::any`]), each once, in
    /// input order.
    pub notes: Vec<InputNote>,
    /// Where the time went ([`Busy`]); summed over the shards of a file parsed in shards at
    /// once ([`ParseStats::shards`]).
    pub busy: Busy,
    /// The file was parsed as this many shards at once, each by its own one-thread pipeline
    /// (their reading and writing were not shared); 0 for the shared pipeline.
    pub shards: usize,
}

/// What was found about one input's columns ([`Sink::fit`]), when there is something to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputNote {
    pub path: PathBuf,
    pub report: FitReport,
    /// What became of its given values, over the whole input.
    pub given: GivenCounts,
}

impl InputNote {
    /// One line saying what was found and done.
    pub fn describe(&self) -> String {
        let fit = self.report.is_notable().then(|| self.report.describe());
        let given = self.given.any().then(|| self.given.describe(self.report.given));
        fit.into_iter().chain(given).collect::<Vec<_>>().join("; ")
    }
}

impl ParseStats {
    /// Adds a later part's figures (of the same file or another) to these.
    pub(super) fn add(&mut self, more: ParseStats) {
        self.sentences += more.sentences;
        self.words += more.words;
        self.rejected += more.rejected;
        self.other_language += more.other_language;
        self.malformed += more.malformed;
        self.busy.add(more.busy);
        for note in more.notes {
            self.note(note);
        }
    }

    /// Keeps `note`, or adds its counts to its input's (a file parsed in shards is reported
    /// once).
    fn note(&mut self, note: InputNote) {
        match self.notes.iter_mut().find(|n| n.path == note.path) {
            Some(n) => n.given.add(&note.given),
            None => self.notes.push(note),
        }
    }
}

/// Why a run of [`super::parse_files`] stopped.
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

/// The sink of [`super::parse_files_split`]: one output stream (or two); a malformed sentence is an
/// error, or with [`PipelineOptions::keep_malformed`] an unparsed placeholder. Each stream
/// writes a sentence late ([`HeldBack`]): [`OutputsSink::finish`] writes the last ones.
pub(super) struct OutputsSink<'a> {
    out: Outputs<'a>,
    held: [HeldBack; 2],
    min_confidence: Option<f64>,
    keep_malformed: bool,
    /// The jobs whose sentences all go to the rejected output ([`FitReport::holds_back`]).
    held_back: HashSet<u64>,
    /// Each open job's report, for a note of its given values ([`Sink::given`]).
    reports: HashMap<u64, FitReport>,
    pub(super) stats: ParseStats,
}

impl<'a> OutputsSink<'a> {
    pub(super) fn new(out: Outputs<'a>, opts: &PipelineOptions) -> Self {
        OutputsSink {
            out,
            held: Default::default(),
            min_confidence: opts.min_confidence,
            keep_malformed: opts.keep_malformed,
            held_back: HashSet::new(),
            reports: HashMap::new(),
            stats: ParseStats::default(),
        }
    }

    /// Writes the sentences held back, whether the run ended well or not (what was parsed
    /// before an error is written, as it always was); returns what the run gave, or the
    /// first write error.
    pub(super) fn finish<E: From<io::Error>>(mut self, run: Result<(), E>) -> Result<ParseStats, E> {
        let [accepted, rejected] = &mut self.held;
        let released = accepted.release(self.out.accepted).and_then(|()| match self.out.rejected.as_deref_mut() {
            Some(out) => rejected.release(out),
            None => Ok(()),
        });
        run?;
        released?;
        Ok(self.stats)
    }
}

impl Sink for OutputsSink<'_> {
    type Error = PipelineError;

    fn sentence(
        &mut self,
        job: &Job,
        sent: &Sentence,
        written: Written<'_>,
        verdict: Verdict,
    ) -> Result<(), PipelineError> {
        if self.out.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(PipelineError::Cancelled);
        }
        self.stats.sentences += 1;
        self.stats.words += sent.len();
        if let Some(c) = self.out.confidences.as_deref_mut() {
            c.push(verdict.confidence);
        }
        let [accepted, held_rejected] = &mut self.held;
        match (self.min_confidence, self.out.rejected.as_deref_mut()) {
            (Some(min), Some(rejected)) if verdict.rejected(min) || self.held_back.contains(&job.id) => {
                self.stats.rejected += 1;
                self.stats.other_language += usize::from(verdict.other_language);
                held_rejected.sentence(rejected, &written)?;
            }
            _ => accepted.sentence(self.out.accepted, &written)?,
        }
        Ok(())
    }

    fn malformed(&mut self, _: &Job, bad: Unreadable<'_>) -> Result<(), PipelineError> {
        if !self.keep_malformed {
            return Err(bad.error.into());
        }
        self.stats.sentences += 1;
        self.stats.malformed += 1;
        let [accepted, held_rejected] = &mut self.held;
        let out = match self.out.rejected.as_deref_mut() {
            Some(rejected) => {
                self.stats.rejected += 1;
                held_rejected.release(rejected)?;
                rejected
            }
            None => {
                accepted.release(self.out.accepted)?;
                &mut *self.out.accepted
            }
        };
        let enhanced = crate::corpus::unparsed::has_enhanced_deps(bad.text);
        let placeholder = crate::corpus::unparsed::Placeholder { sent_id: bad.sent_id, enhanced };
        placeholder.write(out, &bad.error.to_string(), bad.text, bad.truncated)?;
        Ok(())
    }

    fn fit(&mut self, job: &Job, report: &FitReport) -> Result<(), PipelineError> {
        if report.is_notable() {
            self.stats.note(InputNote { path: job.path.clone(), report: *report, given: GivenCounts::default() });
        }
        if report.holds_back() {
            self.held_back.insert(job.id);
        }
        self.reports.insert(job.id, *report);
        Ok(())
    }

    fn given(&mut self, job: &Job, counts: &GivenCounts) -> Result<(), PipelineError> {
        if let Some(&report) = self.reports.get(&job.id) {
            self.stats.note(InputNote { path: job.path.clone(), report, given: *counts });
        }
        Ok(())
    }

    fn end(&mut self, job: &Job, outcome: Outcome) -> Result<(), PipelineError> {
        self.reports.remove(&job.id);
        match outcome {
            Outcome::Complete | Outcome::Abandoned => Ok(()),
            Outcome::Failed(JobError::Corpus(e)) => Err(e.into()),
            Outcome::Failed(JobError::NoTagger { error, .. }) => Err(error.into()),
            Outcome::Failed(JobError::NoTokenizer { error, .. }) => Err(error.into()),
        }
    }
}
