//! Constrained decoding ([`Parser::parse_constrained`]) against exhaustive search, for both
//! transition systems: on random sentences of up to 7 words, random weights and random
//! constraints taken from a random projective tree, the decoder's tree must be the one greedy
//! search reaches when, at every step, it takes the highest-scoring legal transition from
//! which some sequence of transitions still builds every constrained arc; the reference below
//! finds those transitions by searching every continuation, and never reads an oracle cost.
//! Constraints no projective tree holds must still all hold in the result, which must be a
//! tree with one root word; without constraints the decoder is the plain greedy parser.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use spoolparse::base::label::{Label, LabelSet};
use spoolparse::corpus::tree::find_cycle;
use spoolparse::learn::scorer::Scorer;
use spoolparse::model::features::{token_attrs, Extractor, TokenAttrs, ROOT_ATTRS};
use spoolparse::parse::constrained::{Arc, Constraints};
use spoolparse::parse::parser::{Parser, TransitionScores};
use spoolparse::transition::{Configuration, Encoding, System, Transition, TransitionSystem, NONE};

/// Labels: root and three others.
const LABELS: [&str; 4] = ["root", "a", "b", "c"];

/// Weights drawn from a hash of (feature, class, seed): every feature scores every class.
struct HashScorer {
    classes: usize,
    seed: u64,
}

impl Scorer for HashScorer {
    fn classes(&self) -> usize {
        self.classes
    }

    fn score(&self, features: &[u64], scores: &mut [f32]) {
        scores.fill(0.0);
        self.add(features, scores);
    }

    fn add(&self, features: &[u64], scores: &mut [f32]) {
        for &f in features {
            for (c, s) in scores.iter_mut().enumerate() {
                let h = (f ^ self.seed ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                    .wrapping_mul(0xd6e8_feb8_6659_fd93);
                *s += ((h >> 40) % 17) as f32 - 8.0;
            }
        }
    }
}

fn label_set() -> LabelSet {
    let mut set = LabelSet::new(LABELS[0]);
    for name in &LABELS[1..] {
        set.intern(name);
    }
    set
}

fn attrs(n: usize, rng: &mut ChaCha8Rng) -> Vec<TokenAttrs> {
    const WORDS: [(&str, &str); 5] = [("the", "DET"), ("dog", "NOUN"), ("saw", "VERB"), ("it", "PRON"), (".", "PUNCT")];
    let mut out = vec![ROOT_ATTRS];
    for _ in 0..n {
        let (form, tag) = WORDS[rng.gen_range(0..WORDS.len())];
        out.push(token_attrs(form, form, tag, tag, "_"));
    }
    out
}

/// Attaches the words `lo..=hi` below `head` as a projective forest of random subtrees.
fn projective_forest(lo: usize, hi: usize, head: u32, heads: &mut [u32], rng: &mut ChaCha8Rng) {
    let mut start = lo;
    while start <= hi {
        let end = rng.gen_range(start..=hi);
        let root = rng.gen_range(start..=end);
        heads[root] = head;
        if root > start {
            projective_forest(start, root - 1, root as u32, heads, rng);
        }
        if root < end {
            projective_forest(root + 1, end, root as u32, heads, rng);
        }
        start = end + 1;
    }
}

/// A random projective tree with one root word: heads per word, index 0 unused.
fn projective_tree(n: usize, rng: &mut ChaCha8Rng) -> Vec<u32> {
    let mut heads = vec![0; n + 1];
    let root = rng.gen_range(1..=n);
    if root > 1 {
        projective_forest(1, root - 1, root as u32, &mut heads, rng);
    }
    if root < n {
        projective_forest(root + 1, n, root as u32, &mut heads, rng);
    }
    heads
}

/// Some arcs of `heads`, each kept with probability `keep`, with or without a label.
fn some_arcs(heads: &[u32], keep: f64, rng: &mut ChaCha8Rng) -> Vec<Arc> {
    let mut arcs = Vec::new();
    for w in 1..heads.len() as u32 {
        if rng.gen_bool(keep) {
            let label = rng.gen_bool(0.6).then(|| Label::from_index(rng.gen_range(1..LABELS.len())));
            arcs.push(Arc { word: w, head: heads[w as usize], label });
        }
    }
    arcs
}

/// Whether some sequence of transitions from `c` ends in a terminal configuration that has
/// built every arc of `arcs` (with its label where one is given). Arcs are never undone, so a
/// constrained word with another head is a dead end.
fn can_build_all(sys: System, c: &Configuration, arcs: &[Arc], memo: &mut HashMap<Vec<u32>, bool>) -> bool {
    let built_wrong = |a: &Arc| {
        let h = c.head(a.word);
        h != NONE && (h != a.head || a.label.is_some_and(|l| c.label(a.word) != l))
    };
    if arcs.iter().any(built_wrong) {
        return false;
    }
    if sys.is_terminal(c) {
        return arcs.iter().all(|a| c.head(a.word) == a.head);
    }
    let mut key: Vec<u32> = c.stack_nodes().to_vec();
    key.push(NONE);
    key.push(c.buffer(0).unwrap_or(NONE));
    key.extend((1..=c.len() as u32).flat_map(|w| [c.head(w), c.label(w).index() as u32]));
    if let Some(&v) = memo.get(&key) {
        return v;
    }
    let v = sys.legal(c).transitions(LABELS.len()).any(|t| {
        let mut next = c.clone();
        sys.apply(&mut next, t);
        can_build_all(sys, &next, arcs, memo)
    });
    memo.insert(key, v);
    v
}

/// Greedy search restricted, at every step, to the transitions after which every constrained
/// arc can still be built, found by exhaustive search; the finished tree.
fn reference(sys: System, weights: &HashScorer, attrs: &[TokenAttrs], arcs: &[Arc]) -> (Vec<u32>, Vec<Label>) {
    let n = attrs.len() - 1;
    let mut c = Configuration::new(n);
    let mut extractor = Extractor::new(sys);
    let mut scores = TransitionScores::new(weights, LABELS.len());
    let mut memo = HashMap::new();
    while !sys.is_terminal(&c) {
        let legal = sys.legal(&c);
        scores.score(weights, extractor.extract(&c, attrs), &legal);
        let mut best: Option<(Transition, f32)> = None;
        for t in legal.transitions(LABELS.len()) {
            let mut next = c.clone();
            sys.apply(&mut next, t);
            if can_build_all(sys, &next, arcs, &mut memo) && best.is_none_or(|(_, s)| scores.get(t) > s) {
                best = Some((t, scores.get(t)));
            }
        }
        let (t, _) = best.expect("the constraints come from a projective tree: some transition keeps them");
        sys.apply(&mut c, t);
    }
    let (mut heads, mut labels) = (Vec::new(), Vec::new());
    sys.finish(&c, Label::from_index(1), &mut heads, &mut labels);
    (heads, labels)
}

fn parser<'a>(sys: System, weights: HashScorer, labels: &'a LabelSet) -> Parser<'a, HashScorer> {
    Parser::from_parts(Encoding { system: sys, projective: None }, weights, labels, Label::from_index(1))
}

