//! Classifiers and their learners, over hashed features and dense class indices; this layer
//! knows nothing of transition systems or sentences.
//!
//! - [`scorer`]: the scoring interface every weight store implements;
//! - [`perceptron`]: the averaged perceptron and the read-only weights it produces;
//! - [`logistic`]: multinomial logistic regression trained with AdaGrad-RDA (L1);
//! - [`confidence`]: probabilities from scores, temperature fitting, isotonic calibration,
//!   reliability and ECE.

pub mod confidence;
pub mod logistic;
pub mod perceptron;
pub mod scorer;
