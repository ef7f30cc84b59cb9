//! The configuration both transition systems share (a stack, a buffer and the arcs built so
//! far), the [`Transition`] vocabulary and the [`Legal`] set through which parsers and oracles
//! see a system's legality. Node 0 is the artificial root: it starts on the stack and is never
//! popped. This module changes configurations only through primitives (`attach`,
//! pop, push) that the systems compose; it never decides what is legal.

use crate::base::label::Label;

/// Marks "no node" in per-node arrays.
pub const NONE: u32 = u32::MAX;

/// A transition of a stack-buffer system. Each system gives the variants their meaning and
/// says which are legal: arc-eager uses all four, arc-hybrid never REDUCE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transition {
    /// Push the buffer front onto the stack.
    Shift,
    /// Pop the stack top, which must already have a head (arc-eager only).
    Reduce,
    /// Attach the stack top to the buffer front with a label and pop it.
    LeftArc(Label),
    /// Attach a word to the node on its left with a label: in arc-eager the buffer front to
    /// the stack top (then pushed), in arc-hybrid the stack top to the node below it (then
    /// popped). With [`Label::ROOT`], the head is node 0.
    RightArc(Label),
}

impl Transition {
    /// Dense class index: 0 SHIFT, 1 REDUCE, then LEFT-ARC/RIGHT-ARC interleaved per label.
    #[inline]
    pub fn index(self) -> usize {
        match self {
            Transition::Shift => 0,
            Transition::Reduce => 1,
            Transition::LeftArc(l) => 2 + 2 * l.index(),
            Transition::RightArc(l) => 3 + 2 * l.index(),
        }
    }

    /// Inverse of [`Transition::index`].
    #[inline]
    pub fn from_index(i: usize) -> Transition {
        match i {
            0 => Transition::Shift,
            1 => Transition::Reduce,
            _ if i.is_multiple_of(2) => Transition::LeftArc(Label::from_index((i - 2) / 2)),
            _ => Transition::RightArc(Label::from_index((i - 3) / 2)),
        }
    }

    /// Number of classes for an inventory of `labels` labels (root included).
    pub fn count(labels: usize) -> usize {
        2 + 2 * labels
    }

    /// Position in score order, for an inventory of `labels` labels: SHIFT, RIGHT-ARC per
    /// label (root first), REDUCE, LEFT-ARC per label. Model files store weights in this order
    /// because the legal transitions of a configuration are then a prefix of it (see
    /// [`Legal::score_prefix`]) and the weights of the others need not be read.
    #[inline]
    pub fn score_position(self, labels: usize) -> usize {
        match self {
            Transition::Shift => 0,
            Transition::RightArc(l) => 1 + l.index(),
            Transition::Reduce => 1 + labels,
            Transition::LeftArc(l) => 2 + labels + l.index(),
        }
    }

    /// Inverse of [`Transition::score_position`].
    #[inline]
    pub fn from_score_position(pos: usize, labels: usize) -> Transition {
        match pos {
            0 => Transition::Shift,
            _ if pos <= labels => Transition::RightArc(Label::from_index(pos - 1)),
            _ if pos == labels + 1 => Transition::Reduce,
            _ => Transition::LeftArc(Label::from_index(pos - labels - 2)),
        }
    }
}

/// Which transitions are legal in a configuration, in a form cheap to test per class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Legal {
    pub shift: bool,
    pub reduce: bool,
    /// LEFT-ARC with any non-root label.
    pub left: bool,
    /// RIGHT-ARC with any non-root label (a word takes a word as dependent).
    pub right: bool,
    /// RIGHT-ARC_root (node 0 takes its one dependent).
    pub right_root: bool,
}

impl Legal {
    /// Nothing legal: a terminal configuration.
    pub const EMPTY: Legal = Legal { shift: false, reduce: false, left: false, right: false, right_root: false };

    /// Whether transition class `i` is legal.
    #[inline]
    pub fn allows_index(&self, i: usize) -> bool {
        match i {
            0 => self.shift,
            1 => self.reduce,
            2 => false,
            3 => self.right_root,
            _ if i.is_multiple_of(2) => self.left,
            _ => self.right,
        }
    }

