//! `spoolparse annotate`: the correction workbench, a separate process beside the daemon (its
//! own systemd unit, so that the parsing daemon stays without network access). It serves a page
//! and a JSON API on `[annotate] listen` that queue the daemon's low-confidence sentences
//! ([`queue`]), re-parse each around the annotator's corrections ([`task`]), and write the
//! answers into `annotated/` ([`answers`]), where the daemon's ingest takes them in as it takes
//! any file, so validation, deduplication and retraining stay the daemon's.
//!
//! It reads `lowconf/` (and files given with `--input`), `accepted/` (for a uniform sample,
//! [`sample`]), `models/current` and
//! `models/history.jsonl`; it writes only under `annotated/`. It listens on loopback only,
//! unless `[annotate] tokens_file` names the annotators ([`auth`]), and obeys only requests
//! addressed to it and, from a browser, sent by its own page ([`origin`]).
//!
//! - [`http`]: the small HTTP server, with its limits;
//! - [`api`]: the routes; [`bodies`]: the JSON they take, and the tags and lemmas it fixes, checked;
//! - [`queue`]: ranking and leases; [`sample`]: the uniform sample of what was published, and
//!   [`sampled`]: what its answers say of the precision of `accepted/`;
//! - [`task`]: a task's words, re-parsed, with alternatives;
//! - [`answers`]: the corrections, the sentences set aside and the audit log, durably;
//! - [`auth`]: annotators and their tokens;
//! - [`origin`]: which hosts and origins it obeys;
//! - [`review`]: which answers are rubber stamps, held back;
//! - [`known`]: known-answer checks mixed into the queue; [`standing`]: each annotator's results
//!   on them, and whom they hold back.

pub mod answers;
pub mod api;
pub mod auth;
pub mod bodies;
pub mod error_model;
pub mod http;
pub mod known;
pub mod origin;
pub mod queue;
pub mod review;
pub mod sample;
pub mod sampled;
pub mod standing;
pub mod task;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::daemon::config::Config;
use crate::model::registry::Registry;

/// How often `lowconf/` is looked at for new files.
const RESCAN: Duration = Duration::from_secs(2);

