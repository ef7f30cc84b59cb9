//! The weight table: an open-addressing hash table from 64-bit feature hashes to sparse rows of
//! per-class weights, laid out to be read in place from a memory-mapped file.
//!
//! Two byte arrays, both little-endian:
//! - `slots`: `n` 8-byte slots (load factor at most 0.7). The low half of a slot holds the low
//!   28 bits of a feature hash (its fingerprint) and, in its top 4 bits, the slot's *reach*: how
//!   far the features whose probing starts at this slot lie from it (0: none starts here; 15:
//!   probe to the next empty slot). The high half holds the byte offset of the feature's row
//!   with the number of cache lines it spans, `u32::MAX` for an empty slot. A feature starts
//!   probing at `(hash · n) >> 64` (multiply-shift range reduction, so `n` need not be a power
//!   of two and the table stays small) and probes linearly, at most its home slot's reach, so
//!   fingerprint and position together check about 48 bits of the hash. Eight slots share a
//!   cache line.
//! - `rows`: per row a `u16` count, for `i8` rows an `f16` scale, then either `count` sparse
//!   records of a class (`u8` or `u16`) and a weight (`f32`, `f16` or `i8`), or, when the
//!   count is [`DENSE`], one weight for every class in class order. A row is dense when that
//!   takes at most [`DENSE_EXPANSION`] times its sparse size: frequent features have long rows,
//!   and adding a dense row is a contiguous, vectorisable loop instead of a scatter. Dense rows
//!   come first, each on a 64-byte boundary, so that scoring only the first classes (a parser's
//!   legal transitions, see [`crate::learn::scorer::ClassOrder`]) reads only the lines that hold them;
//!   rows of a few classes (the tokenizer's three) on a boundary of their size, a line holding several.
//!
//! Why this structure: a lookup costs one cache line of slots plus the lines of one row, and
//! [`TableView::score`] first prefetches all slots of a configuration's features, then exactly
//! the lines of their rows, so the misses overlap instead of following each other, and no miss
//! is spent on a line that is not read. Then, on CPUs with AVX2 and F16C, the sparse rows are
//! added to the scores, which are then held in vector registers while every dense row is added
//! eight classes per instruction. What was measured (issue notes; en_ewt dev, `valgrind
//! --tool=cachegrind --branch-sim=yes` for instructions and mispredictions, `perf` and
//! `spoolparse bench` for time): without the slot or the row prefetches a parse is 15–25%
//! slower; summing in registers, prefetching without branches or bounds checks, one load per
//! slot and sparse records added without checks took one thread from about 186k to 249k words/s
//! and the last three a parse from 904M to 793M instructions. The reach came later: features
//! absent from the model (12% of a parser's lookups) probed six slots on average, and in 63%
//! of cases crossed into a second, unprefetched line; bounded by the reach, half of them stop
//! at their home slot, and one thread went from about 225k to 255k words/s, as fast as a table
//! at load factor 0.5 that is 4.7 MB larger (0.6 and 0.8 are within noise of 0.7). Probing
//! stays a loop of predicted branches: the CPU runs ahead on them to the next probe while a
//! slot line is still in flight, which a data-dependent compare does not allow. What is left
//! is mostly waiting on memory: one sentence repeated (every line cached) parses at about 350k
//! words per CPU-second, en_ewt dev at about 260k (with the huge pages that
//! [`crate::model::file::ModelFile::open`] asks for; 5% less without), and cutting 9% of the
//! instructions (780M to 710M on en_ewt dev) moved the latter by 2–3% only. Most of that wait
//! is on features seen once or never: on en_ewt dev, 12% of lookups are of features absent from
//! the model (320k distinct keys) and each misses its slot line. A one-byte-per-slot array of
//! home tags, checked first so that most absent features stop there, made parsing 20% slower:
//! every lookup then waits on one more line before its slot. Tried and
//! dropped: comparing a line of slots at once with SSE2 (10% slower; 20% slower over homes
//! aligned to lines), or the first two slots with selects (more instructions than the
//! mispredictions they saved), homes aligned to lines with scalar probing (no faster), masked
//! vector loads and stores of the scores (fewer instructions, no faster), non-temporal
//! prefetches for sparse rows, sections aligned to pages, interleaving the lookups of
//! independent scoring calls in a replay of a parse, looking up the buffer features and the
//! others in one pass of slot and then row prefetches, prefetching each slot as soon as
//! extraction hashes its feature, adding dense rows before sparse ones, fused multiply-adds
//! in the kernel, and a kernel of sixteen-lane AVX-512 vectors (issue 17: 1.015× and 1.026× in
//! two runs of `scripts/compare-speed.sh`, within the machine's noise; none faster). (An earlier note found a copy of the table in huge pages no
//! faster; checked in `/proc/PID/smaps_rollup`, huge pages do help, see above.)
//!
//! Factored scoring (issue 17; branch `factored`, its numbers in `src/transition/factored.rs`
//! there) scored the four actions first, reading only a dense row's first line, and one arc
//! direction's labels only for an arc, from the rows the first pass had found: 0.94× the joint
//! parse's speed (lookups and sparse records cost the same, and arcs scatter the sparse
//! records twice) and 0.5–1.6 LAS lower on the three shared treebanks, so it was not merged.
//! Where the time goes (cachegrind, en_ewt dev, 33.8k instructions per word): lookups 25%,
//! adding rows 28%, feature extraction 13%, the softmax's exponentials 5%. With every line in
//! cache (one sentence repeated) `bench` reaches about 550k words/s against 370k on en_ewt dev.
//! Every read is bounds-checked: a corrupt table yields wrong scores, never a panic or undefined
//! behaviour. This module knows nothing of files or features.

