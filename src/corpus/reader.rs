//! Streaming a ten-column file into [`Sentence`]s ([`Reader`]): lines end in LF or CR LF, a
//! byte order mark at the start is dropped, lines and sentences beyond the [`Limits`] are
//! refused without being held in memory, and after an error the rest of the bad sentence is
//! skipped so that reading can go on (invalid UTF-8 in a line too: its sentence is malformed).
//! Input that is no corpus at all (compressed, binary, in another format) fails as a whole. This module owns reading; it must not change what it reads.

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use crate::base::io::open_input;

use super::error::{CorpusError, ErrorKind};
use super::format::{Column, Format, TokenKind, COLUMNS};
use super::sentence::Sentence;
use super::{conllu, conllx};

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

/// Whether a line of tokenized text is blank (no sentence), as the reader decides it.
pub fn is_blank_text(line: &[u8]) -> bool {
    if line.is_ascii() {
        line.iter().all(|&b| char::from(b).is_whitespace())
    } else {
        String::from_utf8_lossy(line).trim().is_empty()
    }
}

/// What to read next: the bytes given back to read again (`replay`), else the input's buffer.
fn fill<'a, R: BufRead>(replay: &'a [u8], input: &'a mut R) -> io::Result<&'a [u8]> {
    if replay.is_empty() {
        input.fill_buf()
    } else {
        Ok(replay)
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
    /// Bytes that [`Reader::read_block`] took but could not cut into a block, read again before
    /// the input (from `replay_at`).
    replay: Vec<u8>,
    replay_at: usize,
}

/// What [`Reader::read_block`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockRead {
    /// A block of whole sentences, after this many lines of the input.
    Block { lines_before: u64 },
    /// The end of the input.
    End,
    /// The next sentences cannot be cut into a block (a NUL byte, or a sentence near the size
    /// limit): read them with [`Reader::read_next`], which reports them as the whole file would.
    Uncut,
}

impl Reader<Box<dyn BufRead + Send>> {
    /// Opens `path` (`-`, plain or `.zst`) in `format`.
    pub fn open(path: &Path, format: Format) -> Result<Self, CorpusError> {
        let input =
            open_input(path).map_err(|e| CorpusError { path: path.to_path_buf(), line: 0, kind: ErrorKind::Io(e) })?;
        Ok(Reader::new(input, path, format))
    }

