//! The neural model as candle computes it for training: every tensor of [`Spec::tensors`] a
//! [`Var`], the encoder run over a batch of sentences at once ([`Network::encode`]), and the
//! loss of the parser's decisions on the contextual vectors ([`Network::loss`]). The functions
//! are those of [`super::kernels`] (a test holds them equal), batched: sentences padded to one
//! length with masks that keep the padding at zero, so that each sentence sees exactly what
//! it sees alone. This module owns the training graph; it does not decide what to train on.

use candle_core::{DType, Device, Tensor, Var};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::input::{char_ids, hashed_rows, FormKeys};
use crate::model::features::TokenAttrs;
use crate::model::neural::{CharEncoder, Context, Key, Spec};
use crate::model::neural::{NetError, NeuralModel};

/// What candle reports goes to the caller as this.
pub type Result<T> = candle_core::Result<T>;

/// A sentence for the encoder: its token attributes (node 0 first) and its words' forms.
pub struct Words<'s> {
    pub attrs: &'s [TokenAttrs],
    pub forms: &'s [String],
}

/// The parameters of a neural model, in [`Spec::tensors`] order, on a device.
pub struct Network {
    pub spec: Spec,
    pub vars: Vec<Var>,
    dtype: DType,
    device: Device,
}

/// A batch laid out for [`Network::encode`]: `len` positions per sentence (node 0, its words,
/// padding).
pub struct Encoded {
    /// The contextual vectors, `batch × len` rows of `dim`.
    pub vectors: Tensor,
    /// Positions per sentence.
    pub len: usize,
}

/// One decision of the parser to learn from: the row of each item's vector (among the batch's
/// rows, or [`Decisions::absent`]), the legal transitions and those that cost nothing.
#[derive(Default)]
pub struct Decisions {
    /// Per decision, per item, the row.
    pub rows: Vec<u32>,
    /// Per decision, per item, the label of a dependent item's arc ([`Decisions::no_label`]
    /// for other items and absent ones).
    pub labels: Vec<u32>,
    /// Per decision, per class: 0 where legal, a large negative number where not.
    pub legal: Vec<f32>,
    /// The same for the classes of zero cost.
    pub zero_cost: Vec<f32>,
}

/// The words of a batch whose gold tag a model that tags learns: each one's row among the
/// batch's vectors, and its tag.
#[derive(Default)]
pub struct TagTargets {
    pub rows: Vec<u32>,
    pub tags: Vec<u32>,
}

impl TagTargets {
    /// Adds the words of a sentence whose node 0 is row `first`, `tags` one per word
    /// ([`NO_TAG`] where it is not known: not learned).
    pub fn add(&mut self, first: u32, tags: &[u16]) {
        for (w, &t) in tags.iter().enumerate().filter(|&(_, &t)| t != NO_TAG) {
            self.rows.push(first + 1 + w as u32);
            self.tags.push(u32::from(t));
        }
    }

    pub fn clear(&mut self) {
        self.rows.clear();
        self.tags.clear();
    }
}

/// A word's tag where its gold tag is not known (a partial annotation, a tag the model's tag
/// set lacks).
pub const NO_TAG: u16 = u16::MAX;

/// What training drops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dropout {
    /// Share of the input values and of the contextual vectors zeroed (inverted dropout).
    pub values: f32,
    /// Share of words whose form embedding is zeroed: what a form never seen in training
    /// reads at parse time (its row was never trained and starts at zero, see [`initial`]),
    /// so that the model learns to parse such words from their characters, tags and context.
    pub words: f32,
}

/// A mask value for classes left out: exp of it underflows to 0 without making a NaN.
pub const OUT: f32 = -1e9;

impl Decisions {
    /// The row that stands for an absent item, for a batch of `rows` rows.
    pub fn absent(rows: usize) -> u32 {
        rows as u32
    }

    /// The label index that adds nothing, for a model of `spec`.
    pub fn no_label(spec: &Spec) -> u32 {
        spec.labels() as u32
    }

