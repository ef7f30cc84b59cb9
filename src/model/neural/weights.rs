//! A neural model's weights: owned ([`NeuralModel`], as training makes them) and borrowed
//! ([`Net`], each tensor a slice of the memory-mapped `NEURAL` section or of a
//! [`NeuralModel`]), and their two model-file sections. Shapes are checked once, when the
//! weights are opened ([`NeuralSections::decode`]), so that the kernels index without checks
//! of their own; this module computes nothing.

use super::spec::{CharEncoder, Spec};

/// The model file's section of the neural model's [`Spec`]: [`SPEC_FORMAT`], then the spec
/// (bincode), then [`Spec::tags`] (a little-endian `u32`), then the character encoder (a byte:
/// 0 [`CharEncoder::Conv`], 1 [`CharEncoder::BiLstm`]).
pub const NEUMETA: [u8; 8] = *b"NEUMETA\0";
/// The first bytes of `NEUMETA`, which name the spec's layout: a spec of another layout does
/// not decode into this build's (format 2: the contextual encoder a choice of two; format 3:
/// the count of tags after the spec; format 4: the character encoder after it).
pub const SPEC_FORMAT: [u8; 4] = *b"NEU4";
/// Format 3, read still: the same spec with the count of tags, no character encoder after it
/// (its models convolve characters).
const SPEC_FORMAT_3: [u8; 4] = *b"NEU3";
/// Format 2, read still: the same spec, with no tags after it (its models do not tag).
const SPEC_FORMAT_2: [u8; 4] = *b"NEU2";
/// The model file's section of the weights: little-endian f32, laid out by [`Spec::layout`].
pub const NEURAL: [u8; 8] = *b"NEURAL\0\0";

/// Model-file sections as written: tag and bytes.
pub type Sections = Vec<([u8; 8], Vec<u8>)>;

/// What is wrong with a neural model's sections.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    #[error("the neural model's description does not decode: {0}")]
    Spec(String),
    #[error("the neural model is of a format this build does not read (an earlier build's: retrain it)")]
    Format,
    #[error("the neural weights hold {found} values, their description needs {expected}")]
    Length { found: usize, expected: usize },
    #[error("the neural weights are not 4-byte aligned")]
    Misaligned,
}

/// A neural model as training leaves it: its architecture and every weight, laid out as in
/// the file.
#[derive(Debug, Clone, PartialEq)]
pub struct NeuralModel {
    pub spec: Spec,
    data: Vec<f32>,
    offsets: Vec<usize>,
}

impl NeuralModel {
    /// `data` laid out as `spec` says, checked.
    pub fn new(spec: Spec, data: Vec<f32>) -> Result<NeuralModel, NetError> {
        let offsets = check(&spec, &data)?;
        Ok(NeuralModel { spec, data, offsets })
    }

    /// Every weight, in storage order.
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    /// The borrowed view the kernels read.
    pub fn net(&self) -> Net<'_> {
        Net { spec: &self.spec, data: &self.data, offsets: &self.offsets }
    }

    /// The two sections that store it: `NEUMETA` and `NEURAL`.
    pub fn sections(&self) -> Sections {
        let mut meta = SPEC_FORMAT.to_vec();
        meta.extend(bincode::serialize(&self.spec).expect("a spec always serializes"));
        meta.extend(u32::try_from(self.spec.tags).expect("checked: at most 2^16 tags").to_le_bytes());
        meta.push(match self.spec.chars.encoder {
            CharEncoder::Conv => 0,
            CharEncoder::BiLstm => 1,
        });
        let data = self.data.iter().flat_map(|x| x.to_le_bytes()).collect();
        vec![(NEUMETA, meta), (NEURAL, data)]
    }

    /// A copy of the weights `net` views.
    pub fn of(net: &Net) -> NeuralModel {
        NeuralModel { spec: net.spec.clone(), data: net.data.to_vec(), offsets: net.offsets.to_vec() }
    }
}

/// A model file's neural sections, decoded and checked: the spec, and where each tensor lies
/// in the weight section.
#[derive(Debug, Clone)]
pub struct NeuralSections {
    pub spec: Spec,
    offsets: Vec<usize>,
}

