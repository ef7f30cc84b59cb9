//! Gold trees as the oracles of every transition system read them ([`GoldTree`]), full or
//! partial, and what makes the dynamic oracles' costs exact on partial trees.
//!
//! A cost is the number of gold arcs reachable before a transition and unreachable after it, a
//! wrong label on an otherwise correct arc counting 1; the zero-cost transitions are the
//! dynamic oracle's "correct" set. Each system computes its costs
//! ([`crate::transition::TransitionSystem::cost`]); both systems' costs are exact for
//! projective gold trees with a single root word, and tests check them against exhaustive
//! search, on full and on partial trees. This module knows no configuration.
//!
//! # Partial trees
//!
//! An annotator may leave some words' HEAD `_` (no gold arc), or a HEAD without its DEPREL (the
//! arc is gold, any label is right): [`GoldTree::partial`]. The loss of a parse is then the
//! number of annotated arcs it lacks, an annotated arc built with another label than an
//! annotated one counting 1 too; unannotated words may end up anywhere, or without a head. The
//! cost of a transition is the difference between the best losses reachable before and after it
//! (Section 3.1 of the 2012 paper, with this loss), and each system's cost computes it as for a full tree
//! with every term about an unannotated arc or label left out: the loss still decomposes into
//! arcs, so the cost is the number of annotated arcs individually reachable before the
//! transition and not after, provided the arcs individually reachable are reachable together.
//! Arc decomposition gives that (Section 3.2 of the 2012 paper: a projective forest of
//! individually reachable arcs is reachable) when the annotated arcs, together with the
//! parser's root restriction, can be completed into a projective tree with one root word:
//! [`crate::corpus::tree::is_projective_partial`], which training checks. Goldberg & Nivre
//! (2013) discuss training from such partial trees with the dynamic oracle.
//!
//! The argument is about the arc-eager system; arc-hybrid is arc-decomposable too (Goldberg &
//! Nivre 2013), and the same exhaustive tests check its costs on partial trees.
//!
//! For arc-eager, the root restriction needs nothing new. When a root word `r` is annotated, the completion
//! has it as its only root word, so no annotated arc crosses `0 → r`, as in a full tree: the
//! arc `0 → r` is reachable while node 0 has no dependent and `r` is in the buffer, and
//! RIGHT-ARC from node 0 onto another word loses it. When none is annotated, no annotated arc
//! touches node 0, and node 0 taking its one dependent loses nothing else: node 0 is only
//! needed on top of the stack to take a dependent, and words left on the stack at the end
//! cost nothing. So the costs are exact whatever is hidden: the root word, its label, every
//! head (all costs 0) or none (a full tree). `tests/oracle_dynamic.rs` checks this against
//! exhaustive search, on random partial trees and on every completable partial tree of up to 4
//! words in every reachable configuration. Without completability the costs are not exact: with
//! 1 ← 2 and 1 → 3 annotated and word 2 not, the arcs do not cross, but each is reachable
//! alone and not both, and some configurations have no zero-cost transition at all.

use super::config::NONE;
use crate::base::label::Label;

/// A gold tree in the form the oracles need: a full tree, or a partial one in which some words
/// have no annotated head, or an annotated head but no annotated label.
#[derive(Debug, Clone)]
pub struct GoldTree {
    /// `heads[w]` for words `1..=n`, [`NONE`] for a word without an annotated head; `heads[0]`
    /// is [`NONE`].
    heads: Vec<u32>,
    /// `labels[w]`, `None` where the label is not annotated (any label is right).
    labels: Vec<Option<Label>>,
    /// Annotated dependents of each node, in order.
    deps: Vec<Vec<u32>>,
    /// The word annotated as attached to node 0 (the last one, should there be several), or
    /// [`NONE`] when no word is.
    root_child: u32,
    /// Number of words with an annotated head.
    annotated: usize,
    /// Whether some word lacks its head or label.
    partial: bool,
}

impl GoldTree {
    /// Builds a full gold tree from heads (`heads[i]` for word `i + 1`, 0 = root) and labels
    /// (same length).
    pub fn new(heads: &[usize], labels: &[Label]) -> GoldTree {
        debug_assert_eq!(heads.len(), labels.len());
        let mut tree = GoldTree::empty(heads.len());
        for (i, (&head, &label)) in heads.iter().zip(labels).enumerate() {
            tree.set(i as u32 + 1, head, Some(label));
        }
        tree
    }

