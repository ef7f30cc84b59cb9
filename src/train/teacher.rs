//! Uptraining (Petrov, Chang, Ringgaard & Alshawi 2010): an accurate model, the teacher,
//! parses unlabeled text of the user's domain, and its parses are training data for a fast
//! model, which so learns the domain at its own speed. Petrov et al. train on every teacher
//! parse (their §3); we leave out those the teacher is least sure of, by its calibrated
//! `# confidence` (the share of the sentence's arcs expected to be right).
//!
//! Measured (2026-12-04, `scripts/uptraining-eval.sh`, en_ewt's linear model uptrained by
//! the neural one; LAS from raw text, one seed): keeping only the parses of confidence 0.9 or
//! more loses, as it keeps the short, easy sentences (12% of en_atis train's, 37% of en_ewt
//! dev's): en_atis dev 68.82 against 70.30 with every parse, en_ewt dev uptrained on its own
//! text 79.55 against 80.82. At 0.5 (96% and 98% of the sentences kept) 70.48 and 80.71, level
//! with every parse (a seed of the same recipe moves en_atis dev by 0.7): the default,
//! [`DEFAULT_MIN_CONFIDENCE`], is 0.5, which leaves out only the parses the teacher itself
//! expects to be mostly wrong.
//!
//! This module owns parsing the unlabeled text with the teacher (the pipeline of `parse`, on
//! every core) and choosing the parses that are trained on; what they are trained with, and
//! how often, is the caller's.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::corpus::{Format, Reader, Sentence};
use crate::model::file::ModelFile;
use crate::parse::pipeline::{parse_files_split, Outputs, PipelineError, PipelineOptions};
use crate::parse::raw::RawSentences;

/// The `# confidence` a teacher's parse must reach to be trained on by default.
pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.5;

/// How the teacher parses the unlabeled text and which parses are kept.
#[derive(Debug, Clone, Copy)]
pub struct TeacherOptions {
    /// A parse is kept if its `# confidence` is at least this (0 keeps every parse).
    pub min_confidence: f64,
    /// Parsing threads.
    pub threads: usize,
    /// Where the sentences of raw text end.
    pub raw_sentences: RawSentences,
    /// Kept parses stop at this many words: no sentence past it is kept, and no file is parsed
    /// once it is reached (`None`: no bound).
    pub max_words: Option<usize>,
}

/// The teacher's kept parses of the unlabeled files, each with the file it parsed, and what was
/// left out.
#[derive(Debug, Default)]
pub struct TeacherParses {
    pub sentences: Vec<(Sentence, PathBuf)>,
    /// Sentences and words the teacher parsed.
    pub parsed: usize,
    pub parsed_words: usize,
    /// Words of the kept sentences.
    pub kept_words: usize,
    /// Sentences that could not be read, left out (a bad line does not stop uptraining).
    pub malformed: usize,
    /// [`TeacherOptions::max_words`], where it stopped the keeping.
    pub stopped_at: Option<usize>,
}

/// Why the teacher could not parse an unlabeled file.
#[derive(Debug, thiserror::Error)]
#[error("{}: parsing it with the teacher", path.display())]
pub struct TeacherError {
    pub path: PathBuf,
    #[source]
    pub source: PipelineError,
}

/// Parses each of `unlabeled` (raw text, tokenized text, CoNLL-U or CoNLL-X, as its name says;
/// a CoNLL-U file's own trees are ignored) with `teacher`, and keeps the parses whose confidence
/// reaches `opts.min_confidence`, in input order.
pub fn teacher_parses(
    teacher: &Arc<ModelFile>,
    unlabeled: &[PathBuf],
    opts: TeacherOptions,
) -> Result<TeacherParses, TeacherError> {
    let mut out = TeacherParses::default();
    let pipeline = PipelineOptions {
        threads: opts.threads,
        confidence: true,
        min_confidence: Some(opts.min_confidence),
        conllx_as_conllu: true,
        keep_malformed: true,
        raw_sentences: opts.raw_sentences,
        ..PipelineOptions::default()
    };
    for path in unlabeled {
        if out.stopped_at.is_some() {
            break;
        }
        let failed = |source| TeacherError { path: path.clone(), source };
        let mut kept = Vec::new();
        let outputs = Outputs { accepted: &mut kept, rejected: Some(&mut io::sink()), cancel: None, confidences: None };
        let stats = parse_files_split(teacher, std::slice::from_ref(path), outputs, pipeline).map_err(failed)?;
        out.parsed += stats.sentences - stats.malformed;
        out.parsed_words += stats.words;
        out.malformed += stats.malformed;
        read_kept(&kept, path, opts.max_words, &mut out).map_err(|e| failed(e.into()))?;
    }
    Ok(out)
}

/// Reads the teacher's kept CoNLL-U output for `path` into `out`, up to `max_words` kept words.
fn read_kept(
    kept: &[u8],
    path: &Path,
    max_words: Option<usize>,
    out: &mut TeacherParses,
) -> Result<(), crate::corpus::CorpusError> {
    for sent in Reader::new(kept, path, Format::Conllu) {
        let sent = sent?;
        let words = sent.words().len();
        if let Some(max) = max_words.filter(|&max| out.kept_words + words > max) {
            out.stopped_at = Some(max);
            return Ok(());
        }
        out.kept_words += words;
        out.sentences.push((sent, path.to_path_buf()));
    }
    Ok(())
}

impl TeacherParses {
    /// One line for the user: how much was parsed and kept.
    pub fn describe(&self, min_confidence: f64) -> String {
        let share = |part: usize, whole: usize| if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 };
        let malformed = match self.malformed {
            0 => String::new(),
            n => format!("; {n} unreadable sentences left out"),
        };
        let bounded = match self.stopped_at {
            Some(max) => format!("; stopped at the bound of {max} words, the rest left out"),
            None => String::new(),
        };
        format!(
            "{} of {} sentences ({:.1}%), {} of {} words ({:.1}%) at confidence ≥ {min_confidence}{malformed}{bounded}",
            self.sentences.len(),
            self.parsed,
            share(self.sentences.len(), self.parsed),
            self.kept_words,
            self.parsed_words,
            share(self.kept_words, self.parsed_words),
        )
    }
}
