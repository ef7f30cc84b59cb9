//! The lowest layer: small utilities every other layer may use, importing no other module of
//! the crate.
//!
//! - [`hash`]: the 64-bit hashing of features and strings;
//! - [`io`]: opening paths (`-` for stdin/stdout, `.zst` for zstd streams), durable writes;
//! - [`label`]: the dependency-label inventory and the [`label::Label`] newtype;
//! - [`logging`]: log lines on stderr (journald or plain, with levels).

pub mod hash;
pub mod io;
pub mod label;
pub mod logging;
