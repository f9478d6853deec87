//! The `routeval` command-line tool as a library: the binary (`src/main.rs`) calls [`main`];
//! `cargo xtask docs` and the tests read [`command`] (the argument parser the binary runs)
//! and [`reference`] (the generated CLI reference).
//!
//! Each subcommand lives in its own private module and returns a `common::CmdResult`; `main`
//! turns it into the exit status (see `common` for the conventions).

mod ci;
mod common;
mod compare;
mod crb;
mod data;
mod filter;
mod frontier;
mod gate;
mod gqr;
mod numarg;
mod output;
mod progress;
mod rag;
mod report;
mod route;
mod trec;

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// The text of `routeval rag --help` (argparse's layout), for the generated CLI reference
/// (`cargo xtask docs`).
pub fn rag_help_text() -> String {
    rag::help_text()
}

/// Evaluate LLM routers and retrievers: trec_eval-exact IR measures, RAG quality,
/// query-routed metrics, tier routing (CommonRouterBench) and guarded query routing (GQR-Bench).
#[derive(Debug, Parser)]
#[command(name = "routeval", version, propagate_version = true, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Evaluate a TREC run against qrels exactly as trec_eval 10.0-rc3 (`routeval trec --help`).
    #[command(long_about = trec::LONG_ABOUT)]
    Trec(trec::TrecArgs),
    /// Compare runs with a baseline: paired tests, corrected p-values, CIs (`compare --help`).
    #[command(long_about = compare::LONG_ABOUT)]
    Compare(compare::CompareArgs),
    /// RAG quality as rag-quality-check 0.1.0 measures it, bit for bit (`routeval rag -h`).
    Rag(rag::RagCmd),
    /// Query-routed metrics (flexeval's QueryRoutedMetric): per-route metrics selected by
    /// `where` queries on extra_info.
    Route(route::RouteArgs),
    /// Print the JSONL lines matching a `where` query (or count them).
    Filter(filter::FilterArgs),
    /// CommonRouterBench tier routing: `crb eval` (scores_v2 and friends), `crb metrics`.
    Crb(crb::CrbArgs),
    /// GQR-Bench (guarded query routing): export splits, score a router (GQR / GQR-unseen).
    Gqr(gqr::GqrArgs),
    /// Fetch, check and list routeval's pinned data (GQR-Bench, tokenizers, the public
    /// CommonRouterBench bank) in the cache.
    Data(data::DataArgs),
    /// Cost-quality frontiers: RouterBench NDCH/AIQ and Pareto sets, or RouteLLM AUC/APGR/CPT
    /// (`--strong-share`).
    Frontier(frontier::FrontierArgs),
    /// Print a shell completion script to stdout, e.g. `source <(routeval completions bash)`.
    Completions(CompletionsArgs),
}

/// Arguments of `routeval completions`.
#[derive(Debug, clap::Args)]
struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// The argument parser of the `routeval` binary (clap's `Command` built from the derive), as
/// `cargo xtask docs` and `routeval completions` read it.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Print the completion script for `shell` (clap_complete) to stdout. The script is built in
/// memory first (clap_complete panics on a failed write), then written as every other
/// subcommand writes stdout.
fn completions(args: CompletionsArgs) -> common::CmdResult {
    let mut cmd = command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "routeval", &mut script);
    output::write_stdout(&script)?;
    Ok(common::EXIT_OK)
}

/// Run the `routeval` command line (`std::env::args_os`): parse, run the subcommand, and
/// return its exit status (0 ok, 2 bad input or usage, 3 a quality gate failed; `rag` keeps
/// 1 for input errors).
pub fn main() -> ExitCode {
    routeval_io::signals::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result: common::CmdResult = match cli.command {
        Command::Trec(args) => trec::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Rag(args) => rag::run(args),
        Command::Route(args) => route::run(args),
        Command::Filter(args) => filter::run(args),
        Command::Crb(args) => crb::run(args),
        Command::Gqr(args) => gqr::run(args),
        Command::Data(args) => data::run(args),
        Command::Frontier(args) => frontier::run(args),
        Command::Completions(args) => completions(args),
    };
    common::finish(result)
}

/// Report a command-line error as the conventions ask: help and version go to stdout (exit 0);
/// anything else is one stderr line (clap's first line, which names the problem) and exit 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                common::EXIT_BAD_INPUT
            } else {
                common::EXIT_OK
            },
        );
    }
    // One line: clap's message up to its usage block, with continuation lines (e.g. the
    // names of missing required arguments) joined on, and clap's tips ("a similar argument
    // exists: '--k'") after a semicolon.
    let rendered = e.render().to_string();
    let mut parts: Vec<&str> = Vec::new();
    let mut tips: Vec<&str> = Vec::new();
    for line in rendered.lines() {
        let t = line.trim();
        if t.starts_with("Usage:") || t.starts_with("For more information") {
            break;
        }
        if t.starts_with("tip:") {
            tips.push(t);
        } else if !t.is_empty() {
            parts.push(t);
        }
    }
    let mut first = if parts.is_empty() {
        "error: invalid command line".to_string()
    } else {
        parts.join(" ")
    };
    for tip in tips {
        first.push_str("; ");
        first.push_str(tip);
    }
    eprintln!("{first} (see --help)");
    ExitCode::from(common::EXIT_BAD_INPUT)
}
