//! Checks on gold trees: complete heads, no cycles, number of root dependents, projectivity;
//! and the same for partial annotations, in which some HEAD are `_` (words whose arc the
//! annotator left alone, see [`crate::transition::GoldTree::partial`]).
//!
//! Training and evaluation need well-formed gold trees; parse input does not (its HEAD may be
//! `_`). This module only inspects head vectors; it never changes a sentence.

use super::{parse_head, Column, CorpusError, ErrorKind, Sentence};
use std::path::Path;

/// Heads of a sentence's words: `heads[i]` is the head of word `i + 1`, 0 for the root.
pub type Heads = Vec<usize>;

/// Heads of a partially annotated sentence: `heads[i]` is the head of word `i + 1` (0 for the
/// root), `None` where HEAD is `_`.
pub type PartialHeads = Vec<Option<usize>>;

/// Returns the gold heads of `sent`, or an error naming `path` and the line if any head is
/// missing or the heads do not form a tree (a cycle).
pub fn gold_heads(sent: &Sentence, path: &Path) -> Result<Heads, CorpusError> {
    let err = |line, kind| CorpusError { path: path.to_path_buf(), line, kind };
    let heads = match sent.heads() {
        Ok(Some(h)) => h,
        Ok(None) => {
            let id = (1..=sent.len()).find(|&i| sent.word(i).get(super::Column::Head) == "_").unwrap_or(1);
            return Err(err(sent.line_of_word(id), ErrorKind::MissingHead));
        }
        Err((line, kind)) => return Err(err(line, kind)),
    };
    if let Some(word) = find_cycle(&heads) {
        return Err(err(sent.line_of_word(word), ErrorKind::Cycle { word }));
    }
    Ok(heads)
}

/// Returns the heads of a sentence that may be partially annotated: like [`gold_heads`], but a
/// HEAD of `_` is allowed (`None`). Errors name `path` and the line: a HEAD that is not a
/// number or is out of range, a cycle among the annotated arcs, or a second word with HEAD 0
/// (the parser builds trees with one root word, so such an annotation can never be matched).
pub fn partial_heads(sent: &Sentence, path: &Path) -> Result<PartialHeads, CorpusError> {
    let err = |line, kind| CorpusError { path: path.to_path_buf(), line, kind };
    let mut heads = Vec::with_capacity(sent.len());
    let mut root = None;
    for id in 1..=sent.len() {
        let head =
            parse_head(sent.word(id).get(Column::Head), sent.len()).map_err(|kind| err(sent.line_of_word(id), kind))?;
        if head == Some(0) {
            if let Some(first) = root {
                return Err(err(sent.line_of_word(id), ErrorKind::SeveralRoots { first, second: id }));
            }
            root = Some(id);
        }
        heads.push(head);
    }
    if let Some(word) = first_cycle(heads.len(), |w| heads[w - 1]) {
        return Err(err(sent.line_of_word(word), ErrorKind::Cycle { word }));
    }
    Ok(heads)
}

/// The first word (1-based) that lies on a cycle, if the heads have one.
pub fn find_cycle(heads: &[usize]) -> Option<usize> {
    first_cycle(heads.len(), |w| Some(heads[w - 1]))
}

/// The first word (1-based) of `n` that lies on a cycle of `head`; a word without a head
/// (`None`) ends its path as the root does.
fn first_cycle(n: usize, head: impl Fn(usize) -> Option<usize>) -> Option<usize> {
    // 0 = unvisited, 1 = on the current path, 2 = known to reach the root or a headless word.
    let mut state = vec![0u8; n + 1];
    state[0] = 2;
    for start in 1..=n {
        let mut node = start;
        while state[node] == 0 {
            state[node] = 1;
            node = head(node).unwrap_or(0);
        }
        if state[node] == 1 {
            return Some(node);
        }
        let mut node = start;
        while state[node] == 1 {
            state[node] = 2;
            node = head(node).unwrap_or(0);
        }
    }
    None
}

/// Number of words attached to the artificial root.
pub fn root_count(heads: &[usize]) -> usize {
    heads.iter().filter(|&&h| h == 0).count()
}

/// True if no two arcs cross and no arc covers the root attachment: every arc (h, d) dominates
/// all words strictly between h and d. Requires an acyclic head vector.
pub fn is_projective(heads: &[usize]) -> bool {
    // Arcs (including those from node 0) must not cross: for arcs (a,b) and (c,d) with
    // a<b, c<d we need not a<c<b<d.
    let n = heads.len();
    for d in 1..=n {
        let h = heads[d - 1];
        let (lo, hi) = (h.min(d), h.max(d));
        for k in lo + 1..hi {
            // Each word between the ends must have its head inside [lo, hi].
            let hk = heads[k - 1];
            if hk < lo || hk > hi {
                return false;
            }
        }
    }
    true
}