    /// Decisions held.
    pub fn len(&self, spec: &Spec) -> usize {
        self.rows.len() / spec.items.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn clear(&mut self) {
        self.rows.clear();
        self.labels.clear();
        self.legal.clear();
        self.zero_cost.clear();
    }
}

/// Glorot-uniform initial values for a tensor of `shape`; zero for biases (but an LSTM's
/// forget gate) and hashed
/// embedding tables (a row no training word reaches stays zero: an unseen form, tag or
/// suffix adds nothing), uniform ±0.1 for character embeddings and the root and absent
/// vectors.
fn initial(name: &str, shape: &[usize], rng: &mut ChaCha8Rng) -> Vec<f32> {
    let n: usize = shape.iter().product();
    if name.contains("lstm.") && name.ends_with(".b") {
        // A forget gate open at first (Jozefowicz et al. 2015): gates input, forget, output,
        // candidate, a quarter each.
        return (0..n).map(|i| if i / (n / 4) == 1 { 1.0 } else { 0.0 }).collect();
    }
    let bound = match shape {
        [_] if name.ends_with(".b") || name.ends_with(".b1") || name.ends_with(".b2") => 0.0,
        _ if name.starts_with("embed.") => 0.0,
        [fan_in, fan_out] if !name.starts_with("embed") && name != "char.embed" => {
            (6.0 / (*fan_in + *fan_out) as f32).sqrt()
        }
        _ => 0.1,
    };
    (0..n).map(|_| if bound == 0.0 { 0.0 } else { rng.gen_range(-bound..bound) }).collect()
}

impl Network {
    /// A network of `spec` with initial weights drawn from `rng`.
    pub fn new(spec: Spec, dtype: DType, rng: &mut ChaCha8Rng) -> Result<Network> {
        let device = Device::Cpu;
        let vars = spec
            .tensors()
            .iter()
            .map(|t| {
                let values = initial(&t.name, &t.shape, rng);
                Var::from_tensor(&Tensor::from_vec(values, t.shape.as_slice(), &device)?.to_dtype(dtype)?)
            })
            .collect::<Result<_>>()?;
        Ok(Network { spec, vars, dtype, device })
    }

    /// A network holding `model`'s weights.
    pub fn from_model(model: &NeuralModel, dtype: DType) -> Result<Network> {
        let device = Device::Cpu;
        let (offsets, _) = model.spec.layout();
        let vars = model
            .spec
            .tensors()
            .iter()
            .zip(offsets)
            .map(|(t, at)| {
                let values = model.data()[at..at + t.len()].to_vec();
                Var::from_tensor(&Tensor::from_vec(values, t.shape.as_slice(), &device)?.to_dtype(dtype)?)
            })
            .collect::<Result<_>>()?;
        Ok(Network { spec: model.spec.clone(), vars, dtype, device })
    }

    /// The weights as they are now, laid out for the model file.
    pub fn model(&self) -> std::result::Result<NeuralModel, NetError> {
        let (offsets, total) = self.spec.layout();
        let mut data = vec![0.0f32; total];
        for ((var, at), t) in self.vars.iter().zip(offsets).zip(self.spec.tensors()) {
            let values = var
                .as_tensor()
                .flatten_all()
                .and_then(|v| v.to_dtype(DType::F32))
                .and_then(|v| v.to_vec1::<f32>())
                .map_err(|e| NetError::Spec(e.to_string()))?;
            data[at..at + t.len()].copy_from_slice(&values);
        }
        NeuralModel::new(self.spec.clone(), data)
    }

    fn var(&self, name: &str) -> &Tensor {
        let i = self.spec.tensors().iter().position(|t| t.name == name).expect("a tensor of the spec");
        self.vars[i].as_tensor()
    }

    fn floats(&self, values: Vec<f32>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_vec(values, shape, &self.device)?.to_dtype(self.dtype)
    }

    fn ids(&self, values: Vec<u32>) -> Result<Tensor> {
        let n = values.len();
        Tensor::from_vec(values, n, &self.device)
    }

    /// Width-3 windows of dilation `gap` along dimension 1 of `x` (`batch × len × dim`), zeros
    /// past either end: `batch · len` rows of `3 dim`.
    fn windows(x: &Tensor, gap: usize) -> Result<Tensor> {
        let (b, len, dim) = x.dims3()?;
        let padded = x.pad_with_zeros(1, gap, gap)?;
        let w =
            Tensor::cat(&[padded.narrow(1, 0, len)?, padded.narrow(1, gap, len)?, padded.narrow(1, 2 * gap, len)?], 2)?;
        w.reshape((b * len, 3 * dim))
    }

