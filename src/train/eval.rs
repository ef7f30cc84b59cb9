//! Attachment scores as the CoNLL 2018 shared task defines them, for gold-tokenized input.
//!
//! UAS is the share of syntactic words (integer IDs; no multiword ranges, no empty nodes) whose
//! HEAD is right; LAS also requires the universal part of DEPREL (before any `:`) to match.
//! Both are also given without punctuation (gold UPOS `PUNCT`), as the seed papers report. The
//! system file must have the same words as the gold file; unlike the official script we do not
//! align different tokenizations, we refuse them with the location of the first difference.
//!
//! When the system file carries confidences (`Conf=` in MISC, `# confidence = …`), the
//! evaluation also measures their calibration: reliability tables and ECE for arcs (is the arc
//! right, head and universal relation?) and sentences (the sentence's LAS against its
//! confidence), and the coverage curve: share of sentences kept and their LAS per threshold.

use std::path::Path;

use serde::Serialize;

use crate::corpus::{self, Column, CorpusError, Format, Reader, Sentence};
use crate::learn::confidence::Reliability;

pub use crate::base::label::universal;

/// Whether an attachment is right unlabeled (HEAD) and labeled (HEAD and universal DEPREL).
#[inline]
pub fn attachment(gold_head: usize, gold_deprel: &str, head: usize, deprel: &str) -> (bool, bool) {
    let uas = gold_head == head;
    (uas, uas && universal(gold_deprel) == universal(deprel))
}

/// Correct-attachment counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub words: u64,
    pub head_correct: u64,
    pub label_correct: u64,
    pub words_no_punct: u64,
    pub head_correct_no_punct: u64,
    pub label_correct_no_punct: u64,
    pub upos_correct: u64,
    pub xpos_correct: u64,
}

/// Percentages derived from [`Counts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Scores {
    pub words: u64,
    pub uas: f64,
    pub las: f64,
    pub words_no_punct: u64,
    pub uas_no_punct: f64,
    pub las_no_punct: f64,
    /// Tagging accuracy (interesting when the system tagged the input).
    pub upos: f64,
    pub xpos: f64,
}

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

impl Counts {
    /// Scores one word: gold head/relation/UPOS against the system's head/relation. Returns
    /// whether the labeled attachment is right.
    #[inline]
    pub fn add(&mut self, gold_head: usize, gold_deprel: &str, gold_upos: &str, head: usize, deprel: &str) -> bool {
        let (uas, las) = attachment(gold_head, gold_deprel, head, deprel);
        self.words += 1;
        self.head_correct += u64::from(uas);
        self.label_correct += u64::from(las);
        if gold_upos != "PUNCT" {
            self.words_no_punct += 1;
            self.head_correct_no_punct += u64::from(uas);
            self.label_correct_no_punct += u64::from(las);
        }
        las
    }

    /// Adds another set of counts.
    pub fn merge(&mut self, o: &Counts) {
        self.words += o.words;
        self.head_correct += o.head_correct;
        self.label_correct += o.label_correct;
        self.words_no_punct += o.words_no_punct;
        self.head_correct_no_punct += o.head_correct_no_punct;
        self.label_correct_no_punct += o.label_correct_no_punct;
        self.upos_correct += o.upos_correct;
        self.xpos_correct += o.xpos_correct;
    }

    /// The percentages.
    pub fn scores(&self) -> Scores {
        Scores {
            words: self.words,
            uas: pct(self.head_correct, self.words),
            las: pct(self.label_correct, self.words),
            words_no_punct: self.words_no_punct,
            uas_no_punct: pct(self.head_correct_no_punct, self.words_no_punct),
            las_no_punct: pct(self.label_correct_no_punct, self.words_no_punct),
            upos: pct(self.upos_correct, self.words),
            xpos: pct(self.xpos_correct, self.words),
        }
    }
}

/// Why two files could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// `line` 0: the file as a whole.
    #[error("{}{}: {what}", path.display(), if *line == 0 { String::new() } else { format!(":{line}") })]
    Mismatch { path: std::path::PathBuf, line: u64, what: String },
}

/// Calibration of the confidences found in a system file.
#[derive(Debug, Clone, Default)]
pub struct Calibration {
    /// Arcs binned by `Conf=`, outcome: labeled attachment right.
    pub arcs: Reliability,
    /// Sentences binned by `# confidence`, outcome: the sentence's LAS (0–1).
    pub sentences: Reliability,
    /// Per sentence with a confidence: (confidence, labeled-correct words, words).
    pub per_sentence: Vec<(f64, u64, u64)>,
}

/// One point of the coverage curve.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Coverage {
    pub threshold: f64,
    /// Share (percent) of sentences at or above the threshold.
    pub kept: f64,
    /// LAS of the kept sentences.
    pub las: f64,
}

/// LAS of the most confident sentences that hold a share of the words, beside the best any
/// ranking could do with those words.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Kept {
    /// The share (percent) of words asked for.
    pub words: f64,
    /// LAS of the words of the sentences kept by confidence.
    pub las: f64,
    /// LAS of the words kept by the best possible ranking (by each sentence's true LAS).
    pub best: f64,
}

