//! What a parser asks of a neural model: [`NeuralScorer::begin`] encodes a sentence,
//! [`NeuralScorer::logits`] scores the transitions of each configuration of its parse. Owns
//! the encoder's cache and work space; the greedy loop, legality and confidence stay the
//! parser's (`crate::parse::parser`), the same for both kinds of model.

use crate::model::features::TokenAttrs;
use crate::transition::Configuration;

use super::kernels::{Encoder, Mlp};
use crate::model::neural::Net;

/// A neural model's transition scores, sentence by sentence.
pub struct NeuralScorer<'m> {
    net: Net<'m>,
    encoder: Encoder,
    mlp: Mlp,
}

impl<'m> NeuralScorer<'m> {
    pub fn new(net: Net<'m>) -> NeuralScorer<'m> {
        let mut mlp = Mlp::default();
        mlp.prepare_labels(&net);
        NeuralScorer { net, encoder: Encoder::default(), mlp }
    }

    /// Transitions scored.
    pub fn classes(&self) -> usize {
        self.net.spec.classes
    }

    /// Encodes a sentence (`attrs` node 0 first, `forms` its words').
    pub fn begin(&mut self, attrs: &[TokenAttrs], forms: &[&str]) {
        self.encoder.encode(&self.net, attrs, forms);
        self.mlp.prepare(&self.net, self.encoder.vectors());
    }

    /// The scores of every transition of `c`, a configuration of the sentence last begun, in
    /// transition index order.
    pub fn logits(&mut self, c: &Configuration) -> &[f32] {
        self.mlp.logits(&self.net, c)
    }
}
