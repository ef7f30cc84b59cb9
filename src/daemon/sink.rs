//! Where the daemon's parsed sentences go: per input file, an accepted and a low-confidence
//! output, written under temporary names and published (with the input acknowledged) only once
//! durable. This module owns the output files' contents; the moves between spool directories
//! are [`super::spool`]'s.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crossbeam_channel::Sender;

use super::metrics::Metrics;
use super::spool::{Claim, OutputPaths, Spool};
use crate::corpus::{CorpusError, Sentence};
use crate::io::Output;
use crate::model_file::ModelFile;
use crate::pipeline::{Job, JobError, Outcome, Sink};

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
    Done { sentences: u64, words: u64, lowconf: u64, malformed: u64, seconds: f64 },
    /// Input in `failed/` with the reason.
    Failed(String),
    /// Given up at shutdown: the input stays in `processing/`.
    Abandoned,
}

/// One file's outputs while it is being written.
struct FileOutputs {
    paths: OutputPaths,
    accepted: Output,
    lowconf: Output,
    /// Whether anything has been written to each (the model line comes first).
    accepted_started: bool,
    lowconf_started: bool,
    sentences: u64,
    words: u64,
    lowconf_count: u64,
    malformed: u64,
    started: Instant,
}

/// The daemon's [`Sink`]. Its errors (an output that cannot be written) are fatal: the daemon
/// stops, and the files it held are parsed again by the next one.
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
    publisher: Option<std::thread::JoinHandle<io::Result<()>>>,
}

/// Makes a complete file's outputs durable, publishes them and acknowledges the input.
fn publish(
    spool: &Spool,
    metrics: &Metrics,
    finished: &Sender<Finished>,
    name: String,
    out: FileOutputs,
    claim: Claim,
) -> io::Result<()> {
    out.accepted.finish_durably()?;
    out.lowconf.finish_durably()?;
    spool.acknowledge(claim, &out.paths)?;
    Metrics::add(&metrics.files_done, 1);
    let fate = Fate::Done {
        sentences: out.sentences,
        words: out.words,
        lowconf: out.lowconf_count,
        malformed: out.malformed,
        seconds: out.started.elapsed().as_secs_f64(),
    };
    let _ = finished.send(Finished { name, fate });
    Ok(())
}

/// How an output file names the model that parsed it (`# model = …`).
pub fn model_label(model: &ModelFile) -> String {
    let name = model.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{name} {}", model.fingerprint())
}

/// The input's file name, the same in every spool directory.
fn spool_name(job: &Job) -> String {
    job.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// An error message that names the input by its spool name rather than its current path.
fn describe(name: &str, error: &CorpusError) -> String {
    match error.line {
        0 => format!("{name}: {}", error.kind),
        line => format!("{name}:{line}: {}", error.kind),
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
                    publish(&spool, &metrics, &finished, name, out, claim)?;
                }
                Ok(())
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

    /// Waits until every finished file is published; the first error if one could not be.
    pub fn close(mut self) -> io::Result<()> {
        self.join_publisher()
    }

    fn join_publisher(&mut self) -> io::Result<()> {
        self.publish = None;
        match self.publisher.take().map(|p| p.join()) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(e),
            Some(Err(_)) => Err(io::Error::other("the publishing thread panicked")),
        }
    }

    /// The outputs of `job`, created at its first sentence.
    fn outputs(&mut self, job: &Job) -> io::Result<&mut FileOutputs> {
        match self.open.entry(job.id) {
            Entry::Occupied(e) => Ok(e.into_mut()),
            Entry::Vacant(e) => {
                let paths = self.spool.outputs(&spool_name(job));
                let create = |p: &std::path::Path| {
                    Output::create(p).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))
                };
                let outputs = FileOutputs {
                    accepted: create(&paths.accepted_tmp)?,
                    lowconf: create(&paths.lowconf_tmp)?,
                    paths,
                    accepted_started: false,
                    lowconf_started: false,
                    sentences: 0,
                    words: 0,
                    lowconf_count: 0,
                    malformed: 0,
                    started: Instant::now(),
                };
                Ok(e.insert(outputs))
            }
        }
    }

    /// The output a sentence goes to, with the model line written first in each file.
    fn target<'a>(out: &'a mut FileOutputs, lowconf: bool, job: &Job) -> io::Result<&'a mut Output> {
        let (w, started) = if lowconf {
            (&mut out.lowconf, &mut out.lowconf_started)
        } else {
            (&mut out.accepted, &mut out.accepted_started)
        };
        if !*started {
            *started = true;
            writeln!(w, "# model = {}", model_label(&job.model))?;
        }
        Ok(w)
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

    fn sentence(&mut self, job: &Job, sent: &Sentence, confidence: f64) -> io::Result<()> {
        let lowconf = confidence < self.min_confidence;
        let out = self.outputs(job)?;
        sent.write_to(Self::target(out, lowconf, job)?)?;
        out.sentences += 1;
        out.words += sent.len() as u64;
        out.lowconf_count += u64::from(lowconf);
        let m = &self.metrics;
        Metrics::add(&m.sentences, 1);
        Metrics::add(&m.words, sent.len() as u64);
        Metrics::add(if lowconf { &m.lowconf } else { &m.accepted }, 1);
        Ok(())
    }

    fn malformed(&mut self, job: &Job, error: CorpusError, text: &str) -> io::Result<()> {
        let why = describe(&spool_name(job), &error);
        let out = self.outputs(job)?;
        let w = Self::target(out, true, job)?;
        // A comment cannot span lines.
        writeln!(w, "# spoolparse_error = {}", why.replace(['\n', '\r'], " "))?;
        w.write_all(text.trim_end_matches('\n').as_bytes())?;
        w.write_all(b"\n\n")?;
        out.sentences += 1;
        out.lowconf_count += 1;
        out.malformed += 1;
        let m = &self.metrics;
        Metrics::add(&m.sentences, 1);
        Metrics::add(&m.lowconf, 1);
        Metrics::add(&m.malformed, 1);
        Ok(())
    }

    fn end(&mut self, job: &Job, outcome: Outcome) -> io::Result<()> {
        let name = spool_name(job);
        match outcome {
            Outcome::Complete => {
                self.outputs(job)?;
                let out = self.open.remove(&job.id).ok_or_else(|| io::Error::other("output vanished"))?;
                let claim = self.take_claim(job)?;
                let sent = self.publish.as_ref().is_some_and(|p| p.send((name, out, claim)).is_ok());
                if !sent {
                    // The publisher stopped: its error is the one to report.
                    self.join_publisher()?;
                    return Err(io::Error::other("the publishing thread stopped"));
                }
            }
            Outcome::Failed(error) => {
                self.open.remove(&job.id);
                let why = match &error {
                    JobError::Corpus(e) => describe(&name, e),
                    JobError::NoTagger { error, .. } => format!("{name}: {error}"),
                };
                self.spool.fail(self.take_claim(job)?, &why)?;
                Metrics::add(&self.metrics.files_failed, 1);
                self.report(name, Fate::Failed(why));
            }
            Outcome::Abandoned => {
                self.open.remove(&job.id);
                self.spool.discard(&self.spool.outputs(&name));
                drop(self.take_claim(job)?);
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
