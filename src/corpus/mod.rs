//! Corpus formats: streaming, lossless reading and writing of ten-column dependency files.
//!
//! CoNLL-U ([`conllu`]) and CoNLL-X ([`conllx`]) share one record layout (ID FORM LEMMA
//! UPOS/CPOSTAG XPOS/POSTAG FEATS HEAD DEPREL DEPS/PHEAD MISC/PDEPREL) and differ in which IDs
//! and lines they admit. A [`Sentence`] keeps every input line verbatim, so writing it back
//! without changes reproduces the input byte for byte (with lines ending in LF: a CR before
//! the LF is read as part of the line ending, and a byte order mark at the start of the file is
//! dropped); the parser only rewrites HEAD and DEPREL of syntactic words. [`shard`] finds where a large file may be split between sentences.
//! This module owns syntax and location-bearing errors; it must not know about transition
//! systems or models.

pub mod conllu;
pub mod conllx;
pub mod shard;
pub mod tree;
pub mod unparsed;

use std::fmt;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use crate::base::io::open_input;

/// Which ten-column dialect a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Universal Dependencies CoNLL-U: comments, multiword tokens, empty nodes.
    Conllu,
    /// CoNLL-X (2006): integer IDs only, PHEAD/PDEPREL in the last two columns.
    Conllx,
    /// Tokenized text: one sentence per line, tokens separated by whitespace; read into
    /// CoNLL-U sentences (and so written as CoNLL-U).
    Text,
}

impl Format {
    /// Guesses the format from a file name (`.conllx`, `.conll`, `.txt`, optionally `.zst`);
    /// CoNLL-U otherwise.
    pub fn from_path(path: &Path) -> Format {
        Format::from_extension(path).unwrap_or(Format::Conllu)
    }

    /// The format a file name's extension names (`.conllu`, `.conllx`, `.conll`, `.txt`,
    /// each optionally followed by `.zst`), or `None` for any other name.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let name = name.strip_suffix(".zst").unwrap_or(name);
        if name.ends_with(".conllx") || name.ends_with(".conll") {
            Some(Format::Conllx)
        } else if name.ends_with(".txt") {
            Some(Format::Text)
        } else if name.ends_with(".conllu") {
            Some(Format::Conllu)
        } else {
            None
        }
    }
}

/// The ten columns, in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Id = 0,
    Form,
    Lemma,
    /// UPOS in CoNLL-U, CPOSTAG in CoNLL-X.
    Upos,
    /// XPOS in CoNLL-U, POSTAG in CoNLL-X.
    Xpos,
    Feats,
    Head,
    Deprel,
    /// DEPS in CoNLL-U, PHEAD in CoNLL-X.
    Deps,
    /// MISC in CoNLL-U, PDEPREL in CoNLL-X.
    Misc,
}

/// Number of tab-separated columns on a token line.
pub const COLUMNS: usize = 10;

/// What an ID column says a token line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A syntactic word with an integer ID: the unit of parsing and evaluation.
    Word,
    /// A multiword-token range `n-m`: carried through, never parsed.
    Range,
    /// An empty node `n.k` of the enhanced graph: carried through, never parsed.
    Empty,
}

/// Bytes reserved on a token line beyond its input text, for the parser's changes.
const LINE_HEADROOM: usize = 24;

