//! Scores across tokenizations, as the CoNLL 2018 shared-task evaluator does: Tokens,
//! Sentences and Words F1, and UPOS, UAS and LAS as F1 over aligned words. This module owns
//! that alignment; scores of files with the gold's own words are [`super::eval`]'s, and this
//! module must not change a file or judge confidences.
//!
//! The algorithm is a port of `evaluate()` in the official script, `conll18_ud_eval.py`
//! version 1.2 (Straka and Popel, 2018; kept at `../shared/tools/conll18_ud_eval.py`), step
//! for step, so that its figures are the script's:
//!
//! - Both files become one character sequence: the FORMs of the tokens (multiword-token
//!   lines and words outside them; empty nodes skipped) with every Unicode space separator
//!   (category Zs) removed. The two sequences must be equal; tokens and sentences are spans in
//!   it, and are right when a system span has a gold span's start and end (`spans_score`).
//! - Words outside multiword tokens are aligned when their spans are equal. Around multiword
//!   tokens the script finds the smallest "multiword span" that no multiword token of either
//!   side sticks out of (`find_multiword_span`), and aligns the words inside by the longest
//!   common subsequence of their lowercased FORMs (`compute_lcs`, then its walk in
//!   `align_words`). Words of multiword tokens keep their FORM as written (the script removes
//!   spaces from token lines only), which the LCS compares.
//! - Words F1 counts aligned words; UPOS, UAS and LAS count aligned words whose UPOS, head
//!   (the system head aligned to the gold head, or both the root) and head with universal
//!   DEPREL (before any `:`) are right, over the gold and system word counts
//!   (`alignment_score`). On files with the same words this is the accuracy of
//!   [`super::eval`].
//!
//! Unlike the script, this module does not refuse trees with cycles or several roots (they
//! score as they are); HEAD `_` is refused, as there.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::eval::{misc_value, sentence_confidence, universal, Calibration, EvalError};
use crate::corpus::{is_space_separator, Column, CorpusError, Format, Reader, Sentence, TokenKind};

/// A span of the character sequence, `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
}

/// One syntactic word of a [`Document`].
#[derive(Debug, Clone)]
struct Word {
    /// The word's span, or its multiword token's when `multiword`.
    span: Span,
    multiword: bool,
    /// Lowercased FORM, as the LCS compares it.
    form: String,
    upos: String,
    /// Universal part of DEPREL.
    deprel: String,
    /// Index of the head word in the document, `None` for the root.
    parent: Option<usize>,
    /// Its arc confidence (`Conf=` in MISC), if it has one.
    confidence: Option<f64>,
    /// Index of its sentence in the document.
    sentence: usize,
}

/// A CoNLL-U file as the evaluator sees it: characters, tokens, words and sentences.
#[derive(Debug, Clone)]
pub struct Document {
    path: PathBuf,
    characters: Vec<char>,
    tokens: Vec<Span>,
    words: Vec<Word>,
    sentences: Vec<Span>,
    /// Each sentence's `# confidence`, if it has one.
    sentence_confidence: Vec<Option<f64>>,
}

/// Precision, recall and F1 (percent) of one metric, with the counts they come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Prf {
    /// Right system units (aligned words, for the word metrics).
    pub correct: u64,
    /// Gold units.
    pub gold: u64,
    /// System units.
    pub system: u64,
    /// `correct / system`.
    pub precision: f64,
    /// `correct / gold`.
    pub recall: f64,
    /// `2 correct / (gold + system)`.
    pub f1: f64,
}

impl Prf {
    /// The script's `Score`: zero where a denominator is.
    fn new(gold: usize, system: usize, correct: usize) -> Prf {
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
        Prf {
            correct: correct as u64,
            gold: gold as u64,
            system: system as u64,
            precision: ratio(correct, system),
            recall: ratio(correct, gold),
            f1: ratio(2 * correct, gold + system),
        }
    }
}

/// The shared task's figures of a system file against a gold file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Aligned {
    /// Tokens with a gold token's span.
    pub tokens: Prf,
    /// Sentences with a gold sentence's span.
    pub sentences: Prf,
    /// Aligned words.
    pub words: Prf,
    /// Aligned words with the gold UPOS.
    pub upos: Prf,
    /// Aligned words with the gold head.
    pub uas: Prf,
    /// Aligned words with the gold head and universal relation.
    pub las: Prf,
}

