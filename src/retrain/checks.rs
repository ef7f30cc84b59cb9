//! The checks an annotation passes before the store keeps it (what the module doc of
//! [`super::store`] lists): each sentence of an input file is sorted into good (with its
//! unreviewed arcs dropped), bad (with the line to fix) or suspect, against [`Reference`]. This
//! module reads and judges; it moves and writes no file: that is the store's.

use std::path::Path;

use super::reference::{
    agreement, Plausible, Reference, CONFIDENT, MAX_CROSSING, MAX_UNKNOWN_SHARE, MIN_CONFIDENT_ARCS,
    MIN_WORDS_FOR_LEXICON, RANK_PLAUSIBLE,
};
use super::store::FileReport;
use crate::corpus::tree::{is_projective_partial, partial_heads, PartialHeads};
use crate::corpus::unparsed::{ERROR_KEY, PLACEHOLDER_MISC};
use crate::corpus::{check_lemma, Column, CorpusError, Format, Reader, Sentence};
use crate::parse::annotate::Annotator;
use crate::parse::fit::{HELD_BACK_KEY, OTHER_LANGUAGE_KEY};

/// A problem of one sentence of an input file: the line to fix (0: the whole file), and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Problem {
    pub(super) line: u64,
    pub(super) text: String,
}

impl Problem {
    fn at(line: u64, text: impl Into<String>) -> Problem {
        Problem { line, text: text.into() }
    }
}

impl From<CorpusError> for Problem {
    fn from(e: CorpusError) -> Problem {
        Problem::at(e.line, e.kind.to_string())
    }
}

/// `:LINE`, or nothing for line 0 (the whole file).
pub(super) fn location(line: u64) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}

/// One input file, checked.
#[derive(Default)]
pub(super) struct Checked {
    /// Its text, decompressed; `None` if it could not be read as CoNLL-U at all, and is then
    /// set aside whole.
    pub(super) raw: Option<Vec<u8>>,
    /// Sentences to store, unreviewed arcs dropped.
    pub(super) good: Vec<Sentence>,
    pub(super) bad: Vec<Problem>,
    pub(super) suspect: Vec<Problem>,
    pub(super) report: FileReport,
}

/// What [`check_sentence`] made of a sentence it did not refuse.
pub(super) enum Verdict {
    /// To store: the sentence with its unreviewed arcs dropped, its arcs, the arcs dropped.
    Good { sentence: Sentence, arcs: usize, dropped: usize },
    /// To set aside until confirmed; with the arcs it would have had dropped.
    Suspect(Problem, usize),
}

/// Reads `path` (named `name`) and sorts its sentences into good, bad and suspect ones,
/// against `reference`. A file that cannot be read at all (not CoNLL-U, broken zstd) has only
/// its problem.
pub(super) fn check_file(path: &Path, name: &str, reference: &Reference) -> Checked {
    let mut checked =
        Checked { report: FileReport { name: name.to_string(), ..FileReport::default() }, ..Default::default() };
    let whole = |mut checked: Checked, text: String| {
        checked.bad = vec![Problem::at(0, text)];
        checked.report.rejected = 1;
        checked
    };
    if Format::from_extension(Path::new(name)) != Some(Format::Conllu) {
        return whole(checked, "annotations must be CoNLL-U (.conllu or .conllu.zst)".into());
    }
    let mut raw = Vec::new();
    if let Err(e) = crate::base::io::open_input(path).and_then(|mut r| r.read_to_end(&mut raw)) {
        return whole(checked, format!("cannot be read: {e}"));
    }
    let mut annotator = reference.annotator();
    let (mut unknown, mut words) = (0usize, 0usize);
    let mut held_back = false;
    let mut kept: Vec<(Sentence, usize, usize)> = Vec::new();
    for sent in Reader::new(&raw[..], path, Format::Conllu) {
        let sent = match sent {
            Ok(s) => s,
            Err(e) if e.kind.is_unreadable() || e.line == 0 => return whole(checked, e.kind.to_string()),
            Err(e) => {
                checked.bad.push(e.into());
                continue;
            }
        };
        held_back |= sent.comment(HELD_BACK_KEY).is_some();
        if let Some((u, n)) = reference.unknown_forms(&sent) {
            unknown += u;
            words += n;
        }
        match check_sentence(&sent, path, reference, annotator.as_mut()) {
            Ok(Verdict::Good { sentence, arcs, dropped }) => kept.push((sentence, arcs, dropped)),
            Ok(Verdict::Suspect(problem, dropped)) => {
                checked.report.unreviewed_arcs += dropped;
                checked.suspect.push(problem);
            }
            Err(problem) => checked.bad.push(problem),
        }
    }
    if reference.unknown_forms(&Sentence::default()).is_some() {
        checked.report.unknown_words = Some((unknown, words));
    }
    let why = if held_back {
        // Whatever its length: a lone sentence copied out of such a file says too little itself.
        Some(format!(
            "the daemon held this file back as another language than the model's (`# {HELD_BACK_KEY}`): its \
             sentences were not stored"
        ))
    } else if words >= MIN_WORDS_FOR_LEXICON && unknown as f64 > MAX_UNKNOWN_SHARE * words as f64 {
        Some(format!(
            "{unknown} of the file's {words} words ({:.0}%) are unknown to the serving model (at most {:.0}% \
             taken): another language or domain than the model's? Its sentences were not stored",
            100.0 * unknown as f64 / words as f64,
            100.0 * MAX_UNKNOWN_SHARE
        ))
    } else {
        None
    };
    if let Some(why) = why {
        // Unlike the training data as a whole: none of it is taken, each sentence says why.
        let suspect = std::mem::take(&mut checked.suspect);
        let sentences = kept.drain(..).map(|(s, _, _)| s.first_line).chain(suspect.iter().map(|p| p.line));
        checked.bad.extend(sentences.map(|line| Problem::at(line, why.clone())));
        checked.bad.sort_by_key(|p| p.line);
    }
    for (sentence, arcs, dropped) in kept {
        checked.report.reviewed_arcs += arcs;
        checked.report.unreviewed_arcs += dropped;
        checked.good.push(sentence);
    }
    checked.report.sentences = checked.good.len();
    checked.report.rejected = checked.bad.len();
    checked.report.suspect = checked.suspect.len();
    checked.raw = Some(raw);
    checked
}