use std::mem::MaybeUninit;

use half::f16;
use serde::{Deserialize, Serialize};

use crate::learn::scorer::ClassOrder;

/// How weights are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Precision {
    F32,
    F16,
    /// Signed bytes with one `f32` scale per row (`w ≈ scale · q`).
    I8,
}

impl Precision {
    fn weight_bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F16 => 2,
            Precision::I8 => 1,
        }
    }

    fn header_bytes(self) -> usize {
        match self {
            Precision::I8 => 4,
            _ => 2,
        }
    }
}

/// Parameters a reader needs to interpret the two arrays; stored in the model metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableLayout {
    pub precision: Precision,
    /// 1 when every class index fits a byte, else 2.
    pub class_bytes: u8,
    /// Number of classes scored.
    pub classes: u32,
    /// Number of slots.
    pub slots: u64,
    /// Dense rows come first, each starting on a 64-byte boundary (rows of a few classes, on
    /// a boundary of their size: see `dense_alignment`); this many bytes of them.
    pub dense_bytes: u64,
    /// How rows number the classes (set by whoever permuted them before building).
    pub order: ClassOrder,
}

const EMPTY: u32 = u32::MAX;
/// Bits of a feature hash stored in its slot; the slot's reach takes the rest of that half.
const FP_BITS: u32 = 28;
const FP_MASK: u32 = (1 << FP_BITS) - 1;
/// Reach meaning "probe until an empty slot": displacements this large are rare.
const FAR: u32 = (1 << (32 - FP_BITS)) - 1;
/// A slot's row field: the row's byte offset in its low bits, and in the top two the number of
/// cache lines the row spans beyond its first (at most 3 counted), so that exactly its lines are
/// prefetched.
const OFFSET_BITS: u32 = 30;
const OFFSET_MASK: u32 = (1 << OFFSET_BITS) - 1;
/// Largest rows array a slot can address (`EMPTY`'s offset bits excluded).
const MAX_ROWS_BYTES: usize = OFFSET_MASK as usize;
/// Row count marking a dense row.
pub const DENSE: u16 = u16::MAX;
/// How much larger than its sparse encoding a dense row may be: a sparse record costs a
/// scattered scalar add, a dense row eight classes per vector add (5 rather than 1.5: en_ewt
/// parsing about 10% faster with `i8` weights, on a noisy machine, for a 12% larger file).
pub const DENSE_EXPANSION: f64 = 5.0;
/// Most slots per stored feature is 1/0.7.
const LOAD_FACTOR: f64 = 0.7;

/// The slot where probing for `key` starts, in a table of `n` slots.
#[inline(always)]
fn home(key: u64, n: usize) -> usize {
    ((u128::from(key) * n as u128) >> 64) as usize
}

/// The part of `key` its slot stores.
#[inline(always)]
fn fingerprint(key: u64) -> u32 {
    key as u32 & FP_MASK
}

/// The two arrays of a table being built.
pub struct BuiltTable {
    pub layout: TableLayout,
    pub slots: Vec<u8>,
    pub rows: Vec<u8>,
    /// Features stored.
    pub features: u64,
    /// Weights stored (non-zero after quantisation).
    pub weights: u64,
    /// Features dropped because another feature in the same probe chain had the same
    /// fingerprint (about one in 2^32 per pair; kept: the row with more weights).
    pub fingerprint_clashes: u64,
}

/// One open-addressing slot array being filled.
struct SlotArray {
    starts: Vec<u32>,
    fps: Vec<u32>,
    /// Per slot, 1 + the largest displacement of a feature probing from it (0: none), capped
    /// at [`FAR`].
    reach: Vec<u32>,
}

impl SlotArray {
    /// Room for `features` features at the load factor.
    fn new(features: usize) -> SlotArray {
        let n = ((features as f64 / LOAD_FACTOR).ceil() as usize).max(8);
        SlotArray { starts: vec![EMPTY; n], fps: vec![0; n], reach: vec![0; n] }
    }

    /// Stores `key` with its row at `start`; false if a feature of the same probe chain has the
    /// same fingerprint (the table then keeps that one).
    fn insert(&mut self, key: u64, start: u32) -> bool {
        let n = self.starts.len();
        let fp = fingerprint(key);
        let h = home(key, n);
        let mut i = h;
        while self.starts[i] != EMPTY {
            if self.fps[i] == fp {
                return false;
            }
            i = if i + 1 == n { 0 } else { i + 1 };
        }
        self.starts[i] = start;
        self.fps[i] = fp;
        let displacement = (i + n - h) % n;
        self.reach[h] = self.reach[h].max((displacement + 1).min(FAR as usize) as u32);
        true
    }

