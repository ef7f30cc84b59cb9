//! The queue of sentences to check: every low-confidence sentence of `lowconf/` (and of the
//! files given with `--input`), ranked by the expected number of wrong arcs among its few most
//! uncertain words, leased to one annotator at a time.
//!
//! Memory is bounded by keeping, per sentence, where it is (file, decompressed byte offset,
//! ordinal) and what ranks it, not the sentence: [`Candidate`] is 72 bytes, so a million queued
//! sentences take about 72 MB, plus 16 bytes each in the duplicate index. A task's sentence is
//! read again from its file when it is handed out.
//!
//! Ranking ([`Queue::lease`]): the highest [`Candidate::priority`] first, which is the sum of
//! the probabilities of being wrong over the sentence's [`CHECK_WORDS`] likeliest wrong flagged
//! words, so the expected count of wrong arcs a task shows. Each probability is the calibrated
//! one (1 − confidence) as corrected by what the answers so far say of its arc's pattern
//! ([`super::error_model`]): every [`RERANK_EVERY`] answered arcs, every queued sentence is
//! ranked again from the [`KEPT`] flagged words it keeps (a pattern's interned number and its
//! calibrated probability), [`RERANK_CHUNK`] of them per task handed out. Then two corrections
//! measured against it in the terms: diversity (the next task's least confident word is
//! not of the same pattern as the annotator's previous one, when one of the next
//! [`DIVERSITY_WINDOW`] candidates differs), and a [`RANDOM_SHARE`] of tasks drawn at random, so
//! that the ranking can be checked against chance. Sentences whose words (lowercased) repeat an
//! earlier candidate's are queued once and counted ([`Stats::duplicates`]), never dropped
//! silently. A file the daemon held back as another language is not queued at all
//! ([`Stats::held_back_files`]). Answered and flagged-bad sentences are never asked again: [`Queue::mark_done`] is
//! fed at start from the audit log in `annotated/` (see [`super::answers`]).
//!
//! Besides the ranked sentences, the queue keeps a uniform sample of everything published,
//! `accepted/` as well as `lowconf/` ([`super::sample`]), and one task in
//! [`Queue::with_samples`]'s `every` (drawn at random), and every task once the ranked ones are
//! done, is one of its sentences, to be reviewed whole: what they measure is the precision of
//! what reaches `accepted/`, which the ranked sentences, all below the threshold, cannot show. A
//! sampled sentence is a candidate of its own ([`Candidate::sampled`]), never ranked; a sentence
//! of `lowconf/` both ranked and sampled is answered once, as either (`finish_twin`).
//!
//! This module owns ranking and leases; it does not read sentences' words beyond scanning, and
//! writes nothing.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

use super::error_model::{self, ErrorModel};
use super::sample::{self, Offered, Reservoir};
use crate::corpus::{Column, CorpusError, ErrorKind, Format, Reader, Sentence};
use crate::daemon::sink::MODEL_COMMENT;

/// Words flagged for checking in one task, the least confident first.
pub const CHECK_WORDS: usize = 3;

/// How many of the best candidates diversity may look through.
pub const DIVERSITY_WINDOW: usize = 8;

/// Flagged words a candidate keeps for ranking (the likeliest wrong by calibration).
pub const KEPT: usize = 5;

/// Answered arcs between two re-rankings of the whole queue.
pub const RERANK_EVERY: u64 = 30;

/// Candidates ranked again per task handed out (about a millisecond's work).
pub const RERANK_CHUNK: usize = 50_000;

/// The share of tasks drawn at random from the whole queue.
pub const RANDOM_SHARE: f64 = 0.05;

/// How long a task stays with the annotator it was handed to.
pub const LEASE: Duration = Duration::from_secs(15 * 60);

/// Where a low-confidence sentence is, and how it ranks.
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    /// Byte offset of the sentence's first line in the decompressed file.
    pub offset: u64,
    /// Index of its file in the queue's list of files.
    pub file: u32,
    /// 0-based position of the sentence in its file.
    pub ordinal: u32,
    /// Expected wrong arcs among the words a task flags.
    pub priority: f32,
    /// The pattern of the least confident word, for diversity.
    pub pattern: u32,
    /// The flagged words that rank it, likeliest wrong first (unused ones: [`Flagged::NONE`]).
    words: [Flagged; KEPT],
    state: State,
    /// In the uniform sample (to be reviewed whole), not ranked.
    pub sampled: bool,
}

/// A flagged word as the queue keeps it.
#[derive(Debug, Clone, Copy)]
struct Flagged {
    /// Calibrated probability that its arc is wrong.
    p: f32,
    /// Its pattern's number in [`Queue::patterns`].
    pattern: u32,
}

impl Flagged {
    const NONE: Flagged = Flagged { p: 0.0, pattern: u32::MAX };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Queued,
    Leased,
    Done,
}

/// A task handed out: which candidate, to whom, until when.
#[derive(Debug, Clone)]
pub struct Lease {
    pub candidate: usize,
    pub annotator: String,
    pub since: Instant,
    pub until: Instant,
}