/// The end of a multiword-token range ID `n-m`.
fn range_end(id: &str) -> Option<usize> {
    id.split_once('-')?.1.parse().ok()
}

impl Document {
    /// Reads a CoNLL-U file (format guessed from the name, `.zst` decompressed). Its HEADs
    /// must be numbers.
    pub fn read(path: &Path) -> Result<Document, EvalError> {
        Document::from_sentences(Reader::open(path, Format::from_path(path))?, path)
    }

    /// A document of `sentences` (as read, or parsed in memory), naming `path` in errors.
    pub fn from_sentences(
        sentences: impl IntoIterator<Item = Result<Sentence, CorpusError>>,
        path: &Path,
    ) -> Result<Document, EvalError> {
        let mut doc = Document {
            path: path.to_path_buf(),
            characters: Vec::new(),
            tokens: Vec::new(),
            words: Vec::new(),
            sentences: Vec::new(),
            sentence_confidence: Vec::new(),
        };
        for sentence in sentences {
            let sentence = sentence?;
            let first_word = doc.words.len();
            let start = doc.characters.len();
            // The multiword token being read: its span and its last word's ID.
            let mut multiword: Option<(Span, usize)> = None;
            let mut word_id = 0;
            let first_token_line = sentence.first_line + sentence.comments.len() as u64;
            for (i, line) in sentence.token_lines().iter().enumerate() {
                let at = first_token_line + i as u64;
                let bad = |what: String| EvalError::Mismatch { path: path.to_path_buf(), line: at, what };
                let token = |doc: &mut Document| {
                    let begin = doc.characters.len();
                    doc.characters.extend(line.get(Column::Form).chars().filter(|&c| !is_space_separator(c)));
                    let span = Span { start: begin, end: doc.characters.len() };
                    doc.tokens.push(span);
                    span
                };
                match line.kind() {
                    TokenKind::Empty => continue,
                    TokenKind::Range => {
                        let end = range_end(line.get(Column::Id))
                            .ok_or_else(|| bad(format!("cannot read the range {:?}", line.get(Column::Id))))?;
                        multiword = Some((token(&mut doc), end));
                    }
                    TokenKind::Word => {
                        word_id += 1;
                        let inside = multiword.filter(|&(_, end)| word_id <= end).map(|(span, _)| span);
                        let form = line.get(Column::Form);
                        let (span, form) = match inside {
                            Some(span) => (span, form.to_lowercase()),
                            None => {
                                multiword = None;
                                (
                                    token(&mut doc),
                                    form.chars().filter(|&c| !is_space_separator(c)).collect::<String>().to_lowercase(),
                                )
                            }
                        };
                        let parent = match crate::corpus::parse_head(line.get(Column::Head), sentence.len()) {
                            Ok(Some(0)) => None,
                            Ok(Some(h)) => Some(first_word + h - 1),
                            Ok(None) => return Err(bad("sentence is not parsed (HEAD `_`)".into())),
                            Err(kind) => return Err(CorpusError { path: path.to_path_buf(), line: at, kind }.into()),
                        };
                        doc.words.push(Word {
                            span,
                            multiword: inside.is_some(),
                            form,
                            upos: line.get(Column::Upos).to_string(),
                            deprel: universal(line.get(Column::Deprel)).to_string(),
                            parent,
                            confidence: misc_value(line.get(Column::Misc), "Conf").and_then(|v| v.parse().ok()),
                            sentence: doc.sentences.len(),
                        });
                    }
                }
            }
            doc.sentences.push(Span { start, end: doc.characters.len() });
            doc.sentence_confidence.push(sentence_confidence(&sentence));
        }
        Ok(doc)
    }
}

/// The script's `spans_score`: spans right when a system span starts and ends as a gold one.
fn spans_score(gold: &[Span], system: &[Span]) -> Prf {
    let (mut correct, mut gi, mut si) = (0, 0, 0);
    while gi < gold.len() && si < system.len() {
        if system[si].start < gold[gi].start {
            si += 1;
        } else if gold[gi].start < system[si].start {
            gi += 1;
        } else {
            correct += usize::from(gold[gi].end == system[si].end);
            si += 1;
            gi += 1;
        }
    }
    Prf::new(gold.len(), system.len(), correct)
}