    fn write(&self, out: &mut Vec<u8>) {
        for ((&start, &fp), &reach) in self.starts.iter().zip(&self.fps).zip(&self.reach) {
            out.extend_from_slice(&(fp | reach << FP_BITS).to_le_bytes());
            out.extend_from_slice(&start.to_le_bytes());
        }
    }
}

/// Builds a table from rows of `(class, weight)`; rows whose weights all quantise to zero are
/// left out.
///
/// Rows are stored longest first: they belong to the frequent features, so the rows most
/// lookups hit share cache lines and pages. Dense rows, the longest, each start a cache line,
/// so that a reader who needs only the first classes of one reads only its first line.
pub fn build<'a>(
    rows: impl ExactSizeIterator<Item = (u64, &'a [(u16, f32)])>,
    classes: usize,
    precision: Precision,
) -> BuiltTable {
    let class_bytes: u8 = if classes <= 256 { 1 } else { 2 };
    let mut sorted: Vec<(u64, &[(u16, f32)])> = rows.collect();
    // Keys break ties, so files never depend on hash-map order.
    sorted.sort_unstable_by_key(|&(k, row)| (std::cmp::Reverse(row.len()), k));
    // Encode first: only rows with a weight left take a slot, and dense rows go first.
    let mut encoded: Vec<u8> = Vec::new();
    let mut spans: Vec<(u64, std::ops::Range<usize>, usize, bool)> = Vec::new();
    for (key, row) in sorted {
        let start = encoded.len();
        let kept = encode_row(row, classes, precision, class_bytes, &mut encoded);
        if kept > 0 {
            let dense = u16::from_le_bytes([encoded[start], encoded[start + 1]]) == DENSE;
            spans.push((key, start..encoded.len(), kept, dense));
        }
    }
    spans.sort_by_key(|s| !s.3);
    let mut slots = SlotArray::new(spans.len());
    let mut row_bytes: Vec<u8> = Vec::new();
    let (mut features, mut weights, mut clashes) = (0u64, 0u64, 0u64);
    let mut dense_bytes = 0;
    let alignment = dense_alignment(classes, precision);
    for (key, span, kept, dense) in spans {
        if dense {
            row_bytes.resize(row_bytes.len().next_multiple_of(alignment), 0);
        }
        let start = row_bytes.len();
        let extra_lines = ((start % 64 + span.len() - 1) / 64).min(3) as u32;
        if start >= MAX_ROWS_BYTES || !slots.insert(key, start as u32 | extra_lines << OFFSET_BITS) {
            clashes += 1;
            continue;
        }
        row_bytes.extend_from_slice(&encoded[span]);
        if dense {
            dense_bytes = row_bytes.len();
        }
        features += 1;
        weights += kept as u64;
    }
    let mut slot_bytes = Vec::with_capacity(slots.starts.len() * 8);
    slots.write(&mut slot_bytes);
    BuiltTable {
        layout: TableLayout {
            precision,
            class_bytes,
            classes: classes as u32,
            slots: slots.starts.len() as u64,
            dense_bytes: dense_bytes as u64,
            order: ClassOrder::Index,
        },
        slots: slot_bytes,
        rows: row_bytes,
        features,
        weights,
        fingerprint_clashes: clashes,
    }
}

/// Where a dense row of `classes` classes may start: on a 64-byte boundary, as the reader's
/// prefetches assume ([`TableView::find_rows`]), unless what the vector kernel reads of it (its
/// header and whole vectors of weights) fits in half a line. Such a row is aligned to that size
/// rounded up to a power of two instead, so that it still never spans two lines, and rows of a
/// few classes share a line: the tokenizer's (3 classes) took a line each, 2.9 MB of rows
/// where 0.7 MB do.
fn dense_alignment(classes: usize, precision: Precision) -> usize {
    let read = precision.header_bytes() + classes.div_ceil(8) * 8 * precision.weight_bytes();
    if read <= 32 {
        read.next_power_of_two()
    } else {
        64
    }
}

/// Appends one encoded row to `out`; returns the number of weights kept.
fn encode_row(row: &[(u16, f32)], classes: usize, precision: Precision, class_bytes: u8, out: &mut Vec<u8>) -> usize {
    let scale = match precision {
        // Stored as f16: round it first so that quantisation uses the scale readers will see.
        Precision::I8 => f16::from_f32(row.iter().fold(0.0f32, |m, &(_, w)| m.max(w.abs())) / 127.0).to_f32(),
        _ => 1.0,
    };
    let quantised = |w: f32| -> Option<[u8; 4]> {
        match precision {
            Precision::F32 => (w != 0.0).then(|| w.to_le_bytes()),
            Precision::F16 => {
                let h = f16::from_f32(w);
                (h.to_f32() != 0.0).then(|| {
                    let b = h.to_le_bytes();
                    [b[0], b[1], 0, 0]
                })
            }
            Precision::I8 => {
                let q = if scale > 0.0 { (w / scale).round().clamp(-127.0, 127.0) as i8 } else { 0 };
                (q != 0).then_some([q as u8, 0, 0, 0])
            }
        }
    };
    let kept: Vec<(u16, [u8; 4])> = row.iter().filter_map(|&(c, w)| quantised(w).map(|q| (c, q))).collect();
    if kept.is_empty() {
        return 0;
    }
    let sparse_size = kept.len() * (class_bytes as usize + precision.weight_bytes());
    let dense = (classes * precision.weight_bytes()) as f64 <= DENSE_EXPANSION * sparse_size as f64;
    out.extend_from_slice(&(if dense { DENSE } else { kept.len() as u16 }).to_le_bytes());
    if precision == Precision::I8 {
        out.extend_from_slice(&f16::from_f32(scale).to_le_bytes());
    }
    if dense {
        let wb = precision.weight_bytes();
        let base = out.len();
        out.resize(base + classes * wb, 0);
        for (class, q) in &kept {
            let at = base + *class as usize * wb;
            out[at..at + wb].copy_from_slice(&q[..wb]);
        }
        return kept.len();
    }
    for (class, q) in &kept {
        if class_bytes == 1 {
            out.push(*class as u8);
        } else {
            out.extend_from_slice(&class.to_le_bytes());
        }
        out.extend_from_slice(&q[..precision.weight_bytes()]);
    }
    kept.len()
}

