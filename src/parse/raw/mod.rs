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
//!   have no place in a form, see [`crate::model::tokenizer::is_space`]); on the first token of a sentence, the
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
//! Reading is two steps, so that tokenizing runs on every thread at once: a [`Splitter`]
//! decodes the input and cuts it into [`Piece`]s where a sentence surely ends (a paragraph
//! break, a line end with [`RawSentences::Lines`], a sentence end the tokenizer decides from
//! the characters around it), one thread at a time and cheaply (about 1% of a parse); a
//! [`PieceReader`] reads a piece's sentences on whichever thread takes it. A piece carries the
//! characters around it that the tokenizer reads, so its sentences are those of the whole
//! text, byte for byte, however the input is cut or read (tested against the whole text read
//! as one piece). [`RawReader`] does both in the calling thread.
//!
//! Memory is bounded whatever the input: the splitter holds at most [`MAX_PIECE_CHARS`]
//! characters, one read of [`READ_BYTES`] bytes and a lookahead, and a piece as much. A
//! sentence is cut, at its last token end, once it reaches [`MAX_SENTENCE_TOKENS`] tokens or
//! [`MAX_SENTENCE_CHARS`] characters; a token longer than that (a megabyte without a space) is
//! cut too, and a run of whitespace is kept as its first and last [`MAX_SENTENCE_CHARS`]
//! characters (the only place where input is dropped, and only whitespace; its line feeds are
//! still counted). A NUL byte ends the file with an error naming its line, after every
//! sentence before it was read. Invalid UTF-8 makes only its sentence malformed, as in the other
//! formats: each bad sequence is read as U+FFFD (so the tokenizer goes on), and the sentence
//! that holds one is returned as an error naming its line and byte offset, its text kept for the
//! placeholder ([`RawReader::sentence_text`]); the sentences around it are parsed. This module
//! owns the text-to-sentence step; the decisions are the tokenizer's.
//!
//! - `split`: decoding, and where pieces are cut;
//! - `piece`: a piece's sentences, built as CoNLL-U;
//! - `text`: whitespace and raw forms in MISC, and the raw text recovered from sentences.
//!
//! Speed (`scripts/benchmarks/raw-speed.sh /tmp/tok-en.model`, whole process, one thread, en_ewt dev ×8,
//! a model trained with `--tagger --tokenizer --jackknife 0 --epochs 8 --quantize i8`, three
//! rounds on a 2-core machine shared with other builds, so noisy): raw text 57.3k words/s,
//! tokenized text 71.7k, CoNLL-U with `--retag` 70.6k: raw text at 0.80× tokenized text (a
//! second run, after lines were counted once per character: 55.2k, 67.2k, 67.4k, 0.82×).
//! Tokenizing costs about 0.6 µs per character, nearly all of it scoring the ~20 features of
//! each character. 200 MB of letters without a space or a line break (`parse --threads 1`):
//! 24,415 sentences of 8,192 characters, 35 MB of peak RSS (`/usr/bin/time -v`), 175 s.
//! Since tokenizing moved to the pieces' threads (`scripts/benchmarks/serial-fraction.sh`,
//! median of 3 rounds on a quiet 2-CPU machine, compressed input): raw text's share of the work
//! that runs one thread at a time fell from 18.7% to 1.3% with 2 threads, at 193k → 196k
//! words/s; one thread 105k → 102k (the splitter's scan and the pieces' copies); en_ewt dev's
//! text on one line repeated to 1 GB parses with 2 threads in 68 MB of peak RSS.

mod document;
mod piece;
mod split;
mod text;

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use crate::corpus::{CorpusError, Sentence};
use crate::model::file::ModelFile;

pub use document::{read_document, DocumentError, SentencePart, TokenPart, WordPart};
pub use piece::{Piece, PieceReader};
pub use split::{Splitter, MAX_PIECE_CHARS, TARGET_CHARS};
pub use text::{recover_text, LocateError, TokenLocator};

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

/// Streams sentences out of raw text in the calling thread: the pieces of a [`Splitter`] read
/// one after the other by a [`PieceReader`], so that its sentences are those of a pipeline that
/// reads the pieces on other threads.
pub struct RawReader {
    splitter: Splitter,
    reader: PieceReader,
    piece: Piece,
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
        let reader = PieceReader::new(path, Arc::clone(&model), sentences)?;
        let splitter = Splitter::new(input, path, model, sentences, starts_file)?;
        Ok(RawReader { splitter, reader, piece: Piece::default() })
    }

    /// Cuts pieces at other sizes ([`Splitter::with_sizes`]): for tests.
    pub fn with_sizes(mut self, target: usize, max_piece: usize) -> RawReader {
        self.splitter = self.splitter.with_sizes(target, max_piece);
        self
    }

    /// The file name errors are reported against.
    pub fn path(&self) -> &Path {
        self.splitter.path()
    }

    /// The text of the sentence last returned as malformed (invalid UTF-8 read as U+FFFD).
    pub fn sentence_text(&self) -> &str {
        self.reader.sentence_text()
    }

    /// Reads the next sentence into `sent`; `None` at the end of the input.
    pub fn read_next(&mut self, sent: &mut Sentence) -> Option<Result<(), CorpusError>> {
        loop {
            if let Some(result) = self.reader.read_next(sent) {
                return Some(result);
            }
            match self.splitter.next_piece(&mut self.piece)? {
                Ok(()) => self.reader.load(&mut self.piece),
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// The next piece of text not yet read into sentences, for a [`PieceReader`] on another
    /// thread; `None` at the end of the input, after the error that ended it early, if any.
    pub fn next_piece(&mut self, piece: &mut Piece) -> Option<Result<(), CorpusError>> {
        self.splitter.next_piece(piece)
    }
}
