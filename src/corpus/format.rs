//! The ten-column formats: their dialects ([`Format`]), the columns of a token line
//! ([`Column`]), what an ID says a line is ([`TokenKind`]), and which values a column may hold
//! ([`check_value`], [`parse_head`]). This module owns names and values; it must not read files
//! or hold sentences.

use std::fmt;
use std::path::Path;

use super::error::ErrorKind;

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
    /// Raw text: paragraphs separated by blank lines, tokenized and split into sentences by a
    /// model's tokenizer (`crate::parse::raw`); written as CoNLL-U.
    Raw,
}

impl Format {
    /// Guesses the format from a file name (`.conllx`, `.conll`, `.txt`, `.raw`, optionally
    /// `.zst`);
    /// CoNLL-U otherwise.
    pub fn from_path(path: &Path) -> Format {
        Format::from_extension(path).unwrap_or(Format::Conllu)
    }

    /// The format a file name's extension names (`.conllu`, `.conllx`, `.conll`, `.txt`,
    /// `.raw`, each optionally followed by `.zst`), or `None` for any other name.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let name = name.strip_suffix(".zst").unwrap_or(name);
        if name.ends_with(".conllx") || name.ends_with(".conll") {
            Some(Format::Conllx)
        } else if name.ends_with(".txt") {
            Some(Format::Text)
        } else if name.ends_with(".raw") {
            Some(Format::Raw)
        } else if name.ends_with(".conllu") {
            Some(Format::Conllu)
        } else {
            None
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Conllu => "CoNLL-U",
            Format::Conllx => "CoNLL-X",
            Format::Text => "tokenized text",
            Format::Raw => "raw text",
        })
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

impl Column {
    /// Every column, in file order.
    pub const ALL: [Column; COLUMNS] = [
        Column::Id,
        Column::Form,
        Column::Lemma,
        Column::Upos,
        Column::Xpos,
        Column::Feats,
        Column::Head,
        Column::Deprel,
        Column::Deps,
        Column::Misc,
    ];
}

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

/// A lemma longer than this (in characters) is refused where people write lemmas (the
/// workbench, annotations), unless it is its word's FORM: no word of the shared treebanks has
/// a lemma near it, and a runaway paste would be trained on as a class of the lemmatizer.
pub const MAX_LEMMA_CHARS: usize = 256;

/// Whether `lemma` can be a lemma of a word whose FORM is `form`: a column value
/// ([`check_value`]), without control characters (Unicode Cc) or line and paragraph
/// separators (U+2028, U+2029: line breaks to most editors and to JavaScript, though not to
/// CoNLL-U), and at most [`MAX_LEMMA_CHARS`] characters unless it is the form. Returns what is
/// wrong otherwise (never the value itself, which may be huge).
pub fn check_lemma(lemma: &str, form: &str) -> Result<(), String> {
    check_value(lemma).map_err(str::to_string)?;
    if let Some(c) = lemma.chars().find(|&c| c.is_control() || c == '\u{2028}' || c == '\u{2029}') {
        return Err(format!("contains the control or separator character U+{:04X}", u32::from(c)));
    }
    let chars = lemma.chars().count();
    if chars > MAX_LEMMA_CHARS && lemma != form {
        return Err(format!("is {chars} characters long (at most {MAX_LEMMA_CHARS})"));
    }
    Ok(())
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

/// The 17 universal part-of-speech tags of UD.
pub const UPOS_TAGS: [&str; 17] = [
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT", "SCONJ",
    "SYM", "VERB", "X",
];

/// A UD universal part-of-speech tag, one of [`UPOS_TAGS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Upos(u8);

impl Upos {
    /// The tag named `name` (exactly, as UD spells it), if it is one.
    pub fn parse(name: &str) -> Option<Upos> {
        UPOS_TAGS.iter().position(|&t| t == name).map(|i| Upos(i as u8))
    }

    /// The tag's name.
    pub fn name(self) -> &'static str {
        UPOS_TAGS[self.0 as usize]
    }

    /// The tag's index in [`UPOS_TAGS`].
    pub fn index(self) -> u8 {
        self.0
    }
}