/// Whether word `i` lies beyond a multiword span ending at `end` (`beyond_end`).
fn beyond_end(words: &[Word], i: usize, end: usize) -> bool {
    match words.get(i) {
        None => true,
        Some(w) if w.multiword => w.span.start >= end,
        Some(w) => w.span.end > end,
    }
}

/// The span end grown to cover `word` if it is in a multiword token (`extend_end`).
fn extend_end(word: &Word, end: usize) -> usize {
    if word.multiword && word.span.end > end {
        word.span.end
    } else {
        end
    }
}

/// The smallest multiword span starting at gold word `gi` or system word `si`, one of which is
/// in a multiword token: its first gold and system words, and the words after it
/// (`find_multiword_span`).
fn find_multiword_span(gold: &[Word], system: &[Word], mut gi: usize, mut si: usize) -> (usize, usize, usize, usize) {
    let mut end;
    if gold[gi].multiword {
        end = gold[gi].span.end;
        if !system[si].multiword && system[si].span.start < gold[gi].span.start {
            si += 1;
        }
    } else {
        end = system[si].span.end;
        if !gold[gi].multiword && gold[gi].span.start < system[si].span.start {
            gi += 1;
        }
    }
    let (gs, ss) = (gi, si);
    while !beyond_end(gold, gi, end) || !beyond_end(system, si, end) {
        if gi < gold.len() && (si >= system.len() || gold[gi].span.start <= system[si].span.start) {
            end = extend_end(&gold[gi], end);
            gi += 1;
        } else {
            end = extend_end(&system[si], end);
            si += 1;
        }
    }
    (gs, ss, gi, si)
}

/// The words aligned: `pairs` (gold, system) in order, and each system word's gold word.
struct Alignment {
    pairs: Vec<(usize, usize)>,
    gold_of_system: Vec<Option<usize>>,
}

impl Alignment {
    fn push(&mut self, g: usize, s: usize) {
        self.pairs.push((g, s));
        self.gold_of_system[s] = Some(g);
    }
}

/// Aligns the words inside one multiword span by the LCS of their forms (`compute_lcs` and
/// the walk of `align_words` over it).
fn align_lcs(gold: &[Word], system: &[Word], (gs, ss, gi, si): (usize, usize, usize, usize), out: &mut Alignment) {
    let (rows, cols) = (gi - gs, si - ss);
    let same = |g: usize, s: usize| gold[gs + g].form == system[ss + s].form;
    let mut lcs = vec![0usize; rows * cols];
    let at = |lcs: &[usize], g: usize, s: usize| if g < rows && s < cols { lcs[g * cols + s] } else { 0 };
    for g in (0..rows).rev() {
        for s in (0..cols).rev() {
            let mut v = if same(g, s) { 1 + at(&lcs, g + 1, s + 1) } else { 0 };
            v = v.max(at(&lcs, g + 1, s)).max(at(&lcs, g, s + 1));
            lcs[g * cols + s] = v;
        }
    }
    let (mut g, mut s) = (0, 0);
    while g < rows && s < cols {
        if same(g, s) {
            out.push(gs + g, ss + s);
            g += 1;
            s += 1;
        } else if at(&lcs, g, s) == at(&lcs, g + 1, s) {
            g += 1;
        } else {
            s += 1;
        }
    }
}

/// The script's `align_words`.
fn align_words(gold: &[Word], system: &[Word]) -> Alignment {
    let mut out = Alignment { pairs: Vec::new(), gold_of_system: vec![None; system.len()] };
    let (mut gi, mut si) = (0, 0);
    while gi < gold.len() && si < system.len() {
        if gold[gi].multiword || system[si].multiword {
            let span = find_multiword_span(gold, system, gi, si);
            let (gs, ss) = (span.0, span.1);
            (gi, si) = (span.2, span.3);
            if si > ss && gi > gs {
                align_lcs(gold, system, span, &mut out);
            }
        } else if gold[gi].span == system[si].span {
            out.push(gi, si);
            gi += 1;
            si += 1;
        } else if gold[gi].span.start <= system[si].span.start {
            gi += 1;
        } else {
            si += 1;
        }
    }
    out
}

