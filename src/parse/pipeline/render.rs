//! Sentences rendered as text by the thread that parsed them, so that the sink, which runs one
//! thread at a time, only copies bytes: formatting was about 2–3% of a CoNLL-U parse in that
//! turn. The one thing only the delivery knows is a sentence's number: a sentence without a
//! `# sent_id` is rendered in two parts, and its id line (see [`super::Numbering`]) goes
//! between them when it is delivered ([`Written`]). And an output that gets only some of the
//! sentences writes each one late ([`HeldBack`]), so that what it holds stays valid UD.

use std::io::{self, Write};

use crate::corpus::{conllu, Sentence};

/// The sentences of a batch as text, in order.
#[derive(Debug, Default)]
pub(super) struct Rendered {
    text: Vec<u8>,
    /// Per sentence: where its text ends, and where its id line goes if it has none.
    ends: Vec<(usize, Option<usize>)>,
}

impl Rendered {
    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    /// Renders `sent` as the next sentence (a malformed one, which is written otherwise, as
    /// nothing).
    pub(super) fn push(&mut self, sent: Option<&Sentence>) {
        let start = self.text.len();
        let mut id_at = None;
        if let Some(sent) = sent {
            if !sent.comments.iter().any(|c| conllu::is_sent_id(c)) {
                // Where UD puts it: first after any `# newdoc` and `# newpar`.
                let marks = sent.comments.iter().take_while(|c| c.starts_with("# newdoc") || c.starts_with("# newpar"));
                id_at = Some(start + marks.map(|c| c.len() + 1).sum::<usize>());
            }
            // Writing into a vector cannot fail.
            let _ = sent.write_to(&mut self.text);
        }
        self.ends.push((self.text.len(), id_at));
    }

    /// Sentence `i` as written, with `id` as its id line if it has none of its own.
    pub(super) fn get<'a>(&'a self, i: usize, id: Option<&'a str>) -> Written<'a> {
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p].0);
        let (end, id_at) = self.ends[i];
        match id_at {
            Some(at) => Written { head: &self.text[start..at], id, rest: &self.text[at..end] },
            None => Written { head: &self.text[start..end], id: None, rest: &[] },
        }
    }
}

/// A parsed sentence as it is written: `head`, the line `# sent_id = ID` if it has an `id`,
/// then `rest`.
#[derive(Debug, Clone, Copy)]
pub struct Written<'a> {
    head: &'a [u8],
    id: Option<&'a str>,
    rest: &'a [u8],
}

impl Written<'_> {
    /// Whether the sentence starts a document or a paragraph (`# newdoc`, `# newpar`).
    pub fn starts_paragraph(&self) -> bool {
        self.head
            .split(|&b| b == b'\n')
            .take_while(|line| line.starts_with(b"#"))
            .any(|line| line.starts_with(b"# newdoc") || line.starts_with(b"# newpar"))
    }

    /// Writes the sentence (with its blank line).
    pub fn write_to<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        out.write_all(self.head)?;
        if let Some(id) = self.id {
            writeln!(out, "# sent_id = {id}")?;
        }
        out.write_all(self.rest)
    }
}

/// One output's sentences, each written once the next one for the same output comes (or
/// [`HeldBack::release`] is called). In an output that holds only some of the sentences
/// (accepted or low-confidence), or one that joins files, a sentence whose last token says
/// `SpaceAfter=No` (the next sentence of its text followed it without a space) can come to
/// stand before one that starts a paragraph or a document, which UD forbids (the validator's
/// `spaceafter-newdocpar`); the `SpaceAfter=No` is then left out, as the text between them is
/// not in this output anyway.
#[derive(Debug, Default)]
pub struct HeldBack {
    held: Vec<u8>,
}

impl HeldBack {
    /// Writes to `out` the sentence held back, and holds `next` back.
    pub fn sentence<W: Write + ?Sized>(&mut self, out: &mut W, next: &Written<'_>) -> io::Result<()> {
        if next.starts_paragraph() {
            drop_final_space_after_no(&mut self.held);
        }
        self.release(out)?;
        next.write_to(&mut self.held)
    }

    /// Writes to `out` the sentence held back, if any: before anything else is written to
    /// `out`, and at its end.
    pub fn release<W: Write + ?Sized>(&mut self, out: &mut W) -> io::Result<()> {
        out.write_all(&self.held)?;
        self.held.clear();
        Ok(())
    }
}

