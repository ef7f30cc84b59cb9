//! The models directory (config `paths.models`): every model file the daemon serves, which one
//! serves now, and how it came to.
//!
//! - `STEM-HASH.model`: immutable copies named by content, the only model files the daemon
//!   ever maps. A mapped file that someone rewrites in place (`cp new.model current.model`)
//!   turns the daemon's next read of a changed page into SIGBUS, with nothing in the log. So a
//!   configured model is copied here first ([`Registry::install`]): streamed to a dot-name
//!   while its SHA-256 is computed, fsync'd, checked in full (header, bounds, every section's
//!   CRC-32), made read-only and renamed. A half-copied or corrupt source fails the check and
//!   leaves nothing behind; the same model installed twice is one file. Retrained candidates
//!   arrive the same way, so a half-written candidate never has a name that can be served.
//! - `current`: a symbolic link to the serving model, replaced atomically (a new link under a
//!   dot-name, renamed over the old one). It is the single truth about what serves: a kill
//!   at any moment leaves it naming a whole model, the old one or the new.
//! - `configured`: a symbolic link to the model last configured (`paths.model`), moved with
//!   `current` when a configured model starts serving. A restart serves the configured model
//!   only if it differs from this one; otherwise `current` goes on serving (a promotion, a
//!   rollback).
//! - `history.jsonl`: one JSON line per change of `current` (configured, promoted, rollback),
//!   appended and fsync'd *after* the link moved, so that it never says a model serves that
//!   does not; a torn last line is ignored. The change is written to `history.pending` before
//!   the link moves: a kill between the move and the append leaves it there, and the history
//!   read ([`Registry::history`]) counts it if `current` names its model (the next lock
//!   appends it, or drops it if the link never moved). It is a log for `models list` and
//!   `models rollback`; what serves never depends on it (but in directories from before
//!   `configured` existed, where its last configured model stands in for the link).
//! - Model files that someone else put here (any name but the `STEM-HASH.model` of a copy) are
//!   never removed.
//! - `NAME.json`: the retraining report of a candidate (promoted or not, see
//!   [`crate::retrain`]).
//!
//! This module owns that directory's contents; it must not decide when a model is promoted
//! (the retraining gate does) or when the daemon switches (the daemon polls [`Registry::current_name`]).

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::base::io::sync_dir;
use crate::model::file::{ModelError, ModelFile};

/// Why the models directory could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    /// `error` is said without its own file's name: the model may have been checked as a
    /// temporary copy, whose name means nothing to the user.
    #[error("{}: not a usable model: {}", source_path.display(), error.problem())]
    Model { source_path: PathBuf, error: ModelError },
    #[error("{0}")]
    Rollback(String),
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> RegistryError {
    let path = path.to_path_buf();
    move |error| RegistryError::Io { path, error }
}

/// Hex digits of the SHA-256 kept in a copy's name: 64 bits, no collision among any number of
/// models one daemon will see.
const HASH_DIGITS: usize = 16;
/// The link to the serving model.
const CURRENT: &str = "current";
/// The link to the model last configured.
const CONFIGURED: &str = "configured";
/// The log of changes of `current`.
const HISTORY: &str = "history.jsonl";
/// The change being made, written before `current` moves and removed once it is in the log.
const PENDING: &str = "history.pending";
/// Test hook: a process with this variable set to an event's name ([`Event::name`]) kills
/// itself (SIGKILL) just before moving `current` for that event, the moment a crash is worst
/// for the history. The path is the production one otherwise.
pub const KILL_BEFORE_SWITCH_ENV: &str = "SPOOLPARSE_TEST_KILL_BEFORE_SWITCH";
/// Taken (flock) while `current` and the history change, so that a rollback and a promotion
/// never interleave.
const LOCK: &str = ".lock";

/// Why `current` changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Event {
    /// The configured model (`paths.model`) changed, or nothing served yet.
    Configured,
    /// A retrained candidate passed the gate.
    Promoted,
    /// `spoolparse models rollback`.
    Rollback,
}

impl Event {
    /// The name written in the history.
    pub fn name(self) -> &'static str {
        match self {
            Event::Configured => "configured",
            Event::Promoted => "promoted",
            Event::Rollback => "rollback",
        }
    }
}

/// One line of `history.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Seconds since the Unix epoch.
    pub time: u64,
    pub event: Event,
    /// File name of the model that serves from then on.
    pub model: String,
    /// File name of the model that served before, if any.
    pub from: Option<String>,
}

/// The models directory.
#[derive(Debug, Clone)]
pub struct Registry {
    dir: PathBuf,
}

impl Registry {
    /// The models directory at `dir` (created when something is installed).
    pub fn new(dir: impl Into<PathBuf>) -> Registry {
        Registry { dir: dir.into() }
    }

