//! The dynamic oracles' costs against exhaustive search (Goldberg & Nivre 2012, Section 3), for
//! each transition system (arc-eager; arc-hybrid, Goldberg & Nivre 2013): on random projective
//! trees of up to 8 words and random configurations reached from the
//! initial one by random legal transitions, the cost of every legal transition must equal the
//! difference between the best losses reachable before and after it, and some legal transition
//! must cost nothing. The same holds for partial trees (some heads and labels not annotated,
//! Goldberg & Nivre 2013), where the exhaustive search counts only annotated arcs and
//! compares labels only where they are known: the reference below reads the annotation
//! itself, never the [`GoldTree`] under test.

use std::collections::HashMap;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use spoolparse::base::label::Label;
use spoolparse::corpus::tree::is_projective_partial;
use spoolparse::transition::{Configuration, GoldTree, System, Transition, TransitionSystem, NONE};

/// Labels used in the random trees: root plus three ordinary ones.
const LABELS: usize = 4;

/// Attaches the words `lo..=hi` below `head` as a projective forest of random subtrees.
fn projective_forest(lo: usize, hi: usize, head: usize, heads: &mut [usize], rng: &mut ChaCha8Rng) {
    let mut start = lo;
    while start <= hi {
        let end = rng.gen_range(start..=hi);
        let root = rng.gen_range(start..=end);
        heads[root - 1] = head;
        if root > start {
            projective_forest(start, root - 1, root, heads, rng);
        }
        if root < end {
            projective_forest(root + 1, end, root, heads, rng);
        }
        start = end + 1;
    }
}

/// A random projective tree with exactly one root word: heads and labels.
fn random_arcs(n: usize, rng: &mut ChaCha8Rng) -> (Vec<usize>, Vec<Label>) {
    let mut heads = vec![0; n];
    let root = rng.gen_range(1..=n);
    if root > 1 {
        projective_forest(1, root - 1, root, &mut heads, rng);
    }
    if root < n {
        projective_forest(root + 1, n, root, &mut heads, rng);
    }
    let labels: Vec<Label> =
        heads.iter().map(|&h| if h == 0 { Label::ROOT } else { Label::from_index(rng.gen_range(1..LABELS)) }).collect();
    (heads, labels)
}

/// A random projective tree with exactly one root word.
fn random_tree(n: usize, rng: &mut ChaCha8Rng) -> GoldTree {
    let (heads, labels) = random_arcs(n, rng);
    GoldTree::new(&heads, &labels)
}

fn all_legal(sys: System, c: &Configuration) -> Vec<Transition> {
    sys.legal(c).transitions(LABELS).collect()
}

/// `c` after `t`.
fn after(sys: System, c: &Configuration, t: Transition) -> Configuration {
    let mut next = c.clone();
    sys.apply(&mut next, t);
    next
}

/// What the exhaustive search scores against: per word (index 0 unused) the annotated head
/// and label, `None` where not annotated.
trait Reference {
    fn len(&self) -> usize;
    fn head(&self, w: u32) -> Option<u32>;
    fn label(&self, w: u32) -> Option<Label>;
    /// Number of annotated arcs.
    fn annotated(&self) -> u32 {
        (1..=self.len() as u32).filter(|&w| self.head(w).is_some()).count() as u32
    }
}

impl Reference for GoldTree {
    fn len(&self) -> usize {
        GoldTree::len(self)
    }
    fn head(&self, w: u32) -> Option<u32> {
        Some(GoldTree::head(self, w))
    }
    fn label(&self, w: u32) -> Option<Label> {
        GoldTree::label(self, w)
    }
}

/// A partial annotation as drawn, independent of [`GoldTree`].
#[derive(Debug)]
struct Partial {
    heads: Vec<Option<u32>>,
    labels: Vec<Option<Label>>,
}

impl Reference for Partial {
    fn len(&self) -> usize {
        self.heads.len() - 1
    }
    fn head(&self, w: u32) -> Option<u32> {
        self.heads[w as usize]
    }
    fn label(&self, w: u32) -> Option<Label> {
        self.labels[w as usize]
    }
}

/// Annotated arcs already in `c` (with the right label where the label is annotated).
fn correct_arcs(c: &Configuration, gold: &impl Reference) -> u32 {
    (1..=gold.len() as u32)
        .filter(|&w| gold.head(w) == Some(c.head(w)) && gold.label(w).is_none_or(|l| l == c.label(w)))
        .count() as u32
}

