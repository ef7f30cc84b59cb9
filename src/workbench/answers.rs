//! What the workbench writes, all of it under `annotated/`, and durably before it answers:
//!
//! - a correction: `annotated/wb-TIME-TASK.conllu`, written as a dot-file, fsync'd, then given
//!   its name (never over an existing file) and the directory fsync'd, so the daemon's ingest,
//!   which ignores dot-files, never sees a part of one; the words the annotator did not answer
//!   have HEAD and DEPREL `_` (unknown: a partial tree), the answered ones lose the parser's
//!   `Conf=`/`LowConf=` marks, and a whole sentence says `# reviewed = all`; the words whose
//!   tag the annotator fixed or confirmed carry it (see [`TagFix::applied`]) and are listed by
//!   `# tags_checked = 3 7` when their XPOS was given too, `# upos_checked = 2` otherwise
//!   ([`crate::retrain::TAGS_CHECKED_KEY`], [`crate::retrain::UPOS_CHECKED_KEY`]); when every
//!   word's UPOS and XPOS were, the sentence says `# tags = reviewed` instead; the words whose
//!   lemma the annotator fixed or confirmed carry it and are listed by `# lemmas_checked = 4`
//!   ([`crate::retrain::LEMMAS_CHECKED_KEY`]);
//! - a sentence flagged bad: `annotated/rejected/wb-TIME-TASK.conllu` with a `.error` sidecar
//!   giving the reason, where ingest never looks for training data;
//! - an answer held back as a rubber stamp ([`super::review`]): the same file in
//!   `annotated/suspect/`, with a `.error` file saying why, until a person confirms it;
//! - the audit log, `annotated/workbench/audit.jsonl`: one JSON line per decision (answer,
//!   whole, held, skip, bad, check) with the annotator, the time, the milliseconds spent and every
//!   arc's old and new value (and tag's, where one was checked), appended and fsync'd; a `check`
//!   (an answer to a known-answer check, [`super::known`]) is written there only.
//!
//! The correction file is the commit point; its `# workbench_source` comment names the queued
//! sentence, so [`done_sources`] finds the answered sentences from the audit log and from the
//! corrections not yet taken in, even if the process died between writing one and logging it.
//!
//! This module knows files and formats, not the queue or the model.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::base::io::publish;
use crate::corpus::{Column, Sentence, TokenKind, Upos};
use crate::learn::precision::SentenceRow;
use crate::model::tagger::TagSet;
use crate::retrain::{tags_reviewed, LEMMAS_CHECKED_KEY, TAGS_CHECKED_KEY, TAGS_KEY, UPOS_CHECKED_KEY};

/// The comment naming the queued sentence a correction answers.
pub const SOURCE_COMMENT: &str = "workbench_source";

/// The comment of a correction of a sentence of the uniform sample, reviewed whole.
pub const SAMPLE_COMMENT: &str = crate::retrain::SAMPLE_KEY;

/// One word's arc before and after a decision.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ArcChange {
    pub id: u32,
    pub old_head: u32,
    pub old_deprel: String,
    /// `None`: the head was marked unknown.
    pub head: Option<u32>,
    pub deprel: Option<String>,
    /// For a word the task flagged to check: what the queue ranked it by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<Checked>,
    /// For a word whose tag the annotator fixed or confirmed: its tags before and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<TagChange>,
    /// For a word whose lemma the annotator fixed or confirmed: its lemma before and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lemma: Option<LemmaChange>,
}

/// One word's lemma before and after a decision that checked it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LemmaChange {
    pub old: String,
    pub new: String,
}

/// One word's tags before and after a decision that checked them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TagChange {
    pub old_upos: String,
    pub old_xpos: String,
    pub upos: String,
    pub xpos: String,
}

/// A word's tag as the annotator set it: a UD UPOS and, if they gave it, an XPOS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagFix {
    pub upos: Upos,
    pub xpos: Option<String>,
}

