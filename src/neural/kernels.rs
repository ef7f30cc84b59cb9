//! The parse-time arithmetic of a neural model, written by hand over the stored weights: a
//! framework's per-call cost would dominate at these sizes (the issue measured 8–12×). The
//! encoder ([`Encoder`]: character vectors cached per form, hashed embeddings, the windowed
//! convolution or the BiLSTM, whose steps run in an AVX2 version where the CPU has it) and
//! the parser's MLP ([`Mlp`]: its first layer precomputed per word and item, Chen & Manning
//! 2014, §3.1). Training computes the same functions with candle
//! ([`super::network`]); a test holds the two equal. This module reads weights; it never
//! changes them.
//!
//! Dense products go through the `gemm` crate (candle's own, so no new dependency).
//! matrixmultiply's sgemm was tried first: it packs each weight matrix at every call, which
//! for a sentence's dozen rows cost more than the products (en_ewt dev, one thread, a model
//! of the default size: 18–20k words/s against 32–34k with `gemm`, the same trees).

use std::collections::HashMap;

use crate::model::features::TokenAttrs;
use crate::transition::{Configuration, NONE};

use super::activations;
use super::input::{char_ids, hashed_rows, FormKeys};
use crate::model::neural::{CharEncoder, Context, Net};

/// `y = x w`, row-major: `x` is `m × k`, `w` is `k × n`, `y` is `m × n`
/// with row stride `ldy`.
#[inline]
pub fn gemm(m: usize, k: usize, n: usize, x: &[f32], w: &[f32], y: &mut [f32], ldy: usize) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(x.len() >= m * k && w.len() >= k * n && y.len() >= (m - 1) * ldy + n && ldy >= n);
    // SAFETY: the bounds above cover every element gemm reads or writes with these strides.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            y.as_mut_ptr(),
            1,
            ldy as isize,
            false,
            x.as_ptr(),
            1,
            k as isize,
            w.as_ptr(),
            1,
            n as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// Adds `b` to each row of `y` (rows of `b.len()`).
fn add_rows(y: &mut [f32], b: &[f32]) {
    for row in y.chunks_exact_mut(b.len()) {
        row.iter_mut().zip(b).for_each(|(v, &b)| *v += b);
    }
}

/// Most forms a cache keeps: past it, it starts again (a corpus's frequent words come back
/// within a few sentences).
const CACHE_FORMS: usize = 1 << 17;

/// Windows of width 3 and dilation `gap` over `n` rows of `dim` (zeros past either end) into
/// `out`: row `p` is rows `p - gap`, `p`, `p + gap` side by side.
fn windows(rows: &[f32], n: usize, dim: usize, gap: usize, out: &mut Vec<f32>) {
    out.clear();
    out.resize(n * 3 * dim, 0.0);
    for p in 0..n {
        let w = &mut out[p * 3 * dim..(p + 1) * 3 * dim];
        if p >= gap {
            w[..dim].copy_from_slice(&rows[(p - gap) * dim..(p - gap + 1) * dim]);
        }
        w[dim..2 * dim].copy_from_slice(&rows[p * dim..(p + 1) * dim]);
        if p + gap < n {
            w[2 * dim..].copy_from_slice(&rows[(p + gap) * dim..(p + gap + 1) * dim]);
        }
    }
}

/// The encoder's work space and its cache of character vectors, reused from sentence to
/// sentence.
#[derive(Default)]
pub struct Encoder {
    /// Per form seen: its character vector and what its hashed rows read of it.
    forms: HashMap<Box<str>, (Box<[f32]>, FormKeys)>,
    ids: Vec<usize>,
    char_rows: Vec<f32>,
    char_win: Vec<f32>,
    char_out: Vec<f32>,
    rows: Vec<usize>,
    x: Vec<f32>,
    h: Vec<f32>,
    win: Vec<f32>,
    y: Vec<f32>,
    lstm: Lstm,
}

/// One direction of a BiLSTM layer: its gates (the input's share, then whole, step by step)
/// and its state, reused from call to call.
#[derive(Default)]
struct Lstm {
    gates: Vec<f32>,
    h: Vec<f32>,
    c: Vec<f32>,
}

/// The weights of one direction of a BiLSTM layer: input, recurrent, bias.
type LstmWeights<'a> = (&'a [f32], &'a [f32], &'a [f32]);

