//! Known-answer checks: tasks mixed into the queue whose gold tree is known, so that an
//! annotator who confirms the model's trees without reading them is found out, where a speed
//! limit ([`super::review`]) lets a rubber stamp at reading pace through.
//!
//! The sentences are the retraining's own gold data: `[retrain] heldout` (else the first
//! `[retrain] base` file, its first [`POOL`] sentences), read once at start. A check is one of
//! them parsed by the serving model and shown as any task is (the same JSON, the same words to
//! check, ranked the same way), chosen among those where at least one flagged word's arc is
//! wrong against gold ([`KnownAnswers::pick`]): a head, or a relation other than gold's (its
//! universal part: a subtype the annotator may not know is not the error looked for).
//!
//! When ([`KnownAnswers::due`]): an annotator's first task when they have no result yet, then
//! one task in `[annotate] check_every` drawn at random (so that having seen one says nothing
//! of when the next comes), one in two while they are held back (so that passing releases them
//! soon); a check skipped or left to expire stays due. Scoring ([`score`]): the answer is
//! compared with gold on the flagged words the model had wrong; confirming one of them (or any
//! arc that is not gold's there) fails, answering them as gold passes, leaving them all
//! unanswered scores nothing. An answer to a check is never written as a correction: it goes to
//! the audit log only (decision `check`), and its result to [`super::standing`].
//!
//! This module owns the choice of checks and their scoring; it writes nothing.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use rand::{Rng, SeedableRng};

use super::error_model::ErrorModel;
use super::standing::Record;
use super::task::{Reparser, WordView};
use crate::corpus::{Column, Sentence};
use crate::parse::constrained::Constraints;

/// Sentences kept of a `base` file (the held-out file is kept whole).
pub const POOL: usize = 5000;
/// Sentences tried for one check before a plain task is handed out instead.
pub const TRIES: usize = 40;
/// The audit log's `source` of a check starts with this, so that it never names a queued sentence.
pub const SOURCE_PREFIX: &str = "known:";

/// A check handed out: its gold tree, the flagged words the model had wrong, and its lease.
#[derive(Debug, Clone)]
pub struct Known {
    /// Gold HEAD and DEPREL per word (index 0 unused).
    pub gold: Vec<(u32, String)>,
    /// The flagged words whose shown arc is not gold's.
    pub wrong: Vec<u32>,
    pub annotator: String,
    pub since: Instant,
}

impl Known {
    /// Whether the check is still leased to `annotator` at `now`.
    pub fn leased_to(&self, annotator: &str, now: Instant) -> bool {
        self.annotator == annotator && !self.expired(now)
    }

    /// Whether its lease ([`super::queue::LEASE`]) is over.
    pub fn expired(&self, now: Instant) -> bool {
        now >= self.since + super::queue::LEASE
    }
}

/// The gold sentences and whose check is due.
pub struct KnownAnswers {
    /// The gold file's name, for the audit log.
    name: String,
    sentences: Vec<Sentence>,
    every: u32,
    draws: Mutex<Draws>,
}

struct Draws {
    rng: rand_chacha::ChaCha8Rng,
    /// Annotators whose next task is a check.
    due: HashSet<String>,
    /// The sentences each annotator was shown as checks.
    shown: HashMap<String, HashSet<usize>>,
}

impl KnownAnswers {
    /// Checks drawn from `sentences` (of the file `path`), one task in `every` (0: none).
    pub fn new(path: &Path, sentences: Vec<Sentence>, every: u32) -> KnownAnswers {
        let sentences: Vec<Sentence> = sentences.into_iter().filter(|s| gold_arcs(s).is_some()).collect();
        KnownAnswers {
            name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            sentences,
            every,
            draws: Mutex::new(Draws {
                rng: rand_chacha::ChaCha8Rng::from_entropy(),
                due: HashSet::new(),
                shown: HashMap::new(),
            }),
        }
    }

    /// No checks.
    pub fn off() -> KnownAnswers {
        KnownAnswers::new(Path::new(""), Vec::new(), 0)
    }

    /// The gold sentences checks are drawn from.
    pub fn len(&self) -> usize {
        self.sentences.len()
    }

    /// True if there are none (checks are off).
    pub fn is_empty(&self) -> bool {
        self.sentences.is_empty()
    }

    /// Whether `annotator`'s next task is a check, given their `record`; once it says so, it
    /// stays so until one is answered ([`KnownAnswers::answered`]).
    pub fn due(&self, annotator: &str, record: &Record) -> bool {
        if self.every == 0 || self.sentences.is_empty() {
            return false;
        }
        let mut draws = self.draws.lock().unwrap_or_else(|p| p.into_inner());
        if draws.due.contains(annotator) {
            return true;
        }
        let every = if record.held_back().is_some() { self.every.min(2) } else { self.every };
        let due = record.recent.is_empty() || draws.rng.gen_ratio(1, every);
        if due {
            draws.due.insert(annotator.to_string());
        }
        due
    }