fn decodes_as_exhaustive_search(sys: System) {
    let labels = label_set();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut constrained_steps = 0;
    for case in 0..600 {
        let n = rng.gen_range(1..=7);
        let attrs = attrs(n, &mut rng);
        let seed = rng.gen();
        let classes = Transition::count(LABELS.len());
        let arcs = some_arcs(&projective_tree(n, &mut rng), rng.gen_range(0.0..1.0), &mut rng);
        let constraints = Constraints::new(n, arcs.clone()).expect("arcs of one tree");
        let mut p = parser(sys, HashScorer { classes, seed }, &labels);
        p.parse_constrained(&attrs, &constraints);
        let expected = reference(sys, &HashScorer { classes, seed }, &attrs, &constraints.arcs().collect::<Vec<_>>());
        assert_eq!((p.heads(), p.labels()), (&expected.0[..], &expected.1[..]), "{sys}, case {case}: {arcs:?}");
        assert!(constraints.hold_in(p.heads(), p.labels()), "{sys}, case {case}");
        // The unconstrained parse of the same weights, to see that the constraints mattered.
        let mut free = parser(sys, HashScorer { classes, seed }, &labels);
        free.parse_attrs(&attrs);
        constrained_steps += usize::from(free.heads() != p.heads() || free.labels() != p.labels());
    }
    assert!(constrained_steps > 120, "only {constrained_steps} parses changed under constraints");
}

#[test]
fn arc_eager_constrained_decoding_is_greedy_search_among_transitions_that_keep_every_constraint() {
    decodes_as_exhaustive_search(System::ArcEager);
}

#[test]
fn arc_hybrid_constrained_decoding_is_greedy_search_among_transitions_that_keep_every_constraint() {
    decodes_as_exhaustive_search(System::ArcHybrid);
}

/// A random tree (possibly non-projective) with one root word, index 0 unused.
fn any_tree(n: usize, rng: &mut ChaCha8Rng) -> Vec<u32> {
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

#[test]
fn constraints_no_projective_tree_holds_still_all_hold_in_a_tree_with_one_root() {
    let labels = label_set();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for sys in [System::ArcEager, System::ArcHybrid] {
        for case in 0..3000 {
            let n = rng.gen_range(1..=12);
            let attrs = attrs(n, &mut rng);
            let arcs = some_arcs(&any_tree(n, &mut rng), rng.gen_range(0.0..1.0), &mut rng);
            let constraints = Constraints::new(n, arcs.clone()).expect("arcs of one tree");
            let mut p = parser(sys, HashScorer { classes: Transition::count(LABELS.len()), seed: rng.gen() }, &labels);
            p.parse_constrained(&attrs, &constraints);
            assert!(constraints.hold_in(p.heads(), p.labels()), "{sys}, case {case}: {arcs:?} → {:?}", p.heads());
            let heads: Vec<usize> = p.heads()[1..].iter().map(|&h| h as usize).collect();
            assert_eq!(find_cycle(&heads), None, "{sys}, case {case}");
            assert_eq!(heads.iter().filter(|&&h| h == 0).count(), 1, "{sys}, case {case}: {heads:?}");
        }
    }
}

#[test]
fn without_constraints_the_decoder_is_the_greedy_parser() {
    let labels = label_set();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for sys in [System::ArcEager, System::ArcHybrid] {
        for _ in 0..500 {
            let n = rng.gen_range(1..=20);
            let attrs = attrs(n, &mut rng);
            let seed = rng.gen();
            let classes = Transition::count(LABELS.len());
            let mut a = parser(sys, HashScorer { classes, seed }, &labels);
            a.parse_constrained(&attrs, &Constraints::none(n));
            let mut b = parser(sys, HashScorer { classes, seed }, &labels);
            b.parse_attrs(&attrs);
            assert_eq!((a.heads(), a.labels()), (b.heads(), b.labels()));
        }
    }
}