impl TagFix {
    /// The UPOS and XPOS to write for a word shown as `old_upos`/`old_xpos`: the XPOS given;
    /// else the one shown when the UPOS stands (a confirmation); else the first XPOS the
    /// serving model's tagger has with that UPOS (`tags`), else `_`. Never `_` where the
    /// tagger has a pair: the parser retrains on these tags, and learning pairs the tagger
    /// never gives would make it take a file of gold UPOS and XPOS `_` as its own tags (and
    /// parse it without retagging, see [`crate::parse::fit`]). Measured on en_atis (2,000
    /// arcs and 2,033 tag fixes, docs/annotation.md): dev LAS 84.08 with `_`, 86.03 with the
    /// tagger's XPOS.
    pub fn applied(&self, old_upos: &str, old_xpos: &str, tags: Option<&TagSet>) -> (String, String) {
        let upos = self.upos.name();
        let xpos = match &self.xpos {
            Some(x) => x.clone(),
            None if upos == old_upos => old_xpos.to_string(),
            None => {
                tags.and_then(|t| t.with_upos(upos).map(|i| t.get(i).1.to_string())).unwrap_or_else(|| "_".to_string())
            }
        };
        (upos.to_string(), xpos)
    }

    /// Whether the XPOS was checked too (given), not only the UPOS.
    pub fn whole_tag(&self) -> bool {
        self.xpos.is_some()
    }
}

/// What the queue knew of a checked arc: its calibrated probability of being wrong and its
/// pattern (see [`super::error_model`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Checked {
    pub p: f32,
    pub pattern: String,
}

impl ArcChange {
    /// Whether the decision changed the arc shown (a head marked unknown changed nothing known).
    pub fn changed(&self) -> Option<bool> {
        let head = self.head?;
        Some(head != self.old_head || self.deprel.as_deref() != Some(self.old_deprel.as_str()))
    }
}

/// One line of the audit log.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Decision {
    /// Seconds since the epoch.
    pub time: u64,
    pub annotator: String,
    /// `answer`, `whole`, `held`, `skip`, `bad`, `check` (an answer to a known-answer check,
    /// its result in `reason`: never a correction) or `released` (a held-back answer moved back
    /// into `annotated/`: the check it waited for passed).
    pub decision: String,
    pub task: String,
    /// `FILE#ORDINAL` of the queued sentence.
    pub source: String,
    pub sent_id: String,
    /// From the task's lease to the decision.
    pub ms: u64,
    #[serde(default)]
    pub arcs: Vec<ArcChange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The correction file written, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// For a sentence of the uniform sample answered whole ([`super::sample`]): its confidence
    /// as published and how many of its words were published right.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<SentenceRow>,
    /// With `sample`: the model that published it, as its file's head says (`# model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_by: Option<String>,
}

/// The workbench's files under `annotated/`.
pub struct Answers {
    annotated: PathBuf,
    audit: Mutex<File>,
}

impl Answers {
    /// Opens (creating) `annotated/`, `annotated/rejected/` and the audit log.
    pub fn open(annotated: &Path) -> io::Result<Answers> {
        fs::create_dir_all(annotated.join("rejected"))?;
        fs::create_dir_all(annotated.join("workbench"))?;
        let audit = OpenOptions::new().create(true).append(true).open(audit_path(annotated))?;
        Ok(Answers { annotated: annotated.to_path_buf(), audit: Mutex::new(audit) })
    }

    /// Writes a correction of `sent` (its tags as the annotator left them) durably into
    /// `annotated/`: `arcs` per word (index 0 unused; `None`: unanswered, written `_`),
    /// `whole` when every arc was checked, `tags` the words whose tags were (UPOS and XPOS, or
    /// UPOS alone).
    pub fn write_correction(
        &self,
        sent: &Sentence,
        arcs: &[Option<(u32, String)>],
        whole: bool,
        tags: &CheckedTags,
        meta: &Provenance,
    ) -> io::Result<PathBuf> {
        let text = correction_text(sent, arcs, whole, tags, meta);
        self.publish_new(&self.annotated, &meta.task, text.as_bytes())
    }

