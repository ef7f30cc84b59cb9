//! The annotation store: corrected sentences that people drop into `annotated/`, checked like
//! gold training data and kept for every later retraining.
//!
//! ```text
//! annotated/            people rename .conllu / .conllu.zst files in here (dot-files ignored)
//! annotated/store/      NNNNNNNN.conllu: one segment per accepted input, never changed
//! annotated/rejected/   the bad sentences of an input, with NAME.error: FILE:LINE: problem
//! annotated/suspect/    sentences set aside until a person confirms them, with NAME.error
//! ```
//!
//! **What was reviewed.** The parser marks every arc it writes with `Conf=` (and the doubtful
//! ones with `LowConf=Yes`) in MISC. A word whose MISC still has either mark is the parser's
//! arc as written, not reviewed: its HEAD and DEPREL are stored as `_` (a partial tree), and
//! the ingest log counts them as dropped. An annotator says what they reviewed by removing the
//! marks of the words they checked (corrected or confirmed), or with `# reviewed = all` on a
//! sentence whose every arc they checked. Files without marks (gold data, whole trees written
//! by hand) are reviewed throughout.
//!
//! Ingesting a file writes its good sentences as a new segment (atomically: temporary name,
//! fsync, rename), then writes its bad sentences, only those and as written, to `rejected/`
//! (with `NAME.error` naming each one's line there and in the input) and its suspect ones to
//! `suspect/`, then removes the input; so a kill at any moment loses nothing, and at worst
//! ingests a file twice. That is harmless because reading deduplicates: a later segment's
//! sentence replaces an earlier one that is the same sentence (a correction of a correction),
//! that is, has the same `# sent_id` (or none) and the same FORMs ([`dedup_key`]). Documents
//! numbered on their own (`sent_id` 1, 2, … in each) thus keep all their sentences. A file
//! that cannot be read as CoNLL-U at all is moved to `rejected/` whole. Fixed sentences moved
//! back into `annotated/` are checked again.
//!
//! A sentence is good when it is not the daemon's placeholder for a sentence it could not read
//! ([`crate::corpus::unparsed`]: copied from `lowconf/`, it has nothing to learn from), every
//! HEAD is a word index or `_` (a partial annotation, see
//! [`crate::transition::GoldTree::partial`]), no word has half an arc (a HEAD with DEPREL `_`
//! or the reverse), the annotated arcs have no cycle, at most one word hangs from the root, at
//! least one reviewed arc is annotated, and training would not skip it: the root word's
//! DEPREL, where annotated, is the root label and no other word's is, and a partial annotation
//! can be completed into a projective tree (a whole non-projective tree is left to training,
//! see `training_skips`). Against [`Reference`] (the serving model and `retrain.heldout`,
//! see [`super::reference`]), its DEPRELs are labels of the serving model, universal relations
//! or subtypes UD documents (unless `retrain.allow_new_labels`), its LEMMAs pass
//! [`crate::corpus::check_lemma`], its words are not those of a held-out sentence, and its file
//! is not mostly words the model never saw nor one the daemon held back as another language
//! (`# held_back`); a sentence that disagrees with most arcs the serving model is sure of, or
//! whose arcs the model ranks far down its choices or which cross too often, goes to
//! `suspect/` until a person checks it, adds `# confirmed = yes` and moves it back. This module owns these directories; it must not
//! train or decide anything about models.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::checks::{check_file, location, Problem};
pub use super::checks::{ANNOTATOR_KEY, CONFIRMED_KEY, CONF_KEY, LOW_CONF_KEY, REVIEWED_KEY};
use super::reference::{forms_hash, Reference};
use crate::base::io::{numbered_name, rename_durably, sync_dir, visible_files, write_atomically};
use crate::corpus::{CorpusError, Format, Reader, Sentence};

/// Why the store could not be read or written (bad annotations are not errors: they go to
/// `rejected/`).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    #[error("no segment {0} in {}", .1.display())]
    NoSegment(u64, PathBuf),
}

/// The last component of `path` (a file the store named itself).
fn file_name_of(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |error| StoreError::Io { path, error }
}

/// What one [`Store::ingest`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ingested {
    /// Input files taken in (stored, rejected or both).
    pub files: usize,
    /// Sentences stored.
    pub sentences: usize,
    /// Sentences refused, each with `NAME:LINE: problem`.
    pub rejected: Vec<String>,
    /// Sentences set aside in `suspect/` until a person confirms them, each with
    /// `NAME:LINE: why`.
    pub suspect: Vec<String>,
    /// What each file contributed.
    pub by_file: Vec<FileReport>,
}