/// Whether one sentence read from `path` is a good annotation (see the module doc), with its
/// unreviewed arcs dropped; otherwise its problem. `annotator` parses it with the serving
/// model, to compare with the arcs that model is sure of.
pub(super) fn check_sentence(
    sent: &Sentence,
    path: &Path,
    reference: &Reference,
    annotator: Option<&mut Annotator<'_>>,
) -> Result<Verdict, Problem> {
    if is_unparsed(sent) {
        return Err(Problem::at(sent.first_line, format!("an unparsed placeholder ({ERROR_KEY}), not an annotation")));
    }
    if sent.comment(OTHER_LANGUAGE_KEY).is_some() {
        return Err(Problem::at(
            sent.first_line,
            format!(
                "the daemon judged this sentence another language's than the model's (`# {OTHER_LANGUAGE_KEY}`); \
                 delete that line if it is the model's language"
            ),
        ));
    }
    crate::train::check_marks(sent, path)?;
    let unreviewed = unreviewed_words(sent);
    let dropped = unreviewed.iter().filter(|&&w| sent.word(w).get(Column::Head) != "_").count();
    let sent = without_arcs(sent, &unreviewed, path)?;
    for (i, w) in sent.words().enumerate() {
        let (head, deprel) = (w.get(Column::Head), w.get(Column::Deprel));
        if (head == "_") != (deprel == "_") {
            return Err(Problem::at(
                sent.line_of_word(i + 1),
                format!(
                    "word {} has HEAD {head} and DEPREL {deprel}: half an arc; annotate both or leave both _",
                    i + 1
                ),
            ));
        }
    }
    for (i, w) in sent.words().enumerate() {
        let lemma = w.get(Column::Lemma);
        match check_lemma(lemma, w.get(Column::Form)) {
            Err(why) if lemma != "_" => {
                return Err(Problem::at(sent.line_of_word(i + 1), format!("word {}'s LEMMA {why}", i + 1)))
            }
            _ => {}
        }
    }
    let heads = partial_heads(&sent, path)?;
    if heads.iter().all(Option::is_none) {
        let why = if dropped > 0 {
            format!(
                "no reviewed arc: every word with a HEAD still has the parser's {CONF_KEY}=/{LOW_CONF_KEY}= mark, and \
                 unreviewed arcs are not stored: remove the mark from each word you checked, or add `# {REVIEWED_KEY} \
                 = all` if you checked them all"
            )
        } else {
            "no annotated arc (every HEAD is _)".to_string()
        };
        return Err(Problem::at(sent.line_of_word(1), why));
    }
    if let Some((line, problem)) = training_skips(&sent, &heads, &reference.root_label) {
        return Err(Problem::at(line, problem));
    }
    if let Some((word, problem)) = reference.unknown_label(&sent) {
        return Err(Problem::at(sent.line_of_word(word), problem));
    }
    if let Some(at) = reference.heldout_copy(&sent) {
        return Err(Problem::at(
            sent.first_line,
            format!(
                "its words are those of the sentence at {at}, in retrain.heldout: the gate's test data must never be \
                 trained on"
            ),
        ));
    }
    // A sentence the workbench sampled is never trained on, so a wrong tree cannot teach the
    // model; set aside, the confidently wrong parses the sample is there to count would be
    // missing from it, and the precision chosen on it would be too high.
    let judged = sent.comment(CONFIRMED_KEY) != Some("yes") && !super::sampled(&sent);
    if let Some(annotator) = annotator.filter(|_| judged) {
        let a = agreement(annotator, &sent);
        if a.is_suspect() {
            let why = if a.confident >= MIN_CONFIDENT_ARCS {
                format!(
                    "agrees with only {} of the {} arcs the serving model is surest of (confidence at least \
                     {CONFIDENT}): suspect",
                    a.agree, a.confident
                )
            } else {
                format!(
                    "differs from the serving model's parse on {} of its {} arcs (head or label) where the model's \
                     confidences expect {:.1}: suspect",
                    a.arcs - a.labeled,
                    a.arcs,
                    a.expected
                )
            };
            return Ok(Verdict::Suspect(Problem::at(sent.first_line, why), dropped));
        }
        if let Some(p) = reference.plausibility(annotator, &sent).filter(Plausible::is_suspect) {
            let why = format!(
                "{} of its {} arcs are ones the serving model ranks below its first {RANK_PLAUSIBLE} choices or never \
                 builds (at most {:.0}% taken), and {} cross another arc (at most {:.0}%): unlike a correction: suspect",
                p.implausible(),
                p.arcs,
                100.0 * p.max_implausible(),
                p.crossing,
                100.0 * MAX_CROSSING
            );
            return Ok(Verdict::Suspect(Problem::at(sent.first_line, why), dropped));
        }
    }
    let arcs = heads.iter().flatten().count();
    Ok(Verdict::Good { sentence: sent, arcs, dropped })
}

