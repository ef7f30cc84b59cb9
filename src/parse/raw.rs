//! Reading raw text into sentences ([`RawReader`]): the text is decoded in chunks, tokenized
//! and split into sentences by the model's tokenizer ([`crate::model::tokenizer`]), multiword
//! tokens are expanded by its dictionary, and each sentence is built as CoNLL-U that holds the
//! text it came from:
//!
//! - sentences where the tokenizer ends them, or, with [`RawSentences::Lines`], one per line
//!   (queries, titles, log lines: text whose line ends are its sentence ends and which the
//!   treebank's tokenizer, having seen only punctuated prose, runs together; the tokenizer then
//!   only splits tokens);
//! - `# newdoc` on the first sentence of a file (of a shard that starts the file), `# newpar`
//!   on the first sentence of each paragraph (paragraphs are separated by blank lines, a line of
//!   nothing but whitespace included; a paragraph's end is a sentence end);
//! - `# text`: the sentence's tokens with one space where the input had any whitespace
//!   between them (a line break, a tab, several spaces: the only normalisation), nothing where
//!   it had none;
//! - in MISC, `SpaceAfter=No` after a token that the next one follows directly, and
//!   `SpacesAfter=…` (UDPipe's convention) where the whitespace after it is not one space:
//!   `\s` space, `\t` tab, `\n` line feed, `\r` carriage return, `\p` `|`, `\\` backslash, and
//!   `\u{X}` for any other character taken as whitespace (control and format characters, which
//!   have no place in a form, see [`is_space`]); on the first token of a sentence, the
//!   whitespace before it that no earlier token took, as `SpacesBefore=…` (the start of the
//!   file, or the rest of an overlong run of whitespace);
//! - forms and `# text` in Unicode NFC, as UD wants them; a token whose characters are not
//!   gets `RawForm=…` in MISC, its characters with every one that is not printable ASCII
//!   written `\u{X}` (and `|`, `\` as above);
//! - a multiword token as a range line with its form (and the MISC entries above) and one word
//!   line per word.
//!
//! The raw text is thus recoverable from the output: the first token's `SpacesBefore`, then per
//! token its form and what follows it (nothing, one space, or its `SpacesAfter`), sentence after
//! sentence ([`recover_text`]; a byte order mark at the start of a file is dropped, as CoNLL
//! files drop it).
//!
//! Memory is bounded whatever the input: the reader holds at most one chunk of
//! [`READ_BYTES`] bytes and one unfinished sentence. A sentence is cut, at its last token end,
//! once it reaches [`MAX_SENTENCE_TOKENS`] tokens or [`MAX_SENTENCE_CHARS`] characters; a token
//! longer than that (a megabyte without a space) is cut too, and a run of whitespace longer than
//! that without a token after it is cut at that length (the only place where input is dropped,
//! and only whitespace). A NUL byte ends the file with an error naming its line, after every
//! sentence before it was read. Invalid UTF-8 makes only its sentence malformed, as in the other
//! formats: each bad sequence is read as U+FFFD (so the tokenizer goes on), and the sentence
//! that holds one is returned as an error naming its line and byte offset, its text kept for the
//! placeholder ([`RawReader::sentence_text`]); the sentences around it are parsed. This module
//! owns the text-to-sentence step; the decisions are the tokenizer's.
//!
//! Speed (`scripts/raw-speed.sh /tmp/tok-en.model`, whole process, one thread, en_ewt dev ×8,
//! a model trained with `--tagger --tokenizer --jackknife 0 --epochs 8 --quantize i8`, three
//! rounds on a 2-core machine shared with other builds, so noisy): raw text 57.3k words/s,
//! tokenized text 71.7k, CoNLL-U with `--retag` 70.6k: raw text at 0.80× tokenized text (a
//! second run, after lines were counted once per character: 55.2k, 67.2k, 67.4k, 0.82×).
//! Tokenizing costs about 0.6 µs per character, nearly all of it scoring the ~20 features of
//! each character. 200 MB of letters without a space or a line break (`parse --threads 1`):
//! 24,415 sentences of 8,192 characters, 35 MB of peak RSS (`/usr/bin/time -v`), 175 s.

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use unicode_normalization::{IsNormalized, UnicodeNormalization};