/// Leaves `SpaceAfter=No` out of the MISC of the last token of the sentence `text` (written
/// CoNLL-U): the range line of a multiword token, else the last word line (not an empty node).
fn drop_final_space_after_no(text: &mut Vec<u8>) {
    // Lines found as bytes: this runs at every paragraph's end, and with a str scan parse
    // executed 0.3% more instructions on en_ewt dev (scripts/benchmarks/instructions.sh).
    let number = |bytes: &[u8]| std::str::from_utf8(bytes).ok().and_then(|s| s.parse::<usize>().ok());
    let mut last = None;
    let mut range_end = 0usize;
    let mut at = 0;
    let ends = memchr::memchr_iter(b'\n', text).map(|i| i + 1).chain([text.len()]);
    for end in ends {
        if end <= at {
            continue;
        }
        let line = &text[at..end];
        let id = &line[..memchr::memchr(b'\t', line).unwrap_or(line.len())];
        if let Some(dash) = memchr::memchr(b'-', id) {
            range_end = number(&id[dash + 1..]).unwrap_or(0);
            last = Some((at, line.len()));
        } else if number(id).is_some_and(|n| n > range_end) {
            last = Some((at, line.len()));
        }
        at = end;
    }
    let Some((start, len)) = last else { return };
    let Ok(line) = std::str::from_utf8(&text[start..start + len]) else { return };
    let line = line.trim_end_matches('\n');
    let Some((columns, misc)) = line.rsplit_once('\t') else { return };
    if !misc.split('|').any(|e| e == "SpaceAfter=No") {
        return;
    }
    let kept: Vec<&str> = misc.split('|').filter(|&e| e != "SpaceAfter=No").collect();
    let misc = if kept.is_empty() { "_".to_string() } else { kept.join("|") };
    let new_line = format!("{columns}\t{misc}");
    text.splice(start..start + line.len(), new_line.into_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_line_goes_after_the_document_and_paragraph_marks_as_numbering_puts_it() {
        let text = "# newdoc\n# newpar\n# text = Hi\n1\tHi\t_\t_\t_\t_\t0\troot\t_\t_\n";
        let mut with_id = Sentence::default();
        with_id.fill_from_conllu_lines(&text.replace("# text", "# sent_id = own\n# text")).unwrap();
        let mut without = Sentence::default();
        without.fill_from_conllu_lines(text).unwrap();
        let mut rendered = Rendered::default();
        rendered.push(Some(&without));
        rendered.push(None);
        rendered.push(Some(&with_id));
        let written = |i, id| {
            let mut out = Vec::new();
            rendered.get(i, id).write_to(&mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        // What numbering a sentence in place, then writing it, gives.
        let mut numbered = without.clone();
        numbered.set_comment("sent_id", "f-1");
        numbered.comments[2..].rotate_right(1);
        let mut expected = Vec::new();
        numbered.write_to(&mut expected).unwrap();
        assert_eq!(written(0, Some("f-1")), String::from_utf8(expected).unwrap());
        assert_eq!(written(0, None), format!("{text}\n"));
        assert_eq!(written(1, Some("f-2")), "");
        assert!(written(2, Some("f-3")).contains("# sent_id = own\n") && !written(2, Some("f-3")).contains("f-3"));
    }

    #[test]
    fn a_sentence_ending_without_a_space_loses_it_only_before_a_paragraph_in_its_output() {
        let sentence = |comments: &str, last: &str| {
            let lines = format!("{comments}# text = A b\n1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n{last}");
            let mut s = Sentence::default();
            s.fill_from_conllu_lines(&lines).unwrap();
            s
        };
        let no_space = "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No|X=1\n2\tb\t_\t_\t_\t_\t1\tdep\t_\t_\n3\tc\t_\t_\t_\t_\t1\tdep\t_\tSpaceAfter=No\n";
        let sents = [
            sentence("", no_space),
            sentence("", "2\tb\t_\t_\t_\t_\t1\tdep\t_\tSpaceAfter=No\n"),
            sentence("# newpar\n", "2\tb\t_\t_\t_\t_\t1\tdep\t_\t_\n"),
        ];
        let mut rendered = Rendered::default();
        sents.iter().for_each(|s| rendered.push(Some(s)));
        let (mut out, mut held) = (Vec::new(), HeldBack::default());
        for i in 0..3 {
            held.sentence(&mut out, &rendered.get(i, None)).unwrap();
        }
        held.release(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        // Before a sentence of the same paragraph, kept; before a new paragraph, left out (on
        // the multiword token, the last token; its last word's own MISC is another matter).
        assert!(out.contains("2-3\tbc\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No|X=1\n"), "{out}");
        assert!(!out.contains("1\tdep\t_\tSpaceAfter=No\n\n# newpar"), "{out}");
        assert_eq!(out.matches("# text").count(), 3);
        assert!(out.ends_with("1\tdep\t_\t_\n\n"));
    }
}
