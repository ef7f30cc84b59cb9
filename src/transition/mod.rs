//! Transition systems: configurations, legal transitions and their effect, and the oracles
//! that say which transitions lead to a gold tree. This layer knows sentences only as word
//! counts and gold trees; it knows nothing of features, weights or models.
//!
//! - [`arc_eager`]: the arc-eager system;
//! - [`oracle`]: its static oracle and the dynamic oracle's transition costs.

pub mod arc_eager;
pub mod oracle;
