//! # routeval-bench-data
//!
//! Pinned benchmark data for routeval (IO layer).
//!
//! * [`nprandom`]: bit-exact numpy/pandas/scikit-learn/`datasets` random procedures.
//! * [`pyrandom`]: a bit-exact port of Python's `random` for integer seeds.
//! * [`gqr`]: GQR-Bench: the dataset registry, text helpers with Python semantics, the exact
//!   v1 split, the OOD sets, the v2 background class and GQR-unseen.
//! * [`crb`]: the CommonRouterBench question bank: streamed JSONL rows with line numbers,
//!   `manifest.json`, row validation, trajectories, and the reference's stratified sampling
//!   (largest-remainder quotas + one-pass reservoirs).
//! * [`cache`]: the one cache-directory rule (`ROUTEVAL_CACHE_DIR`, `GQR_CACHE_DIR`,
//!   `ROUTEVAL_TOKENIZERS`, `XDG_CACHE_HOME`, `~/.cache`), a pure function of the variables.
//! * [`build_data`]: what `routeval data` and `cargo xtask build-data` run: fetch GQR-Bench,
//!   the tokenizer files and the public CommonRouterBench bank into the cache; check; status.
//! * [`download`]: the downloader (pinned revisions, resumable, blake3-checked,
//!   atomic cache writes) and `--from DIR` mirrors.
//! * [`net`]: the network settings every HTTP client shares: timeouts with defaults and their
//!   flags, size caps, TLS roots (the platform's store, `SSL_CERT_FILE`, `SSL_CERT_DIR`).
//! * [`readers`]: source readers (CSV, JSON, JSONL, Parquet behind the default `parquet`
//!   feature) that turn bytes into rows.
//!
//! This is one of the crates allowed to do IO (see `ARCHITECTURE.md`); the procedures
//! themselves are pure functions of rows, and readers take `BufRead`ers or bytes.

pub mod build_data;
pub mod cache;
pub mod crb;
pub mod download;
pub mod gqr;
pub mod net;
pub mod nprandom;
pub mod pyrandom;
pub mod readers;