    /// Opens bytes `range` of the plain file `path` in `format`: a shard of it that starts at a
    /// sentence (see [`shard::shard_ranges`](super::shard::shard_ranges)). Errors give line
    /// numbers in the whole file. Sentences' [`Sentence::first_line`] count from the shard's
    /// first line.
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
            replay: Vec::new(),
            replay_at: 0,
        }
    }

    /// A reader of `input`, the part of the file `path` after its first `lines_before` lines
    /// (which started at byte `start` of it, for a shard), taken from a reader that had read a
    /// sentence well and stood between sentences ([`Reader::read_block`]): its sentences,
    /// numbers of lines and errors are those the first reader would have given.
    pub fn resume(input: R, path: &Path, format: Format, lines_before: u64, start: u64) -> Self {
        let mut reader = Reader::new(input, path, format);
        reader.line_no = lines_before;
        reader.start = start;
        // The file's format was confirmed: it cannot turn out not to be this format.
        reader.good = 1;
        reader.looks_right = true;
        reader
    }

    /// Whether the reader stands between sentences, having read one well: what follows can be
    /// cut into blocks of whole sentences ([`Reader::read_block`]).
    pub fn between_sentences(&self) -> bool {
        self.good > 0 && !self.in_sentence && !self.done && self.deferred.is_none()
    }

    /// Takes whole sentences, as bytes, into `out` (emptied first), for a [`Reader::resume`]
    /// elsewhere (another thread): at least `min_lines` lines or `max_bytes` bytes, ending
    /// where a sentence ends, or the rest of the input. In CoNLL a sentence ends at a blank
    /// line, and the line feeds right after it go with it (the reader counts them into its
    /// blank lines); in tokenized text every line is a sentence. Only when
    /// [`Reader::between_sentences`].
    ///
    /// What a block must not hold is left to [`Reader::read_next`] ([`BlockRead::Uncut`], its
    /// bytes kept to read again): a NUL byte, which ends the file there (a block's reader would
    /// end only the block), and a sentence over the size limit, which the reader skips without
    /// holding it.
    pub fn read_block(&mut self, out: &mut Vec<u8>, min_lines: u64, max_bytes: usize) -> BlockRead {
        out.clear();
        let conll = self.format != Format::Text;
        let (mut lines, mut sentence_bytes) = (0u64, 0usize);
        let uncut = |reader: &mut Self, out: &mut Vec<u8>| {
            out.extend_from_slice(&reader.replay[reader.replay_at..]);
            reader.replay = std::mem::take(out);
            reader.replay_at = 0;
            BlockRead::Uncut
        };
        loop {
            let line_start = out.len();
            loop {
                let available = match fill(&self.replay[self.replay_at..], &mut self.input) {
                    Ok(b) => b,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // Left for the reader to report where it meets it.
                    Err(_) => return uncut(self, out),
                };
                if available.is_empty() {
                    break;
                }
                let (take, ends) = match memchr::memchr(b'\n', available) {
                    Some(i) => (i + 1, true),
                    None => (available.len(), false),
                };
                out.extend_from_slice(&available[..take]);
                self.consume(take);
                if ends {
                    break;
                }
                if out.len() - line_start > self.limits.max_bytes {
                    return uncut(self, out);
                }
            }
            let line = &out[line_start..];
            if line.is_empty() {
                break;
            }
            lines += 1;
            if memchr::memchr(0, line).is_some() {
                return uncut(self, out);
            }
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            // The reader counts a sentence's bytes from the end of the one before: in CoNLL its
            // lines, in tokenized text also the lines of whitespace before it.
            sentence_bytes += line.len();
            if sentence_bytes > self.limits.max_bytes {
                return uncut(self, out);
            }
            let ends_sentence = if conll { text.is_empty() } else { !is_blank_text(text) };
            if ends_sentence {
                sentence_bytes = 0;
            }
            if conll && ends_sentence {
                while fill(&self.replay[self.replay_at..], &mut self.input).is_ok_and(|b| b.first() == Some(&b'\n')) {
                    out.push(b'\n');
                    self.consume(1);
                    lines += 1;
                }
            }
            if ends_sentence && (lines >= min_lines || out.len() >= max_bytes) {
                break;
            }
        }
        if out.is_empty() {
            return BlockRead::End;
        }
        let lines_before = self.line_no;
        self.line_no += lines;
        BlockRead::Block { lines_before }
    }

    /// Consumes `n` bytes of what [`fill`] gave.
    fn consume(&mut self, n: usize) {
        if self.replay_at < self.replay.len() {
            self.replay_at += n;
            if self.replay_at == self.replay.len() {
                self.replay.clear();
                self.replay_at = 0;
            }
        } else {
            self.input.consume(n);
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
            let available = match fill(&self.replay[self.replay_at..], &mut self.input) {
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
                    self.consume(take);
                    self.line_no += 1;
                    self.in_sentence = false;
                    return Err(self.error(self.line_no, kind));
                }
            }
            self.consume(take);
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
        // Invalid UTF-8 makes its sentence malformed, not the file unreadable (binary data was
        // caught above): the line goes on as text with U+FFFD for the bad bytes (for the kept
        // sentence text, the sizes and the format check), and the error comes after.
        let valid_utf8 = std::str::from_utf8(&self.buf).is_ok();
        if !valid_utf8 {
            self.buf = String::from_utf8_lossy(&self.buf).into_owned().into_bytes();
        }
        let line = std::str::from_utf8(&self.buf).unwrap_or_default();
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
        if !valid_utf8 {
            return Err(self.error(self.line_no, ErrorKind::InvalidUtf8));
        }
        Ok(true)
    }

    /// The line last read by [`Reader::next_line`] (valid UTF-8 by then).
    fn line(&self) -> &str {
        std::str::from_utf8(&self.buf).unwrap_or_default()
    }

    /// Skips to just after the next blank line (or end of input). An error that ends reading
    /// (I/O, binary data) is kept for the next call of [`Reader::read_next`]. Stops early in
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
                    // Raw text is read by `crate::parse::raw`, never here: as CoNLL-U, it fails as a whole.
                    Format::Conllu | Format::Text | Format::Raw => conllu::token_kind,
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
                if sent.used == 0 {
                    return Err(self.error(self.line_no, ErrorKind::CommentsAtEnd));
                }
                // The last sentence of a file without its blank line is whole all the same (a
                // daemon only takes complete files); it is written with one.
                sent.blank_lines = 1;
                break;
            }
        }
        if sent.words.is_empty() {
            return Err(self.error(sent.first_line, ErrorKind::NoWords));
        }
        // Count further blank lines, so that writing reproduces the input.
        while fill(&self.replay[self.replay_at..], &mut self.input).is_ok_and(|b| b.first() == Some(&b'\n')) {
            self.consume(1);
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
                if e.kind.is_unreadable() || matches!(e.kind, ErrorKind::CommentsAtEnd) {
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
