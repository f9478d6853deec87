//! # routeval-bench-data
//!
//! Pinned benchmark data for routeval (IO layer).
//!
//! * [`crb`]: the CommonRouterBench question bank: streamed JSONL rows with line numbers,
//!   `manifest.json`, row validation, trajectories, and the reference's stratified sampling
//!   (largest-remainder quotas + one-pass reservoirs) with [`pyrandom`], a bit-exact port of
//!   Python's `random` for integer seeds.
//!
//! Will also own the GQR-Bench dataset registry, the Hugging Face hub downloader and the GQR
//! split procedures. This is one of the crates allowed to do IO (see `ARCHITECTURE.md`); the
//! readers here take `BufRead`ers, so callers decide where bytes come from.

pub mod crb;
pub mod pyrandom;
