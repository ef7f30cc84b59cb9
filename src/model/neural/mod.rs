//! A neural model as the model file holds it: its architecture ([`spec`]) and its weights
//! ([`weights`]), decoded and checked when the file is opened. What the weights compute lives
//! a layer up, in [`crate::neural`]; this module only stores and views.

pub mod spec;
pub mod weights;

pub use spec::{CharEncoder, Context, Item, Key, Spec};
pub use weights::{Net, NetError, NeuralModel, NeuralSections, Sections, NEUMETA, NEURAL};
