//! # routeval-bench-data
//!
//! Pinned benchmark data for routeval (IO layer).
//!
//! Will own: the CommonRouterBench question bank (streamed JSONL, `manifest.json`, row
//! validation, trajectories, Python-`random`-compatible stratified sampling), the GQR-Bench
//! dataset registry, Hugging Face hub downloader (pinned revisions, blake3-checked, resumable,
//! atomic cache writes), source readers (CSV, JSON/JSONL, Parquet) and the exact GQR split
//! procedures. This is one of the crates allowed to do IO (see `ARCHITECTURE.md`).
