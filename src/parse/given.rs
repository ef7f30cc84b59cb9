//! What becomes of the values an input sentence gives, around its analysis and its parse: the
//! columns the analysis may write (UPOS, XPOS, FEATS, LEMMA) are taken before it and, after the
//! parse, put back ([`Given::Kept`]: only what the sentence lacks is the model's) or kept in
//! MISC where the model's replaced them ([`Given::Recorded`]: `OrigUPOS=…`); and an enhanced
//! graph (DEPS) made for the input's tree is marked where the parse changed that tree. Each
//! sentence's changes are counted ([`GivenCounts`]) for the run's report. This module owns
//! those rules; which of them apply to a file is [`crate::parse::fit`]'s decision.

use crate::corpus::{Column, Sentence};
use crate::model::analysis::Given;

/// The columns an analysis writes, with the MISC key that keeps a replaced value of each.
pub const ANALYSIS_COLUMNS: [(Column, &str); 4] = [
    (Column::Upos, "OrigUPOS"),
    (Column::Xpos, "OrigXPOS"),
    (Column::Feats, "OrigFEATS"),
    (Column::Lemma, "OrigLEMMA"),
];

/// The comment on a sentence whose DEPS are the input's while its HEAD and DEPREL are not
/// ([`GivenColumns::mark_deps`]).
pub const DEPS_COMMENT: &str = "spoolparse_deps";

/// What happened to the values sentences gave, summed over sentences.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GivenCounts {
    /// Per column of [`ANALYSIS_COLUMNS`]: given values the model replaced ([`Given::Recorded`],
    /// kept in MISC), or that the parser read the model's value for and were put back
    /// ([`Given::Kept`]: a UPOS or an XPOS the tagger's tag set lacks).
    pub columns: [usize; 4],
    /// Sentences whose DEPS were kept beside a parsed tree other than the input's.
    pub deps_sentences: usize,
}

impl GivenCounts {
    /// Adds `more` to these.
    pub fn add(&mut self, more: &GivenCounts) {
        for (c, m) in self.columns.iter_mut().zip(more.columns) {
            *c += m;
        }
        self.deps_sentences += more.deps_sentences;
    }

    /// Whether anything was counted.
    pub fn any(&self) -> bool {
        self.deps_sentences > 0 || self.columns.iter().any(|&c| c > 0)
    }

    /// One line saying what was done, for `parse`'s stderr and the daemon's log; `given` says
    /// what became of given values ([`Given::Kept`]: put back; otherwise replaced).
    pub fn describe(&self, given: Given) -> String {
        let mut parts = Vec::new();
        let columns: Vec<String> = ANALYSIS_COLUMNS
            .iter()
            .zip(self.columns)
            .filter(|&(_, n)| n > 0)
            .map(|((col, _), n)| format!("{n} {}", column_name(*col)))
            .collect();
        if !columns.is_empty() {
            parts.push(match given {
                Given::Kept => format!(
                    "{} values the model's tagger does not know: parsed on its own tags, the file's kept",
                    columns.join(", ")
                ),
                _ => format!(
                    "{} values replaced by the model's, each kept in MISC (OrigUPOS=, OrigXPOS=, OrigFEATS=, OrigLEMMA=)",
                    columns.join(", ")
                ),
            });
        }
        if self.deps_sentences > 0 {
            parts.push(format!(
                "{} sentences keep the input's DEPS beside a parsed tree other than the input's (marked `# {DEPS_COMMENT} = input`)",
                self.deps_sentences
            ));
        }
        parts.join("; ")
    }
}

fn column_name(col: Column) -> &'static str {
    match col {
        Column::Upos => "UPOS",
        Column::Xpos => "XPOS",
        Column::Feats => "FEATS",
        _ => "LEMMA",
    }
}

/// A sentence's given values, taken before its analysis and parse; reused from sentence to
/// sentence (one per annotator), so nothing is allocated once warm.
#[derive(Debug, Default)]
pub struct GivenColumns {
    /// The values of [`ANALYSIS_COLUMNS`] of every word, word after word, and where each ends.
    values: String,
    ends: Vec<usize>,
    /// HEAD and DEPREL of every word, when some word has DEPS, and where each ends.
    tree: String,
    tree_ends: Vec<usize>,
    has_deps: bool,
    /// Reused buffer for escaped MISC values.
    scratch: String,
    /// What the last sentence's [`GivenColumns::restore`] and [`GivenColumns::mark_deps`] did.
    pub counts: GivenCounts,
}

impl GivenColumns {
    /// Takes `sent`'s values: its analysis columns if `analysis`, and its tree if `deps` and
    /// some word has DEPS. Counts start afresh.
    pub fn take(&mut self, sent: &Sentence, analysis: bool, deps: bool) {
        self.counts = GivenCounts::default();
        self.values.clear();
        self.ends.clear();
        if analysis {
            for w in sent.words() {
                for (col, _) in ANALYSIS_COLUMNS {
                    self.values.push_str(w.get(col));
                    self.ends.push(self.values.len());
                }
            }
        }
        self.tree.clear();
        self.tree_ends.clear();
        self.has_deps = deps && sent.words().any(|w| w.get(Column::Deps) != "_");
        if self.has_deps {
            for w in sent.words() {
                for col in [Column::Head, Column::Deprel] {
                    self.tree.push_str(w.get(col));
                    self.tree_ends.push(self.tree.len());
                }
            }
        }
    }

