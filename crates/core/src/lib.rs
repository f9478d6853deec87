//! # routeval-core
//!
//! The types every routeval crate shares, and nothing else: no IO, no metrics.
//!
//! * [`error`]: [`Error`] and [`Location`], a typed error that names the input (file or
//!   `<stdin>`) and the 1-based line where a problem was found, so every front end can print
//!   one line `FILE:LINE: problem`.
//! * [`accum`]: the [`Accumulator`] trait that every aggregate in the workspace implements,
//!   so partial results computed on shards (threads with rayon, or machines) merge into the
//!   result of one pass. Counts merge exactly; float sums merge within 1e-12 relative.
//! * [`gate`]: quality gates (`--fail-under METRIC=VALUE`) checked against any report that
//!   names its metrics ([`gate::NamedMetrics`]).
//! * [`fixtures`]: the `$ROUTEVAL_SHARED` rule for tests that read shared data.
//! * [`py`]: CPython text forms (e.g. `repr(float)`) that several references bake into their
//!   outputs, defined once.
//! * [`labels`]: the label vocabularies shared across benchmarks: CommonRouterBench capability
//!   [`Tier`]s and GQR-Bench [`Domain`]s with their integer labels.
//! * [`contain`]: a third-party library call whose panic becomes an error message.
//! * [`progress`]: the [`Progress`] trait through which long library operations report how
//!   far they got (front ends draw it; libraries never touch a terminal).
//!
//! **Architecture invariant:** this crate does no IO and depends on no other routeval crate.

pub mod accum;
pub mod contain;
pub mod error;
pub mod fixtures;
pub mod gate;
pub mod labels;
pub mod progress;
pub mod py;
mod py_nonprintable;
mod py_word;

pub use accum::{Accumulator, Count, Mean, Sum};
pub use error::{Error, Location, Result, printable, printable_bytes};
pub use labels::{Domain, Tier};
pub use progress::{NoProgress, Progress, SharedProgress};
