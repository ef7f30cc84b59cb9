//! Raw text cut into [`Piece`]s that can be tokenized apart, on any thread, into exactly the
//! sentences the whole text gives ([`Splitter`]). The input is decoded here (a byte order
//! mark dropped, invalid UTF-8 read as U+FFFD and remembered, a NUL byte ending it) and cut
//! where a sentence surely ends whatever came before:
//!
//! - at a paragraph break (two line feeds among the whitespace a token takes), which always
//!   ends a sentence;
//! - with [`RawSentences::Lines`], at every line end;
//! - where the tokenizer decides that a sentence ends at a token followed by whitespace: a
//!   decision reads only the characters around it (see [`crate::model::tokenizer`]), so it is
//!   made here for that one character, and any sentence that reaches the token ends there,
//!   wherever it started (the limits only end sentences earlier).
//!
//! A piece is cut at the first such point once it holds [`TARGET_CHARS`] characters, and
//! carries the three characters before it and, after it, the whitespace and the chunk that
//! follow (with three more characters), which the decisions at its edges read; a point whose
//! next chunk is longer than a sentence is passed over. Text with no such point in
//! [`MAX_PIECE_CHARS`] characters (no whitespace, or no sentence end the tokenizer sees) is
//! classified here, as one thread would, and cut after its last sentence that the decisions
//! there settle ([`Splitter::fallback_cut`]); only there can a cut fall inside a chunk (a
//! token of more than a sentence's length), whose decisions then see the chunk from the cut.
//!
//! Memory is bounded: at most [`MAX_PIECE_CHARS`] characters, one read and a lookahead are
//! held. A run of whitespace is kept as its first and last [`MAX_SENTENCE_CHARS`]
//! characters (with one line feed between them if the rest held any): no token takes more,
//! and no decision reads more; the line feeds left out are still counted in line numbers.

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::corpus::{CorpusError, ErrorKind, Format};
use crate::model::file::ModelFile;
use crate::model::tokenizer::{is_space, Workspace, SENTENCE};

use super::piece::{sentence_end, whitespace_after, Piece};
use super::{NoTokenizer, RawSentences, MAX_SENTENCE_CHARS, READ_BYTES};

/// A piece is cut at the first sure sentence end once it holds this many characters.
pub const TARGET_CHARS: usize = 4096;
/// A piece without a sure sentence end is cut by classifying it here once it holds this many.
pub const MAX_PIECE_CHARS: usize = 1 << 18;
/// Characters of context kept before a piece (the features read three back).
const BEFORE: usize = 3;

/// Cuts raw text into pieces (see the module comment).
pub struct Splitter {
    input: Box<dyn BufRead + Send>,
    path: PathBuf,
    model: Arc<ModelFile>,
    sentences: RawSentences,
    work: Workspace,
    labels: Vec<u8>,
    /// Bytes decoded so far, and line feeds among them.
    offset: u64,
    line_feeds: u64,
    /// Bytes of a UTF-8 sequence cut by the end of the last read.
    carry: Vec<u8>,
    eof: bool,
    /// Why reading stopped early, reported once the text before it is in pieces.
    error: Option<CorpusError>,
    /// The next read is the file's first: a byte order mark is dropped.
    at_start: bool,
    /// Decoded text: `chars[start..]` is in no piece yet; up to [`BEFORE`] characters before
    /// it are kept as context.
    chars: Vec<char>,
    /// Where a U+FFFD stands for invalid UTF-8, with its byte offset.
    invalid: Vec<(usize, u64)>,
    /// Line feeds left out of runs of whitespace, by where they stood.
    dropped_lines: Vec<(usize, u64)>,
    start: usize,
    /// 1-based line of `chars[start]`.
    line: u64,
    /// Where the search for a cut goes on: the start of a chunk or of the text.
    scan: usize,
    /// Runs of whitespace before this are as short as they are kept.
    compacted: usize,
    new_doc: bool,
    new_par: bool,
    target: usize,
    max_piece: usize,
}

/// What the search for a cut found.
enum Cut {
    /// A piece ends at this index, its last whitespace ending a paragraph or not.
    At(usize, bool),
    /// More text must be read first.
    More,
}

impl Splitter {
    /// Cuts `input` (named `path` in errors), read with `model`'s tokenizer, sentences ending as
    /// `sentences` says; `starts_file` for input that starts its file (a byte order mark is
    /// dropped, and the first piece starts a document).
    pub fn new(
        input: Box<dyn BufRead + Send>,
        path: &Path,
        model: Arc<ModelFile>,
        sentences: RawSentences,
        starts_file: bool,
    ) -> Result<Splitter, NoTokenizer> {
        model.tokenizer().ok_or(NoTokenizer)?;
        Ok(Splitter {
            input,
            path: path.to_path_buf(),
            model,
            sentences,
            work: Workspace::default(),
            labels: Vec::new(),
            offset: 0,
            line_feeds: 0,
            carry: Vec::new(),
            eof: false,
            error: None,
            at_start: starts_file,
            chars: Vec::new(),
            invalid: Vec::new(),
            dropped_lines: Vec::new(),
            start: 0,
            line: 1,
            scan: 0,
            compacted: 0,
            new_doc: starts_file,
            new_par: true,
            target: TARGET_CHARS,
            max_piece: MAX_PIECE_CHARS,
        })
    }

