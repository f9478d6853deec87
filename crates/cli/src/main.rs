//! The `routeval` command-line tool: one binary for every routeval evaluation. The CLI itself
//! is the `routeval_cli` library (`src/lib.rs`), so that `cargo xtask docs` documents the same
//! argument parser this binary runs.

use std::process::ExitCode;

/// mimalloc: the JSON-heavy subcommands (rag, filter, route, crb) spend a large share of their
/// time in malloc/free; measured in benches/README.md. The `override` feature also serves C's
/// `malloc`/`free` (the onig regex library allocates per search while `crb` counts tokens:
/// 6 % less CPU at 20,000 rows, benches/crb.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    routeval_cli::main()
}
