//! The dynamic oracle's costs against exhaustive search (Goldberg & Nivre 2012, Section 3):
//! on random projective trees of up to 8 words and random configurations reached from the
//! initial one by random legal transitions, the cost of every legal transition must equal the
//! difference between the best losses reachable before and after it, and some legal transition
//! must cost nothing.

use std::collections::HashMap;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use spoolparse::arc_eager::{Configuration, Transition, NONE};
use spoolparse::label::Label;
use spoolparse::oracle::{cost, GoldTree};

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

/// A random projective tree with exactly one root word.
fn random_tree(n: usize, rng: &mut ChaCha8Rng) -> GoldTree {
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
    GoldTree::new(&heads, &labels)
}

fn all_legal(c: &Configuration) -> Vec<Transition> {
    c.legal().transitions(LABELS).collect()
}

/// Gold arcs (with the right label) already in `c`.
fn correct_arcs(c: &Configuration, gold: &GoldTree) -> u32 {
    (1..=gold.len() as u32).filter(|&w| c.head(w) == gold.head(w) && c.label(w) == gold.label(w)).count() as u32
}

/// The most gold arcs that any sequence of legal transitions can still add to `c`.
/// What can still be added depends only on the stack, the buffer position, which stack nodes
/// have heads and whether the root has its dependent, so that is the memo key.
fn best_future(c: &Configuration, gold: &GoldTree, memo: &mut HashMap<Vec<u32>, u32>) -> u32 {
    if c.is_terminal() {
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
    for t in all_legal(c) {
        let mut next = c.clone();
        next.apply(t);
        let gain = correct_arcs(&next, gold) - before;
        best = best.max(gain + best_future(&next, gold, memo));
    }
    memo.insert(key, best);
    best
}

/// The loss of the best tree reachable from `c`: gold arcs that will be missing at the end.
fn best_loss(c: &Configuration, gold: &GoldTree, memo: &mut HashMap<Vec<u32>, u32>) -> u32 {
    gold.len() as u32 - correct_arcs(c, gold) - best_future(c, gold, memo)
}

fn check(n: usize, seed: u64, steps: usize) -> Result<(), TestCaseError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let gold = random_tree(n, &mut rng);
    let mut c = Configuration::new(n);
    for _ in 0..steps {
        let legal = all_legal(&c);
        if legal.is_empty() {
            break;
        }
        c.apply(legal[rng.gen_range(0..legal.len())]);
    }
    if c.is_terminal() {
        return Ok(());
    }
    let mut memo = HashMap::new();
    let loss = best_loss(&c, &gold, &mut memo);
    let mut zero = 0;
    for t in all_legal(&c) {
        let mut next = c.clone();
        next.apply(t);
        let exhaustive = best_loss(&next, &gold, &mut memo) - loss;
        let oracle = cost(&c, &gold, t);
        prop_assert_eq!(oracle, exhaustive, "transition {:?} in {:?} for gold {:?}", t, c, gold);
        zero += usize::from(oracle == 0);
    }
    prop_assert!(zero > 0, "empty zero-cost set in {:?}", c);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn dynamic_oracle_costs_match_exhaustive_search(n in 1usize..=8, seed in any::<u64>(), steps in 0usize..16) {
        check(n, seed, steps)?;
    }
}

#[test]
fn the_initial_configuration_of_every_small_tree_has_zero_cost_transitions() {
    for seed in 0..200 {
        check(1 + (seed as usize % 8), seed, 0).unwrap();
    }
}