/// One token line, kept verbatim with the offsets of its tab separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenLine {
    text: String,
    /// Byte offsets of the nine tabs.
    tabs: [u32; COLUMNS - 1],
    kind: TokenKind,
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
    used: usize,
    /// Index in `lines` of word ID `i + 1`.
    words: Vec<u32>,
    /// Blank lines that followed the sentence in the input (normally 1).
    blank_lines: u32,
    /// 1-based line number of the sentence's first line in its file.
    pub first_line: u64,
    /// Bytes of its lines as read.
    bytes_read: usize,
    spare_comments: Vec<String>,
    /// Reused buffer for building column and comment values.
    scratch: String,
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

    fn push_comment(&mut self, text: &str) {
        let mut c = self.spare_comments.pop().unwrap_or_default();
        c.clear();
        c.push_str(text);
        self.comments.push(c);
    }

    fn push_token(&mut self, text: &str, kind_of: fn(&str) -> Option<TokenKind>) -> Result<&TokenLine, ErrorKind> {
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

    /// Bytes of its lines as read (newlines included; 0 for a sentence not read by a [`Reader`]).
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

    /// Replaces the sentence with the tokens of one line of tokenized text: a `# text` comment
    /// and one CoNLL-U word line per token, every column but ID and FORM `_`.
    fn fill_from_text(&mut self, line: &str, line_no: u64) {
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

/// Whether `value` can stand in a column: not empty, and without tabs or line breaks (spaces
/// are allowed: UD forms may have them). Returns what is wrong otherwise.
pub fn check_value(value: &str) -> Result<(), &'static str> {
    if value.is_empty() {
        Err("empty (write `_` for no value)")
    } else if value.contains(['\t', '\n', '\r']) {
        Err("contains a tab or a line break")
    } else if value.contains('\0') {
        // Written out, it would make the file binary data to every reader, ours included.
        Err("contains a NUL byte")
    } else {
        Ok(())
    }
}

/// A token that cannot be a CoNLL-U column value.
#[derive(Debug, Clone, thiserror::Error)]
#[error("token {}: {problem}", index + 1)]
pub struct BadToken {
    /// 0-based position of the token in its sentence.
    pub index: usize,
    /// What is wrong with it.
    pub problem: &'static str,
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

/// Parses a HEAD value: `_` is `None`; otherwise an integer in `0..=len`.
pub fn parse_head(text: &str, len: usize) -> Result<Option<usize>, ErrorKind> {
    if text == "_" {
        return Ok(None);
    }
    let h: usize = text.parse().map_err(|_| ErrorKind::BadHead(text.to_string()))?;
    if h > len {
        return Err(ErrorKind::HeadOutOfRange { head: h, words: len });
    }
    Ok(Some(h))
}

/// What is wrong with a line or sentence.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    /// Reading failed (the message says how: [`crate::base::io::open_input`] words zstd failures).
    #[error("{0}")]
    Io(io::Error),
    #[error(
        "invalid UTF-8: input must be UTF-8 (convert a file in another encoding, such as Latin-1, e.g. with iconv)"
    )]
    InvalidUtf8,
    #[error("a NUL byte: this is binary data, not {0}")]
    Binary(Format),
    /// The file starts like a compressed file in a format other than zstd.
    #[error(
        "{what}-compressed data, not {format}: decompress it first (zstd files, named .zst, are read as they are)"
    )]
    Compressed { format: Format, what: &'static str },
    #[error("not {format}: no token line has 10 tab-separated columns ({lines} read; line {line}: {first})")]
    NotThisFormat { format: Format, lines: u64, line: u64, first: String },
    #[error("line longer than {limit} bytes (the sentence size limit)")]
    LineTooLong { limit: usize },
    #[error("sentence longer than {limit} bytes (the sentence size limit)")]
    SentenceTooLong { limit: usize },
    #[error("sentence of more than {limit} words (the sentence length limit)")]
    TooManyWords { limit: usize },
    #[error("expected 10 tab-separated columns, found {found}")]
    ColumnCount { found: usize },
    #[error("invalid ID {0:?}")]
    BadId(String),
    #[error("word ID {found} out of sequence (expected {expected})")]
    IdSequence { expected: usize, found: String },
    #[error("invalid HEAD {0:?} (expected an integer or `_`)")]
    BadHead(String),
    #[error("HEAD {head} out of range: the sentence has {words} words")]
    HeadOutOfRange { head: usize, words: usize },
    #[error("missing HEAD (`_`) in a file that must be annotated")]
    MissingHead,
    #[error("word {word} is its own ancestor: the gold tree has a cycle")]
    Cycle { word: usize },
    #[error("words {first} and {second} both have HEAD 0: a tree has one root word")]
    SeveralRoots { first: usize, second: usize },
    #[error("the file ends inside a sentence (no blank line after its last token line)")]
    UnterminatedSentence,
    /// The file ends after comment lines that no token line follows.
    #[error(
        "the file ends with comment lines and no sentence after them (a comment belongs to the sentence it precedes)"
    )]
    CommentsAtEnd,
    #[error("comment line after a token line inside a sentence")]
    MisplacedComment,
    #[error("sentence without any word")]
    NoWords,
    /// Pseudo-projective lifting refused the tree.
    #[error("cannot projectivize the tree: {0}")]
    Unliftable(String),
    /// A gold DEPREL holds `↑` or `↓`, which pseudo-projective labels are made of: trained on,
    /// it would be lowered as a lifted arc at parse time (or refused, if the tree is lifted).
    #[error(
        "word {word}'s DEPREL {deprel} contains ↑ or ↓, which spoolparse reserves for its pseudo-projective \
         labels: write the plain relation (e.g. {base})"
    )]
    ReservedMark { word: usize, deprel: String, base: String },
}

