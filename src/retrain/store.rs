//! The annotation store: corrected sentences that people drop into `annotated/`, checked like
//! gold training data and kept for every later retraining.
//!
//! ```text
//! annotated/            people rename .conllu / .conllu.zst files in here (dot-files ignored)
//! annotated/store/      NNNNNNNN.conllu: one segment per accepted input, never changed
//! annotated/rejected/   inputs with a bad sentence, whole, with NAME.error: FILE:LINE: problem
//! ```
//!
//! Ingesting a file writes its good sentences as a new segment (atomically: temporary name,
//! fsync, rename), then moves the input to `rejected/` if any sentence was bad, or removes it;
//! so a kill at any moment loses nothing, and at worst ingests a file twice. That is harmless
//! because reading deduplicates: a later segment's sentence replaces an earlier one that is the
//! same sentence (a correction of a correction), that is, has the same `# sent_id` (or none)
//! and the same FORMs ([`dedup_key`]). Documents numbered on their own (`sent_id` 1, 2, … in
//! each) thus keep all their sentences. A rejected input is kept whole, so that the line
//! numbers of its `.error` point into it; its good sentences are stored all the same.
//!
//! A sentence is good when it is not the daemon's placeholder for a sentence it could not read
//! ([`crate::corpus::unparsed`]: copied from `lowconf/`, it has nothing to learn from), every
//! HEAD is a word index or `_` (a partial annotation, see
//! [`crate::transition::GoldTree::partial`]), the annotated arcs have no cycle, at most one word
//! hangs from the root, at least one arc is annotated, and training would not skip it: the
//! root word's DEPREL, where annotated, is the root label and no other word's is, and a
//! partial annotation can be completed into a projective tree (a whole non-projective tree is
//! left to training, see [`Store::root_label`] and `training_skips`). This module owns these
//! directories; it must not train or decide anything about models.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use crate::base::hash::{combine, hash_str};
use crate::base::io::{numbered_name, rename_durably, sync_dir, visible_files, write_atomically};
use crate::corpus::tree::{is_projective_partial, partial_heads, PartialHeads};
use crate::corpus::unparsed::{ERROR_KEY, PLACEHOLDER_MISC};
use crate::corpus::{Column, CorpusError, Format, Reader, Sentence};

/// Why the store could not be read or written (bad annotations are not errors: they go to
/// `rejected/`).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error(transparent)]
    Corpus(#[from] CorpusError),
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
    /// Sentences ever stored, duplicates and replaced versions included: it only grows, so
    /// the difference between two readings is what arrived in between.
    pub appended: usize,
}

/// The `annotated/` directory.
#[derive(Debug, Clone)]
pub struct Store {
    pub incoming: PathBuf,
    pub segments: PathBuf,
    pub rejected: PathBuf,
    /// The DEPREL of the root arc, and of no other, that training expects; an annotation that
    /// breaks this is refused, since training would skip it (it takes the root label from the
    /// first base sentence: `root` in Universal Dependencies, which [`Store::new`] assumes).
    pub root_label: String,
}

/// The root label of Universal Dependencies.
pub const ROOT_LABEL: &str = "root";

impl Store {
    /// The store rooted at `dir` (config `paths.annotated`), checking root arcs against
    /// [`ROOT_LABEL`].
    pub fn new(dir: &Path) -> Store {
        Store {
            incoming: dir.to_path_buf(),
            segments: dir.join("store"),
            rejected: dir.join("rejected"),
            root_label: ROOT_LABEL.to_string(),
        }
    }

    /// The same store, checking root arcs against the root label of the model `registry`
    /// serves (the one training takes from the base treebank, which trained that model too);
    /// [`ROOT_LABEL`] where no model serves or it cannot be read.
    pub fn with_root_label_of(mut self, registry: &crate::model::registry::Registry) -> Store {
        let serving = registry.current_name().ok().flatten();
        let model = serving.and_then(|name| crate::model::file::ModelFile::open(&registry.dir().join(name)).ok());
        if let Some(model) = model {
            self.root_label = model.meta().labels.name(crate::base::label::Label::ROOT).to_string();
        }
        self
    }