    /// Where it is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Copies `source` in under its own stem (see [`install`]).
    pub fn install(&self, source: &Path) -> Result<ModelFile, RegistryError> {
        install(source, &self.dir)
    }

    /// Copies `source` in as `STEM-HASH.model`.
    pub fn install_as(&self, source: &Path, stem: &str) -> Result<ModelFile, RegistryError> {
        install_named(source, &self.dir, stem)
    }

    /// The file name `current` links to, if it exists.
    pub fn current_name(&self) -> io::Result<Option<String>> {
        self.link(CURRENT)
    }

    /// The file name the link `name` points to, if it exists.
    fn link(&self, name: &str) -> io::Result<Option<String>> {
        match fs::read_link(self.dir.join(name)) {
            Ok(target) => Ok(Some(file_name(&target))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The model last configured: the `configured` link, or in a directory from before it
    /// existed, the history's last configured model.
    fn last_configured(&self) -> Result<Option<String>, RegistryError> {
        if let Some(name) = self.link(CONFIGURED).map_err(io_err(&self.dir))? {
            return Ok(Some(name));
        }
        Ok(self.history()?.into_iter().rev().find(|c| c.event == Event::Configured).map(|c| c.model))
    }

    /// Opens the model named `name` here and checks it in full.
    pub fn open(&self, name: &str) -> Result<ModelFile, RegistryError> {
        let path = self.dir.join(name);
        let error = |error| RegistryError::Model { source_path: path.clone(), error };
        let model = ModelFile::open(&path).map_err(error)?;
        model.verify().map_err(error)?;
        Ok(model)
    }

    /// The model to serve, given the configured one: the configured model if it is new (not the
    /// last one configured) or if nothing serves yet; otherwise what `current` names, which may
    /// be a retrained model promoted since, or one rolled back to.
    pub fn serve(&self, configured: &Path) -> Result<ModelFile, RegistryError> {
        // Locked from the copy on: pruning must not take a copy before `current` names it.
        let lock = self.lock()?;
        let installed = self.install(configured)?;
        let name = file_name(installed.path());
        if self.last_configured()?.is_some_and(|last| last == name) {
            // A directory from before the link: from now on what serves does not need the history.
            if self.link(CONFIGURED).map_err(io_err(&self.dir))?.is_none() {
                self.set_link(CONFIGURED, &name)?;
            }
            if let Some(current) = self.current_name().map_err(io_err(&self.dir))? {
                if current == name {
                    return Ok(installed);
                }
                match self.open(&current) {
                    Ok(model) => return Ok(model),
                    Err(e) => tracing::warn!("{e}; serving the configured model instead"),
                }
            }
        }
        lock.switch(Event::Configured, &name)?;
        Ok(installed)
    }

    /// Makes `name` (a model in this directory) the serving one: logs the change, then moves
    /// the link.
    pub fn switch(&self, event: Event, name: &str) -> Result<Change, RegistryError> {
        self.lock()?.switch(event, name)
    }

    /// Holds the directory's lock: what `current` names stays so until the guard is dropped,
    /// but through it ([`Locked::switch`]).
    pub fn lock(&self) -> Result<Locked<'_>, RegistryError> {
        fs::create_dir_all(&self.dir).map_err(io_err(&self.dir))?;
        let path = self.dir.join(LOCK);
        let file = File::create(&path).map_err(io_err(&path))?;
        file.lock().map_err(io_err(&path))?;
        let locked = Locked { registry: self, _file: file };
        locked.settle()?;
        Ok(locked)
    }

    /// Points the link `link` at `name`, atomically (a new link under a dot-name, renamed over).
    fn set_link(&self, link: &str, name: &str) -> Result<(), RegistryError> {
        // Named like write_atomically's temporaries, so that the same sweep finds them after a crash.
        let tmp = self.dir.join(format!(".{link}.tmp{}", std::process::id()));
        let _ = fs::remove_file(&tmp);
        std::os::unix::fs::symlink(name, &tmp).map_err(io_err(&tmp))?;
        let path = self.dir.join(link);
        fs::rename(&tmp, &path).map_err(io_err(&path))
    }

    /// Every change of `current`, oldest first (a torn last line, from a crash, is left out).
    pub fn history(&self) -> Result<Vec<Change>, RegistryError> {
        let path = self.dir.join(HISTORY);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io_err(&path)(e)),
        };
        let mut changes: Vec<Change> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        if let Some(pending) = self.pending_served()? {
            if changes.last() != Some(&pending) {
                changes.push(pending);
            }
        }
        Ok(changes)
    }

