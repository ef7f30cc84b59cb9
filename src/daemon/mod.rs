//! `spoolparse daemon`: the long-running worker. It watches a spool directory, claims files,
//! feeds them to the parsing pipeline ([`crate::parse::pipeline`]) and publishes their outputs split
//! by confidence; it reacts to signals and keeps systemd and the metrics file informed.
//!
//! This module owns scheduling (which file, when, with which model) and the daemon's life
//! cycle. The on-disk protocol is [`spool`]'s, output contents [`sink`]'s, configuration
//! [`config`]'s; it must not parse or write corpus data itself.
//!
//! Life cycle: load the configuration and open and verify the model; re-claim files left in
//! `processing/` by dead daemons; then claim files from `incoming/` (woken by inotify, and by
//! a periodic rescan since events can be missed) while at most `readers + 2` are
//! claimed (one being read by each reader, and the next ones ready). SIGTERM/SIGINT: stop claiming, let files in flight finish for the grace period,
//! then give up the rest (they stay in `processing/`) and exit. SIGHUP: stop claiming, let
//! every file in flight finish, reload configuration and model, go on: a model swap happens
//! between files, and each output file names its model in a `# model = …` line. The model
//! that parses new files is always the one `models/current` names: it is followed between
//! files, and read again before any file is claimed whenever serving (re)starts, a failed
//! reload included.

pub mod config;
pub mod metrics;
pub mod retrainer;
pub mod sink;
pub mod spool;
pub mod systemd;

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, never, select, tick, unbounded, Receiver, Sender};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::model::file::ModelFile;
use crate::model::registry::{file_name, Registry, RegistryError};
use crate::parse::pipeline::{self, Job, PipelineOptions, RunError};
use crate::parse::precision::{PrecisionError, Threshold};
use config::{Config, ConfigError, DEFAULT_MIN_CONFIDENCE};
use metrics::Metrics;
use sink::{model_label, Claims, Fate, Finished, SpoolSink};
use spool::{Attempt, Claim, Spool};

/// Why the daemon could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Model(#[from] RegistryError),
    #[error("{what}: {error}")]
    Io { what: String, error: std::io::Error },
    #[error("the parsing pipeline stopped: {0}")]
    Pipeline(String),
    #[error("parse.min_precision: {0}")]
    Precision(#[from] PrecisionError),
}

fn io_error(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DaemonError {
    let what = what.into();
    move |error| DaemonError::Io { what, error }
}

/// Logs `message` at info level (stderr: the journal, under systemd; see [`crate::base::logging`]).
pub fn log(message: &str) {
    tracing::info!("{message}");
}

/// Logs `message` at warning level: something went wrong and the daemon works around it.
pub fn warn(message: &str) {
    tracing::warn!("{message}");
}

/// Logs `message` at error level: something the operator should fix.
pub fn error(message: &str) {
    tracing::error!("{message}");
}

/// A configuration and the model it names, ready to use.
struct Setup {
    config: Config,
    model: Arc<ModelFile>,
    label: String,
    /// Sentences below this go to `lowconf/`: the configuration's, or the model's for its
    /// `parse.min_precision`.
    min_confidence: f64,
}

impl Setup {
    /// Reads the configuration, then copies the model into `models/` and opens and checks
    /// the model to serve in full (a model is verified when it starts to serve, not at each
    /// parse): the configured one if it changed, else the one `models/current` names, which
    /// retraining may have promoted (see [`Registry::serve`]).
    fn load(path: &Path) -> Result<Setup, DaemonError> {
        let config = Config::load(path)?;
        let model = Registry::new(config.paths.models()).serve(&config.paths.model)?;
        let label = model_label(&model);
        let threshold = Threshold::resolve(&model, config.parse.given_min_confidence(), config.parse.min_precision)?;
        if let Some(line) = threshold.describe() {
            log(&format!("parse.min_precision: {line}"));
        }
        // One of the two is given (or defaulted), so there is a threshold.
        let min_confidence = threshold.min_confidence.unwrap_or(DEFAULT_MIN_CONFIDENCE);
        Ok(Setup { config, model: Arc::new(model), label, min_confidence })
    }

    fn spool(&self) -> Spool {
        Spool::new(&self.config.paths.spool, &self.config.paths.output)
    }

    fn pipeline_options(&self) -> PipelineOptions {
        let c = &self.config;
        PipelineOptions {
            threads: c.parse.threads,
            readers: c.queues.readers,
            batch_words: c.queues.batch_words,
            batches_per_thread: c.queues.batches_per_thread,
            format: None,
            retag: c.parse.retag,
            raw_sentences: c.parse.raw_sentences,
            confidence: c.parse.write_confidence,
            min_confidence: Some(self.min_confidence),
            conllx_as_conllu: true,
            keep_malformed: true,
            limits: c.limits.reader(),
        }
    }
}

/// What the daemon was asked to do by a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Request {
    Stop,
    Reload,
}

