//! The arc-eager transition system (Nivre 2003; Goldberg & Nivre 2012, Section 2.1) and its
//! oracles: the static oracle (one canonical transition sequence per gold tree) and the dynamic
//! oracle's transition costs (Goldberg & Nivre 2012, Figure 4), over full and partial trees.
//!
//! SHIFT pushes the buffer front; REDUCE pops a stack top that has its head; LEFT-ARC_l
//! attaches the stack top to the buffer front and pops it; RIGHT-ARC_l attaches the buffer
//! front to the stack top and pushes it. Beyond the textbook system, node 0 may take a single
//! dependent (RIGHT-ARC_root), and only through the root label, so every parse has exactly one
//! root word as UD requires. The configuration is terminal when the buffer is empty;
//! [`Configuration::complete`] then attaches any word left without a head, so the output is
//! always one well-formed tree.

use super::config::{Configuration, Legal, Transition, NONE};
use super::gold::GoldTree;
use super::TransitionSystem;
use crate::base::label::Label;

/// The arc-eager system.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArcEager;

impl TransitionSystem for ArcEager {
    #[inline]
    fn legal(&self, c: &Configuration) -> Legal {
        if c.buffer_is_empty() {
            return Legal::EMPTY;
        }
        let s = c.stack(0).unwrap_or(0);
        let word_on_top = s != 0;
        let has_head = word_on_top && c.head(s) != NONE;
        Legal {
            shift: true,
            reduce: has_head,
            left: word_on_top && !has_head,
            right: word_on_top,
            right_root: !word_on_top && c.root_child() == NONE,
        }
    }

    #[inline]
    fn apply(&self, c: &mut Configuration, t: Transition) {
        debug_assert!(self.legal(c).allows(t), "illegal {t:?}");
        let front = c.buffer(0).unwrap_or(NONE);
        match t {
            Transition::Shift => c.push_front(),
            Transition::Reduce => {
                c.pop();
            }
            Transition::LeftArc(l) => {
                let s = c.pop();
                c.attach(front, s, l);
            }
            Transition::RightArc(l) => {
                let s = c.stack(0).unwrap_or(0);
                c.attach(s, front, l);
                c.push_front();
            }
        }
    }

    #[inline]
    fn is_terminal(&self, c: &Configuration) -> bool {
        c.buffer_is_empty()
    }

    #[inline]
    fn attached(&self, c: &Configuration, t: Transition) -> Option<u32> {
        match t {
            Transition::LeftArc(_) => c.stack(0),
            Transition::RightArc(_) => c.buffer(0),
            _ => None,
        }
    }

    fn static_oracle(&self, c: &Configuration, gold: &GoldTree) -> Option<Transition> {
        static_oracle(c, gold)
    }

    fn cost(&self, c: &Configuration, gold: &GoldTree, t: Transition) -> u32 {
        cost(c, gold, t)
    }
}

/// The static oracle: the canonical transition for `c` on a path that builds `gold` (Nivre
/// 2003, as in Algorithm 2 of Goldberg & Nivre 2012). LEFT-ARC and RIGHT-ARC when the gold
/// tree has the arc, REDUCE as soon as the stack top has its head and no dependents left in the
/// buffer, SHIFT otherwise. Only meaningful on configurations of the canonical path; `None` when
/// `c` is terminal, and for a partial tree, which has no canonical path (use [`zero_cost`]).
fn static_oracle(c: &Configuration, gold: &GoldTree) -> Option<Transition> {
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
fn cost(c: &Configuration, gold: &GoldTree, t: Transition) -> u32 {
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
                let r = gold.root_child();
                u32::from(r != b && r != NONE && c.in_buffer(r))
            } else {
                0
            };
            head_cost + headless_stack_deps(c, gold, b) + root_cost
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_indices_round_trip() {
        for i in 0..20 {
            assert_eq!(Transition::from_index(i).index(), i);
        }
    }

    #[test]
    fn score_order_round_trips_and_legal_transitions_form_a_prefix() {
        let labels = 5;
        let mut seen = vec![false; Transition::count(labels)];
        for i in 0..Transition::count(labels) {
            let t = Transition::from_index(i);
            let pos = t.score_position(labels);
            assert_eq!(Transition::from_score_position(pos, labels), t);
            seen[pos] = true;
        }
        assert!(seen.iter().all(|&s| s));
        let mut c = Configuration::new(3);
        let moves = [
            Transition::Shift,
            Transition::LeftArc(Label::from_index(2)),
            Transition::RightArc(Label::ROOT),
            Transition::RightArc(Label::from_index(1)),
        ];
        let prefix_holds_the_legal = |c: &Configuration| {
            let legal = ArcEager.legal(c);
            let prefix = legal.score_prefix(labels);
            for i in 0..Transition::count(labels) {
                if legal.allows_index(i) {
                    assert!(Transition::from_index(i).score_position(labels) < prefix, "{legal:?}");
                }
            }
        };
        // Every configuration on the way, the last (buffer empty) included; each move legal.
        for t in moves {
            prefix_holds_the_legal(&c);
            assert!(ArcEager.legal(&c).allows(t), "{t:?}");
            ArcEager.apply(&mut c, t);
        }
        prefix_holds_the_legal(&c);
    }

    #[test]
    fn root_takes_one_dependent() {
        let mut c = Configuration::new(2);
        assert!(ArcEager.legal(&c).right_root);
        ArcEager.apply(&mut c, Transition::RightArc(Label::ROOT));
        ArcEager.apply(&mut c, Transition::Reduce);
        assert!(!ArcEager.legal(&c).right_root && ArcEager.legal(&c).shift);
    }

    #[test]
    fn finish_builds_one_tree_from_any_terminal_configuration() {
        let mut c = Configuration::new(3);
        for _ in 0..3 {
            ArcEager.apply(&mut c, Transition::Shift);
        }
        let (mut h, mut l) = (Vec::new(), Vec::new());
        assert_eq!(ArcEager.finish(&c, Label::from_index(1), &mut h, &mut l), 3);
        assert_eq!(&h[1..], &[0, 1, 2]);
    }

    #[test]
    fn static_oracle_builds_small_tree() {
        let g = GoldTree::small();
        let mut c = Configuration::new(3);
        while let Some(t) = static_oracle(&c, &g) {
            assert_eq!(cost(&c, &g, t), 0, "{t:?}");
            ArcEager.apply(&mut c, t);
        }
        for w in 1..=3 {
            assert_eq!(c.head(w), g.head(w));
        }
    }

    #[test]
    fn wrong_label_costs_one() {
        let g = GoldTree::small();
        let mut c = Configuration::new(3);
        ArcEager.apply(&mut c, Transition::Shift);
        assert_eq!(cost(&c, &g, Transition::LeftArc(Label::from_index(2))), 1);
        assert_eq!(cost(&c, &g, Transition::LeftArc(Label::from_index(1))), 0);
    }
}
