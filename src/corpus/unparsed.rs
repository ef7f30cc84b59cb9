//! How a sentence that could not be read travels in CoNLL-U output: as a valid CoNLL-U
//! sentence that carries its raw lines, escaped, in comments, so that strict readers accept
//! the file and the original text can be recovered exactly ([`raw_text`]).
//!
//! ```text
//! # sent_id = in.conllu-7
//! # text = _
//! # spoolparse_error = in.conllu:12: invalid HEAD "one" (expected an integer or `_`)
//! # spoolparse_raw = 1\tThe\t_\tDET …
//! # spoolparse_raw = 2\tdog\t_\tNOUN …
//! 1 _ _ X _ _ 0 root _ SpoolparseUnparsed=Yes          (tab-separated)
//! ```
//!
//! CoNLL-U wants at least one word per sentence, hence the placeholder word, marked in MISC,
//! and the UD validator a `# sent_id` and a `# text` that matches its words: the input's
//! `sent_id` when its raw lines have one (so that joins by id find the sentence), else the id
//! that its place in the input gives it. In a file whose sentences have enhanced dependencies,
//! the placeholder has one too (`0:root`): the validator wants them in all sentences or none.
//! A sentence longer than the reader's limit is not held in memory, so only its first lines
//! are carried, and a `# spoolparse_raw_truncated` comment says so. This module owns the
//! encoding; it must not decide which sentences are malformed.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::Sentence;

/// The comment key of the error message.
pub const ERROR_KEY: &str = "spoolparse_error";
/// The comment key of each raw line.
pub const RAW_KEY: &str = "spoolparse_raw";
/// The comment key saying that raw lines were left out.
pub const TRUNCATED_KEY: &str = "spoolparse_raw_truncated";
/// The MISC entry of the placeholder word.
pub const PLACEHOLDER_MISC: &str = "SpoolparseUnparsed=Yes";

/// Writes an unparsed sentence: the `# sent_id` of its raw lines (if any), the error `why`,
/// the lines of `text` (as read, each ending with a newline; blank lines around it are
/// dropped), and the placeholder word.
pub fn write<W: Write + ?Sized>(out: &mut W, why: &str, text: &str, truncated: bool) -> io::Result<()> {
    Placeholder::default().write(out, why, text, truncated)
}

/// What the placeholder of an unparsed sentence carries besides its raw lines.
#[derive(Debug, Default, Clone, Copy)]
pub struct Placeholder<'a> {
    /// `# sent_id = ID` when the raw lines have no `sent_id` of their own.
    pub sent_id: Option<&'a str>,
    /// DEPS `0:root` (a file with enhanced dependencies) instead of `_`.
    pub enhanced: bool,
}

/// Whether the raw lines of a sentence give any word enhanced dependencies (a DEPS column
/// other than `_`).
pub fn has_enhanced_deps(text: &str) -> bool {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .any(|l| l.split('\t').nth(8).is_some_and(|d| !d.trim().is_empty() && d != "_"))
}

impl Placeholder<'_> {
    /// Writes the unparsed sentence (see [`fn@write`]).
    pub fn write<W: Write + ?Sized>(&self, out: &mut W, why: &str, text: &str, truncated: bool) -> io::Result<()> {
        let own = text.lines().map(|l| l.trim_end_matches('\r')).find(|l| super::conllu::is_sent_id(l));
        match (own, self.sent_id) {
            (Some(line), _) => writeln!(out, "{line}")?,
            (None, Some(id)) => writeln!(out, "# sent_id = {id}")?,
            (None, None) => {}
        }
        writeln!(out, "# text = _")?;
        // A comment cannot span lines.
        writeln!(out, "# {ERROR_KEY} = {}", why.replace(['\n', '\r'], " "))?;
        let mut escaped = String::new();
        for line in text.trim_matches('\n').split('\n') {
            escaped.clear();
            escape(line, &mut escaped);
            writeln!(out, "# {RAW_KEY} = {escaped}")?;
        }
        if truncated {
            writeln!(
                out,
                "# {TRUNCATED_KEY} = yes: the sentence is longer than the limit; the input file has it whole"
            )?;
        }
        let deps = if self.enhanced { "0:root" } else { "_" };
        writeln!(out, "1\t_\t_\tX\t_\t_\t0\troot\t{deps}\t{PLACEHOLDER_MISC}\n")
    }
}