/// Forwards SIGTERM/SIGINT/SIGHUP to a channel.
fn signals() -> Result<(Receiver<Request>, signal_hook::iterator::Handle), DaemonError> {
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])
        .map_err(io_error("installing signal handlers"))?;
    let handle = signals.handle();
    let (tx, rx) = unbounded();
    std::thread::Builder::new()
        .name("spoolparse-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let request = if signal == SIGHUP { Request::Reload } else { Request::Stop };
                if tx.send(request).is_err() {
                    return;
                }
            }
        })
        .map_err(io_error("starting the signal thread"))?;
    Ok((rx, handle))
}

/// Whether an inotify event can mean that a file arrived. The daemon's own reads of the
/// directory (open, read, close) are events too: waking on them, an idle daemon rescanned
/// thousands of times a second.
fn is_arrival(event: &notify::Event) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
    use notify::EventKind;
    match event.kind {
        EventKind::Create(_) | EventKind::Any | EventKind::Other => true,
        EventKind::Modify(ModifyKind::Name(mode)) => mode != RenameMode::From,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        _ => false,
    }
}

/// Wakes the scheduler when a file may have arrived in `incoming/`; `None` and a channel that
/// never fires (rescans only) if inotify is off or unavailable. The watcher must be kept alive.
fn watch(dir: &Path, enabled: bool) -> (Option<notify::RecommendedWatcher>, Receiver<()>) {
    use notify::Watcher;
    if !enabled {
        return (None, never());
    }
    let (tx, rx) = bounded(1);
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // One pending wake-up is enough: the scheduler rescans the directory. Errors (a queue
        // overflow) may hide arrivals: rescan.
        if event.as_ref().map_or(true, is_arrival) {
            let _ = tx.try_send(());
        }
    })
    .and_then(|mut w| w.watch(dir, notify::RecursiveMode::NonRecursive).map(|()| w));
    match watcher {
        Ok(w) => (Some(w), rx),
        Err(e) => {
            warn(&format!("inotify unavailable ({e}); relying on rescans"));
            (None, never())
        }
    }
}

/// Runs the daemon with the configuration at `config_path` until SIGTERM or SIGINT.
pub fn run(config_path: &Path) -> Result<(), DaemonError> {
    let (requests, signal_handle) = signals()?;
    let metrics = Arc::new(Metrics::default());
    let mut setup = Setup::load(config_path)?;
    match sweep_retraining_temporaries(&setup.config) {
        Ok(0) => {}
        Ok(n) => log(&format!("removed {n} temporary files left by an interrupted retraining or copy")),
        Err(e) => log(&format!("could not sweep temporary files: {e}")),
    }
    let (retrain_updates, updates) = unbounded();
    retrainer::spawn(setup.config.clone(), updates, Arc::clone(&metrics))
        .map_err(io_error("starting the retraining thread"))?;
    let result = loop {
        match serve(&setup, &requests, &metrics) {
            Ok(Request::Stop) => break Ok(()),
            Ok(Request::Reload) => match Setup::load(config_path) {
                Ok(new) => {
                    log(&format!("reloaded {}; model {}", config_path.display(), new.label));
                    let _ = retrain_updates.send(new.config.clone());
                    setup = new;
                }
                Err(e) => {
                    Metrics::add(&metrics.reload_failures, 1);
                    error(&format!("reload failed, keeping the previous configuration and model: {e}"));
                }
            },
            Err(e) => break Err(e),
        }
    };
    if let Some(path) = &setup.config.metrics.file {
        let _ = metrics.write(path);
    }
    signal_handle.close();
    result
}

