//! The parse-time arithmetic of a neural model, written by hand over the stored weights: a
//! framework's per-call cost would dominate at these sizes (the issue measured 8–12×). The
//! encoder ([`Encoder`]: character vectors cached per form, hashed embeddings, the windowed
//! convolution) and the parser's MLP ([`Mlp`]: its first layer precomputed per word and item,
//! Chen & Manning 2014, §3.1). Training computes the same functions with candle
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

use super::input::{char_ids, hashed_rows, FormKeys};
use crate::model::neural::Net;

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
}

impl Encoder {
    /// Writes the character vector of `form` into `out` (max over positions of a width-3
    /// convolution of its character embeddings) and returns what its hashed rows read of it,
    /// both cached per form.
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
        windows(&self.char_rows, n, c.dim, 1, &mut self.char_win);
        self.char_out.resize(n * c.filters, 0.0);
        gemm(n, 3 * c.dim, c.filters, &self.char_win, net.char_w(), &mut self.char_out, c.filters);
        out.fill(f32::NEG_INFINITY);
        for row in self.char_out.chunks_exact(c.filters) {
            out.iter_mut().zip(row).for_each(|(m, &v)| *m = m.max(v));
        }
        out.iter_mut().zip(net.char_b()).for_each(|(m, &b)| *m += b);
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
        for (l, &gap) in net.spec.dilations.iter().enumerate() {
            windows(&self.h, n, d, gap, &mut self.win);
            self.y.resize(n * d, 0.0);
            gemm(n, 3 * d, d, &self.win, net.ctx_w(l), &mut self.y, d);
            add_rows(&mut self.y, net.ctx_b(l));
            self.h.iter_mut().zip(&self.y).for_each(|(h, &y)| *h += y.max(0.0));
        }
    }

    /// The last sentence's contextual vectors, `dim` per node, node 0 first.
    pub fn vectors(&self) -> &[f32] {
        &self.h
    }
}

/// The parser's MLP over the vectors of a configuration's items, with its first layer
/// precomputed for every node and item.
#[derive(Default)]
pub struct Mlp {
    /// Per node, per item: the node's vector times the item's block of the first layer.
    pre: Vec<f32>,
    /// Per item: the absent vector times the item's block.
    absent: Vec<f32>,
    /// Per item, per label: the label's vector times the item's block (for dependent items;
    /// the same for every sentence, see [`Mlp::prepare_labels`]).
    labels: Vec<f32>,
    hidden: Vec<f32>,
    logits: Vec<f32>,
}

impl Mlp {
    /// Precomputes the first layer for every label vector: once per set of weights.
    pub fn prepare_labels(&mut self, net: &Net) {
        let (d, k, hid, l) = (net.spec.dim, net.spec.items.len(), net.spec.hidden, net.spec.labels());
        self.labels.resize(k * l * hid, 0.0);
        let w1 = net.w1();
        for item in 0..k {
            let block = &w1[item * d * hid..(item + 1) * d * hid];
            gemm(l, d, hid, net.label(), block, &mut self.labels[item * l * hid..], hid);
        }
    }

    /// Precomputes the first layer for `vectors` (`dim` per node).
    pub fn prepare(&mut self, net: &Net, vectors: &[f32]) {
        let (d, k, hid) = (net.spec.dim, net.spec.items.len(), net.spec.hidden);
        let n = vectors.len() / d;
        self.pre.resize(n * k * hid, 0.0);
        self.absent.resize(k * hid, 0.0);
        let w1 = net.w1();
        for item in 0..k {
            let block = &w1[item * d * hid..(item + 1) * d * hid];
            gemm(n, d, hid, vectors, block, &mut self.pre[item * hid..], k * hid);
            gemm(1, d, hid, net.absent(), block, &mut self.absent[item * hid..], hid);
        }
    }

    /// The scores of every transition of `c`, in transition index order (after
    /// [`Mlp::prepare_labels`] for these weights and [`Mlp::prepare`] for this sentence).
    pub fn logits(&mut self, net: &Net, c: &Configuration) -> &[f32] {
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
        self.hidden.iter_mut().for_each(|h| *h = h.max(0.0));
        let classes = net.spec.classes;
        self.logits.clear();
        self.logits.extend_from_slice(net.b2());
        // A vector times a matrix, row by row: sgemm would pack the whole matrix for each
        // decision (a third of a parse's time, measured), and ReLU leaves many units at zero.
        for (&h, row) in self.hidden.iter().zip(net.w2().chunks_exact(classes)) {
            if h != 0.0 {
                self.logits.iter_mut().zip(row).for_each(|(l, &w)| *l += h * w);
            }
        }
        &self.logits
    }
}
