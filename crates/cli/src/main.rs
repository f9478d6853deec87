//! The `routeval` command-line tool: one binary for every routeval evaluation.
//!
//! Each subcommand lives in its own module and returns a [`common::CmdResult`]; `main` turns
//! it into the exit status (see [`common`] for the conventions).

mod common;
mod filter;
mod route;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Evaluate LLM routers and retrievers: trec_eval-exact IR measures, RAG quality,
/// query-routed metrics, tier routing (CommonRouterBench) and guarded query routing (GQR-Bench).
#[derive(Debug, Parser)]
#[command(name = "routeval", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Query-routed metrics (flexeval's QueryRoutedMetric): per-route metrics selected by
    /// `where` queries on extra_info.
    Route(route::RouteArgs),
    /// Print the JSONL lines matching a `where` query (or count them).
    Filter(filter::FilterArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: common::CmdResult = match cli.command {
        Command::Route(args) => route::run(args),
        Command::Filter(args) => filter::run(args),
    };
    common::finish(result)
}