/// Counts for `GET /api/stats`.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Stats {
    /// Sentences queued in all (duplicates not counted).
    pub queued: usize,
    /// Not yet answered nor flagged bad (leased ones included).
    pub left: usize,
    /// Leased right now.
    pub leased: usize,
    /// Sentences whose words repeat a queued one's: queued once.
    pub duplicates: usize,
    /// Low-confidence sentences with no flagged word (unparsed placeholders).
    pub unflagged: usize,
    /// Sentences with the words of one of the gate's held-out file (`retrain.heldout`): never
    /// asked, as the store would refuse the answer.
    pub held_out: usize,
    /// Sentences the daemon judged another language's one by one (`# other_language`, see
    /// [`crate::parse::fit::OTHER_LANGUAGE_KEY`]): never asked, nor sampled.
    pub other_language: usize,
    /// Files the daemon held back as another language (`# held_back`, see
    /// [`crate::parse::fit::HELD_BACK_KEY`]): none of their sentences is asked.
    pub held_back_files: usize,
    /// Published sentences offered to the uniform sample (`accepted/` and `lowconf/`).
    pub sample_population: u64,
    /// Sentences of the sample not yet answered (leased ones included).
    pub sample_left: usize,
    /// Sentences that would have entered the sample but carry no `# confidence` (the daemon
    /// writes none with `parse.write_confidence = false`): nothing to measure a threshold on.
    pub sample_unscored: usize,
}

/// The comment `key` of `first`, the first sentence of the file `path`: where the daemon says
/// which model parsed a file (`# model`) and that it held it back as another language.
fn head_comment(path: &Path, first: &[u8], key: &str) -> Option<String> {
    let first = Reader::new(first, path, Format::Conllu).next()?.ok()?;
    first.comment(key).map(str::to_string)
}

/// Whether the file whose first sentence is `first` says the daemon held it back as another
/// language (the comment at its head).
fn held_back(path: &Path, first: &[u8]) -> bool {
    head_comment(path, first, crate::parse::fit::HELD_BACK_KEY).is_some()
}

/// A sentence's flagged words (LowConf=Yes), likeliest wrong first: calibrated probability of
/// being wrong and pattern; `None` when it has none.
fn flagged(sent: &Sentence) -> Option<Vec<(f32, error_model::Pattern)>> {
    let upos = |head: &str| match head.parse::<usize>() {
        Ok(h) if h >= 1 && h <= sent.len() => sent.word(h).get(Column::Upos).to_string(),
        _ => "ROOT".to_string(),
    };
    let mut flagged: Vec<(f32, error_model::Pattern)> = sent
        .words()
        .filter(|w| w.get(Column::Misc).split('|').any(|e| e == "LowConf=Yes"))
        .map(|w| {
            let p = 1.0 - misc_conf(w.get(Column::Misc)).unwrap_or(0.0);
            (p, error_model::pattern(w.get(Column::Upos), w.get(Column::Deprel), &upos(w.get(Column::Head))))
        })
        .collect();
    flagged.sort_by(|a, b| b.0.total_cmp(&a.0));
    (!flagged.is_empty()).then_some(flagged)
}

/// Expected wrong arcs among the [`CHECK_WORDS`] likeliest wrong of `words`, with `scale` the
/// error model's factor per pattern number (1 for numbers past its end).
fn priority(words: &[Flagged; KEPT], scale: &[f32]) -> f32 {
    let mut p: [f32; KEPT] = words.map(|w| match scale.get(w.pattern as usize) {
        Some(s) => (w.p * s).min(error_model::CEILING),
        None => w.p,
    });
    p.sort_by(|a, b| b.total_cmp(a));
    p.iter().take(CHECK_WORDS).sum()
}

/// The `Conf=` value of a MISC column.
pub fn misc_conf(misc: &str) -> Option<f32> {
    misc.split('|').find_map(|e| e.strip_prefix("Conf=")).and_then(|v| v.parse().ok())
}

/// Hash of a sentence's words, lowercased: equal for sentences that differ only in case.
fn words_key(sent: &Sentence) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for w in sent.words() {
        w.get(Column::Form).to_lowercase().hash(&mut h);
    }
    h.finish()
}

/// Heap entry: priority, then the lower index first among equals.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ranked(f32, usize);

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

/// The queue: candidates, their order, and the leases.
pub struct Queue {
    files: Vec<PathBuf>,
    /// Per file, the model its head says parsed it (`# model`, as the daemon writes it).
    published_by: Vec<Option<String>>,
    scanned: HashSet<PathBuf>,
    candidates: Vec<Candidate>,
    heap: BinaryHeap<Ranked>,
    seen_words: HashSet<u64>,
    /// Sources (`FILE#ORDINAL`, see [`Queue::source`]) answered or flagged bad.
    done: HashSet<String>,
    leases: HashMap<String, Lease>,
    /// Each annotator's previous pattern.
    last_pattern: HashMap<String, u32>,
    /// The candidates each annotator skipped.
    skipped: HashMap<String, HashSet<usize>>,
    stats: Stats,
    rng: rand_chacha::ChaCha8Rng,
    /// What the answers say of each pattern.
    errors: ErrorModel,
    /// Pattern keys by number, and the numbers by key.
    patterns: Vec<u32>,
    pattern_numbers: HashMap<u32, u32>,
    /// [`ErrorModel::scale`] by pattern number as of the last ranking (patterns seen since: 1).
    scale: Vec<f32>,
    /// [`ErrorModel::observations`] when the last ranking pass started.
    ranked_at: u64,
    /// Where the ranking pass under way is, if one is.
    rerank_cursor: Option<usize>,
    /// Tasks handed out since the last ranking pass started.
    leases_since_rank: usize,
    /// The words (`forms_hash`) of the sentences of `retrain.heldout`: not queued.
    held_out: HashSet<u64>,
    /// The uniform sample of what was published, and its own random draws (so that turning it
    /// on changes nothing else's).
    sample: Reservoir,
    sample_rng: rand_chacha::ChaCha8Rng,
    /// One task in this many is a sampled sentence; 0: none is.
    sample_every: u32,
}

