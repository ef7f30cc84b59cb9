//! Sentences out of a [`Piece`] of raw text: its characters classified by the model's
//! tokenizer, cut into sentences, and each sentence built as CoNLL-U that holds the text it came
//! from (see the parent module for the format). A piece starts where a sentence starts and ends
//! where one ends, and carries the characters around it that the tokenizer's features read, so
//! that its sentences are the ones the whole text would give: pieces can be read in any order
//! and on any thread. This module owns the sentence-building rules; where pieces are cut is
//! [`super::split`]'s.

use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use unicode_normalization::{IsNormalized, UnicodeNormalization};

use crate::corpus::{CorpusError, ErrorKind, Sentence};
use crate::model::file::ModelFile;
use crate::model::tokenizer::{glued, is_space, Workspace, SENTENCE, TOKEN};

use super::text::{escape, escape_all};
use super::{NoTokenizer, RawSentences, MAX_SENTENCE_CHARS, MAX_SENTENCE_TOKENS};

/// A run of raw text that starts where a sentence starts (or at its input's start) and ends
/// where one ends, with the characters around it that decisions inside it read.
#[derive(Debug, Default, Clone)]
pub struct Piece {
    /// Context before, the piece's own characters, context after.
    pub(super) chars: Vec<char>,
    /// The piece's own characters in `chars`.
    pub(super) own: Range<usize>,
    /// 1-based line of its first own character.
    pub(super) line: u64,
    /// Line feeds dropped from over-long runs of whitespace (see [`super::split`]), by the
    /// index in `chars` where they stood: counted into the lines after.
    pub(super) dropped_lines: Vec<(usize, u64)>,
    /// Where a U+FFFD stands for an invalid UTF-8 sequence, with its byte offset in the input.
    pub(super) invalid: Vec<(usize, u64)>,
    /// Its first sentence starts the file (`# newdoc`), and a paragraph (`# newpar`).
    pub(super) new_doc: bool,
    pub(super) new_par: bool,
    /// Whitespace-separated chunks of its own text: a lower bound of its words.
    pub(super) chunks: usize,
}

impl Piece {
    /// Characters of its own text.
    pub fn len(&self) -> usize {
        self.own.len()
    }

    /// Whether it holds no text of its own.
    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    /// Whitespace-separated chunks of its own text: it makes at least as many words.
    pub fn chunks(&self) -> usize {
        self.chunks
    }
}

/// The end of the sentence that starts at `start` in `chars[..end]` (its last character), the
/// end of the whitespace after it, and whether that whitespace ends a paragraph, given the
/// decisions `labels`; `chars[end..]` is context only. Text that stops at `end` ends a
/// sentence there.
pub(super) fn sentence_end(
    chars: &[char],
    labels: &[u8],
    start: usize,
    end: usize,
    sentences: RawSentences,
) -> (usize, usize, bool) {
    let limit = start + MAX_SENTENCE_CHARS;
    let mut tokens = 0;
    let mut i = start;
    loop {
        let mut j = i;
        while j + 1 < end && !is_space(chars[j + 1]) && labels[j] < TOKEN && j + 1 < limit {
            j += 1;
        }
        if j + 1 >= limit {
            // A token without end: cut where no glued character follows.
            while j > i && chars.get(j + 1).is_some_and(|&c| glued(c)) {
                j -= 1;
            }
        }
        tokens += 1;
        let (k, line_feeds) = whitespace_after(chars, j, end);
        let paragraph = line_feeds >= 2;
        let ends = match sentences {
            RawSentences::Model => labels[j] == SENTENCE,
            RawSentences::Lines => line_feeds >= 1,
        };
        if ends || paragraph || k >= end || tokens >= MAX_SENTENCE_TOKENS || k >= limit || j + 1 >= limit {
            return (j, k, paragraph);
        }
        i = k;
    }
}

/// The whitespace that the token ending at `j` takes (at most [`MAX_SENTENCE_CHARS`]
/// characters, not past `end`): where it ends, and how many line feeds it holds.
pub(super) fn whitespace_after(chars: &[char], j: usize, end: usize) -> (usize, usize) {
    let mut k = j + 1;
    let mut line_feeds = 0;
    while k < end && is_space(chars[k]) && k - j <= MAX_SENTENCE_CHARS {
        line_feeds += usize::from(chars[k] == '\n');
        k += 1;
    }
    (k, line_feeds)
}

/// Reads the sentences of one piece after another; one per thread, its buffers reused.
pub struct PieceReader {
    path: PathBuf,
    model: Arc<ModelFile>,
    sentences: RawSentences,
    work: Workspace,
    piece: Piece,
    labels: Vec<u8>,
    /// Each label's score margin ([`Workspace::classify_with_margins`]).
    margins: Vec<f32>,
    /// `piece.chars[pos..own.end]` is not in a sentence yet.
    pos: usize,
    /// 1-based line of `piece.chars[counted]`: each character counted once.
    line: u64,
    counted: usize,
    new_doc: bool,
    new_par: bool,
    /// The text of the last sentence returned as malformed.
    malformed: String,
    lines: String,
    body: String,
    form: String,
    words: Vec<String>,
    text: String,
    misc: String,
}