impl ErrorKind {
    /// True for errors after which nothing more of the file can be read: the file as a whole
    /// is unreadable (I/O or decompression failure, invalid UTF-8), not just one sentence.
    pub fn is_unreadable(&self) -> bool {
        matches!(
            self,
            ErrorKind::Io(_)
                | ErrorKind::InvalidUtf8
                | ErrorKind::Binary(_)
                | ErrorKind::Compressed { .. }
                | ErrorKind::NotThisFormat { .. }
        )
    }
}

impl From<io::Error> for ErrorKind {
    // Not `#[from]`: that would also make the I/O error the `source`, and error chains would
    // print it twice.
    fn from(e: io::Error) -> Self {
        ErrorKind::Io(e)
    }
}

/// An error in a corpus file, located by file and line (`FILE:LINE: problem`, or
/// `FILE: problem` for the file as a whole).
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {kind}", path.display(), Location(*line))]
pub struct CorpusError {
    /// The file, as given by the user (`-` for stdin).
    pub path: PathBuf,
    /// 1-based line number; 0 when the error concerns the whole file (it cannot be opened,
    /// its compression is broken).
    pub line: u64,
    /// What is wrong there.
    pub kind: ErrorKind,
}

impl CorpusError {
    /// The message with the file called `name` instead of by its path (`NAME:LINE: problem`).
    pub fn with_name(&self, name: &str) -> String {
        format!("{name}{}: {}", Location(self.line), self.kind)
    }
}

/// `:LINE`, or nothing for line 0 (the whole file).
struct Location(u64);

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => Ok(()),
            line => write!(f, ":{line}"),
        }
    }
}

/// How large a sentence may be. Input beyond these is a malformed sentence, skipped without
/// being held in memory, so that memory stays bounded whatever the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Syntactic words per sentence.
    pub max_words: usize,
    /// Bytes per sentence (and so per line), newlines included.
    pub max_bytes: usize,
}

impl Limits {
    /// No limit: for trusted input such as training treebanks.
    pub const NONE: Limits = Limits { max_words: usize::MAX, max_bytes: usize::MAX };
}

impl Default for Limits {
    /// 1,000 words and 1 MiB: far above any treebank sentence (en_ewt's longest has 159
    /// words), far below what would strain memory or the parser.
    fn default() -> Self {
        Limits { max_words: 1000, max_bytes: 1 << 20 }
    }
}

/// A CoNLL file in which no sentence could be read and none of the first this many token
/// lines (all of them, in a shorter file) has 10 columns is taken to be in another format, or
/// no corpus at all: it fails as a whole instead of becoming malformed sentences.
pub const NOT_THIS_FORMAT_AFTER: u64 = 100;