/// The most gold arcs that any sequence of legal transitions can still add to `c`.
/// What can still be added depends only on the stack, the buffer position, which stack nodes
/// have heads and whether the root has its dependent, so that is the memo key.
fn best_future(sys: System, c: &Configuration, gold: &impl Reference, memo: &mut HashMap<Vec<u32>, u32>) -> u32 {
    if sys.is_terminal(c) {
        return 0;
    }
    let mut key: Vec<u32> = c.stack_nodes().iter().map(|&s| s * 2 + u32::from(c.head(s) != NONE)).collect();
    key.push(c.buffer(0).unwrap_or(0));
    key.push(u32::from(c.root_child() != NONE));
    if let Some(&v) = memo.get(&key) {
        return v;
    }
    let before = correct_arcs(c, gold);
    let mut best = 0;
    for t in all_legal(sys, c) {
        let next = after(sys, c, t);
        let gain = correct_arcs(&next, gold) - before;
        best = best.max(gain + best_future(sys, &next, gold, memo));
    }
    memo.insert(key, best);
    best
}

/// The loss of the best tree reachable from `c`: annotated arcs that will be missing (or
/// wrongly labelled) at the end.
fn best_loss(sys: System, c: &Configuration, gold: &impl Reference, memo: &mut HashMap<Vec<u32>, u32>) -> u32 {
    gold.annotated() - correct_arcs(c, gold) - best_future(sys, c, gold, memo)
}

fn check(sys: System, n: usize, seed: u64, steps: usize) -> Result<(), TestCaseError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let gold = random_tree(n, &mut rng);
    check_against(sys, &gold, &gold, steps, &mut rng)
}

/// A random partial annotation of a random projective tree: each head hidden with probability
/// `hide_head`, each label of a kept head with probability `hide_label`.
fn random_partial(n: usize, hide_head: f64, hide_label: f64, rng: &mut ChaCha8Rng) -> Partial {
    let (heads, labels) = random_arcs(n, rng);
    let mut partial = Partial { heads: vec![None; n + 1], labels: vec![None; n + 1] };
    for w in 1..=n {
        if rng.gen::<f64>() >= hide_head {
            partial.heads[w] = Some(heads[w - 1] as u32);
            if rng.gen::<f64>() >= hide_label {
                partial.labels[w] = Some(labels[w - 1]);
            }
        }
    }
    partial
}

fn check_partial(
    sys: System,
    n: usize,
    seed: u64,
    steps: usize,
    hide_head: f64,
    hide_label: f64,
) -> Result<(), TestCaseError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let reference = random_partial(n, hide_head, hide_label, &mut rng);
    let heads: Vec<Option<usize>> = reference.heads[1..].iter().map(|h| h.map(|h| h as usize)).collect();
    let gold = GoldTree::partial(&heads, &reference.labels[1..]);
    prop_assert_eq!(gold.annotated() as u32, reference.annotated());
    check_against(sys, &gold, &reference, steps, &mut rng)
}

/// Walks `steps` random legal transitions from the initial configuration, then compares every
/// legal transition's cost under `gold` with exhaustive search against `reference`.
fn check_against(
    sys: System,
    gold: &GoldTree,
    reference: &(impl Reference + std::fmt::Debug),
    steps: usize,
    rng: &mut ChaCha8Rng,
) -> Result<(), TestCaseError> {
    let n = gold.len();
    let mut c = Configuration::new(n);
    for _ in 0..steps {
        let legal = all_legal(sys, &c);
        if legal.is_empty() {
            break;
        }
        sys.apply(&mut c, legal[rng.gen_range(0..legal.len())]);
    }
    if sys.is_terminal(&c) {
        return Ok(());
    }
    let mut memo = HashMap::new();
    let loss = best_loss(sys, &c, reference, &mut memo);
    let mut zero = 0;
    for t in all_legal(sys, &c) {
        let next = after(sys, &c, t);
        let exhaustive = best_loss(sys, &next, reference, &mut memo) - loss;
        let oracle = sys.cost(&c, gold, t);
        prop_assert_eq!(oracle, exhaustive, "transition {:?} in {:?} for gold {:?}", t, c, reference);
        zero += usize::from(oracle == 0);
    }
    prop_assert!(zero > 0, "empty zero-cost set in {:?}", c);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arc_eager_costs_match_exhaustive_search(n in 1usize..=8, seed in any::<u64>(), steps in 0usize..16) {
        check(System::ArcEager, n, seed, steps)?;
    }

    #[test]
    fn arc_hybrid_costs_match_exhaustive_search(n in 1usize..=8, seed in any::<u64>(), steps in 0usize..20) {
        check(System::ArcHybrid, n, seed, steps)?;
    }
}