    /// Creates the directories if missing.
    pub fn create(&self) -> Result<(), StoreError> {
        for d in [&self.incoming, &self.segments, &self.rejected] {
            fs::create_dir_all(d).map_err(io_err(d))?;
        }
        Ok(())
    }

    /// Takes in every file waiting in `annotated/`. Holds the store's lock meanwhile, so that a
    /// daemon and `spoolparse retrain` never ingest the same file twice at once.
    pub fn ingest(&self) -> Result<Ingested, StoreError> {
        self.create()?;
        let _lock = self.lock()?;
        let mut report = Ingested::default();
        for name in visible_files(&self.incoming).map_err(io_err(&self.incoming))? {
            let path = self.incoming.join(&name);
            let (good, bad) = check_file(&path, &name, &self.root_label);
            if !good.is_empty() {
                self.add_segment(&good)?;
            }
            if bad.is_empty() {
                fs::remove_file(&path).map_err(io_err(&path))?;
                sync_dir(&self.incoming).map_err(io_err(&self.incoming))?;
            } else {
                let mut why = bad.join("\n");
                why.push_str(&format!("\n{} other sentences of {name} were stored\n", good.len()));
                let target = unique_name(&self.rejected, &name);
                let error_file = self.rejected.join(format!("{target}.error"));
                write_atomically(&error_file, why.as_bytes()).map_err(io_err(&error_file))?;
                let to = self.rejected.join(&target);
                rename_durably(&path, &to).map_err(io_err(&to))?;
            }
            report.files += 1;
            report.sentences += good.len();
            report.rejected.extend(bad);
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
        for name in names.iter().filter(|n| segment_number(n).is_some()) {
            let path = self.segments.join(name);
            for sent in Reader::open(&path, Format::Conllu)? {
                let sentence = sent?;
                contents.appended += 1;
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

    fn add_segment(&self, sentences: &[Sentence]) -> Result<(), StoreError> {
        let names = visible_files(&self.segments).map_err(io_err(&self.segments))?;
        let next = names.iter().filter_map(|n| segment_number(n)).max().map_or(1, |n| n + 1);
        let path = self.segments.join(format!("{next:08}.conllu"));
        let mut bytes = BufWriter::new(Vec::new());
        for s in sentences {
            s.write_to(&mut bytes).map_err(io_err(&path))?;
        }
        let bytes = bytes.into_inner().map_err(|e| io_err(&path)(e.into_error()))?;
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
    let id = sent.comments.iter().find_map(|c| c.strip_prefix("# sent_id").map(|r| r.trim_start_matches([' ', '='])));
    id.map(str::trim).filter(|id| !id.is_empty())
}

/// A hash of the FORMs of the syntactic words, in order.
fn forms_hash(sent: &Sentence) -> u64 {
    sent.words().fold(0u64, |h, w| combine(h, hash_str(w.get(Column::Form))))
}

/// Reads `path` and sorts its sentences into good ones and problems (`NAME:LINE: problem`),
/// checking root arcs against `root_label`. A file that cannot be read at all (not CoNLL-U,
/// broken zstd) has only its problem.
fn check_file(path: &Path, name: &str, root_label: &str) -> (Vec<Sentence>, Vec<String>) {
    if Format::from_extension(Path::new(name)) != Some(Format::Conllu) {
        return (Vec::new(), vec![format!("{name}: annotations must be CoNLL-U (.conllu or .conllu.zst)")]);
    }
    let reader = match Reader::open(path, Format::Conllu) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), vec![e.with_name(name)]),
    };
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for sent in reader {
        let sent = match sent {
            Ok(s) => s,
            Err(e) if e.kind.is_unreadable() => {
                bad.push(e.with_name(name));
                return (good, bad);
            }
            Err(e) => {
                bad.push(e.with_name(name));
                continue;
            }
        };
        match check_sentence(&sent, path, name, root_label) {
            Ok(()) => good.push(sent),
            Err(problem) => bad.push(problem),
        }
    }
    (good, bad)
}

/// Whether one sentence read from `path` (named `name` in problems) is a good annotation;
/// otherwise its problem, `NAME:LINE: problem`.
fn check_sentence(sent: &Sentence, path: &Path, name: &str, root_label: &str) -> Result<(), String> {
    if is_unparsed(sent) {
        return Err(format!("{name}:{}: an unparsed placeholder ({ERROR_KEY}), not an annotation", sent.first_line));
    }
    crate::train::check_marks(sent, path).map_err(|e| e.with_name(name))?;
    let heads = partial_heads(sent, path).map_err(|e| e.with_name(name))?;
    if heads.iter().all(Option::is_none) {
        return Err(format!("{name}:{}: no annotated arc (every HEAD is _)", sent.line_of_word(1)));
    }
    match training_skips(sent, &heads, root_label) {
        Some((line, problem)) => Err(format!("{name}:{line}: {problem}")),
        None => Ok(()),
    }
}

/// Why training would skip a sentence that [`partial_heads`] accepted, with the line to fix:
/// what [`crate::train::TrainingSet::add`] counts as `skipped_root` and `skipped_nonprojective`,
/// which an annotator would otherwise only see as counts in a retraining report.
///
/// A whole tree (every HEAD and DEPREL annotated) that is not projective passes: training
/// lifts it with the model's pseudo-projective scheme (the default), or skips it for a model
/// trained with `--pseudo-projective none`, which ingesting cannot know (it reads no model).
/// Training's other root rule, one root word in a whole tree, holds already: [`partial_heads`]
/// refuses a second one and cycles, and an acyclic whole tree has a root word.
fn training_skips(sent: &Sentence, heads: &PartialHeads, root_label: &str) -> Option<(u64, String)> {
    // DEPREL as training reads it: only where the head is annotated, `None` where left open.
    let deprels: Vec<Option<&str>> =
        sent.words().zip(heads).map(|(w, h)| h.and(Some(w.get(Column::Deprel))).filter(|&d| d != "_")).collect();
    for (i, (&head, &deprel)) in heads.iter().zip(&deprels).enumerate() {
        let (Some(head), Some(deprel)) = (head, deprel) else { continue };
        let word = i + 1;
        let line = sent.line_of_word(word);
        if head == 0 && deprel != root_label {
            return Some((
                line,
                format!(
                    "word {word} has HEAD 0 but DEPREL {deprel}, and training skips the sentence: \
                     the root word's DEPREL must be {root_label} (or _)"
                ),
            ));
        }
        if head != 0 && deprel == root_label {
            return Some((
                line,
                format!(
                    "word {word} has DEPREL {root_label} but HEAD {head}, and training skips the sentence: \
                     only the word with HEAD 0 may have DEPREL {root_label}"
                ),
            ));
        }
    }
    let partial = deprels.contains(&None);
    if !partial || is_projective_partial(heads) {
        return None;
    }
    Some(match crossing_arcs(heads) {
        Some((a, b)) => (
            sent.line_of_word(b),
            format!(
                "the annotated arcs of words {a} and {b} cross, and training skips a partial annotation that is \
                 not projective: annotate every HEAD and DEPREL of the sentence, or set one of these two HEADs to _"
            ),
        ),
        None => (
            sent.line_of_word(1),
            "no projective tree contains the annotated arcs (a word left _ between them could only hang across \
             one), and training skips such a partial annotation: annotate every HEAD and DEPREL of the sentence, \
             or leave more HEADs _"
                .to_string(),
        ),
    })
}

/// The first two annotated words (`a < b`) whose arcs cross, if any: one arc has exactly one
/// end strictly inside the other's span (arcs from node 0 included).
fn crossing_arcs(heads: &PartialHeads) -> Option<(usize, usize)> {
    let span = |w: usize| heads[w - 1].map(|h| (h.min(w), h.max(w)));
    (1..=heads.len()).filter_map(|a| span(a).map(|s| (a, s))).find_map(|(a, (lo, hi))| {
        (a + 1..=heads.len())
            .find(|&b| span(b).is_some_and(|(l, h)| (lo < l && l < hi && hi < h) || (l < lo && lo < h && h < hi)))
            .map(|b| (a, b))
    })
}

/// Whether `sent` is the daemon's placeholder for a malformed input sentence: a
/// `# spoolparse_error` comment, or a word marked `SpoolparseUnparsed=Yes` in MISC (either
/// alone is enough, should an annotator have dropped the other).
fn is_unparsed(sent: &Sentence) -> bool {
    let error_comment = |c: &String| {
        let key = c.strip_prefix('#').map(str::trim_start).and_then(|c| c.strip_prefix(ERROR_KEY));
        key.is_some_and(|rest| rest.trim_start().starts_with('='))
    };
    sent.comments.iter().any(error_comment)
        || sent.words().any(|w| w.get(Column::Misc).split('|').any(|entry| entry == PLACEHOLDER_MISC))
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
    use super::*;

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
            // Trained on: a whole non-projective tree (lifted), a partial projective annotation
            // with its root DEPREL open, and one without a root word.
            sentence(Some("u"), &[("a", "3", "dep"), ("b", "0", "root"), ("c", "2", "dep"), ("d", "1", "dep")]),
            sentence(Some("v"), &[("a", "_", "_"), ("b", "0", "_"), ("c", "2", "dep")]),
            sentence(Some("w"), &[("a", "2", "dep"), ("b", "_", "_"), ("c", "2", "dep")]),
        ];
        drop_in(&store, "s.conllu", &texts.concat());
        let r = store.ingest().expect("ingest");
        assert_eq!(r.sentences, 3, "{r:?}");
        let expected = [
            "s.conllu:3: the annotated arcs of words 1 and 2 cross, and training skips a partial annotation",
            "s.conllu:8: no projective tree contains the annotated arcs",
            "s.conllu:14: the annotated arcs of words 1 and 2 cross",
            "s.conllu:20: word 2 has HEAD 0 but DEPREL nsubj, and training skips the sentence: the root word's \
             DEPREL must be root (or _)",
            "s.conllu:24: word 1 has DEPREL root but HEAD 2, and training skips the sentence: only the word with \
             HEAD 0 may have DEPREL root",
            "s.conllu:29: word 1's DEPREL nsubj↑obj contains ↑ or ↓, which spoolparse reserves for its \
             pseudo-projective labels: write the plain relation (e.g. nsubj)",
        ];
        assert_eq!(r.rejected.len(), expected.len(), "{:#?}", r.rejected);
        for (got, want) in r.rejected.iter().zip(expected) {
            assert!(got.starts_with(want), "{got}\nshould start with\n{want}");
        }
        let ids: Vec<String> = store.read().expect("read").annotations.into_iter().map(|a| a.id).collect();
        assert_eq!(ids, ["u", "v", "w"]);
    }

    /// Every sentence of up to 4 words with any HEAD (`_`, 0..=n) and DEPREL (`root`, `dep`,
    /// `_`, and `dep↑x`, a pseudo-projective mark typed in): ingest stores exactly those that training (with a pseudo-projective scheme, the
    /// default, and root label `root`) trains on, rather than skipping or refusing them.
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
                let store_takes = check_sentence(&sent, path, "a.conllu", ROOT_LABEL).is_ok();
                let mut set = TrainingSet {
                    labels: Some(LabelSet::new(ROOT_LABEL)),
                    projective: Some(Scheme::Head),
                    ..TrainingSet::default()
                };
                let training_takes = set.add(&sent, path).is_ok() && set.sentences.len() == 1;
                assert_eq!(store_takes, training_takes, "{words:?}");
                stored += usize::from(store_takes);
                trained += usize::from(training_takes);
            }
        }
        assert!(stored > 1000 && stored == trained, "{stored} stored, {trained} trained");
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
}
