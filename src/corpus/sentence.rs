//! One sentence in memory ([`Sentence`]): its comment and token lines ([`TokenLine`]), kept
//! verbatim and refilled in place, and the edits parsing and tagging make to them (HEAD and
//! DEPREL, tags, MISC entries, comments), every other byte left as it was. This module owns the
//! lines of one sentence; it must not read files (that is [`super::reader`]).

use std::io::{self, Write};

use super::error::{BadToken, ErrorKind};
use super::format::{check_value, parse_head, Column, TokenKind, COLUMNS};

/// Whether `c` is a space separator (Unicode category Zs): a FORM of these alone is empty to
/// the CoNLL 2018 evaluator, which deletes them from forms before comparing.
pub fn is_space_separator(c: char) -> bool {
    matches!(c, ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}')
}

/// Bytes reserved on a token line beyond its input text, for the parser's changes.
const LINE_HEADROOM: usize = 24;

/// One token line, kept verbatim with the offsets of its tab separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenLine {
    text: String,
    /// Byte offsets of the nine tabs.
    tabs: [u32; COLUMNS - 1],
    pub(super) kind: TokenKind,
}

impl TokenLine {
    /// Replaces this line with `text`, split into ten columns, reusing the allocation.
    fn fill(&mut self, text: &str, kind_of: fn(&str) -> Option<TokenKind>) -> Result<(), ErrorKind> {
        let mut found = 0usize;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\t' {
                if found < self.tabs.len() {
                    self.tabs[found] = i as u32;
                }
                found += 1;
            }
        }
        if found != COLUMNS - 1 {
            return Err(ErrorKind::ColumnCount { found: found + 1 });
        }
        let id = &text[..self.tabs[0] as usize];
        self.kind = kind_of(id).ok_or_else(|| ErrorKind::BadId(id.to_string()))?;
        // A token without a form is no token (the CoNLL 2018 evaluator refuses the whole file);
        // empty nodes are no tokens, so theirs is left alone.
        let form = &text[self.tabs[0] as usize + 1..self.tabs[1] as usize];
        if self.kind != TokenKind::Empty && form.chars().all(is_space_separator) {
            return Err(ErrorKind::EmptyForm);
        }
        self.text.clear();
        // Room for what parsing writes (HEAD, DEPREL, `Conf=…` in MISC) without a reallocation.
        self.text.reserve(text.len() + LINE_HEADROOM);
        self.text.push_str(text);
        Ok(())
    }

    /// The line's kind (word, range or empty node).
    pub fn kind(&self) -> TokenKind {
        self.kind
    }

    /// The verbatim line, without its newline.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn bounds(&self, col: Column) -> (usize, usize) {
        let c = col as usize;
        let start = if c == 0 { 0 } else { self.tabs[c - 1] as usize + 1 };
        let end = if c == COLUMNS - 1 { self.text.len() } else { self.tabs[c] as usize };
        (start, end)
    }

    /// The text of one column.
    pub fn get(&self, col: Column) -> &str {
        let (s, e) = self.bounds(col);
        &self.text[s..e]
    }

    /// Replaces the text of one column (which must not contain tabs or newlines).
    pub fn set(&mut self, col: Column, value: &str) {
        debug_assert!(!value.contains(['\t', '\n']));
        let (s, e) = self.bounds(col);
        self.text.replace_range(s..e, value);
        let delta = value.len() as i64 - (e - s) as i64;
        for t in self.tabs.iter_mut().skip(col as usize) {
            *t = (*t as i64 + delta) as u32;
        }
    }
}

/// One sentence: its comment lines and token lines, verbatim and in order.
#[derive(Debug, Clone, Default)]
pub struct Sentence {
    /// Comment lines (starting with `#`), without newlines.
    pub comments: Vec<String>,
    /// Token lines: the first `used` are this sentence's; the rest are kept from earlier
    /// contents for their allocations (a sentence is refilled in place, without moving lines).
    lines: Vec<TokenLine>,
    pub(super) used: usize,
    /// Index in `lines` of word ID `i + 1`.
    pub(super) words: Vec<u32>,
    /// Blank lines that followed the sentence in the input (normally 1).
    pub(super) blank_lines: u32,
    /// 1-based line number of the sentence's first line in its file.
    pub first_line: u64,
    /// Bytes of its lines as read.
    pub(super) bytes_read: usize,
    spare_comments: Vec<String>,
    /// Reused buffer for building column and comment values.
    scratch: String,
    /// How sure the tokenizer was of this sentence, when it made it from raw text (empty for
    /// text that came tokenized): never written, read by the confidence.
    pub tokenization: Tokenization,
}

