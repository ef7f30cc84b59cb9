//! The arc-hybrid transition system (Kuhlmann, Gómez-Rodríguez & Satta 2011) and its oracles:
//! the static oracle and the dynamic oracle's transition costs (Goldberg & Nivre 2013,
//! "Training deterministic parsers with non-deterministic oracles", Section 5.2), over full
//! and partial trees. Chang et al. (2015) parse with it.
//!
//! With `c = (σ|s1|s0, b|β, A)`: SHIFT pushes `b`; LEFT-ARC_l attaches `s0` to `b` and pops
//! it; RIGHT-ARC_l attaches `s0` to `s1` and pops it. Every word on the stack is therefore
//! headless, and a word gets its head from the buffer front or from the node just below it.
//! Node 0 takes exactly one dependent, with the root label, and only as the last transition
//! (RIGHT-ARC_root needs `s1 = 0` and an empty buffer): the root word of a projective tree
//! dominates every other word, so it has its last dependent exactly then, and no
//! configuration is a dead end. Terminal: empty buffer, node 0 alone on the stack; every word
//! then has a head, and the output is one tree with one root word.

use super::config::{Configuration, Legal, Transition, NONE};
use super::gold::GoldTree;
use super::TransitionSystem;
use crate::base::label::Label;

/// The arc-hybrid system.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArcHybrid;

impl TransitionSystem for ArcHybrid {
    #[inline]
    fn legal(&self, c: &Configuration) -> Legal {
        let s0 = c.stack(0).unwrap_or(0);
        let s1 = c.stack(1);
        let has_buffer = !c.buffer_is_empty();
        Legal {
            shift: has_buffer,
            reduce: false,
            left: s0 != 0 && has_buffer,
            right: s1.is_some_and(|s1| s1 != 0),
            right_root: s1 == Some(0) && !has_buffer && c.root_child() == NONE,
        }
    }

    #[inline]
    fn apply(&self, c: &mut Configuration, t: Transition) {
        debug_assert!(self.legal(c).allows(t), "illegal {t:?}");
        match t {
            Transition::Shift => c.push_front(),
            Transition::LeftArc(l) => {
                let front = c.buffer(0).unwrap_or(NONE);
                let s0 = c.pop();
                c.attach(front, s0, l);
            }
            Transition::RightArc(l) => {
                let s0 = c.pop();
                let s1 = c.stack(0).unwrap_or(0);
                c.attach(s1, s0, l);
            }
            Transition::Reduce => debug_assert!(false, "arc-hybrid has no REDUCE"),
        }
    }

    #[inline]
    fn is_terminal(&self, c: &Configuration) -> bool {
        c.buffer_is_empty() && c.stack(1).is_none()
    }

    #[inline]
    fn attached(&self, c: &Configuration, t: Transition) -> Option<u32> {
        match t {
            Transition::LeftArc(_) | Transition::RightArc(_) => c.stack(0),
            _ => None,
        }
    }

    /// LEFT-ARC or RIGHT-ARC when the gold tree has the arc and the stack top has all its
    /// dependents (none left in the buffer: the left ones were taken while it was the buffer
    /// front), SHIFT otherwise.
    fn static_oracle(&self, c: &Configuration, gold: &GoldTree) -> Option<Transition> {
        if gold.is_partial() || self.is_terminal(c) {
            return None;
        }
        let s0 = c.stack(0).unwrap_or(0);
        if s0 != 0 && buffer_deps(c, gold, s0) == 0 {
            let h = gold.head(s0);
            if c.buffer(0) == Some(h) {
                return Some(Transition::LeftArc(gold.label(s0)?));
            }
            if c.stack(1) == Some(h) {
                return Some(Transition::RightArc(if h == 0 { Label::ROOT } else { gold.label(s0)? }));
            }
        }
        Some(Transition::Shift)
    }