    /// Cuts pieces at `target` characters and classifies here at `max_piece` instead of the
    /// defaults: for tests, which thus reach every kind of cut with little text.
    /// `max_piece` is at least twice the longest sentence, so that a fallback cut always
    /// finds a sentence end.
    pub fn with_sizes(mut self, target: usize, max_piece: usize) -> Splitter {
        self.target = target;
        self.max_piece = max_piece.max(target + 1).max(2 * MAX_SENTENCE_CHARS + 2);
        self
    }

    /// The file name errors are reported against.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next piece into `piece` (its allocations reused); `None` at the end of the input,
    /// after the error that ended it early, if any.
    pub fn next_piece(&mut self, piece: &mut Piece) -> Option<Result<(), CorpusError>> {
        loop {
            match self.find_cut() {
                Cut::At(cut, paragraph) => {
                    self.emit(piece, cut, paragraph);
                    return Some(Ok(()));
                }
                Cut::More if !self.eof => self.fill(),
                Cut::More => {
                    let n = self.chars.len();
                    if self.chars[self.start..].iter().any(|&c| !is_space(c)) {
                        self.emit(piece, n, false);
                        return Some(Ok(()));
                    }
                    self.start = n;
                    return self.error.take().map(Err);
                }
            }
        }
    }

    /// Looks for where the piece that starts at `start` ends.
    fn find_cut(&mut self) -> Cut {
        let n = self.chars.len();
        loop {
            if self.scan >= self.start + self.max_piece {
                return match self.fallback_cut() {
                    Some((cut, paragraph)) => Cut::At(cut, paragraph),
                    None => Cut::More,
                };
            }
            // The chunk at `scan` (none if whitespace is there), the whitespace after it, and
            // the next chunk, which decisions at the end of this one read.
            let chunk_end = first(&self.chars, self.scan, n, is_space);
            if chunk_end == n {
                return Cut::More;
            }
            let next = first(&self.chars, chunk_end, n, |c| !is_space(c));
            let next_end = first(&self.chars, next, n, is_space);
            let long_next = next_end - next > MAX_SENTENCE_CHARS;
            if next_end + BEFORE > n && !self.eof && !long_next {
                return Cut::More;
            }
            // No cut before the text's first chunk, nor where the next chunk is too long to
            // read as context.
            if chunk_end > self.scan && !long_next && chunk_end - self.start >= self.target {
                let j = chunk_end - 1;
                let (k, line_feeds) = whitespace_after(&self.chars, j, n);
                let paragraph = line_feeds >= 2;
                let cut = paragraph
                    || match self.sentences {
                        RawSentences::Lines => line_feeds >= 1,
                        RawSentences::Model => self.decide(j, next_end) == SENTENCE,
                    };
                if cut {
                    return Cut::At(k, paragraph);
                }
            }
            self.scan = next;
            if next == n {
                return Cut::More;
            }
        }
    }

    /// The tokenizer's decision after `chars[j]`, the end of a chunk followed by whitespace and
    /// the chunk that ends at `next_end`: from that context alone.
    fn decide(&mut self, j: usize, next_end: usize) -> u8 {
        let context_start = self.start - self.start.min(BEFORE);
        let chunk_start = self.chars[..j].iter().rposition(|&c| is_space(c)).map_or(0, |p| p + 1);
        let from = context_start.max(chunk_start.saturating_sub(BEFORE));
        let to = (next_end + BEFORE).min(self.chars.len());
        let Some((_, weights)) = self.model.tokenizer() else { return 0 };
        self.work.decide(&weights, &self.chars[from..to], j - from)
    }

    /// Where to cut a piece that reached its maximum length without a sure sentence end: the
    /// text is classified as one thread would, and cut after its last sentence whose decisions
    /// are final (followed by whitespace if any is); `None` if more text must be read.
    fn fallback_cut(&mut self) -> Option<(usize, bool)> {
        let n = self.chars.len();
        // Decisions are final up to the start of the second-to-last chunk (the last may be cut,
        // the one before it reads it), or, in a chunk longer than that, everywhere.
        let mut stable = n;
        if !self.eof {
            for _ in 0..2 {
                while stable > self.start && is_space(self.chars[stable - 1]) {
                    stable -= 1;
                }
                while stable > self.start && !is_space(self.chars[stable - 1]) {
                    stable -= 1;
                }
            }
            if stable < self.start + self.max_piece / 2 {
                stable = n;
            }
        }
        let from = self.start - self.start.min(BEFORE);
        let (_, weights) = self.model.tokenizer()?;
        self.work.classify(&weights, &self.chars[from..], &mut self.labels);
        let (chars, labels) = (&self.chars[from..], &self.labels);
        let (end, mut at) = (stable - from, self.start - from);
        let (mut spaced, mut any) = (None, None);
        while let Some(first) = chars[at..end].iter().position(|&c| !is_space(c)) {
            let (last, after, paragraph) = sentence_end(chars, labels, at + first, end, self.sentences);
            if after >= end {
                break;
            }
            any = Some((after + from, paragraph));
            if after > last + 1 {
                spaced = any;
            }
            at = after;
        }
        spaced.or(any).or_else(|| (self.eof || stable == n).then_some((n, false)))
    }

