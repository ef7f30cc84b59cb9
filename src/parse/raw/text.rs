//! The text that CoNLL-U written from raw text holds: whitespace and raw forms as MISC values
//! (written and read back), and the raw text recovered from sentences ([`recover_text`]).

use crate::corpus::Sentence;

/// Writes whitespace as a MISC value (see the parent module's comment).
pub(super) fn escape(space: &[char], out: &mut String) {
    use std::fmt::Write as _;
    for &c in space {
        match c {
            ' ' => out.push_str("\\s"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '|' => out.push_str("\\p"),
            '\\' => out.push_str("\\\\"),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
}

/// Writes a form as a MISC value: printable ASCII as it is (but `\\` and `|`), everything
/// else as `\u{X}`.
pub(super) fn escape_all(form: &[char], out: &mut String) {
    use std::fmt::Write as _;
    for &c in form {
        match c {
            '|' => out.push_str("\\p"),
            '\\' => out.push_str("\\\\"),
            c if c.is_ascii_graphic() => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
}

/// The inverse of [`escape`] and [`escape_all`].
fn unescape(value: &str, out: &mut String) {
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('s') => out.push(' '),
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('p') => out.push('|'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let hex: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    out.push(c);
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
}

/// The raw text that CoNLL-U written from raw text holds (see the module comment): for a
/// round-trip check, and for whoever wants the text back.
pub fn recover_text<'s>(sentences: impl IntoIterator<Item = &'s Sentence>) -> String {
    use crate::corpus::{Column, TokenKind};
    let mut out = String::new();
    for sent in sentences {
        let mut skip_until = 0usize;
        for line in sent.token_lines() {
            let id = line.get(Column::Id);
            match line.kind() {
                TokenKind::Empty => continue,
                TokenKind::Word if id.parse::<usize>().is_ok_and(|n| n <= skip_until) => continue,
                TokenKind::Range => {
                    skip_until = id.split_once('-').and_then(|(_, b)| b.parse().ok()).unwrap_or(0);
                }
                TokenKind::Word => {}
            }
            let misc = line.get(Column::Misc);
            let entry = |key: &str| misc.split('|').find_map(|e| e.strip_prefix(key));
            if let Some(before) = entry("SpacesBefore=") {
                unescape(before, &mut out);
            }
            match entry("RawForm=") {
                Some(raw) => unescape(raw, &mut out),
                None => out.push_str(line.get(Column::Form)),
            }
            match entry("SpacesAfter=") {
                Some(after) => unescape(after, &mut out),
                None if misc.split('|').any(|e| e == "SpaceAfter=No") => {}
                None => out.push(' '),
            }
        }
    }
    out
}

/// Why a sentence's tokens could not be found in the text it was said to come from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocateError {
    /// A token is not next in the text (past whitespace).
    #[error("token {token:?} is not in the text at character {at} (the text has {found:?} there)")]
    Missing { token: String, at: usize, found: String },
    /// The text goes on after the last token.
    #[error("the text goes on after the last token, at character {at} ({found:?})")]
    Leftover { at: usize, found: String },
}

/// Finds the tokens of sentences written from raw text ([`crate::parse::raw`]) in that text,
/// in order: each token (its `RawForm=` where it has one, else its form) must come next, past
/// whitespace as the tokenizer takes it ([`crate::model::tokenizer::is_space`]). Offsets are
/// in characters (Unicode scalar values), as Python indexes a `str`.
pub struct TokenLocator<'t> {
    text: &'t str,
    /// Where the last token found ended, in bytes and in characters.
    byte: usize,
    chars: usize,
    raw: String,
}

impl<'t> TokenLocator<'t> {
    /// A locator at the start of `text`.
    pub fn new(text: &'t str) -> Self {
        TokenLocator { text, byte: 0, chars: 0, raw: String::new() }
    }

    /// The text at most `n` characters long from byte `at`, for messages.
    fn excerpt(&self, at: usize, n: usize) -> String {
        self.text[at..].chars().take(n).collect()
    }

    /// Moves past whitespace.
    fn skip_space(&mut self) {
        for c in self.text[self.byte..].chars() {
            if !crate::model::tokenizer::is_space(c) {
                break;
            }
            self.byte += c.len_utf8();
            self.chars += 1;
        }
    }

    /// The span `(start, end)` in characters of each token line of `sent` (as
    /// [`Sentence::token_lines`] lists them): the words of a multiword token have its range's,
    /// an empty node `None`.
    pub fn locate(&mut self, sent: &Sentence) -> Result<Vec<Option<(usize, usize)>>, LocateError> {
        use crate::corpus::{Column, TokenKind};
        let mut spans = Vec::with_capacity(sent.token_lines().len());
        let mut range: Option<(usize, (usize, usize))> = None;
        for line in sent.token_lines() {
            let id = line.get(Column::Id);
            match line.kind() {
                TokenKind::Empty => {
                    spans.push(None);
                    continue;
                }
                TokenKind::Word => {
                    if let Some((last, span)) = range.filter(|&(last, _)| id.parse::<usize>().is_ok_and(|n| n <= last))
                    {
                        spans.push(Some(span));
                        if id.parse::<usize>().is_ok_and(|n| n == last) {
                            range = None;
                        }
                        continue;
                    }
                }
                TokenKind::Range => {}
            }
            let misc = line.get(Column::Misc);
            self.raw.clear();
            match misc.split('|').find_map(|e| e.strip_prefix("RawForm=")) {
                Some(raw) => unescape(raw, &mut self.raw),
                None => self.raw.push_str(line.get(Column::Form)),
            }
            self.skip_space();
            if self.raw.is_empty() || !self.text[self.byte..].starts_with(self.raw.as_str()) {
                let found = self.excerpt(self.byte, self.raw.chars().count() + 10);
                return Err(LocateError::Missing { token: self.raw.clone(), at: self.chars, found });
            }
            let start = self.chars;
            self.byte += self.raw.len();
            self.chars += self.raw.chars().count();
            let span = (start, self.chars);
            if line.kind() == TokenKind::Range {
                let last = id.split_once('-').and_then(|(_, b)| b.parse().ok()).unwrap_or(0);
                range = Some((last, span));
            }
            spans.push(Some(span));
        }
        Ok(spans)
    }

    /// Checks that nothing but whitespace follows the last token found.
    pub fn finish(mut self) -> Result<(), LocateError> {
        self.skip_space();
        match self.byte < self.text.len() {
            true => Err(LocateError::Leftover { at: self.chars, found: self.excerpt(self.byte, 20) }),
            false => Ok(()),
        }
    }
}
