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

/// Subtyped relations that UD documents (its guidelines and the languages of the shared
/// treebanks): a model that has not seen one may still be given it as a new class. Any other
/// subtype (`obl:tmodx`, `dislocated:foo`) is a typo unless the model knows it: a typo would
/// otherwise become a class of its own, trained on a handful of arcs.
pub const UD_SUBTYPES: [&str; 44] = [
    "acl:relcl",
    "advcl:relcl",
    "advmod:emph",
    "advmod:lmod",
    "advmod:tmod",
    "aux:pass",
    "cc:preconj",
    "compound:lvc",
    "compound:prt",
    "compound:redup",
    "compound:svc",
    "csubj:outer",
    "csubj:pass",
    "det:numgov",
    "det:nummod",
    "det:poss",
    "det:predet",
    "expl:impers",
    "expl:pass",
    "expl:pv",
    "flat:foreign",
    "flat:name",
    "iobj:agent",
    "mark:rel",
    "nmod:desc",
    "nmod:lmod",
    "nmod:npmod",
    "nmod:poss",
    "nmod:tmod",
    "nmod:unmarked",
    "nsubj:outer",
    "nsubj:pass",
    "nummod:gov",
    "obj:agent",
    "obj:lvc",
    "obl:agent",
    "obl:arg",
    "obl:lmod",
    "obl:npmod",
    "obl:tmod",
    "obl:unmarked",
    "parataxis:insert",
    "xcomp:pred",
    "xcomp:ds",
];

/// Close labels offered in [`new_label_problem`]'s message.
const CLOSE_LABELS: usize = 5;

/// Why `name`, a DEPREL that is not in a model's inventory `known` (plain labels), must not
/// become a new class: `None` when it may (a universal relation, or a subtype UD documents,
/// [`UD_SUBTYPES`]); otherwise a message naming it and the known labels closest to it (those
/// of its universal relation first, by edit distance).
pub fn new_label_problem<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let subtype = name.split_once(':').map(|(_, s)| s);
    let documented = match subtype {
        None => UD_RELATIONS.contains(&name),
        Some(_) => UD_SUBTYPES.contains(&name),
    };
    if documented {
        return None;
    }
    let mut close: Vec<&str> = known
        .into_iter()
        .chain(UD_RELATIONS.iter().copied())
        .chain(UD_SUBTYPES.iter().copied())
        .filter(|k| !k.contains(['↑', '↓']))
        .collect();
    close.sort_unstable();
    close.dedup();
    let base = universal(name);
    close.sort_by_key(|k| (universal(k) != base, edit_distance(k, name)));
    close.truncate(CLOSE_LABELS);
    let what = if UD_RELATIONS.contains(&base) && subtype.is_some() {
        "a subtype that neither the serving model nor UD knows"
    } else {
        "neither a UD relation nor a label of the serving model"
    };
    Some(format!(
        "DEPREL {name} is {what} (a typo would become a new class); known labels close to it: {}",
        close.join(", ")
    ))
}

/// The Levenshtein distance between `a` and `b`, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
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
