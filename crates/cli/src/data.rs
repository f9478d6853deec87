//! `routeval data`: get routeval's pinned data from the installed binary.
//!
//! * `routeval data fetch gqr|tokenizers|crb|all [--from DIR] [--hub-endpoint URL] [...]`:
//!   fetch or build into the cache; one line per source, then `built N of M sources; missing:
//!   ...`; exit 0 only when nothing is missing (or with `--allow-missing`).
//! * `routeval data check [TARGET]`: verify what is installed against its manifests.
//! * `routeval data status`: where each kind of data lives (and which setting chose it), what is
//!   present with its hashes, what is missing and why.
//!
//! The work is done by `routeval_bench_data::build_data`, which `cargo xtask build-data` also
//! calls; the cache directories come from `routeval_bench_data::cache` (environment read here).

use crate::common::{CmdResult, EXIT_BAD_INPUT, EXIT_OK, Failure, emit};
use routeval_bench_data::build_data::{self, BuildReport, Target, TargetReport};
use routeval_bench_data::cache::CacheDirs;
use std::path::PathBuf;

/// `routeval data`.
#[derive(Debug, clap::Args)]
pub(crate) struct DataArgs {
    #[command(subcommand)]
    command: DataCommand,
}

#[derive(Debug, clap::Subcommand)]
enum DataCommand {
    /// Fetch or build data into the cache (GQR-Bench splits, tokenizer files, the public
    /// CommonRouterBench bank).
    Fetch(FetchArgs),
    /// Verify installed data against its manifests (nothing is fetched).
    Check(CheckArgs),
    /// Show where each kind of data lives, what is present (with hashes) and what is missing.
    Status(StatusArgs),
}

/// Which data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Which {
    /// GQR-Bench: v1 splits, OOD sets, v2 background, GQR-unseen (22 source datasets).
    Gqr,
    /// The three tokenizer files of CommonRouterBench's native tier costs.
    Tokenizers,
    /// The public CommonRouterBench question bank and its manifest.
    Crb,
    /// Everything.
    All,
}

impl Which {
    /// The library targets.
    fn targets(self) -> Vec<Target> {
        match self {
            Which::Gqr => vec![Target::Gqr],
            Which::Tokenizers => vec![Target::Tokenizers],
            Which::Crb => vec![Target::Crb],
            Which::All => Target::ALL.to_vec(),
        }
    }
}

/// `routeval data fetch` (the same flags as `cargo xtask build-data`: one definition,
/// `routeval_bench_data::build_data::FetchFlags`).
#[derive(Debug, clap::Args)]
struct FetchArgs {
    /// What to fetch.
    #[arg(value_enum)]
    which: Which,
    #[command(flatten)]
    flags: build_data::FetchFlags,
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// What to check (default: all; data not installed at all is reported, not an error).
    #[arg(value_enum, default_value = "all")]
    which: Which,
}

#[derive(Debug, clap::Args)]
struct StatusArgs {
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write the output to PATH instead of stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
}

/// `routeval data fetch|check|status`: dispatch to the subcommand.
pub(crate) fn run(args: DataArgs) -> CmdResult {
    let dirs = CacheDirs::from_process().map_err(Failure::bad_input)?;
    match args.command {
        DataCommand::Fetch(a) => fetch(&a, &dirs),
        DataCommand::Check(a) => check(a.which, &dirs),
        DataCommand::Status(a) => status(&a, &dirs),
    }
}

/// Print one target's lines on stderr (above the bar).
fn print_target(r: &TargetReport) {
    for line in r.lines() {
        crate::progress::note(&line);
    }
}

/// Run a fetch and render it: per-source lines, one hint per failing host (the URL, what
/// happened, the flag or variable that fixes it), then the summary line. `Ok(EXIT_OK)` when
/// complete or `allow_missing`.
fn render_fetch(report: &BuildReport, allow_missing: bool) -> CmdResult {
    for h in report.hints() {
        eprintln!("hint: {h}");
    }
    let line = report.summary_line();
    if report.complete() || allow_missing {
        eprintln!("{line}");
        Ok(EXIT_OK)
    } else {
        Err(Failure {
            message: format!("{line} (use --allow-missing to accept a partial build)"),
            status: EXIT_BAD_INPUT,
        })
    }
}

fn fetch(a: &FetchArgs, dirs: &CacheDirs) -> CmdResult {
    if let Some(d) = &a.flags.from
        && !d.is_dir()
    {
        return Err(Failure::bad_input(format!(
            "--from {}: no such directory",
            d.display()
        )));
    }
    let opts = a.flags.options(
        std::env::var("HF_TOKEN").ok().filter(|s| !s.is_empty()),
        routeval_core::SharedProgress(std::sync::Arc::new(crate::progress::Bar::new())),
    );
    let report = build_data::fetch(&a.which.targets(), dirs, &opts, &mut print_target);
    drop(opts); // clears the bar before the summary
    render_fetch(&report, a.flags.allow_missing)
}

fn check(which: Which, dirs: &CacheDirs) -> CmdResult {
    let reports = build_data::check(&which.targets(), dirs);
    let mut bad = 0usize;
    let mut absent = Vec::new();
    for c in &reports {
        let t = c.target.name();
        if !c.present {
            eprintln!("{t}: not installed ({})", c.location.display());
            absent.push(t);
            continue;
        }
        for line in c.lines() {
            eprintln!("{line}");
        }
        bad += c.problems.len();
    }
    if bad > 0 {
        return Err(Failure::bad_input(format!(
            "data check: {bad} file(s) differ from their manifests"
        )));
    }
    // Asked for one target that is not there: that is a failed check too.
    if which != Which::All && !absent.is_empty() {
        return Err(Failure::bad_input(format!(
            "data check: {} is not installed (run `routeval data fetch {}`)",
            absent.join(", "),
            absent.join(" ")
        )));
    }
    eprintln!("data check: every installed file matches its manifest");
    Ok(EXIT_OK)
}

fn status(a: &StatusArgs, dirs: &CacheDirs) -> CmdResult {
    let entries = build_data::status(dirs);
    let out = if a.json {
        let v: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "data": e.target.name(),
                    "dir": e.dir.path.display().to_string(),
                    "dir_from": e.dir.origin.describe(),
                    "present": e.present.iter().map(|(p, n, h, r)| serde_json::json!({
                        "path": p.display().to_string(), "bytes": n, "blake3": h, "remark": r
                    })).collect::<Vec<_>>(),
                    "missing": e.missing.iter().map(|(n, why)| serde_json::json!({
                        "name": n, "why": why
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
        s.push('\n');
        s
    } else {
        let mut s = String::new();
        s.push_str(&format!(
            "cache root: {} (from {})\n",
            dirs.root.path.display(),
            dirs.root.origin.describe()
        ));
        for e in &entries {
            s.push_str(&format!(
                "\n{}: {} (from {})\n",
                e.target.name(),
                e.dir.path.display(),
                e.dir.origin.describe()
            ));
            for (p, n, h, r) in &e.present {
                s.push_str(&format!(
                    "  present {}  {n} bytes  blake3 {}{}\n",
                    p.display(),
                    &h[..h.len().min(16)],
                    if r.is_empty() {
                        String::new()
                    } else {
                        format!("  ({r})")
                    }
                ));
            }
            for (name, why) in &e.missing {
                s.push_str(&format!("  missing {name}: {why}\n"));
            }
        }
        s
    };
    emit(a.output.as_ref(), out.as_bytes())?;
    Ok(EXIT_OK)
}
