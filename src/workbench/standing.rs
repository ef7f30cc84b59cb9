//! Each annotator's standing on the known-answer checks ([`super::known`]): how many they
//! passed and failed, their [`RECENT`] latest results, and whether their answers are held back.
//!
//! Held back ([`Record::held_back`]): while the annotator's latest check failed, or
//! [`RECENT_FAILED`] of their last [`RECENT`] did. After a single failure the answers are only
//! pending ([`Record::pending`]): set aside until the next check, and stored if it passes (the
//! workbench moves them back), so that one slip costs an honest annotator nothing; a rubber
//! stamp, which confirms the model's errors, fails the next check too and stays held back, its
//! answers set aside for a person to review.
//!
//! Kept durably in `annotated/workbench/checks.json`, rewritten atomically
//! ([`crate::base::io::write_atomically`]) after every result, so that a restart neither
//! forgets a held-back annotator nor forgives them. This module owns the counts and the rule.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The latest results the rule looks at.
pub const RECENT: usize = 3;
/// Failures among the [`RECENT`] latest that hold an annotator back (the latest alone does too).
pub const RECENT_FAILED: usize = 2;

/// One annotator's results.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub passed: u64,
    pub failed: u64,
    /// The [`RECENT`] latest results, oldest first (`true`: passed).
    pub recent: Vec<bool>,
}

impl Record {
    /// Why this annotator's answers are held back, if they are.
    pub fn held_back(&self) -> Option<String> {
        const WHAT: &str = "sentences whose gold tree is known, shown with the model's errors on words to check, \
                            answered with other arcs than gold's there";
        if self.pending() {
            return Some(format!(
                "the latest known-answer check failed ({WHAT}): answers wait in annotated/suspect/ for the next \
                 check, and are stored if it passes"
            ));
        }
        (self.failures() >= RECENT_FAILED).then(|| {
            format!(
                "{} of the last {} known-answer checks failed ({WHAT}): answers are set aside for review until \
                 checks pass again",
                self.failures(),
                self.recent.len()
            )
        })
    }

    /// Whether the answers wait for the next check: the latest failed, the one failure among
    /// the last [`RECENT`].
    pub fn pending(&self) -> bool {
        self.recent.last() == Some(&false) && self.failures() < RECENT_FAILED
    }

    fn failures(&self) -> usize {
        self.recent.iter().filter(|&&p| !p).count()
    }

    fn add(&mut self, passed: bool) {
        if passed {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        self.recent.push(passed);
        if self.recent.len() > RECENT {
            self.recent.remove(0);
        }
    }
}

/// Every annotator's record, by name, and the file that keeps them.
pub struct Standing {
    path: PathBuf,
    records: Mutex<BTreeMap<String, Record>>,
}

/// The file of `annotated/` that keeps the records.
pub fn standing_path(annotated: &Path) -> PathBuf {
    annotated.join("workbench").join("checks.json")
}

impl Standing {
    /// The records kept under `annotated/` (none if the file does not exist yet).
    pub fn open(annotated: &Path) -> io::Result<Standing> {
        let path = standing_path(annotated);
        let records = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", path.display())))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(e),
        };
        Ok(Standing { path, records: Mutex::new(records) })
    }

    /// Records a check's result for `annotator`, durably.
    pub fn record(&self, annotator: &str, passed: bool) -> io::Result<()> {
        let mut records = self.records.lock().unwrap_or_else(|p| p.into_inner());
        let mut updated = records.clone();
        updated.entry(annotator.to_string()).or_default().add(passed);
        let bytes = serde_json::to_vec_pretty(&updated).map_err(io::Error::other)?;
        crate::base::io::write_atomically(&self.path, &bytes)?;
        *records = updated;
        Ok(())
    }

    /// `annotator`'s record (empty if they have none).
    pub fn get(&self, annotator: &str) -> Record {
        self.records.lock().unwrap_or_else(|p| p.into_inner()).get(annotator).cloned().unwrap_or_default()
    }

    /// Why `annotator`'s answers are held back, if they are.
    pub fn held_back(&self, annotator: &str) -> Option<String> {
        self.get(annotator).held_back()
    }

    /// Every record, by name.
    pub fn all(&self) -> BTreeMap<String, Record> {
        self.records.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(results: &[bool]) -> Record {
        let mut r = Record::default();
        for &p in results {
            r.add(p);
        }
        r
    }

    #[test]
    fn a_failed_latest_check_or_two_of_three_hold_back_and_passing_again_releases() {
        assert!(after(&[]).held_back().is_none(), "no check yet");
        assert!(after(&[true, true, true]).held_back().is_none());
        assert!(after(&[false]).held_back().is_some() && after(&[false]).pending(), "the latest failed");
        assert!(after(&[true, true, false]).pending(), "the latest failed");
        assert!(!after(&[false, true, false]).pending() && after(&[false, true, false]).held_back().is_some());
        assert!(after(&[true, false, true]).held_back().is_none(), "one slip, then a pass");
        assert!(after(&[false, false, true]).held_back().is_some(), "two of the last three failed");
        assert!(after(&[false, false, true, true]).held_back().is_none(), "two of the last three passed");
        let r = after(&[false, true, false, true, true]);
        assert_eq!((r.passed, r.failed, r.recent.clone()), (3, 2, vec![false, true, true]));
    }

    #[test]
    fn results_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("workbench")).unwrap();
        let standing = Standing::open(dir.path()).unwrap();
        standing.record("ana", false).unwrap();
        standing.record("bo", true).unwrap();
        let again = Standing::open(dir.path()).unwrap();
        assert!(again.held_back("ana").is_some());
        assert!(again.held_back("bo").is_none());
        assert_eq!(again.get("bo"), Record { passed: 1, failed: 0, recent: vec![true] });
    }
}