    /// Writes a correction held back as a rubber stamp ([`super::review`]) into
    /// `annotated/suspect/`, with `why` beside it: never trained on until a person confirms it
    /// (`# confirmed = yes`) and moves it back into `annotated/`, as the store's own suspects.
    pub fn write_held_back(
        &self,
        sent: &Sentence,
        arcs: &[Option<(u32, String)>],
        whole: bool,
        tags: &CheckedTags,
        meta: &Provenance,
        why: &str,
    ) -> io::Result<PathBuf> {
        let text = correction_text(sent, arcs, whole, tags, meta);
        let note = format!(
            "sent_id {}: held back by the workbench, answered by {} ({}): {why}; add `# confirmed = yes` and move the \
             file back into annotated/ if it was reviewed (an answer waiting for a known-answer check is moved back by \
             the workbench if the check passes)\n",
            meta.sent_id, meta.annotator, meta.source
        );
        self.set_aside("suspect", &meta.task, text.as_bytes(), &note)
    }

    /// Moves a correction [`Self::write_held_back`] set aside into `annotated/`, where the daemon
    /// takes it in (never over a file), and its note goes: the check it waited for passed.
    pub fn release(&self, held: &Path) -> io::Result<PathBuf> {
        let name = held.file_name().ok_or_else(|| io::Error::other(format!("{}: no file name", held.display())))?;
        let path = self.annotated.join(name);
        publish(held, &path, false)?;
        crate::base::io::sync_dir(crate::base::io::parent_dir(held))?;
        let mut error = held.as_os_str().to_os_string();
        error.push(".error");
        let _ = fs::remove_file(Path::new(&error));
        Ok(path)
    }

    /// Writes a sentence flagged bad into `annotated/rejected/`, with its reason beside it.
    pub fn write_bad(&self, sent: &Sentence, reason: &str, meta: &Provenance) -> io::Result<PathBuf> {
        let mut text = Vec::new();
        sent.write_to(&mut text)?;
        let note = format!(
            "sent_id {}: flagged bad in the workbench by {} ({}): {reason}\n",
            meta.sent_id, meta.annotator, meta.source
        );
        self.set_aside("rejected", &meta.task, &text, &note)
    }

    /// `annotated/SUBDIR/wb-TIME-TASK.conllu` (see [`Self::publish_new`]) with `note` beside it
    /// in a `.error` file, where ingest never takes training data from.
    fn set_aside(&self, subdir: &str, task: &str, bytes: &[u8], note: &str) -> io::Result<PathBuf> {
        let dir = self.annotated.join(subdir);
        fs::create_dir_all(&dir)?;
        let path = self.publish_new(&dir, task, bytes)?;
        let mut error = path.clone().into_os_string();
        error.push(".error");
        crate::base::io::write_atomically(Path::new(&error), note.as_bytes())?;
        Ok(path)
    }