    /// With `c = (σ|s1|s0, b|β, A)` (Goldberg & Nivre 2013, Section 5.2, labelled, with only
    /// annotated arcs counting):
    /// - SHIFT loses `b`'s head if it is on the stack below `s0` (once pushed, `b` can only
    ///   take `s0`, the node just below it, or a later buffer word), and `b`'s dependents on
    ///   the stack (they can only be attached to `b` while it is the front);
    /// - LEFT-ARC_l loses `s0`'s head if it is `s1` or in `β`, and `s0`'s dependents in `b|β`
    ///   (and 1 if `b` is the head but `l` is wrong);
    /// - RIGHT-ARC_l loses `s0`'s head in `b|β` and its dependents in `b|β` (and 1 if `s1` is
    ///   the head but `l` is wrong).
    ///
    /// Heads deeper in the stack than `s1` are already unreachable and cost nothing more; so is
    /// node 0 for a word that is not directly above it, which the root restriction needs no
    /// other term for.
    fn cost(&self, c: &Configuration, gold: &GoldTree, t: Transition) -> u32 {
        let s0 = c.stack(0).unwrap_or(0);
        match t {
            Transition::Shift => {
                let Some(b) = c.buffer(0) else { return 0 };
                let h = gold.head(b);
                let head_cost = u32::from(h != NONE && h != s0 && c.on_stack(h));
                head_cost + gold.deps(b).iter().filter(|&&d| c.on_stack(d) && c.head(d) == NONE).count() as u32
            }
            Transition::LeftArc(l) => {
                let b = c.buffer(0).unwrap_or(NONE);
                let h = gold.head(s0);
                let head_cost = if h == b {
                    gold.label_cost(s0, l)
                } else {
                    u32::from(h != NONE && (Some(h) == c.stack(1) || c.in_buffer(h)))
                };
                head_cost + buffer_deps(c, gold, s0)
            }
            Transition::RightArc(l) => {
                let h = gold.head(s0);
                let head_cost = if Some(h) == c.stack(1) { gold.label_cost(s0, l) } else { u32::from(c.in_buffer(h)) };
                head_cost + buffer_deps(c, gold, s0)
            }
            Transition::Reduce => 0,
        }
    }
}

/// Annotated dependents of `s` still in the buffer.
#[inline]
fn buffer_deps(c: &Configuration, gold: &GoldTree, s: u32) -> u32 {
    gold.deps(s).iter().filter(|&&k| c.in_buffer(k)).count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_oracle_builds_small_tree_and_ends_with_the_root_arc() {
        let g = GoldTree::small();
        let mut c = Configuration::new(3);
        let mut last = None;
        while let Some(t) = ArcHybrid.static_oracle(&c, &g) {
            assert_eq!(ArcHybrid.cost(&c, &g, t), 0, "{t:?}");
            ArcHybrid.apply(&mut c, t);
            last = Some(t);
        }
        assert!(ArcHybrid.is_terminal(&c));
        assert_eq!(last, Some(Transition::RightArc(Label::ROOT)));
        for w in 1..=3 {
            assert_eq!(c.head(w), g.head(w));
        }
    }

    #[test]
    fn node_0_takes_its_dependent_only_last() {
        let mut c = Configuration::new(2);
        ArcHybrid.apply(&mut c, Transition::Shift);
        assert!(!ArcHybrid.legal(&c).right_root, "the buffer is not empty");
        ArcHybrid.apply(&mut c, Transition::Shift);
        ArcHybrid.apply(&mut c, Transition::RightArc(Label::from_index(1)));
        let legal = ArcHybrid.legal(&c);
        assert!(legal.right_root && !legal.right && !legal.left && !legal.shift && !legal.reduce);
        ArcHybrid.apply(&mut c, Transition::RightArc(Label::ROOT));
        assert!(ArcHybrid.is_terminal(&c) && ArcHybrid.legal(&c).is_empty());
        assert_eq!((c.head(1), c.head(2)), (0, 1));
    }
}