use crate::corpus::{CorpusError, ErrorKind, Format, Sentence};
use crate::model::file::ModelFile;
use crate::model::tokenizer::{glued, is_space, Workspace, SENTENCE, TOKEN};

/// A sentence is cut after this many tokens (with multiword tokens of up to three words, under
/// the default limit of 1,000 words).
pub const MAX_SENTENCE_TOKENS: usize = 300;
/// A sentence (or a token, or a run of whitespace) is cut after this many characters.
pub const MAX_SENTENCE_CHARS: usize = 8192;
/// Bytes read and decoded at a time.
pub const READ_BYTES: usize = 64 << 10;

/// Where raw text's sentences end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RawSentences {
    /// Where the model's tokenizer ends them (and at paragraph ends).
    #[default]
    Model,
    /// At every line end, and nowhere else (but at the length limits): one sentence per line.
    Lines,
}

/// A model without a tokenizer was asked to read raw text.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the model has no tokenizer, which raw text needs (train one with `train --tokenizer`)")]
pub struct NoTokenizer;

/// Streams sentences out of raw text.
pub struct RawReader {
    input: Box<dyn BufRead + Send>,
    path: PathBuf,
    model: Arc<ModelFile>,
    sentences: RawSentences,
    work: Workspace,
    /// Bytes decoded so far, and line feeds among them.
    offset: u64,
    line_feeds: u64,
    /// Bytes of a UTF-8 sequence cut by the end of the last read.
    carry: Vec<u8>,
    eof: bool,
    /// Why reading stopped early, reported once the text before it is read.
    error: Option<CorpusError>,
    /// The text being read: `chars[pos..]` is not in a sentence yet.
    chars: Vec<char>,
    /// Where in `chars` a U+FFFD stands for an invalid UTF-8 sequence, with its byte offset.
    invalid: Vec<(usize, u64)>,
    /// The text of the last sentence returned as malformed.
    malformed: String,
    labels: Vec<u8>,
    /// Each label's score margin ([`Workspace::classify_with_margins`]).
    margins: Vec<f32>,
    classified: bool,
    pos: usize,
    /// 1-based line of `chars[counted]`: lines are counted as sentences are built, each
    /// character once.
    line: u64,
    counted: usize,
    new_doc: bool,
    new_par: bool,
    /// The next read is the file's first: a byte order mark is dropped.
    at_start: bool,
    lines: String,
    body: String,
    form: String,
    words: Vec<String>,
    text: String,
    misc: String,
}

impl RawReader {
    /// Reads `input` (named `path` in errors) with `model`'s tokenizer, its sentences ending as
    /// `sentences` says; `starts_file` for input that starts its file (its first sentence gets
    /// `# newdoc`).
    pub fn new(
        input: Box<dyn BufRead + Send>,
        path: &Path,
        model: Arc<ModelFile>,
        sentences: RawSentences,
        starts_file: bool,
    ) -> Result<RawReader, NoTokenizer> {
        model.tokenizer().ok_or(NoTokenizer)?;
        Ok(RawReader {
            input,
            path: path.to_path_buf(),
            model,
            sentences,
            work: Workspace::default(),
            offset: 0,
            line_feeds: 0,
            carry: Vec::new(),
            eof: false,
            error: None,
            chars: Vec::new(),
            invalid: Vec::new(),
            malformed: String::new(),
            labels: Vec::new(),
            margins: Vec::new(),
            classified: false,
            pos: 0,
            line: 1,
            counted: 0,
            new_doc: starts_file,
            new_par: true,
            at_start: starts_file,
            lines: String::new(),
            body: String::new(),
            form: String::new(),
            words: Vec::new(),
            text: String::new(),
            misc: String::new(),
        })
    }

