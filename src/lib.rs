//! spoolparse: fast greedy arc-eager dependency parsing of large corpora.
//!
//! The library holds the whole engine; the `spoolparse` binary only parses its command line
//! and calls into it. Modules, one concern each:
//!
//! - [`confidence`]: transition probabilities, temperature fitting, reliability and ECE;
//! - [`corpus`]: lossless, streaming CoNLL-U / CoNLL-X reading and writing, and the tree checks
//!   gold data must pass;
//! - [`io`]: opening paths (`-` for stdin/stdout, `.zst` for zstd streams);
//! - [`label`]: the dependency-label inventory and the [`label::Label`] newtype;
//! - [`logging`]: log lines on stderr (journald or plain, with levels);
//! - [`arc_eager`]: the arc-eager transition system (configurations, legality, transitions);
//! - [`oracle`]: the static oracle and the dynamic oracle's transition costs;
//! - [`features`]: Zhang & Nivre (2011) feature templates hashed to 64 bits;
//! - [`logistic`]: multinomial logistic regression trained with AdaGrad-RDA (L1);
//! - [`perceptron`]: the averaged perceptron and the read-only weights it produces;
//! - [`model`]: a trained model in memory, with its provenance;
//! - [`model_file`]: the immutable, memory-mapped model file and its weight table;
//! - [`scorer`]: the scoring interface both weight stores implement;
//! - [`parser`]: greedy parsing of sentences with a model;
//! - [`plot`]: SVG charts of calibration;
//! - [`pipeline`]: streaming, multi-threaded, order-preserving parsing of files;
//! - [`daemon`]: the long-running spool worker (claiming, outputs, signals, systemd, metrics);
//! - [`tagger`]: the part-of-speech tagger for tokenized text;
//! - [`annotate`]: tagging and parsing of one sentence, as a model file says;
//! - [`train`]: the training loops (static oracle, dynamic oracle with exploration);
//! - [`bench`]: in-memory parse-speed measurement;
//! - [`eval`]: UAS/LAS as the CoNLL 2018 shared task defines them.

pub mod annotate;
pub mod arc_eager;
pub mod bench;
pub mod confidence;
pub mod corpus;
pub mod daemon;
pub mod eval;
pub mod features;
pub mod hash;
pub mod io;
pub mod label;
pub mod logging;
pub mod logistic;
pub mod model;
pub mod model_file;
pub mod oracle;
pub mod parser;
pub mod perceptron;
pub mod pipeline;
pub mod plot;
pub mod registry;
pub mod retrain;
pub mod scorer;
pub mod tagger;
pub mod train;
