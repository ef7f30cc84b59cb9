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

/// The CPUs this process may use (its affinity mask and cgroup quota, as `std` reads them; 1 if
/// unknown): how many threads `parse` and the daemon parse on unless told otherwise, so that a
/// user who sets nothing gets the machine.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}
