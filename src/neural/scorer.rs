//! What a parser asks of a neural model: [`NeuralScorer::begin`] encodes a sentence,
//! [`NeuralScorer::logits`] scores the transitions of each configuration of its parse. Owns
//! the encoder's cache and work space; the greedy loop, legality and confidence stay the
//! parser's (`crate::parse::parser`), the same for both kinds of model.

use crate::model::features::TokenAttrs;
use crate::transition::Configuration;

use super::kernels::{tag_scores, Encoder, Mlp};
use crate::base::hash::hash_str;
use crate::model::neural::Net;

/// A neural model's transition scores (and, for a model that tags, its tag scores), sentence
/// by sentence.
pub struct NeuralScorer<'m> {
    net: Net<'m>,
    encoder: Encoder,
    mlp: Mlp,
    tag_scores: Vec<f32>,
    /// The sentence [`NeuralScorer::tag`] encoded (its forms' hash), which
    /// [`NeuralScorer::begin`] then does not encode again.
    tagged: Option<u64>,
}

/// What tells one sentence's forms from another's.
fn forms_hash(forms: &[&str]) -> u64 {
    forms.iter().fold(forms.len() as u64, |h, f| crate::base::hash::mix(h ^ hash_str(f)))
}

impl<'m> NeuralScorer<'m> {
    pub fn new(net: Net<'m>) -> NeuralScorer<'m> {
        let mut mlp = Mlp::default();
        mlp.prepare_labels(&net);
        NeuralScorer { net, encoder: Encoder::default(), mlp, tag_scores: Vec::new(), tagged: None }
    }

    /// Tags predicted (a model that tags, [`crate::model::neural::Spec::tags`]); 0 for one
    /// that reads the analysis's tags.
    pub fn tags(&self) -> usize {
        self.net.spec.tags
    }

    /// Whether the words read the analysis's tags ([`crate::model::neural::Spec::reads_analysis`]).
    pub fn reads_analysis(&self) -> bool {
        self.net.spec.reads_analysis()
    }

    /// Encodes a sentence and scores every tag of each of its words: [`NeuralScorer::tags`]
    /// per word, empty for a model that does not tag. The next [`NeuralScorer::begin`] of the
    /// same forms reuses the encoding: a model that tags reads no tag, or reads the analysis's
    /// tags from before it corrects them, as it was trained to parse.
    pub fn tag(&mut self, attrs: &[TokenAttrs], forms: &[&str]) -> &[f32] {
        self.encoder.encode(&self.net, attrs, forms);
        tag_scores(&self.net, self.encoder.vectors(), &mut self.tag_scores);
        self.tagged = (self.net.spec.tags > 0).then(|| forms_hash(forms));
        &self.tag_scores
    }

    /// Transitions scored.
    pub fn classes(&self) -> usize {
        self.net.spec.classes
    }

    /// Encodes a sentence (`attrs` node 0 first, `forms` its words').
    pub fn begin(&mut self, attrs: &[TokenAttrs], forms: &[&str]) {
        if self.tagged.take() != Some(forms_hash(forms)) {
            self.encoder.encode(&self.net, attrs, forms);
        }
        self.mlp.prepare(&self.net, self.encoder.vectors());
    }

    /// The scores of every transition of `c`, a configuration of the sentence last begun, in
    /// transition index order.
    pub fn logits(&mut self, c: &Configuration) -> &[f32] {
        self.mlp.logits(&self.net, c)
    }
}