impl Queue {
    /// An empty queue; `done` lists the sources never to ask again.
    pub fn new(done: HashSet<String>) -> Queue {
        Queue {
            files: Vec::new(),
            published_by: Vec::new(),
            scanned: HashSet::new(),
            candidates: Vec::new(),
            heap: BinaryHeap::new(),
            seen_words: HashSet::new(),
            done,
            leases: HashMap::new(),
            last_pattern: HashMap::new(),
            skipped: HashMap::new(),
            stats: Stats::default(),
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(0x5ee1),
            errors: ErrorModel::default(),
            patterns: Vec::new(),
            pattern_numbers: HashMap::new(),
            scale: Vec::new(),
            ranked_at: 0,
            rerank_cursor: None,
            leases_since_rank: 0,
            held_out: HashSet::new(),
            sample: Reservoir::new(sample::CAPACITY),
            sample_rng: rand_chacha::ChaCha8Rng::seed_from_u64(0x5a3b),
            sample_every: 0,
        }
    }

    /// The queue, with one task in `every` (0: none) drawn from the uniform sample of what was
    /// published, and every task once nothing ranked is left.
    pub fn with_samples(mut self, every: u32) -> Queue {
        self.sample_every = every;
        self
    }

    /// What the answers said so far.
    pub fn errors(&self) -> &ErrorModel {
        &self.errors
    }

    /// An answer to a checked arc: of `pattern`, wrong with calibrated probability `p`, was
    /// `wrong` (the annotator changed it). The queue is ranked again when enough were observed.
    pub fn observe(&mut self, pattern: u32, p: f32, wrong: bool) {
        self.errors.observe(pattern, p, wrong);
    }

    /// Goes on ranking the candidates again with the error model: a pass over all of them
    /// starts when [`RERANK_EVERY`] answers came since the last one (and, in a queue of more
    /// than one chunk, ten tasks per chunk past the first were handed out), and each call does the next
    /// [`RERANK_CHUNK`] of it, so that no request waits for a million at once. A candidate whose
    /// priority changes is pushed again; its old heap entry is stale (see [`Queue::valid`]), and
    /// the stale ones are dropped once they outnumber the live ones.
    fn rerank_step(&mut self) {
        self.leases_since_rank += 1;
        // Passes take at most a tenth of the tasks handed out, so that the compaction that ends
        // each one stays out of the 99th percentile of a million-sentence queue.
        let chunks = self.candidates.len().div_ceil(RERANK_CHUNK);
        if self.rerank_cursor.is_none()
            && self.errors.observations() >= self.ranked_at + RERANK_EVERY
            && self.leases_since_rank >= 10 * chunks.saturating_sub(1)
        {
            self.ranked_at = self.errors.observations();
            self.leases_since_rank = 0;
            self.scale = self.patterns.iter().map(|&key| self.errors.scale(key)).collect();
            self.rerank_cursor = Some(0);
        }
        let Some(from) = self.rerank_cursor else { return };
        let to = (from + RERANK_CHUNK).min(self.candidates.len());
        for i in from..to {
            let c = &mut self.candidates[i];
            let p = priority(&c.words, &self.scale);
            if p != c.priority && !c.sampled {
                c.priority = p;
                if c.state == State::Queued {
                    self.heap.push(Ranked(p, i));
                }
            }
        }
        self.rerank_cursor = (to < self.candidates.len()).then_some(to);
        if self.heap.len() > 2 * self.stats.left + 1024 {
            // In place: the buffer is reused, so that memory does not grow with each pass.
            let mut entries = std::mem::take(&mut self.heap).into_vec();
            entries.retain(|r| self.valid(r));
            self.heap = BinaryHeap::from(entries);
        }
    }

    /// Whether a heap entry is the live one of a queued candidate.
    fn valid(&self, r: &Ranked) -> bool {
        let c = &self.candidates[r.1];
        c.state == State::Queued && c.priority == r.0
    }

    /// The number of a pattern key, interned.
    fn pattern_number(&mut self, key: u32) -> u32 {
        let next = self.patterns.len() as u32;
        *self.pattern_numbers.entry(key).or_insert_with(|| {
            self.patterns.push(key);
            next
        })
    }

