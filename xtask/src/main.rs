//! routeval's build tasks, run as `cargo xtask ...` (alias in `.cargo/config.toml`).
//!
//! `cargo xtask build-data [gqr|tokenizers|crb|all] [--from DIR] [--check]` fetches or rebuilds
//! the pinned data into the cache, exactly as `routeval data fetch` / `routeval data check` do:
//! both front ends call `routeval_bench_data::build_data` (directories by
//! `routeval_bench_data::cache`). A build with missing sources exits non-zero unless
//! `--allow-missing`, after the line `built N of M sources; missing: ...`.
//!
//! `cargo xtask codegen [--check]` regenerates the Unicode 14 tables (`codegen.rs`).
//!
//! `cargo xtask docs [--check]` regenerates the CLI reference (`docs.rs`: `docs/cli/*.md`,
//! `docs/cli/man/*.1`, `docs/src/cli-reference.md`) from the binary's argument parser.
//!
//! `cargo test -p xtask tidy` runs the architecture checks (`tidy.rs`, test-only).
//!
//! Keep this crate small: it is compiled on every `cargo xtask`.

mod codegen;
mod docs;
mod reference;
#[cfg(test)]
mod tidy;

use clap::{Parser, Subcommand, ValueEnum};
use routeval_bench_data::build_data::{self, Target};
use routeval_bench_data::cache::CacheDirs;
use routeval_core::Progress;
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
    /// Fetch or rebuild pinned data into the cache (GQR-Bench splits, tokenizer files, the public
    /// CommonRouterBench bank); `--check` verifies instead. Same as `routeval data fetch|check`.
    BuildData(BuildData),
    /// Regenerate the Unicode 14 tables (Python `\w`, `str.isprintable()`, marks, casefolding)
    /// from `data/unicode/unicode14_tables.json`; `--check` only reports stale files.
    Codegen {
        /// Compare instead of writing; exit 1 when a generated file is stale.
        #[arg(long)]
        check: bool,
    },
    /// Regenerate the CLI reference (`docs/cli/*.md`, man pages in `docs/cli/man/`, the book's
    /// `docs/src/cli-reference.md`) from the `routeval` argument parser; `--check` only reports.
    Docs {
        /// Compare instead of writing; exit 1 when a generated file is stale.
        #[arg(long)]
        check: bool,
    },
}

/// Which data to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    /// GQR-Bench: v1 splits, OOD sets, v2 background, GQR-unseen (`<gqr cache>/build`).
    Gqr,
    /// The three tokenizer files (the cache's tokenizer directory).
    Tokenizers,
    /// The public CommonRouterBench bank (`<cache>/crb`).
    Crb,
    /// Everything (the default).
    All,
}

#[derive(Debug, clap::Args)]
struct BuildData {
    /// What to build (default: all).
    #[arg(value_enum, default_value = "all")]
    target: Which,
    /// Verify installed data against its manifests instead of building.
    #[arg(long)]
    check: bool,
    /// The sources, timeouts and `--allow-missing` (the same flags as `routeval data fetch`).
    #[command(flatten)]
    flags: routeval_bench_data::build_data::FetchFlags,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let args = match cli.command {
        Command::BuildData(args) => args,
        Command::Codegen { check } | Command::Docs { check } => {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap_or(std::path::Path::new("."));
            let (task, result) = if matches!(cli.command, Command::Docs { .. }) {
                ("docs", docs::run(root, check))
            } else {
                ("codegen", codegen::run(root, check))
            };
            return match result {
                Ok(changed) if changed.is_empty() => {
                    eprintln!("{task}: generated files are current");
                    ExitCode::SUCCESS
                }
                Ok(changed) => {
                    let verb = if check { "stale" } else { "wrote" };
                    for c in &changed {
                        eprintln!("{task}: {verb} {c}");
                    }
                    if check {
                        ExitCode::FAILURE
                    } else {
                        ExitCode::SUCCESS
                    }
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    };
    let dirs = match CacheDirs::from_process() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let targets = match args.target {
        Which::Gqr => vec![Target::Gqr],
        Which::Tokenizers => vec![Target::Tokenizers],
        Which::Crb => vec![Target::Crb],
        Which::All => Target::ALL.to_vec(),
    };
    if args.check {
        let mut ok = true;
        for c in build_data::check(&targets, &dirs) {
            let t = c.target.name();
            if !c.present {
                eprintln!("{t}: not installed ({})", c.location.display());
                ok &= args.target == Which::All;
                continue;
            }
            for line in c.lines() {
                eprintln!("{line}");
            }
            ok &= c.problems.is_empty();
        }
        return if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let bar = std::sync::Arc::new(routeval_io::progress::Bar::new());
    let opts = args.flags.options(
        std::env::var("HF_TOKEN").ok().filter(|s| !s.is_empty()),
        routeval_core::SharedProgress(bar.clone()),
    );
    let report = build_data::fetch(&targets, &dirs, &opts, &mut |r| {
        for line in r.lines() {
            bar.note(&line);
        }
    });
    drop(opts); // the bar is cleared before the summary
    drop(bar);
    for h in report.hints() {
        eprintln!("hint: {h}");
    }
    eprintln!("{}", report.summary_line());
    if report.complete() || args.flags.allow_missing {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
