//! The sentences of CoNLL-U written from raw text, read back as the parts of a document: each
//! sentence's comments that matter (`# sent_id`, `# text`, `# newpar`, `# newdoc`), its
//! tokens and words, and where each token is in the text, in characters
//! ([`super::TokenLocator`]). The Python package builds its objects from these
//! (`spoolparse.parse_document`), so that reading CoNLL-U and finding offsets is done once,
//! here, and not again in Python (half the time of making a document there). This module
//! reads; it parses nothing and knows nothing of Python.

use std::io::Cursor;
use std::path::Path;

use crate::corpus::{Column, CorpusError, Format, Reader, Sentence, TokenKind};

use super::text::{LocateError, TokenLocator};

/// A token: its words (`count` of them from index `first` of its sentence's words; one but
/// for a multiword token), its span in the text in characters, and its MISC (the range
/// line's, for a multiword token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenPart {
    pub first: usize,
    pub count: usize,
    pub start: usize,
    pub end: usize,
    pub misc: String,
}

/// A word: its columns as written, its `Conf=` and its token's span in characters.
#[derive(Debug, Clone, PartialEq)]
pub struct WordPart {
    pub id: usize,
    pub form: String,
    pub lemma: String,
    pub upos: String,
    pub xpos: String,
    pub feats: String,
    pub head: usize,
    pub deprel: String,
    pub misc: String,
    pub confidence: Option<f64>,
    pub start: usize,
    pub end: usize,
}

/// A sentence of a document.
#[derive(Debug, Clone, PartialEq)]
pub struct SentencePart {
    pub sent_id: Option<String>,
    pub text: Option<String>,
    pub new_par: bool,
    pub new_doc: bool,
    /// Judged another language's than the model's (`# other_language`,
    /// [`crate::parse::fit::SentenceCheck`]).
    pub other_language: bool,
    pub tokens: Vec<TokenPart>,
    pub words: Vec<WordPart>,
}

/// Why CoNLL-U could not be read as the document of a text.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    #[error("sentence {sentence}: {error}")]
    Locate { sentence: usize, error: LocateError },
    #[error(transparent)]
    Leftover(LocateError),
    #[error("sentence {sentence}: word {id}: {column} is not a number")]
    NotANumber { sentence: usize, id: String, column: &'static str },
}

/// Whether a comment's first word is `key` (`# newpar`, `# newpar id = …`).
fn marked(sent: &Sentence, key: &str) -> bool {
    sent.comments.iter().any(|c| {
        let name = c.strip_prefix('#').and_then(|c| c.split('=').next()).unwrap_or("");
        name.split_whitespace().next() == Some(key)
    })
}

/// The parts of the sentence `sent`, the `index`th, its tokens found by `locator`.
fn sentence_part(sent: &Sentence, index: usize, locator: &mut TokenLocator) -> Result<SentencePart, DocumentError> {
    let mut tokens: Vec<TokenPart> = Vec::new();
    let mut words = Vec::with_capacity(sent.len());
    let mut find = |line| locator.find(line).map_err(|error| DocumentError::Locate { sentence: index + 1, error });
    for line in sent.token_lines() {
        let misc = line.get(Column::Misc);
        match line.kind() {
            TokenKind::Empty => {}
            TokenKind::Range => {
                let (start, end) = find(line)?;
                let (a, b) = line.get(Column::Id).split_once('-').unwrap_or(("0", "0"));
                let count = b.parse::<usize>().unwrap_or(0).saturating_sub(a.parse().unwrap_or(0)) + 1;
                tokens.push(TokenPart { first: words.len(), count, start, end, misc: misc.to_string() });
            }
            TokenKind::Word => {
                // A word of the last multiword token has its span; any other is a token.
                let (start, end) = match tokens.last() {
                    Some(t) if words.len() < t.first + t.count => (t.start, t.end),
                    _ => {
                        let (start, end) = find(line)?;
                        tokens.push(TokenPart { first: words.len(), count: 1, start, end, misc: misc.to_string() });
                        (start, end)
                    }
                };
                let number = |column: Column, name| {
                    line.get(column).parse::<usize>().map_err(|_| DocumentError::NotANumber {
                        sentence: index + 1,
                        id: line.get(Column::Id).to_string(),
                        column: name,
                    })
                };
                words.push(WordPart {
                    id: number(Column::Id, "ID")?,
                    form: line.get(Column::Form).to_string(),
                    lemma: line.get(Column::Lemma).to_string(),
                    upos: line.get(Column::Upos).to_string(),
                    xpos: line.get(Column::Xpos).to_string(),
                    feats: line.get(Column::Feats).to_string(),
                    head: number(Column::Head, "HEAD")?,
                    deprel: line.get(Column::Deprel).to_string(),
                    misc: misc.to_string(),
                    confidence: misc.split('|').find_map(|e| e.strip_prefix("Conf=")?.parse().ok()),
                    start,
                    end,
                });
            }
        }
    }
    Ok(SentencePart {
        sent_id: sent.comment("sent_id").map(str::to_string),
        text: sent.comment("text").map(str::to_string),
        new_par: marked(sent, "newpar"),
        new_doc: marked(sent, "newdoc"),
        other_language: sent.comment(crate::parse::fit::OTHER_LANGUAGE_KEY).is_some(),
        tokens,
        words,
    })
}