/// What one input file contributed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// Its name in `annotated/`.
    pub name: String,
    /// Sentences stored.
    pub sentences: usize,
    /// Arcs stored: reviewed ones (see the module doc).
    pub reviewed_arcs: usize,
    /// Arcs of stored (or suspect) sentences left unreviewed (the parser's own, still marked),
    /// not stored.
    pub unreviewed_arcs: usize,
    /// Sentences refused (in `rejected/`).
    pub rejected: usize,
    /// Sentences set aside (in `suspect/`).
    pub suspect: usize,
    /// Words unknown to the serving model's lexicon, and words read (`None` without a lexicon).
    pub unknown_words: Option<(usize, usize)>,
}

impl std::fmt::Display for FileReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: stored {} sentences with {} reviewed arcs, dropped {} unreviewed arcs, rejected {} sentences, \
             set aside {} as suspect",
            self.name, self.sentences, self.reviewed_arcs, self.unreviewed_arcs, self.rejected, self.suspect
        )?;
        if let Some((unknown, words)) = self.unknown_words {
            write!(f, " ({unknown} of {words} words unknown to the serving model)")?;
        }
        Ok(())
    }
}

/// One stored annotated sentence.
#[derive(Debug, Clone)]
pub struct Annotation {
    /// Its [`identity`]: `# sent_id`, or `hash:HEX` of its FORMs. The held-out split hashes
    /// it, so two different sentences with one `sent_id` share it (and are held out or trained
    /// on together); it is not what tells annotations apart (see [`dedup_key`]).
    pub id: String,
    pub sentence: Sentence,
}

/// Everything in the store, deduplicated.
#[derive(Debug, Default)]
pub struct Contents {
    /// One per sentence ([`dedup_key`]), the latest version, in the order sentences first
    /// appeared.
    pub annotations: Vec<Annotation>,
    /// Sentences in the segments, duplicates and replaced versions included.
    pub appended: usize,
    /// Each segment's number and sentences, in order: what a retraining cycle compares with
    /// the segments it saw last ([`crate::retrain::State`]), so that counts of new sentences
    /// are derived from what is stored, and a removed segment cannot leave them wrong.
    pub segments: Vec<(u64, usize)>,
}

/// Where a segment came from: written beside it as `NNNNNNNN.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Provenance {
    /// The input file's name in `annotated/`.
    pub source: String,
    /// The names in its `# annotator = NAME` comments, each once, in order.
    pub annotators: Vec<String>,
    /// When it was stored, Unix seconds.
    pub time: u64,
    /// Sentences and (reviewed) arcs stored.
    pub sentences: usize,
    pub arcs: usize,
}

/// One segment of the store, as `spoolparse annotations list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Its number (`NNNNNNNN.conllu`).
    pub number: u64,
    /// Its file.
    pub path: PathBuf,
    /// Where it came from; `None` for segments stored before provenance was recorded.
    pub provenance: Option<Provenance>,
}

/// The `annotated/` directory.
#[derive(Debug, Clone)]
pub struct Store {
    pub incoming: PathBuf,
    pub segments: PathBuf,
    pub rejected: PathBuf,
    /// Sentences that disagree with most arcs the serving model is sure of, until confirmed.
    pub suspect: PathBuf,
    /// What annotations are checked against besides their own shape (the serving model, the
    /// gate's held-out file): [`Reference::basic`] until [`Store::with_reference`].
    pub reference: Arc<Reference>,
}

/// The root label of Universal Dependencies.
pub const ROOT_LABEL: &str = "root";

impl Store {
    /// The store rooted at `dir` (config `paths.annotated`), checking root arcs against
    /// [`ROOT_LABEL`] and nothing of a model.
    pub fn new(dir: &Path) -> Store {
        Store {
            incoming: dir.to_path_buf(),
            segments: dir.join("store"),
            rejected: dir.join("rejected"),
            suspect: dir.join("suspect"),
            reference: Arc::new(Reference::basic()),
        }
    }

    /// The same store, checking annotations against `reference` (usually
    /// [`Reference::new`] of the serving model and `[retrain]`).
    pub fn with_reference(mut self, reference: Reference) -> Store {
        self.reference = Arc::new(reference);
        self
    }

    /// Creates the directories if missing.
    pub fn create(&self) -> Result<(), StoreError> {
        for d in [&self.incoming, &self.segments, &self.rejected, &self.suspect] {
            fs::create_dir_all(d).map_err(io_err(d))?;
        }
        Ok(())
    }

    /// Whether `annotated/` holds a file that [`Store::ingest`] would take (one directory
    /// read: what an idle daemon looks at every few seconds).
    pub fn has_incoming(&self) -> bool {
        visible_files(&self.incoming).is_ok_and(|names| !names.is_empty())
    }