    /// The character vectors of `forms`, one row each.
    fn char_vectors(&self, forms: &[&str]) -> Result<Tensor> {
        let c = self.spec.chars;
        let mut ids: Vec<Vec<usize>> = Vec::with_capacity(forms.len());
        for form in forms {
            let mut v = Vec::new();
            char_ids(&c, form, &mut v);
            ids.push(v);
        }
        let len = ids.iter().map(Vec::len).max().unwrap_or(2);
        let pad = 1u32 << c.bits;
        let mut flat = Vec::with_capacity(forms.len() * len);
        let mut mask = Vec::with_capacity(forms.len() * len);
        for v in &ids {
            flat.extend(v.iter().map(|&i| i as u32));
            flat.extend(std::iter::repeat_n(pad, len - v.len()));
            mask.extend(std::iter::repeat_n(0.0, v.len()));
            mask.extend(std::iter::repeat_n(OUT, len - v.len()));
        }
        let u = forms.len();
        let table =
            Tensor::cat(&[self.var("char.embed").clone(), Tensor::zeros((1, c.dim), self.dtype, &self.device)?], 0)?;
        let emb = table.index_select(&self.ids(flat)?, 0)?;
        match c.encoder {
            CharEncoder::Conv => {
                let emb = emb.reshape((u, len, c.dim))?;
                let conv = Self::windows(&emb, 1)?.matmul(self.var("char.w"))?.reshape((u, len, c.filters))?;
                let masked = conv.broadcast_add(&self.floats(mask, &[u, len, 1])?)?;
                masked.max(1)?.broadcast_add(self.var("char.b"))
            }
            CharEncoder::BiLstm => {
                let h = c.filters / 2;
                let kept: Vec<f32> = mask.iter().map(|&m| if m == 0.0 { 1.0 } else { 0.0 }).collect();
                let kept = self.floats(kept, &[u, len])?;
                let steps = (0..len).map(|t| kept.narrow(1, t, 1)).collect::<Result<Vec<_>>>()?;
                let run = |reverse| -> Result<Tensor> {
                    let dir = if reverse { "bwd" } else { "fwd" };
                    self.lstm(&emb, (u, len, h), &format!("char.lstm.{dir}"), &steps, reverse)?.reshape((u * len, h))
                };
                // The state after each direction's last character: forward at the word's end,
                // backward at its start.
                let ends = ids.iter().enumerate().map(|(i, v)| (i * len + v.len() - 1) as u32).collect();
                let starts = (0..u).map(|i| (i * len) as u32).collect();
                Tensor::cat(
                    &[run(false)?.index_select(&self.ids(ends)?, 0)?, run(true)?.index_select(&self.ids(starts)?, 0)?],
                    1,
                )
            }
        }
    }

    /// One direction of a BiLSTM layer of `h` units (the tensors named `prefix`) over `x`,
    /// `b · len` rows, from the last position to the first if `reverse`: `b × len × h`.
    /// `masks[t]` (`b × 1`) is 0 at padding, where the state is reset to zero, so that the
    /// backward direction starts each sequence at its own last element, as alone.
    fn lstm(
        &self,
        x: &Tensor,
        (b, len, h): (usize, usize, usize),
        prefix: &str,
        masks: &[Tensor],
        reverse: bool,
    ) -> Result<Tensor> {
        let wh = self.var(&format!("{prefix}.wh"));
        let gates_x = x
            .matmul(self.var(&format!("{prefix}.wx")))?
            .broadcast_add(self.var(&format!("{prefix}.b")))?
            .reshape((b, len, 4 * h))?;
        let mut state = Tensor::zeros((b, h), self.dtype, &self.device)?;
        let mut cell = state.clone();
        let mut out = vec![state.clone(); len];
        for step in 0..len {
            let t = if reverse { len - 1 - step } else { step };
            let gates = (gates_x.narrow(1, t, 1)?.squeeze(1)? + state.matmul(wh)?)?;
            let ifo = candle_nn::ops::sigmoid(&gates.narrow(1, 0, 3 * h)?)?;
            let candidate = gates.narrow(1, 3 * h, h)?.tanh()?;
            let c = ((ifo.narrow(1, h, h)? * &cell)? + (ifo.narrow(1, 0, h)? * candidate)?)?;
            let new = (ifo.narrow(1, 2 * h, h)? * c.tanh()?)?;
            cell = c.broadcast_mul(&masks[t])?;
            state = new.broadcast_mul(&masks[t])?;
            out[t] = state.clone();
        }
        Tensor::stack(&out, 1)
    }