/// The raw text (lines joined by newlines, with a final newline) an unparsed sentence
/// carries; `None` if `sent` is not one.
pub fn raw_text(sent: &Sentence) -> Option<String> {
    let prefix = format!("# {RAW_KEY} = ");
    let mut text = String::new();
    let mut found = false;
    for c in &sent.comments {
        if let Some(line) = c.strip_prefix(&prefix) {
            unescape(line, &mut text);
            text.push('\n');
            found = true;
        }
    }
    found.then_some(text)
}

/// Escapes backslashes and control characters (tab, CR, …) so that any line fits in a comment,
/// and U+FFFD (what a reader makes of invalid UTF-8), which the UD validator refuses anywhere in
/// a file, as `\ufffd`.
fn escape(line: &str, out: &mut String) {
    for c in line.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            char::REPLACEMENT_CHARACTER => out.push_str("\\ufffd"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// The inverse of [`escape`]; an escape it does not know is kept as it is.
fn unescape(line: &str, out: &mut String) {
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('n') => out.push('\n'),
            Some('u') if chars.as_str().starts_with("fffd") => {
                chars.by_ref().take(4).for_each(drop);
                out.push(char::REPLACEMENT_CHARACTER);
            }
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                match u8::from_str_radix(&hex, 16) {
                    Ok(b) => out.push(b as char),
                    Err(_) => {
                        out.push_str("\\x");
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Format, Reader};
    use proptest::prelude::*;

    fn read_back(written: &[u8]) -> Sentence {
        let mut reader = Reader::new(written, std::path::Path::new("out"), Format::Conllu);
        let sent = reader.next().expect("a sentence").expect("valid CoNLL-U");
        assert!(reader.next().is_none());
        sent
    }

    #[test]
    fn an_unparsed_sentence_is_valid_conllu_and_gives_back_its_text() {
        let text = "# sent_id = 1\n1\ta\t_\n2\tb\\c\t_\tX\r\n\n";
        let mut out = Vec::new();
        write(&mut out, "in:2: expected 10 tab-separated columns,\nfound 3", text, false).unwrap();
        let sent = read_back(&out);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent.comments[..2], ["# sent_id = 1", "# text = _"]);
        assert_eq!(sent.comments[2], "# spoolparse_error = in:2: expected 10 tab-separated columns, found 3");
        assert_eq!(raw_text(&sent).as_deref(), Some(text.trim_end_matches('\n')).map(|t| format!("{t}\n")).as_deref());
    }

    #[test]
    fn a_placeholder_keeps_the_inputs_sent_id_as_a_comment_else_takes_the_one_given() {
        let first = |text: &str, sent_id: Option<&str>| {
            let mut out = Vec::new();
            Placeholder { sent_id, enhanced: false }.write(&mut out, "why", text, false).unwrap();
            read_back(&out).comments[0].clone()
        };
        assert_eq!(first("# text = a\n#sent_id=s7\r\n1\ta\n", Some("f-3")), "#sent_id=s7");
        assert_eq!(first("# text = a\n1\ta\n", Some("f-3")), "# sent_id = f-3");
        assert_eq!(first("1\ta\n", None), "# text = _");
        assert!(has_enhanced_deps("# c\n1\ta\t_\t_\t_\t_\t0\troot\t0:root\t_\n") && !has_enhanced_deps("1\ta\t_\n"));
    }

    proptest! {
        #[test]
        fn any_line_survives_the_trip_through_comments(lines in prop::collection::vec("[^\n]{0,40}", 1..5)) {
            let lines: Vec<String> = lines.into_iter().filter(|l| !l.is_empty()).collect();
            prop_assume!(!lines.is_empty());
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let mut out = Vec::new();
            write(&mut out, "why", &text, true).unwrap();
            let sent = read_back(&out);
            prop_assert_eq!(raw_text(&sent), Some(text));
        }
    }
}