impl Lstm {
    /// Runs an LSTM of weights `(wx, wh, b)` and `h` units over `n` rows of `d` inputs `x`,
    /// from the last row to the first if `reverse`, writing the hidden state after row `t` (`h`
    /// values) at `out[t * ld..]`.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        (wx, wh, b): LstmWeights,
        x: &[f32],
        (n, d, h): (usize, usize, usize),
        reverse: bool,
        out: &mut [f32],
        ld: usize,
    ) {
        self.gates.resize(n * 4 * h, 0.0);
        gemm(n, d, 4 * h, x, wx, &mut self.gates, 4 * h);
        add_rows(&mut self.gates, b);
        self.h.clear();
        self.h.resize(h, 0.0);
        self.c.clear();
        self.c.resize(h, 0.0);
        let wide = wide_simd();
        for step in 0..n {
            let t = if reverse { n - 1 - step } else { step };
            // Each row is read once, by its own step: the step completes it in place.
            let gates = &mut self.gates[t * 4 * h..(t + 1) * 4 * h];
            if wide {
                // SAFETY: `wide_simd` found the CPU features this version is compiled for.
                #[cfg(target_arch = "x86_64")]
                unsafe {
                    lstm_step_avx2(gates, &mut self.h, &mut self.c, wh)
                }
            } else {
                lstm_step(gates, &mut self.h, &mut self.c, wh);
            }
            out[t * ld..t * ld + h].copy_from_slice(&self.h);
        }
    }
}

/// Columns of `y` that [`add_times`] keeps in registers while it reads down the matrix.
const BLOCK: usize = 32;

/// A vector's entries that [`add_times`] reads: (index, value) pairs.
trait Entries {
    fn iter(&self) -> impl Iterator<Item = (usize, f32)>;
}

/// Every entry.
impl Entries for [f32] {
    #[inline(always)]
    fn iter(&self) -> impl Iterator<Item = (usize, f32)> {
        <[f32]>::iter(self).copied().enumerate()
    }
}

/// The nonzero entries only (after a ReLU, most are zero).
struct Nonzero<'a>(&'a [(u32, f32)]);

impl Entries for Nonzero<'_> {
    #[inline(always)]
    fn iter(&self) -> impl Iterator<Item = (usize, f32)> {
        self.0.iter().map(|&(k, v)| (k as usize, v))
    }
}

/// `y += x w` for a vector `x` and a row-major matrix `w` of `y.len()` columns, a block of
/// [`BLOCK`] columns at a time so that the block's sums stay in registers (row by row, each
/// row loaded and stored `y` again: the LSTM step's time was mostly that).
#[inline(always)]
fn add_times(y: &mut [f32], x: &(impl Entries + ?Sized), w: &[f32]) {
    let cols = y.len();
    let mut blocks = y.chunks_exact_mut(BLOCK);
    for (j, block) in blocks.by_ref().enumerate() {
        let mut sums = [0.0f32; BLOCK];
        sums.copy_from_slice(block);
        for (k, v) in x.iter() {
            let row = &w[k * cols + j * BLOCK..k * cols + (j + 1) * BLOCK];
            sums.iter_mut().zip(row).for_each(|(s, &w)| *s += v * w);
        }
        block.copy_from_slice(&sums);
    }
    let rest = blocks.into_remainder();
    let first = cols - rest.len();
    for (k, v) in x.iter() {
        rest.iter_mut().zip(&w[k * cols + first..(k + 1) * cols]).for_each(|(s, &w)| *s += v * w);
    }
}

/// Whether this CPU runs the AVX2 versions of the kernels (the standard library caches the
/// answer).
#[inline]
fn wide_simd() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// [`lstm_step`] compiled for AVX2 and FMA: twice the width of the baseline's SSE2 for the
/// recurrent product and the nonlinearities, chosen at run time so that the binary still runs
/// on any x86-64.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn lstm_step_avx2(gates: &mut [f32], h: &mut [f32], c: &mut [f32], wh: &[f32]) {
    lstm_step(gates, h, c, wh)
}

/// One step of an LSTM: `gates` (`4 · h.len()`, input, forget, output and candidate, in
/// [`crate::model::neural::Spec::tensors`] order) holds the input's share; the previous state
/// `h` times the recurrent weights `wh` is added to it, and `h` and the cell `c` move on.
#[inline(always)]
fn lstm_step(gates: &mut [f32], h: &mut [f32], c: &mut [f32], wh: &[f32]) {
    let n = h.len();
    add_times(gates, &*h, wh);
    let (ifo, candidate) = gates.split_at_mut(3 * n);
    activations::sigmoid(ifo);
    activations::tanh(candidate);
    let (input, rest) = ifo.split_at(n);
    let (forget, output) = rest.split_at(n);
    for k in 0..n {
        c[k] = forget[k] * c[k] + input[k] * candidate[k];
    }
    h.copy_from_slice(c);
    activations::tanh(h);
    h.iter_mut().zip(output).for_each(|(h, &o)| *h *= o);
}