/// The scheduler's state while serving one setup.
struct Scheduler<'a> {
    setup: &'a Setup,
    spool: Spool,
    claims: Claims,
    jobs: Option<Sender<Arc<Job>>>,
    next_id: u64,
    in_flight: usize,
    /// Names seen in `incoming/` and not yet tried.
    backlog: VecDeque<String>,
    /// `incoming/` (and `processing/`) must be scanned again.
    rescan: bool,
    /// Claims whose outputs could not be written, with when to try again; they count as in
    /// flight, so that a full disk stops claiming instead of piling up claims.
    retries: Vec<(Instant, Claim)>,
    /// Failed attempts by file name, for the backoff.
    attempts: HashMap<String, u32>,
    metrics: &'a Metrics,
    /// The model new files are parsed with; files in flight keep the one they started with.
    model: Arc<ModelFile>,
    registry: Registry,
    /// A `models/current` that could not be opened, not to be tried (and logged) again.
    refused: Option<String>,
    /// Entries of `incoming/` that are not regular files, or whose names are not UTF-8,
    /// already named in the log.
    not_inputs: HashSet<String>,
    /// Files of `incoming/` still being written, already named in the log.
    being_written: HashSet<String>,
    /// Times in a row each file changed while it was parsed.
    changes: HashMap<String, u32>,
}

/// A file that changed while it was parsed this many times in a row goes to `failed/`.
const MAX_CHANGES: u32 = 3;

/// The wait before the `n`-th retry of a file: 1 s, doubling, at most a minute.
fn backoff(n: u32) -> Duration {
    Duration::from_secs(1u64 << n.min(6)).min(Duration::from_secs(60))
}

