//! Dependency labels: the [`Label`] newtype and the [`LabelSet`] inventory that maps label
//! strings (full DEPREL, subtypes included) to dense indices.
//!
//! Index 0 is always the root label: the only label an arc from node 0 may carry, and one that
//! no other arc may carry.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A dependency label, as an index into a [`LabelSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Label(u16);

impl Label {
    /// The label of the arc from the artificial root.
    pub const ROOT: Label = Label(0);

    /// The dense index of this label.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The label with dense index `i`.
    pub fn from_index(i: usize) -> Label {
        Label(i as u16)
    }
}

/// The label inventory of a model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LabelSet {
    names: Vec<String>,
    #[serde(skip)]
    lookup: HashMap<String, Label>,
}

/// The universal part of a dependency relation: `nmod:poss` → `nmod`.
pub fn universal(deprel: &str) -> &str {
    deprel.split_once(':').map_or(deprel, |(u, _)| u)
}

/// The 37 universal dependency relations of UD v2.
pub const UD_RELATIONS: [&str; 37] = [
    "acl",
    "advcl",
    "advmod",
    "amod",
    "appos",
    "aux",
    "case",
    "cc",
    "ccomp",
    "clf",
    "compound",
    "conj",
    "cop",
    "csubj",
    "dep",
    "det",
    "discourse",
    "dislocated",
    "expl",
    "fixed",
    "flat",
    "goeswith",
    "iobj",
    "list",
    "mark",
    "nmod",
    "nsubj",
    "nummod",
    "obj",
    "obl",
    "orphan",
    "parataxis",
    "punct",
    "reparandum",
    "root",
    "vocative",
    "xcomp",
];

/// Whether `name` is a UD relation: a universal one, or one with a subtype of lowercase letters
/// (`obl:tmod`, `nmod:poss`), as UD writes language-specific subtypes. What a model has not
/// seen may still be right; a typo (`nsubjj`, `Obj`) is not one.
pub fn is_ud_relation(name: &str) -> bool {
    let (base, subtype) = match name.split_once(':') {
        Some((b, s)) => (b, Some(s)),
        None => (name, None),
    };
    UD_RELATIONS.contains(&base) && subtype.is_none_or(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase()))
}

/// Labels beyond this many would not fit the transition index space.
pub const MAX_LABELS: usize = u16::MAX as usize / 2;

impl LabelSet {
    /// A set holding only `root_name` (at index 0).
    pub fn new(root_name: &str) -> LabelSet {
        let mut set = LabelSet { names: Vec::new(), lookup: HashMap::new() };
        set.intern(root_name);
        set
    }

    /// Returns the label for `name`, adding it if new.
    pub fn intern(&mut self, name: &str) -> Label {
        if let Some(&l) = self.lookup.get(name) {
            return l;
        }
        let l = Label(self.names.len() as u16);
        self.names.push(name.to_string());
        self.lookup.insert(name.to_string(), l);
        l
    }

    /// The label for `name`, if known.
    pub fn get(&self, name: &str) -> Option<Label> {
        self.lookup.get(name).copied()
    }

    /// The string of a label.
    pub fn name(&self, l: Label) -> &str {
        &self.names[l.index()]
    }

    /// Number of labels, root included.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Every label's name, by index.
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.names.iter().map(String::as_str)
    }

    /// Never true: the root label is always present.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Rebuilds the name index after deserialisation.
    pub fn rebuild_index(&mut self) {
        self.lookup = self.names.iter().enumerate().map(|(i, n)| (n.clone(), Label(i as u16))).collect();
    }
}