    /// Adds the low-confidence sentences of `path` (once per path; a file is complete when it
    /// appears, as the daemon renames its outputs in), and offers each to the sample. Returns
    /// how many were queued.
    pub fn add_file(&mut self, path: &Path) -> Result<usize, CorpusError> {
        let Some(file) = self.begin_file(path) else { return Ok(0) };
        let mut added = 0;
        sentences(path, |chunk, start, ordinal| {
            if ordinal == 0 && held_back(path, chunk) {
                self.stats.held_back_files += 1;
                return false;
            }
            if ordinal == 0 {
                self.note_head(path, file, chunk);
            }
            added += usize::from(self.add_sentence(path, file, chunk, start, ordinal));
            self.offer_sample(path, file, chunk, start, ordinal);
            true
        })?;
        Ok(added)
    }

    /// Offers the sentences of `path`, a file of `accepted/`, to the sample (once per path),
    /// the queue locked for one sentence at a time: such files are the bulk of what is
    /// published, and reading one must not hold up the annotators' requests. Returns how many
    /// entered the sample.
    pub fn add_accepted(queue: &Mutex<Queue>, path: &Path) -> Result<usize, CorpusError> {
        let lock = || queue.lock().unwrap_or_else(|p| p.into_inner());
        let Some(file) = lock().begin_file(path) else { return Ok(0) };
        let mut added = 0;
        sentences(path, |chunk, start, ordinal| {
            let mut queue = lock();
            if ordinal == 0 {
                queue.note_head(path, file, chunk);
            }
            added += usize::from(queue.offer_sample(path, file, chunk, start, ordinal));
            true
        })?;
        Ok(added)
    }

    /// Keeps what the head of file number `file` (`path`, whose first sentence is `first`) says
    /// of the model that parsed it.
    fn note_head(&mut self, path: &Path, file: u32, first: &[u8]) {
        self.published_by[file as usize] = head_comment(path, first, MODEL_COMMENT);
    }

    /// The number of `path` in the queue's files, if it was not seen before.
    fn begin_file(&mut self, path: &Path) -> Option<u32> {
        if !self.scanned.insert(path.to_path_buf()) {
            return None;
        }
        self.files.push(path.to_path_buf());
        self.published_by.push(None);
        Some(self.files.len() as u32 - 1)
    }

    /// Queues the sentence `text` (at `offset`, the `ordinal`-th of `path`) if it has flagged
    /// words and is not a duplicate; says whether it was queued.
    fn add_sentence(&mut self, path: &Path, file: u32, text: &[u8], offset: u64, ordinal: u32) -> bool {
        let mut reader = Reader::new(text, path, Format::Conllu);
        let mut sent = Sentence::default();
        // An unparsed placeholder (a malformed input sentence) has nothing to check.
        let read = reader.read_into(&mut sent).unwrap_or(false);
        if sent.comment(crate::parse::fit::OTHER_LANGUAGE_KEY).is_some() {
            self.stats.other_language += 1;
            return false;
        }
        let Some(flagged) = flagged(&sent).filter(|_| read) else {
            self.stats.unflagged += 1;
            return false;
        };
        if self.held_out.contains(&crate::retrain::reference::forms_hash(&sent)) {
            self.stats.held_out += 1;
            return false;
        }
        if !self.seen_words.insert(words_key(&sent)) {
            self.stats.duplicates += 1;
            return false;
        }
        let state = if self.done.contains(&source_key(path, ordinal)) { State::Done } else { State::Queued };
        let mut words = [Flagged::NONE; KEPT];
        for (slot, (p, pattern)) in words.iter_mut().zip(&flagged) {
            *slot = Flagged { p: *p, pattern: self.pattern_number(pattern.key) };
        }
        let priority = priority(&words, &self.scale);
        let pattern = flagged[0].1.key;
        let index = self.candidates.len();
        self.candidates.push(Candidate { offset, file, ordinal, priority, pattern, words, state, sampled: false });
        self.stats.queued += 1;
        if state == State::Queued {
            self.heap.push(Ranked(priority, index));
            self.stats.left += 1;
        }
        true
    }

    /// Offers the sentence `text` (at `offset`, the `ordinal`-th of `path`) to the sample; says
    /// whether it entered. It is read only if the draw lets it in: a published sentence is
    /// read whole once, and only a few thousand of them are parsed.
    fn offer_sample(&mut self, path: &Path, file: u32, text: &[u8], offset: u64, ordinal: u32) -> bool {
        let Some(slot) = self.sample.admit(&mut self.sample_rng) else { return false };
        let mut sent = Sentence::default();
        if !Reader::new(text, path, Format::Conllu).read_into(&mut sent).unwrap_or(false) {
            return false;
        }
        if sent.comment("confidence").and_then(|c| c.parse::<f64>().ok()).is_none() {
            self.stats.sample_unscored += 1;
            return false;
        }
        // Below any threshold, and not of the language the sample measures one on.
        if sent.comment(crate::parse::fit::OTHER_LANGUAGE_KEY).is_some() {
            return false;
        }
        if self.held_out.contains(&crate::retrain::reference::forms_hash(&sent)) {
            return false;
        }
        let state = if self.done.contains(&source_key(path, ordinal)) { State::Done } else { State::Queued };
        let index = self.candidates.len();
        let candidates = &self.candidates;
        match self.sample.put(slot, index, |i| candidates[i].state == State::Leased) {
            Offered::Dropped => return false,
            Offered::Added | Offered::Replaced(_) => {}
        }
        let (words, priority, pattern) = ([Flagged::NONE; KEPT], 0.0, u32::MAX);
        self.candidates.push(Candidate { offset, file, ordinal, priority, pattern, words, state, sampled: true });
        true
    }