/// The character sequences of `gold` and `system` are the same, or the error shows the first
/// 20 characters from where they part, as the script's does.
fn same_text(gold: &Document, system: &Document) -> Result<(), EvalError> {
    if gold.characters == system.characters {
        return Ok(());
    }
    let index = gold.characters.iter().zip(&system.characters).take_while(|(a, b)| a == b).count();
    let from = |c: &[char]| c[index.min(c.len())..(index + 20).min(c.len())].iter().collect::<String>();
    Err(EvalError::Mismatch {
        path: system.path.clone(),
        line: 0,
        what: format!(
            "its tokens do not spell the text of {} (spaces aside): from character {index}, gold {:?}, system {:?}",
            gold.path.display(),
            from(&gold.characters),
            from(&system.characters)
        ),
    })
}

impl Alignment {
    /// The words of `system` aligned to `gold`'s (the script's `align_words`), once their
    /// texts are found the same ([`same_text`]).
    fn of(gold: &Document, system: &Document) -> Result<Alignment, EvalError> {
        same_text(gold, system)?;
        Ok(align_words(&gold.words, &system.words))
    }

    /// The system head, mapped to the gold word it is aligned with, is the gold head (or both
    /// are the root); an unaligned system head is never right.
    fn head(&self, gw: &Word, sw: &Word) -> bool {
        match (gw.parent, sw.parent) {
            (None, None) => true,
            (Some(gp), Some(sp)) => self.gold_of_system[sp] == Some(gp),
            _ => false,
        }
    }

    /// Whether system word `s` counts for LAS: aligned, with the gold head and universal
    /// relation.
    fn labeled(&self, gold: &Document, system: &Document, s: usize) -> bool {
        let sw = &system.words[s];
        self.gold_of_system[s].is_some_and(|g| {
            let gw = &gold.words[g];
            self.head(gw, sw) && gw.deprel == sw.deprel
        })
    }
}

/// Evaluates `system` against `gold` as the script's `evaluate()` does (the metrics above).
/// Their character sequences must be equal ([`same_text`]).
pub fn evaluate(gold: &Document, system: &Document) -> Result<Aligned, EvalError> {
    let a = Alignment::of(gold, system)?;
    let (g, s) = (gold.words.len(), system.words.len());
    let count = |right: &dyn Fn(&Word, &Word) -> bool| {
        a.pairs.iter().filter(|&&(gi, si)| right(&gold.words[gi], &system.words[si])).count()
    };
    Ok(Aligned {
        tokens: spans_score(&gold.tokens, &system.tokens),
        sentences: spans_score(&gold.sentences, &system.sentences),
        words: Prf::new(g, s, a.pairs.len()),
        upos: Prf::new(g, s, count(&|gw, sw| gw.upos == sw.upos)),
        uas: Prf::new(g, s, count(&|gw, sw| a.head(gw, sw))),
        las: Prf::new(g, s, count(&|gw, sw| a.head(gw, sw) && gw.deprel == sw.deprel)),
    })
}

/// The calibration of `system`'s confidences against `gold` across tokenizations: each
/// system word with a `Conf=` is right when it counts for LAS as [`evaluate`] counts it
/// (aligned, its head aligned to the gold head, the universal relation gold's), and each
/// system sentence with a `# confidence` scores its right words over its own words. A word
/// the tokenizer made up, or a sentence cut elsewhere than gold, thus counts against the
/// confidence it was given.
pub fn calibration(gold: &Document, system: &Document) -> Result<Calibration, EvalError> {
    let alignment = Alignment::of(gold, system)?;
    let mut cal = Calibration::default();
    let mut per_sentence = vec![(0u64, 0u64); system.sentences.len()];
    for (s, word) in system.words.iter().enumerate() {
        let right = alignment.labeled(gold, system, s);
        if let Some(c) = word.confidence {
            cal.arcs.add(c, f64::from(u8::from(right)));
        }
        let counts = &mut per_sentence[word.sentence];
        counts.0 += u64::from(right);
        counts.1 += 1;
    }
    for (&confidence, &(right, words)) in system.sentence_confidence.iter().zip(&per_sentence) {
        if let (Some(conf), true) = (confidence, words > 0) {
            cal.add_sentence(conf, right, words);
        }
    }
    Ok(cal)
}

/// Whether each word of `system` counts for LAS against `gold` ([`calibration`]'s outcome), in
/// document order.
pub fn labeled_words(gold: &Document, system: &Document) -> Result<Vec<bool>, EvalError> {
    let alignment = Alignment::of(gold, system)?;
    Ok((0..system.words.len()).map(|s| alignment.labeled(gold, system, s)).collect())
}