    /// Takes in every file waiting in `annotated/`. Holds the store's lock meanwhile, so that a
    /// daemon and `spoolparse retrain` never ingest the same file twice at once.
    pub fn ingest(&self) -> Result<Ingested, StoreError> {
        self.create()?;
        let _lock = self.lock()?;
        let mut report = Ingested::default();
        for name in visible_files(&self.incoming).map_err(io_err(&self.incoming))? {
            let path = self.incoming.join(&name);
            let checked = check_file(&path, &name, &self.reference);
            if !checked.good.is_empty() {
                let source =
                    Provenance { source: name.clone(), arcs: checked.report.reviewed_arcs, ..Provenance::default() };
                self.add_segment(&checked.good, source)?;
            }
            let stored = format!("{} other sentences of {name} were stored", checked.good.len());
            let suspect_note = "each was set aside, not trained on: check it, add `# confirmed = yes` and move the \
                                file back into annotated/";
            let raw = checked.raw.as_deref();
            set_aside(&self.suspect, &path, &name, raw, &checked.suspect, suspect_note)?;
            set_aside(&self.rejected, &path, &name, raw, &checked.bad, &stored)?;
            if path.exists() {
                fs::remove_file(&path).map_err(io_err(&path))?;
                sync_dir(&self.incoming).map_err(io_err(&self.incoming))?;
            }
            let with_name = |p: &Problem| format!("{name}{}: {}", location(p.line), p.text);
            report.files += 1;
            report.sentences += checked.good.len();
            report.rejected.extend(checked.bad.iter().map(with_name));
            report.suspect.extend(checked.suspect.iter().map(with_name));
            report.by_file.push(checked.report);
        }
        Ok(report)
    }

    /// Reads every segment, later versions of a sentence replacing earlier ones.
    pub fn read(&self) -> Result<Contents, StoreError> {
        let mut contents = Contents::default();
        let mut index: HashMap<String, usize> = HashMap::new();
        let names = match visible_files(&self.segments) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(contents),
            Err(e) => return Err(io_err(&self.segments)(e)),
        };
        for (name, number) in names.iter().filter_map(|n| segment_number(n).map(|k| (n, k))) {
            let path = self.segments.join(name);
            contents.segments.push((number, 0));
            for sent in Reader::open(&path, Format::Conllu)? {
                let sentence = sent?;
                contents.appended += 1;
                if let Some(last) = contents.segments.last_mut() {
                    last.1 += 1;
                }
                let key = dedup_key(&sentence);
                match index.get(&key) {
                    Some(&i) => contents.annotations[i].sentence = sentence,
                    None => {
                        index.insert(key, contents.annotations.len());
                        contents.annotations.push(Annotation { id: identity(&sentence), sentence });
                    }
                }
            }
        }
        Ok(contents)
    }

    /// Every segment, in order, with its provenance.
    pub fn list(&self) -> Result<Vec<Segment>, StoreError> {
        let names = match visible_files(&self.segments) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&self.segments)(e)),
        };
        let mut segments: Vec<Segment> = names
            .iter()
            .filter_map(|n| segment_number(n))
            .map(|number| Segment {
                number,
                path: self.segment_path(number),
                provenance: fs::read(self.provenance_path(number)).ok().and_then(|b| serde_json::from_slice(&b).ok()),
            })
            .collect();
        segments.sort_by_key(|s| s.number);
        Ok(segments)
    }

    /// Takes segment `number` out of the store: moved with its provenance into
    /// `store/removed/` (nothing is lost; moving them back restores it). Returns where it went.
    pub fn remove(&self, number: u64) -> Result<PathBuf, StoreError> {
        // Nothing stored yet: no store to lock (whose lock file the error used to name).
        if !self.segments.is_dir() {
            return Err(StoreError::NoSegment(number, self.segments.clone()));
        }
        let _lock = self.lock()?;
        let path = self.segment_path(number);
        if !path.exists() {
            return Err(StoreError::NoSegment(number, self.segments.clone()));
        }
        let removed = self.removed_dir();
        fs::create_dir_all(&removed).map_err(io_err(&removed))?;
        let provenance = self.provenance_path(number);
        if provenance.exists() {
            let to = removed.join(file_name_of(&provenance));
            rename_durably(&provenance, &to).map_err(io_err(&to))?;
        }
        let to = removed.join(file_name_of(&path));
        rename_durably(&path, &to).map_err(io_err(&to))?;
        Ok(to)
    }

    /// The file of segment `number`.
    pub fn segment_path(&self, number: u64) -> PathBuf {
        self.segments.join(format!("{number:08}.conllu"))
    }

    fn provenance_path(&self, number: u64) -> PathBuf {
        self.segments.join(format!("{number:08}.json"))
    }

    fn removed_dir(&self) -> PathBuf {
        self.segments.join("removed")
    }

    /// Writes `sentences` as the next segment, its provenance first (so that a segment always
    /// has one). Numbers are never reused, removed segments' included.
    fn add_segment(&self, sentences: &[Sentence], mut provenance: Provenance) -> Result<(), StoreError> {
        let mut numbers: Vec<u64> = visible_files(&self.segments)
            .map_err(io_err(&self.segments))?
            .iter()
            .filter_map(|n| segment_number(n))
            .collect();
        if let Ok(removed) = visible_files(&self.removed_dir()) {
            numbers.extend(removed.iter().filter_map(|n| segment_number(n)));
        }
        let next = numbers.into_iter().max().map_or(1, |n| n + 1);
        let path = self.segment_path(next);
        let mut bytes = BufWriter::new(Vec::new());
        for s in sentences {
            s.write_to(&mut bytes).map_err(io_err(&path))?;
        }
        let bytes = bytes.into_inner().map_err(|e| io_err(&path)(e.into_error()))?;
        provenance.time = crate::model::registry::unix_time();
        provenance.sentences = sentences.len();
        for s in sentences {
            if let Some(name) = s.comment(ANNOTATOR_KEY) {
                if !provenance.annotators.iter().any(|a| a == name) {
                    provenance.annotators.push(name.to_string());
                }
            }
        }
        let json = self.provenance_path(next);
        let text = serde_json::to_vec_pretty(&provenance).map_err(|e| io_err(&json)(io::Error::other(e)))?;
        write_atomically(&json, &text).map_err(io_err(&json))?;
        write_atomically(&path, &bytes).map_err(io_err(&path))
    }

    fn lock(&self) -> Result<File, StoreError> {
        let path = self.segments.join(".lock");
        let file = File::create(&path).map_err(io_err(&path))?;
        file.lock().map_err(io_err(&path))?;
        Ok(file)
    }
}

