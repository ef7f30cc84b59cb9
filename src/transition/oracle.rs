//! Oracles for the arc-eager system: the static oracle (one canonical transition sequence per
//! gold tree) and the dynamic oracle's transition costs (Goldberg & Nivre 2012, Figure 4), over
//! full gold trees and over partial ones.
//!
//! A cost is the number of gold arcs reachable before a transition and unreachable after it, a
//! wrong label on an otherwise correct arc counting 1; the zero-cost transitions are the
//! dynamic oracle's "correct" set. The costs are exact for projective gold trees with a single
//! root word, including the root restriction of [`crate::transition::arc_eager`] (node 0 takes one
//! dependent). Tests check them against exhaustive search. This module reads configurations;
//! it never changes them.
//!
//! # Partial trees
//!
//! An annotator may leave some words' HEAD `_` (no gold arc), or a HEAD without its DEPREL (the
//! arc is gold, any label is right): [`GoldTree::partial`]. The loss of a parse is then the
//! number of annotated arcs it lacks, an annotated arc built with another label than an
//! annotated one counting 1 too; unannotated words may end up anywhere, or without a head. The
//! cost of a transition is the difference between the best losses reachable before and after it
//! (Section 3.1 of the 2012 paper, with this loss), and [`cost`] computes it as for a full tree
//! with every term about an unannotated arc or label left out: the loss still decomposes into
//! arcs, so the cost is the number of annotated arcs individually reachable before the
//! transition and not after, provided the arcs individually reachable are reachable together.
//! Arc decomposition gives that (Section 3.2 of the 2012 paper: a projective forest of
//! individually reachable arcs is reachable) when the annotated arcs, together with the
//! parser's root restriction, can be completed into a projective tree with one root word:
//! [`crate::corpus::tree::is_projective_partial`], which training checks. Goldberg & Nivre
//! (2013) discuss training from such partial trees with the dynamic oracle.
//!
//! The root restriction needs nothing new. When a root word `r` is annotated, the completion
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

use crate::base::label::Label;
use crate::transition::arc_eager::{Configuration, Transition, NONE};

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
    /// The costs of [`cost`] are exact when the annotated arcs can be completed into a
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

    /// Annotated dependents of node `h`.
    pub fn deps(&self, h: u32) -> &[u32] {
        &self.deps[h as usize]
    }

    /// 1 if `l` is wrong for word `w` (a known label that is not `l`), else 0.
    #[inline]
    fn label_cost(&self, w: u32, l: Label) -> u32 {
        u32::from(self.label(w).is_some_and(|g| g != l))
    }
}

/// The static oracle: the canonical transition for `c` on a path that builds `gold` (Nivre
/// 2003, as in Algorithm 2 of Goldberg & Nivre 2012). LEFT-ARC and RIGHT-ARC when the gold
/// tree has the arc, REDUCE as soon as the stack top has its head and no dependents left in the
/// buffer, SHIFT otherwise. Only meaningful on configurations of the canonical path; `None` when
/// `c` is terminal, and for a partial tree, which has no canonical path (use [`zero_cost`]).
pub fn static_oracle(c: &Configuration, gold: &GoldTree) -> Option<Transition> {
    if gold.is_partial() {
        return None;
    }
    let b = c.buffer(0)?;
    let s = c.stack(0).unwrap_or(0);
    if s != 0 && c.head(s) == NONE && gold.head(s) == b {
        return Some(Transition::LeftArc(gold.label(s)?));
    }
    if gold.head(b) == s {
        let label = if s == 0 { Label::ROOT } else { gold.label(b)? };
        return Some(Transition::RightArc(label));
    }
    if s != 0 && c.head(s) != NONE && !gold.deps(s).iter().any(|&d| c.in_buffer(d)) {
        return Some(Transition::Reduce);
    }
    Some(Transition::Shift)
}

/// Can the gold arc from stack node `k` to buffer node `b` still be built? Node 0 can only take
/// a dependent while it has none; [`NONE`] (no annotated head) is never available.
#[inline]
fn stack_head_available(c: &Configuration, k: u32) -> bool {
    k != NONE && c.on_stack(k) && (k != 0 || c.root_child() == NONE)
}