/// A read-only view of a table, borrowed from a memory map (or any byte buffer).
#[derive(Debug, Clone, Copy)]
pub struct TableView<'a> {
    slots: &'a [[u8; 8]],
    rows: &'a [u8],
    /// Rows starting below this are dense.
    dense_end: usize,
    layout: TableLayout,
    /// Whether this CPU runs the vector kernel ([`TableView::add_rows_avx2`]).
    simd: bool,
}

/// The most features scored at once; larger sets are scored in chunks.
const CHUNK: usize = 128;

/// The rows found for a chunk of features: byte offsets of the dense and of the sparse ones.
/// Only the first `dense_count` and `sparse_count` entries are ever written before being read:
/// left uninitialised, the arrays cost nothing per call (zeroed, a kilobyte of `memset` each
/// time, about 0.7% of a parse's instructions).
struct FoundRows {
    dense: [MaybeUninit<u32>; CHUNK],
    sparse: [MaybeUninit<u32>; CHUNK],
    dense_count: usize,
    sparse_count: usize,
}

impl FoundRows {
    fn new() -> FoundRows {
        FoundRows {
            dense: [MaybeUninit::uninit(); CHUNK],
            sparse: [MaybeUninit::uninit(); CHUNK],
            dense_count: 0,
            sparse_count: 0,
        }
    }

    /// Records the row at `start`; at most [`CHUNK`] rows between two [`FoundRows::clear`]s.
    #[inline(always)]
    fn push(&mut self, start: u32, dense: bool) {
        // Both lists get the offset and one count moves: no branch on the kind of row.
        self.dense[self.dense_count].write(start);
        self.sparse[self.sparse_count].write(start);
        self.dense_count += usize::from(dense);
        self.sparse_count += usize::from(!dense);
    }

    fn clear(&mut self) {
        self.dense_count = 0;
        self.sparse_count = 0;
    }

    /// The offsets of the dense rows and of the sparse ones, each in the order pushed.
    fn rows(&self) -> (&[u32], &[u32]) {
        // SAFETY: `push` wrote every entry below each count, and `MaybeUninit<u32>` has the
        // layout of `u32`.
        unsafe {
            (
                std::slice::from_raw_parts(self.dense.as_ptr().cast(), self.dense_count),
                std::slice::from_raw_parts(self.sparse.as_ptr().cast(), self.sparse_count),
            )
        }
    }
}

#[inline(always)]
fn prefetch<T>(items: &[T], at: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        // Never dereferenced, so an offset past the end (from a corrupt slot) is harmless.
        let p = items.as_ptr().wrapping_add(at);
        // SAFETY: prefetching is a hint: it never faults, whatever the address.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, at);
}

/// The slot array's entry for `key`: its row's byte offset, if present.
#[inline(always)]
fn probe(slots: &[[u8; 8]], key: u64) -> Option<u32> {
    let n = slots.len();
    let fp = fingerprint(key);
    let mut i = home(key, n);
    // The home slot's reach bounds the probe: most absent features (a tenth of a parser's
    // lookups, which otherwise probe about six slots at this load factor) stop at once.
    let reach = (u64::from_le_bytes(*slots.get(i)?) as u32) >> FP_BITS;
    // A corrupt table might have no empty slot: never probe more than all of them.
    let limit = if reach == FAR { n } else { reach as usize };
    for _ in 0..limit {
        // One load per slot: fingerprint and reach in the low half, row field in the high half.
        let slot = u64::from_le_bytes(*slots.get(i)?);
        let start = (slot >> 32) as u32;
        if start == EMPTY {
            return None;
        }
        if slot as u32 & FP_MASK == fp {
            return Some(start);
        }
        i = if i + 1 == n { 0 } else { i + 1 };
    }
    None
}

/// Adds a dense row (one weight per class) to `scores`.
#[inline(always)]
fn add_dense(precision: Precision, scale: f32, body: &[u8], scores: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { add_dense_avx2(precision, scale, body, scores) };
    }
    add_dense_portable(precision, scale, body, scores)
}

