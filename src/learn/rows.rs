//! The sparse weight store every learner trains in: feature hash → a short row of per-class
//! cells, created on a feature's first update. Learners differ only in what a cell holds (a
//! weight and its averaging sum, AdaGrad accumulators, a mean and a variance), so they share
//! this store; it owns indexing and growth, never the arithmetic on cells.
//!
//! A row is a `Vec` searched linearly: a training update touches two classes (one for each
//! side of the margin) or a handful (the logistic gradient above its threshold), so most rows
//! hold a few of the 2 + 2·|labels| classes and a scan beats a per-row map.

use std::collections::HashMap;

use crate::base::hash::IdentityBuildHasher;

/// A cell of a row: knows its class.
pub trait Cell: Copy {
    /// The class this cell weighs.
    fn class(&self) -> usize;
}

/// Feature hash → row of cells.
#[derive(Debug, Clone)]
pub struct Rows<C> {
    index: HashMap<u64, u32, IdentityBuildHasher>,
    rows: Vec<Vec<C>>,
}

impl<C> Default for Rows<C> {
    fn default() -> Self {
        Rows { index: HashMap::default(), rows: Vec::new() }
    }
}

impl<C: Cell> Rows<C> {
    /// The row of feature `f`, if it was ever updated.
    #[inline]
    pub fn get(&self, f: u64) -> Option<&[C]> {
        self.index.get(&f).map(|&r| self.rows[r as usize].as_slice())
    }

    /// The cell of class `class` in `f`'s row, if it exists.
    #[inline]
    pub fn cell(&self, f: u64, class: usize) -> Option<&C> {
        self.get(f)?.iter().find(|c| c.class() == class)
    }

    /// The row of feature `f`, created empty on first use.
    #[inline]
    pub fn row_mut(&mut self, f: u64) -> &mut Vec<C> {
        let next = self.rows.len() as u32;
        let row = *self.index.entry(f).or_insert(next);
        if row == next {
            self.rows.push(Vec::with_capacity(2));
        }
        &mut self.rows[row as usize]
    }

    /// The cell of class `class` in `f`'s row, created by `new` on first use.
    #[inline]
    pub fn cell_mut(&mut self, f: u64, class: usize, new: impl FnOnce() -> C) -> &mut C {
        Self::cell_in(self.row_mut(f), class, new)
    }

    /// The cell of class `class` in `row` (from [`Rows::row_mut`]), created by `new` on first
    /// use: for updates of several classes of one feature, with one lookup of the feature.
    #[inline]
    pub fn cell_in(row: &mut Vec<C>, class: usize, new: impl FnOnce() -> C) -> &mut C {
        match row.iter().position(|c| c.class() == class) {
            Some(i) => &mut row[i],
            None => {
                row.push(new());
                let last = row.len() - 1;
                &mut row[last]
            }
        }
    }

    /// Every feature with its row.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u64, &[C])> + '_ {
        self.index.iter().map(|(&f, &r)| (f, self.rows[r as usize].as_slice()))
    }

    /// Cells held in all rows: the training memory that matters.
    pub fn cells(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }

    /// Features with a row.
    pub fn features(&self) -> usize {
        self.rows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct W(usize, f32);

    impl Cell for W {
        fn class(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn cells_are_created_once_per_feature_and_class() {
        let mut rows = Rows::<W>::default();
        rows.cell_mut(7, 3, || W(3, 0.0)).1 += 1.0;
        rows.cell_mut(7, 3, || W(3, 0.0)).1 += 1.0;
        rows.cell_mut(7, 1, || W(1, 0.0)).1 -= 1.0;
        rows.cell_mut(9, 3, || W(3, 0.0)).1 += 0.5;
        assert_eq!(rows.cell(7, 3), Some(&W(3, 2.0)));
        assert_eq!(rows.cell(7, 1), Some(&W(1, -1.0)));
        assert_eq!(rows.cell(9, 1), None);
        assert_eq!(rows.get(8), None);
        assert_eq!((rows.features(), rows.cells()), (2, 3));
    }
}