impl Calibration {
    /// Adds a sentence of `words` words, `right` of them right, with confidence `conf`.
    pub fn add_sentence(&mut self, conf: f64, right: u64, words: u64) {
        self.sentences.add(conf, right as f64 / words.max(1) as f64);
        self.per_sentence.push((conf, right, words));
    }

    /// LAS of the sentences kept in the order of `key` (highest first), the first of them until
    /// they hold `share` (0–1) of the words: the sentence that crosses the share is kept.
    fn las_of_words_kept(&self, share: f64, key: impl Fn(&(f64, u64, u64)) -> f64) -> f64 {
        let mut sorted = self.per_sentence.clone();
        // Ties in the same order whatever the key: by position.
        sorted.sort_by(|a, b| key(b).total_cmp(&key(a)));
        let all: u64 = sorted.iter().map(|s| s.2).sum();
        let (mut right, mut words) = (0, 0);
        for s in &sorted {
            if words as f64 >= share * all as f64 {
                break;
            }
            right += s.1;
            words += s.2;
        }
        pct(right, words)
    }

    /// The coverage–accuracy figures: for each share (0–1) of the words, the LAS of the words
    /// of the most confident sentences that hold it, and of the sentences of the best LAS.
    pub fn words_kept(&self, shares: &[f64]) -> Vec<Kept> {
        shares
            .iter()
            .map(|&share| Kept {
                words: 100.0 * share,
                las: self.las_of_words_kept(share, |s| s.0),
                best: self.las_of_words_kept(share, |s| s.1 as f64 / s.2.max(1) as f64),
            })
            .collect()
    }
    /// LAS of the `share` (0–1) most confident sentences, and the share (percent) of words
    /// they hold.
    pub fn top_sentences(&self, share: f64) -> (f64, f64) {
        let mut sorted = self.per_sentence.clone();
        sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
        let k = (share * sorted.len() as f64).round() as usize;
        let (right, words) = sorted[..k.min(sorted.len())].iter().fold((0, 0), |(r, w), s| (r + s.1, w + s.2));
        let all: u64 = sorted.iter().map(|s| s.2).sum();
        (pct(right, words), pct(words, all))
    }

    /// Per confidence bin (tenths), the share (percent) of its sentences whose LAS falls in the
    /// same bin: the reading of sentence calibration, beside the mean LAS per bin.
    pub fn sentence_bin_agreement(&self) -> [f64; 10] {
        let bin = |x: f64| ((x * 10.0).floor() as usize).min(9);
        let (mut agree, mut total) = ([0u64; 10], [0u64; 10]);
        for &(conf, right, words) in &self.per_sentence {
            let b = bin(conf);
            total[b] += 1;
            agree[b] += u64::from(bin(right as f64 / words.max(1) as f64) == b);
        }
        std::array::from_fn(|b| pct(agree[b], total[b]))
    }

    /// Sentences kept and their LAS for each threshold.
    pub fn coverage(&self, thresholds: &[f64]) -> Vec<Coverage> {
        thresholds
            .iter()
            .map(|&t| {
                let kept: Vec<_> = self.per_sentence.iter().filter(|s| s.0 >= t).collect();
                let (right, words) = kept.iter().fold((0, 0), |(r, w), s| (r + s.1, w + s.2));
                Coverage {
                    threshold: t,
                    kept: pct(kept.len() as u64, self.per_sentence.len() as u64),
                    las: pct(right, words),
                }
            })
            .collect()
    }
}

/// The value of `Key=` in a MISC column.
pub(crate) fn misc_value<'a>(misc: &'a str, key: &str) -> Option<&'a str> {
    misc.split('|').find_map(|e| e.split_once('=').filter(|(k, _)| *k == key).map(|(_, v)| v))
}

/// Scores one system sentence against its gold sentence.
pub fn compare(
    gold: &Sentence,
    gold_path: &Path,
    system: &Sentence,
    system_path: &Path,
    counts: &mut Counts,
) -> Result<(), EvalError> {
    compare_calibrated(gold, gold_path, system, system_path, counts, &mut Calibration::default())
}

