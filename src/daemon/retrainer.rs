//! The daemon's background work on annotations, in one thread at the lowest CPU priority while
//! parsing goes on: it takes in `annotated/` every few seconds, and runs a retraining cycle
//! ([`crate::retrain::run_cycle`]) when `[retrain]` says one is due. A promoted model reaches
//! the parsing side only through `models/current`, which the scheduler follows between files.
//!
//! This module owns *when*; what a cycle does is [`crate::retrain`]'s. The thread is never
//! joined: a stop does not wait for a cycle that may take minutes, and a cycle killed at any
//! moment leaves a serving model and loses no annotation (see [`crate::model::registry`] and
//! [`crate::retrain::store`]).

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::config::Config;
use super::metrics::Metrics;
use super::{error, log, warn};
use crate::model::registry::{unix_time, Registry};
use crate::retrain::reference::Reference;
use crate::retrain::store::Store;
use crate::retrain::{run_cycle, CycleOptions, Decision, State, RETRAIN_REQUEST};

/// How often `annotated/` is looked at.
const POLL: Duration = Duration::from_secs(5);

/// Starts the thread with `config`; each configuration sent on `updates` (after a reload)
/// replaces it, and the thread ends when the sender is dropped.
pub fn spawn(config: Config, updates: Receiver<Config>, metrics: Arc<Metrics>) -> std::io::Result<()> {
    std::thread::Builder::new().name("spoolparse-retrain".into()).spawn(move || {
        lower_priority();
        let mut config = config;
        let mut said = Said::default();
        loop {
            tick(&config, &metrics, &mut said);
            match updates.recv_timeout(POLL) {
                Ok(new) => {
                    config = new;
                    said = Said::default();
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    })?;
    Ok(())
}

/// The last problem logged, so that one that lasts (a `retrain.heldout` that does not open) is
/// logged when it starts, not at every look.
#[derive(Default)]
struct Said(Option<String>);

impl Said {
    /// Logs `message` as an error unless it was the last one logged.
    fn error(&mut self, message: String) {
        if self.0.as_ref() != Some(&message) {
            error(&message);
            self.0 = Some(message);
        }
    }
}

/// Nice 19 for this thread only (Linux threads have their own nice value): training must not
/// slow parsing down more than the spare CPU allows.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions; setpriority only reads its arguments.
        let tid = unsafe { libc::gettid() };
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19) } != 0 {
            warn(&format!("could not lower the retraining thread's priority: {}", std::io::Error::last_os_error()));
        }
    }
}

/// One look: takes in `annotated/` if a file waits there, and runs a cycle if one is asked for
/// or due. Idle (nothing waiting, nothing asked, no cycle due), it reads a directory and a
/// small state file, and maps and reads nothing else.
fn tick(config: &Config, metrics: &Metrics, said: &mut Said) {
    let settings = &config.retrain;
    // Asked for by an admin (the workbench's "retrain now"): once, whatever the schedule.
    let request = config.paths.annotated().join(RETRAIN_REQUEST);
    let waiting = Store::new(&config.paths.annotated()).has_incoming();
    let registry = Registry::new(config.paths.models());
    let due = || settings.next_due(State::read(registry.dir()).last_started).is_some_and(|due| unix_time() >= due);
    if !(waiting || request.exists() || settings.enabled && due()) {
        return;
    }
    let reference = match Reference::new(&registry, settings) {
        Ok(r) => r,
        Err(e) => {
            said.error(format!("taking in annotations: reading what they are checked against: {e}"));
            return;
        }
    };
    let store = Store::new(&config.paths.annotated()).with_reference(reference);
    if waiting {
        ingest(&store, metrics, said);
    }
    let asked = request.exists() && std::fs::remove_file(&request).is_ok();
    if asked && !settings.enabled {
        warn("retraining was asked for, but [retrain] is not enabled in the configuration");
        return;
    }
    if !(asked || settings.enabled && due()) {
        return;
    }
    log(if asked { "retraining: a cycle was asked for" } else { "retraining: a cycle is due" });
    let mut progress = |line: &str| log(&format!("retraining: {line}"));
    match run_cycle(
        settings,
        &registry,
        &store,
        &CycleOptions { force: asked, ..CycleOptions::default() },
        &mut progress,
    ) {
        Ok(report) => {
            let counter = match report.decision {
                Some(Decision::Promoted) => &metrics.retrain_promoted,
                Some(Decision::Rejected) => &metrics.retrain_rejected,
                _ => &metrics.retrain_skipped,
            };
            Metrics::add(counter, 1);
            let decision = report.decision.map_or("none", Decision::name);
            let candidate = report.candidate.as_ref().map_or(String::new(), |c| format!(" {}", c.model));
            log(&format!(
                "retraining: candidate{candidate} {decision} in {:.0} s: {}",
                report.seconds,
                report.reasons.join("; ")
            ));
        }
        Err(e) => {
            Metrics::add(&metrics.retrain_failed, 1);
            error(&format!("retraining failed: {e}"));
        }
    }
}

/// Takes in `annotated/`, counting and logging what became of each file.
fn ingest(store: &Store, metrics: &Metrics, said: &mut Said) {
    match store.ingest() {
        Ok(r) => {
            Metrics::add(&metrics.annotations_stored, r.sentences as u64);
            Metrics::add(&metrics.annotations_rejected, r.rejected.len() as u64);
            Metrics::add(&metrics.annotations_suspect, r.suspect.len() as u64);
            for file in &r.by_file {
                log(&format!("annotations: {file}"));
            }
            for why in &r.rejected {
                warn(&format!("annotation rejected (kept in {}): {why}", store.rejected.display()));
            }
            for why in &r.suspect {
                warn(&format!("annotation set aside until confirmed (in {}): {why}", store.suspect.display()));
            }
        }
        Err(e) => said.error(format!("taking in annotations: {e}")),
    }
}
