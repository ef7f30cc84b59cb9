//! What the schedule remembers between cycles ([`State`], `retrain-state.json` in the models
//! directory): when the last one started and which store segments it saw, so that new
//! annotations are counted from what it did not see, and when the last one trained, so that new
//! unlabeled text is counted from then. It must not decide when a cycle runs
//! (the daemon's schedule does).

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{io_err, store, RetrainError};

/// When the last cycle started and which store segments it had seen: what is new is what the
/// store holds beyond those ([`State::new_sentences`]), so a segment removed since cannot make
/// the count lie.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    pub last_started: Option<u64>,
    /// Sentences the store had appended, in files from before `segments` was recorded (read
    /// only when `segments` is absent).
    #[serde(default)]
    pub appended: usize,
    /// Numbers of the segments the store held at the last cycle.
    #[serde(default)]
    pub segments: Option<Vec<u64>>,
    /// When the last cycle that trained started (Unix seconds): unlabeled text changed since is
    /// new ([`super::uptraining::new_text_words`]). A skipped cycle leaves it, so that text
    /// arriving over several skipped looks adds up.
    #[serde(default)]
    pub last_trained: Option<u64>,
}

const STATE: &str = "retrain-state.json";

impl State {
    /// The state in the models directory `dir` (default if absent or unreadable).
    pub fn read(dir: &Path) -> State {
        fs::read(dir.join(STATE)).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    /// Sentences stored since the last cycle: those of segments it did not see.
    pub fn new_sentences(&self, contents: &store::Contents) -> usize {
        match &self.segments {
            Some(seen) => contents.segments.iter().filter(|(n, _)| !seen.contains(n)).map(|(_, k)| k).sum(),
            None => contents.appended.saturating_sub(self.appended),
        }
    }

    /// The state after a cycle started at `started` that saw `contents`.
    pub(super) fn seen(started: u64, contents: &store::Contents) -> State {
        let segments = Some(contents.segments.iter().map(|(n, _)| *n).collect());
        State { last_started: Some(started), appended: contents.appended, segments, last_trained: Some(started) }
    }

    pub(super) fn write(&self, dir: &Path) -> Result<(), RetrainError> {
        let path = dir.join(STATE);
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| io_err(&path)(std::io::Error::other(e)))?;
        crate::base::io::write_atomically(&path, &bytes).map_err(io_err(&path))
    }
}