impl NeuralSections {
    /// Decodes the `NEUMETA` section and checks the `NEURAL` section's bytes against it.
    pub fn decode(meta: &[u8], weights: &[u8]) -> Result<NeuralSections, NetError> {
        let spec = decode_spec(meta)?;
        let offsets = check(&spec, as_floats(weights)?)?;
        Ok(NeuralSections { spec, offsets })
    }

    /// The view of `weights` (the bytes [`NeuralSections::decode`] checked).
    pub fn net<'a>(&'a self, weights: &'a [u8]) -> Net<'a> {
        let data = as_floats(weights).expect("checked when decoded");
        Net { spec: &self.spec, data, offsets: &self.offsets }
    }
}

/// The spec of a `NEUMETA` section of format 4, 3 or 2.
fn decode_spec(meta: &[u8]) -> Result<Spec, NetError> {
    let invalid = |e: bincode::Error| NetError::Spec(e.to_string());
    if let Some(v2) = meta.strip_prefix(&SPEC_FORMAT_2) {
        return bincode::deserialize(v2).map_err(invalid);
    }
    let (mut rest, has_encoder) = match (meta.strip_prefix(&SPEC_FORMAT), meta.strip_prefix(&SPEC_FORMAT_3)) {
        (Some(rest), _) => (rest, true),
        (None, Some(rest)) => (rest, false),
        (None, None) => return Err(NetError::Format),
    };
    let mut spec: Spec = bincode::deserialize_from(&mut rest).map_err(invalid)?;
    let missing = |what: &str| NetError::Spec(format!("{what} is missing"));
    let (tags, rest) = rest.split_first_chunk::<4>().ok_or_else(|| missing("the count of tags"))?;
    spec.tags = u32::from_le_bytes(*tags) as usize;
    spec.chars.encoder = match (has_encoder, rest) {
        (false, []) => CharEncoder::Conv,
        (true, [0]) => CharEncoder::Conv,
        (true, [1]) => CharEncoder::BiLstm,
        (true, []) => return Err(missing("the character encoder")),
        _ => return Err(NetError::Spec("bytes follow the spec that no format has".to_string())),
    };
    Ok(spec)
}

/// `bytes` as the f32 values they hold (a little-endian host: the model file refuses others).
fn as_floats(bytes: &[u8]) -> Result<&[f32], NetError> {
    // SAFETY: any bit pattern is an f32; `align_to` puts only aligned values in the middle.
    let (head, data, tail) = unsafe { bytes.align_to::<f32>() };
    if !head.is_empty() || !tail.is_empty() {
        return Err(NetError::Misaligned);
    }
    Ok(data)
}

/// Checks `data` against `spec`'s layout; the tensors' offsets.
fn check(spec: &Spec, data: &[f32]) -> Result<Vec<usize>, NetError> {
    spec.check().map_err(NetError::Spec)?;
    let (offsets, total) = spec.layout();
    if data.len() != total {
        return Err(NetError::Length { found: data.len(), expected: total });
    }
    Ok(offsets)
}

/// Every tensor of a neural model, borrowed, in the roles the kernels give them.
#[derive(Debug, Clone, Copy)]
pub struct Net<'a> {
    pub spec: &'a Spec,
    data: &'a [f32],
    offsets: &'a [usize],
}