/// Why the workbench could not start.
#[derive(Debug, thiserror::Error)]
pub enum WorkbenchError {
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Tokens(#[from] auth::TokensError),
    #[error(transparent)]
    Model(#[from] crate::model::registry::RegistryError),
    #[error("{what}: {error}")]
    Io { what: String, error: std::io::Error },
}

/// What `spoolparse annotate` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to listen (overrides `[annotate] listen`): an address or a name with a port.
    pub listen: Option<String>,
    /// CoNLL-U files queued besides `lowconf/`.
    pub inputs: Vec<PathBuf>,
    /// Overrides `[annotate] sample_every`.
    pub sample_every: Option<u32>,
}

/// The address, checked: a non-loopback address needs tokens.
pub fn listen_address(config: &Config, options: &Options) -> Result<SocketAddr, WorkbenchError> {
    let addr = match &options.listen {
        Some(text) => resolve(text).map_err(|e| WorkbenchError::Config(format!("--listen {text:?}: {e}")))?,
        None => resolve(&config.annotate.listen)
            .map_err(|e| WorkbenchError::Config(format!("[annotate] listen {:?}: {e}", config.annotate.listen)))?,
    };
    if !addr.ip().is_loopback() && config.annotate.tokens_file.is_none() {
        return Err(WorkbenchError::Config(format!(
            "{addr} is not a loopback address: set [annotate] tokens_file (annotators and their tokens) to listen \
             there, or listen on 127.0.0.1 behind a reverse proxy"
        )));
    }
    Ok(addr)
}

/// The address to bind for `text`: `127.0.0.1:8040`, `[::1]:8040`, or a name with a port
/// (`localhost:8040`), looked up, its first IPv4 address preferred (what browsers try first).
fn resolve(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    if text.rsplit_once(':').is_none_or(|(_, port)| port.parse::<u16>().is_err()) {
        return Err("expected an address or a name with a port (127.0.0.1:8040, localhost:8040)".into());
    }
    let found: Vec<SocketAddr> = text.to_socket_addrs().map_err(|e| format!("cannot look the name up: {e}"))?.collect();
    found.iter().find(|a| a.is_ipv4()).or(found.first()).copied().ok_or_else(|| "the name has no address".into())
}

/// Runs the workbench until `stop` is set.
pub fn run(config: &Config, options: &Options, stop: &AtomicBool) -> Result<(), WorkbenchError> {
    let addr = listen_address(config, options)?;
    let tokens = config.annotate.tokens_file.as_deref().map(auth::Tokens::load).transpose()?;
    let io = |what: String| move |error| WorkbenchError::Io { what, error };
    let annotated = config.paths.annotated();
    let answers = answers::Answers::open(&annotated).map_err(io(format!("opening {}", annotated.display())))?;
    let done = answers::done_sources(&annotated).map_err(io(format!("reading {}", annotated.display())))?;
    let heldout = gold_sentences(config.retrain.heldout.as_deref(), usize::MAX, "retrain.heldout");
    let held_out = heldout.iter().map(crate::retrain::reference::forms_hash).collect();
    let mut queue = queue::Queue::new(done)
        .without(held_out)
        .with_samples(options.sample_every.unwrap_or(config.annotate.sample_every));
    let standing = standing::Standing::open(&annotated).map_err(io(format!("reading {}", annotated.display())))?;
    let checks = api::Checks::new(known_answers(config, heldout), standing);
    // What earlier sessions' answers said of the parser's errors still ranks the queue.
    for (pattern, p, wrong) in
        answers::checked_answers(&annotated).map_err(io(format!("reading {}", annotated.display())))?
    {
        queue.observe(pattern, p, wrong);
    }
    let registry = Registry::new(config.paths.models());
    let current = registry.current_name().map_err(io("reading models/current".into()))?;
    let model = match &current {
        Some(name) => registry.open(name)?,
        None => crate::model::file::ModelFile::open(&config.paths.model)
            .map_err(|e| WorkbenchError::Config(format!("{}: {e}", config.paths.model.display())))?,
    };
    let listener = http::bind(addr).map_err(io(format!("listening on {addr}")))?;
    let served = (current, Arc::new(model));
    let asked = sampled::Asked {
        min_confidence: config.parse.given_min_confidence(),
        min_precision: config.parse.min_precision,
    };
    let bench = api::Workbench::new(queue, registry, served, answers, annotated, tokens, checks).asking(asked);
    let bench = Arc::new(if config.retrain.enabled { bench } else { bench.without_retraining() });
    spawn_scanner(Arc::clone(&bench), config.paths.output.clone(), options.inputs.clone());
    // The address bound (port 0 picks one), in the form scripts and tests wait for.
    let bound = listener.local_addr().unwrap_or(addr);
    tracing::info!("workbench on http://{bound}/");
    let handler = {
        let bench = Arc::clone(&bench);
        let origins = origin::Origins::new(bound, &config.annotate.hosts);
        Arc::new(move |req| match origins.check(&req) {
            Ok(()) => bench.handle(req),
            Err(refused) => refused,
        })
    };
    http::serve(listener, http::Limits::default(), stop, handler).map_err(io(format!("serving on {addr}")))
}

/// Queues the given inputs, then every complete file (not dot-files) of `OUTPUT/lowconf/`, and
/// offers those of `OUTPUT/accepted/` to the sample, every [`RESCAN`]; a file that cannot be
/// read is said once.
fn spawn_scanner(bench: Arc<api::Workbench>, output: PathBuf, inputs: Vec<PathBuf>) {
    let said = Mutex::new(std::collections::HashSet::new());
    let scan = move |path: &Path, ranked: bool| {
        let added = match ranked {
            true => bench.queue.lock().unwrap_or_else(|p| p.into_inner()).add_file(path),
            false => queue::Queue::add_accepted(&bench.queue, path),
        };
        match added {
            Ok(0) => {}
            Ok(n) if ranked => tracing::info!("workbench: queued {n} sentences of {}", path.display()),
            Ok(n) => tracing::info!("workbench: sampled {n} sentences of {}", path.display()),
            Err(e) => {
                if said.lock().unwrap_or_else(|p| p.into_inner()).insert(path.to_path_buf()) {
                    tracing::warn!("workbench: {e}");
                }
            }
        }
    };
    let _ = std::thread::Builder::new().name("workbench-scan".into()).spawn(move || loop {
        for input in &inputs {
            scan(input, true);
        }
        for (dir, ranked) in [("lowconf", true), ("accepted", false)] {
            let dir = output.join(dir);
            if let Ok(names) = crate::base::io::visible_files(&dir) {
                for name in names.iter().filter(|n| n.ends_with(".conllu") || n.ends_with(".conllu.zst")) {
                    scan(&dir.join(name), ranked);
                }
            }
        }
        std::thread::sleep(RESCAN);
    });
}

/// The first `limit` sentences of the gold file `path` (`key` of the configuration; none if it
/// is not set, or said and none if it cannot be read). The workbench never queues those of
/// `retrain.heldout`, and draws its known-answer checks from them.
fn gold_sentences(path: Option<&Path>, limit: usize, key: &str) -> Vec<crate::corpus::Sentence> {
    let Some(path) = path else { return Vec::new() };
    let reader = crate::corpus::Reader::open(path, crate::corpus::Format::from_path(path));
    match reader.and_then(|r| r.take(limit).collect::<Result<Vec<_>, _>>()) {
        Ok(sents) => sents,
        Err(e) => {
            tracing::warn!(
                "workbench: {key}: {e}: its sentences may be asked about, answers to them refused, and no \
                 known-answer check drawn from them"
            );
            Vec::new()
        }
    }
}

/// The known-answer checks, `[annotate] check_every`: drawn from `heldout` (the sentences of
/// `retrain.heldout`), else from the first [`known::POOL`] of the first `retrain.base` file.
fn known_answers(config: &Config, heldout: Vec<crate::corpus::Sentence>) -> known::KnownAnswers {
    let every = config.annotate.check_every;
    let (path, sentences) = match (&config.retrain.heldout, config.retrain.base.first()) {
        _ if every == 0 => return known::KnownAnswers::off(),
        (Some(path), _) if !heldout.is_empty() => (path.clone(), heldout),
        (_, Some(base)) => (base.clone(), gold_sentences(Some(base), known::POOL, "retrain.base")),
        _ => return known::KnownAnswers::off(),
    };
    let checks = known::KnownAnswers::new(&path, sentences, every);
    match checks.is_empty() {
        true => tracing::warn!("workbench: no known-answer checks: no gold tree in {}", path.display()),
        false => tracing::info!(
            "workbench: one task in {every} is a known-answer check, from {} sentences of {}",
            checks.len(),
            path.display()
        ),
    }
    checks
}

/// Stops the workbench on SIGTERM or SIGINT.
pub fn stop_on_signals(stop: &Arc<AtomicBool>) -> std::io::Result<()> {
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(stop))?;
    }
    Ok(())
}