/// The tokenizer's score margins behind a sentence it made: how far each decision's score was
/// above the next best's (a small margin is a near coin toss).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tokenization {
    /// Per word, the least margin among the decisions that made its token (its characters not
    /// ending a token, its last one ending it); empty for text that came tokenized.
    pub words: Vec<f32>,
    /// The least margin among the decisions where the sentence ends or a token inside it does
    /// (a sentence end taken or not); infinite when a paragraph ended it.
    pub sentence: f32,
}

impl PartialEq for Sentence {
    /// Sentences are equal when they would be written identically.
    fn eq(&self, other: &Self) -> bool {
        self.comments == other.comments
            && self.token_lines() == other.token_lines()
            && self.blank_lines == other.blank_lines
    }
}

impl Eq for Sentence {}

impl Sentence {
    /// Empties the sentence, keeping its allocations for the next one.
    pub fn clear(&mut self) {
        self.used = 0;
        self.spare_comments.append(&mut self.comments);
        self.words.clear();
        self.blank_lines = 0;
        self.first_line = 0;
        self.bytes_read = 0;
        self.tokenization.words.clear();
    }

    /// The next token line to fill, now counted as used: a kept one (with its allocation) or
    /// a new one.
    fn next_token(&mut self) -> &mut TokenLine {
        if self.used == self.lines.len() {
            self.lines.push(TokenLine { text: String::new(), tabs: [0; COLUMNS - 1], kind: TokenKind::Word });
        }
        self.used += 1;
        &mut self.lines[self.used - 1]
    }

    pub(super) fn push_comment(&mut self, text: &str) {
        let mut c = self.spare_comments.pop().unwrap_or_default();
        c.clear();
        c.push_str(text);
        self.comments.push(c);
    }

    pub(super) fn push_token(
        &mut self,
        text: &str,
        kind_of: fn(&str) -> Option<TokenKind>,
    ) -> Result<&TokenLine, ErrorKind> {
        self.next_token().fill(text, kind_of)?;
        let index = self.used - 1;
        if self.lines[index].kind == TokenKind::Word {
            self.words.push(index as u32);
        }
        Ok(&self.lines[index])
    }

    /// Number of syntactic words (integer IDs).
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Bytes of its lines as read (newlines included; 0 for a sentence not read by a
    /// [`Reader`](super::Reader)).
    pub fn bytes_read(&self) -> usize {
        self.bytes_read
    }

    /// True for a sentence without syntactic words.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The token line of word `id` (1-based, as in the file).
    pub fn word(&self, id: usize) -> &TokenLine {
        &self.lines[self.words[id - 1] as usize]
    }

    /// Iterates over the syntactic words in order.
    pub fn words(&self) -> impl ExactSizeIterator<Item = &TokenLine> + '_ {
        self.words.iter().map(move |&i| &self.lines[i as usize])
    }

    /// All token lines, including multiword ranges and empty nodes.
    pub fn token_lines(&self) -> &[TokenLine] {
        &self.lines[..self.used]
    }

    /// File line number of word `id`'s line (for error messages).
    pub fn line_of_word(&self, id: usize) -> u64 {
        self.first_line + self.comments.len() as u64 + u64::from(self.words[id - 1])
    }

    /// Writes HEAD and DEPREL of word `id`; every other byte stays as it was.
    pub fn set_attachment(&mut self, id: usize, head: usize, deprel: &str) {
        let line = &mut self.lines[self.words[id - 1] as usize];
        let mut buf = [0u8; 20];
        line.set(Column::Head, format_usize(head, &mut buf));
        line.set(Column::Deprel, deprel);
    }