/// The sentences of `conllu`, written from raw `text` (`parse --format raw`), with each token
/// found in `text`; an error if the CoNLL-U does not read or was not written from this text.
pub fn read_document(conllu: &str, text: &str) -> Result<Vec<SentencePart>, DocumentError> {
    let reader = Reader::new(Cursor::new(conllu.as_bytes()), Path::new("<conllu>"), Format::Conllu);
    let mut locator = TokenLocator::new(text);
    let mut parts = Vec::new();
    for (i, sent) in reader.enumerate() {
        parts.push(sentence_part(&sent?, i, &mut locator)?);
    }
    locator.finish().map_err(DocumentError::Leftover)?;
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CoNLL-U as `parse --format raw` writes it for "Vámonos  al\tmar. Ok", a multiword token,
    /// a raw form and odd whitespace included.
    const CONLLU: &str = "# newdoc\n# newpar\n# sent_id = t-1\n# text = Vámonos al mar.\n\
        1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\tSpacesAfter=\\s\\s\n\
        1\tVamos\t_\tVERB\t_\t_\t0\troot\t_\tConf=0.9\n\
        2\tnos\t_\tPRON\t_\t_\t1\tobj\t_\tConf=0.8\n\
        3\tal\t_\tADP\t_\t_\t4\tcase\t_\tSpacesAfter=\\t|Conf=0.7\n\
        4\tmar\t_\tNOUN\t_\t_\t1\tobl\t_\tSpaceAfter=No|Conf=0.6\n\
        5\t.\t_\tPUNCT\t_\t_\t1\tpunct\t_\tConf=0.5\n\n\
        # sent_id = t-2\n# text = Ok\n\
        1\tOk\t_\tINTJ\t_\t_\t0\troot\t_\tRawForm=O\\u{6b}|SpaceAfter=No|Conf=1.0\n\n";

    #[test]
    fn tokens_and_words_are_found_at_their_characters_in_the_text() {
        let text = "Vámonos  al\tmar. Ok";
        let doc = read_document(CONLLU, text).unwrap();
        assert_eq!(doc.len(), 2);
        let [first, second] = &doc[..] else { unreachable!() };
        assert_eq!((first.sent_id.as_deref(), first.new_doc, first.new_par), (Some("t-1"), true, true));
        assert_eq!(first.text.as_deref(), Some("Vámonos al mar."));
        let spans: Vec<_> = first.tokens.iter().map(|t| (t.first, t.count, t.start, t.end)).collect();
        // Characters, not bytes: "á" is one.
        assert_eq!(spans, [(0, 2, 0, 7), (2, 1, 9, 11), (3, 1, 12, 15), (4, 1, 15, 16)]);
        let words: Vec<_> = first.words.iter().map(|w| (w.id, w.form.as_str(), w.head, w.start, w.end)).collect();
        assert_eq!(words[..2], [(1, "Vamos", 0, 0, 7), (2, "nos", 1, 0, 7)]);
        assert_eq!(first.words[4].confidence, Some(0.5));
        assert_eq!(
            (second.new_doc, second.new_par, second.words[0].start, second.words[0].end),
            (false, false, 17, 19)
        );
    }

    #[test]
    fn conllu_of_another_text_is_an_error_naming_the_sentence() {
        let e = read_document(CONLLU, "Vámonos  al\tmar. No").unwrap_err();
        assert!(e.to_string().starts_with("sentence 2: token \"Ok\" is not in the text at character 17"), "{e}");
        let e = read_document(CONLLU, "Vámonos  al\tmar. Ok and more").unwrap_err();
        assert!(e.to_string().contains("goes on after the last token, at character 20"), "{e}");
    }
}
