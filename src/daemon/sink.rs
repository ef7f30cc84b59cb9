//! Where the daemon's parsed sentences go: per input file, an accepted and a low-confidence
//! output, written under temporary names and published (with the input acknowledged) only once
//! durable. This module owns the output files' contents; the moves between spool directories
//! are [`super::spool`]'s.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use crossbeam_channel::Sender;

use super::metrics::Metrics;
use super::spool::{Claim, OutputPaths, Spool};
use crate::base::io::Output;
use crate::corpus::{unparsed, Column, Sentence};
use crate::model::analysis::Given;
use crate::model::file::ModelFile;
use crate::parse::fit::FitReport;
use crate::parse::given::GivenCounts;
use crate::parse::pipeline::{HeldBack, Job, JobError, Outcome, Sink, Unreadable, Verdict, Written};

/// Claims of the files handed to the pipeline, by job id: the scheduler puts them in, the sink
/// takes them out when a file is over.
pub type Claims = Arc<Mutex<HashMap<u64, Claim>>>;

/// What became of a file, as reported to the scheduler.
#[derive(Debug)]
pub struct Finished {
    pub name: String,
    pub fate: Fate,
}

/// The end of one file.
#[derive(Debug)]
pub enum Fate {
    /// Outputs published and input in `done/`.
    Done { sentences: u64, words: u64, lowconf: u64, malformed: u64, other_language: u64, seconds: f64 },
    /// Input in `failed/` with the reason.
    Failed(String),
    /// Its outputs could not be written or published (disk full, read-only): nothing of them
    /// is left in `out/`, and the claim comes back to be tried again later.
    Retry { why: String, claim: Claim },
    /// The input was written to while it was parsed (see [`Claim::changed`]): its outputs
    /// were discarded, and the claim comes back to be parsed again once it is complete.
    Changed { claim: Claim },
    /// Given up at shutdown: the input stays in `processing/`.
    Abandoned,
}

/// One file's outputs while it is being written.
struct FileOutputs {
    paths: OutputPaths,
    /// `None` once writing failed: the rest of the file is read and dropped.
    streams: Option<(Output, Output)>,
    /// Each stream's last sentence, written once the next comes or the file ends.
    held: (HeldBack, HeldBack),
    /// The first write error.
    error: Option<io::Error>,
    /// Whether anything has been written to each (the model line comes first, then the
    /// `# input_check` line if any).
    accepted_started: bool,
    lowconf_started: bool,
    /// Whether the file's sentences have enhanced dependencies (DEPS), as the last one parsed
    /// had: a placeholder follows suit, since the UD validator wants all or none.
    enhanced: Option<bool>,
    sentences: u64,
    words: u64,
    lowconf_count: u64,
    malformed: u64,
    /// Sentences judged another language's, one by one (in `lowconf_count` too).
    other_language: u64,
    /// What [`Sink::fit`] found, if notable: written under the model line.
    input_check: Option<String>,
    /// Every sentence goes to `lowconf/` ([`FitReport::holds_back`]: another language).
    held_back: bool,
    /// What was done with the file's given values ([`FitReport::given`]), and to how many
    /// ([`Sink::given`]): logged when the file is over.
    given: Given,
    given_counts: GivenCounts,
}

/// The daemon's [`Sink`]. An output that cannot be written (a full or read-only disk) fails
/// only its file, which is tried again later ([`Fate::Retry`]); the daemon goes on.
///
/// Finished files are published (fsync, renames, acknowledgement) by a thread of their own, so
/// that the writer goes on with the next file while the disk syncs.
pub struct SpoolSink {
    spool: Spool,
    claims: Claims,
    min_confidence: f64,
    metrics: Arc<Metrics>,
    finished: Sender<Finished>,
    open: HashMap<u64, FileOutputs>,
    publish: Option<Sender<(String, FileOutputs, Claim)>>,
    publisher: Option<std::thread::JoinHandle<()>>,
}

/// Makes a complete file's outputs durable, publishes them and acknowledges the input; if
/// any step fails, removes what it published and hands the claim back for a retry.
fn publish(
    spool: &Spool,
    metrics: &Metrics,
    finished: &Sender<Finished>,
    name: String,
    out: FileOutputs,
    claim: Claim,
) {
    let result = (|| {
        if let Some(e) = out.error {
            return Err(e);
        }
        let (mut accepted, mut lowconf) = out.streams.ok_or_else(|| io::Error::other("outputs closed"))?;
        let (mut held_accepted, mut held_lowconf) = out.held;
        held_accepted.release(&mut accepted)?;
        held_lowconf.release(&mut lowconf)?;
        accepted.finish_durably()?;
        lowconf.finish_durably()?;
        // What was written to the input since it was claimed may be missing from the outputs.
        if claim.changed()? {
            return Ok(false);
        }
        spool.acknowledge(&claim, &out.paths).map(|()| true)
    })();
    let fate = match result {
        Ok(false) => {
            spool.discard(&out.paths);
            Fate::Changed { claim }
        }
        Ok(true) => {
            Metrics::add(&metrics.files_done, 1);
            Metrics::add(&metrics.accepted, out.sentences - out.lowconf_count);
            Metrics::add(&metrics.lowconf, out.lowconf_count);
            Metrics::add(&metrics.malformed, out.malformed);
            Metrics::add(&metrics.other_language, out.other_language);
            Metrics::add(&metrics.published_words, out.words);
            Fate::Done {
                sentences: out.sentences,
                words: out.words,
                lowconf: out.lowconf_count,
                malformed: out.malformed,
                other_language: out.other_language,
                seconds: claim.claimed.elapsed().as_secs_f64(),
            }
        }
        Err(e) => {
            spool.unpublish(&out.paths);
            Metrics::add(&metrics.files_retried, 1);
            Fate::Retry { why: format!("{name}: writing its outputs: {e}"), claim }
        }
    };
    let _ = finished.send(Finished { name, fate });
}