/// The number of a segment file `NNNNNNNN.conllu`.
fn segment_number(name: &str) -> Option<u64> {
    name.strip_suffix(".conllu").filter(|s| s.len() == 8).and_then(|s| s.parse().ok())
}

/// `# sent_id`, or `hash:HEX` of the FORMs for a sentence without one: the key of the
/// held-out split ([`crate::retrain::held_out`]). It stays the `sent_id` alone, although two
/// documents may number their sentences alike, so that no stored annotation ever moves between
/// held-out and training data; telling such sentences apart is [`dedup_key`]'s job.
pub fn identity(sent: &Sentence) -> String {
    match sent_id(sent) {
        Some(id) => id.to_string(),
        None => format!("hash:{:016x}", forms_hash(sent)),
    }
}

/// What makes two stored annotations the same sentence, the later replacing the earlier: the
/// `# sent_id` (or none) and the FORMs. Not the HEAD and DEPREL columns, which a correction
/// changes; but a changed FORM (a fixed typo, another tokenization) makes another sentence,
/// and both are kept.
pub fn dedup_key(sent: &Sentence) -> String {
    let forms = forms_hash(sent);
    match sent_id(sent) {
        // `hash:` and 16 digits at the end: no two (id, forms) pairs give one key.
        Some(id) => format!("{id} hash:{forms:016x}"),
        None => format!("hash:{forms:016x}"),
    }
}

/// The value of `# sent_id`, if the sentence has a non-empty one.
fn sent_id(sent: &Sentence) -> Option<&str> {
    sent.comment("sent_id")
}

/// Moves the sentences of `problems` aside into `dir` (`rejected/`, `suspect/`): a file of
/// those sentences only, as written in the input, with `NAME.error` naming each line in it
/// (and in the input) and ending with `note`. A whole-file problem (line 0) or an unreadable
/// input moves the input itself, whole.
fn set_aside(
    dir: &Path,
    input: &Path,
    name: &str,
    raw: Option<&[u8]>,
    problems: &[Problem],
    note: &str,
) -> Result<(), StoreError> {
    if problems.is_empty() {
        return Ok(());
    }
    let Some(raw) = raw.filter(|_| problems.iter().all(|p| p.line > 0)) else {
        let mut why: String = problems.iter().map(|p| format!("{name}{}: {}\n", location(p.line), p.text)).collect();
        why.push_str(note);
        why.push('\n');
        let target = unique_name(dir, name);
        let error_file = dir.join(format!("{target}.error"));
        write_atomically(&error_file, why.as_bytes()).map_err(io_err(&error_file))?;
        let to = dir.join(&target);
        return rename_durably(input, &to).map_err(io_err(&to));
    };
    let lines: Vec<&[u8]> = raw.split(|&b| b == b'\n').collect();
    let blank = |i: usize| lines.get(i).is_none_or(|l| l.trim_ascii().is_empty());
    let plain = name.strip_suffix(".zst").unwrap_or(name);
    let target = unique_name(dir, plain);
    let (mut text, mut why) = (Vec::new(), String::new());
    let mut written: Vec<(usize, u64)> = Vec::new(); // (block start in the input, its line in `text`)
    let mut next_line = 1u64;
    for p in problems {
        let at = (p.line as usize - 1).min(lines.len().saturating_sub(1));
        let start = (0..=at).rev().take_while(|&i| !blank(i)).last().unwrap_or(at);
        let new_start = match written.iter().find(|(s, _)| *s == start) {
            Some(&(_, line)) => line,
            None => {
                let end = (at..lines.len()).take_while(|&i| !blank(i)).last().unwrap_or(at);
                for line in &lines[start..=end] {
                    text.extend_from_slice(line);
                    text.push(b'\n');
                }
                text.push(b'\n');
                written.push((start, next_line));
                let line = next_line;
                next_line += (end - start + 2) as u64;
                line
            }
        };
        let line = new_start + (p.line - 1 - start as u64);
        why.push_str(&format!("{target}:{line}: {} (line {} of {name})\n", p.text, p.line));
    }
    why.push_str(note);
    why.push('\n');
    let error_file = dir.join(format!("{target}.error"));
    write_atomically(&error_file, why.as_bytes()).map_err(io_err(&error_file))?;
    let to = dir.join(&target);
    write_atomically(&to, &text).map_err(io_err(&to))
}