    /// A sentence of the sample drawn uniformly among those not yet answered nor leased.
    fn draw_sample(&mut self) -> Option<usize> {
        let candidates = &self.candidates;
        self.sample.draw(&mut self.sample_rng, |i| candidates[i].state == State::Queued)
    }

    /// The queue, never asking about a sentence with the words of one of `held_out` (the gate's
    /// held-out file: the store refuses an answer to one, and it was acknowledged and then lost).
    pub fn without(mut self, held_out: HashSet<u64>) -> Queue {
        self.held_out = held_out;
        self
    }

    /// Hands the next task to `annotator`, under a new task id; `None` when nothing is left.
    pub fn lease(&mut self, annotator: &str, now: Instant) -> Option<(String, usize)> {
        self.expire(now);
        self.rerank_step();
        let sampling = self.sample_every > 0;
        let sample_due = sampling && self.sample_rng.gen_ratio(1, self.sample_every);
        let index = sample_due
            .then(|| self.draw_sample())
            .flatten()
            .or_else(|| self.rng.gen_bool(RANDOM_SHARE).then(|| self.random_queued()).flatten())
            .or_else(|| self.best_for(annotator))
            .or_else(|| self.draw_sample().filter(|_| sampling))?;
        let c = &mut self.candidates[index];
        c.state = State::Leased;
        self.stats.leased += 1;
        self.last_pattern.insert(annotator.to_string(), c.pattern);
        // Unique across restarts too: a correction file is named after its task.
        let id = format!("{:016x}", rand::random::<u64>());
        let lease = Lease { candidate: index, annotator: annotator.to_string(), since: now, until: now + LEASE };
        self.leases.insert(id.clone(), lease);
        Some((id, index))
    }

    /// The best queued candidate for `annotator`: not one they skipped, and of another pattern
    /// than their last one if one of the next [`DIVERSITY_WINDOW`] is; failing that, the best
    /// of another pattern's, then the best they skipped.
    fn best_for(&mut self, annotator: &str) -> Option<usize> {
        let last = self.last_pattern.get(annotator).copied();
        let skipped = self.skipped.get(annotator);
        let (mut same, mut aside) = (Vec::new(), Vec::new());
        let mut chosen = None;
        while let Some(Ranked(p, i)) = self.heap.pop() {
            if !self.valid(&Ranked(p, i)) {
                continue; // stale entry: leased, done or ranked again since it was pushed
            }
            if skipped.is_some_and(|s| s.contains(&i)) {
                aside.push(Ranked(p, i));
            } else if last == Some(self.candidates[i].pattern) && same.len() + 1 < DIVERSITY_WINDOW {
                same.push(Ranked(p, i));
            } else {
                chosen = Some(i);
                break;
            }
        }
        let chosen = chosen.or_else(|| same.first().map(|r| r.1)).or_else(|| aside.first().map(|r| r.1));
        self.heap.extend(same.into_iter().chain(aside).filter(|r| Some(r.1) != chosen));
        chosen
    }

    /// A queued candidate drawn uniformly (a few tries; `None` when the queue is mostly done).
    fn random_queued(&mut self) -> Option<usize> {
        if self.candidates.is_empty() {
            return None;
        }
        (0..16)
            .map(|_| self.rng.gen_range(0..self.candidates.len()))
            .find(|&i| self.candidates[i].state == State::Queued && !self.candidates[i].sampled)
    }

    /// Puts the candidates of expired leases back in the queue.
    pub fn expire(&mut self, now: Instant) {
        let expired: Vec<String> =
            self.leases.iter().filter(|(_, l)| l.until <= now).map(|(id, _)| id.clone()).collect();
        for id in expired {
            self.release(&id);
        }
    }

    /// The lease of task `id`, if it is current.
    pub fn get(&self, id: &str, now: Instant) -> Option<&Lease> {
        self.leases.get(id).filter(|l| l.until > now)
    }

    /// Gives task `id` back to the queue (expired, or skipped: see [`Queue::skip`]).
    pub fn release(&mut self, id: &str) -> Option<Lease> {
        let lease = self.leases.remove(id)?;
        let c = &mut self.candidates[lease.candidate];
        if c.state == State::Leased {
            c.state = State::Queued;
            if !c.sampled {
                self.heap.push(Ranked(c.priority, lease.candidate));
            }
            self.stats.leased -= 1;
        }
        Some(lease)
    }

    /// Task `id` was skipped: back in the queue, and offered to the same annotator again only
    /// when nothing else is left for them.
    pub fn skip(&mut self, id: &str) -> Option<Lease> {
        let lease = self.release(id)?;
        self.skipped.entry(lease.annotator.clone()).or_default().insert(lease.candidate);
        Some(lease)
    }

    /// Task `id` was answered or flagged bad: never asked again.
    pub fn finish(&mut self, id: &str) -> Option<Lease> {
        let lease = self.leases.remove(id)?;
        let key = self.source(lease.candidate);
        let c = &mut self.candidates[lease.candidate];
        if c.state == State::Leased {
            self.stats.leased -= 1;
        }
        let (sampled, file, ordinal) = (c.sampled, c.file, c.ordinal);
        if c.state != State::Done && !sampled {
            self.stats.left -= 1;
        }
        c.state = State::Done;
        self.done.insert(key);
        self.finish_twin(sampled, file, ordinal);
        Some(lease)
    }