/// True if the annotated arcs of `heads` (`None` = not annotated) can be completed into a
/// projective tree ([`is_projective`]) by giving a head to every word without one, adding no
/// root word when some word is annotated as attached to node 0 and exactly one otherwise. For
/// a full tree this is [`is_projective`] (on an acyclic one); a cycle among the annotated arcs
/// makes it false.
///
/// This is what both transition systems, and so their dynamic oracles, need: by arc decomposition
/// (Goldberg & Nivre 2012, Section 3.2) a set of arcs is buildable as a whole if it can be
/// extended to a projective tree. It is more than the annotated arcs not crossing each other:
/// with 1 ← 2 and 1 → 3 annotated and word 2 not, no two arcs cross, but word 2 can only hang
/// from node 0, and that arc crosses 1 → 3.
pub fn is_projective_partial(heads: &[Option<usize>]) -> bool {
    let full = complete(heads);
    find_cycle(&full).is_none() && is_projective(&full)
}

/// Gives every word without a head one, such that the result is a projective tree whenever
/// any completion is (the completions are then acyclic and projective; otherwise this one is
/// not).
///
/// A word without a head that lies strictly inside annotated arcs takes the left end of the
/// innermost one as its head (the root word for an arc from node 0): an annotated arc crossing
/// that new arc would be a smaller one around the word, or cross the innermost one. A word that
/// no annotated arc covers hangs from the word annotated as root (the rightmost, should there
/// be several), or, when there is none, the first such word becomes the root word and the
/// others hang from it; as nothing covers them, these arcs cross nothing either. Heads always move to a strictly larger enclosing
/// span, so no cycle appears that the annotation did not have, unless an annotated arc covers
/// an ancestor of its own head, which no completion can make projective.
fn complete(heads: &[Option<usize>]) -> Heads {
    let spans: Vec<(usize, usize)> =
        heads.iter().enumerate().filter_map(|(i, h)| h.map(|h| (h.min(i + 1), h.max(i + 1)))).collect();
    let innermost = |w: usize| spans.iter().filter(|&&(lo, hi)| lo < w && w < hi).min_by_key(|&&(lo, hi)| hi - lo);
    let mut top = heads.iter().rposition(|&h| h == Some(0)).map(|i| i + 1);
    let mut full = Vec::with_capacity(heads.len());
    for (i, &h) in heads.iter().enumerate() {
        let w = i + 1;
        full.push(match (h, innermost(w)) {
            (Some(h), _) => h,
            (None, Some(&(0, root))) => root,
            (None, Some(&(lo, _))) => lo,
            (None, None) => match top {
                Some(root) => root,
                None => {
                    top = Some(w);
                    0
                }
            },
        });
    }
    full
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Format, Reader};
    use std::collections::HashSet;

    #[test]
    fn detects_cycles() {
        assert_eq!(find_cycle(&[0, 1, 2]), None);
        assert!(find_cycle(&[2, 1, 0]).is_some());
        assert_eq!(find_cycle(&[1]), Some(1));
    }

    #[test]
    fn projectivity() {
        // 1 <- 2 -> 3, root 2
        assert!(is_projective(&[2, 0, 2]));
        // arcs 1->3 and 2->4 cross
        assert!(!is_projective(&[0, 4, 1, 1]));
        // the root arc 0->1 is covered by 3->2? words: 1 root; 3 head of 2 -> fine
        assert!(is_projective(&[0, 3, 1]));
        // 0->2 with 1 attached to 3: arc 3->1 covers 2, whose head 0 lies outside
        assert!(!is_projective(&[3, 0, 2]));
    }

    /// The only sentence of a CoNLL-U text whose words have these HEAD values (the first line
    /// is a comment, so word `i` is on line `i + 1`).
    fn sentence(heads: &[&str]) -> Sentence {
        let mut text = String::from("# sent_id = s\n");
        for (i, h) in heads.iter().enumerate() {
            let deprel = if *h == "_" { "_" } else { "dep" };
            text.push_str(&format!("{}\tw\tw\tX\t_\t_\t{h}\t{deprel}\t_\t_\n", i + 1));
        }
        text.push('\n');
        let mut reader = Reader::new(text.as_bytes(), Path::new("a.conllu"), Format::Conllu);
        reader.next().and_then(Result::ok).expect("one well-formed sentence")
    }

    fn partial(heads: &[&str]) -> Result<PartialHeads, String> {
        partial_heads(&sentence(heads), Path::new("a.conllu")).map_err(|e| e.to_string())
    }

    #[test]
    fn partial_heads_allow_unannotated_words() {
        assert_eq!(partial(&["_", "0", "_"]), Ok(vec![None, Some(0), None]));
        assert_eq!(partial(&["_", "_"]), Ok(vec![None, None]));
        assert_eq!(partial(&["2", "0", "2"]), Ok(vec![Some(2), Some(0), Some(2)]));
        // No root word annotated is fine.
        assert_eq!(partial(&["2", "_", "2"]), Ok(vec![Some(2), None, Some(2)]));
    }

    #[test]
    fn partial_heads_name_file_and_line() {
        // (A HEAD that is not a number or out of range never gets this far: the reader refuses
        // it, with the same messages.)
        let e = partial(&["0", "_", "0"]).unwrap_err();
        assert_eq!(e, "a.conllu:4: words 1 and 3 both have HEAD 0: a tree has one root word");
        // 2 -> 3 -> 2, with word 1 unannotated and word 4 the root.
        let e = partial(&["_", "3", "2", "0"]).unwrap_err();
        assert!(e.starts_with("a.conllu:3: word 2 is its own ancestor"), "{e}");
        let e = partial(&["_", "2"]).unwrap_err();
        assert!(e.starts_with("a.conllu:3: word 2 is its own ancestor"), "{e}");
    }

    #[test]
    fn partial_projectivity() {
        assert!(is_projective_partial(&[None, None, None]));
        assert!(is_projective_partial(&[Some(2), None, Some(2)]));
        // 1 -> 3 and 2 -> 4 cross.
        assert!(!is_projective_partial(&[None, None, Some(1), Some(2)]));
        // The root arc 0 -> 2 and 3 -> 1 cross.
        assert!(!is_projective_partial(&[Some(3), Some(0), None]));
        // 1 <- 2 and 1 -> 3 do not cross, but 2 (unannotated) can only hang from 0 (1 and 3 are
        // its descendants), and 0 -> 2 crosses 1 -> 3.
        assert!(!is_projective_partial(&[Some(2), None, Some(1)]));
        // The same arcs with word 4 to hang word 2 from are not better: 4 -> 2 crosses 1 -> 3.
        assert!(!is_projective_partial(&[Some(2), None, Some(1), None]));
        // An unannotated root word must not sit under an arc: 1 -> 3 covers 2, so 2 is not the
        // root, and 1 or 3 can be.
        assert!(is_projective_partial(&[None, None, Some(1)]));
        assert!(is_projective_partial(&[Some(3), None, None]));
    }

    /// Every head vector over `n` words whose values are drawn from `values`.
    fn all_vectors<T: Copy>(n: usize, values: &[T]) -> Vec<Vec<T>> {
        let mut out = vec![Vec::new()];
        for _ in 0..n {
            out = out.into_iter().flat_map(|v| values.iter().map(move |&x| [v.clone(), vec![x]].concat())).collect();
        }
        out
    }

    /// Against brute force on every partial head vector of up to 6 words: a vector passes
    /// exactly when some acyclic projective tree contains its arcs, with the same root words if
    /// any is annotated and one root word otherwise. On full vectors this is `is_projective`.
    #[test]
    fn partial_projectivity_is_completability() {
        for n in 1..=6 {
            let mut completable = HashSet::new();
            let words: Vec<usize> = (0..=n).collect();
            for tree in all_vectors(n, &words) {
                if find_cycle(&tree).is_some() || !is_projective(&tree) {
                    continue;
                }
                let roots = root_count(&tree);
                for mask in 0u32..1 << n {
                    let p: PartialHeads = (0..n).map(|i| (mask >> i & 1 == 1).then_some(tree[i])).collect();
                    let annotated_roots = p.iter().filter(|&&h| h == Some(0)).count();
                    if annotated_roots == roots || (annotated_roots == 0 && roots == 1) {
                        completable.insert(p);
                    }
                }
            }
            let values: Vec<Option<usize>> = std::iter::once(None).chain((0..=n).map(Some)).collect();
            for p in all_vectors(n, &values) {
                assert_eq!(is_projective_partial(&p), completable.contains(&p), "{p:?}");
                if p.iter().all(Option::is_some) {
                    let full: Heads = p.iter().flatten().copied().collect();
                    if find_cycle(&full).is_none() {
                        assert_eq!(is_projective_partial(&p), is_projective(&full), "{p:?}");
                    }
                }
            }
        }
    }
}
