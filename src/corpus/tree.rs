//! Checks on gold trees: complete heads, no cycles, number of root dependents, projectivity.
//!
//! Training and evaluation need well-formed gold trees; parse input does not (its HEAD may be
//! `_`). This module only inspects head vectors; it never changes a sentence.

use super::{CorpusError, ErrorKind, Sentence};
use std::path::Path;

/// Heads of a sentence's words: `heads[i]` is the head of word `i + 1`, 0 for the root.
pub type Heads = Vec<usize>;

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

/// The first word (1-based) that lies on a cycle, if the heads have one.
pub fn find_cycle(heads: &[usize]) -> Option<usize> {
    // 0 = unvisited, 1 = on the current path, 2 = known to reach the root.
    let mut state = vec![0u8; heads.len() + 1];
    state[0] = 2;
    for start in 1..=heads.len() {
        let mut node = start;
        while state[node] == 0 {
            state[node] = 1;
            node = heads[node - 1];
        }
        if state[node] == 1 {
            return Some(node);
        }
        let mut node = start;
        while state[node] == 1 {
            state[node] = 2;
            node = heads[node - 1];
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
