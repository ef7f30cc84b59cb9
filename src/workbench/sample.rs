//! A uniform sample of everything the daemon published (`accepted/` and `lowconf/` alike), for
//! measuring on the user's own text what `--min-precision` promises: the low-confidence queue
//! alone never shows a sentence above the threshold, so the precision of what reaches
//! `accepted/` cannot be read from its answers.
//!
//! The sample is a reservoir (Vitter 1985, Algorithm R): of the `n` sentences offered so far,
//! each is in it with probability `capacity / n`, whatever the order they came in, in bounded
//! memory. Sentences are offered as the scanner reads the files; one enters when it is among the
//! first `capacity`, else with probability `capacity / n`, in place of one drawn uniformly (a
//! sentence leased right then keeps its place, so that no task disappears under an annotator).
//! A task is then drawn uniformly among the sample's sentences not yet answered
//! ([`Reservoir::draw`]), so that the answered ones are a uniform sample of the text: their
//! precision at any threshold is an unbiased estimate of the text's.
//!
//! This module owns the sampling; it knows indices, not files or sentences.

use rand::Rng;

/// Sentences the sample holds at most: enough for `--min-precision`'s bound to tell 0.95 from
/// 0.90 many times over, and 4096 indices of memory.
pub const CAPACITY: usize = 4096;

/// A reservoir of indices (the caller's: the queue's candidates).
#[derive(Debug, Clone)]
pub struct Reservoir {
    capacity: usize,
    /// Sentences offered so far.
    seen: u64,
    slots: Vec<usize>,
}

impl Reservoir {
    /// An empty reservoir of at most `capacity` indices.
    pub fn new(capacity: usize) -> Reservoir {
        Reservoir { capacity, seen: 0, slots: Vec::new() }
    }

    /// Sentences offered so far: the population the sample is of.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// The indices held.
    pub fn slots(&self) -> &[usize] {
        &self.slots
    }

    /// Offers the next sentence: the slot it enters, if it does, so that a caller reads a
    /// sentence only when it enters. On `Some(j)` the caller puts it there with
    /// [`Reservoir::put`], or drops it (a sentence that cannot be sampled: the sample stays
    /// uniform over the others).
    pub fn admit(&mut self, rng: &mut impl Rng) -> Option<usize> {
        self.seen += 1;
        if self.slots.len() < self.capacity {
            return Some(self.slots.len());
        }
        let j = rng.gen_range(0..self.seen) as usize;
        (j < self.capacity).then_some(j)
    }

    /// Puts `index` at slot `j`, as [`Reservoir::admit`] allowed it, unless `keep` says the
    /// index there must stay (it is leased right now: the newcomer is dropped).
    pub fn put(&mut self, j: usize, index: usize, keep: impl Fn(usize) -> bool) -> Offered {
        match self.slots.get_mut(j) {
            None => {
                self.slots.push(index);
                Offered::Added
            }
            Some(slot) if keep(*slot) => Offered::Dropped,
            Some(slot) => Offered::Replaced(std::mem::replace(slot, index)),
        }
    }

    /// An index drawn uniformly among those `open` allows (a few random tries, then all of them
    /// looked at), `None` when none is.
    pub fn draw(&self, rng: &mut impl Rng, open: impl Fn(usize) -> bool) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        for _ in 0..16 {
            let i = self.slots[rng.gen_range(0..self.slots.len())];
            if open(i) {
                return Some(i);
            }
        }
        let open: Vec<usize> = self.slots.iter().copied().filter(|&i| open(i)).collect();
        (!open.is_empty()).then(|| open[rng.gen_range(0..open.len())])
    }
}

/// What an offer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    Added,
    Replaced(usize),
    Dropped,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_sentence_is_in_the_sample_equally_often_whatever_its_place_in_the_stream() {
        // 40 sentences offered to a reservoir of 10, 20,000 times: each should be in it with
        // probability 1/4, the first ones (which enter surely and are then evicted) as the last.
        let (n, k, runs) = (40usize, 10usize, 20_000u32);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut counts = vec![0u32; n];
        for _ in 0..runs {
            let mut r = Reservoir::new(k);
            for i in 0..n {
                if let Some(j) = r.admit(&mut rng) {
                    r.put(j, i, |_| false);
                }
            }
            assert_eq!(r.slots().len(), k);
            assert_eq!(r.seen(), n as u64);
            for &i in r.slots() {
                counts[i] += 1;
            }
        }
        // Binomial(20000, 1/4): sd 61; 5 sd either way.
        let expected = f64::from(runs) * k as f64 / n as f64;
        for (i, &c) in counts.iter().enumerate() {
            assert!((f64::from(c) - expected).abs() < 5.0 * 61.3, "sentence {i}: {c} times, expected {expected}");
        }
    }

    #[test]
    fn a_leased_sentence_keeps_its_place_and_draws_are_uniform_over_the_open_ones() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut r = Reservoir::new(3);
        let mut offer = |r: &mut Reservoir, i: usize, keep: &dyn Fn(usize) -> bool| match r.admit(&mut rng) {
            Some(j) => r.put(j, i, keep),
            None => Offered::Dropped,
        };
        for i in 0..3 {
            assert_eq!(offer(&mut r, i, &|_| false), Offered::Added);
        }
        // Every later offer that lands on the slot of 0 is dropped while 0 is kept.
        for i in 3..200 {
            if let Offered::Replaced(old) = offer(&mut r, i, &|s| s == 0) {
                assert_ne!(old, 0);
            }
        }
        assert!(r.slots().contains(&0), "{:?}", r.slots());
        let mut drawn = std::collections::HashMap::new();
        for _ in 0..3000 {
            *drawn.entry(r.draw(&mut rng, |i| i != 0).unwrap()).or_insert(0u32) += 1;
        }
        assert!(!drawn.contains_key(&0));
        assert_eq!(drawn.len(), 2, "{drawn:?}");
        assert!(drawn.values().all(|&c| (1300..1700).contains(&c)), "{drawn:?}");
        assert_eq!(r.draw(&mut rng, |_| false), None);
    }
}
