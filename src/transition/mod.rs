//! Transition systems: configurations, legal transitions and their effect, the oracles that
//! say which transitions lead to a gold tree, and the completion of a terminal configuration
//! into one tree. Everything above this layer (parser, features, training, confidence, the
//! model file) goes through [`TransitionSystem`], mostly as the runtime choice [`System`]
//! that a model file records. This layer knows sentences only as word counts and gold trees;
//! it knows nothing of features, weights or models.
//!
//! - [`config`]: the stack-buffer configuration both systems share, [`Transition`], [`Legal`];
//! - [`gold`]: gold trees, full or partial, as the oracles read them;
//! - [`arc_eager`]: the arc-eager system (Nivre 2003) and its oracles (Goldberg & Nivre 2012);
//! - [`arc_hybrid`]: the arc-hybrid system (Kuhlmann et al. 2011) and its oracles (Goldberg &
//!   Nivre 2013);
//! - [`projective`]: pseudo-projective lifting of training trees and lowering of parses
//!   (Nivre & Nilsson 2005), which lets both systems learn from and produce non-projective
//!   trees.
//!
//! [`System`] dispatches with a `match` on a value that never changes during a parse: the
//! branch is predicted perfectly, and both systems are inlined into the parser's loop.
//!
//! # Measured
//!
//! Dev UAS / LAS over all words, 15 epochs, gold tags, seed 1, and the recall of the gold
//! non-projective arcs (head right / head and label right), from `scripts/compare-systems.sh`
//! (pseudo-projective `none`, `head` and `head+path` with every encoded label kept, i.e.
//! `LIFT_MIN=1`; `head, ≥10` is the default, `--lift-min-count 10`):
//!
//! | treebank | system | pseudo-projective | UAS | LAS | non-proj. recall |
//! |---|---|---|---:|---:|---:|
//! | en_ewt | arc-eager | none | 89.44 | 87.93 | 8.3 / 8.3 |
//! | en_ewt | arc-eager | head | 89.39 | 87.94 | 22.2 / 22.2 |
//! | en_ewt | arc-eager | head+path | 89.20 | 87.73 | 16.7 / 16.7 |
//! | en_ewt | arc-eager | head, ≥10 | 89.28 | 87.72 | 19.4 / 19.4 |
//! | en_ewt | arc-hybrid | none | 88.66 | 87.00 | 5.6 / 5.6 |
//! | en_ewt | arc-hybrid | head | 88.28 | 86.62 | 8.3 / 8.3 |
//! | en_ewt | arc-hybrid | head+path | 88.83 | 87.14 | 11.1 / 11.1 |
//! | en_ewt | arc-hybrid | head, ≥10 | 88.64 | 86.96 | 8.3 / 8.3 |
//! | el_gdt | arc-eager | none | 87.90 | 86.09 | 2.8 / 2.8 |
//! | el_gdt | arc-eager | head | 88.35 | 86.59 | 30.6 / 25.0 |
//! | el_gdt | arc-eager | head+path | 88.36 | 86.47 | 27.8 / 22.2 |
//! | el_gdt | arc-eager | head, ≥10 | 88.11 | 86.41 | 27.8 / 25.0 |
//! | el_gdt | arc-hybrid | none | 87.36 | 85.15 | 2.8 / 0.0 |
//! | el_gdt | arc-hybrid | head | 87.70 | 85.46 | 27.8 / 16.7 |
//! | el_gdt | arc-hybrid | head+path | 88.07 | 86.00 | 16.7 / 8.3 |
//! | el_gdt | arc-hybrid | head, ≥10 | 87.96 | 85.85 | 30.6 / 25.0 |
//! | hu_szeged | arc-eager | none | 79.73 | 76.05 | 7.5 / 7.5 |
//! | hu_szeged | arc-eager | head | 81.10 | 77.59 | 30.2 / 23.6 |
//! | hu_szeged | arc-eager | head+path | 80.81 | 76.99 | 38.2 / 29.2 |
//! | hu_szeged | arc-eager | head, ≥10 | 81.22 | 77.63 | 29.2 / 24.1 |
//! | hu_szeged | arc-hybrid | none | 79.49 | 75.55 | 7.1 / 5.2 |
//! | hu_szeged | arc-hybrid | head | 80.22 | 76.36 | 28.3 / 23.6 |
//! | hu_szeged | arc-hybrid | head+path | 80.59 | 76.59 | 29.2 / 22.6 |
//! | hu_szeged | arc-hybrid | head, ≥10 | 80.42 | 76.77 | 27.4 / 20.8 |
//!
//! Dev non-projective arcs: en_ewt 36, el_gdt 36, hu_szeged 212. The scheme was chosen on
//! arc-eager over three seeds (`SEEDS="1 2 3"`), mean dev LAS: hu_szeged none 75.86, Head
//! 77.50, Head+Path 77.36, Path 77.20; el_gdt none 86.08, Head 86.52, Head+Path 86.43, Path
//! 86.61. Head is best or within 0.1 of the best on both, and best on en_ewt; Head+Path,
//! although it restores more gold trees exactly (table in [`projective`]), makes more labels.
//! Arc-hybrid is 0.5 to 0.9 LAS below arc-eager with the same templates on every treebank.
//!
//! Whole-process `spoolparse parse`, en_ewt dev ×8 (201,176 words), one thread, AMD EPYC,
//! medians of 7 interleaved runs (`scripts/compare-speed.sh`), against the parser before this
//! trait existed on the same model: arc-eager 1.01×, arc-eager with the default
//! pseudo-projective model 0.95×, arc-hybrid 0.92×, arc-hybrid pseudo-projective 0.88×.