/// A hiding probability: often exactly 0 (nothing hidden) or 1 (everything hidden), otherwise
/// anywhere in between.
fn hide_probability() -> impl Strategy<Value = f64> {
    prop_oneof![1 => Just(0.0), 1 => Just(1.0), 4 => 0.0..1.0f64]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn arc_eager_costs_match_exhaustive_search_on_partial_trees(
        n in 1usize..=8,
        seed in any::<u64>(),
        steps in 0usize..16,
        hide_head in hide_probability(),
        hide_label in hide_probability(),
    ) {
        check_partial(System::ArcEager, n, seed, steps, hide_head, hide_label)?;
    }

    #[test]
    fn arc_hybrid_costs_match_exhaustive_search_on_partial_trees(
        n in 1usize..=8,
        seed in any::<u64>(),
        steps in 0usize..20,
        hide_head in hide_probability(),
        hide_label in hide_probability(),
    ) {
        check_partial(System::ArcHybrid, n, seed, steps, hide_head, hide_label)?;
    }
}

#[test]
fn the_initial_configuration_of_every_small_tree_has_zero_cost_transitions() {
    for sys in System::ALL {
        for seed in 0..200 {
            check(sys, 1 + (seed as usize % 8), seed, 0).unwrap();
        }
    }
}

/// Every partial annotation of up to 4 words that `is_projective_partial` accepts (whatever
/// its root, annotated or not): exact costs and a zero-cost transition in every configuration
/// reachable from the initial one. (Annotations it refuses, such as 1 ← 2 and 1 → 3 with word 2
/// unannotated, have configurations where no transition costs nothing.)
#[test]
fn every_small_completable_partial_tree_has_exact_costs_everywhere() {
    for sys in System::ALL {
        every_small_completable_partial_tree(sys);
    }
}

fn every_small_completable_partial_tree(sys: System) {
    let label = Label::from_index(1);
    for n in 1..=4usize {
        let values: Vec<Option<usize>> = std::iter::once(None).chain((0..=n).map(Some)).collect();
        let mut vectors = vec![Vec::new()];
        for _ in 0..n {
            vectors =
                vectors.into_iter().flat_map(|v| values.iter().map(move |&h| [v.clone(), vec![h]].concat())).collect();
        }
        for heads in vectors {
            if heads.iter().filter(|&&h| h == Some(0)).count() > 1 || !is_projective_partial(&heads) {
                continue;
            }
            let labels: Vec<Option<Label>> =
                heads.iter().map(|h| h.map(|h| if h == 0 { Label::ROOT } else { label })).collect();
            let reference = Partial {
                heads: std::iter::once(None).chain(heads.iter().map(|h| h.map(|h| h as u32))).collect(),
                labels: std::iter::once(None).chain(labels.iter().copied()).collect(),
            };
            let gold = GoldTree::partial(&heads, &labels);
            let mut todo = vec![Configuration::new(n)];
            while let Some(c) = todo.pop() {
                if sys.is_terminal(&c) {
                    continue;
                }
                let mut memo = HashMap::new();
                let loss = best_loss(sys, &c, &reference, &mut memo);
                let mut zero = 0;
                for t in all_legal(sys, &c) {
                    let next = after(sys, &c, t);
                    let exhaustive = best_loss(sys, &next, &reference, &mut memo) - loss;
                    assert_eq!(sys.cost(&c, &gold, t), exhaustive, "{sys}: {t:?} in {c:?} for {heads:?}");
                    zero += usize::from(exhaustive == 0);
                    todo.push(next);
                }
                assert!(zero > 0, "{sys}: empty zero-cost set in {c:?} for {heads:?}");
            }
        }
    }
}
