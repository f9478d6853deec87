//! The `routeval` command-line tool: one binary for every routeval evaluation. The CLI itself
//! is the `routeval_cli` library (`src/lib.rs`), so that `cargo xtask docs` documents the same
//! argument parser this binary runs.

use std::process::ExitCode;

/// mimalloc: the JSON-heavy subcommands (rag, filter, route, crb) spend a large share of their
/// time in malloc/free; measured in benches/README.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    routeval_cli::main()
}
