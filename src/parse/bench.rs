//! In-memory speed measurement (`spoolparse bench`): the file is read once, then parsed (or
//! run through one stage of the analysis) repeatedly, so only feature extraction, scoring and
//! writing the annotation are timed.

use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;

use crate::corpus::{CorpusError, Format, Reader, Sentence};
use crate::model::analysis::{Analyze, Analyzer};
use crate::model::file::{ModelFile, TableView};
use crate::parse::annotate::NoTagger;
use crate::parse::parser::Parser;
use crate::parse::pipeline::PipelineError;

/// What to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchTask {
    /// Parsing (with the input's own tags).
    Parse,
    /// Tagging only (UPOS and XPOS).
    Tag,
    /// FEATS only (from the input's own tags).
    Feats,
    /// Lemmas only (from the input's own tags and FEATS).
    Lemmas,
    /// The whole analysis: tags, FEATS, lemmas.
    Analysis,
}

/// One thread's worker for a [`BenchTask`] (boxed: parsers and taggers differ much in size).
enum Worker<'m> {
    Parse(Box<Parser<'m, TableView<'m>>>),
    Analyze(Box<Analyzer<'m, TableView<'m>>>, Analyze),
}

impl<'m> Worker<'m> {
    fn new(model: &'m ModelFile, task: BenchTask) -> Result<Self, NoTagger> {
        let stages = match task {
            BenchTask::Parse => return Ok(Worker::Parse(Box::new(Parser::new(model)))),
            BenchTask::Tag => Analyze { tags: true, ..Analyze::NONE },
            BenchTask::Feats => Analyze { feats: true, ..Analyze::NONE },
            BenchTask::Lemmas => Analyze { lemmas: true, ..Analyze::NONE },
            BenchTask::Analysis => Analyze::ALL,
        };
        Ok(Worker::Analyze(Box::new(model.analyzer().ok_or(NoTagger)?), stages))
    }

    fn run(&mut self, s: &mut Sentence) {
        match self {
            Worker::Parse(p) => p.parse(s),
            Worker::Analyze(a, stages) => a.analyze(s, *stages),
        }
    }
}

/// What a measurement saw.
#[derive(Debug, Clone, Copy)]
pub struct BenchResult {
    /// Words per round.
    pub words: usize,
    pub rounds: usize,
    pub seconds: f64,
    /// With one thread, where the OS tells: the time it was on a CPU. Unlike wall time, it
    /// does not count the time other processes had the core.
    pub cpu_seconds: Option<f64>,
}

impl BenchResult {
    /// Throughput over all rounds.
    pub fn words_per_second(&self) -> f64 {
        (self.words * self.rounds) as f64 / self.seconds
    }

    /// Throughput per CPU-second of the parsing thread, if measured.
    pub fn words_per_cpu_second(&self) -> Option<f64> {
        self.cpu_seconds.map(|s| (self.words * self.rounds) as f64 / s)
    }
}

/// Time the calling thread has spent on a CPU (Linux: `/proc/thread-self/schedstat`).
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}

/// Runs `task` over the sentences of `file` again and again for at least `seconds` with
/// `threads` threads (each a worker of its own over the shared model).
pub fn run(
    model: &ModelFile,
    file: &Path,
    task: BenchTask,
    threads: usize,
    seconds: f64,
) -> Result<BenchResult, PipelineError> {
    Worker::new(model, task)?;
    let mut sentences: Vec<Sentence> =
        Reader::open(file, Format::from_path(file))?.collect::<Result<_, CorpusError>>()?;
    let words = sentences.iter().map(Sentence::len).sum();
    if words == 0 {
        // Nothing to time: rounds of nothing would spin for `seconds`.
        return Ok(BenchResult { words, rounds: 0, seconds: 0.0, cpu_seconds: None });
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| PipelineError::Pool(e.to_string()))?;
    let chunk = sentences.len().div_ceil(threads.max(1) * 16).max(1);
    // Checked above: a worker can be built.
    let worker = || Worker::new(model, task).ok();
    let round = |sentences: &mut [Sentence]| {
        if threads <= 1 {
            if let Some(mut w) = worker() {
                sentences.iter_mut().for_each(|s| w.run(s));
            }
        } else {
            pool.install(|| {
                sentences.par_chunks_mut(chunk).for_each_init(worker, |w, part| {
                    if let Some(w) = w {
                        part.iter_mut().for_each(|s| w.run(s));
                    }
                })
            });
        }
    };
    round(&mut sentences); // warm-up: page in the model
    let cpu_started = if threads <= 1 { thread_cpu_seconds() } else { None };
    let started = Instant::now();
    let mut rounds = 0;
    while rounds == 0 || started.elapsed().as_secs_f64() < seconds {
        round(&mut sentences);
        rounds += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu_seconds = cpu_started.zip(thread_cpu_seconds()).map(|(a, b)| b - a).filter(|&s| s > 0.0);
    Ok(BenchResult { words, rounds, seconds, cpu_seconds })
}
