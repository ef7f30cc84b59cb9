//! Running jobs: in the calling thread ([`run_sequential`]), or by a pool of threads that
//! take turns reading, parse batches at once, and deliver them to the sink in order ([`run`]).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crossbeam_channel::{bounded, select, Receiver, Sender};

use crate::corpus::Sentence;
use crate::parse::given::GivenCounts;

use super::batch::{annotate_batch, fill_batch, read_text, Batch};
use super::busy::{BusyTime, Stage};
use super::numbering::Numbering;
use super::render::Rendered;
use super::{Job, JobError, Outcome, PipelineOptions, Read, Sink, Source, Steps, Verdict};

/// [`run`] in the calling thread, one sentence at a time: no threads to start or feed.
pub fn run_sequential<S: Sink>(
    jobs: impl IntoIterator<Item = Arc<Job>>,
    sink: &mut S,
    opts: &PipelineOptions,
    busy: &BusyTime,
) -> Result<(), S::Error> {
    for job in jobs {
        let start = Instant::now();
        let opened = opts.open(&job);
        busy.add_since(Stage::Reading, start);
        let outcome = match opened {
            Err(e) => Outcome::Failed(e),
            Ok((reader, numbering)) => run_reader(&job, reader, numbering, sink, opts, busy)?,
        };
        let start = Instant::now();
        sink.end(&job, outcome)?;
        busy.add_since(Stage::Writing, start);
    }
    Ok(())
}

/// Reads, parses and hands to `sink` every sentence of `job` from `reader`; returns how the job
/// ended (for [`Sink::end`], which is left to the caller).
///
/// The first sentences decide the steps of the file (see [`fill_batch`]): they are read,
/// parsed and handed on as a batch, and so is raw text throughout, a batch of pieces at a time
/// as the pool reads it (its tokenizing is then counted as parsing, as it runs in the pool).
/// The sentences of other formats then come one at a time, each read, parsed and written
/// while in cache: one thread gains nothing from cutting them into blocks for other threads
/// (measured: 4096-word blocks cost it 5–10% of its speed), and their reading counts as serial.
pub(super) fn run_reader<S: Sink>(
    job: &Arc<Job>,
    mut reader: Source,
    mut numbering: Numbering,
    sink: &mut S,
    opts: &PipelineOptions,
    busy: &BusyTime,
) -> Result<Outcome, S::Error> {
    let mut annotator = opts.annotator(&job.model);
    let mut pieces = None;
    let mut steps = opts.steps(job.format);
    let mut batch = Batch::default();
    let mut seq = 0;
    while seq == 0 || matches!(reader, Source::Raw(_)) {
        batch.reset(job, seq, steps);
        let start = Instant::now();
        let first = (seq == 0).then_some(&mut steps);
        let end = fill_batch(opts, &AtomicBool::new(false), &mut reader, job, &mut batch, first);
        let start = busy.lap(Stage::Reading, start);
        read_text(opts, &mut pieces, &mut batch);
        annotate_batch(&mut annotator, &mut batch);
        let start = busy.lap(Stage::Parsing, start);
        batch.deliver(sink, Some(&mut numbering))?;
        busy.add_since(Stage::Writing, start);
        if let Some(outcome) = end {
            return Ok(outcome);
        }
        seq += 1;
    }
    let (mut sent, mut rendered) = (Sentence::default(), Rendered::default());
    // What became of the given values of the sentences after the first batch, for the sink
    // at the end.
    let mut given = GivenCounts::default();
    let end = |given: &GivenCounts, sink: &mut S, outcome| match given.any() {
        true => sink.given(job, given).map(|()| outcome),
        false => Ok(outcome),
    };
    loop {
        let start = Instant::now();
        let read = opts.read(&mut reader, &mut sent, job.format);
        let start = busy.lap(Stage::Reading, start);
        match read {
            Read::End => return end(&given, sink, Outcome::Complete),
            Read::Unreadable(e) => return end(&given, sink, Outcome::Failed(e.into())),
            Read::Malformed(mut m) => {
                m.sent_id = numbering.take().map(str::to_string);
                m.deliver(job, sink)?
            }
            Read::Sentence => {
                // Checked when the job was opened: the model can tag if the job needs it.
                let _ = annotator.annotate(&mut sent, steps);
                given.add(&annotator.given_counts());
                rendered.clear();
                rendered.push(Some(&sent));
                let start = busy.lap(Stage::Parsing, start);
                sink.sentence(job, &sent, rendered.get(0, numbering.take()), Verdict::of(&annotator))?;
                busy.add_since(Stage::Writing, start);
                continue;
            }
        }
        busy.add_since(Stage::Writing, start);
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
    busy: &BusyTime,
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
        busy,
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
    reader: Option<Source>,
    /// Its sentences' numbering, handed to the delivery with its first batch.
    numbering: Option<Numbering>,
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
    busy: &'a BusyTime,
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
            let mut pieces = None;
            loop {
                let start = Instant::now();
                read_text(self.opts, &mut pieces, &mut batch);
                annotate_batch(&mut annotator, &mut batch);
                self.busy.add_since(Stage::Parsing, start);
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
                    let start = Instant::now();
                    let opened = self.opts.open(&job);
                    self.busy.add_since(Stage::Reading, start);
                    let (reader, numbering, error) = match opened {
                        Ok((reader, numbering)) => (Some(reader), Some(numbering), None),
                        Err(e) => (None, None, Some(e)),
                    };
                    let steps = self.opts.steps(job.format);
                    input.open.push_back(Open { job, reader, numbering, error, seq: 0, steps });
                }
                None if input.open.is_empty() => {
                    input.exhausted = true;
                    return false;
                }
                None => {}
            }
        }
        let Some(mut open) = input.open.pop_front() else { return false };
        let start = Instant::now();
        batch.reset(&open.job, open.seq, open.steps);
        let first = open.seq == 0;
        open.seq += 1;
        batch.numbering = open.numbering.take();
        let outcome = match (open.error.take(), open.reader.as_mut()) {
            (Some(e), _) => Some(Outcome::Failed(e)),
            (None, Some(reader)) => {
                let steps = first.then_some(&mut open.steps);
                fill_batch(self.opts, self.abandon, reader, &open.job, batch, steps)
            }
            (None, None) => Some(Outcome::Complete),
        };
        match outcome {
            Some(outcome) => batch.end = Some(outcome),
            None => input.open.push_back(open),
        }
        self.busy.add_since(Stage::Reading, start);
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
                let start = Instant::now();
                out.result = out.accept(batch, &self.free, ordered);
                self.busy.add_since(Stage::Writing, start);
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
            if let Some(numbering) = batch.numbering.take() {
                p.numbering = Some(numbering);
            }
            let ended = batch.deliver(self.sink, p.numbering.as_mut());
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

/// Per-job reordering state of the delivery.
#[derive(Default)]
struct Pending {
    next: u64,
    batches: BTreeMap<u64, Batch>,
    /// The job's numbering, from its first batch on.
    numbering: Option<Numbering>,
}