    /// The change in `history.pending`, if `current` names its model (the link moved, the log
    /// line may be missing).
    fn pending_served(&self) -> Result<Option<Change>, RegistryError> {
        let path = self.dir.join(PENDING);
        let pending: Option<Change> = match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).ok(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err(&path)(e)),
        };
        let current = self.current_name().map_err(io_err(&self.dir))?;
        Ok(pending.filter(|p| current.as_deref() == Some(p.model.as_str())))
    }

    /// Moves `current` back to the model that served before it was promoted or configured
    /// (rolling back twice goes two steps back, not back and forth).
    pub fn rollback(&self) -> Result<Change, RegistryError> {
        let lock = self.lock()?;
        let current = self
            .current_name()
            .map_err(io_err(&self.dir))?
            .ok_or_else(|| RegistryError::Rollback(format!("{}: no model serves yet", self.dir.display())))?;
        let mut served = served_stack(&self.history()?);
        if served.last() != Some(&current) {
            return Err(RegistryError::Rollback(format!(
                "{current} serves, but {HISTORY} in {} does not end with it: it cannot say what served before",
                self.dir.display()
            )));
        }
        served.pop();
        let Some(previous) = served.pop() else {
            return Err(RegistryError::Rollback(format!(
                "{current} is the first model served: nothing to roll back to"
            )));
        };
        if !self.dir.join(&previous).exists() {
            return Err(RegistryError::Rollback(format!(
                "{previous}, which served before {current}, is no longer in {} (see retrain.keep_models)",
                self.dir.display()
            )));
        }
        self.open(&previous)?;
        lock.switch(Event::Rollback, &previous)
    }

    /// Removes the copies (`STEM-HASH.model`) beyond the `keep` most recently served, never the
    /// current one nor the last configured one, nor a file of another name. Returns the names
    /// removed.
    pub fn prune(&self, keep: usize) -> Result<Vec<String>, RegistryError> {
        let _lock = self.lock()?;
        let history = self.history()?;
        let mut kept: Vec<String> = Vec::new();
        for c in history.iter().rev() {
            if kept.len() >= keep.max(1) {
                break;
            }
            if !kept.contains(&c.model) {
                kept.push(c.model.clone());
            }
        }
        kept.extend(self.current_name().map_err(io_err(&self.dir))?);
        kept.extend(self.last_configured()?);
        let mut removed = Vec::new();
        for entry in fs::read_dir(&self.dir).map_err(io_err(&self.dir))? {
            let entry = entry.map_err(io_err(&self.dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_copy_name(&name) && !kept.contains(&name) {
                fs::remove_file(entry.path()).map_err(io_err(&entry.path()))?;
                removed.push(name);
            }
        }
        Ok(removed)
    }
}

/// The models directory, locked ([`Registry::lock`]).
pub struct Locked<'r> {
    registry: &'r Registry,
    _file: File,
}

impl Locked<'_> {
    /// The file name `current` links to, if it exists; it cannot change while this is held.
    pub fn current_name(&self) -> io::Result<Option<String>> {
        self.registry.current_name()
    }

    /// Makes `name` (a model in this directory) the serving one: logs the change, then moves
    /// `current` (and for a configured model, `configured`).
    pub fn switch(&self, event: Event, name: &str) -> Result<Change, RegistryError> {
        let r = self.registry;
        let from = r.current_name().map_err(io_err(&r.dir))?;
        let change = Change { time: unix_time(), event, model: name.to_string(), from };
        let pending = r.dir.join(PENDING);
        let line = serde_json::to_string(&change).map_err(|e| io_err(&r.dir)(io::Error::other(e)))?;
        crate::base::io::write_atomically(&pending, line.as_bytes()).map_err(io_err(&pending))?;
        if std::env::var(KILL_BEFORE_SWITCH_ENV).is_ok_and(|v| v == event.name()) {
            // SAFETY: kill(2) with our own pid and a signal number has no memory effects.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        r.set_link(CURRENT, name)?;
        // After `current`: a crash between the two leaves `configured` behind, and the next start
        // configures the same model again (one more history line), never the reverse.
        if event == Event::Configured {
            r.set_link(CONFIGURED, name)?;
        }
        sync_dir(&r.dir).map_err(io_err(&r.dir))?;
        self.settle()?;
        Ok(change)
    }

    /// Brings `history.jsonl` in line with what serves: the pending change is appended if
    /// `current` names its model (and the log does not end with it already), then removed.
    fn settle(&self) -> Result<(), RegistryError> {
        let r = self.registry;
        let pending = r.dir.join(PENDING);
        if !pending.exists() {
            return Ok(());
        }
        if let Some(change) = r.pending_served()? {
            let history = r.dir.join(HISTORY);
            let text = fs::read_to_string(&history).unwrap_or_default();
            let logged = text.lines().filter_map(|l| serde_json::from_str::<Change>(l).ok()).next_back();
            if logged.as_ref() != Some(&change) {
                let mut line = serde_json::to_string(&change).map_err(|e| io_err(&r.dir)(io::Error::other(e)))?;
                line.push('\n');
                // A torn last line (a crash while appending) must not swallow this one.
                if !text.is_empty() && !text.ends_with('\n') {
                    line.insert(0, '\n');
                }
                let mut log =
                    fs::OpenOptions::new().create(true).append(true).open(&history).map_err(io_err(&history))?;
                log.write_all(line.as_bytes()).and_then(|()| log.sync_all()).map_err(io_err(&history))?;
            }
        }
        fs::remove_file(&pending).map_err(io_err(&pending))?;
        sync_dir(&r.dir).map_err(io_err(&r.dir))
    }
}