impl Scheduler<'_> {
    /// Claims files while there is room in the pipeline.
    fn fill(&mut self) -> Result<(), DaemonError> {
        let now = Instant::now();
        while let Some(i) = self.retries.iter().position(|(due, _)| *due <= now) {
            let (_, mut claim) = self.retries.swap_remove(i);
            // A file that changed while it was parsed is parsed again once its writer is done.
            if claim.being_written().unwrap_or(false) {
                self.retries.push((now + Duration::from_secs(1), claim));
                continue;
            }
            self.in_flight -= 1;
            log(&format!("trying {} again", claim.name));
            if let Err(e) = claim.restamp() {
                warn(&format!("{}: {e}", claim.name));
            }
            self.dispatch(claim)?;
        }
        let room = self.setup.config.queues.readers + 2;
        if self.rescan && self.in_flight < room {
            self.rescan = false;
            Metrics::add(&self.metrics.scans, 1);
            for claim in self.spool.orphans().map_err(io_error(self.spool.processing.display().to_string()))? {
                log(&format!("re-queued {} (left in processing/)", claim.name));
                self.dispatch(claim)?;
            }
            let waiting = self.spool.waiting().map_err(io_error(self.spool.incoming.display().to_string()))?;
            // Each entry that is not an input is named once while it stays, not at every scan.
            self.not_inputs
                .retain(|name| waiting.others.iter().any(|(n, _)| n == name) || waiting.bad_names.contains(name));
            self.being_written.retain(|name| waiting.files.contains(name));
            self.backlog = waiting.files.into();
            for name in waiting.bad_names {
                if self.not_inputs.insert(name.clone()) {
                    warn(&format!(
                        "incoming/{name} has a name that is not valid UTF-8 (shown with \\xNN for its other bytes) \
                         and is left alone: rename it to a UTF-8 name (e.g. `mv incoming/$'{name}' incoming/NEW.conllu`) \
                         to have it parsed"
                    ));
                }
            }
            for (name, kind) in waiting.others {
                if self.not_inputs.insert(name.clone()) {
                    warn(&format!(
                        "incoming/{name} is {kind}, not a regular file, and is left alone: move a complete \
                         file into incoming/ (by rename) to have it parsed"
                    ));
                }
            }
        }
        while self.in_flight < room {
            let Some(name) = self.backlog.pop_front() else { break };
            match self.spool.claim(&name) {
                Ok(Attempt::Claimed(claim)) => {
                    self.being_written.remove(&name);
                    if let Some(old) = &claim.arrived_as {
                        log(&format!("{old}: an input of that name was seen before: taken as {}", claim.name));
                    }
                    self.dispatch(claim)?
                }
                Ok(Attempt::Gone) => {}
                Ok(Attempt::BeingWritten) => {
                    if self.being_written.insert(name.clone()) {
                        log(&format!(
                            "waiting for incoming/{name}: it is still being written (a process has it open for \
                             writing, or it changed in the last {} s); producers should write elsewhere (or to a \
                             dot-file) and rename complete files into incoming/",
                            spool::QUIET.as_secs()
                        ));
                    }
                }
                Err(e) => warn(&format!("could not claim {name}: {e}")),
            }
        }
        Ok(())
    }

    /// Hands a claimed file to the pipeline, or fails it at once if it cannot be parsed.
    fn dispatch(&mut self, claim: Claim) -> Result<(), DaemonError> {
        let Some(format) = spool::format_of(&claim.name) else {
            let why = format!(
                "{}: unknown extension (expected .conllu, .conllx, .conll, .txt or .raw, each optionally .zst)",
                claim.name
            );
            warn(&format!("failed {why}"));
            Metrics::add(&self.metrics.files_failed, 1);
            return self.spool.fail(&claim, &why).map_err(io_error("moving a file to failed/"));
        };
        let Some(jobs) = &self.jobs else { return Ok(()) };
        let id = self.next_id;
        self.next_id += 1;
        let job = Arc::new(Job { id, path: claim.path.clone(), format, model: Arc::clone(&self.model), range: None });
        if let Ok(mut claims) = self.claims.lock() {
            claims.insert(id, claim);
        }
        self.in_flight += 1;
        // The pipeline outlives this sender, unless it has failed (reported separately).
        let _ = jobs.send(job);
        Ok(())
    }

    /// Switches to the model `models/current` names if it changed (a promotion, a rollback):
    /// between files, without draining the pipeline.
    fn follow_current(&mut self) {
        let name = match self.registry.current_name() {
            Ok(Some(name)) => name,
            Ok(None) => return,
            Err(e) => return warn(&format!("reading {}/current: {e}", self.registry.dir().display())),
        };
        let serving = file_name(self.model.path());
        if name == serving || self.refused.as_ref() == Some(&name) {
            return;
        }
        match self.registry.open(&name) {
            Ok(model) => {
                let model = Arc::new(model);
                log(&format!("now serving model {} (was {serving})", model_label(&model)));
                self.metrics.set_model(&name, &model.fingerprint());
                self.model = model;
                self.refused = None;
            }
            Err(e) => {
                error(&format!("models/current names a model that cannot serve, keeping {serving}: {e}"));
                self.refused = Some(name);
            }
        }
    }

    fn finished(&mut self, f: Finished) {
        self.in_flight = self.in_flight.saturating_sub(1);
        match f.fate {
            Fate::Done { sentences, words, lowconf, malformed, other_language, seconds } => {
                self.attempts.remove(&f.name);
                self.changes.remove(&f.name);
                let other = match other_language {
                    0 => String::new(),
                    n => format!(", {n} judged another language's"),
                };
                log(&format!(
                    "done {}: {sentences} sentences, {words} words, {lowconf} lowconf ({malformed} malformed{other}) in {seconds:.2} s",
                    f.name
                ))
            }
            Fate::Failed(why) => {
                self.attempts.remove(&f.name);
                self.changes.remove(&f.name);
                warn(&format!("failed {why}"))
            }
            Fate::Changed { claim } => {
                let n = self.changes.entry(f.name.clone()).or_default();
                *n += 1;
                if *n < MAX_CHANGES {
                    warn(&format!(
                        "{}: written to while it was parsed (a process was still writing it): its outputs are \
                         discarded and it is parsed again from the start once it is complete",
                        f.name
                    ));
                    self.retries.push((Instant::now(), claim));
                    self.in_flight += 1;
                    return self.rescan_if_idle();
                }
                self.changes.remove(&f.name);
                let why = format!(
                    "{}: written to while it was parsed, {MAX_CHANGES} times in a row: write files elsewhere (or \
                     to a dot-file) and rename them into incoming/ once complete; move it back into incoming/ to \
                     parse it",
                    f.name
                );
                match self.spool.fail(&claim, &why) {
                    Ok(()) => {
                        Metrics::add(&self.metrics.files_failed, 1);
                        warn(&format!("failed {why}"));
                    }
                    Err(e) => {
                        error(&format!("{why}; moving it to failed/: {e}; it stays in processing/"));
                    }
                }
            }
            Fate::Retry { why, claim } => {
                let n = self.attempts.entry(f.name).or_default();
                *n += 1;
                let wait = backoff(*n - 1);
                warn(&format!(
                    "could not publish {why}; nothing of it is in out/; trying again in {} s",
                    wait.as_secs()
                ));
                self.retries.push((Instant::now() + wait, claim));
                self.in_flight += 1;
            }
            Fate::Abandoned => log(&format!("left {} in processing/ for the next start", f.name)),
        }
        self.rescan_if_idle();
    }

    /// A slot is free: look again (files that arrived while we were full).
    fn rescan_if_idle(&mut self) {
        if self.backlog.is_empty() {
            self.rescan = true;
        }
    }
}