    /// Sets `Key=value` in the MISC column of word `id`, replacing an earlier value of `Key`
    /// and keeping every other entry.
    pub fn set_misc(&mut self, id: usize, key: &str, value: &str) {
        let line = &mut self.lines[self.words[id - 1] as usize];
        let misc = line.get(Column::Misc);
        let mut updated = std::mem::take(&mut self.scratch);
        updated.clear();
        if misc != "_" && !misc.is_empty() {
            for entry in misc.split('|').filter(|e| e.split_once('=').map_or(*e, |(k, _)| k) != key) {
                updated.push_str(entry);
                updated.push('|');
            }
        }
        updated.push_str(key);
        updated.push('=');
        updated.push_str(value);
        line.set(Column::Misc, &updated);
        self.scratch = updated;
    }

    /// Sets the comment `# key = value`, replacing an earlier one with the same key.
    pub fn set_comment(&mut self, key: &str, value: &str) {
        let is_key =
            |c: &str| c.strip_prefix("# ").and_then(|r| r.strip_prefix(key)).is_some_and(|r| r.starts_with(" ="));
        let slot = match self.comments.iter().position(|c| is_key(c)) {
            Some(i) => i,
            None => {
                let c = self.spare_comments.pop().unwrap_or_default();
                self.comments.push(c);
                self.comments.len() - 1
            }
        };
        let c = &mut self.comments[slot];
        c.clear();
        c.push_str("# ");
        c.push_str(key);
        c.push_str(" = ");
        c.push_str(value);
    }

    /// The value of the first comment `# key = value` (or `# key value`), trimmed, if non-empty.
    pub fn comment(&self, key: &str) -> Option<&str> {
        let value = self.comments.iter().find_map(|c| {
            let rest = c.strip_prefix('#')?.trim_start().strip_prefix(key)?;
            rest.starts_with([' ', '=']).then(|| rest.trim_start_matches([' ', '=']))
        });
        value.map(str::trim).filter(|v| !v.is_empty())
    }

    /// Turns a sentence read as CoNLL-X into CoNLL-U: DEPS becomes `_`, and PHEAD/PDEPREL,
    /// when given, move into MISC as `PHEAD=…|PDEPREL=…` so that nothing is lost.
    pub fn conllx_to_conllu(&mut self) {
        let mut misc = std::mem::take(&mut self.scratch);
        for t in &mut self.lines[..self.used] {
            let (phead, pdeprel) = (t.get(Column::Deps), t.get(Column::Misc));
            misc.clear();
            if phead != "_" || pdeprel != "_" {
                misc.push_str("PHEAD=");
                misc.push_str(phead);
                misc.push_str("|PDEPREL=");
                misc.push_str(pdeprel);
            } else {
                misc.push('_');
            }
            t.set(Column::Misc, &misc);
            t.set(Column::Deps, "_");
        }
        self.scratch = misc;
    }

    /// Writes UPOS and XPOS of word `id`.
    pub fn set_tags(&mut self, id: usize, upos: &str, xpos: &str) {
        let line = &mut self.lines[self.words[id - 1] as usize];
        line.set(Column::Upos, upos);
        line.set(Column::Xpos, xpos);
    }

    /// Writes one column of word `id` (a value without tabs or newlines).
    pub fn set_column(&mut self, id: usize, col: Column, value: &str) {
        self.lines[self.words[id - 1] as usize].set(col, value);
    }

    /// Replaces the sentence with the tokens of one line of tokenized text: a `# text` comment
    /// and one CoNLL-U word line per token, every column but ID and FORM `_`.
    pub(super) fn fill_from_text(&mut self, line: &str, line_no: u64) {
        self.clear();
        self.first_line = line_no;
        self.blank_lines = 1;
        let mut comment = self.spare_comments.pop().unwrap_or_default();
        comment.clear();
        comment.push_str("# text =");
        for token in line.split_whitespace() {
            comment.push(' ');
            comment.push_str(token);
        }
        self.comments.push(comment);
        for token in line.split_whitespace() {
            self.push_word(token);
        }
    }

    /// Replaces the sentence with CoNLL-U lines built in memory (`text`: comment lines, then
    /// token lines, each ending in a newline), as the raw-text reader builds them. Token lines
    /// are checked as a reader checks them (ten columns, a known ID, a form).
    pub fn fill_from_conllu_lines(&mut self, text: &str) -> Result<(), ErrorKind> {
        self.clear();
        self.blank_lines = 1;
        self.bytes_read = text.len();
        for line in text.lines() {
            if line.starts_with('#') {
                self.push_comment(line);
            } else {
                self.push_token(line, super::conllu::token_kind)?;
            }
        }
        Ok(())
    }