impl Encoder {
    /// Writes the character vector of `form` into `out` ([`CharEncoder`]) and returns what its
    /// hashed rows read of it, both cached per form.
    pub fn char_vector(&mut self, net: &Net, form: &str, out: &mut [f32]) -> FormKeys {
        if let Some((v, keys)) = self.forms.get(form) {
            out.copy_from_slice(v);
            return *keys;
        }
        let c = net.spec.chars;
        char_ids(&c, form, &mut self.ids);
        let n = self.ids.len();
        self.char_rows.clear();
        for &id in &self.ids {
            self.char_rows.extend_from_slice(&net.char_embed()[id * c.dim..(id + 1) * c.dim]);
        }
        match c.encoder {
            CharEncoder::Conv => {
                windows(&self.char_rows, n, c.dim, 1, &mut self.char_win);
                self.char_out.resize(n * c.filters, 0.0);
                gemm(n, 3 * c.dim, c.filters, &self.char_win, net.char_w(), &mut self.char_out, c.filters);
                out.fill(f32::NEG_INFINITY);
                for row in self.char_out.chunks_exact(c.filters) {
                    out.iter_mut().zip(row).for_each(|(m, &v)| *m = m.max(v));
                }
                out.iter_mut().zip(net.char_b()).for_each(|(m, &b)| *m += b);
            }
            CharEncoder::BiLstm => {
                let h = c.filters / 2;
                self.char_out.resize(n * h, 0.0);
                for dir in 0..2 {
                    let reverse = dir == 1;
                    self.lstm.run(net.char_lstm(dir), &self.char_rows, (n, c.dim, h), reverse, &mut self.char_out, h);
                    // The state after the direction's last character: forward the word's end,
                    // backward its start.
                    let last = if reverse { 0 } else { n - 1 };
                    out[dir * h..(dir + 1) * h].copy_from_slice(&self.char_out[last * h..(last + 1) * h]);
                }
            }
        }
        if self.forms.len() >= CACHE_FORMS {
            self.forms.clear();
        }
        let keys = FormKeys::of(form);
        self.forms.insert(form.into(), (out.into(), keys));
        keys
    }

    /// A word's input vector: its hashed embeddings, then its character vector.
    fn input(&mut self, net: &Net, attrs: &TokenAttrs, form: &str, out: &mut [f32]) {
        let hashed = net.spec.input_dim() - net.spec.chars.filters;
        let keys = self.char_vector(net, form, &mut out[hashed..]);
        hashed_rows(net.spec, attrs, keys, &mut self.rows);
        let mut at = 0;
        for (i, (&r, h)) in self.rows.iter().zip(&net.spec.hashed).enumerate() {
            out[at..at + h.dim].copy_from_slice(&net.embed(i)[r * h.dim..(r + 1) * h.dim]);
            at += h.dim;
        }
    }

    /// Encodes a sentence: `attrs` node 0 first, `forms` its words' forms (as many as
    /// `attrs` has words; a missing one reads as empty). The contextual vectors, node by node,
    /// are then [`Encoder::vectors`].
    pub fn encode(&mut self, net: &Net, attrs: &[TokenAttrs], forms: &[&str]) {
        let (n, din, d) = (attrs.len(), net.spec.input_dim(), net.spec.dim);
        let mut x = std::mem::take(&mut self.x);
        x.resize(n * din, 0.0);
        x[..din].copy_from_slice(net.root());
        for p in 1..n {
            let form = forms.get(p - 1).copied().unwrap_or("");
            self.input(net, &attrs[p], form, &mut x[p * din..(p + 1) * din]);
        }
        self.h.resize(n * d, 0.0);
        gemm(n, din, d, &x, net.in_w(), &mut self.h, d);
        add_rows(&mut self.h, net.in_b());
        self.h.iter_mut().for_each(|v| *v = v.max(0.0));
        self.x = x;
        match &net.spec.context {
            Context::Conv { dilations } => {
                for (l, &gap) in dilations.iter().enumerate() {
                    windows(&self.h, n, d, gap, &mut self.win);
                    self.y.resize(n * d, 0.0);
                    gemm(n, 3 * d, d, &self.win, net.ctx_w(l), &mut self.y, d);
                    add_rows(&mut self.y, net.ctx_b(l));
                    self.h.iter_mut().zip(&self.y).for_each(|(h, &y)| *h += y.max(0.0));
                }
            }
            Context::BiLstm { layers } => {
                for l in 0..*layers {
                    self.y.resize(n * d, 0.0);
                    for dir in 0..2 {
                        self.lstm.run(
                            net.lstm(l, dir),
                            &self.h,
                            (n, d, d / 2),
                            dir == 1,
                            &mut self.y[dir * d / 2..],
                            d,
                        );
                    }
                    self.h.iter_mut().zip(&self.y).for_each(|(h, &y)| *h += y);
                }
            }
        }
    }

    /// The last sentence's contextual vectors, `dim` per node, node 0 first.
    pub fn vectors(&self) -> &[f32] {
        &self.h
    }
}