/// The MISC key of an arc's confidence, written by the parser.
pub const CONF_KEY: &str = "Conf";
/// The MISC key that marks an arc below the lowconf threshold, written by the parser.
pub const LOW_CONF_KEY: &str = "LowConf";
/// `# reviewed = all`: every arc of the sentence was reviewed, marks or not.
pub const REVIEWED_KEY: &str = "reviewed";
/// `# annotator = NAME`: who corrected a sentence, kept in its segment's provenance.
pub const ANNOTATOR_KEY: &str = "annotator";
/// `# confirmed = yes`: a person confirmed a sentence set aside as suspect.
pub const CONFIRMED_KEY: &str = "confirmed";

/// The words whose arc nobody reviewed: those whose MISC still has the parser's
/// [`CONF_KEY`] or [`LOW_CONF_KEY`] mark, unless the sentence says `# reviewed = all`.
pub(super) fn unreviewed_words(sent: &Sentence) -> Vec<usize> {
    if sent.comment(REVIEWED_KEY) == Some("all") {
        return Vec::new();
    }
    let marked = |misc: &str| {
        misc.split('|').any(|e| e.split_once('=').is_some_and(|(k, _)| k == CONF_KEY || k == LOW_CONF_KEY))
    };
    sent.words().enumerate().filter(|(_, w)| marked(w.get(Column::Misc))).map(|(i, _)| i + 1).collect()
}

/// `sent` with HEAD and DEPREL of `words` set to `_` (the same line numbers).
pub(super) fn without_arcs(sent: &Sentence, words: &[usize], path: &Path) -> Result<Sentence, Problem> {
    if words.is_empty() {
        return Ok(sent.clone());
    }
    let mut text = Vec::new();
    sent.write_to(&mut text).map_err(|e| Problem::at(sent.first_line, e.to_string()))?;
    let text = String::from_utf8_lossy(&text);
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut cols: Vec<&str> = line.split('\t').collect();
        if cols.len() == 10 && cols[0].parse::<usize>().is_ok_and(|id| words.contains(&id)) {
            cols[6] = "_";
            cols[7] = "_";
        }
        out.push_str(&cols.join("\t"));
        out.push('\n');
    }
    match Reader::new(out.as_bytes(), path, Format::Conllu).next() {
        Some(Ok(mut reduced)) => {
            reduced.first_line = sent.first_line;
            Ok(reduced)
        }
        Some(Err(e)) => Err(e.into()),
        None => Err(Problem::at(sent.first_line, "an empty sentence")),
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
pub(super) fn training_skips(sent: &Sentence, heads: &PartialHeads, root_label: &str) -> Option<(u64, String)> {
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
pub(super) fn crossing_arcs(heads: &PartialHeads) -> Option<(usize, usize)> {
    (1..=heads.len()).find_map(|a| (a + 1..=heads.len()).find(|&b| crossing_pair(heads, a, b)).map(|b| (a, b)))
}

/// Whether the annotated arcs of words `a` and `b` cross.
pub(super) fn crossing_pair(heads: &PartialHeads, a: usize, b: usize) -> bool {
    let span = |w: usize| heads[w - 1].map(|h| (h.min(w), h.max(w)));
    let (Some((lo, hi)), Some((l, h))) = (span(a), span(b)) else { return false };
    (lo < l && l < hi && hi < h) || (l < lo && lo < h && h < hi)
}

/// Whether `sent` is the daemon's placeholder for a malformed input sentence: a
/// `# spoolparse_error` comment, or a word marked `SpoolparseUnparsed=Yes` in MISC (either
/// alone is enough, should an annotator have dropped the other).
pub(super) fn is_unparsed(sent: &Sentence) -> bool {
    let error_comment = |c: &String| {
        let key = c.strip_prefix('#').map(str::trim_start).and_then(|c| c.strip_prefix(ERROR_KEY));
        key.is_some_and(|rest| rest.trim_start().starts_with('='))
    };
    sent.comments.iter().any(error_comment)
        || sent.words().any(|w| w.get(Column::Misc).split('|').any(|entry| entry == PLACEHOLDER_MISC))
}
