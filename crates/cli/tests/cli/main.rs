//! The CLI's end-to-end tests, one test binary (each file was its own binary: 36 link steps
//! of the whole dependency graph in every cold build). `reports` and `text_tables` stay separate
//! binaries: their insta snapshot names carry their module path.

// The synthetic GQR-Bench mirror shared with the xtask tests (data_cli, gqr_full).
#[path = "../../../../xtask/tests/support/mirror.rs"]
mod mirror;

mod bad_inputs;
mod baseline_cli;
mod child_cli;
mod ci_cli;
mod compare_cli;
mod compare_many;
mod completions_cli;
mod compressed_inputs;
mod console_blocks;
mod crb_cli;
mod crb_llm_mock;
mod data_cli;
mod dsl_cli;
mod edges_cli;
mod faces;
mod frontier_cli;
mod gates_cli;
mod gqr_cli;
mod gqr_full;
mod meanings;
mod numbers;
mod output_targets;
mod outputs;
mod peers;
mod polish_cli;
mod progress_cli;
mod rag_cli;
mod rows_cli;
mod tls_roots;
mod trec;
mod trec_matrix;
mod trec_release;
mod trec_ties;