    /// `dir/wb-TIME-TASK.conllu`, complete and durable, never over an existing file.
    fn publish_new(&self, dir: &Path, task: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        let name =
            format!("wb-{}-{task}.conllu", crate::model::registry::compact_utc(crate::model::registry::unix_time()));
        let tmp = dir.join(format!(".{name}.tmp"));
        let path = dir.join(&name);
        let result = (|| {
            let mut f = File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            publish(&tmp, &path, false)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result.map(|()| path)
    }

    /// Appends `decision` to the audit log and makes it durable.
    pub fn record(&self, decision: &Decision) -> io::Result<()> {
        let mut line = serde_json::to_string(decision).map_err(io::Error::other)?;
        line.push('\n');
        let mut audit = self.audit.lock().unwrap_or_else(|p| p.into_inner());
        audit.write_all(line.as_bytes())?;
        audit.sync_data()
    }

    /// The audit log's decisions, oldest first (lines that do not parse are skipped: a line
    /// cut by a crash).
    pub fn decisions(&self) -> io::Result<Vec<Decision>> {
        read_decisions(&self.annotated)
    }
}

/// The words (ids) whose tags and lemmas an answer checked.
#[derive(Debug, Clone, Default)]
pub struct CheckedTags {
    /// UPOS and XPOS.
    pub whole: Vec<u32>,
    /// UPOS alone.
    pub upos: Vec<u32>,
    /// LEMMA.
    pub lemmas: Vec<u32>,
}

impl CheckedTags {
    /// How many words had their tags checked.
    pub fn len(&self) -> usize {
        self.whole.len() + self.upos.len()
    }

    /// True if none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Who answered what, as a correction file records it.
#[derive(Debug, Clone)]
pub struct Provenance {
    pub task: String,
    pub sent_id: String,
    pub source: String,
    pub annotator: String,
    /// Set for a sentence of the uniform sample reviewed whole: what it measured, and the
    /// model that published it. The correction then says `# workbench_sample = uniform`
    /// ([`SAMPLE_COMMENT`]).
    pub sample: Option<SentenceRow>,
    pub published_by: Option<String>,
}

fn audit_path(annotated: &Path) -> PathBuf {
    annotated.join("workbench").join("audit.jsonl")
}

fn read_decisions(annotated: &Path) -> io::Result<Vec<Decision>> {
    let file = match File::open(audit_path(annotated)) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for line in io::BufReader::new(file).lines() {
        if let Ok(d) = serde_json::from_str::<Decision>(&line?) {
            out.push(d);
        }
    }
    Ok(out)
}

/// Every checked arc the audit log has an answer for: (pattern key, calibrated probability of
/// being wrong, whether the answer changed it), oldest first, for the queue's error model.
pub fn checked_answers(annotated: &Path) -> io::Result<Vec<(u32, f32, bool)>> {
    let mut out = Vec::new();
    // A held-back answer (a rubber stamp) says nothing of the parser's errors; a check's is
    // about another text (a treebank's).
    for d in read_decisions(annotated)?.into_iter().filter(|d| d.decision != "held" && d.decision != "check") {
        for arc in &d.arcs {
            if let (Some(checked), Some(changed)) = (&arc.checked, arc.changed()) {
                out.push((super::error_model::Pattern::from_name(&checked.pattern).key, checked.p, changed));
            }
        }
    }
    Ok(out)
}

/// The sources never to ask again: answered or flagged bad in the audit log, or named by a
/// correction in `annotated/` that the log may lack.
pub fn done_sources(annotated: &Path) -> io::Result<HashSet<String>> {
    let mut done: HashSet<String> = read_decisions(annotated)?
        .into_iter()
        .filter(|d| d.decision != "skip" && d.decision != "check")
        .map(|d| d.source)
        .collect();
    for dir in [annotated.to_path_buf(), annotated.join("rejected"), annotated.join("suspect")] {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !(name.starts_with("wb-") && name.ends_with(".conllu")) {
                continue;
            }
            let text = fs::read_to_string(entry.path())?;
            let prefix = format!("# {SOURCE_COMMENT} = ");
            done.extend(text.lines().filter_map(|l| l.strip_prefix(&prefix)).map(str::to_string));
        }
    }
    Ok(done)
}

/// The CoNLL-U of a correction: the sentence's comments (but its confidences) and token lines,
/// HEAD and DEPREL as answered (`_` where not), `Conf=` and `LowConf=` gone from answered
/// words, and the workbench's comments.
fn correction_text(
    sent: &Sentence,
    arcs: &[Option<(u32, String)>],
    whole: bool,
    tags: &CheckedTags,
    meta: &Provenance,
) -> String {
    let mut out = String::new();
    let ours = |c: &str| {
        [
            "confidence",
            "tree_prob",
            "reviewed",
            "annotator",
            SOURCE_COMMENT,
            SAMPLE_COMMENT,
            TAGS_CHECKED_KEY,
            UPOS_CHECKED_KEY,
            LEMMAS_CHECKED_KEY,
        ]
        .iter()
        .any(|k| c.strip_prefix("# ").and_then(|r| r.strip_prefix(k)).is_some_and(|r| r.trim_start().starts_with('=')))
    };
    for c in sent.comments.iter().filter(|c| !ours(c)) {
        out.push_str(c);
        out.push('\n');
    }
    if whole {
        out.push_str("# reviewed = all\n");
    }
    if !tags_reviewed(sent) {
        if tags.whole.len() == sent.len() {
            out.push_str(&format!("# {TAGS_KEY} = reviewed\n"));
        } else {
            for (key, ids) in [(TAGS_CHECKED_KEY, &tags.whole), (UPOS_CHECKED_KEY, &tags.upos)] {
                if !ids.is_empty() {
                    let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
                    out.push_str(&format!("# {key} = {}\n", ids.join(" ")));
                }
            }
        }
    }
    if !tags.lemmas.is_empty() {
        let ids: Vec<String> = tags.lemmas.iter().map(u32::to_string).collect();
        out.push_str(&format!("# {LEMMAS_CHECKED_KEY} = {}\n", ids.join(" ")));
    }
    out.push_str(&format!("# annotator = {}\n# {SOURCE_COMMENT} = {}\n", meta.annotator, meta.source));
    if meta.sample.is_some() {
        out.push_str(&format!("# {SAMPLE_COMMENT} = uniform\n"));
    }
    let mut word = 0usize;
    for line in sent.token_lines() {
        if line.kind() != TokenKind::Word {
            out.push_str(line.text());
            out.push('\n');
            continue;
        }
        word += 1;
        let answered = arcs.get(word).and_then(|a| a.as_ref());
        let cols: Vec<String> = Column::ALL
            .iter()
            .map(|&col| match (col, answered) {
                (Column::Head, Some((h, _))) => h.to_string(),
                (Column::Deprel, Some((_, d))) => d.clone(),
                (Column::Head | Column::Deprel, None) => "_".to_string(),
                (Column::Misc, Some(_)) => without_confidence(line.get(Column::Misc)),
                _ => line.get(col).to_string(),
            })
            .collect();
        out.push_str(&cols.join("\t"));
        out.push('\n');
    }
    out.push('\n');
    out
}

/// MISC without the parser's `Conf=` and `LowConf=` entries.
fn without_confidence(misc: &str) -> String {
    let kept: Vec<&str> =
        misc.split('|').filter(|e| !(e.starts_with("Conf=") || e.starts_with("LowConf=") || *e == "_")).collect();
    if kept.is_empty() {
        "_".to_string()
    } else {
        kept.join("|")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_upos_without_xpos_takes_the_taggers_xpos_for_it_and_a_confirmed_one_keeps_its_own() {
        let mut tags = TagSet::default();
        for (u, x) in [("NOUN", "NN"), ("PROPN", "NNP"), ("NOUN", "NNS")] {
            tags.intern(u, x);
        }
        let fix = |upos: &str, xpos: Option<&str>| TagFix {
            upos: Upos::parse(upos).expect("a UPOS"),
            xpos: xpos.map(str::to_string),
        };
        let pair = |u: &str, x: &str| (u.to_string(), x.to_string());
        assert_eq!(fix("PROPN", None).applied("NOUN", "NNS", Some(&tags)), pair("PROPN", "NNP"));
        assert_eq!(fix("NOUN", None).applied("NOUN", "NNS", Some(&tags)), pair("NOUN", "NNS"));
        assert_eq!(fix("VERB", None).applied("NOUN", "NN", Some(&tags)), pair("VERB", "_"), "no VERB in the tagger");
        assert_eq!(fix("PROPN", None).applied("NOUN", "NN", None), pair("PROPN", "_"), "no tagger");
        assert_eq!(fix("PROPN", Some("NNPS")).applied("NOUN", "NN", Some(&tags)), pair("PROPN", "NNPS"));
        assert!(fix("PROPN", Some("NNPS")).whole_tag() && !fix("PROPN", None).whole_tag());
    }
}
