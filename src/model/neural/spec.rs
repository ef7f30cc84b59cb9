//! The shape of a neural model ([`Spec`]): which hashed embeddings a word gets, the character
//! encoder, the contextual encoder, which stack and buffer items the parser's MLP reads, and
//! the list of weight tensors that follows from them ([`Spec::tensors`]). Stored as the model
//! file's `NEUMETA` section; the weights' layout in `NEURAL` is computed from it, never stored.
//! This module only describes; it computes nothing.

use serde::{Deserialize, Serialize};

use crate::transition::{Configuration, NONE};

/// What a hashed embedding of a word is looked up by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Key {
    /// The lowercased form.
    Lower,
    /// UPOS, as the analysis predicted it (or the column).
    Upos,
    /// UPOS and XPOS together.
    Tag,
    /// The FEATS string.
    Feats,
    /// The last three characters, lowercased.
    Suffix,
    /// The word's shape (`Xxxx`, `dd`, …: character classes, runs cut at two).
    Shape,
}

impl Key {
    /// Whether the analysis (tagger or FEATS) predicts what the key reads.
    pub fn is_analysis(self) -> bool {
        matches!(self, Key::Upos | Key::Tag | Key::Feats)
    }
}

/// One hashed embedding table: `2^bits` rows of `dim`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hashed {
    pub key: Key,
    pub bits: u32,
    pub dim: usize,
}

/// The character encoder: hashed character embeddings, then a [`CharEncoder`] over them that
/// makes the word's character vector, `filters` wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chars {
    pub bits: u32,
    pub dim: usize,
    /// Width of the character vector: convolution filters, or both directions' units.
    pub filters: usize,
    /// Longer words keep their first and last `max_chars / 2` characters.
    pub max_chars: usize,
    /// Stored after the rest of the spec (see [`super::weights::SPEC_FORMAT`]), so that specs
    /// of earlier builds, which have no such field, still decode (as [`CharEncoder::Conv`]).
    #[serde(skip)]
    pub encoder: CharEncoder,
}

/// What reads a word's character embeddings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CharEncoder {
    /// One width-3 convolution, max-pooled over the word (Santos & Zadrozny 2014; Ma & Hovy
    /// 2016).
    #[default]
    Conv,
    /// A bidirectional LSTM, `filters / 2` units each way; the vector is the forward
    /// direction's state after the last character and the backward one's after the first
    /// (Ling et al. 2015; Ballesteros, Dyer & Smith 2015 parse over such vectors).
    BiLstm,
}

impl Chars {
    /// Weight tensors of the character encoder, its embedding table included.
    pub fn tensors(&self) -> usize {
        match self.encoder {
            CharEncoder::Conv => 3,
            CharEncoder::BiLstm => 7,
        }
    }
}

/// A node the parser's MLP reads: a stack or buffer position, or the outermost left or right
/// dependent of one (Chen & Manning 2014 read the same kinds of items).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Item {
    Stack(u8),
    Buffer(u8),
    StackLeft(u8),
    StackRight(u8),
    BufferLeft(u8),
}

impl Item {
    /// Whether the item is a dependent, whose arc's label the MLP reads with its vector.
    pub fn is_dependent(self) -> bool {
        matches!(self, Item::StackLeft(_) | Item::StackRight(_) | Item::BufferLeft(_))
    }

    /// The node this item names in `c`, or [`NONE`].
    #[inline]
    pub fn node(self, c: &Configuration) -> u32 {
        let outer = |n: Option<u32>, side: fn(&Configuration, u32) -> u32| n.map_or(NONE, |n| side(c, n));
        match self {
            Item::Stack(i) => c.stack(i.into()).unwrap_or(NONE),
            Item::Buffer(i) => c.buffer(i.into()).unwrap_or(NONE),
            Item::StackLeft(i) => outer(c.stack(i.into()), |c, n| c.left(n).outer),
            Item::StackRight(i) => outer(c.stack(i.into()), |c, n| c.right(n).outer),
            Item::BufferLeft(i) => outer(c.buffer(i.into()), |c, n| c.left(n).outer),
        }
    }
}

/// The contextual encoder over a sentence's word vectors (after their projection to
/// [`Spec::dim`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Context {
    /// Residual width-3 convolution layers, by the distance of the two neighbours each reads
    /// on either side (dilated: a layer of dilation δ widens what a word sees by δ words each
    /// way).
    Conv { dilations: Vec<usize> },
    /// Residual bidirectional LSTM layers (Hochreiter & Schmidhuber 1997; as Kiperwasser &
    /// Goldberg 2016 parse over), `dim / 2` units each way, so that a word sees the whole
    /// sentence.
    BiLstm { layers: usize },
}