    /// `annotator` answered a check (scored): the next is drawn again.
    pub fn answered(&self, annotator: &str) {
        self.draws.lock().unwrap_or_else(|p| p.into_inner()).due.remove(annotator);
    }

    /// A check for `annotator`: a sentence they were not shown yet, parsed by `reparser` and
    /// shown with the words to check as `errors` ranks them, with a flagged word wrong; its
    /// audit source and what scores it. `None` (and no longer due) when [`TRIES`] draws find
    /// none.
    pub fn pick(
        &self,
        annotator: &str,
        reparser: &mut Reparser,
        errors: &ErrorModel,
    ) -> Option<(Sentence, String, Vec<WordView>, Known)> {
        let mut draws = self.draws.lock().unwrap_or_else(|p| p.into_inner());
        for _ in 0..TRIES {
            let index = draws.rng.gen_range(0..self.sentences.len());
            if draws.shown.get(annotator).is_some_and(|s| s.contains(&index)) {
                continue;
            }
            let sent = &self.sentences[index];
            let Some(gold) = gold_arcs(sent) else { continue };
            let words = reparser.view(sent, &Constraints::none(sent.len()), &[], errors);
            let wrong: Vec<u32> = words
                .iter()
                .filter(|w| w.check && !same_arc((w.head, &w.deprel), &gold[w.id as usize]))
                .map(|w| w.id)
                .collect();
            if wrong.is_empty() {
                continue;
            }
            draws.shown.entry(annotator.to_string()).or_default().insert(index);
            let source = format!("{SOURCE_PREFIX}{}#{index}", self.name);
            let known = Known { gold, wrong, annotator: annotator.to_string(), since: Instant::now() };
            return Some((sent.clone(), source, words, known));
        }
        draws.due.remove(annotator);
        None
    }
}

/// Whether an answer passes a check: `arcs` as answered per word (index 0 unused; `None`:
/// unanswered). `None` when none of the words the model had wrong was answered.
pub fn score(known: &Known, arcs: &[Option<(u32, String)>]) -> Option<bool> {
    let answered: Vec<(u32, &(u32, String))> =
        known.wrong.iter().filter_map(|&w| arcs.get(w as usize)?.as_ref().map(|a| (w, a))).collect();
    if answered.is_empty() {
        return None;
    }
    Some(answered.iter().all(|(w, (head, deprel))| same_arc((*head, deprel), &known.gold[*w as usize])))
}

/// Whether an arc is gold's: its head, and the universal part of its relation.
fn same_arc((head, deprel): (u32, &str), gold: &(u32, String)) -> bool {
    let universal = |d: &str| d.split(':').next().unwrap_or("").to_string();
    head == gold.0 && universal(deprel) == universal(&gold.1)
}

/// HEAD and DEPREL of every word of a gold sentence (index 0 unused); `None` if one is missing
/// (a partial tree is no known answer).
fn gold_arcs(sent: &Sentence) -> Option<Vec<(u32, String)>> {
    let mut arcs = vec![(0, String::new())];
    for w in sent.words() {
        let head = w.get(Column::Head).parse().ok()?;
        let deprel = w.get(Column::Deprel);
        if deprel == "_" || head as usize > sent.len() {
            return None;
        }
        arcs.push((head, deprel.to_string()));
    }
    (!sent.is_empty()).then_some(arcs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Known {
        let gold = vec![(0, String::new()), (2, "det".into()), (0, "root".into()), (2, "obl:tmod".into())];
        Known { gold, wrong: vec![3], annotator: "ana".into(), since: Instant::now() }
    }

    fn arcs(tree: &[Option<(u32, &str)>]) -> Vec<Option<(u32, String)>> {
        std::iter::once(None).chain(tree.iter().map(|a| a.map(|(h, d)| (h, d.to_string())))).collect()
    }

    #[test]
    fn confirming_the_models_wrong_arc_fails_and_answering_gold_passes() {
        let k = known();
        // The model had word 3 on 1 as nmod: confirmed, it fails.
        assert_eq!(score(&k, &arcs(&[Some((2, "det")), Some((0, "root")), Some((1, "nmod"))])), Some(false));
        // Gold passes, with gold's subtype or without it.
        assert_eq!(score(&k, &arcs(&[Some((2, "det")), Some((0, "root")), Some((2, "obl:tmod"))])), Some(true));
        assert_eq!(score(&k, &arcs(&[None, None, Some((2, "obl"))])), Some(true));
        // The right head with another relation fails.
        assert_eq!(score(&k, &arcs(&[None, None, Some((2, "obj"))])), Some(false));
        // The wrong word left unanswered says nothing.
        assert_eq!(score(&k, &arcs(&[Some((2, "det")), Some((0, "root")), None])), None);
    }
}
