//! The text that CoNLL-U written from raw text holds: whitespace and raw forms as MISC values
//! (written and read back), and the raw text recovered from sentences ([`recover_text`]).

use crate::corpus::{Column, Sentence, TokenKind, TokenLine};

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

/// Appends a token line's characters as the text had them: its `RawForm=`, else its form.
fn raw_form(line: &TokenLine, out: &mut String) {
    match line.get(Column::Misc).split('|').find_map(|e| e.strip_prefix("RawForm=")) {
        Some(raw) => unescape(raw, out),
        None => out.push_str(line.get(Column::Form)),
    }
}

/// The raw text that CoNLL-U written from raw text holds (see the module comment): for a
/// round-trip check, and for whoever wants the text back.
pub fn recover_text<'s>(sentences: impl IntoIterator<Item = &'s Sentence>) -> String {
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
            raw_form(line, &mut out);
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

    /// The span `(start, end)` in characters of the token of `line` (a word's or a multiword
    /// token's range line: the words inside a range are not tokens of the text), found next
    /// in the text.
    pub fn find(&mut self, line: &TokenLine) -> Result<(usize, usize), LocateError> {
        self.raw.clear();
        raw_form(line, &mut self.raw);
        self.skip_space();
        if self.raw.is_empty() || !self.text[self.byte..].starts_with(self.raw.as_str()) {
            let found = self.excerpt(self.byte, self.raw.chars().count() + 10);
            return Err(LocateError::Missing { token: self.raw.clone(), at: self.chars, found });
        }
        let start = self.chars;
        self.byte += self.raw.len();
        self.chars += self.raw.chars().count();
        Ok((start, self.chars))
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
