//! Constrained decoding: the parser's best tree among those that contain some given arcs
//! ([`Constraints`]), as the correction workbench re-parses a sentence around an annotator's
//! corrections and as training completes a partial correction.
//!
//! The decoder is the greedy parser with one change ([`crate::parse::parser::Parser::parse_constrained`]):
//! at each step it takes the highest-scoring legal transition among those that lose no
//! constrained arc, that is, of the least dynamic-oracle cost against the constraints read as a
//! partial gold tree ([`crate::transition::GoldTree::partial`]), the cost that training on
//! partial trees already uses (Goldberg & Nivre 2012, Figure 4; partial trees as in Goldberg &
//! Nivre 2013). When the constraints can be completed into a projective tree with one root word
//! ([`crate::corpus::tree::is_projective_partial`]) some transition always costs nothing, so the
//! transitions alone build every constrained arc, and the result is the tree greedy search
//! reaches when it may only choose among transitions that keep every constrained arc
//! reachable; `tests/constrained.rs` checks both against exhaustive search. Constraints that no
//! projective tree holds (an annotator may correct a tree into a non-projective one) are then
//! imposed on the finished tree ([`impose`]), moving as few other words as keeps it a tree.
//!
//! This module defines what a constraint is and how one is forced onto a tree; it does not
//! score or choose transitions.

use crate::base::label::Label;
use crate::transition::GoldTree;

/// One given arc: `word` has `head` (0: the root word), with `label` or any label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arc {
    pub word: u32,
    pub head: u32,
    pub label: Option<Label>,
}

/// Why a set of arcs cannot constrain a tree of a sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConstraintError {
    #[error("word {word} is not a word of the sentence (words 1 to {len})")]
    NoSuchWord { word: u32, len: usize },
    #[error("word {word}: head {head} is not a word of the sentence (0 to {len})")]
    NoSuchHead { word: u32, head: u32, len: usize },
    #[error("word {word} cannot be its own head")]
    OwnHead { word: u32 },
    #[error("word {word} is given two heads")]
    TwoHeads { word: u32 },
    #[error("words {first} and {second} are both given the root as head; a tree has one root word")]
    TwoRoots { first: u32, second: u32 },
    #[error("the given arcs make a cycle through word {word}")]
    Cycle { word: u32 },
}

/// Arcs that a parse must contain, checked to be part of some tree of the sentence: words and
/// heads in range, one head per word, at most one root word, no cycle.
#[derive(Debug, Clone)]
pub struct Constraints {
    /// Per word (index 0 unused), its given head.
    heads: Vec<Option<u32>>,
    /// Per word (index 0 unused), its given label; `None` where any label will do.
    labels: Vec<Option<Label>>,
    gold: GoldTree,
}

impl Constraints {
    /// Constraints on a sentence of `len` words; an error names the first arc that no tree of
    /// the sentence can hold with the others.
    pub fn new(len: usize, arcs: impl IntoIterator<Item = Arc>) -> Result<Constraints, ConstraintError> {
        let mut heads = vec![None; len + 1];
        let mut labels = vec![None; len + 1];
        let mut root = None;
        for Arc { word, head, label } in arcs {
            if word == 0 || word as usize > len {
                return Err(ConstraintError::NoSuchWord { word, len });
            }
            if head as usize > len {
                return Err(ConstraintError::NoSuchHead { word, head, len });
            }
            if head == word {
                return Err(ConstraintError::OwnHead { word });
            }
            if heads[word as usize].replace(head).is_some() {
                return Err(ConstraintError::TwoHeads { word });
            }
            if head == 0 {
                if let Some(first) = root.replace(word) {
                    return Err(ConstraintError::TwoRoots { first, second: word });
                }
            }
            labels[word as usize] = if head == 0 { Some(Label::ROOT) } else { label };
        }
        if let Some(word) = first_cycle(&heads) {
            return Err(ConstraintError::Cycle { word });
        }
        let gold =
            GoldTree::partial(&heads[1..].iter().map(|h| h.map(|h| h as usize)).collect::<Vec<_>>(), &labels[1..]);
        Ok(Constraints { heads, labels, gold })
    }

    /// No constraint on a sentence of `len` words.
    pub fn none(len: usize) -> Constraints {
        Constraints {
            heads: vec![None; len + 1],
            labels: vec![None; len + 1],
            gold: GoldTree::partial(&vec![None; len], &vec![None; len]),
        }
    }