    /// Whether `t` is legal.
    pub fn allows(&self, t: Transition) -> bool {
        self.allows_index(t.index())
    }

    /// Length of the shortest prefix of score order (see [`Transition::score_position`]) that
    /// holds every legal transition: up to RIGHT-ARC_root, the RIGHT-ARCs or REDUCE when
    /// LEFT-ARC is illegal (in arc-eager when the stack top has a head or is node 0, in
    /// arc-hybrid once the buffer is empty), everything otherwise.
    #[inline]
    pub fn score_prefix(&self, labels: usize) -> usize {
        if self.left {
            Transition::count(labels)
        } else if self.reduce {
            2 + labels
        } else if self.right {
            1 + labels
        } else if self.right_root {
            2
        } else {
            usize::from(self.shift)
        }
    }

    /// True if no transition is legal (terminal configuration).
    pub fn is_empty(&self) -> bool {
        !(self.shift || self.reduce || self.left || self.right || self.right_root)
    }

    /// Every legal transition, for an inventory of `labels` labels.
    pub fn transitions(&self, labels: usize) -> impl Iterator<Item = Transition> + '_ {
        (0..Transition::count(labels)).filter(|&i| self.allows_index(i)).map(Transition::from_index)
    }
}

/// Per-node dependents on one side, as the feature templates need them.
#[derive(Debug, Clone, Copy)]
pub struct Side {
    /// Outermost dependent so far (leftmost on the left side, rightmost on the right).
    pub outer: u32,
    /// The one before it.
    pub second: u32,
    /// Number of dependents (valency).
    pub count: u16,
    /// Bit set of the labels of the dependents (labels folded modulo 128).
    pub labels: u128,
}

impl Side {
    const EMPTY: Side = Side { outer: NONE, second: NONE, count: 0, labels: 0 };

    fn add(&mut self, dep: u32, label: Label) {
        self.second = self.outer;
        self.outer = dep;
        self.count = self.count.saturating_add(1);
        self.labels |= 1u128 << (label.index() % 128);
    }
}

/// A parser configuration over a sentence of `n` words (nodes `1..=n`, plus root 0): a stack,
/// a buffer `front..=n` and the arcs so far, with the per-node summaries features read. Its
/// changes are the primitives systems build transitions from; legality is theirs.
#[derive(Debug, Clone)]
pub struct Configuration {
    n: u32,
    stack: Vec<u32>,
    /// The buffer is `front..=n`; empty when `front > n`.
    front: u32,
    heads: Vec<u32>,
    labels: Vec<Label>,
    on_stack: Vec<bool>,
    left: Vec<Side>,
    right: Vec<Side>,
    root_child: u32,
}

impl Configuration {
    /// The initial configuration for `n` words: stack `[0]`, buffer `1..=n`.
    pub fn new(n: usize) -> Configuration {
        let mut c = Configuration {
            n: 0,
            stack: Vec::new(),
            front: 1,
            heads: Vec::new(),
            labels: Vec::new(),
            on_stack: Vec::new(),
            left: Vec::new(),
            right: Vec::new(),
            root_child: NONE,
        };
        c.reset(n);
        c
    }