    /// A dropout mask of `rows × cols`: each value kept with probability `1 - p` and scaled by
    /// `1 / (1 - p)` (inverted dropout, so that parsing needs no scaling).
    fn dropout_mask(&self, rows: usize, cols: usize, p: f32, rng: &mut ChaCha8Rng) -> Result<Tensor> {
        let keep = 1.0 / (1.0 - p);
        let values = (0..rows * cols).map(|_| if rng.gen::<f32>() < p { 0.0 } else { keep }).collect();
        self.floats(values, &[rows, cols])
    }

    /// Encodes `batch`: its contextual vectors, each sentence padded to the longest, with
    /// `dropout` if training.
    pub fn encode(&self, batch: &[Words], mut dropout: Option<(Dropout, &mut ChaCha8Rng)>) -> Result<Encoded> {
        let spec = &self.spec;
        let words: usize = batch.iter().map(|s| s.attrs.len() - 1).sum();
        let len = batch.iter().map(|s| s.attrs.len()).max().unwrap_or(1);
        // Distinct forms, each encoded once.
        let mut index = std::collections::HashMap::new();
        let mut forms: Vec<&str> = Vec::new();
        let mut form_of = Vec::with_capacity(words);
        let mut hashed: Vec<Vec<u32>> = vec![Vec::with_capacity(words); spec.hashed.len()];
        let mut rows = Vec::new();
        for s in batch {
            for (p, attrs) in s.attrs.iter().enumerate().skip(1) {
                let form = s.forms.get(p - 1).map_or("", String::as_str);
                let next = forms.len();
                let f = *index.entry(form).or_insert_with(|| {
                    forms.push(form);
                    next
                });
                form_of.push(f as u32);
                hashed_rows(spec, attrs, FormKeys::of(form), &mut rows);
                hashed.iter_mut().zip(&rows).for_each(|(h, &r)| h.push(r as u32));
            }
        }
        let mut parts = Vec::with_capacity(spec.hashed.len() + 1);
        for (i, ids) in hashed.into_iter().enumerate() {
            let mut part = self.var(&format!("embed.{i}")).index_select(&self.ids(ids)?, 0)?;
            if let (Some((drop, rng)), Key::Lower) = (dropout.as_mut(), spec.hashed[i].key) {
                let kept = (0..words).map(|_| if rng.gen::<f32>() < drop.words { 0.0 } else { 1.0 }).collect();
                part = part.broadcast_mul(&self.floats(kept, &[words, 1])?)?;
            }
            parts.push(part);
        }
        parts.push(self.char_vectors(&forms)?.index_select(&self.ids(form_of)?, 0)?);
        let din = spec.input_dim();
        let inputs = Tensor::cat(&parts, 1)?;
        let inputs = Tensor::cat(
            &[inputs, self.var("root").reshape((1, din))?, Tensor::zeros((1, din), self.dtype, &self.device)?],
            0,
        )?;
        // Position p of sentence b: node 0 the root row, words their rows, padding the zero row.
        let (root, zero) = (words as u32, words as u32 + 1);
        let mut at = 0u32;
        let mut layout = Vec::with_capacity(batch.len() * len);
        let mut mask = Vec::with_capacity(batch.len() * len);
        for s in batch {
            let n = s.attrs.len();
            layout.push(root);
            layout.extend(at..at + n as u32 - 1);
            layout.extend(std::iter::repeat_n(zero, len - n));
            mask.extend(std::iter::repeat_n(1.0, n));
            mask.extend(std::iter::repeat_n(0.0, len - n));
            at += n as u32 - 1;
        }
        let b = batch.len();
        let mask = self.floats(mask, &[b * len, 1])?;
        let mut x = inputs.index_select(&self.ids(layout)?, 0)?;
        if let Some((drop, rng)) = dropout.as_mut() {
            x = x.mul(&self.dropout_mask(b * len, din, drop.values, rng)?)?;
        }
        let d = spec.dim;
        let mut h = x.matmul(self.var("in.w"))?.broadcast_add(self.var("in.b"))?.relu()?.broadcast_mul(&mask)?;
        match &spec.context {
            Context::Conv { dilations } => {
                for (l, &gap) in dilations.iter().enumerate() {
                    let w = Self::windows(&h.reshape((b, len, d))?, gap)?;
                    let y =
                        w.matmul(self.var(&format!("ctx.{l}.w")))?.broadcast_add(self.var(&format!("ctx.{l}.b")))?;
                    h = (h + y.relu()?.broadcast_mul(&mask)?)?;
                }
            }
            Context::BiLstm { layers } => {
                let by_position = mask.reshape((b, len))?;
                let steps = (0..len).map(|t| by_position.narrow(1, t, 1)).collect::<Result<Vec<_>>>()?;
                for l in 0..*layers {
                    let fwd = self.lstm(&h, (b, len, d / 2), &format!("lstm.{l}.fwd"), &steps, false)?;
                    let bwd = self.lstm(&h, (b, len, d / 2), &format!("lstm.{l}.bwd"), &steps, true)?;
                    h = (h + Tensor::cat(&[fwd, bwd], 2)?.reshape((b * len, d))?)?;
                }
            }
        }
        if let Some((drop, rng)) = dropout {
            h = h.mul(&self.dropout_mask(b * len, d, drop.values, rng)?)?;
        }
        Ok(Encoded { vectors: h, len })
    }