impl Context {
    /// The default convolution: four layers, each word seeing 15 words either way.
    pub fn conv() -> Context {
        Context::Conv { dilations: vec![1, 2, 4, 8] }
    }

    /// The default BiLSTM: two layers.
    pub fn bilstm() -> Context {
        Context::BiLstm { layers: 2 }
    }

    /// The same kind of encoder, smaller: what [`Spec::small_for`] uses.
    pub fn small(&self) -> Context {
        match self {
            Context::Conv { .. } => Context::Conv { dilations: vec![1, 2] },
            Context::BiLstm { .. } => Context::BiLstm { layers: 1 },
        }
    }

    /// Layers of the encoder.
    pub fn layers(&self) -> usize {
        match self {
            Context::Conv { dilations } => dilations.len(),
            Context::BiLstm { layers } => *layers,
        }
    }

    /// Weight tensors per layer.
    pub fn tensors_per_layer(&self) -> usize {
        match self {
            Context::Conv { .. } => 2,
            // Per direction: input weights, recurrent weights, bias.
            Context::BiLstm { .. } => 6,
        }
    }
}

/// A neural model's architecture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    pub hashed: Vec<Hashed>,
    pub chars: Chars,
    /// Width of the contextual word vectors.
    pub dim: usize,
    pub context: Context,
    pub items: Vec<Item>,
    /// Hidden units of the parser's MLP.
    pub hidden: usize,
    /// Transitions scored (in [`crate::transition::Transition::index`] order).
    pub classes: usize,
    /// Joint tags (UPOS and XPOS, the tagger's tag set) a softmax over each word's contextual
    /// vector predicts ([`Spec::tagging`]): the model then tags as it parses, from one
    /// encoder; its words either read no tag, or read the analysis's and correct them
    /// ([`Spec::reads_analysis`]). 0: the analysis's tags stand. Stored
    /// after the rest of the spec (see [`super::weights::SPEC_FORMAT`]), so that specs of
    /// earlier builds, which have no such field, still decode.
    #[serde(skip)]
    pub tags: usize,
}

/// One weight tensor: its name and shape (row-major; a matrix maps rows of its input to its
/// columns, `y = x W`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSpec {
    pub name: String,
    pub shape: Vec<usize>,
}