/// The models that served, oldest first, as rollbacks left them: a configuration or promotion
/// puts its model on top, a rollback takes the top off (down to the model it went back to).
fn served_stack(history: &[Change]) -> Vec<String> {
    let mut served: Vec<String> = Vec::new();
    for c in history {
        match c.event {
            Event::Rollback => match served.iter().rposition(|m| *m == c.model) {
                Some(at) if at + 1 < served.len() => served.truncate(at + 1),
                // Not below the top: the log lost lines; start again from what it says serves.
                _ => served = vec![c.model.clone()],
            },
            _ if served.last() == Some(&c.model) => {}
            _ => served.push(c.model.clone()),
        }
    }
    served
}

/// Whether `name` is that of a copy made here: `STEM-HASH.model`, `HASH` [`HASH_DIGITS`] hex digits.
fn is_copy_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".model").filter(|_| !name.starts_with('.')) else { return false };
    stem.rsplit_once('-').is_some_and(|(head, hash)| {
        !head.is_empty() && hash.len() == HASH_DIGITS && hash.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// The last component of `path`, as a string (how models are named in this directory).
pub fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Seconds since the Unix epoch.
pub fn unix_time() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `secs` since the Unix epoch as a compact UTC time, `20261123T101500Z` (for file names).
pub fn compact_utc(secs: u64) -> String {
    // Days to civil date: Howard Hinnant's algorithm (proleptic Gregorian calendar).
    let days = (secs / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let t = secs % 86_400;
    format!("{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z", t / 3600, t / 60 % 60, t % 60)
}

/// Copies `source` into `dir` under its content's name unless it is there already, checks it in
/// full and opens the copy.
pub fn install(source: &Path, dir: &Path) -> Result<ModelFile, RegistryError> {
    let stem = source.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    install_named(source, dir, &stem)
}

fn install_named(source: &Path, dir: &Path, stem: &str) -> Result<ModelFile, RegistryError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    // Named like write_atomically's temporaries, so that the same sweep finds them after a
    // crash; numbered, as two threads (serving, retraining) may install at the same time.
    static INSTALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = INSTALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".install{n}.model.tmp{}", std::process::id()));
    let result = (|| {
        let hash = copy_hashing(source, &tmp).map_err(io_err(source))?;
        let stem: String =
            stem.chars().map(|c| if c.is_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
        let name = dir.join(format!("{stem}-{}.model", &hash[..HASH_DIGITS]));
        let checked = |path: &Path, named: &Path| {
            let error = |error| RegistryError::Model { source_path: named.into(), error };
            let model = ModelFile::open(path).map_err(error)?;
            model.verify().map_err(error)?;
            Ok(model)
        };
        if name.exists() {
            // Installed before: checked again, as the disk may have changed it since.
            return checked(&name, &name);
        }
        // Checked before it gets its final name, so that a file there is always a whole model;
        // opened again after the rename only to carry that name (no second checksum pass).
        drop(checked(&tmp, source)?);
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o444)).map_err(io_err(dir))?;
        fs::rename(&tmp, &name).map_err(io_err(&name))?;
        sync_dir(dir).map_err(io_err(dir))?;
        ModelFile::open(&name).map_err(|error| RegistryError::Model { source_path: name.clone(), error })
    })();
    let _ = fs::remove_file(&tmp);
    result
}

/// Streams `from` into a new file `to` (fsync'd), returning the SHA-256 of the bytes in hex.
fn copy_hashing(from: &Path, to: &Path) -> io::Result<String> {
    let mut input = File::open(from)?;
    let mut output = File::create(to)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        output.write_all(&buf[..n])?;
    }
    output.sync_all()?;
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_source_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("m.model");
        fs::write(&source, b"not a model at all").unwrap();
        let models = dir.path().join("models");
        let e = install(&source, &models).err().expect("refused").to_string();
        assert!(e.contains("m.model: not a usable model"), "{e}");
        assert!(!e.contains(".install") && !e.contains(".model.tmp"), "the error names the temporary copy: {e}");
        assert_eq!(fs::read_dir(&models).unwrap().count(), 0, "a temporary copy was left");
        let e = install(&dir.path().join("absent.model"), &models).err().expect("refused").to_string();
        assert!(e.contains("absent.model"), "{e}");
    }
}