    /// Marks done the other candidate of the same sentence, if it has one (a sentence of
    /// `lowconf/` both ranked and sampled) and it is queued: one leased right now is left to
    /// its annotator's answer. For a sampled answer a pass over the candidates, for a ranked
    /// one over the sample's slots.
    fn finish_twin(&mut self, sampled: bool, file: u32, ordinal: u32) {
        let same = |c: &Candidate| c.sampled != sampled && c.file == file && c.ordinal == ordinal;
        let twin = match sampled {
            true => self.candidates.iter().position(same),
            false => self.sample.slots().iter().copied().find(|&i| same(&self.candidates[i])),
        };
        let Some(c) = twin.map(|i| &mut self.candidates[i]).filter(|c| c.state == State::Queued) else { return };
        c.state = State::Done;
        if !c.sampled {
            self.stats.left -= 1;
        }
    }

    /// Marks a source done (as the audit log says, or another process answered it).
    pub fn mark_done(&mut self, source: String) {
        self.done.insert(source);
    }

    /// A candidate.
    pub fn candidate(&self, index: usize) -> &Candidate {
        &self.candidates[index]
    }

    /// The file a candidate is in.
    pub fn file(&self, c: &Candidate) -> &Path {
        &self.files[c.file as usize]
    }

    /// The model that parsed a candidate's file, as its head says (`# model`).
    pub fn published_by(&self, c: &Candidate) -> Option<&str> {
        self.published_by[c.file as usize].as_deref()
    }

    /// Where candidate `index` comes from, as the audit log records it: `FILE#ORDINAL`.
    pub fn source(&self, index: usize) -> String {
        let c = &self.candidates[index];
        source_key(self.file(c), c.ordinal)
    }

    /// The counts.
    pub fn stats(&self) -> Stats {
        let open = |&&i: &&usize| self.candidates[i].state != State::Done;
        let sample_left = self.sample.slots().iter().filter(open).count();
        Stats { sample_population: self.sample.seen(), sample_left, ..self.stats }
    }
}

/// `FILE#ORDINAL` with the file's name only: stable across restarts and moves of the folder.
/// A file of a folder named `accepted` is `accepted/FILE#ORDINAL`: the daemon gives an input's
/// accepted and low-confidence outputs one name, and their sentences are not the same.
pub fn source_key(path: &Path, ordinal: u32) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    match path.parent().and_then(Path::file_name).is_some_and(|d| d == "accepted") {
        true => format!("accepted/{name}#{ordinal}"),
        false => format!("{name}#{ordinal}"),
    }
}

/// Calls `each` with every sentence of the CoNLL-U file `path` (its lines up to the blank line
/// that ends it), its decompressed byte offset and its ordinal, until `each` says `false`.
/// Sentences are cut at blank lines here, so that each one's offset is known exactly; each is
/// then read as the reader reads any sentence.
fn sentences(path: &Path, mut each: impl FnMut(&[u8], u64, u32) -> bool) -> Result<(), CorpusError> {
    use std::io::BufRead;
    let io_error = |e: std::io::Error| CorpusError { path: path.to_path_buf(), line: 0, kind: ErrorKind::Io(e) };
    let mut input = crate::base::io::open_input(path).map_err(io_error)?;
    let (mut offset, mut start, mut ordinal) = (0u64, 0u64, 0u32);
    let (mut line, mut chunk) = (Vec::new(), Vec::new());
    loop {
        line.clear();
        let n = input.read_until(b'\n', &mut line).map_err(io_error)?;
        let blank = n == 0 || line.iter().all(|b| b.is_ascii_whitespace());
        if blank && !chunk.is_empty() {
            chunk.push(b'\n');
            if !each(&chunk, start, ordinal) {
                return Ok(());
            }
            ordinal += 1;
            chunk.clear();
        }
        if n == 0 {
            return Ok(());
        }
        if !blank {
            if chunk.is_empty() {
                start = offset;
            }
            chunk.extend_from_slice(&line);
        }
        offset += n as u64;
    }
}