    /// The file name errors are reported against.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The text of the sentence last returned as malformed (invalid UTF-8 read as U+FFFD).
    pub fn sentence_text(&self) -> &str {
        &self.malformed
    }

    fn fail(&mut self, line: u64, kind: ErrorKind) {
        self.eof = true;
        self.error = Some(CorpusError { path: self.path.clone(), line, kind });
    }

    /// Drops the text already in sentences and reads and decodes the next chunk.
    fn fill(&mut self) {
        if self.pos > 0 {
            self.line_at(self.pos);
            self.counted = 0;
            self.chars.drain(..self.pos);
            let pos = self.pos;
            self.invalid.retain(|&(at, _)| at >= pos);
            self.invalid.iter_mut().for_each(|(at, _)| *at -= pos);
            self.pos = 0;
        }
        self.classified = false;
        let mut bytes = std::mem::take(&mut self.carry);
        loop {
            match self.input.fill_buf() {
                Ok(b) => {
                    let take = b.len().min(READ_BYTES);
                    bytes.extend_from_slice(&b[..take]);
                    self.input.consume(take);
                    if take == 0 {
                        self.eof = true;
                    }
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.fail(0, ErrorKind::Io(e));
                    return;
                }
            }
        }
        if self.at_start {
            if bytes.len() < 3 && !self.eof {
                // Too short to tell a byte order mark: read on.
                self.carry = bytes;
                return;
            }
            if bytes.starts_with(b"\xef\xbb\xbf") {
                bytes.drain(..3);
                self.offset += 3;
            }
            self.at_start = false;
        }
        let nul = memchr::memchr(0, &bytes);
        let usable = nul.unwrap_or(bytes.len());
        let mut rest = &bytes[..usable];
        loop {
            let (valid, bad) = match std::str::from_utf8(rest) {
                Ok(_) => (rest.len(), None),
                Err(e) => (e.valid_up_to(), Some(e.error_len())),
            };
            let text = std::str::from_utf8(&rest[..valid]).unwrap_or_default();
            self.chars.extend(text.chars());
            self.line_feeds += memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
            self.offset += valid as u64;
            let bad_len = match bad {
                None => break,
                // A sequence cut by the end of the read: completed by the next.
                Some(None) if !self.eof && nul.is_none() => {
                    self.carry = rest[valid..].to_vec();
                    break;
                }
                Some(None) => rest.len() - valid,
                Some(Some(n)) => n,
            };
            self.invalid.push((self.chars.len(), self.offset));
            self.chars.push(char::REPLACEMENT_CHARACTER);
            self.offset += bad_len as u64;
            rest = &rest[valid + bad_len..];
        }
        if nul.is_some() {
            self.fail(self.line_feeds + 1, ErrorKind::Binary(Format::Raw));
        }
    }

    /// The line of `chars[at]`, `at` at or after the last position asked for.
    fn line_at(&mut self, at: usize) -> u64 {
        self.line += self.chars[self.counted..at].iter().filter(|&&c| c == '\n').count() as u64;
        self.counted = at;
        self.line
    }

    /// Where the decisions stop being final in text that goes on: at the start of the
    /// second-to-last chunk of characters (the last may be cut; the one before it sees it).
    fn stable_end(&self) -> usize {
        let mut i = self.chars.len();
        for _ in 0..2 {
            while i > self.pos && is_space(self.chars[i - 1]) {
                i -= 1;
            }
            while i > self.pos && !is_space(self.chars[i - 1]) {
                i -= 1;
            }
        }
        i
    }