    /// Value `k` of what was taken from `text` by `ends`.
    fn value<'a>(text: &'a str, ends: &[usize], k: usize) -> &'a str {
        let start = if k == 0 { 0 } else { ends[k - 1] };
        &text[start..ends[k]]
    }

    /// After the parse: every given value (not `_`) the analysis wrote over is put back
    /// ([`Given::Kept`]) or kept in MISC under its `Orig…` key ([`Given::Recorded`]); each
    /// counted by column. Nothing is done for [`Given::Replaced`] or if nothing was taken.
    pub fn restore(&mut self, sent: &mut Sentence, given: Given) {
        if given == Given::Replaced || self.ends.len() != sent.len() * ANALYSIS_COLUMNS.len() {
            return;
        }
        for id in 1..=sent.len() {
            for (c, &(col, key)) in ANALYSIS_COLUMNS.iter().enumerate() {
                let k = (id - 1) * ANALYSIS_COLUMNS.len() + c;
                let old = Self::value(&self.values, &self.ends, k);
                if old == "_" || sent.word(id).get(col) == old {
                    continue;
                }
                self.counts.columns[c] += 1;
                if given == Given::Kept {
                    sent.set_column(id, col, old);
                } else {
                    escape_misc_value(old, &mut self.scratch);
                    sent.set_misc(id, key, &self.scratch);
                }
            }
        }
    }

    /// After the parse: a sentence with DEPS whose parsed tree is not the one it came with
    /// keeps them, marked by a `# spoolparse_deps = input` comment (the graph describes the
    /// input's tree, not the parsed one) and counted. A tree the parse left as it was, or a
    /// sentence without DEPS, is left alone.
    pub fn mark_deps(&mut self, sent: &mut Sentence) {
        if !self.has_deps || self.tree_ends.len() != 2 * sent.len() {
            return;
        }
        let changed = (1..=sent.len()).any(|id| {
            let w = sent.word(id);
            let k = 2 * (id - 1);
            w.get(Column::Head) != Self::value(&self.tree, &self.tree_ends, k)
                || w.get(Column::Deprel) != Self::value(&self.tree, &self.tree_ends, k + 1)
        });
        if changed {
            sent.set_comment(DEPS_COMMENT, "input");
            self.counts.deps_sentences += 1;
        }
    }
}

/// Writes `value` into `out` as a MISC value: `|` (MISC's separator) as `\p` and `\` as `\\`,
/// the escapes of UDPipe's `SpacesAfter`; so `OrigFEATS=Number=Sing\pPerson=3` is one entry.
pub fn escape_misc_value(value: &str, out: &mut String) {
    out.clear();
    for c in value.chars() {
        match c {
            '|' => out.push_str("\\p"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(rows: &[[&str; 10]]) -> Sentence {
        let text: String = rows.iter().map(|r| r.join("\t") + "\n").collect();
        let mut s = Sentence::default();
        s.fill_from_conllu_lines(&text).unwrap();
        s
    }

    #[test]
    fn given_values_are_put_back_or_kept_in_misc_and_counted() {
        let input = sentence(&[
            ["1", "Dogs", "dog", "NOUN", "_", "Number=Plur", "2", "nsubj", "_", "_"],
            ["2", "bark", "_", "VERB", "VBP", "_", "0", "root", "_", "SpaceAfter=No"],
        ]);
        let analyzed = |s: &mut Sentence| {
            s.set_tags(1, "PROPN", "NNP");
            s.set_column(1, Column::Feats, "Number=Sing|Person=3");
            s.set_column(2, Column::Lemma, "bark");
        };
        let mut given = GivenColumns::default();
        let mut kept = input.clone();
        given.take(&kept, true, true);
        analyzed(&mut kept);
        given.restore(&mut kept, Given::Kept);
        // The given values back, the missing ones (XPOS of word 1, LEMMA of word 2) the model's.
        assert_eq!(kept.word(1).text(), "1\tDogs\tdog\tNOUN\tNNP\tNumber=Plur\t2\tnsubj\t_\t_");
        assert_eq!(kept.word(2).text(), "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\tSpaceAfter=No");
        assert_eq!(given.counts.columns, [1, 0, 1, 0]);
        let mut recorded = input.clone();
        given.take(&recorded, true, true);
        recorded.set_column(1, Column::Feats, "Foo=Bar\\|");
        given.restore(&mut recorded, Given::Recorded);
        assert_eq!(recorded.word(1).text(), "1\tDogs\tdog\tNOUN\t_\tFoo=Bar\\|\t2\tnsubj\t_\tOrigFEATS=Number=Plur");
        let mut escaped = String::new();
        escape_misc_value("a|b\\c", &mut escaped);
        assert_eq!(escaped, "a\\pb\\\\c");
    }

    #[test]
    fn deps_beside_a_changed_tree_are_kept_and_marked_and_beside_the_same_tree_left_alone() {
        let input = sentence(&[
            ["1", "Dogs", "_", "NOUN", "_", "_", "2", "nsubj", "2:nsubj", "_"],
            ["2", "bark", "_", "VERB", "_", "_", "0", "root", "0:root", "_"],
        ]);
        let mut given = GivenColumns::default();
        let mut same = input.clone();
        given.take(&same, false, true);
        same.set_attachment(1, 2, "nsubj");
        given.mark_deps(&mut same);
        assert_eq!((same.comments.len(), given.counts.deps_sentences), (0, 0));
        let mut changed = input.clone();
        given.take(&changed, false, true);
        changed.set_attachment(1, 2, "obj");
        given.mark_deps(&mut changed);
        assert_eq!(changed.comments, ["# spoolparse_deps = input"]);
        assert_eq!(changed.word(1).get(Column::Deps), "2:nsubj");
        assert_eq!(given.counts.deps_sentences, 1);
    }
}