/// [`compare`], also collecting the system's confidences into `calibration`.
pub fn compare_calibrated(
    gold: &Sentence,
    gold_path: &Path,
    system: &Sentence,
    system_path: &Path,
    counts: &mut Counts,
    calibration: &mut Calibration,
) -> Result<(), EvalError> {
    let mismatch = |line, what: String| EvalError::Mismatch { path: system_path.to_path_buf(), line, what };
    if gold.len() != system.len() {
        return Err(mismatch(
            system.first_line,
            format!(
                "sentence has {} words, the gold sentence at {}:{} has {}",
                system.len(),
                gold_path.display(),
                gold.first_line,
                gold.len()
            ),
        ));
    }
    let gold_heads = corpus::tree::gold_heads(gold, gold_path)?;
    let heads = match system.heads() {
        Ok(Some(h)) => h,
        Ok(None) => return Err(mismatch(system.first_line, "sentence is not parsed (HEAD `_`)".into())),
        Err((line, kind)) => return Err(CorpusError { path: system_path.to_path_buf(), line, kind }.into()),
    };
    let mut sentence_right = 0u64;
    for (i, (g, s)) in gold.words().zip(system.words()).enumerate() {
        if g.get(Column::Form) != s.get(Column::Form) {
            return Err(mismatch(
                system.line_of_word(i + 1),
                format!("form {:?} differs from gold {:?}", s.get(Column::Form), g.get(Column::Form)),
            ));
        }
        let right =
            counts.add(gold_heads[i], g.get(Column::Deprel), g.get(Column::Upos), heads[i], s.get(Column::Deprel));
        counts.upos_correct += u64::from(g.get(Column::Upos) == s.get(Column::Upos));
        counts.xpos_correct += u64::from(g.get(Column::Xpos) == s.get(Column::Xpos));
        sentence_right += u64::from(right);
        if let Some(conf) = misc_value(s.get(Column::Misc), "Conf").and_then(|v| v.parse::<f64>().ok()) {
            calibration.arcs.add(conf, f64::from(u8::from(right)));
        }
    }
    if let Some(conf) = sentence_confidence(system) {
        calibration.add_sentence(conf, sentence_right, system.len() as u64);
    }
    Ok(())
}

/// A sentence's `# confidence`, if it has one.
pub(crate) fn sentence_confidence(sent: &Sentence) -> Option<f64> {
    sent.comments.iter().find_map(|c| c.strip_prefix("# confidence = ")?.trim().parse::<f64>().ok())
}

/// Scores a system file against a gold file (formats guessed from the names).
pub fn evaluate_files(gold_path: &Path, system_path: &Path) -> Result<Counts, EvalError> {
    evaluate_files_calibrated(gold_path, system_path).map(|(c, _)| c)
}

/// [`evaluate_files`], with the calibration of the system's confidences.
pub fn evaluate_files_calibrated(gold_path: &Path, system_path: &Path) -> Result<(Counts, Calibration), EvalError> {
    let mut gold = Reader::open(gold_path, Format::from_path(gold_path))?;
    let mut system = Reader::open(system_path, Format::from_path(system_path))?;
    let mut counts = Counts::default();
    let mut calibration = Calibration::default();
    loop {
        match (gold.next(), system.next()) {
            (None, None) => return Ok((counts, calibration)),
            (Some(g), Some(s)) => compare_calibrated(&g?, gold_path, &s?, system_path, &mut counts, &mut calibration)?,
            (Some(g), None) => {
                let g = g?;
                return Err(EvalError::Mismatch {
                    path: system_path.to_path_buf(),
                    line: 0,
                    what: format!("ends before the gold file's sentence at {}:{}", gold_path.display(), g.first_line),
                });
            }
            (None, Some(s)) => {
                let s = s?;
                return Err(EvalError::Mismatch {
                    path: system_path.to_path_buf(),
                    line: s.first_line,
                    what: "sentence beyond the end of the gold file".into(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_other_sentences_are_refused_with_where() {
        let dir = tempfile::tempdir().unwrap();
        let one = "1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n\n";
        let two = "1\ta\t_\tX\t_\t_\t2\tdep\t_\t_\n2\tb\t_\tX\t_\t_\t0\troot\t_\t_\n\n";
        let file = |name: &str, text: String| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let (gold, short) = (file("gold.conllu", format!("{one}{two}")), file("short.conllu", one.to_string()));
        let (long, other) =
            (file("long.conllu", format!("{one}{two}{one}")), file("other.conllu", format!("{one}{one}")));
        let error = |system: &Path| evaluate_files(&gold, system).unwrap_err().to_string();
        let at = |path: &Path| path.display().to_string();
        assert_eq!(error(&short), format!("{}: ends before the gold file's sentence at {}:3", at(&short), at(&gold)));
        assert_eq!(error(&long), format!("{}:6: sentence beyond the end of the gold file", at(&long)));
        assert_eq!(
            error(&other),
            format!("{}:3: sentence has 1 words, the gold sentence at {}:3 has 2", at(&other), at(&gold))
        );
    }

    #[test]
    fn subtypes_are_ignored_and_punct_excluded() {
        let mut c = Counts::default();
        c.add(2, "nmod:poss", "NOUN", 2, "nmod");
        c.add(0, "root", "VERB", 0, "obj");
        c.add(1, "punct", "PUNCT", 3, "punct");
        let s = c.scores();
        assert_eq!(c.words, 3);
        assert!((s.uas - 200.0 / 3.0).abs() < 1e-9);
        assert!((s.las - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(s.words_no_punct, 2);
        assert!((s.uas_no_punct - 100.0).abs() < 1e-9);
        assert!((s.las_no_punct - 50.0).abs() < 1e-9);
    }
}