/// [`add_dense_portable`] compiled for AVX2, so the loops run eight lanes wide.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn add_dense_avx2(precision: Precision, scale: f32, body: &[u8], scores: &mut [f32]) {
    add_dense_portable(precision, scale, body, scores)
}

#[inline(always)]
fn add_dense_portable(precision: Precision, scale: f32, body: &[u8], scores: &mut [f32]) {
    match precision {
        Precision::F32 => {
            for (s, w) in scores.iter_mut().zip(body.chunks_exact(4)) {
                *s += f32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            }
        }
        Precision::F16 => {
            for (s, w) in scores.iter_mut().zip(body.chunks_exact(2)) {
                *s += f16::from_le_bytes([w[0], w[1]]).to_f32_const();
            }
        }
        Precision::I8 => {
            for (s, &q) in scores.iter_mut().zip(body) {
                *s += scale * f32::from(q as i8);
            }
        }
    }
}

/// Adds sparse records of a `CB`-byte class and a `WB`-byte weight to `scores`; one copy per
/// layout, so that nothing is decided per record.
#[inline(always)]
fn add_sparse<const CB: usize, const WB: usize>(body: &[u8], scores: &mut [f32], weight: impl Fn([u8; WB]) -> f32) {
    for r in body.chunks_exact(CB + WB) {
        let class = if CB == 1 { r[0] as usize } else { u16::from_le_bytes([r[0], r[1]]) as usize };
        let mut w = [0u8; WB];
        w.copy_from_slice(&r[CB..]);
        if let Some(s) = scores.get_mut(class) {
            *s += weight(w);
        }
    }
}