pub mod arc_eager;
pub mod arc_hybrid;
pub mod config;
pub mod gold;
pub mod projective;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::base::label::Label;
pub use arc_eager::ArcEager;
pub use arc_hybrid::ArcHybrid;
pub use config::{Configuration, Legal, Transition, NONE};
pub use gold::GoldTree;

/// A transition system over [`Configuration`]s. Both systems give every word one head, node 0
/// exactly one dependent (the root word, labelled [`Label::ROOT`]), and build only projective
/// trees.
pub trait TransitionSystem {
    /// The legal transitions of `c`; empty when `c` is terminal.
    fn legal(&self, c: &Configuration) -> Legal;

    /// Applies `t`, which must be legal (checked in debug builds).
    fn apply(&self, c: &mut Configuration, t: Transition);

    /// True when parsing is over: [`TransitionSystem::finish`] then gives the tree.
    fn is_terminal(&self, c: &Configuration) -> bool;

    /// The word that `t` gives a head in `c`, if it makes an arc.
    fn attached(&self, c: &Configuration, t: Transition) -> Option<u32>;

    /// The static oracle: the canonical transition for `c` on a path that builds the full,
    /// projective `gold`; `None` when `c` is terminal or `gold` is partial (which has no
    /// canonical path). Only meaningful on configurations of that path.
    fn static_oracle(&self, c: &Configuration, gold: &GoldTree) -> Option<Transition>;

    /// The dynamic oracle's cost of legal transition `t`: the annotated gold arcs reachable
    /// from `c` and not after `t` (a wrong annotated label on a right arc counting 1). Exact
    /// for gold trees that can be completed into a projective tree with one root word
    /// (see [`gold`]).
    fn cost(&self, c: &Configuration, gold: &GoldTree, t: Transition) -> u32;

    /// Completes a terminal configuration into one tree (see [`Configuration::complete`]):
    /// heads and labels per word, index 0 unused; returns how many words had to be attached.
    fn finish(&self, c: &Configuration, fallback: Label, heads: &mut Vec<u32>, labels: &mut Vec<Label>) -> usize {
        c.complete(fallback, heads, labels)
    }

    /// Fills `out` with every legal transition class of `c` (an inventory of `labels` labels)
    /// and its [`TransitionSystem::cost`], in class order: what a cost-sensitive learner needs.
    fn costs(&self, c: &Configuration, gold: &GoldTree, labels: usize, out: &mut Vec<(usize, u32)>) {
        out.clear();
        out.extend(self.legal(c).transitions(labels).map(|t| (t.index(), self.cost(c, gold, t))));
    }

    /// Fills `out` with the legal transition classes of `c` (an inventory of `labels` labels)
    /// that cost nothing: the dynamic oracle's set of correct transitions.
    fn zero_cost(&self, c: &Configuration, gold: &GoldTree, labels: usize, out: &mut Vec<usize>) {
        out.clear();
        out.extend(self.legal(c).transitions(labels).filter(|&t| self.cost(c, gold, t) == 0).map(Transition::index));
    }
}