impl PieceReader {
    /// A reader of pieces of the file `path` (named in errors) through `model`'s tokenizer,
    /// sentences ending as `sentences` says.
    pub fn new(path: &Path, model: Arc<ModelFile>, sentences: RawSentences) -> Result<PieceReader, NoTokenizer> {
        model.tokenizer().ok_or(NoTokenizer)?;
        Ok(PieceReader {
            path: path.to_path_buf(),
            model,
            sentences,
            work: Workspace::default(),
            piece: Piece::default(),
            labels: Vec::new(),
            margins: Vec::new(),
            pos: 0,
            line: 1,
            counted: 0,
            new_doc: false,
            new_par: false,
            malformed: String::new(),
            lines: String::new(),
            body: String::new(),
            form: String::new(),
            words: Vec::new(),
            text: String::new(),
            misc: String::new(),
        })
    }

    /// The model it reads with.
    pub fn model(&self) -> &Arc<ModelFile> {
        &self.model
    }

    /// Errors from now on name `path`.
    pub fn set_path(&mut self, path: &Path) {
        if self.path != path {
            self.path = path.to_path_buf();
        }
    }

    /// Takes `piece` to read its sentences; `piece` gets the one read before (its allocations
    /// to reuse).
    pub fn load(&mut self, piece: &mut Piece) {
        std::mem::swap(&mut self.piece, piece);
        let p = &self.piece;
        self.pos = p.own.start;
        self.counted = p.own.start;
        self.line = p.line;
        self.new_doc = p.new_doc;
        self.new_par = p.new_par;
        self.labels.clear();
        self.margins.clear();
        if p.is_empty() {
            return;
        }
        if let Some((_, weights)) = self.model.tokenizer() {
            self.work.classify_with_margins(&weights, &p.chars, &mut self.labels, Some(&mut self.margins));
        }
    }

    /// The text of the sentence last returned as malformed (invalid UTF-8 read as U+FFFD).
    pub fn sentence_text(&self) -> &str {
        &self.malformed
    }

    /// Reads the next sentence of the piece into `sent`; `None` once the piece is read.
    pub fn read_next(&mut self, sent: &mut Sentence) -> Option<Result<(), CorpusError>> {
        let end = self.piece.own.end;
        let chars = &self.piece.chars;
        let start = chars[self.pos..end].iter().position(|&c| !is_space(c))? + self.pos;
        if self.labels.len() != chars.len() {
            return Some(Err(self.error_at(self.line, NoTokenizer)));
        }
        // Whitespace that no token takes is kept up to the length of a sentence.
        self.pos = self.pos.max(start.saturating_sub(MAX_SENTENCE_CHARS));
        let (last, after, paragraph) = sentence_end(chars, &self.labels, start, end, self.sentences);
        let invalid = self.piece.invalid.iter().find(|(at, _)| (start..=last).contains(at)).map(|&(_, offset)| offset);
        if let Some(offset) = invalid {
            return Some(Err(self.malformed(start, last, after, paragraph, offset)));
        }
        Some(self.build(sent, start, last, after, paragraph))
    }

    /// The line of `chars[at]`, `at` at or after the last position asked for.
    fn line_at(&mut self, at: usize) -> u64 {
        let p = &self.piece;
        self.line += p.chars[self.counted..at].iter().filter(|&&c| c == '\n').count() as u64;
        self.line +=
            p.dropped_lines.iter().filter(|(i, _)| (self.counted..at).contains(i)).map(|(_, n)| n).sum::<u64>();
        self.counted = at;
        self.line
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
        let chars = &self.piece.chars;
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
        let margin = |i: usize| self.margins.get(i).copied().unwrap_or(f32::INFINITY);
        // A sentence ended by a paragraph had no decision to make there.
        let mut sentence_margin = if paragraph { f32::INFINITY } else { margin(end) };
        let mut token_margins = std::mem::take(&mut sent.tokenization.words);
        token_margins.clear();
        while i <= end {
            let mut j = i;
            while j < end && !is_space(chars[j + 1]) && self.labels[j] < TOKEN {
                j += 1;
            }
            let token_margin = (i..=j).map(margin).fold(f32::INFINITY, f32::min);
            if j < end {
                sentence_margin = sentence_margin.min(margin(j));
            }
            let mut k = j + 1;
            while k < after && is_space(chars[k]) {
                k += 1;
            }
            let k = if j == end { after } else { k };
            self.form.clear();
            self.form.extend(&chars[i..=j]);
            self.misc.clear();
            // UD wants forms and `# text` in NFC: a token that is not keeps its characters in
            // MISC, every one that is not printable ASCII escaped (so that the line is NFC).
            if unicode_normalization::is_nfc_quick(self.form.chars()) != IsNormalized::Yes {
                let nfc: String = self.form.nfc().collect();
                if nfc != self.form {
                    self.misc.push_str("RawForm=");
                    escape_all(&chars[i..=j], &mut self.misc);
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
                escape(&chars[self.pos..start], &mut self.misc);
            }
            let space = &chars[j + 1..k];
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

    /// The characters `start..=end`, which hold invalid UTF-8 (the first at byte `offset`), as a
    /// malformed sentence: skipped as [`Self::build`] would take them, their text kept.
    fn malformed(&mut self, start: usize, end: usize, after: usize, paragraph: bool, offset: u64) -> CorpusError {
        let line = self.line_at(start);
        self.malformed.clear();
        self.malformed.extend(&self.piece.chars[start..=end]);
        self.pos = after;
        self.new_doc = false;
        self.new_par = paragraph;
        CorpusError { path: self.path.clone(), line, kind: ErrorKind::InvalidUtf8At { offset } }
    }

    fn error_at(&self, line: u64, e: NoTokenizer) -> CorpusError {
        CorpusError { path: self.path.clone(), line, kind: ErrorKind::Io(io::Error::other(e)) }
    }
}
