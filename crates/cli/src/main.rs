//! The `routeval` command-line tool.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Evaluate LLM routers and retrievers.
#[derive(Debug, Parser)]
#[command(name = "routeval", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {}
}