impl TensorSpec {
    fn new(name: impl Into<String>, shape: &[usize]) -> TensorSpec {
        TensorSpec { name: name.into(), shape: shape.to_vec() }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether it holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Tensors start on multiples of 16 values (64 bytes) in the weight section.
pub const TENSOR_ALIGN: usize = 16;

impl Spec {
    /// The default architecture for `classes` transitions: measured choices are in
    /// [`crate::neural`]'s documentation.
    pub fn default_for(classes: usize) -> Spec {
        let h = |key, bits, dim| Hashed { key, bits, dim };
        Spec {
            hashed: vec![
                h(Key::Lower, 15, 64),
                h(Key::Upos, 8, 16),
                h(Key::Tag, 10, 16),
                h(Key::Feats, 11, 16),
                h(Key::Suffix, 12, 16),
                h(Key::Shape, 8, 8),
            ],
            chars: Chars { bits: 11, dim: 24, filters: 64, max_chars: 20, encoder: CharEncoder::Conv },
            dim: 128,
            context: Context::bilstm(),
            items: vec![
                Item::Stack(0),
                Item::Stack(1),
                Item::Stack(2),
                Item::Buffer(0),
                Item::Buffer(1),
                Item::Buffer(2),
                Item::StackLeft(0),
                Item::StackRight(0),
                Item::StackLeft(1),
                Item::StackRight(1),
                Item::BufferLeft(0),
            ],
            hidden: 256,
            classes,
            tags: 0,
        }
    }

    /// The same architecture tagging `tags` joint tags itself. With `over_analysis` its words
    /// still read the analysis's tags and FEATS, and the softmax corrects them (stacking:
    /// parsing runs the analysis, then the encoder, then the analysis's FEATS and lemmas
    /// again from the new tags); without, the words lose those embeddings and the model tags
    /// from forms alone, before the analysis's FEATS and lemmas.
    pub fn tagging(mut self, tags: usize, over_analysis: bool) -> Spec {
        if !over_analysis {
            self.hashed.retain(|h| !h.key.is_analysis());
        }
        self.tags = tags;
        self
    }

    /// Whether the words read what the analysis predicts (its UPOS, XPOS or FEATS).
    pub fn reads_analysis(&self) -> bool {
        self.hashed.iter().any(|h| h.key.is_analysis())
    }

    /// Refuses sizes no training makes (from a corrupt file): every count and width within
    /// bounds that keep the layout's arithmetic far from overflow.
    pub fn check(&self) -> Result<(), String> {
        let within = |what: &str, v: usize, max: usize| {
            if (1..=max).contains(&v) {
                Ok(())
            } else {
                Err(format!("{what} {v} is outside 1..={max}"))
            }
        };
        for h in &self.hashed {
            within("hashed table bits", h.bits as usize, 24)?;
            within("embedding width", h.dim, 1024)?;
        }
        within("character table bits", self.chars.bits as usize, 20)?;
        within("character width", self.chars.dim, 1024)?;
        within("character filters", self.chars.filters, 1024)?;
        within("characters per word", self.chars.max_chars, 256)?;
        within("vector width", self.dim, 4096)?;
        within("layers", self.context.layers() + 1, 17)?;
        match &self.context {
            Context::Conv { dilations } => {
                for &d in dilations {
                    within("dilation", d, 256)?;
                }
            }
            Context::BiLstm { .. } if !self.dim.is_multiple_of(2) => {
                return Err(format!("vector width {} is odd: a BiLSTM splits it in two directions", self.dim));
            }
            Context::BiLstm { .. } => {}
        }
        if self.chars.encoder == CharEncoder::BiLstm && !self.chars.filters.is_multiple_of(2) {
            return Err(format!(
                "character vector width {} is odd: a character BiLSTM splits it in two directions",
                self.chars.filters
            ));
        }
        within("items", self.items.len(), 64)?;
        within("hidden units", self.hidden, 8192)?;
        within("transitions", self.classes, 1 << 16)?;
        if self.classes < 4 || !self.classes.is_multiple_of(2) {
            return Err(format!("{} transitions is not 2 + 2 per label", self.classes));
        }
        if self.tags > 0 {
            within("tags", self.tags, 1 << 16)?;
        }
        Ok(())
    }

    /// A small architecture for `classes` transitions, trained in seconds: for tests and quick
    /// trials, far less accurate than [`Spec::default_for`].
    pub fn small_for(classes: usize) -> Spec {
        let mut spec = Spec::default_for(classes);
        for h in &mut spec.hashed {
            h.bits = h.bits.min(10);
            h.dim = h.dim.div_ceil(4);
        }
        spec.chars = Chars { bits: 8, dim: 8, filters: 16, max_chars: 16, encoder: spec.chars.encoder };
        spec.dim = 32;
        spec.context = spec.context.small();
        spec.hidden = 64;
        spec
    }

    /// One line for people: sizes of every part.
    pub fn summary(&self) -> String {
        let hashed: Vec<String> =
            self.hashed.iter().map(|h| format!("{:?} {}×{}", h.key, 1u64 << h.bits, h.dim)).collect();
        let items: Vec<String> = self.items.iter().map(|i| format!("{i:?}")).collect();
        format!(
            "{} f32 weights; word vectors {} wide (hashed {}; {} over {}-wide character embeddings), {}, MLP over {} items ({}) with {} hidden units, {} transitions{}",
            self.layout().1,
            self.input_dim(),
            hashed.join(", "),
            match self.chars.encoder {
                CharEncoder::Conv => format!("{} character filters", self.chars.filters),
                CharEncoder::BiLstm => format!("a character BiLSTM of {}+{}", self.chars.filters / 2, self.chars.filters / 2),
            },
            self.chars.dim,
            match &self.context {
                Context::Conv { dilations } => format!("convolution layers of {} with dilations {dilations:?}", self.dim),
                Context::BiLstm { layers } => format!("{layers} BiLSTM layers of {}+{}", self.dim / 2, self.dim / 2),
            },
            self.items.len(),
            items.join(" "),
            self.hidden,
            self.classes,
            match (self.tags, self.reads_analysis()) {
                (0, _) => String::new(),
                (n, true) => format!("; tags words itself ({n} tags), correcting the analysis's tags"),
                (n, false) => format!("; tags words itself ({n} tags), from their forms"),
            }
        )
    }

    /// Labels of the transitions scored (each has a LEFT-ARC and a RIGHT-ARC).
    pub fn labels(&self) -> usize {
        self.classes.saturating_sub(2) / 2
    }

    /// Width of a word's input vector: its hashed embeddings, then its character vector.
    pub fn input_dim(&self) -> usize {
        self.hashed.iter().map(|h| h.dim).sum::<usize>() + self.chars.filters
    }

    /// Every weight tensor, in storage order.
    pub fn tensors(&self) -> Vec<TensorSpec> {
        let (d, c) = (self.dim, self.chars);
        let mut t: Vec<TensorSpec> = self
            .hashed
            .iter()
            .enumerate()
            .map(|(i, h)| TensorSpec::new(format!("embed.{i}"), &[1 << h.bits, h.dim]))
            .collect();
        t.push(TensorSpec::new("char.embed", &[1 << c.bits, c.dim]));
        match c.encoder {
            CharEncoder::Conv => {
                t.push(TensorSpec::new("char.w", &[3 * c.dim, c.filters]));
                t.push(TensorSpec::new("char.b", &[c.filters]));
            }
            CharEncoder::BiLstm => t.extend(lstm_tensors("char.lstm", c.dim, c.filters / 2)),
        }
        t.push(TensorSpec::new("root", &[self.input_dim()]));
        t.push(TensorSpec::new("in.w", &[self.input_dim(), d]));
        t.push(TensorSpec::new("in.b", &[d]));
        for l in 0..self.context.layers() {
            match self.context {
                Context::Conv { .. } => {
                    t.push(TensorSpec::new(format!("ctx.{l}.w"), &[3 * d, d]));
                    t.push(TensorSpec::new(format!("ctx.{l}.b"), &[d]));
                }
                Context::BiLstm { .. } => t.extend(lstm_tensors(&format!("lstm.{l}"), d, d / 2)),
            }
        }
        t.push(TensorSpec::new("absent", &[d]));
        t.push(TensorSpec::new("label", &[self.labels(), d]));
        t.push(TensorSpec::new("mlp.w1", &[self.items.len() * d, self.hidden]));
        t.push(TensorSpec::new("mlp.b1", &[self.hidden]));
        t.push(TensorSpec::new("mlp.w2", &[self.hidden, self.classes]));
        t.push(TensorSpec::new("mlp.b2", &[self.classes]));
        if self.tags > 0 {
            t.push(TensorSpec::new("tag.w", &[d, self.tags]));
            t.push(TensorSpec::new("tag.b", &[self.tags]));
        }
        t
    }

    /// Where each tensor of [`Spec::tensors`] starts in the weight section, and the section's
    /// length, in values.
    pub fn layout(&self) -> (Vec<usize>, usize) {
        let mut at = 0;
        let offsets = self
            .tensors()
            .iter()
            .map(|t| {
                let start = at;
                at = (at + t.len()).next_multiple_of(TENSOR_ALIGN);
                start
            })
            .collect();
        (offsets, at)
    }
}

/// The tensors of a BiLSTM named `prefix` over inputs of `input` values, `h` units each way:
/// per direction (`fwd`, then `bwd`) input weights, recurrent weights and bias, the gates in
/// the order input, forget, output, candidate.
fn lstm_tensors(prefix: &str, input: usize, h: usize) -> Vec<TensorSpec> {
    let mut t = Vec::with_capacity(6);
    for dir in ["fwd", "bwd"] {
        t.push(TensorSpec::new(format!("{prefix}.{dir}.wx"), &[input, 4 * h]));
        t.push(TensorSpec::new(format!("{prefix}.{dir}.wh"), &[h, 4 * h]));
        t.push(TensorSpec::new(format!("{prefix}.{dir}.b"), &[4 * h]));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_that_tags_has_a_tag_softmax_and_reads_the_analysis_only_to_correct_it() {
        let reading = Spec::small_for(10);
        assert!(reading.reads_analysis());
        let names = |s: &Spec| s.tensors().into_iter().map(|t| (t.name, t.shape)).collect::<Vec<_>>();
        assert!(!names(&reading).iter().any(|(n, _)| n.starts_with("tag.")));
        for (over_analysis, inputs) in [(false, 3), (true, 6)] {
            let tagging = reading.clone().tagging(17, over_analysis);
            assert!(tagging.check().is_ok());
            assert_eq!((tagging.reads_analysis(), tagging.hashed.len()), (over_analysis, inputs));
            let t = names(&tagging);
            assert_eq!(&t[t.len() - 2..], [("tag.w".to_string(), vec![32, 17]), ("tag.b".to_string(), vec![17])]);
        }
    }
}