/// Reads both files and evaluates them ([`evaluate`]).
pub fn evaluate_files(gold: &Path, system: &Path) -> Result<Aligned, EvalError> {
    evaluate(&Document::read(gold)?, &Document::read(system)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document from CoNLL-U rows whose columns are separated by `|` (forms may hold spaces).
    fn doc(name: &str, rows: &[&str]) -> Document {
        let text: String =
            rows.iter().map(|r| if r.is_empty() { "\n".to_string() } else { r.replace('|', "\t") + "\n" }).collect();
        let text = text + "\n";
        Document::from_sentences(Reader::new(text.as_bytes(), Path::new(name), Format::Conllu), Path::new(name))
            .unwrap()
    }

    /// (correct, gold, system) of a metric, as `conll18_ud_eval.py -c` prints them.
    fn counts(p: Prf) -> (u64, u64, u64) {
        (p.correct, p.gold, p.system)
    }

    /// Gold: two sentences, `Don't` a multiword token (Do n't), `del` one (de el). System: one
    /// sentence, `Don't` one word, `market.` one token, `del` split into `de l`.
    /// Expected: `python3 ../shared/tools/conll18_ud_eval.py -c` on these two files.
    #[test]
    fn merged_sentences_tokens_and_multiword_tokens_score_as_the_official_script() {
        let gold = doc(
            "gold",
            &[
                "# text = Don't go to the market.",
                "1-2|Don't|_|_|_|_|_|_|_|_",
                "1|Do|do|AUX|_|_|3|aux|_|_",
                "2|n't|not|PART|_|_|3|advmod|_|_",
                "3|go|go|VERB|_|_|0|root|_|_",
                "4|to|to|ADP|_|_|6|case|_|_",
                "5|the|the|DET|_|_|6|det|_|_",
                "6|market|market|NOUN|_|_|3|obl|_|SpaceAfter=No",
                "7|.|.|PUNCT|_|_|3|punct|_|_",
                "",
                "# text = Vamos del mercado.",
                "1|Vamos|ir|VERB|_|_|0|root|_|_",
                "2-3|del|_|_|_|_|_|_|_|_",
                "2|de|de|ADP|_|_|4|case|_|_",
                "3|el|el|DET|_|_|4|det|_|_",
                "4|mercado|mercado|NOUN|_|_|1|obl|_|SpaceAfter=No",
                "5|.|.|PUNCT|_|_|1|punct|_|_",
            ],
        );
        let system = doc(
            "system",
            &[
                "1|Don't|_|VERB|_|_|2|nsubj|_|_",
                "2|go|_|VERB|_|_|0|root|_|_",
                "3|to|_|ADP|_|_|5|case|_|_",
                "4|the|_|DET|_|_|5|det|_|_",
                "5|market.|_|NOUN|_|_|2|obl:tmod|_|_",
                "6|Vamos|_|VERB|_|_|2|parataxis|_|_",
                "7-8|del|_|_|_|_|_|_|_|_",
                "7|de|_|ADP|_|_|9|mark|_|_",
                "8|l|_|DET|_|_|9|det|_|_",
                "9|mercado|_|NOUN|_|_|6|obl|_|_",
                "10|.|_|PUNCT|_|_|2|punct|_|_",
            ],
        );
        let a = evaluate(&gold, &system).unwrap();
        assert_eq!(counts(a.tokens), (8, 10, 9));
        assert_eq!(counts(a.sentences), (0, 2, 1));
        assert_eq!(counts(a.words), (7, 12, 10));
        assert_eq!(counts(a.upos), (7, 12, 10));
        assert_eq!(counts(a.uas), (3, 12, 10));
        assert_eq!(counts(a.las), (2, 12, 10));
        assert!((a.las.f1 - 100.0 * 4.0 / 22.0).abs() < 1e-9);
    }

    /// Gold: one sentence, `cannot` one word, `New York` one token with a space. System: two
    /// sentences, `cannot` a multiword token (can not), `New` and `York` two tokens.
    /// Expected: `python3 ../shared/tools/conll18_ud_eval.py -c` on these two files.
    #[test]
    fn split_sentences_and_a_form_with_a_space_score_as_the_official_script() {
        let gold = doc(
            "gold",
            &[
                "1|I|I|PRON|_|_|2|nsubj|_|_",
                "2|cannot|cannot|VERB|_|_|0|root|_|_",
                "3|see|see|VERB|_|_|2|xcomp|_|_",
                "4|New York|New York|PROPN|_|_|3|obj|_|SpaceAfter=No",
                "5|.|.|PUNCT|_|_|2|punct|_|_",
                "6|It|it|PRON|_|_|7|nsubj|_|_",
                "7|rains|rain|VERB|_|_|2|parataxis|_|_",
            ],
        );
        let system = doc(
            "system",
            &[
                "1|I|_|PRON|_|_|2|nsubj|_|_",
                "2-3|cannot|_|_|_|_|_|_|_|_",
                "2|can|_|AUX|_|_|4|aux|_|_",
                "3|not|_|PART|_|_|4|advmod|_|_",
                "4|see|_|VERB|_|_|0|root|_|_",
                "5|New|_|PROPN|_|_|4|obj|_|_",
                "6|York|_|PROPN|_|_|5|flat|_|_",
                "7|.|_|PUNCT|_|_|4|punct|_|_",
                "",
                "1|It|_|PRON|_|_|2|nsubj|_|_",
                "2|rains|_|VERB|_|_|0|root|_|_",
            ],
        );
        let a = evaluate(&gold, &system).unwrap();
        assert_eq!(counts(a.tokens), (6, 7, 8));
        assert_eq!(counts(a.sentences), (0, 1, 2));
        assert_eq!(counts(a.words), (5, 7, 9));
        assert_eq!(counts(a.upos), (5, 7, 9));
        assert_eq!(counts(a.uas), (1, 7, 9));
        assert_eq!(counts(a.las), (1, 7, 9));
    }

    /// One sentence from the notation of the official script's own tests (`TestAlignment`):
    /// `"abc a b c"` is a multiword token `abc` of words a, b, c; `"a"` a plain word.
    fn words(spec: &[&str]) -> Document {
        let mut rows = Vec::new();
        let mut n = 0;
        for w in spec {
            let parts: Vec<&str> = w.split(' ').collect();
            let row = |n: usize, form: &str| format!("{n}|{form}|_|_|_|_|{}|_|_|_", usize::from(n > 1));
            if parts.len() == 1 {
                n += 1;
                rows.push(row(n, parts[0]));
            } else {
                rows.push(format!("{}-{}|{}|_|_|_|_|_|_|_|_", n + 1, n + parts.len() - 1, parts[0]));
                for part in &parts[1..] {
                    n += 1;
                    rows.push(row(n, part));
                }
            }
        }
        doc("spec", &rows.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// The official script's `test_equal`, `test_equal_with_multiword` and `test_alignment`:
    /// the number of aligned words of each pair, as there.
    #[test]
    fn alignments_of_the_official_scripts_own_tests() {
        let cases: &[(&[&str], &[&str], u64)] = &[
            (&["a"], &["a"], 1),
            (&["a", "b", "c"], &["a", "b", "c"], 3),
            (&["abc a b c"], &["a", "b", "c"], 3),
            (&["a", "bc b c", "d"], &["a", "b", "c", "d"], 4),
            (&["abcd a b c d"], &["ab a b", "cd c d"], 4),
            (&["abc a b c", "de d e"], &["a", "bcd b c d", "e"], 5),
            (&["abcd"], &["a", "b", "c", "d"], 0),
            (&["abc", "d"], &["a", "b", "c", "d"], 1),
            (&["a", "bc", "d"], &["a", "b", "c", "d"], 2),
            (&["a", "bc b c", "d"], &["a", "b", "cd"], 2),
            (&["abc a BX c", "def d EX f"], &["ab a b", "cd c d", "ef e f"], 4),
            (&["ab a b", "cd bc d"], &["a", "bc", "d"], 2),
            (&["a", "bc b c", "d"], &["ab AX BX", "cd CX a"], 1),
        ];
        for &(gold, system, correct) in cases {
            let a = evaluate(&words(gold), &words(system)).unwrap();
            assert_eq!(a.words.correct, correct, "{gold:?} against {system:?}");
        }
        // test_exception: other characters are refused.
        assert!(evaluate(&words(&["a"]), &words(&["b"])).is_err());
    }

    #[test]
    fn other_text_is_refused_showing_where_it_parts() {
        let err = evaluate(&words(&["abc", "def"]), &words(&["abc", "dxf"])).unwrap_err().to_string();
        assert!(err.contains(r#"from character 4, gold "ef", system "xf""#), "{err}");
    }
}
