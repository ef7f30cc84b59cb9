//! spoolparse: fast greedy transition-based dependency parsing of large corpora.
//!
//! The library holds the whole engine; the `spoolparse` binary only parses its command line
//! and calls into it. Modules are grouped by layer, lowest first; a layer imports only the
//! layers above it in this list (`tests/layout.rs` checks it):
//!
//! 1. [`base`]: hashing, opening paths, the label inventory, logging;
//! 2. [`corpus`]: lossless, streaming CoNLL-U / CoNLL-X reading and writing, and the tree checks
//!    gold data must pass;
//! 3. [`transition`]: transition systems, their oracles; [`learn`]: the classifiers' learners
//!    and weights, and confidence (the two do not import each other);
//! 4. [`model`]: a trained model, its feature templates, the tagger, the memory-mapped model
//!    file and the directory of model files;
//! 5. [`neural`]: the accurate tier's neural model: its encoder and parser MLP, their
//!    parse-time kernels and their training;
//! 6. [`parse`]: parsing sentences and files with a model, and measuring its speed;
//! 7. [`train`]: training a model, and evaluation;
//! 8. [`retrain`]: retraining from annotations, with a gated promotion;
//! 9. [`daemon`]: the long-running spool worker;
//! 10. [`workbench`]: the correction workbench, a process of its own beside the daemon.

pub mod base;
pub mod corpus;
pub mod daemon;
pub mod learn;
pub mod model;
pub mod neural;
pub mod parse;
pub mod retrain;
pub mod train;
pub mod transition;
pub mod workbench;
