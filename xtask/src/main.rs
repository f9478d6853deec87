//! routeval's build tasks, run as `cargo xtask ...` (alias in `.cargo/config.toml`).
//!
//! Keep this crate small: it is compiled on every `cargo xtask`.

use clap::{Parser, Subcommand};

/// routeval build tasks.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {}
}
