//! Applying a model: greedy parsing of one sentence, tagging and parsing as a model file says,
//! streaming multi-threaded parsing of files, and in-memory speed measurement. Nothing here
//! trains.
//!
//! - [`parser`]: greedy parsing of sentences with a model;
//! - [`annotate`]: tagging and parsing of one sentence, as a model file says;
//! - [`confidence`]: the whole pipeline's arc confidence of a parsed sentence;
//! - [`constrained`]: what arcs a parse must hold, for re-parsing around corrections;
//! - [`fit`]: whether a file's tags and forms are what the model was trained on, and whether
//!   to retag it;
//! - [`given`]: what becomes of the values an input gives (kept, or kept in MISC where
//!   replaced; DEPS beside a parsed tree);
//! - [`precision`]: the sentence threshold of a run, from a minimum confidence or precision;
//! - [`raw`]: raw text into sentences, through the model's tokenizer;
//! - [`pipeline`]: streaming, multi-threaded, order-preserving parsing of files;
//! - [`files`]: parsing files into files, as `spoolparse parse` does (model opening, outputs
//!   and how they get their names);
//! - [`mod@bench`]: in-memory parse-speed measurement.

pub mod annotate;
pub mod bench;
pub mod confidence;
pub mod constrained;
pub mod files;
pub mod fit;
pub mod given;
pub mod parser;
pub mod pipeline;
pub mod precision;
pub mod raw;