/// How long past the grace period a stop waits for the files in flight to be given up before
/// the daemon exits without them: giving up takes the pipeline a batch (milliseconds), and
/// systemd kills a stop that overruns `TimeoutStopSec` (30 s in the shipped unit).
const STOP_WAIT: Duration = Duration::from_secs(2);

/// Gives up the files in flight (they stay in `processing/` for the next start), once.
fn give_up(abandon: &AtomicBool) {
    if !abandon.swap(true, Ordering::SeqCst) {
        log("grace period over: leaving the files in flight for the next start");
    }
}

/// Removes temporaries of dead daemons: outputs, `failed/` sidecars, metrics.
fn sweep_temporaries(spool: &Spool, config: &Config) -> std::io::Result<usize> {
    let mut n = spool.sweep_temporaries()?;
    if let Some(file) = &config.metrics.file {
        n += crate::base::io::sweep_atomic_temporaries(crate::base::io::parent_dir(file))?;
    }
    Ok(n)
}

/// Removes temporaries of dead daemons and retraining runs: model copies and candidates,
/// annotation segments and `rejected/` sidecars. Only before the retraining thread starts,
/// since the temporaries of this process would be its own.
fn sweep_retraining_temporaries(config: &Config) -> std::io::Result<usize> {
    let store = crate::retrain::store::Store::new(&config.paths.annotated());
    let mut n = 0;
    for dir in [&store.segments, &store.rejected, &config.paths.models()] {
        n += crate::base::io::sweep_atomic_temporaries(dir)?;
    }
    Ok(n)
}

