//! When an answer is a review no one could have made: a rubber stamp, held back instead of
//! stored as gold ([`rubber_stamp`]).
//!
//! The store's suspect check compares a tree with the model where it is sure; a tree confirmed
//! as the parser drew it agrees with the model by construction, so it cannot catch an annotator
//! who confirms without reading. Time can: the audit log has the milliseconds from a task's
//! lease to its answer. Two patterns are held back (written to `annotated/suspect/`, never
//! trained on until a person confirms them and moves them back, as the store's own suspects):
//!
//! - a whole sentence confirmed exactly as parsed in under [`MIN_MS_PER_WORD`] per word:
//!   reading speed alone is about 250 ms a word, checking a tree takes longer (seen: 40 such
//!   answers at 0.17 s each, 106 of their 344 arcs wrong, stored as fully reviewed gold);
//! - arcs the queue rated likely wrong (a calibrated probability of being wrong of at least
//!   [`LIKELY_WRONG`]) confirmed unchanged in under [`MIN_MS_PER_LIKELY_WRONG`] each: confirming
//!   that the parser was right after all is a judgement, not a keystroke.
//!
//! An answer that changes arcs, or takes its time, is a review, whatever it says. This module
//! owns the rule; the workbench's routes apply it.

use std::collections::HashMap;

use super::answers::Checked;

/// A whole sentence confirmed as parsed faster than this per word is not a review.
pub const MIN_MS_PER_WORD: u64 = 250;
/// An arc the queue rated this likely wrong, confirmed unchanged ...
pub const LIKELY_WRONG: f32 = 0.5;
/// ... faster than this each, is not reviewed.
pub const MIN_MS_PER_LIKELY_WRONG: u64 = 1000;

/// Why an answer is a rubber stamp, if it is one: `arcs` as answered per word (index 0 unused;
/// `None` unanswered), `shown` as the task showed them, `checked` what the queue knew of the
/// words it flagged, `whole` a whole-sentence answer, `ms` from the lease to the answer.
pub fn rubber_stamp(
    arcs: &[Option<(u32, String)>],
    shown: &[(u32, String)],
    checked: &HashMap<u32, Checked>,
    whole: bool,
    ms: u64,
) -> Option<String> {
    let unchanged =
        |w: usize| arcs[w].as_ref().is_some_and(|(h, d)| shown.get(w).is_some_and(|s| s.0 == *h && s.1 == *d));
    let words = arcs.len().saturating_sub(1);
    if whole && (1..=words).all(unchanged) && ms < MIN_MS_PER_WORD * words as u64 {
        return Some(format!(
            "the whole sentence ({words} words) confirmed as parsed in {ms} ms: under {MIN_MS_PER_WORD} ms a word, \
             faster than it can be read"
        ));
    }
    // An answer that corrects an arc was read, whatever else it confirms (a fast one was
    // held back whole before, corrections and all: 129 of 667 simulated answers on en_atis).
    if (1..=words).any(|w| arcs[w].is_some() && !unchanged(w)) {
        return None;
    }
    let likely_wrong =
        (1..=words).filter(|&w| unchanged(w) && checked.get(&(w as u32)).is_some_and(|c| c.p >= LIKELY_WRONG));
    let confirmed = likely_wrong.count() as u64;
    if confirmed > 0 && ms < MIN_MS_PER_LIKELY_WRONG * confirmed {
        return Some(format!(
            "{confirmed} arc(s) the queue rated likely wrong (at least {LIKELY_WRONG}) confirmed unchanged in {ms} ms: \
             under {MIN_MS_PER_LIKELY_WRONG} ms each"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arcs(tree: &[(u32, &str)]) -> Vec<Option<(u32, String)>> {
        std::iter::once(None).chain(tree.iter().map(|&(h, d)| Some((h, d.to_string())))).collect()
    }

    #[test]
    fn fast_confirmations_are_rubber_stamps_and_real_reviews_are_not() {
        let tree = [(2, "det"), (0, "root"), (2, "punct")];
        let shown: Vec<(u32, String)> =
            std::iter::once((0, String::new())).chain(tree.iter().map(|&(h, d)| (h, d.to_string()))).collect();
        let none = HashMap::new();
        // Three words as parsed: under 750 ms held back, from 750 ms a review.
        assert!(rubber_stamp(&arcs(&tree), &shown, &none, true, 170).is_some());
        assert!(rubber_stamp(&arcs(&tree), &shown, &none, true, 750).is_none());
        // Changed, or not whole: no rubber stamp, however fast.
        assert!(rubber_stamp(&arcs(&[(2, "det"), (0, "root"), (2, "obj")]), &shown, &none, true, 10).is_none());
        assert!(rubber_stamp(&arcs(&tree), &shown, &none, false, 10).is_none());
        // A likely-wrong arc confirmed unchanged needs a second; a changed one does not.
        let flagged = HashMap::from([(3, Checked { p: 0.8, pattern: "x".into() })]);
        let partial = vec![None, None, None, Some((2, "punct".to_string()))];
        assert!(rubber_stamp(&partial, &shown, &flagged, false, 400).is_some());
        assert!(rubber_stamp(&partial, &shown, &flagged, false, 1000).is_none());
        let fixed = vec![None, None, None, Some((1, "punct".to_string()))];
        assert!(rubber_stamp(&fixed, &shown, &flagged, false, 400).is_none());
        let unlikely = HashMap::from([(3, Checked { p: 0.3, pattern: "x".into() })]);
        assert!(rubber_stamp(&partial, &shown, &unlikely, false, 400).is_none());
        // One arc corrected beside a likely-wrong one confirmed: read, however fast.
        let both =
            HashMap::from([(1, Checked { p: 0.9, pattern: "y".into() }), (3, Checked { p: 0.8, pattern: "x".into() })]);
        let mixed = vec![None, Some((3, "det".to_string())), None, Some((2, "punct".to_string()))];
        assert!(rubber_stamp(&mixed, &shown, &both, false, 10).is_none());
        let confirmed_both = vec![None, Some((2, "det".to_string())), None, Some((2, "punct".to_string()))];
        assert!(rubber_stamp(&confirmed_both, &shown, &both, false, 1500).is_some(), "two need two seconds");
    }
}
