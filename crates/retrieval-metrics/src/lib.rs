//! # routeval-retrieval-metrics
//!
//! Retrieval and RAG metrics.
//!
//! * `trec`: TREC qrels/run readers and every measure of trec_eval 10.0-rc3's `all_trec` set,
//!   computed exactly as trec_eval computes them.
//! * `rag`: rag-quality-check 0.1.0's metrics (precision/recall@k, MRR, linear-gain nDCG, hit
//!   rate, groundedness, citation coverage, answer relevance/correctness).
//!
//! Readers take `std::io::Read`ers or bytes, never paths. Pure otherwise.

pub mod rag;
pub mod trec;
