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