    /// The end of the sentence that starts at `start` (its last character), the end of the
    /// whitespace after it, and whether that whitespace ends a paragraph; `None` if more text
    /// must be read first.
    fn sentence_end(&self, start: usize) -> Option<(usize, usize, bool)> {
        let n = self.chars.len();
        let forced = !self.eof && n - start > MAX_SENTENCE_CHARS;
        let stable = if self.eof || forced { n } else { self.stable_end() };
        let limit = start + MAX_SENTENCE_CHARS;
        let mut tokens = 0;
        let mut i = start;
        while i < n {
            let mut j = i;
            while j + 1 < n && !is_space(self.chars[j + 1]) && self.labels[j] < TOKEN && j + 1 < limit {
                j += 1;
            }
            if j + 1 >= limit {
                // A token without end: cut where no glued character follows.
                while j > i && self.chars.get(j + 1).is_some_and(|&c| glued(c)) {
                    j -= 1;
                }
            }
            if j >= stable {
                return None;
            }
            tokens += 1;
            let mut k = j + 1;
            let mut line_feeds = 0;
            while k < n && is_space(self.chars[k]) && k - j <= MAX_SENTENCE_CHARS {
                line_feeds += usize::from(self.chars[k] == '\n');
                k += 1;
            }
            let paragraph = line_feeds >= 2;
            let ends = match self.sentences {
                RawSentences::Model => self.labels[j] == SENTENCE,
                RawSentences::Lines => line_feeds >= 1,
            };
            if ends || paragraph || k >= n || tokens >= MAX_SENTENCE_TOKENS || k >= limit || j + 1 >= limit {
                return Some((j, k, paragraph));
            }
            i = k;
        }
        None
    }

    /// Reads the next sentence into `sent`; `None` at the end of the input.
    pub fn read_next(&mut self, sent: &mut Sentence) -> Option<Result<(), CorpusError>> {
        loop {
            let start = self.chars[self.pos..].iter().position(|&c| !is_space(c)).map(|p| p + self.pos);
            let Some(start) = start else {
                if self.eof {
                    return self.error.take().map(Err);
                }
                if self.chars.len() - self.pos > MAX_SENTENCE_CHARS {
                    // Whitespace without end: keep its first part (see the module comment).
                    self.chars.truncate(self.pos + MAX_SENTENCE_CHARS);
                }
                self.fill();
                continue;
            };
            if !self.classified {
                let Some((_, weights)) = self.model.tokenizer() else {
                    return Some(Err(CorpusError {
                        path: self.path.clone(),
                        line: 0,
                        kind: ErrorKind::Io(io::Error::other(NoTokenizer)),
                    }));
                };
                self.work.classify_with_margins(&weights, &self.chars, &mut self.labels, Some(&mut self.margins));
                self.classified = true;
            }
            match self.sentence_end(start) {
                Some((end, after, paragraph)) => {
                    if let Some(&(_, offset)) = self.invalid.iter().find(|(at, _)| (start..=end).contains(at)) {
                        return Some(Err(self.malformed(start, end, after, paragraph, offset)));
                    }
                    return Some(self.build(sent, start, end, after, paragraph));
                }
                None if self.eof => return self.error.take().map(Err),
                None => self.fill(),
            }
        }
    }