    /// Builds a partial gold tree: `heads[i]` is the head of word `i + 1` (0 = root), `None`
    /// where it is not annotated; `labels[i]` its label, `None` where the label is not
    /// annotated (any label is then right; ignored for a word without a head). The arc from
    /// node 0 always carries [`Label::ROOT`], whatever `labels` says for it.
    ///
    /// The oracles' costs are exact when the annotated arcs can be completed into a
    /// projective tree with one root word, which
    /// [`crate::corpus::tree::is_projective_partial`] checks (with at most one word annotated
    /// as attached to 0, as [`crate::corpus::tree::partial_heads`] ensures).
    pub fn partial(heads: &[Option<usize>], labels: &[Option<Label>]) -> GoldTree {
        debug_assert_eq!(heads.len(), labels.len());
        let mut tree = GoldTree::empty(heads.len());
        for (i, (&head, &label)) in heads.iter().zip(labels).enumerate() {
            let w = i as u32 + 1;
            match head {
                Some(0) => tree.set(w, 0, Some(Label::ROOT)),
                Some(h) => tree.set(w, h, label),
                None => tree.partial = true,
            }
        }
        tree
    }

    /// A tree of `n` words, none of them annotated.
    fn empty(n: usize) -> GoldTree {
        GoldTree {
            heads: vec![NONE; n + 1],
            labels: vec![None; n + 1],
            deps: vec![Vec::new(); n + 1],
            root_child: NONE,
            annotated: 0,
            partial: false,
        }
    }

    /// Annotates the arc `head -> w` with `label`.
    fn set(&mut self, w: u32, head: usize, label: Option<Label>) {
        self.heads[w as usize] = head as u32;
        self.labels[w as usize] = label;
        self.deps[head].push(w);
        if head == 0 {
            self.root_child = w;
        }
        self.annotated += 1;
        self.partial |= label.is_none();
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.heads.len() - 1
    }

    /// True for an empty sentence.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of words with an annotated head.
    pub fn annotated(&self) -> usize {
        self.annotated
    }

    /// True if some word has no annotated head, or an annotated head but no label.
    pub fn is_partial(&self) -> bool {
        self.partial
    }

    /// Gold head of word `w`, or [`NONE`] if it is not annotated.
    pub fn head(&self, w: u32) -> u32 {
        self.heads[w as usize]
    }

    /// Gold label of word `w`, or `None` if it is not annotated (nor its head).
    pub fn label(&self, w: u32) -> Option<Label> {
        self.labels[w as usize]
    }

    /// Every annotated label, in word order.
    pub fn labels(&self) -> impl Iterator<Item = Label> + '_ {
        self.labels.iter().flatten().copied()
    }

    /// Maps every annotated label through `f`, for a renumbered label inventory.
    pub fn map_labels(&mut self, f: impl Fn(Label) -> Label) {
        self.relabel(|l| Some(f(l)));
    }

    /// Maps every annotated label through `f` into another inventory, where `None` leaves the
    /// arc's head annotated and its label not (any label is then right): for a model that
    /// lacks the label. Returns how many labels were so forgotten.
    pub fn relabel(&mut self, f: impl Fn(Label) -> Option<Label>) -> usize {
        let mut forgotten = 0;
        for slot in &mut self.labels {
            if let Some(l) = *slot {
                *slot = f(l);
                forgotten += usize::from(slot.is_none());
            }
        }
        self.partial |= forgotten > 0;
        forgotten
    }

    /// The word annotated as attached to node 0, or [`NONE`].
    pub fn root_child(&self) -> u32 {
        self.root_child
    }

    /// Annotated dependents of node `h`.
    pub fn deps(&self, h: u32) -> &[u32] {
        &self.deps[h as usize]
    }

    /// 1 if `l` is wrong for word `w` (a known label that is not `l`), else 0.
    #[inline]
    pub(super) fn label_cost(&self, w: u32, l: Label) -> u32 {
        u32::from(self.label(w).is_some_and(|g| g != l))
    }
}

#[cfg(test)]
impl GoldTree {
    /// "a b c": a <- b -> c, b the root word; the unit tests' tree.
    pub(super) fn small() -> GoldTree {
        let l = Label::from_index(1);
        GoldTree::new(&[2, 0, 2], &[l, Label::ROOT, l])
    }
}