/// The UTF-8 byte order mark, which some editors write at the start of a file.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// The compression format a file starting with `head` is in, by its magic bytes, for those
/// people are likely to hand over instead of zstd: named in the error, where "binary data"
/// would leave them guessing.
fn compressed(head: &[u8]) -> Option<&'static str> {
    match head {
        [0x1f, 0x8b, ..] => Some("gzip"),
        [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => Some("xz"),
        // "BZh", the block size digit and the first block's magic (π in BCD): text may start "BZh".
        [b'B', b'Z', b'h', b'1'..=b'9', 0x31, 0x41, 0x59, 0x26, 0x53, 0x59, ..] => Some("bzip2"),
        [b'P', b'K', 3, 4, ..] => Some("zip"),
        _ => None,
    }
}

/// Streams [`Sentence`]s out of a ten-column file.
///
/// After an error inside a sentence the reader skips to the next blank line, so the caller may
/// report the error and go on with the rest of the file. Lines and sentences beyond
/// [`Limits`] are errors too, and are skipped without being held in memory.
pub struct Reader<R> {
    input: R,
    path: PathBuf,
    format: Format,
    limits: Limits,
    line_no: u64,
    buf: Vec<u8>,
    /// Whether the last line read was part of a sentence (not blank, not the end): after an
    /// error there, the rest of that sentence must be skipped. An error found only once the
    /// sentence's closing blank line was read needs no skipping.
    in_sentence: bool,
    /// Bytes of the current sentence so far.
    sentence_bytes: usize,
    done: bool,
    /// With [`Reader::keep_text`]: the lines of the current sentence as read, up to
    /// [`Limits::max_bytes`].
    text: Option<String>,
    /// Lines of the current sentence were left out of `text` (it was too long).
    text_truncated: bool,
    /// An error met while skipping a bad sentence, reported by the next read.
    deferred: Option<CorpusError>,
    /// Sentences read well so far, and the first bad one's line and error.
    good: u64,
    first_bad: Option<(u64, String)>,
    /// Until a sentence was read well: lines that are not blank or comments, and whether one
    /// had ten columns (the file looks like CoNLL at all).
    token_lines: u64,
    looks_right: bool,
    /// Byte offset in `path` where the input starts (0 but for a shard of a file).
    start: u64,
    /// Lines of `path` before `start`, counted the first time an error needs them.
    lines_before: std::cell::OnceCell<u64>,
}

impl Reader<Box<dyn BufRead + Send>> {
    /// Opens `path` (`-`, plain or `.zst`) in `format`.
    pub fn open(path: &Path, format: Format) -> Result<Self, CorpusError> {
        let input =
            open_input(path).map_err(|e| CorpusError { path: path.to_path_buf(), line: 0, kind: ErrorKind::Io(e) })?;
        Ok(Reader::new(input, path, format))
    }

    /// Opens bytes `range` of the plain file `path` in `format`: a shard of it that starts at a
    /// sentence (see [`shard::shard_ranges`]). Errors give line numbers in the whole file.
    /// Sentences' [`Sentence::first_line`] count from the shard's first line.
    pub fn open_range(path: &Path, format: Format, range: std::ops::Range<u64>) -> Result<Self, CorpusError> {
        let start = range.start;
        let input = crate::base::io::open_input_range(path, range).map_err(|e| CorpusError {
            path: path.to_path_buf(),
            line: 0,
            kind: ErrorKind::Io(e),
        })?;
        let mut reader = Reader::new(input, path, format);
        reader.start = start;
        Ok(reader)
    }
}

impl<R: BufRead> Reader<R> {
    /// Reads `input`, naming it `path` in errors, without size limits.
    pub fn new(input: R, path: &Path, format: Format) -> Self {
        Reader {
            input,
            path: path.to_path_buf(),
            format,
            limits: Limits::NONE,
            line_no: 0,
            buf: Vec::new(),
            in_sentence: false,
            sentence_bytes: 0,
            done: false,
            text: None,
            text_truncated: false,
            deferred: None,
            good: 0,
            first_bad: None,
            token_lines: 0,
            looks_right: false,
            start: 0,
            lines_before: std::cell::OnceCell::new(),
        }
    }