    /// Builds `sent` from the characters `start..=end`, followed by whitespace up to `after`.
    fn build(
        &mut self,
        sent: &mut Sentence,
        start: usize,
        end: usize,
        after: usize,
        paragraph: bool,
    ) -> Result<(), CorpusError> {
        use std::fmt::Write as _;
        let line = self.line_at(start);
        let Some((meta, _)) = self.model.tokenizer() else { return Err(self.error_at(line, NoTokenizer)) };
        let mwt = &meta.mwt;
        self.lines.clear();
        if self.new_doc {
            self.lines.push_str("# newdoc\n");
        }
        if self.new_par {
            self.lines.push_str("# newpar\n");
        }
        self.text.clear();
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        let mut id = 1;
        let mut i = start;
        // A sentence ended by a paragraph had no decision to make there.
        let mut sentence_margin = if paragraph { f32::INFINITY } else { self.margin(end) };
        let mut token_margins = std::mem::take(&mut sent.tokenization.words);
        token_margins.clear();
        while i <= end {
            let mut j = i;
            while j < end && !is_space(self.chars[j + 1]) && self.labels[j] < TOKEN {
                j += 1;
            }
            let token_margin = (i..=j).map(|c| self.margin(c)).fold(f32::INFINITY, f32::min);
            if j < end {
                sentence_margin = sentence_margin.min(self.margin(j));
            }
            let mut k = j + 1;
            while k < after && is_space(self.chars[k]) {
                k += 1;
            }
            let k = if j == end { after } else { k };
            self.form.clear();
            self.form.extend(&self.chars[i..=j]);
            self.misc.clear();
            // UD wants forms and `# text` in NFC: a token that is not keeps its characters in
            // MISC, every one that is not printable ASCII escaped (so that the line is NFC).
            if unicode_normalization::is_nfc_quick(self.form.chars()) != IsNormalized::Yes {
                let nfc: String = self.form.nfc().collect();
                if nfc != self.form {
                    self.misc.push_str("RawForm=");
                    escape_all(&self.chars[i..=j], &mut self.misc);
                    self.form = nfc;
                }
            }
            self.text.push_str(&self.form);
            if j != end && k > j + 1 {
                self.text.push(' ');
            }
            if i == start && start > self.pos {
                if !self.misc.is_empty() {
                    self.misc.push('|');
                }
                self.misc.push_str("SpacesBefore=");
                escape(&self.chars[self.pos..start], &mut self.misc);
            }
            let space = &self.chars[j + 1..k];
            if space != [' '] {
                if !self.misc.is_empty() {
                    self.misc.push('|');
                }
                if space.is_empty() {
                    self.misc.push_str("SpaceAfter=No");
                } else {
                    self.misc.push_str("SpacesAfter=");
                    escape(space, &mut self.misc);
                }
            }
            if self.misc.is_empty() {
                self.misc.push('_');
            }
            let before = id;
            if self.work.expand(mwt, &self.form, &mut self.words) {
                let last = id + self.words.len() - 1;
                let _ = writeln!(body, "{id}-{last}\t{}\t_\t_\t_\t_\t_\t_\t_\t{}", self.form, self.misc);
                for w in &self.words {
                    let _ = writeln!(body, "{id}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_");
                    id += 1;
                }
            } else {
                let _ = writeln!(body, "{id}\t{}\t_\t_\t_\t_\t_\t_\t_\t{}", self.form, self.misc);
                id += 1;
            }
            token_margins.extend(std::iter::repeat_n(token_margin, id - before));
            i = k;
        }
        let _ = writeln!(self.lines, "# text = {}", self.text);
        self.lines.push_str(&body);
        self.body = body;
        self.pos = after;
        self.new_doc = false;
        self.new_par = paragraph;
        let result = sent.fill_from_conllu_lines(&self.lines).map_err(|kind| CorpusError {
            path: self.path.clone(),
            line,
            kind,
        });
        sent.first_line = line;
        sent.tokenization.words = token_margins;
        sent.tokenization.sentence = sentence_margin;
        result
    }

    /// The margin of the decision after character `i` (infinite where there was none).
    fn margin(&self, i: usize) -> f32 {
        self.margins.get(i).copied().unwrap_or(f32::INFINITY)
    }

    /// The characters `start..=end`, which hold invalid UTF-8 (the first at byte `offset`), as a
    /// malformed sentence: skipped as [`Self::build`] would take them, their text kept.
    fn malformed(&mut self, start: usize, end: usize, after: usize, paragraph: bool, offset: u64) -> CorpusError {
        let line = self.line_at(start);
        self.malformed.clear();
        self.malformed.extend(&self.chars[start..=end]);
        self.pos = after;
        self.new_doc = false;
        self.new_par = paragraph;
        CorpusError { path: self.path.clone(), line, kind: ErrorKind::InvalidUtf8At { offset } }
    }

    fn error_at(&self, line: u64, e: NoTokenizer) -> CorpusError {
        CorpusError { path: self.path.clone(), line, kind: ErrorKind::Io(io::Error::other(e)) }
    }
}

/// Writes whitespace as a MISC value (see the module comment).
fn escape(space: &[char], out: &mut String) {
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
fn escape_all(form: &[char], out: &mut String) {
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
