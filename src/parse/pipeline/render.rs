//! Sentences rendered as text by the thread that parsed them, so that the sink, which runs one
//! thread at a time, only copies bytes: formatting was about 2–3% of a CoNLL-U parse in that
//! turn. The one thing only the delivery knows is a sentence's number: a sentence without a
//! `# sent_id` is rendered in two parts, and its id line (see [`super::Numbering`]) goes
//! between them when it is delivered ([`Written`]).

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
    /// Writes the sentence (with its blank line).
    pub fn write_to<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        out.write_all(self.head)?;
        if let Some(id) = self.id {
            writeln!(out, "# sent_id = {id}")?;
        }
        out.write_all(self.rest)
    }
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
}