    /// Keeps the text of each sentence as read, so that a malformed one can be passed on
    /// unparsed ([`Reader::sentence_text`]).
    pub fn keep_text(mut self) -> Self {
        self.text = Some(String::new());
        self
    }

    /// Refuses sentences beyond `limits` (as malformed sentences).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// With [`Reader::keep_text`], the lines (each with its newline) of the sentence last
    /// read, through the end of the bad part after an error; empty otherwise. At most
    /// [`Limits::max_bytes`]: see [`Reader::sentence_text_truncated`].
    pub fn sentence_text(&self) -> &str {
        self.text.as_deref().unwrap_or_default()
    }

    /// Whether lines of the sentence last read were left out of [`Reader::sentence_text`]
    /// because it was longer than the limit.
    pub fn sentence_text_truncated(&self) -> bool {
        self.text_truncated
    }

    /// The file name errors are reported against.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, line: u64, kind: ErrorKind) -> CorpusError {
        CorpusError { path: self.path.clone(), line: self.file_line(line), kind }
    }

    /// Line `line` of the input as a line of its file: they differ for a shard that does not
    /// start the file. Its lines before are counted only when an error needs them, as reading
    /// them costs what reading the shard does (if the file cannot be read for that, the line
    /// stays counted from the shard's start).
    fn file_line(&self, line: u64) -> u64 {
        if line == 0 || self.start == 0 {
            return line;
        }
        line + *self
            .lines_before
            .get_or_init(|| crate::base::io::count_lines_before(&self.path, self.start).unwrap_or(0))
    }

    /// Reads the next line into `self.buf` without its newline; `Ok(false)` at end of input.
    /// A line longer than the limit is consumed to its end but not kept: an error.
    fn next_line(&mut self) -> Result<bool, CorpusError> {
        self.buf.clear();
        let (mut any, mut overlong) = (false, false);
        let (at_start, format) = (self.line_no == 0 && self.start == 0, self.format);
        loop {
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // The whole file is unreadable from here: no line to point at (a line number
                // of decompressed text would only mislead).
                Err(e) => return Err(self.error(0, e.into())),
            };
            if available.is_empty() {
                break;
            }
            any = true;
            let (take, ends) = match memchr::memchr(b'\n', available) {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            let room = self.limits.max_bytes.saturating_sub(self.buf.len());
            if take <= room {
                self.buf.extend_from_slice(&available[..take]);
            } else {
                overlong = true;
                // Binary data may have no line feed at all (`/dev/zero`): said as it is seen.
                if memchr::memchr(0, &available[..take]).is_some() {
                    // Compressed data at the start of a file is named.
                    let kind = match compressed(&available[..take]).filter(|_| at_start) {
                        Some(what) => ErrorKind::Compressed { format, what },
                        None => ErrorKind::Binary(format),
                    };
                    self.input.consume(take);
                    self.line_no += 1;
                    self.in_sentence = false;
                    return Err(self.error(self.line_no, kind));
                }
            }
            self.input.consume(take);
            if ends {
                break;
            }
        }
        if !any {
            self.in_sentence = false;
            return Ok(false);
        }
        self.line_no += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        }
        // A byte order mark is no part of the first line (`start` is 0 for all but shards).
        if self.line_no == 1 && self.start == 0 && self.buf.starts_with(BOM) {
            self.buf.drain(..BOM.len());
        }
        // A line may also end in CR LF (files edited on Windows): the CR is no part of its last
        // column, and a line of a CR alone is blank. Lines are written back ending in LF.
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        self.in_sentence = overlong || !self.buf.is_empty();
        if overlong {
            self.buf.clear();
            self.text_truncated = true;
            return Err(self.error(self.line_no, ErrorKind::LineTooLong { limit: self.limits.max_bytes }));
        }
        if self.line_no == 1 && self.start == 0 {
            if let Some(what) = compressed(&self.buf) {
                return Err(self.error(1, ErrorKind::Compressed { format: self.format, what }));
            }
        }
        if memchr::memchr(0, &self.buf).is_some() {
            return Err(self.error(self.line_no, ErrorKind::Binary(self.format)));
        }
        let line = std::str::from_utf8(&self.buf).map_err(|_| self.error(self.line_no, ErrorKind::InvalidUtf8))?;
        if !self.looks_right && self.format != Format::Text && !line.is_empty() && !line.starts_with('#') {
            self.token_lines += 1;
            self.looks_right = memchr::memchr_iter(b'\t', line.as_bytes()).count() == COLUMNS - 1;
        }
        if self.in_sentence {
            self.sentence_bytes += line.len() + 1;
        }
        if let Some(text) = &mut self.text {
            if !(text.is_empty() && line.trim().is_empty()) {
                if text.len() + line.len() < self.limits.max_bytes {
                    text.push_str(line);
                    text.push('\n');
                } else {
                    self.text_truncated = true;
                }
            }
        }
        if self.sentence_bytes > self.limits.max_bytes {
            return Err(self.error(self.line_no, ErrorKind::SentenceTooLong { limit: self.limits.max_bytes }));
        }
        Ok(true)
    }

    /// The line last read by [`Reader::next_line`] (valid UTF-8 by then).
    fn line(&self) -> &str {
        std::str::from_utf8(&self.buf).unwrap_or_default()
    }

    /// Skips to just after the next blank line (or end of input). An error that ends reading
    /// (I/O, invalid UTF-8) is kept for the next call of [`Reader::read_next`]. Stops early in
    /// input that is not this format at all ([`NOT_THIS_FORMAT_AFTER`]): a stream without blank
    /// lines (`yes | spoolparse parse -`) would otherwise be skipped for ever.
    fn resync(&mut self) {
        if self.format == Format::Text {
            // A sentence is one line: the next line starts the next one.
            return;
        }
        while self.in_sentence {
            if self.good == 0 && !self.looks_right && self.token_lines >= NOT_THIS_FORMAT_AFTER {
                return;
            }
            match self.next_line() {
                Ok(_) => {}
                Err(e) if e.kind.is_unreadable() => {
                    self.deferred = Some(e);
                    return;
                }
                // Too long: skipped all the same.
                Err(_) => {}
            }
        }
    }

    /// Reads the next sentence into `sent`, reusing its allocations; `Ok(false)` at the end of
    /// the input. After an error, `sent` holds an unspecified part of the bad sentence.
    pub fn read_into(&mut self, sent: &mut Sentence) -> Result<bool, CorpusError> {
        sent.clear();
        if let Some(text) = &mut self.text {
            text.clear();
        }
        self.text_truncated = false;
        self.sentence_bytes = 0;
        // Skip blank lines before the sentence (tolerated, not reproduced).
        loop {
            if !self.next_line()? {
                return Ok(false);
            }
            let blank = match self.format {
                Format::Text => self.line().trim().is_empty(),
                _ => self.buf.is_empty(),
            };
            if !blank {
                break;
            }
        }
        if self.format == Format::Text {
            // One line, one sentence: nothing to skip after an error.
            self.in_sentence = false;
            if self.line().split_whitespace().nth(self.limits.max_words).is_some() {
                return Err(self.error(self.line_no, ErrorKind::TooManyWords { limit: self.limits.max_words }));
            }
            sent.fill_from_text(self.line(), self.line_no);
            sent.bytes_read = self.sentence_bytes;
            return Ok(true);
        }
        sent.first_line = self.line_no;
        loop {
            if self.buf.is_empty() {
                sent.blank_lines = 1;
                break;
            }
            let here = self.line_no;
            let text = self.line();
            if text.starts_with('#') && self.format == Format::Conllu {
                if sent.used > 0 {
                    return Err(self.error(here, ErrorKind::MisplacedComment));
                }
                sent.push_comment(text);
            } else {
                let kind_of = match self.format {
                    Format::Conllx => conllx::token_kind,
                    Format::Conllu | Format::Text => conllu::token_kind,
                };
                let expected = sent.words.len() + 1;
                if expected > self.limits.max_words {
                    return Err(self.error(here, ErrorKind::TooManyWords { limit: self.limits.max_words }));
                }
                let token = sent.push_token(text, kind_of).map_err(|k| self.error(here, k))?;
                if token.kind == TokenKind::Word {
                    let id = token.get(Column::Id);
                    if id.parse::<usize>().ok() != Some(expected) {
                        let found = id.to_string();
                        return Err(self.error(here, ErrorKind::IdSequence { expected, found }));
                    }
                }
            }
            if !self.next_line()? {
                let kind = if sent.used == 0 { ErrorKind::CommentsAtEnd } else { ErrorKind::UnterminatedSentence };
                return Err(self.error(self.line_no, kind));
            }
        }
        if sent.words.is_empty() {
            return Err(self.error(sent.first_line, ErrorKind::NoWords));
        }
        // Count further blank lines, so that writing reproduces the input.
        while self.input.fill_buf().map(|b| b.first() == Some(&b'\n')).unwrap_or(false) {
            self.input.consume(1);
            self.line_no += 1;
            sent.blank_lines += 1;
        }
        sent.bytes_read = self.sentence_bytes;
        // HEAD syntax and range are checked here so that every consumer can rely on them.
        if let Err((line, kind)) = sent.check_heads() {
            return Err(self.error(line, kind));
        }
        Ok(true)
    }

    /// Like [`Reader::read_into`], but after an error skips to the next sentence so that the
    /// caller can report it and go on. A file that does not look like its format at all (see
    /// [`NOT_THIS_FORMAT_AFTER`]) ends with [`ErrorKind::NotThisFormat`].
    pub fn read_next(&mut self, sent: &mut Sentence) -> Option<Result<(), CorpusError>> {
        if self.done {
            return None;
        }
        if let Some(e) = self.deferred.take() {
            self.done = true;
            return Some(Err(e));
        }
        match self.read_into(sent) {
            Ok(true) => {
                self.good += 1;
                Some(Ok(()))
            }
            Ok(false) => {
                self.done = true;
                self.not_this_format().map(Err)
            }
            Err(e) => {
                // What it holds of the bad sentence, so that callers can let go of large ones.
                sent.bytes_read = self.sentence_bytes;
                if e.kind.is_unreadable()
                    || matches!(e.kind, ErrorKind::UnterminatedSentence | ErrorKind::CommentsAtEnd)
                {
                    self.done = true;
                    return Some(Err(self.not_this_format().unwrap_or(e)));
                }
                self.resync();
                if self.good == 0 {
                    self.first_bad.get_or_insert_with(|| (e.line, e.kind.to_string()));
                    if self.token_lines >= NOT_THIS_FORMAT_AFTER {
                        if let Some(e) = self.not_this_format() {
                            self.done = true;
                            return Some(Err(e));
                        }
                    }
                }
                Some(Err(e))
            }
        }
    }

    /// The error for a file that is not in this format, if nothing read so far says it is.
    fn not_this_format(&mut self) -> Option<CorpusError> {
        if self.good > 0 || self.looks_right || self.format == Format::Text {
            return None;
        }
        let (line, first) = self.first_bad.take()?;
        let kind = ErrorKind::NotThisFormat { format: self.format, lines: self.token_lines, line, first };
        Some(self.error(0, kind))
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Sentence, CorpusError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut sent = Sentence::default();
        self.read_next(&mut sent).map(|r| r.map(|()| sent))
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Conllu => "CoNLL-U",
            Format::Conllx => "CoNLL-X",
            Format::Text => "tokenized text",
        })
    }
}