/// The transition system of a model, chosen at training time and recorded in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum System {
    #[default]
    ArcEager,
    ArcHybrid,
}

impl System {
    /// Every system, for listings and tests.
    pub const ALL: [System; 2] = [System::ArcEager, System::ArcHybrid];

    /// The name used on the command line: `arc-eager`, `arc-hybrid`.
    pub fn name(self) -> &'static str {
        match self {
            System::ArcEager => "arc-eager",
            System::ArcHybrid => "arc-hybrid",
        }
    }

    /// The identifier a model file records: the system, its root restriction and the version
    /// of its transition semantics. A model is never run with another system.
    pub fn id(self) -> &'static str {
        match self {
            System::ArcEager => "arc-eager+single-root/1",
            System::ArcHybrid => "arc-hybrid+single-root/1",
        }
    }

    /// The system a model file's identifier names.
    pub fn from_id(id: &str) -> Option<System> {
        System::ALL.into_iter().find(|s| s.id() == id)
    }
}

impl fmt::Display for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for System {
    type Err = String;

    fn from_str(s: &str) -> Result<System, String> {
        System::ALL
            .into_iter()
            .find(|sys| sys.name() == s)
            .ok_or_else(|| format!("unknown transition system {s:?} (arc-eager or arc-hybrid)"))
    }
}

/// How a model's transitions encode trees: its transition system, and whether its labels
/// carry a pseudo-projective encoding that parses are lowered with. A model file records both
/// ([`Encoding::id`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Encoding {
    pub system: System,
    pub projective: Option<projective::Scheme>,
}

impl Encoding {
    /// The identifier in a model file: the system's ([`System::id`]), then
    /// `;pseudo-projective=SCHEME` when the labels carry the encoding (files written before
    /// pseudo-projective parsing have the system's alone).
    pub fn id(&self) -> String {
        match self.projective {
            None => self.system.id().to_string(),
            Some(scheme) => format!("{};pseudo-projective={}", self.system.id(), scheme.name()),
        }
    }

    /// The encoding an identifier names, `None` if this build does not know it.
    pub fn from_id(id: &str) -> Option<Encoding> {
        let (system, rest) = id.split_once(';').map_or((id, None), |(s, r)| (s, Some(r)));
        let projective = match rest {
            None => None,
            Some(r) => Some(r.strip_prefix("pseudo-projective=")?.parse().ok()?),
        };
        Some(Encoding { system: System::from_id(system)?, projective })
    }
}

/// Calls `$body` with `$sys` bound to the concrete system, so that each arm is inlined.
macro_rules! dispatch {
    ($self:expr, $sys:ident => $body:expr) => {
        match $self {
            System::ArcEager => {
                let $sys = ArcEager;
                $body
            }
            System::ArcHybrid => {
                let $sys = ArcHybrid;
                $body
            }
        }
    };
}

impl TransitionSystem for System {
    #[inline]
    fn legal(&self, c: &Configuration) -> Legal {
        dispatch!(self, s => s.legal(c))
    }

    #[inline]
    fn apply(&self, c: &mut Configuration, t: Transition) {
        dispatch!(self, s => s.apply(c, t))
    }

    #[inline]
    fn is_terminal(&self, c: &Configuration) -> bool {
        dispatch!(self, s => s.is_terminal(c))
    }

    #[inline]
    fn attached(&self, c: &Configuration, t: Transition) -> Option<u32> {
        dispatch!(self, s => s.attached(c, t))
    }

    fn static_oracle(&self, c: &Configuration, gold: &GoldTree) -> Option<Transition> {
        dispatch!(self, s => s.static_oracle(c, gold))
    }

    fn cost(&self, c: &Configuration, gold: &GoldTree, t: Transition) -> u32 {
        dispatch!(self, s => s.cost(c, gold, t))
    }

    fn finish(&self, c: &Configuration, fallback: Label, heads: &mut Vec<u32>, labels: &mut Vec<Label>) -> usize {
        dispatch!(self, s => s.finish(c, fallback, heads, labels))
    }
}