impl<'a> Net<'a> {
    /// Number of weights.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether it has none (never, for a checked spec).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    fn tensor(&self, index: usize, len: usize) -> &'a [f32] {
        &self.data[self.offsets[index]..self.offsets[index] + len]
    }

    /// The hashed embedding table `i`.
    pub fn embed(&self, i: usize) -> &'a [f32] {
        let h = self.spec.hashed[i];
        self.tensor(i, (1 << h.bits) * h.dim)
    }

    fn after_embeddings(&self, k: usize, len: usize) -> &'a [f32] {
        self.tensor(self.spec.hashed.len() + k, len)
    }

    fn after_chars(&self, k: usize, len: usize) -> &'a [f32] {
        self.after_embeddings(self.spec.chars.tensors() + k, len)
    }

    pub fn char_embed(&self) -> &'a [f32] {
        let c = self.spec.chars;
        self.after_embeddings(0, (1 << c.bits) * c.dim)
    }

    /// The character convolution's weights ([`CharEncoder::Conv`]).
    pub fn char_w(&self) -> &'a [f32] {
        let c = self.spec.chars;
        self.after_embeddings(1, 3 * c.dim * c.filters)
    }

    pub fn char_b(&self) -> &'a [f32] {
        self.after_embeddings(2, self.spec.chars.filters)
    }

    /// The character BiLSTM's weights in direction `dir` (0 forward, 1 backward;
    /// [`CharEncoder::BiLstm`]), as [`Net::lstm`]'s.
    pub fn char_lstm(&self, dir: usize) -> (&'a [f32], &'a [f32], &'a [f32]) {
        let first = self.spec.hashed.len() + 1 + 3 * dir;
        self.lstm_at(first, self.spec.chars.dim, self.spec.chars.filters / 2)
    }

    /// The three tensors of one LSTM direction from tensor `first`: input weights (`d` inputs),
    /// recurrent weights and bias, of `h` units.
    fn lstm_at(&self, first: usize, d: usize, h: usize) -> (&'a [f32], &'a [f32], &'a [f32]) {
        (self.tensor(first, d * 4 * h), self.tensor(first + 1, h * 4 * h), self.tensor(first + 2, 4 * h))
    }

    pub fn root(&self) -> &'a [f32] {
        self.after_chars(0, self.spec.input_dim())
    }

    pub fn in_w(&self) -> &'a [f32] {
        self.after_chars(1, self.spec.input_dim() * self.spec.dim)
    }

    pub fn in_b(&self) -> &'a [f32] {
        self.after_chars(2, self.spec.dim)
    }

    /// Convolution layer `layer`'s weights ([`super::Context::Conv`]).
    pub fn ctx_w(&self, layer: usize) -> &'a [f32] {
        self.after_chars(3 + self.spec.context.tensors_per_layer() * layer, 3 * self.spec.dim * self.spec.dim)
    }

    pub fn ctx_b(&self, layer: usize) -> &'a [f32] {
        self.after_chars(4 + self.spec.context.tensors_per_layer() * layer, self.spec.dim)
    }

    /// BiLSTM layer `layer`'s weights in direction `dir` (0 forward, 1 backward;
    /// [`super::Context::BiLstm`]): input weights, recurrent weights and bias, gates in the
    /// order input, forget, output, candidate.
    pub fn lstm(&self, layer: usize, dir: usize) -> (&'a [f32], &'a [f32], &'a [f32]) {
        let chars = self.spec.hashed.len() + self.spec.chars.tensors();
        let first = chars + 3 + self.spec.context.tensors_per_layer() * layer + 3 * dir;
        self.lstm_at(first, self.spec.dim, self.spec.dim / 2)
    }

    fn after_layers(&self, k: usize, len: usize) -> &'a [f32] {
        let context = &self.spec.context;
        self.after_chars(3 + context.tensors_per_layer() * context.layers() + k, len)
    }

    pub fn absent(&self) -> &'a [f32] {
        self.after_layers(0, self.spec.dim)
    }

    /// Per label, the vector added to a dependent item's (the label of its arc).
    pub fn label(&self) -> &'a [f32] {
        self.after_layers(1, self.spec.labels() * self.spec.dim)
    }

    pub fn w1(&self) -> &'a [f32] {
        self.after_layers(2, self.spec.items.len() * self.spec.dim * self.spec.hidden)
    }

    pub fn b1(&self) -> &'a [f32] {
        self.after_layers(3, self.spec.hidden)
    }

    pub fn w2(&self) -> &'a [f32] {
        self.after_layers(4, self.spec.hidden * self.spec.classes)
    }

    pub fn b2(&self) -> &'a [f32] {
        self.after_layers(5, self.spec.classes)
    }

    /// The tag softmax's weights (`dim × tags`) and bias, of a model that tags
    /// ([`Spec::tags`]).
    pub fn tag(&self) -> Option<(&'a [f32], &'a [f32])> {
        let (d, tags) = (self.spec.dim, self.spec.tags);
        (tags > 0).then(|| (self.after_layers(6, d * tags), self.after_layers(7, tags)))
    }
}