/// The comment at the head of an output file that names the model that parsed it.
pub const MODEL_COMMENT: &str = "model";

/// How an output file names the model that parsed it (`# model = …`).
pub fn model_label(model: &ModelFile) -> String {
    let name = model.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{name} {}", model.fingerprint())
}

/// The input's file name, the same in every spool directory.
fn spool_name(job: &Job) -> String {
    job.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

impl FileOutputs {
    /// Creates the temporary outputs; a failure is kept as the file's error.
    fn create(paths: OutputPaths) -> FileOutputs {
        let create = |p: &std::path::Path| {
            Output::create(p).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))
        };
        let (streams, error) = match create(&paths.accepted_tmp).and_then(|a| Ok((a, create(&paths.lowconf_tmp)?))) {
            Ok(s) => (Some(s), None),
            Err(e) => (None, Some(e)),
        };
        FileOutputs {
            paths,
            streams,
            held: Default::default(),
            error,
            accepted_started: false,
            lowconf_started: false,
            enhanced: None,
            sentences: 0,
            words: 0,
            lowconf_count: 0,
            other_language: 0,
            malformed: 0,
            input_check: None,
            held_back: false,
            given: Given::Kept,
            given_counts: GivenCounts::default(),
        }
    }

    /// Writes to one output (with the sentence it holds back), the model line first; after a
    /// failure, nothing.
    fn write(&mut self, lowconf: bool, job: &Job, what: impl FnOnce(&mut Output, &mut HeldBack) -> io::Result<()>) {
        let Some((accepted, low)) = &mut self.streams else { return };
        let (w, held, started) = if lowconf {
            (low, &mut self.held.1, &mut self.lowconf_started)
        } else {
            (accepted, &mut self.held.0, &mut self.accepted_started)
        };
        let first = !*started;
        *started = true;
        let result = (|| {
            if first {
                writeln!(w, "# {MODEL_COMMENT} = {}", model_label(&job.model))?;
                if let Some(check) = &self.input_check {
                    writeln!(w, "# input_check = {check}")?;
                }
                if self.held_back {
                    let key = crate::parse::fit::HELD_BACK_KEY;
                    writeln!(w, "# {key} = another language: every sentence is in lowconf/, none is to be annotated")?;
                }
            }
            what(w, held)
        })();
        if let Err(e) = result {
            // Close the streams now (and free the space they took); the file is retried later.
            self.streams = None;
            self.error = Some(e);
        }
    }
}

impl SpoolSink {
    pub fn new(
        spool: Spool,
        claims: Claims,
        min_confidence: f64,
        metrics: Arc<Metrics>,
        finished: Sender<Finished>,
    ) -> io::Result<Self> {
        // Two files waiting at most: the writer waits rather than pile up open outputs.
        let (tx, rx) = crossbeam_channel::bounded::<(String, FileOutputs, Claim)>(2);
        let publisher = {
            let (spool, metrics, finished) = (spool.clone(), Arc::clone(&metrics), finished.clone());
            std::thread::Builder::new().name("spoolparse-publish".into()).spawn(move || {
                for (name, out, claim) in rx {
                    publish(&spool, &metrics, &finished, name, out, claim);
                }
            })?
        };
        Ok(SpoolSink {
            spool,
            claims,
            min_confidence,
            metrics,
            finished,
            open: HashMap::new(),
            publish: Some(tx),
            publisher: Some(publisher),
        })
    }

    /// Waits until every finished file is published.
    pub fn close(mut self) -> io::Result<()> {
        self.join_publisher()
    }

    fn join_publisher(&mut self) -> io::Result<()> {
        self.publish = None;
        match self.publisher.take().map(|p| p.join()) {
            None | Some(Ok(())) => Ok(()),
            Some(Err(_)) => Err(io::Error::other("the publishing thread panicked")),
        }
    }

    /// The outputs of `job`, created at its first sentence.
    fn outputs(&mut self, job: &Job) -> &mut FileOutputs {
        let spool = &self.spool;
        self.open.entry(job.id).or_insert_with(|| FileOutputs::create(spool.outputs(&spool_name(job))))
    }