impl<'a> TableView<'a> {
    /// A view over the two arrays; `None` if their sizes contradict `layout`.
    pub fn new(slots: &'a [u8], rows: &'a [u8], layout: TableLayout) -> Option<TableView<'a>> {
        let n = usize::try_from(layout.slots).ok()?;
        let dense_end = usize::try_from(layout.dense_bytes).ok()?;
        if n == 0 || slots.len() != n.checked_mul(8)? || rows.len() > MAX_ROWS_BYTES || dense_end > rows.len() {
            return None;
        }
        let (slots, _) = slots.as_chunks::<8>();
        Some(TableView { slots, rows, dense_end, layout, simd: simd_supported() })
    }

    /// The table's layout.
    pub fn layout(&self) -> TableLayout {
        self.layout
    }

    /// Byte offset of the row of `key`, if present.
    #[inline]
    pub fn lookup(&self, key: u64) -> Option<u32> {
        probe(self.slots, key).map(|r| r & OFFSET_MASK)
    }

    /// Adds the row at `start` to `scores`.
    #[inline]
    pub fn add_row(&self, start: u32, scores: &mut [f32]) {
        let Some((count, scale, body)) = self.row_at(start as usize) else { return };
        // `to_f32_const` is inline software conversion: cheaper than a dispatched call per row.
        self.add_decoded(count, f16::from_bits(scale).to_f32_const(), body, scores);
    }

    /// The row at `start`: its count ([`DENSE`] for a dense row), the bits of its `f16` scale
    /// (`i8` rows; 1.0 for the others) and its body; `None` if it runs past the rows.
    #[inline(always)]
    fn row_at(&self, start: usize) -> Option<(u16, u16, &'a [u8])> {
        let precision = self.layout.precision;
        let head = self.rows.get(start..start + precision.header_bytes())?;
        let (count, scale) = self.header(head);
        let body_start = start + head.len();
        let wb = precision.weight_bytes();
        let body_len = if count == DENSE {
            self.layout.classes as usize * wb
        } else {
            count as usize * (self.layout.class_bytes as usize + wb)
        };
        Some((count, scale, self.rows.get(body_start..body_start + body_len)?))
    }

    /// A row's count and the bits of its `f16` scale (1.0 but for `i8` rows), from `head`,
    /// which starts with the row's header.
    #[inline(always)]
    fn header(&self, head: &[u8]) -> (u16, u16) {
        let count = u16::from_le_bytes([head[0], head[1]]);
        let scale = match self.layout.precision {
            Precision::I8 => u16::from_le_bytes([head[2], head[3]]),
            _ => f16::ONE.to_bits(),
        };
        (count, scale)
    }

    /// Adds a row decoded by [`TableView::row_at`] to `scores`; classes past them are ignored.
    #[inline(always)]
    fn add_decoded(&self, count: u16, scale: f32, body: &[u8], scores: &mut [f32]) {
        let precision = self.layout.precision;
        if count == DENSE {
            let n = (self.layout.classes as usize).min(scores.len());
            add_dense(precision, scale, body, &mut scores[..n]);
            return;
        }
        match (precision, self.layout.class_bytes) {
            (Precision::F32, 1) => add_sparse::<1, 4>(body, scores, f32::from_le_bytes),
            (Precision::F32, _) => add_sparse::<2, 4>(body, scores, f32::from_le_bytes),
            (Precision::F16, 1) => add_sparse::<1, 2>(body, scores, |w| f16::from_le_bytes(w).to_f32_const()),
            (Precision::F16, _) => add_sparse::<2, 2>(body, scores, |w| f16::from_le_bytes(w).to_f32_const()),
            (Precision::I8, 1) => add_sparse::<1, 1>(body, scores, |w| scale * f32::from(w[0] as i8)),
            (Precision::I8, _) => add_sparse::<2, 1>(body, scores, |w| scale * f32::from(w[0] as i8)),
        }
    }

    /// Writes the score of every class for `features` into `scores`, overlapping the memory
    /// accesses: all slot lines are prefetched, then all rows, then the rows are summed. Of a
    /// dense row only the lines that hold the first `scores.len()` classes are read.
    pub fn score(&self, features: &[u64], scores: &mut [f32]) {
        scores.fill(0.0);
        self.add(features, scores);
    }

    /// Adds the weights of `features` to `scores`, as [`TableView::score`] sums them.
    ///
    /// Of each chunk of features the sparse rows are added first, then the dense ones, each in
    /// feature order, on every CPU: the vector kernel then keeps the scores in registers over all
    /// dense rows, and no branch per row asks which kind comes next.
    pub fn add(&self, features: &[u64], scores: &mut [f32]) {
        let mut found = FoundRows::new();
        for chunk in features.chunks(CHUNK) {
            self.find_rows(chunk, scores.len(), &mut found);
            self.add_rows(&found, scores);
        }
    }

    /// Looks up the rows of `features` (at most [`CHUNK`]), prefetching their slots, then the
    /// lines of their rows that hold the first `classes` classes; lists the rows' offsets in
    /// `found`, dense and sparse apart.
    #[inline(always)]
    fn find_rows(&self, features: &[u64], classes: usize, found: &mut FoundRows) {
        let n = self.slots.len();
        // Lines beyond its first of a dense row that hold the classes scored.
        let dense_lines =
            (self.layout.precision.header_bytes() + classes * self.layout.precision.weight_bytes() - 1) / 64;
        for &f in features {
            prefetch(self.slots, home(f, n));
        }
        found.clear();
        for &f in features {
            if let Some(r) = probe(self.slots, f) {
                let start = (r & OFFSET_MASK) as usize;
                let dense = start < self.dense_end;
                let lines = (r >> OFFSET_BITS) as usize;
                // Dense rows start a line: only the lines of the classes scored.
                let extra = if dense { dense_lines } else { lines };
                // Most rows span one or two lines: those two prefetches without a branch, as a
                // loop exit per row would be mispredicted (measured: a quarter of the time).
                prefetch(self.rows, start);
                prefetch(self.rows, start + 64 * extra.min(1));
                let mut line = 2;
                while line <= extra {
                    prefetch(self.rows, start + 64 * line);
                    line += 1;
                }
                found.push(start as u32, dense);
            }
        }
    }

    /// Adds the rows `found` to `scores`, the sparse ones first.
    #[inline(always)]
    fn add_rows(&self, found: &FoundRows, scores: &mut [f32]) {
        let (dense, sparse) = found.rows();
        #[cfg(target_arch = "x86_64")]
        if self.simd && self.layout.precision != Precision::F16 {
            // SAFETY: `simd` is set only where the CPU has AVX2 and F16C.
            macro_rules! kernel {
                ($($v:literal)*) => {
                    match scores.len().div_ceil(8) {
                        $($v => return unsafe { self.add_rows_avx2::<$v>(dense, sparse, scores) },)*
                        _ => {}
                    }
                };
            }
            kernel!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
        }
        for &start in sparse.iter().chain(dense) {
            self.add_row(start, scores);
        }
    }

    /// [`TableView::add_rows`] for up to `8·V` classes: the scores are held in `V` vector
    /// registers over all dense rows, so that a dense row costs a load, a conversion and an add
    /// per eight classes. Sums are exactly the scalar ones: each class gets `scale · weight`
    /// added row by row in the same order.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,f16c")]
    unsafe fn add_rows_avx2<const V: usize>(&self, dense: &[u32], sparse: &[u32], scores: &mut [f32]) {
        use std::arch::x86_64::*;
        let n = scores.len();
        let i8_weights = self.layout.precision == Precision::I8;
        let header = self.layout.precision.header_bytes();
        // Lanes read per dense row; those past `n` hold the next bytes of the file, never stored.
        let body_bytes = 8 * V * self.layout.precision.weight_bytes();
        // The scores in memory for the rows added class by class, with room for any one-byte
        // class: a record of a class past the ones scored lands past `n`, where nothing is read.
        let mut spill = [0f32; 256];
        spill[..n].copy_from_slice(scores);
        // The scale converted by F16C: the software conversion costs more than the row.
        let scale_of = |bits: u16| _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(i32::from(bits))));
        for &start in sparse {
            if let Some((count, scale, body)) = self.row_at(start as usize) {
                self.add_decoded(count, scale_of(scale), body, &mut spill);
            }
        }
        let mut acc = [_mm256_setzero_ps(); V];
        for (v, a) in acc.iter_mut().enumerate() {
            *a = _mm256_loadu_ps(spill.as_ptr().add(8 * v));
        }
        for &start in dense {
            let start = start as usize;
            // Only the header and the lanes read need to be in the file: one bounds check, where
            // decoding the whole row first cost about 40M of a parse's 740M instructions.
            let lanes = self.rows.get(start..start + header + body_bytes);
            let Some((head, (_, scale))) =
                lanes.map(|head| (head, self.header(head))).filter(|&(_, (count, _))| count == DENSE)
            else {
                // A row too close to the end of the file to read whole vectors (or, in a
                // corrupt file, not dense at all): through memory.
                for (v, a) in acc.iter().enumerate() {
                    _mm256_storeu_ps(spill.as_mut_ptr().add(8 * v), *a);
                }
                self.add_row(start as u32, &mut spill[..n]);
                for (v, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_loadu_ps(spill.as_ptr().add(8 * v));
                }
                continue;
            };
            // In bounds: checked above.
            let body = head.as_ptr().add(header);
            if i8_weights {
                let scale = _mm256_set1_ps(scale_of(scale));
                for (v, a) in acc.iter_mut().enumerate() {
                    let q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(body.add(8 * v).cast()));
                    *a = _mm256_add_ps(*a, _mm256_mul_ps(scale, _mm256_cvtepi32_ps(q)));
                }
            } else {
                for (v, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_add_ps(*a, _mm256_loadu_ps(body.add(32 * v).cast()));
                }
            }
        }
        for (v, a) in acc.iter().enumerate() {
            _mm256_storeu_ps(spill.as_mut_ptr().add(8 * v), *a);
        }
        scores.copy_from_slice(&spill[..n]);
    }
}