/// Reads the sentence at decompressed byte `offset` of `path`: the stream before it is
/// decompressed and skipped (a few milliseconds for a lowconf file of ten thousand sentences).
pub fn read_sentence(path: &Path, offset: u64) -> Result<Sentence, CorpusError> {
    use std::io::Read;
    let io_error = |e: std::io::Error| CorpusError { path: path.to_path_buf(), line: 0, kind: ErrorKind::Io(e) };
    let mut input = crate::base::io::open_input(path).map_err(io_error)?;
    let skipped = std::io::copy(&mut (&mut input).take(offset), &mut std::io::sink()).map_err(io_error)?;
    if skipped < offset {
        return Err(io_error(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the file shrank since it was queued",
        )));
    }
    let mut reader = Reader::new(input, path, Format::from_path(path));
    let mut sent = Sentence::default();
    match reader.read_into(&mut sent)? {
        true => Ok(sent),
        false => Err(io_error(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "no sentence at its offset"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lowconf file of sentences whose flagged words have the given confidences; the words
    /// differ from sentence to sentence, and the UPOS of the least confident word is `pattern`.
    fn lowconf(dir: &Path, sentences: &[(&[f32], &str)]) -> PathBuf {
        let mut text = String::new();
        for (s, (confs, pattern)) in sentences.iter().enumerate() {
            for (i, c) in confs.iter().enumerate() {
                let upos = if i == 0 { pattern } else { "X" };
                text.push_str(&format!(
                    "{}\tw{s}x{i}\t_\t{upos}\t_\t_\t{}\tdep\t_\tConf={c}|LowConf=Yes\n",
                    i + 1,
                    if i == 0 { 0 } else { 1 }
                ));
            }
            text.push('\n');
        }
        let path = dir.join("low.conllu");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_sentence_judged_another_language_s_is_never_queued_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = lowconf(dir.path(), &[(&[0.1], "NOUN"), (&[0.2], "VERB"), (&[0.3], "ADJ")]);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut blocks: Vec<&str> = text.split_inclusive("\n\n").collect();
        let judged = format!("# {} = of its 2 words, 0 among …\n{}", crate::parse::fit::OTHER_LANGUAGE_KEY, blocks[1]);
        blocks[1] = &judged;
        std::fs::write(&path, blocks.concat()).unwrap();
        let mut q = Queue::new(HashSet::new());
        assert_eq!(q.add_file(&path).unwrap(), 2);
        assert_eq!(q.stats.other_language, 1);
        let mut asked = order(&mut q, "ana");
        asked.sort();
        assert_eq!(asked, [0, 2]);
    }

    fn order(q: &mut Queue, who: &str) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some((_, i)) = q.lease(who, Instant::now()) {
            out.push(q.candidate(i).ordinal);
        }
        out
    }

    #[test]
    fn the_least_confident_come_first_patterns_alternate_and_nothing_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = lowconf(
            dir.path(),
            &[
                (&[0.9, 0.9], "NOUN"),
                (&[0.1, 0.2], "NOUN"),
                (&[0.2, 0.2], "NOUN"),
                (&[0.3, 0.3], "VERB"),
                (&[0.5], "ADJ"),
            ],
        );
        let mut q = Queue::new(HashSet::new());
        q.rng = rand_chacha::ChaCha8Rng::seed_from_u64(1); // a seed whose first draws are not random picks
        assert_eq!(q.add_file(&path).unwrap(), 5);
        assert_eq!(q.add_file(&path).unwrap(), 0, "a file is queued once");
        let got = order(&mut q, "ana");
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 1, 2, 3, 4], "every sentence asked once: {got:?}");
        // 1 (NOUN) first; 2 is the next best but NOUN again, so 3 (VERB) comes before it.
        assert_eq!(&got[..3], &[1, 3, 2], "{got:?}");
    }

    #[test]
    fn a_skipped_sentence_comes_back_to_its_annotator_only_when_nothing_else_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = lowconf(dir.path(), &[(&[0.1], "A"), (&[0.5], "B"), (&[0.6], "C")]);
        let mut q = Queue::new(HashSet::new());
        q.add_file(&path).unwrap();
        let now = Instant::now();
        let (first, i) = q.lease("ana", now).unwrap();
        assert_eq!(q.candidate(i).ordinal, 0);
        q.skip(&first);
        // Another annotator still gets it first.
        let (other, j) = q.lease("bo", now).unwrap();
        assert_eq!(q.candidate(j).ordinal, 0);
        q.release(&other);
        let mut got = Vec::new();
        while let Some((id, i)) = q.lease("ana", now) {
            got.push(q.candidate(i).ordinal);
            q.finish(&id);
        }
        assert_eq!(got, [1, 2, 0]);
        assert_eq!(q.stats().left, 0);
    }

    #[test]
    fn answers_that_find_a_pattern_wrong_more_often_than_calibrated_move_its_sentences_up() {
        let dir = tempfile::tempdir().unwrap();
        // VERB arcs look likelier wrong (0.5) than NOUN ones (0.4) to the calibration.
        let sentences: Vec<(&[f32], &str)> = (0..40)
            .map(|i: u32| if i.is_multiple_of(2) { (&[0.5][..], "VERB") } else { (&[0.6][..], "NOUN") })
            .collect();
        let path = lowconf(dir.path(), &sentences);
        let upos_of = |q: &Queue, i: usize| if q.candidate(i).ordinal.is_multiple_of(2) { "VERB" } else { "NOUN" };
        let mut q = Queue::new(HashSet::new());
        q.rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        q.add_file(&path).unwrap();
        let now = Instant::now();
        let (id, first) = q.lease("ana", now).unwrap();
        assert_eq!(upos_of(&q, first), "VERB", "the calibration alone ranks VERB first");
        q.finish(&id);
        // The answers say NOUN arcs are always wrong and VERB arcs never are.
        for _ in 0..RERANK_EVERY / 2 {
            q.observe(error_model::pattern("NOUN", "dep", "ROOT").key, 0.4, true);
            q.observe(error_model::pattern("VERB", "dep", "ROOT").key, 0.5, false);
        }
        // Annotators with no previous task, so that diversity does not alternate the patterns.
        let nouns_first = (0..10)
            .filter(|n| {
                let (_, i) = q.lease(&format!("a{n}"), now).unwrap();
                upos_of(&q, i) == "NOUN"
            })
            .count();
        assert!(nouns_first >= 9, "{nouns_first} of 10 NOUN tasks after the answers");
        assert_eq!(q.errors().observations(), RERANK_EVERY);
    }

    /// A published file `dir/SUB/night.conllu` of two-word sentences, each with the given
    /// `# confidence` (none for `None`), its first word flagged.
    fn published(dir: &Path, sub: &str, confidences: &[Option<f32>]) -> PathBuf {
        let mut text = String::new();
        for (s, c) in confidences.iter().enumerate() {
            if let Some(c) = c {
                text.push_str(&format!("# confidence = {c}\n"));
            }
            text.push_str(&format!("1\t{sub}{s}a\t_\tNOUN\t_\t_\t0\troot\t_\tConf=0.2|LowConf=Yes\n"));
            text.push_str(&format!("2\t{sub}{s}b\t_\tNOUN\t_\t_\t1\tdep\t_\tConf=0.9\n\n"));
        }
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        let path = dir.join(sub).join("night.conllu");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn sampled_sentences_come_from_both_outputs_and_answering_one_answers_its_ranked_twin() {
        let dir = tempfile::tempdir().unwrap();
        let low = published(dir.path(), "lowconf", &[Some(0.3), Some(0.4)]);
        let accepted = published(dir.path(), "accepted", &[Some(0.9), None]);
        let mut q = Queue::new(HashSet::new()).with_samples(1);
        assert_eq!(q.add_file(&low).unwrap(), 2);
        let q = Mutex::new(q);
        assert_eq!(Queue::add_accepted(&q, &accepted).unwrap(), 1, "the sentence without a confidence is not sampled");
        assert_eq!(Queue::add_accepted(&q, &accepted).unwrap(), 0, "a file is read once");
        let mut q = q.into_inner().unwrap();
        let s = q.stats();
        assert_eq!((s.left, s.sample_population, s.sample_left, s.sample_unscored), (2, 4, 3, 1), "{s:?}");
        let now = Instant::now();
        let mut answered = Vec::new();
        while let Some((id, i)) = q.lease("ana", now) {
            assert!(q.candidate(i).sampled, "with one task in one sampled, the sample comes first");
            answered.push(q.source(i));
            q.finish(&id);
        }
        answered.sort();
        assert_eq!(answered, ["accepted/night.conllu#0", "night.conllu#0", "night.conllu#1"]);
        let s = q.stats();
        assert_eq!((s.left, s.sample_left, s.leased), (0, 0, 0), "the ranked twins were answered too: {s:?}");
    }

    #[test]
    fn answering_a_ranked_sentence_answers_its_sampled_twin() {
        let dir = tempfile::tempdir().unwrap();
        let low = published(dir.path(), "lowconf", &[Some(0.3), Some(0.4)]);
        let accepted = published(dir.path(), "accepted", &[Some(0.9)]);
        // Samples only once the ranked sentences are done (a draw of one in a million aside).
        let q = Mutex::new(Queue::new(HashSet::new()).with_samples(1_000_000));
        q.lock().unwrap().add_file(&low).unwrap();
        Queue::add_accepted(&q, &accepted).unwrap();
        let mut q = q.into_inner().unwrap();
        assert_eq!(q.stats().sample_left, 3);
        let now = Instant::now();
        let mut asked = Vec::new();
        while let Some((id, i)) = q.lease("ana", now) {
            asked.push((q.source(i), q.candidate(i).sampled));
            q.finish(&id);
        }
        let expected = [("night.conllu#0", false), ("night.conllu#1", false), ("accepted/night.conllu#0", true)];
        assert_eq!(asked, expected.map(|(s, sampled)| (s.to_string(), sampled)));
        assert_eq!(q.stats().sample_left, 0);
    }

    #[test]
    fn without_samples_no_published_sentence_is_asked_beyond_the_ranked_ones() {
        let dir = tempfile::tempdir().unwrap();
        let low = published(dir.path(), "lowconf", &[Some(0.3), Some(0.4)]);
        let mut q = Queue::new(HashSet::new());
        q.add_file(&low).unwrap();
        let now = Instant::now();
        let mut n = 0;
        while let Some((id, i)) = q.lease("ana", now) {
            assert!(!q.candidate(i).sampled);
            q.finish(&id);
            n += 1;
        }
        assert_eq!(n, 2);
    }

    #[test]
    fn done_sentences_are_never_queued_and_expired_leases_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = lowconf(dir.path(), &[(&[0.1], "A"), (&[0.5], "B")]);
        let mut q = Queue::new(HashSet::from([source_key(&path, 0)]));
        q.add_file(&path).unwrap();
        assert_eq!(q.stats().left, 1);
        let now = Instant::now();
        let (id, i) = q.lease("ana", now).unwrap();
        assert_eq!(q.candidate(i).ordinal, 1);
        assert!(q.lease("bo", now).is_none(), "leased to ana");
        let later = now + LEASE + Duration::from_secs(1);
        assert!(q.get(&id, later).is_none());
        let (_, again) = q.lease("bo", later).unwrap();
        assert_eq!(q.candidate(again).ordinal, 1);
    }
}