    fn report(&self, name: String, fate: Fate) {
        let _ = self.finished.send(Finished { name, fate });
    }

    fn take_claim(&self, job: &Job) -> io::Result<Claim> {
        self.claims
            .lock()
            .ok()
            .and_then(|mut c| c.remove(&job.id))
            .ok_or_else(|| io::Error::other(format!("{}: no claim for this file", job.path.display())))
    }
}

impl Sink for SpoolSink {
    type Error = io::Error;

    fn sentence(&mut self, job: &Job, sent: &Sentence, written: Written<'_>, verdict: Verdict) -> io::Result<()> {
        let rejected = verdict.rejected(self.min_confidence);
        let out = self.outputs(job);
        let lowconf = rejected || out.held_back;
        out.other_language += u64::from(verdict.other_language);
        out.write(lowconf, job, |w, held| held.sentence(w, &written));
        out.enhanced = Some(sent.words().any(|w| w.get(Column::Deps) != "_"));
        out.sentences += 1;
        out.words += sent.len() as u64;
        out.lowconf_count += u64::from(lowconf);
        Metrics::add(&self.metrics.parsed_sentences, 1);
        Metrics::add(&self.metrics.parsed_words, sent.len() as u64);
        Ok(())
    }

    fn malformed(&mut self, job: &Job, bad: Unreadable<'_>) -> io::Result<()> {
        let why = bad.error.with_name(&spool_name(job));
        let out = self.outputs(job);
        let enhanced = out.enhanced.unwrap_or_else(|| unparsed::has_enhanced_deps(bad.text));
        let placeholder = unparsed::Placeholder { sent_id: bad.sent_id, enhanced };
        out.write(true, job, |w, held| {
            held.release(w)?;
            placeholder.write(w, &why, bad.text, bad.truncated)
        });
        out.sentences += 1;
        out.lowconf_count += 1;
        out.malformed += 1;
        Ok(())
    }

    /// Logs a retagged file (info) or one the model does not fit (warning), counts it, and
    /// says so in the outputs' `# input_check` line.
    fn fit(&mut self, job: &Job, report: &FitReport) -> io::Result<()> {
        self.outputs(job).given = report.given;
        if !report.is_notable() {
            return Ok(());
        }
        let check = report.describe();
        let name = spool_name(job);
        if report.is_unfit() {
            let held = if report.holds_back() { "; every sentence goes to lowconf/" } else { "" };
            super::warn(&format!("{name}: {check}{held}"));
            Metrics::add(&self.metrics.files_unfit, 1);
        } else {
            super::log(&format!("{name}: {check}"));
        }
        if report.tags == crate::parse::fit::TagAction::Retagged {
            Metrics::add(&self.metrics.files_retagged, 1);
        }
        let out = self.outputs(job);
        out.input_check = Some(check);
        out.held_back = report.holds_back();
        Ok(())
    }

    /// Adds up what became of the file's given values, for the log line at its end.
    fn given(&mut self, job: &Job, counts: &GivenCounts) -> io::Result<()> {
        self.outputs(job).given_counts.add(counts);
        Ok(())
    }

    fn end(&mut self, job: &Job, outcome: Outcome) -> io::Result<()> {
        let name = spool_name(job);
        let claim = self.take_claim(job)?;
        match outcome {
            Outcome::Complete => {
                let out = self.open.remove(&job.id).unwrap_or_else(|| FileOutputs::create(self.spool.outputs(&name)));
                if out.given_counts.any() {
                    super::log(&format!("{name}: {}", out.given_counts.describe(out.given)));
                }
                let sent = self.publish.as_ref().is_some_and(|p| p.send((name, out, claim)).is_ok());
                if !sent {
                    self.join_publisher()?;
                    return Err(io::Error::other("the publishing thread stopped"));
                }
            }
            Outcome::Failed(error) => {
                self.open.remove(&job.id);
                let why = match &error {
                    JobError::Corpus(e) => e.with_name(&name),
                    JobError::NoTagger { error, .. } => format!("{name}: {error}"),
                    JobError::NoTokenizer { error, .. } => format!("{name}: {error}"),
                };
                match self.spool.fail(&claim, &why) {
                    Ok(()) => {
                        Metrics::add(&self.metrics.files_failed, 1);
                        self.report(name, Fate::Failed(why));
                    }
                    Err(e) => {
                        Metrics::add(&self.metrics.files_retried, 1);
                        let why = format!("{name}: moving it to failed/ ({why}): {e}");
                        self.report(name, Fate::Retry { why, claim });
                    }
                }
            }
            Outcome::Abandoned => {
                self.open.remove(&job.id);
                self.spool.discard(&self.spool.outputs(&name));
                drop(claim);
                self.report(name, Fate::Abandoned);
            }
        }
        Ok(())
    }
}

impl Drop for SpoolSink {
    fn drop(&mut self) {
        let _ = self.join_publisher();
    }
}