    /// The transition scores of `decisions` over `encoded`'s vectors: one row per decision.
    /// Each decision's items go through the first layer on their own: precomputing it for
    /// every row, as parsing does, was slower here (2,000 en_ewt sentences, one epoch: 3,080
    /// words/s against 3,253), its backward pass scattering into a table of every row's
    /// blocks.
    pub fn logits(&self, encoded: &Encoded, decisions: &Decisions) -> Result<Tensor> {
        let spec = &self.spec;
        let (k, d) = (spec.items.len(), spec.dim);
        let c = decisions.len(spec);
        let table = Tensor::cat(&[encoded.vectors.clone(), self.var("absent").reshape((1, d))?], 0)?;
        let labels = Tensor::cat(&[self.var("label").clone(), Tensor::zeros((1, d), self.dtype, &self.device)?], 0)?;
        let items = (table.index_select(&self.ids(decisions.rows.clone())?, 0)?
            + labels.index_select(&self.ids(decisions.labels.clone())?, 0)?)?
        .reshape((c, k * d))?;
        let hidden = items.matmul(self.var("mlp.w1"))?.broadcast_add(self.var("mlp.b1"))?.relu()?;
        hidden.matmul(self.var("mlp.w2"))?.broadcast_add(self.var("mlp.b2"))
    }

    /// The tag scores of `rows` of `encoded`'s vectors (a model that tags, [`Spec::tags`]):
    /// one row of every tag's score each.
    pub fn tag_logits(&self, encoded: &Encoded, rows: &[u32]) -> Result<Tensor> {
        let x = encoded.vectors.index_select(&self.ids(rows.to_vec())?, 0)?;
        x.matmul(self.var("tag.w"))?.broadcast_add(self.var("tag.b"))
    }

    /// What a step minimizes: [`Network::loss`] of `decisions` (if any) plus, for a model that
    /// tags, the mean over `tags.rows` of −log of the probability the tag softmax gives the gold
    /// tag: the parser and the tagger share the encoder and learn it together, each loss
    /// weighted alike (as UDPipe 2 sums its tasks' losses).
    pub fn joint_loss(&self, encoded: &Encoded, decisions: &Decisions, tags: &TagTargets) -> Result<Tensor> {
        let tagging = (!tags.rows.is_empty())
            .then(|| {
                let logits = self.tag_logits(encoded, &tags.rows)?;
                candle_nn::loss::cross_entropy(&logits, &self.ids(tags.tags.clone())?)
            })
            .transpose()?;
        match (decisions.is_empty(), tagging) {
            (false, Some(t)) => self.loss(encoded, decisions)? + t,
            (false, None) => self.loss(encoded, decisions),
            (true, Some(t)) => Ok(t),
            (true, None) => Tensor::zeros((), self.dtype, &self.device),
        }
    }

    /// The mean over `decisions` of −log of the probability that the softmax over the legal
    /// transitions gives the zero-cost ones (the dynamic oracle's correct set).
    pub fn loss(&self, encoded: &Encoded, decisions: &Decisions) -> Result<Tensor> {
        let c = decisions.len(&self.spec);
        let classes = self.spec.classes;
        let logits = self.logits(encoded, decisions)?;
        let legal = logits.broadcast_add(&self.floats(decisions.legal.clone(), &[c, classes])?)?.log_sum_exp(1)?;
        let right = logits.broadcast_add(&self.floats(decisions.zero_cost.clone(), &[c, classes])?)?.log_sum_exp(1)?;
        (legal - right)?.mean_all()
    }
}