    /// Number of words of the sentence.
    pub fn len(&self) -> usize {
        self.heads.len() - 1
    }

    /// Whether the sentence has no word.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The given head of `word`, if any.
    pub fn head(&self, word: u32) -> Option<u32> {
        self.heads.get(word as usize).copied().flatten()
    }

    /// The given label of `word`, if any (the root word's is always [`Label::ROOT`]).
    pub fn label(&self, word: u32) -> Option<Label> {
        self.labels.get(word as usize).copied().flatten()
    }

    /// The given arcs, by word.
    pub fn arcs(&self) -> impl Iterator<Item = Arc> + '_ {
        (1..self.heads.len() as u32)
            .filter_map(|w| self.head(w).map(|head| Arc { word: w, head, label: self.label(w) }))
    }

    /// Whether `heads` and `labels` (per word, index 0 unused) hold every given arc.
    pub fn hold_in(&self, heads: &[u32], labels: &[Label]) -> bool {
        self.arcs().all(|a| heads[a.word as usize] == a.head && a.label.is_none_or(|l| labels[a.word as usize] == l))
    }

    /// The constraints as the oracles read a partial gold tree.
    pub fn gold(&self) -> &GoldTree {
        &self.gold
    }
}

/// A word on a cycle of `heads` (index 0 unused, `None`: no head), if there is one.
fn first_cycle(heads: &[Option<u32>]) -> Option<u32> {
    let n = heads.len();
    for start in 1..n as u32 {
        let (mut slow, mut steps) = (start, 0);
        while let Some(h) = heads[slow as usize] {
            if h == 0 {
                break;
            }
            slow = h;
            steps += 1;
            if steps >= n {
                return Some(start);
            }
        }
    }
    None
}

/// Forces every constrained arc onto a tree (`heads` and `labels` per word, index 0 unused,
/// one root word), keeping it a tree with one root word; returns the words whose arc changed.
///
/// A constrained word takes its head and label (a word that loses the root keeps its label
/// unless that was `root`, which becomes `fallback`). Where the new head lies below the word, the
/// path from the head up to the word is cut at its lowest word whose arc is not a constrained
/// one (the given arcs have no cycle, so there is one), which moves up to the word's old head;
/// where the word becomes the root word, the old root word hangs from it with `fallback`. No
/// arc that already holds a constraint ever moves, so one pass over the constraints imposes
/// them all.
pub fn impose(heads: &mut [u32], labels: &mut [Label], constraints: &Constraints, fallback: Label) -> Vec<u32> {
    let mut changed = Vec::new();
    let holds = |heads: &[u32], labels: &[Label], w: u32| {
        constraints.head(w) == Some(heads[w as usize]) && constraints.label(w).is_none_or(|l| labels[w as usize] == l)
    };
    for Arc { word: w, head: h, label } in constraints.arcs() {
        let wi = w as usize;
        if heads[wi] == h {
            if let Some(l) = label.filter(|&l| labels[wi] != l) {
                labels[wi] = l;
                changed.push(w);
            }
            continue;
        }
        let old = heads[wi];
        if h == 0 {
            for r in 1..heads.len() {
                if heads[r] == 0 {
                    heads[r] = w;
                    labels[r] = fallback;
                    changed.push(r as u32);
                }
            }
        } else if is_below(heads, h, w) {
            // The path h → … → w; the lowest word on it whose arc holds no constraint.
            let mut u = h;
            while holds(heads, labels, u) {
                u = heads[u as usize];
            }
            heads[u as usize] = old;
            if old == 0 {
                labels[u as usize] = Label::ROOT;
            } else if labels[u as usize] == Label::ROOT {
                labels[u as usize] = fallback;
            }
            changed.push(u);
        }
        heads[wi] = h;
        labels[wi] = match label {
            Some(l) => l,
            None if h == 0 => Label::ROOT,
            None if labels[wi] == Label::ROOT => fallback,
            None => labels[wi],
        };
        changed.push(w);
    }
    changed.sort_unstable();
    changed.dedup();
    changed
}

