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
//!
//! By file: [`format`](mod@format) (dialects, columns, valid values, the UD UPOS tags), [`sentence`] (one
//! sentence's lines and their edits), [`reader`] (streaming a file into sentences), [`error`]
//! (what is wrong, and where), [`tree`] (checks on gold trees), [`unparsed`] (how an unreadable
//! sentence travels in output), [`shard`] (where a file may be split), [`conllu`] and
//! [`conllx`] (the IDs of each dialect).

pub mod conllu;
pub mod conllx;
pub mod error;
pub mod format;
pub mod reader;
pub mod sentence;
pub mod shard;
pub mod tree;
pub mod unparsed;

pub use error::{BadToken, CorpusError, ErrorKind};
pub use format::{
    check_lemma, check_value, parse_head, Column, Format, TokenKind, Upos, COLUMNS, MAX_LEMMA_CHARS, UPOS_TAGS,
};
pub use reader::{BlockRead, Limits, Reader, NOT_THIS_FORMAT_AFTER};
pub use sentence::{is_space_separator, Sentence, TokenLine};
