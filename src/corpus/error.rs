//! What can be wrong with corpus input ([`ErrorKind`]), located by file and line
//! ([`CorpusError`]: `FILE:LINE: problem`), and a token that cannot be a column value
//! ([`BadToken`]). This module owns the messages; it must not decide when an error is raised.

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::format::Format;

/// A token that cannot be a CoNLL-U column value.
#[derive(Debug, Clone, thiserror::Error)]
#[error("token {}: {problem}", index + 1)]
pub struct BadToken {
    /// 0-based position of the token in its sentence.
    pub index: usize,
    /// What is wrong with it.
    pub problem: &'static str,
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
    /// Invalid UTF-8 in raw text, which has no lines to skip to: the rest of the file is not read.
    /// `offset` counts bytes from 0 at the start of the file (of the decompressed text).
    #[error(
        "invalid UTF-8 at byte offset {offset}: input must be UTF-8 (convert a file in another encoding, such as Latin-1, e.g. with iconv)"
    )]
    InvalidUtf8At { offset: u64 },
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
    #[error("empty FORM (nothing but spaces): every token needs a form (`_` is one)")]
    EmptyForm,
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
    /// is unreadable (I/O or decompression failure, binary or compressed data, another format),
    /// not just one sentence. Invalid UTF-8 in a text line is the sentence's: the rest is read.
    pub fn is_unreadable(&self) -> bool {
        matches!(
            self,
            ErrorKind::Io(_) | ErrorKind::Binary(_) | ErrorKind::Compressed { .. } | ErrorKind::NotThisFormat { .. }
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