/// The scores of every tag for each word of a sentence from its contextual `vectors` (node 0
/// first, as [`Encoder::vectors`]) into `out`, `tags` per word; nothing for a model that does
/// not tag.
pub fn tag_scores(net: &Net, vectors: &[f32], out: &mut Vec<f32>) {
    out.clear();
    let Some((w, b)) = net.tag() else { return };
    let d = net.spec.dim;
    let words = (vectors.len() / d).saturating_sub(1);
    out.resize(words * b.len(), 0.0);
    gemm(words, d, b.len(), &vectors[d..], w, out, b.len());
    add_rows(out, b);
}

/// The parser's MLP over the vectors of a configuration's items, with its first layer
/// precomputed for every node and item.
#[derive(Default)]
pub struct Mlp {
    /// Per node, per item: the node's vector times the item's block of the first layer.
    pre: Vec<f32>,
    /// Per item: the absent vector times the item's block (the same for every sentence, see
    /// [`Mlp::prepare_labels`]).
    absent: Vec<f32>,
    /// Per item, per label: the label's vector times the item's block (for dependent items;
    /// the same for every sentence).
    labels: Vec<f32>,
    hidden: Vec<f32>,
    /// The hidden units a ReLU leaves above zero, and their values.
    active: Vec<(u32, f32)>,
    logits: Vec<f32>,
}

impl Mlp {
    /// Precomputes the first layer for every label vector and for the absent vector: once per
    /// set of weights.
    pub fn prepare_labels(&mut self, net: &Net) {
        let (d, k, hid, l) = (net.spec.dim, net.spec.items.len(), net.spec.hidden, net.spec.labels());
        self.labels.resize(k * l * hid, 0.0);
        self.absent.resize(k * hid, 0.0);
        let w1 = net.w1();
        for item in 0..k {
            let block = &w1[item * d * hid..(item + 1) * d * hid];
            gemm(l, d, hid, net.label(), block, &mut self.labels[item * l * hid..], hid);
            gemm(1, d, hid, net.absent(), block, &mut self.absent[item * hid..], hid);
        }
    }

    /// Precomputes the first layer for `vectors` (`dim` per node).
    pub fn prepare(&mut self, net: &Net, vectors: &[f32]) {
        let (d, k, hid) = (net.spec.dim, net.spec.items.len(), net.spec.hidden);
        let n = vectors.len() / d;
        self.pre.resize(n * k * hid, 0.0);
        let w1 = net.w1();
        for item in 0..k {
            let block = &w1[item * d * hid..(item + 1) * d * hid];
            gemm(n, d, hid, vectors, block, &mut self.pre[item * hid..], k * hid);
        }
    }

    /// The scores of every transition of `c`, in transition index order (after
    /// [`Mlp::prepare_labels`] for these weights and [`Mlp::prepare`] for this sentence).
    pub fn logits(&mut self, net: &Net, c: &Configuration) -> &[f32] {
        if wide_simd() {
            // SAFETY: `wide_simd` found the CPU features this version is compiled for.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                self.logits_avx2(net, c)
            }
        } else {
            self.logits_of(net, c)
        }
        &self.logits
    }

    /// [`Mlp::logits_of`] compiled for AVX2 and FMA: the sums of the items' blocks and the
    /// second layer twice as wide.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn logits_avx2(&mut self, net: &Net, c: &Configuration) {
        self.logits_of(net, c)
    }

    /// The work of [`Mlp::logits`].
    #[inline(always)]
    fn logits_of(&mut self, net: &Net, c: &Configuration) {
        let (k, hid, l) = (net.spec.items.len(), net.spec.hidden, net.spec.labels());
        self.hidden.clear();
        self.hidden.extend_from_slice(net.b1());
        for (i, item) in net.spec.items.iter().enumerate() {
            let node = item.node(c);
            let block = if node == NONE {
                &self.absent[i * hid..(i + 1) * hid]
            } else {
                let at = (node as usize * k + i) * hid;
                &self.pre[at..at + hid]
            };
            self.hidden.iter_mut().zip(block).for_each(|(h, &b)| *h += b);
            if node != NONE && item.is_dependent() {
                let at = (i * l + c.label(node).index()) * hid;
                self.hidden.iter_mut().zip(&self.labels[at..at + hid]).for_each(|(h, &b)| *h += b);
            }
        }
        self.logits.clear();
        self.logits.extend_from_slice(net.b2());
        // A vector times a matrix: sgemm would pack the whole matrix for each decision (a
        // third of a parse's time, measured), and ReLU leaves many units at zero.
        self.active.clear();
        self.active.extend(self.hidden.iter().enumerate().filter(|(_, &h)| h > 0.0).map(|(k, &h)| (k as u32, h)));
        add_times(&mut self.logits, &Nonzero(&self.active), net.w2());
    }
}
