//! Attachment scores as the CoNLL 2018 shared task defines them, for gold-tokenized input.
//!
//! UAS is the share of syntactic words (integer IDs; no multiword ranges, no empty nodes) whose
//! HEAD is right; LAS also requires the universal part of DEPREL (before any `:`) to match.
//! Both are also given without punctuation (gold UPOS `PUNCT`), as the seed papers report. The
//! system file must have the same words as the gold file; unlike the official script we do not
//! align different tokenizations, we refuse them with the location of the first difference.

use std::path::Path;

use serde::Serialize;

use crate::corpus::{self, Column, CorpusError, Format, Reader, Sentence};

/// The universal part of a dependency relation: `nmod:poss` → `nmod`.
pub fn universal(deprel: &str) -> &str {
    deprel.split_once(':').map_or(deprel, |(u, _)| u)
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
    /// Scores one word: gold head/relation/UPOS against the system's head/relation.
    #[inline]
    pub fn add(&mut self, gold_head: usize, gold_deprel: &str, gold_upos: &str, head: usize, deprel: &str) {
        let uas = gold_head == head;
        let las = uas && universal(gold_deprel) == universal(deprel);
        self.words += 1;
        self.head_correct += u64::from(uas);
        self.label_correct += u64::from(las);
        if gold_upos != "PUNCT" {
            self.words_no_punct += 1;
            self.head_correct_no_punct += u64::from(uas);
            self.label_correct_no_punct += u64::from(las);
        }
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
    #[error("{}:{line}: {what}", path.display())]
    Mismatch { path: std::path::PathBuf, line: u64, what: String },
}

/// Scores one system sentence against its gold sentence.
pub fn compare(
    gold: &Sentence,
    gold_path: &Path,
    system: &Sentence,
    system_path: &Path,
    counts: &mut Counts,
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
    for (i, (g, s)) in gold.words().zip(system.words()).enumerate() {
        if g.get(Column::Form) != s.get(Column::Form) {
            return Err(mismatch(
                system.line_of_word(i + 1),
                format!("form {:?} differs from gold {:?}", s.get(Column::Form), g.get(Column::Form)),
            ));
        }
        counts.add(gold_heads[i], g.get(Column::Deprel), g.get(Column::Upos), heads[i], s.get(Column::Deprel));
        counts.upos_correct += u64::from(g.get(Column::Upos) == s.get(Column::Upos));
        counts.xpos_correct += u64::from(g.get(Column::Xpos) == s.get(Column::Xpos));
    }
    Ok(())
}

/// Scores a system file against a gold file (formats guessed from the names).
pub fn evaluate_files(gold_path: &Path, system_path: &Path) -> Result<Counts, EvalError> {
    let mut gold = Reader::open(gold_path, Format::from_path(gold_path))?;
    let mut system = Reader::open(system_path, Format::from_path(system_path))?;
    let mut counts = Counts::default();
    loop {
        match (gold.next(), system.next()) {
            (None, None) => return Ok(counts),
            (Some(g), Some(s)) => compare(&g?, gold_path, &s?, system_path, &mut counts)?,
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