    /// Reinitialises for a sentence of `n` words, reusing the allocations.
    pub fn reset(&mut self, n: usize) {
        let nodes = n + 1;
        self.n = n as u32;
        self.stack.clear();
        self.stack.push(0);
        self.front = 1;
        self.heads.clear();
        self.heads.resize(nodes, NONE);
        self.labels.clear();
        self.labels.resize(nodes, Label::ROOT);
        self.on_stack.clear();
        self.on_stack.resize(nodes, false);
        self.on_stack[0] = true;
        self.left.clear();
        self.left.resize(nodes, Side::EMPTY);
        self.right.clear();
        self.right.resize(nodes, Side::EMPTY);
        self.root_child = NONE;
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// True for a sentence without words.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The `i`-th stack element from the top (0 = top), if any.
    #[inline]
    pub fn stack(&self, i: usize) -> Option<u32> {
        self.stack.len().checked_sub(i + 1).map(|j| self.stack[j])
    }

    /// The whole stack, bottom (node 0) first.
    pub fn stack_nodes(&self) -> &[u32] {
        &self.stack
    }

    /// The `i`-th buffer element (0 = front), if any.
    #[inline]
    pub fn buffer(&self, i: usize) -> Option<u32> {
        let k = self.front + i as u32;
        (k <= self.n).then_some(k)
    }

    /// True if `node` is still in the buffer.
    #[inline]
    pub fn in_buffer(&self, node: u32) -> bool {
        node >= self.front && node <= self.n
    }

    /// True if `node` is on the stack.
    #[inline]
    pub fn on_stack(&self, node: u32) -> bool {
        self.on_stack[node as usize]
    }

    /// Head of `node`, or [`NONE`].
    #[inline]
    pub fn head(&self, node: u32) -> u32 {
        self.heads[node as usize]
    }

    /// Label of the arc into `node` (meaningful only if it has a head).
    #[inline]
    pub fn label(&self, node: u32) -> Label {
        self.labels[node as usize]
    }

    /// Left dependents of `node`.
    #[inline]
    pub fn left(&self, node: u32) -> &Side {
        &self.left[node as usize]
    }

    /// Right dependents of `node`.
    #[inline]
    pub fn right(&self, node: u32) -> &Side {
        &self.right[node as usize]
    }

    /// The word attached to the root so far, or [`NONE`].
    pub fn root_child(&self) -> u32 {
        self.root_child
    }

    /// True once the buffer is empty.
    #[inline]
    pub fn buffer_is_empty(&self) -> bool {
        self.front > self.n
    }

    /// Adds the arc `head -> dep` with `label`.
    pub(super) fn attach(&mut self, head: u32, dep: u32, label: Label) {
        self.heads[dep as usize] = head;
        self.labels[dep as usize] = label;
        if head == 0 {
            self.root_child = dep;
        } else if dep < head {
            self.left[head as usize].add(dep, label);
        } else {
            self.right[head as usize].add(dep, label);
        }
    }

    /// Pops the stack top (node 0 is never popped by a legal transition).
    pub(super) fn pop(&mut self) -> u32 {
        let s = self.stack.pop().unwrap_or(0);
        self.on_stack[s as usize] = false;
        s
    }

    /// Moves the buffer front onto the stack.
    pub(super) fn push_front(&mut self) {
        let b = self.front;
        self.front += 1;
        self.stack.push(b);
        self.on_stack[b as usize] = true;
    }

    /// Completes a terminal configuration into one tree and returns heads and labels per word
    /// (index 0 unused), and how many words had to be attached here.
    ///
    /// Words without a head are all still on the stack (arc-eager leaves them there when the
    /// buffer empties; arc-hybrid ends with node 0 alone on the stack and attaches none here). Each is attached, with label
    /// `fallback`, to the stack element just below it: the RIGHT-ARC the parser did not make.
    /// Attaching to a lower stack element never closes a cycle, as a node's descendants are all
    /// pushed after it. Below node 0, the word becomes the root word if node 0 has none yet, and
    /// is attached to the root word otherwise.
    pub fn complete(&self, fallback: Label, heads: &mut Vec<u32>, labels: &mut Vec<Label>) -> usize {
        heads.clear();
        heads.extend_from_slice(&self.heads);
        labels.clear();
        labels.extend_from_slice(&self.labels);
        let mut root = self.root_child;
        let mut repaired = 0;
        for (i, &w) in self.stack.iter().enumerate().skip(1) {
            if heads[w as usize] != NONE {
                continue;
            }
            repaired += 1;
            let below = self.stack[i - 1];
            let (head, label) = match (below, root) {
                (0, NONE) => {
                    root = w;
                    (0, Label::ROOT)
                }
                (0, r) => (r, fallback),
                (b, _) => (b, fallback),
            };
            heads[w as usize] = head;
            labels[w as usize] = label;
        }
        // Words are only left headless on the stack; anything else would be a bug upstream,
        // but the output must still be a tree.
        for w in 1..=self.n as usize {
            if heads[w] == NONE {
                repaired += 1;
                if root == NONE {
                    root = w as u32;
                    heads[w] = 0;
                    labels[w] = Label::ROOT;
                } else {
                    heads[w] = root;
                    labels[w] = fallback;
                }
            }
        }
        repaired
    }
}