/// `name`, or `name~2`, `name~3`, … before the extension (`c~2.conllu`, so that a fixed file
/// moved back into `annotated/` is still CoNLL-U): the first that neither it nor its `.error`
/// takes in `dir`.
fn unique_name(dir: &Path, name: &str) -> String {
    (1u64..)
        .map(|n| numbered_name(name, n))
        .find(|n| !dir.join(n).exists() && !dir.join(format!("{n}.error")).exists())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::super::checks::{check_sentence, Verdict};
    use super::*;
    use crate::corpus::unparsed::{ERROR_KEY, PLACEHOLDER_MISC};
    use crate::corpus::Column;

    /// A sentence of `words` (FORM, HEAD, DEPREL), with `# sent_id = ID` if given.
    fn sentence(id: Option<&str>, words: &[(&str, &str, &str)]) -> String {
        let mut s = id.map_or(String::new(), |id| format!("# sent_id = {id}\n"));
        for (i, (form, head, deprel)) in words.iter().enumerate() {
            s.push_str(&format!("{}\t{form}\t{form}\tX\t_\t_\t{head}\t{deprel}\t_\t_\n", i + 1));
        }
        s.push('\n');
        s
    }

    /// A store in a new temporary directory (kept alive by the returned guard).
    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::new(&dir.path().join("annotated"));
        store.create().expect("the store's directories");
        (dir, store)
    }

    fn drop_in(store: &Store, name: &str, text: &str) {
        fs::write(store.incoming.join(name), text).expect("an annotation file");
    }

    const GOOD: [(&str, &str, &str); 3] = [("a", "2", "dep"), ("b", "0", "root"), ("c", "2", "dep")];
    const CYCLE: [(&str, &str, &str); 3] = [("a", "2", "dep"), ("b", "1", "dep"), ("c", "0", "root")];

    #[test]
    fn removing_from_a_store_never_made_says_there_is_no_such_segment() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::new(&dir.path().join("annotated"));
        let e = store.remove(99).expect_err("nothing to remove").to_string();
        assert!(e.starts_with("no segment 99 in ") && !e.contains(".lock"), "{e}");
    }

    #[test]
    fn sentences_sharing_a_sent_id_are_kept_apart_and_a_correction_replaces_its_own() {
        let (_dir, store) = store();
        let doc = |forms: [&str; 3], deprel: &str, sent_ids: std::ops::Range<u32>| -> String {
            let words = [(forms[0], "2", deprel), (forms[1], "0", "root"), (forms[2], "2", deprel)];
            sent_ids.map(|i| sentence(Some(&i.to_string()), &words)).collect()
        };
        // Two documents numbered on their own: 1..=50 each, different sentences.
        drop_in(&store, "docA.conllu", &doc(["a", "b", "c"], "dep", 1..51));
        drop_in(&store, "docB.conllu", &doc(["x", "y", "z"], "dep", 1..51));
        assert_eq!(store.ingest().expect("ingest").sentences, 100);
        let contents = store.read().expect("read");
        assert_eq!(contents.annotations.len(), 100, "docA's sentences were replaced by docB's");
        // A correction of docA's sentence 7 replaces that one only.
        drop_in(&store, "fix.conllu", &doc(["a", "b", "c"], "obj", 7..8));
        store.ingest().expect("ingest");
        let contents = store.read().expect("read");
        assert_eq!((contents.annotations.len(), contents.appended), (100, 101));
        let deprel = |a: &Annotation| a.sentence.word(1).get(crate::corpus::Column::Deprel).to_string();
        let form = |a: &Annotation| a.sentence.word(1).get(crate::corpus::Column::Form).to_string();
        let sevens: Vec<(String, String)> =
            contents.annotations.iter().filter(|a| a.id == "7").map(|a| (form(a), deprel(a))).collect();
        assert_eq!(sevens, [("a".to_string(), "obj".to_string()), ("x".to_string(), "dep".to_string())]);
    }

    #[test]
    fn the_held_out_key_stays_the_sent_id() {
        let text = sentence(Some("s1"), &GOOD);
        let mut reader = crate::corpus::Reader::new(text.as_bytes(), Path::new("a.conllu"), Format::Conllu);
        let sent = reader.next().and_then(Result::ok).expect("a sentence");
        assert_eq!(identity(&sent), "s1");
        assert!(dedup_key(&sent).starts_with("s1 hash:"));
    }

    #[test]
    fn an_unparsed_placeholder_copied_from_lowconf_is_rejected_not_stored() {
        let (_dir, store) = store();
        let mut lowconf = Vec::new();
        let raw = "1\tThe\t_\n2\tdog\n";
        crate::corpus::unparsed::write(&mut lowconf, "in.conllu:3: expected 10 tab-separated columns", raw, false)
            .expect("a placeholder");
        let placeholder = String::from_utf8(lowconf).expect("UTF-8");
        // Also with only one of its two marks left.
        let marked_word_only: String =
            placeholder.lines().filter(|l| !l.contains(ERROR_KEY)).map(|l| format!("{l}\n")).collect();
        let comment_only = placeholder.replace(PLACEHOLDER_MISC, "_");
        let good = sentence(Some("s1"), &GOOD);
        drop_in(&store, "low.conllu", &format!("{good}{placeholder}{marked_word_only}{comment_only}"));
        let r = store.ingest().expect("ingest");
        assert_eq!(r.sentences, 1, "only the real annotation is stored: {r:?}");
        assert_eq!(
            r.rejected,
            [
                "low.conllu:6: an unparsed placeholder (spoolparse_error), not an annotation",
                "low.conllu:12: an unparsed placeholder (spoolparse_error), not an annotation",
                "low.conllu:17: an unparsed placeholder (spoolparse_error), not an annotation",
            ]
        );
        assert!(store.rejected.join("low.conllu").exists() && store.rejected.join("low.conllu.error").exists());
        assert_eq!(store.read().expect("read").annotations.len(), 1);
    }

    #[test]
    fn a_sentence_judged_another_language_s_is_refused_until_its_comment_is_deleted() {
        let (_dir, store) = store();
        let key = crate::parse::fit::OTHER_LANGUAGE_KEY;
        let judged = format!("# {key} = of its 3 words, 0 among …\n{}", sentence(Some("s2"), &GOOD));
        drop_in(&store, "low.conllu", &format!("{}{judged}", sentence(Some("s1"), &GOOD)));
        let r = store.ingest().expect("ingest");
        assert_eq!(r.sentences, 1, "{r:?}");
        assert_eq!(r.rejected.len(), 1);
        assert!(r.rejected[0].starts_with("low.conllu:6: the daemon judged this sentence another language's"), "{r:?}");
        assert!(r.rejected[0].contains("delete that line"), "{r:?}");
        // With the line deleted, it is stored.
        drop_in(&store, "fixed.conllu", &sentence(Some("s2"), &GOOD));
        assert_eq!(store.ingest().expect("ingest").sentences, 1);
    }

    #[test]
    fn annotations_that_training_would_skip_are_rejected_with_what_to_fix() {
        let (_dir, store) = store();
        let texts = [
            // Partial and not projective: 3 -> 1 and 0 -> 2 cross (the tester's 3, 0, _, 1).
            sentence(Some("p"), &[("a", "3", "dep"), ("b", "0", "root"), ("c", "_", "_"), ("d", "1", "dep")]),
            // 1 <- 2 and 1 -> 3 do not cross, but word 2 can only hang from node 0, across 1 -> 3.
            sentence(Some("q"), &[("a", "2", "dep"), ("b", "_", "_"), ("c", "1", "dep")]),
            // Every HEAD, but a DEPREL left open: partial for training, and not projective.
            sentence(Some("r"), &[("a", "3", "dep"), ("b", "0", "root"), ("c", "2", "_"), ("d", "1", "dep")]),
            sentence(Some("s"), &[("a", "2", "dep"), ("b", "0", "nsubj"), ("c", "2", "dep")]),
            sentence(Some("t"), &[("a", "2", "root"), ("b", "0", "root"), ("c", "2", "dep")]),
            // A projective tree, but a DEPREL with a pseudo-projective mark typed in.
            sentence(Some("x"), &[("a", "2", "nsubj↑obj"), ("b", "0", "root"), ("c", "2", "dep")]),
            // Trained on: a whole non-projective tree (lifted) and a partial projective annotation
            // without a root word; refused: one with its root DEPREL open (half an arc).
            sentence(Some("u"), &[("a", "3", "dep"), ("b", "0", "root"), ("c", "2", "dep"), ("d", "1", "dep")]),
            sentence(Some("v"), &[("a", "_", "_"), ("b", "0", "_"), ("c", "2", "dep")]),
            sentence(Some("w"), &[("a", "2", "dep"), ("b", "_", "_"), ("c", "2", "dep")]),
        ];
        drop_in(&store, "s.conllu", &texts.concat());
        let r = store.ingest().expect("ingest");
        assert_eq!(r.sentences, 2, "{r:?}");
        let expected = [
            "s.conllu:3: the annotated arcs of words 1 and 2 cross, and training skips a partial annotation",
            "s.conllu:8: no projective tree contains the annotated arcs",
            "s.conllu:15: word 3 has HEAD 2 and DEPREL _: half an arc",
            "s.conllu:20: word 2 has HEAD 0 but DEPREL nsubj, and training skips the sentence: the root word's \
             DEPREL must be root (or _)",
            "s.conllu:24: word 1 has DEPREL root but HEAD 2, and training skips the sentence: only the word with \
             HEAD 0 may have DEPREL root",
            "s.conllu:29: word 1's DEPREL nsubj↑obj contains ↑ or ↓, which spoolparse reserves for its \
             pseudo-projective labels: write the plain relation (e.g. nsubj)",
            "s.conllu:41: word 2 has HEAD 0 and DEPREL _: half an arc",
        ];
        assert_eq!(r.rejected.len(), expected.len(), "{:#?}", r.rejected);
        for (got, want) in r.rejected.iter().zip(expected) {
            assert!(got.starts_with(want), "{got}\nshould start with\n{want}");
        }
        let ids: Vec<String> = store.read().expect("read").annotations.into_iter().map(|a| a.id).collect();
        assert_eq!(ids, ["u", "w"]);
    }

    /// Every sentence of up to 4 words with any HEAD (`_`, 0..=n) and DEPREL (`root`, `dep`,
    /// `_`, and `dep↑x`, a pseudo-projective mark typed in): ingest stores exactly those that
    /// training (with a pseudo-projective scheme, the default, and root label `root`) trains
    /// on, rather than skipping or refusing them, but for half arcs (a HEAD with DEPREL `_` or
    /// the reverse), which training takes and ingest refuses.
    #[test]
    fn ingest_accepts_exactly_what_training_trains_on() {
        use crate::base::label::LabelSet;
        use crate::train::TrainingSet;
        use crate::transition::projective::Scheme;
        let path = Path::new("a.conllu");
        let (mut stored, mut trained) = (0, 0);
        for n in 1..=4usize {
            let heads: Vec<String> = std::iter::once("_".to_string()).chain((0..=n).map(|h| h.to_string())).collect();
            const DEPRELS: [&str; 4] = ["root", "dep", "_", "dep↑x"];
            let choices = (heads.len() * DEPRELS.len()).pow(n as u32);
            for mut code in 0..choices {
                let mut words = Vec::new();
                for i in 0..n {
                    let (h, d) = (code % heads.len(), code / heads.len() % DEPRELS.len());
                    code /= heads.len() * DEPRELS.len();
                    words.push((["a", "b", "c", "d"][i], heads[h].as_str(), DEPRELS[d]));
                }
                let text = sentence(None, &words);
                let mut reader = Reader::new(text.as_bytes(), path, Format::Conllu);
                let Some(Ok(sent)) = reader.next() else { continue };
                let store_takes =
                    matches!(check_sentence(&sent, path, &Reference::basic(), None), Ok(Verdict::Good { .. }));
                let half_arc = words.iter().any(|&(_, h, d)| (h == "_") != (d == "_"));
                let mut set = TrainingSet {
                    labels: Some(LabelSet::new(ROOT_LABEL)),
                    projective: Some(Scheme::Head),
                    ..TrainingSet::default()
                };
                let training_takes = set.add(&sent, path).is_ok() && set.sentences.len() == 1;
                assert_eq!(store_takes, training_takes && !half_arc, "{words:?}");
                stored += usize::from(store_takes);
                trained += usize::from(training_takes && !half_arc);
            }
        }
        assert!(stored > 200 && stored == trained, "{stored} stored, {trained} trained");
    }

    #[test]
    fn a_second_rejection_is_numbered_before_the_extension_and_ingests_once_fixed() {
        let (_dir, store) = store();
        let bad = sentence(Some("1"), &CYCLE);
        for _ in 0..2 {
            drop_in(&store, "c.conllu", &bad);
            assert_eq!(store.ingest().expect("ingest").rejected.len(), 1);
        }
        let mut names = visible_files(&store.rejected).expect("rejected/");
        names.sort();
        assert_eq!(names, ["c.conllu", "c.conllu.error", "c~2.conllu", "c~2.conllu.error"]);
        // The user fixes the second one and moves it back, name and all.
        fs::write(store.rejected.join("c~2.conllu"), sentence(Some("1"), &GOOD)).expect("the fix");
        fs::rename(store.rejected.join("c~2.conllu"), store.incoming.join("c~2.conllu")).expect("move back");
        let r = store.ingest().expect("ingest");
        assert_eq!((r.sentences, r.rejected.len()), (1, 0), "{r:?}");
    }

    /// A word line with MISC `misc`.
    fn marked(id: usize, form: &str, head: &str, deprel: &str, misc: &str) -> String {
        format!("{id}\t{form}\t{form}\tX\t_\t_\t{head}\t{deprel}\t_\t{misc}\n")
    }

    #[test]
    fn arcs_still_marked_by_the_parser_are_stored_unannotated_unless_the_sentence_says_reviewed_all() {
        let (_dir, store) = store();
        // A lazy correction: word 3 (flagged) fixed and its marks removed, words 1 and 2 as the
        // parser wrote them.
        let lazy = format!(
            "# sent_id = lazy\n{}{}{}\n",
            marked(1, "a", "2", "dep", "Conf=0.950"),
            marked(2, "b", "0", "root", "Conf=0.990"),
            marked(3, "c", "2", "dep", "_"),
        );
        let all = format!("# sent_id = all\n# reviewed = all\n{}", &lazy[lazy.find('1').unwrap_or(0)..]);
        let untouched = format!(
            "# sent_id = untouched\n{}{}{}\n",
            marked(1, "a", "2", "dep", "Conf=0.950"),
            marked(2, "b", "0", "root", "Conf=0.990"),
            marked(3, "c", "2", "dep", "Conf=0.400|LowConf=Yes"),
        );
        drop_in(&store, "low.conllu", &format!("{lazy}{all}{untouched}"));
        let r = store.ingest().expect("ingest");
        assert_eq!(r.sentences, 2, "{r:?}");
        assert_eq!(r.rejected.len(), 1, "{r:?}");
        assert!(r.rejected[0].starts_with("low.conllu:13: no reviewed arc"), "{r:?}");
        let file = &r.by_file[0];
        assert_eq!((file.reviewed_arcs, file.unreviewed_arcs), (1 + 3, 2), "{file}");
        let contents = store.read().expect("read");
        let heads = |a: &Annotation| -> Vec<String> {
            a.sentence.words().map(|w| format!("{} {}", w.get(Column::Head), w.get(Column::Deprel))).collect()
        };
        assert_eq!(heads(&contents.annotations[0]), ["_ _", "_ _", "2 dep"], "only the reviewed arc is gold");
        assert_eq!(heads(&contents.annotations[1]), ["2 dep", "0 root", "2 dep"]);
    }

    #[test]
    fn only_the_bad_sentences_of_a_file_go_to_rejected_and_its_error_names_their_lines_there() {
        let (_dir, store) = store();
        let text = [
            sentence(Some("g1"), &GOOD),
            sentence(Some("b1"), &CYCLE),
            sentence(Some("g2"), &GOOD),
            sentence(Some("b2"), &[("a", "2", "dep"), ("b", "0", "root"), ("c", "9", "dep")]),
        ]
        .concat();
        drop_in(&store, "mixed.conllu", &text);
        let r = store.ingest().expect("ingest");
        assert_eq!((r.sentences, r.rejected.len()), (2, 2), "{r:?}");
        let rejected = fs::read_to_string(store.rejected.join("mixed.conllu")).expect("the rejected sentences");
        assert_eq!(
            rejected,
            [
                sentence(Some("b1"), &CYCLE),
                sentence(Some("b2"), &[("a", "2", "dep"), ("b", "0", "root"), ("c", "9", "dep")])
            ]
            .concat()
        );
        let error = fs::read_to_string(store.rejected.join("mixed.conllu.error")).expect("the error sidecar");
        // Each error line names a line of the rejected file that is the input's line it names.
        let (input, aside): (Vec<&str>, Vec<&str>) = (text.lines().collect(), rejected.lines().collect());
        let mut named = Vec::new();
        for line in error.lines().filter(|l| l.starts_with("mixed.conllu:")) {
            let number = |s: &str| {
                s.split(|c: char| !c.is_ascii_digit()).find(|n| !n.is_empty()).and_then(|n| n.parse::<usize>().ok())
            };
            let there = number(&line["mixed.conllu:".len()..]).expect("a line in the rejected file");
            let original = line.rsplit_once("(line ").and_then(|(_, r)| number(r)).expect("the input's line");
            assert_eq!(aside[there - 1], input[original - 1], "{error}");
            named.push(original);
        }
        assert_eq!(named.len(), 2, "{error}");
        assert!(named[1] == 19 && (6..=10).contains(&named[0]), "{error}");
        assert!(!store.incoming.join("mixed.conllu").exists(), "the input is gone: nothing of it is lost");
        // Fixed and moved back: only the two are checked again.
        fs::write(
            store.rejected.join("mixed.conllu"),
            [sentence(Some("b1"), &GOOD), sentence(Some("b2"), &GOOD)].concat(),
        )
        .expect("the fix");
        fs::rename(store.rejected.join("mixed.conllu"), store.incoming.join("mixed.conllu")).expect("move back");
        let r = store.ingest().expect("ingest");
        assert_eq!((r.sentences, r.rejected.len()), (2, 0), "{r:?}");
        assert_eq!(store.read().expect("read").annotations.len(), 4);
    }
}