    /// Puts `chars[start..cut]`, with its context, into `piece`, and moves on to `cut`.
    fn emit(&mut self, piece: &mut Piece, cut: usize, paragraph: bool) {
        let n = self.chars.len();
        let from = self.start - self.start.min(BEFORE);
        let next = first(&self.chars, cut, n, |c| !is_space(c));
        let to = (first(&self.chars, next, n, is_space) + BEFORE).min(n);
        piece.chars.clear();
        piece.chars.extend_from_slice(&self.chars[from..to]);
        piece.own = self.start - from..cut - from;
        piece.line = self.line;
        let own = self.start..cut;
        piece.invalid.clear();
        piece.invalid.extend(self.invalid.iter().filter(|(at, _)| own.contains(at)).map(|&(at, o)| (at - from, o)));
        piece.dropped_lines.clear();
        piece.dropped_lines.extend(
            self.dropped_lines.iter().filter(|(at, _)| own.contains(at)).map(|&(at, lines)| (at - from, lines)),
        );
        piece.new_doc = self.new_doc;
        piece.new_par = self.new_par;
        let text = &self.chars[own];
        piece.chunks =
            text.iter().zip(std::iter::once(&' ').chain(text)).filter(|(&c, &b)| !is_space(c) && is_space(b)).count();
        self.line += text.iter().filter(|&&c| c == '\n').count() as u64;
        self.line += piece.dropped_lines.iter().map(|(_, lines)| lines).sum::<u64>();
        self.start = cut;
        self.scan = cut;
        self.new_doc = false;
        self.new_par = paragraph;
    }

    /// Drops the text already in pieces (but its context) and reads and decodes the next chunk
    /// of input.
    fn fill(&mut self) {
        let drop = self.start - self.start.min(BEFORE);
        if drop > 0 {
            self.chars.drain(..drop);
            for list in [&mut self.invalid, &mut self.dropped_lines] {
                list.retain(|&(at, _)| at >= drop);
                list.iter_mut().for_each(|(at, _)| *at -= drop);
            }
            self.start -= drop;
            self.scan -= drop;
            self.compacted = self.compacted.saturating_sub(drop);
        }
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
        self.compact();
    }

    /// Shortens the runs of whitespace read since the last call to what is kept of them (see
    /// the module comment).
    fn compact(&mut self) {
        const KEEP: usize = MAX_SENTENCE_CHARS;
        let mut i = self.compacted.max(self.start);
        while i < self.chars.len() {
            if !is_space(self.chars[i]) {
                i += 1;
                continue;
            }
            let run_start = i;
            let run_end = first(&self.chars, i, self.chars.len(), |c| !is_space(c));
            if run_end - run_start > 2 * KEEP + 1 {
                let middle = run_start + KEEP..run_end - KEEP;
                let line_feeds = self.chars[middle.clone()].iter().filter(|&&c| c == '\n').count() as u64;
                let kept: &[char] = if line_feeds > 0 { &['\n'] } else { &[] };
                let removed = middle.len() - kept.len();
                self.chars.splice(middle.clone(), kept.iter().copied());
                if line_feeds > 1 {
                    self.dropped_lines.push((middle.start, line_feeds - 1));
                }
                for (at, _) in self.invalid.iter_mut().chain(self.dropped_lines.iter_mut()) {
                    if *at >= middle.end {
                        *at -= removed;
                    }
                }
            }
            let run_end = first(&self.chars, run_start, self.chars.len(), |c| !is_space(c));
            if run_end == self.chars.len() {
                // The run may go on in the next read.
                self.compacted = run_start;
                return;
            }
            i = run_end;
        }
        self.compacted = self.chars.len();
    }

    fn fail(&mut self, line: u64, kind: ErrorKind) {
        self.eof = true;
        self.error = Some(CorpusError { path: self.path.clone(), line, kind });
    }
}

/// The first index in `from..end` whose character `pred` accepts; `end` if none.
fn first(chars: &[char], from: usize, end: usize, pred: impl Fn(char) -> bool) -> usize {
    chars[from.min(end)..end].iter().position(|&c| pred(c)).map_or(end, |p| p + from)
}
