//! # routeval
//!
//! A facade over the routeval crates, so that one dependency gives the whole toolkit and the
//! root examples (`cargo run --example NAME`) have one place to import from.
//!
//! Each re-exported crate owns one concern; see `ARCHITECTURE.md` for the layering.

pub use routeval_bench_data as bench_data;
pub use routeval_core as core;
pub use routeval_frontier as frontier;
pub use routeval_query_dsl as query_dsl;
pub use routeval_retrieval_metrics as retrieval_metrics;
pub use routeval_routing_scores as routing_scores;
pub use routeval_stats as stats;
pub use routeval_sweep as sweep;
pub use routeval_tier_cost as tier_cost;