/// Whether `node` lies in the subtree of `top` (or is `top`).
fn is_below(heads: &[u32], mut node: u32, top: u32) -> bool {
    for _ in 0..heads.len() {
        if node == top {
            return true;
        }
        if node == 0 {
            return false;
        }
        node = heads[node as usize];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::tree::find_cycle;
    use rand::{Rng, SeedableRng};

    fn arc(word: u32, head: u32) -> Arc {
        Arc { word, head, label: None }
    }

    #[test]
    fn arcs_no_tree_can_hold_are_refused_with_the_word_they_concern() {
        assert_eq!(Constraints::new(3, [arc(4, 1)]).unwrap_err(), ConstraintError::NoSuchWord { word: 4, len: 3 });
        assert_eq!(Constraints::new(3, [arc(0, 1)]).unwrap_err(), ConstraintError::NoSuchWord { word: 0, len: 3 });
        assert_eq!(
            Constraints::new(3, [arc(1, 5)]).unwrap_err(),
            ConstraintError::NoSuchHead { word: 1, head: 5, len: 3 }
        );
        assert_eq!(Constraints::new(3, [arc(2, 2)]).unwrap_err(), ConstraintError::OwnHead { word: 2 });
        assert_eq!(Constraints::new(3, [arc(2, 1), arc(2, 3)]).unwrap_err(), ConstraintError::TwoHeads { word: 2 });
        assert_eq!(
            Constraints::new(3, [arc(1, 0), arc(3, 0)]).unwrap_err(),
            ConstraintError::TwoRoots { first: 1, second: 3 }
        );
        assert!(matches!(Constraints::new(3, [arc(1, 2), arc(2, 3), arc(3, 1)]), Err(ConstraintError::Cycle { .. })));
        let c =
            Constraints::new(3, [arc(1, 2), arc(2, 0), Arc { word: 3, head: 2, label: Some(Label::from_index(2)) }])
                .unwrap();
        assert_eq!(c.arcs().count(), 3);
        assert_eq!(c.label(2), Some(Label::ROOT));
    }

    /// A random tree with one root word over `n` words (index 0 unused).
    fn random_tree(n: usize, rng: &mut impl Rng) -> Vec<u32> {
        let mut order: Vec<u32> = (1..=n as u32).collect();
        for i in (1..n).rev() {
            order.swap(i, rng.gen_range(0..=i));
        }
        let mut heads = vec![0; n + 1];
        for i in 1..n {
            heads[order[i] as usize] = order[rng.gen_range(0..i)];
        }
        heads
    }

    /// On random trees and random constraints from another random tree, imposing gives a tree
    /// with one root word that holds every constraint, and moves no word that was neither
    /// constrained nor in the way.
    #[test]
    fn imposing_constraints_on_any_tree_gives_a_tree_that_holds_them() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let fallback = Label::from_index(1);
        for _ in 0..20_000 {
            let n = rng.gen_range(1..9);
            let mut heads = random_tree(n, &mut rng);
            let mut labels: Vec<Label> = heads
                .iter()
                .map(|&h| if h == 0 { Label::ROOT } else { Label::from_index(rng.gen_range(1..4)) })
                .collect();
            let target = random_tree(n, &mut rng);
            let mut arcs = Vec::new();
            for w in 1..=n as u32 {
                if rng.gen_bool(0.5) {
                    let label = rng.gen_bool(0.5).then(|| Label::from_index(rng.gen_range(1..4)));
                    arcs.push(Arc { word: w, head: target[w as usize], label });
                }
            }
            let constraints = Constraints::new(n, arcs).expect("arcs of one tree");
            let before = heads.clone();
            let changed = impose(&mut heads, &mut labels, &constraints, fallback);
            assert!(constraints.hold_in(&heads, &labels), "{before:?} → {heads:?}: {constraints:?}");
            let as_usize: Vec<usize> = heads[1..].iter().map(|&h| h as usize).collect();
            assert_eq!(find_cycle(&as_usize), None, "{before:?} → {heads:?}");
            assert_eq!(heads[1..].iter().filter(|&&h| h == 0).count(), 1, "{before:?} → {heads:?}");
            for w in 1..=n {
                assert_eq!(heads[w] == 0, labels[w] == Label::ROOT, "{heads:?} {labels:?}");
                if heads[w] != before[w] {
                    assert!(changed.contains(&(w as u32)));
                }
            }
            // At most one other word moves per constraint.
            assert!(changed.len() <= 2 * constraints.arcs().count());
        }
    }
}