    /// Appends a word line with ID and FORM `form`, every other column `_`.
    fn push_word(&mut self, form: &str) {
        let mut buf = [0u8; 20];
        let id = self.words.len() + 1;
        self.words.push(self.used as u32);
        let t = self.next_token();
        t.text.clear();
        t.text.push_str(format_usize(id, &mut buf));
        t.text.push('\t');
        t.text.push_str(form);
        t.text.push_str("\t_\t_\t_\t_\t_\t_\t_\t_");
        let mut tabs = t.text.bytes().enumerate().filter(|&(_, b)| b == b'\t').map(|(i, _)| i as u32);
        for slot in t.tabs.iter_mut() {
            *slot = tabs.next().unwrap_or(0);
        }
        t.kind = TokenKind::Word;
    }

    /// Replaces the sentence with one CoNLL-U word per token of `forms`, every column but ID
    /// and FORM `_`, and no comment: a sentence built in memory. A token must be a valid
    /// column value (see [`check_value`]).
    pub fn fill_from_tokens<S: AsRef<str>>(&mut self, forms: &[S]) -> Result<(), BadToken> {
        self.clear();
        self.blank_lines = 1;
        for (i, form) in forms.iter().enumerate() {
            check_value(form.as_ref()).map_err(|problem| BadToken { index: i, problem })?;
            self.push_word(form.as_ref());
        }
        Ok(())
    }

    /// Parses the HEAD column of every word; `Ok(None)` when any is `_` (unparsed input).
    pub fn heads(&self) -> Result<Option<Vec<usize>>, (u64, ErrorKind)> {
        let mut heads = Vec::with_capacity(self.len());
        for id in 1..=self.len() {
            match parse_head(self.word(id).get(Column::Head), self.len()) {
                Ok(Some(h)) => heads.push(h),
                Ok(None) => return Ok(None),
                Err(e) => return Err((self.line_of_word(id), e)),
            }
        }
        Ok(Some(heads))
    }

    /// Checks that every HEAD is `_` or a word index in range, without allocating.
    pub fn check_heads(&self) -> Result<(), (u64, ErrorKind)> {
        for id in 1..=self.len() {
            parse_head(self.word(id).get(Column::Head), self.len()).map_err(|e| (self.line_of_word(id), e))?;
        }
        Ok(())
    }

    /// Writes the sentence followed by its blank line(s).
    pub fn write_to<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        for c in &self.comments {
            out.write_all(c.as_bytes())?;
            out.write_all(b"\n")?;
        }
        for t in &self.lines[..self.used] {
            out.write_all(t.text.as_bytes())?;
            out.write_all(b"\n")?;
        }
        for _ in 0..self.blank_lines.max(1) {
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// Formats `n` in decimal into `buf` without allocating.
fn format_usize(mut n: usize, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&buf[i..]).unwrap_or_default()
}

#[cfg(test)]
impl Sentence {
    /// A test sentence of words given as FORM, LEMMA, UPOS, XPOS and FEATS (`_` for none),
    /// without a tree.
    pub(crate) fn of_words(words: &[[&str; 5]]) -> Sentence {
        let text: String = words
            .iter()
            .enumerate()
            .map(|(i, [f, l, u, x, feats])| format!("{}\t{f}\t{l}\t{u}\t{x}\t{feats}\t_\t_\t_\t_\n", i + 1))
            .collect();
        let mut sent = Sentence::default();
        sent.fill_from_conllu_lines(&text).expect("a test sentence");
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_is_read_by_its_key_with_or_without_an_equals_sign_and_empty_is_none() {
        let mut sent = Sentence::default();
        for c in ["# sent_idx = other", "# sent_id = a-1", "#text=Hi there ", "# newpar", "# confidence 0.91"] {
            sent.push_comment(c);
        }
        sent.set_comment("empty", "");
        assert_eq!(sent.comment("sent_id"), Some("a-1"));
        assert_eq!(sent.comment("text"), Some("Hi there"));
        assert_eq!(sent.comment("confidence"), Some("0.91"));
        assert_eq!((sent.comment("newpar"), sent.comment("empty"), sent.comment("missing")), (None, None, None));
        sent.set_comment("sent_id", "a-2");
        assert_eq!(sent.comment("sent_id"), Some("a-2"));
    }
}
