//! Annotating one sentence as a model file says: tagging first when the input has no tags (or
//! the user asks to retag), then parsing. One [`Annotator`] per thread; it owns the scratch
//! buffers of both, so nothing is allocated per sentence.

use crate::corpus::Sentence;
use crate::model_file::{ModelFile, TableView};
use crate::parser::Parser;
use crate::tagger::Tagger;

/// A tagger (if the model has one) and a parser over one model file.
pub struct Annotator<'m> {
    parser: Parser<'m, TableView<'m>>,
    tagger: Option<Tagger<'m, TableView<'m>>>,
}

/// A sentence needs tags but the model has no tagger.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the model has no tagger: train it with --tagger to parse tokenized text or to --retag")]
pub struct NoTagger;

impl<'m> Annotator<'m> {
    /// An annotator for `model`.
    pub fn new(model: &'m ModelFile) -> Self {
        let tagger = model.tagger().map(|(meta, first, second)| Tagger::new(first, second, &meta.tags, &meta.dict));
        Annotator { parser: Parser::new(model), tagger }
    }

    /// Whether the model can tag.
    pub fn can_tag(&self) -> bool {
        self.tagger.is_some()
    }

    /// Tags `sent` if `tag` (writing UPOS and XPOS), then parses it.
    pub fn annotate(&mut self, sent: &mut Sentence, tag: bool) -> Result<(), NoTagger> {
        if tag {
            self.tagger.as_mut().ok_or(NoTagger)?.tag(sent);
        }
        self.parser.parse(sent);
        Ok(())
    }
}
