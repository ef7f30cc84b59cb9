//! Oracles for the arc-eager system: the static oracle (one canonical transition sequence per
//! gold tree) and the dynamic oracle's transition costs (Goldberg & Nivre 2012, Figure 4).
//!
//! A cost is the number of gold arcs reachable before a transition and unreachable after it, a
//! wrong label on an otherwise correct arc counting 1; the zero-cost transitions are the
//! dynamic oracle's "correct" set. The costs are exact for projective gold trees with a single
//! root word, including the root restriction of [`crate::arc_eager`] (node 0 takes one
//! dependent). Tests check them against exhaustive search. This module reads configurations;
//! it never changes them.

use crate::arc_eager::{Configuration, Transition, NONE};
use crate::label::Label;

/// A gold tree in the form the oracles need.
#[derive(Debug, Clone)]
pub struct GoldTree {
    /// `heads[w]` for words `1..=n`; `heads[0]` is [`NONE`].
    heads: Vec<u32>,
    labels: Vec<Label>,
    /// Dependents of each node, in order.
    deps: Vec<Vec<u32>>,
    /// The word attached to node 0 (the last one, should the tree have several).
    root_child: u32,
}

impl GoldTree {
    /// Builds a gold tree from heads (`heads[i]` for word `i + 1`, 0 = root) and labels.
    pub fn new(heads: &[usize], labels: &[Label]) -> GoldTree {
        let n = heads.len();
        let mut h = vec![NONE; n + 1];
        let mut l = vec![Label::ROOT; n + 1];
        let mut deps = vec![Vec::new(); n + 1];
        let mut root_child = NONE;
        for (i, (&head, &label)) in heads.iter().zip(labels).enumerate() {
            let w = i as u32 + 1;
            h[i + 1] = head as u32;
            l[i + 1] = label;
            deps[head].push(w);
            if head == 0 {
                root_child = w;
            }
        }
        GoldTree { heads: h, labels: l, deps, root_child }
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.heads.len() - 1
    }

    /// True for an empty sentence.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Gold head of word `w`.
    pub fn head(&self, w: u32) -> u32 {
        self.heads[w as usize]
    }

    /// Gold label of word `w`.
    pub fn label(&self, w: u32) -> Label {
        self.labels[w as usize]
    }

    /// Gold dependents of node `h`.
    pub fn deps(&self, h: u32) -> &[u32] {
        &self.deps[h as usize]
    }
}

/// The static oracle: the canonical transition for `c` on a path that builds `gold` (Nivre
/// 2003, as in Algorithm 2 of Goldberg & Nivre 2012). LEFT-ARC and RIGHT-ARC when the gold
/// tree has the arc, REDUCE as soon as the stack top has its head and no dependents left in the
/// buffer, SHIFT otherwise. Only meaningful on configurations of the canonical path; `None` when
/// `c` is terminal.
pub fn static_oracle(c: &Configuration, gold: &GoldTree) -> Option<Transition> {
    let b = c.buffer(0)?;
    let s = c.stack(0).unwrap_or(0);
    if s != 0 && c.head(s) == NONE && gold.head(s) == b {
        return Some(Transition::LeftArc(gold.label(s)));
    }
    if gold.head(b) == s {
        let label = if s == 0 { Label::ROOT } else { gold.label(b) };
        return Some(Transition::RightArc(label));
    }
    if s != 0 && c.head(s) != NONE && !gold.deps(s).iter().any(|&d| c.in_buffer(d)) {
        return Some(Transition::Reduce);
    }
    Some(Transition::Shift)
}

/// Can the gold arc from stack node `k` to buffer node `b` still be built? Node 0 can only take
/// a dependent while it has none.
#[inline]
fn stack_head_available(c: &Configuration, k: u32) -> bool {
    c.on_stack(k) && (k != 0 || c.root_child() == NONE)
}

/// Gold dependents of `b` that sit on the stack without a head: arcs a transition that takes
/// `b` away from them loses.
#[inline]
fn headless_stack_deps(c: &Configuration, gold: &GoldTree, b: u32) -> u32 {
    gold.deps(b).iter().filter(|&&k| c.on_stack(k) && c.head(k) == NONE).count() as u32
}

/// Gold dependents of `s` still in the buffer.
#[inline]
fn buffer_deps(c: &Configuration, gold: &GoldTree, s: u32) -> u32 {
    gold.deps(s).iter().filter(|&&k| c.in_buffer(k)).count() as u32
}

/// The cost of a legal transition `t` in `c` (Figure 4 of Goldberg & Nivre 2012, labeled, with
/// each arc counted only if it was reachable before `t`).
///
/// With `c = (σ|s, b|β, A)`:
/// - SHIFT loses the arcs between `b` and `s|σ`;
/// - REDUCE loses the arcs from `s` to `b|β`;
/// - LEFT-ARC_l loses `s`'s head in `β` and its dependents in `b|β` (and 1 if `b` is the head
///   but `l` is wrong);
/// - RIGHT-ARC_l loses `b`'s head in `σ` or `β` and its dependents in `s|σ` (and 1 if `s` is the
///   head but `l` is wrong); from node 0 it also loses the gold root word if that is in `β`,
///   since node 0 takes only one dependent.
pub fn cost(c: &Configuration, gold: &GoldTree, t: Transition) -> u32 {
    let s = c.stack(0).unwrap_or(0);
    let Some(b) = c.buffer(0) else { return 0 };
    match t {
        Transition::Shift => {
            let h = gold.head(b);
            u32::from(stack_head_available(c, h)) + headless_stack_deps(c, gold, b)
        }
        Transition::Reduce => buffer_deps(c, gold, s),
        Transition::LeftArc(l) => {
            let h = gold.head(s);
            let head_cost = if h == b { u32::from(gold.label(s) != l) } else { u32::from(c.in_buffer(h)) };
            head_cost + buffer_deps(c, gold, s)
        }
        Transition::RightArc(l) => {
            let h = gold.head(b);
            let head_cost = if h == s {
                u32::from(gold.label(b) != l)
            } else {
                u32::from(c.in_buffer(h) || stack_head_available(c, h))
            };
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