/// Serves with `setup` until a stop or reload request, once every file in flight is finished
/// (or given up, on stop).
fn serve(setup: &Setup, requests: &Receiver<Request>, metrics: &Arc<Metrics>) -> Result<Request, DaemonError> {
    let spool = setup.spool();
    spool.create().map_err(io_error("creating the spool directories"))?;
    if let Some(dir) = setup.config.metrics.file.as_ref().and_then(|f| f.parent()).filter(|d| !d.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir).map_err(io_error(format!("creating {}", dir.display())))?;
    }
    metrics.set_model(&file_name(setup.model.path()), &setup.model.fingerprint());
    match sweep_temporaries(&spool, &setup.config) {
        Ok(0) => {}
        Ok(n) => log(&format!("removed {n} temporary files left by a daemon that died")),
        Err(e) => log(&format!("could not sweep temporary files: {e}")),
    }
    let (jobs_tx, jobs_rx) = unbounded::<Arc<Job>>();
    let (finished_tx, finished_rx) = unbounded::<Finished>();
    let (engine_tx, engine_rx) = bounded::<Result<(), String>>(1);
    let claims: Claims = Arc::new(Mutex::new(Default::default()));
    let abandon = Arc::new(AtomicBool::new(false));
    let engine = {
        let mut sink =
            SpoolSink::new(spool.clone(), claims.clone(), setup.min_confidence, metrics.clone(), finished_tx)
                .map_err(io_error("starting the publishing thread"))?;
        let (opts, abandon, metrics) = (setup.pipeline_options(), abandon.clone(), metrics.clone());
        std::thread::Builder::new()
            .name("spoolparse-pipeline".into())
            .spawn(move || {
                let result = pipeline::run(&jobs_rx, &mut sink, &opts, &abandon, &metrics.busy).map_err(|e| match e {
                    RunError::Pool(e) => e,
                    RunError::Sink(e) => e.to_string(),
                });
                // Every finished file is published before the pipeline counts as stopped.
                let result = result.and(sink.close().map_err(|e| e.to_string()));
                let _ = engine_tx.send(result);
            })
            .map_err(io_error("starting the pipeline"))?
    };
    let (_watcher, woken) = watch(&spool.incoming, setup.config.watch.inotify);
    let mut s = Scheduler {
        setup,
        spool,
        claims,
        jobs: Some(jobs_tx),
        next_id: 0,
        in_flight: 0,
        backlog: VecDeque::new(),
        not_inputs: HashSet::new(),
        being_written: HashSet::new(),
        changes: HashMap::new(),
        rescan: true,
        retries: Vec::new(),
        attempts: HashMap::new(),
        metrics,
        model: Arc::clone(&setup.model),
        registry: Registry::new(setup.config.paths.models()),
        refused: None,
    };
    // `current` may have moved since `setup` was loaded (a rollback or promotion, then a
    // failed reload that brought back the model of the last successful load): serve what it
    // names before the first file is claimed, not from the first tick on.
    s.follow_current();
    let label = model_label(&s.model);
    let watchdog = systemd::watchdog_timeout();
    let ticker = tick(watchdog.map_or(Duration::from_millis(500), |w| (w / 2).min(Duration::from_millis(500))));
    let (mut last_rescan, mut last_metrics, mut last_status) = (Instant::now(), Instant::now(), Instant::now());
    let (mut last_work, mut last_progress) = (metrics.progress(), Instant::now());
    systemd::ready(&format!("serving {} with model {label}", s.spool.incoming.display()));
    log(&format!("watching {} with model {label}", s.spool.incoming.display()));
    let mut request: Option<Request> = None;
    let mut deadline: Option<Instant> = None;
    let mut engine_result: Option<Result<(), String>> = None;
    'serving: while engine_result.is_none() {
        if request.is_none() {
            s.fill()?;
        }
        select! {
            recv(requests) -> r => {
                let Ok(r) = r else { continue };
                // A stop during a reload wins; a second stop gives up files at once.
                if r == Request::Stop {
                    let grace = Duration::from_secs_f64(setup.config.shutdown.grace_seconds);
                    let now = Instant::now();
                    let at = if request == Some(Request::Stop) { now } else { now + grace };
                    deadline = Some(at);
                    systemd::stopping();
                    if at <= now {
                        give_up(&abandon);
                    } else {
                        log("stopping: no new files; finishing the files in flight");
                    }
                } else if request.is_none() {
                    systemd::reloading();
                    log("reloading: finishing the files in flight first");
                }
                if request != Some(Request::Stop) {
                    request = Some(r);
                }
                // No more jobs: the pipeline ends once the files in flight are.
                s.jobs = None;
            }
            recv(woken) -> _ => s.rescan = true,
            recv(finished_rx) -> f => if let Ok(f) = f { s.finished(f) },
            recv(engine_rx) -> r => engine_result = Some(r.unwrap_or(Err("the pipeline thread panicked".into()))),
            recv(ticker) -> _ => {
                // A pipeline that holds files but has stopped moving is hung: stop pinging, and
                // systemd restarts us (the files are parsed again from processing/).
                let work = metrics.progress();
                if work != last_work || s.in_flight == 0 {
                    (last_work, last_progress) = (work, Instant::now());
                }
                if watchdog.is_some_and(|w| last_progress.elapsed() < w) {
                    systemd::watchdog();
                }
                if request.is_none() {
                    s.follow_current();
                }
                if last_rescan.elapsed() >= setup.config.rescan() {
                    last_rescan = Instant::now();
                    s.rescan = true;
                }
                if let Some(path) = &setup.config.metrics.file {
                    if last_metrics.elapsed().as_secs_f64() >= setup.config.metrics.interval_seconds {
                        last_metrics = Instant::now();
                        if let Err(e) = metrics.write(path) {
                            warn(&format!("writing metrics to {}: {e}", path.display()));
                        }
                    }
                }
                if last_status.elapsed() >= Duration::from_secs(2) {
                    last_status = Instant::now();
                    systemd::status(&metrics.status());
                }
                if let Some(d) = deadline.filter(|d| Instant::now() >= *d) {
                    give_up(&abandon);
                    if d.elapsed() >= STOP_WAIT {
                        error(&format!(
                            "the files in flight did not stop within {} s of the grace period's end: exiting \
                             without them; they stay in processing/ and are parsed again from the start at the \
                             next start",
                            STOP_WAIT.as_secs()
                        ));
                        break 'serving;
                    }
                }
            }
        }
    }
    while let Ok(f) = finished_rx.try_recv() {
        s.finished(f);
    }
    if engine_result.is_none() {
        // Left running: the process exits, which a publication survives as it survives kill -9.
        return Ok(Request::Stop);
    }
    let _ = engine.join();
    match engine_result {
        Some(Err(e)) => Err(DaemonError::Pipeline(e)),
        _ => Ok(request.unwrap_or(Request::Stop)),
    }
}