/// Whether this CPU can run [`TableView::add_rows_avx2`].
fn simd_supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<(u64, Vec<(u16, f32)>)> {
        (0..1000u64)
            .map(|i| {
                let key = crate::base::hash::mix(i + 1);
                if i % 10 == 0 {
                    // Dense: every class non-zero.
                    let mut row: Vec<(u16, f32)> = (0..9).map(|c| (c, -0.125)).collect();
                    row[i as usize % 7].1 = 0.5 + i as f32;
                    row[7].1 = -0.25;
                    (key, row)
                } else {
                    (key, vec![(i as u16 % 7, 0.5 + i as f32), (7, -0.25), (3 + (i as u16 % 2), 0.0)])
                }
            })
            .collect()
    }

    fn scores_of(view: &TableView, features: &[u64]) -> Vec<f32> {
        let mut s = vec![0.0; 9];
        view.score(features, &mut s);
        s
    }

    #[test]
    fn every_precision_finds_every_row_and_nothing_else() {
        let rows = rows();
        for precision in [Precision::F32, Precision::F16, Precision::I8] {
            let t = build(rows.iter().map(|(k, r)| (*k, r.as_slice())), 9, precision);
            assert_eq!(t.features, 1000);
            let view = TableView::new(&t.slots, &t.rows, t.layout).unwrap();
            for (i, (k, _)) in rows.iter().enumerate() {
                let s = scores_of(&view, &[*k]);
                let expected = 0.5 + i as f32;
                let tol = match precision {
                    Precision::F32 => 0.0,
                    Precision::F16 => expected * 1e-3,
                    Precision::I8 => expected / 127.0,
                };
                assert!((s[i % 7] - expected).abs() <= tol, "{precision:?} row {i}: {}", s[i % 7]);
                let tail = if i % 10 == 0 { -0.125 } else { 0.0 };
                assert!((s[8] - tail).abs() <= tol.max(1e-3), "{precision:?} row {i}: {}", s[8]);
                assert!(
                    (s[7] + 0.25).abs() <= (0.25f32).max(expected) / 127.0 + 1e-3,
                    "{precision:?} row {i}: {}",
                    s[7]
                );
            }
            for absent in 5000..6000 {
                assert_eq!(view.lookup(crate::base::hash::mix(absent)), None, "{precision:?} key {absent}");
            }
        }
    }

    #[test]
    fn features_probing_from_one_slot_are_found_within_its_reach_or_beyond_it() {
        // Keys alike in their top bits start probing at the same slot: their displacements run
        // past what a reach field can count, so that slot's reach means "to the next empty".
        let crowded = |i: u64| 0xabcd_ef00_0000_0000 | i << 29 | (i * 7919 + 1) & u64::from(FP_MASK);
        let mut rows = rows();
        rows.truncate(60);
        rows.extend((0..40).map(|i| (crowded(i), vec![(i as u16 % 9, 1.0 + i as f32)])));
        let t = build(rows.iter().map(|(k, r)| (*k, r.as_slice())), 9, Precision::F32);
        assert_eq!(t.features, 100);
        let view = TableView::new(&t.slots, &t.rows, t.layout).unwrap();
        let n = t.layout.slots as usize;
        assert!((0..40).all(|i| home(crowded(i), n) == home(crowded(0), n)), "the keys must crowd one slot");
        for i in 0..40 {
            assert_eq!(scores_of(&view, &[crowded(i)])[i as usize % 9], 1.0 + i as f32, "crowded key {i}");
        }
        for (i, (k, _)) in rows.iter().take(60).enumerate() {
            assert_eq!(scores_of(&view, &[*k])[i % 7], 0.5 + i as f32, "key {i}");
        }
        // Absent, from the crowded slot and from elsewhere.
        assert_eq!(view.lookup(crowded(40)), None);
        assert!((5000..6000).all(|k| view.lookup(crate::base::hash::mix(k)).is_none()));
    }

    #[test]
    fn a_prefix_of_the_classes_scores_like_all_of_them() {
        let rows = rows();
        let keys: Vec<u64> = rows.iter().map(|r| r.0).step_by(7).collect();
        for precision in [Precision::F32, Precision::F16, Precision::I8] {
            let t = build(rows.iter().map(|(k, r)| (*k, r.as_slice())), 9, precision);
            assert!(t.layout.dense_bytes > 0);
            let view = TableView::new(&t.slots, &t.rows, t.layout).unwrap();
            let all = scores_of(&view, &keys);
            for n in 0..9 {
                let mut s = vec![0.0; n];
                view.score(&keys, &mut s);
                assert_eq!(s, all[..n], "{precision:?}, {n} classes");
            }
        }
    }

    #[test]
    fn the_vector_kernel_sums_exactly_like_the_scalar_loop() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for classes in [1usize, 7, 8, 9, 52, 104, 128, 129] {
            // A mix of dense and sparse rows, so that the kernel meets both in one call.
            let rows: Vec<(u64, Vec<(u16, f32)>)> = (0..400u64)
                .map(|i| {
                    let len = if i % 3 == 0 { classes } else { rng.gen_range(1..=classes.min(4)) };
                    let row = (0..len)
                        .map(|_| (rng.gen_range(0..classes) as u16, rng.gen_range(-3.0f32..3.0)))
                        .collect::<std::collections::BTreeMap<_, _>>();
                    (crate::base::hash::mix(i + 11), row.into_iter().collect())
                })
                .collect();
            for precision in [Precision::F32, Precision::I8] {
                let t = build(rows.iter().map(|(k, r)| (*k, r.as_slice())), classes, precision);
                let view = TableView::new(&t.slots, &t.rows, t.layout).unwrap();
                let scalar = TableView { simd: false, ..view };
                let keys: Vec<u64> = rows.iter().map(|r| r.0).chain([1, 2, 3]).collect();
                for n in [1, classes / 2, classes] {
                    let init: Vec<f32> = (0..n).map(|c| c as f32 * 0.25).collect();
                    let (mut a, mut b) = (init.clone(), init);
                    view.add(&keys, &mut a);
                    scalar.add(&keys, &mut b);
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&a), bits(&b), "{precision:?}, {classes} classes, first {n}");
                }
            }
        }
    }

    #[test]
    fn dense_rows_of_a_few_classes_share_a_line_and_none_spans_two() {
        // The tokenizer's shape: three classes, every row dense.
        let rows: Vec<(u64, Vec<(u16, f32)>)> =
            (0..500u64).map(|i| (crate::base::hash::mix(i + 3), vec![(0, 1.0 + i as f32), (2, -0.5)])).collect();
        let t = build(rows.iter().map(|(k, r)| (*k, r.as_slice())), 3, Precision::I8);
        assert_eq!(t.layout.dense_bytes as usize, t.rows.len(), "every row dense");
        assert!(t.rows.len() <= 16 * rows.len(), "{} bytes for {} rows", t.rows.len(), rows.len());
        let view = TableView::new(&t.slots, &t.rows, t.layout).unwrap();
        for (i, (k, _)) in rows.iter().enumerate() {
            let start = view.lookup(*k).unwrap() as usize;
            // The header and the vector the kernel reads (8 lanes) stay in the row's line.
            assert_eq!(start % 64 / 16, (start % 64 + 4 + 8 - 1) / 16, "row at {start}");
            let mut s = vec![0.0; 3];
            view.score(&[*k], &mut s);
            assert!((s[0] - (1.0 + i as f32)).abs() <= (1.0 + i as f32) / 127.0 && s[1] == 0.0, "{s:?}");
        }
        // Wide rows keep their lines: a reader of the first classes reads only their lines.
        let wide: Vec<(u16, f32)> = (0..40).map(|c| (c, 1.0)).collect();
        let t = build([(7u64, wide.as_slice()), (9, wide.as_slice())].into_iter(), 40, Precision::I8);
        let view = TableView::new(&t.slots, &t.rows, t.layout).unwrap();
        assert!([7, 9].iter().all(|&k| view.lookup(k).unwrap().is_multiple_of(64)));
    }

    #[test]
    fn corrupt_tables_do_not_panic() {
        let rows = rows();
        let t = build(rows.iter().map(|(k, r)| (*k, r.as_slice())), 9, Precision::F32);
        let mut slots = t.slots.clone();
        for b in slots.iter_mut().skip(4).step_by(8) {
            *b = 0x7f; // row offsets far beyond the rows array
        }
        let view = TableView::new(&slots, &t.rows, t.layout).unwrap();
        let _ = scores_of(&view, &rows.iter().map(|r| r.0).collect::<Vec<_>>());
        let full = vec![0u8; t.slots.len()]; // no empty slot at all
        let view = TableView::new(&full, &t.rows, t.layout).unwrap();
        let _ = scores_of(&view, &[1, 2, 3]);
    }
}