/// Annotated dependents of `b` that sit on the stack without a head: arcs a transition that
/// takes `b` away from them loses.
#[inline]
fn headless_stack_deps(c: &Configuration, gold: &GoldTree, b: u32) -> u32 {
    gold.deps(b).iter().filter(|&&k| c.on_stack(k) && c.head(k) == NONE).count() as u32
}

/// Annotated dependents of `s` still in the buffer.
#[inline]
fn buffer_deps(c: &Configuration, gold: &GoldTree, s: u32) -> u32 {
    gold.deps(s).iter().filter(|&&k| c.in_buffer(k)).count() as u32
}

/// The cost of a legal transition `t` in `c` (Figure 4 of Goldberg & Nivre 2012, labeled, with
/// each annotated arc counted only if it was reachable before `t`; see the module comment).
///
/// With `c = (σ|s, b|β, A)`:
/// - SHIFT loses the arcs between `b` and `s|σ`;
/// - REDUCE loses the arcs from `s` to `b|β`;
/// - LEFT-ARC_l loses `s`'s head in `β` and its dependents in `b|β` (and 1 if `b` is the head
///   but `l` is wrong);
/// - RIGHT-ARC_l loses `b`'s head in `σ` or `β` and its dependents in `s|σ` (and 1 if `s` is the
///   head but `l` is wrong); from node 0 it also loses the gold root word if that is in `β`,
///   since node 0 takes only one dependent.
///
/// Only annotated arcs count: a word without an annotated head loses nothing by being attached
/// anywhere, and a wrong label costs only where the label is annotated.
pub fn cost(c: &Configuration, gold: &GoldTree, t: Transition) -> u32 {
    let s = c.stack(0).unwrap_or(0);
    let Some(b) = c.buffer(0) else { return 0 };
    match t {
        Transition::Shift => u32::from(stack_head_available(c, gold.head(b))) + headless_stack_deps(c, gold, b),
        Transition::Reduce => buffer_deps(c, gold, s),
        Transition::LeftArc(l) => {
            let h = gold.head(s);
            // `in_buffer(NONE)` is false: an unannotated head costs nothing.
            let head_cost = if h == b { gold.label_cost(s, l) } else { u32::from(c.in_buffer(h)) };
            head_cost + buffer_deps(c, gold, s)
        }
        Transition::RightArc(l) => {
            let h = gold.head(b);
            let head_cost =
                if h == s { gold.label_cost(b, l) } else { u32::from(c.in_buffer(h) || stack_head_available(c, h)) };
            let root_cost = if s == 0 {
                let r = gold.root_child;
                u32::from(r != b && r != NONE && c.in_buffer(r))
            } else {
                0
            };
            head_cost + headless_stack_deps(c, gold, b) + root_cost
        }
    }
}

/// Fills `out` with the legal transition classes of `c` (an inventory of `labels` labels) that
/// cost nothing: the dynamic oracle's set of correct transitions.
pub fn zero_cost(c: &Configuration, gold: &GoldTree, labels: usize, out: &mut Vec<usize>) {
    out.clear();
    out.extend(c.legal().transitions(labels).filter(|&t| cost(c, gold, t) == 0).map(Transition::index));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "a b c": a <- b -> c, b the root word.
    fn small() -> GoldTree {
        let l = Label::from_index(1);
        GoldTree::new(&[2, 0, 2], &[l, Label::ROOT, l])
    }

    #[test]
    fn static_oracle_builds_small_tree() {
        let g = small();
        let mut c = Configuration::new(3);
        while let Some(t) = static_oracle(&c, &g) {
            assert_eq!(cost(&c, &g, t), 0, "{t:?}");
            c.apply(t);
        }
        for w in 1..=3 {
            assert_eq!(c.head(w), g.head(w));
        }
    }

    #[test]
    fn wrong_label_costs_one() {
        let g = small();
        let mut c = Configuration::new(3);
        c.apply(Transition::Shift);
        assert_eq!(cost(&c, &g, Transition::LeftArc(Label::from_index(2))), 1);
        assert_eq!(cost(&c, &g, Transition::LeftArc(Label::from_index(1))), 0);
    }
}
