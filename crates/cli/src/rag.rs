//! `routeval rag`: rag-quality-check 0.1.0's CLI, byte for byte (program name aside), plus
//! `--strict`, per-case rows (`--format csv|jsonl`) and embeddings (`--embed-url`,
//! `--embed-cmd`).
//!
//! Exit statuses follow the reference: 0 on success even when cases failed, 1 with
//! `routeval rag: error: …` on an input error, 2 with an argparse-style usage message on bad
//! arguments; `--strict` exits 3 when any case failed.

mod baseline;

use routeval_clients::embed;

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use routeval_query_dsl::{OnMissingKey, Query};
use routeval_retrieval_metrics::rag::{
    Embedder, Metric, Options, PyValue, RagError, RagReport, evaluate, evaluate_indexed,
    parse_cases, py_float_str, py_int_str, pyfmt, stream_evaluate,
};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{self, CmdResult};
use routeval_core::gate::{self, Gate};
use routeval_retrieval_metrics::rag::compare::RagBaseline;
use routeval_stats::Intervals;

/// Program name printed in messages and in the summary header.
const PROG: &str = "routeval rag";

/// Arguments of `routeval rag` (parsed by [`run`] with argparse-compatible messages).
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true, disable_version_flag = true)]
pub(crate) struct RagCmd {
    /// CASES [--k N] [--threshold X] [--json] [--output PATH] [--weakest N] [--format csv|jsonl]
    /// [--strict] [--embed-url URL --embed-model NAME | --embed-cmd CMD] (see `routeval rag -h`)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<OsString>,
}

#[derive(Debug, Parser)]
#[command(
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true,
    infer_long_args = true,
    args_override_self = true
)]
struct RagArgs {
    #[arg(value_name = "CASES")]
    cases: Option<String>,
    #[arg(long = "k", allow_negative_numbers = true)]
    k: Option<String>,
    #[arg(long, allow_negative_numbers = true)]
    threshold: Option<String>,
    #[arg(long, allow_negative_numbers = true)]
    weakest: Option<String>,
    #[arg(long)]
    json: bool,
    #[arg(long, short = 'o')]
    output: Option<String>,
    #[arg(long)]
    format: Option<String>,
    /// Also write a self-contained HTML report to PATH.
    #[arg(long, value_name = "PATH")]
    html: Option<String>,
    #[arg(long)]
    strict: bool,
    /// `METRIC=VALUE` quality gates (repeatable).
    #[arg(long = "fail-under")]
    fail_under: Vec<String>,
    #[arg(long = "embed-url")]
    embed_url: Option<String>,
    #[arg(long = "embed-model")]
    embed_model: Option<String>,
    #[arg(long = "embed-key-env")]
    embed_key_env: Option<String>,
    #[arg(long = "embed-cmd")]
    embed_cmd: Option<String>,
    #[arg(long = "embed-batch")]
    embed_batch: Option<String>,
    #[arg(long = "embed-timeout")]
    embed_timeout: Option<String>,
    #[arg(long = "embed-retries")]
    embed_retries: Option<String>,
    #[arg(long = "embed-backoff-ms")]
    embed_backoff_ms: Option<String>,
    #[arg(long)]
    qrels: Option<String>,
    #[arg(long)]
    run: Option<String>,
    /// `where` query (JSON) selecting the cases to evaluate.
    #[arg(long = "where")]
    where_: Option<String>,
    /// `skip` (default) or `error` when a `where` path is missing from a case.
    #[arg(long = "on-missing-key")]
    on_missing_key: Option<String>,
    /// Percentile bootstrap CI level of every metric (a fraction in (0, 1)).
    #[arg(long = "ci")]
    ci: Option<String>,
    /// Bootstrap replicates of `--ci` (default 1000).
    #[arg(long = "bootstrap")]
    bootstrap: Option<String>,
    /// Seed of the `--ci` bootstrap (default 42, as `trec` and `gqr score`).
    #[arg(long = "seed", allow_negative_numbers = true)]
    seed: Option<String>,
    /// A baseline's cases (`rag --baseline CASES2`): paired per-metric comparison.
    #[arg(long = "baseline")]
    baseline: Option<String>,
    /// Paired test of `--baseline` (t, wilcoxon, fisher, bootstrap).
    #[arg(long = "test")]
    test: Option<String>,
    /// Correction over the metrics of `--baseline` (holm, bonferroni, none).
    #[arg(long = "correction")]
    correction: Option<String>,
    /// Family-wise significance level of `--baseline`.
    #[arg(long = "alpha")]
    alpha: Option<String>,
    /// Resamples of the fisher/bootstrap tests of `--baseline`.
    #[arg(long = "iterations")]
    iterations: Option<String>,
    #[arg(short = 'h', long = "help")]
    help: bool,
    #[arg(long)]
    version: bool,
}

/// The usage block printed before an argument error: rag-quality-check's own (argparse, 80
/// columns) with the program name read as `routeval rag`, continuation lines kept at the
/// reference's indentation so the bytes equal the reference's output after that renaming.
/// `--help` shows every option.
const USAGE: &str = "usage: routeval rag [-h] [--k K] [--threshold THRESHOLD] [--weakest N]
                         [--json] [--output PATH] [--version]
                         CASES
";

/// The full usage shown by `--help`.
const HELP_USAGE: &str = "usage: routeval rag [-h] [--k K] [--threshold THRESHOLD] [--weakest N]
                    [--json] [--output PATH] [--format {csv,jsonl}] [--strict]
                    [--embed-url URL] [--embed-model NAME] [--embed-key-env VAR]
                    [--embed-cmd CMD] [--embed-batch N] [--embed-timeout SECS]
                    [--embed-retries N] [--embed-backoff-ms MS]
                    [--qrels QRELS --run RUN] [--where JSON]
                    [--on-missing-key {skip,error}]
                    [--fail-under METRIC=VALUE] [--ci LEVEL]
                    [--bootstrap N] [--seed S] [--baseline CASES2]
                    [--test {t,wilcoxon,fisher,bootstrap}]
                    [--correction {holm,bonferroni,none}] [--alpha A]
                    [--iterations N] [--version]
                    CASES
";

/// The text of `routeval rag --help` (argparse's layout; also the CLI reference's rag page).
pub(crate) fn help_text() -> String {
    let mut s = String::from(HELP_USAGE);
    // The option and definition texts are plain files (crates/cli/help/), bytes as printed.
    s.push_str(include_str!("../help/rag_options.txt"));
    for m in Metric::ALL {
        s.push_str(&format!("  {:<19} {}\n", m.name(), m.help()));
    }
    s.push_str(include_str!("../help/rag_definitions.txt"));
    s
}

/// The reference's `OSError` text: `[Errno 2] No such file or directory: 'x/y.json'`.
fn os_error(e: &std::io::Error, path: &str) -> String {
    match e.raw_os_error() {
        Some(code) => {
            let full = e.to_string();
            let desc = full
                .strip_suffix(&format!(" (os error {code})"))
                .unwrap_or(&full)
                .to_string();
            format!("[Errno {code}] {desc}: {}", pyfmt::repr_str(path))
        }
        None => format!("{e}: {}", pyfmt::repr_str(path)),
    }
}

/// argparse-style usage error: usage, then `routeval rag: error: MSG`, exit 2.
fn usage_error(msg: &str) -> CmdResult {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{USAGE}{PROG}: error: {msg}");
    Ok(2)
}

/// [`usage_error`] for routeval's own options: the usage block is `--help`'s, which lists
/// them (the reference's short block does not).
fn full_usage_error(msg: &str) -> CmdResult {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{HELP_USAGE}{PROG}: error: {msg}");
    Ok(2)
}

/// Input/evaluation error: `routeval rag: error: MSG`, exit 1 (the reference's status).
fn input_error(msg: &str) -> CmdResult {
    routeval_io::signals::wait_if_stopping();
    let _ = writeln!(std::io::stderr().lock(), "{PROG}: error: {msg}");
    Ok(1)
}

fn value_of(v: Option<&ContextValue>) -> String {
    match v {
        Some(ContextValue::String(s)) => s.clone(),
        Some(ContextValue::Strings(s)) => s.join(" "),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// Map a clap parse error onto argparse's wording.
fn argparse_message(e: &clap::Error) -> String {
    let arg = value_of(e.get(ContextKind::InvalidArg));
    let arg = arg.split(' ').next().unwrap_or("").to_string();
    match e.kind() {
        ErrorKind::UnknownArgument => {
            format!(
                "unrecognized arguments: {}",
                value_of(e.get(ContextKind::InvalidArg))
            )
        }
        ErrorKind::MissingRequiredArgument => {
            "the following arguments are required: CASES".to_string()
        }
        ErrorKind::InvalidValue | ErrorKind::WrongNumberOfValues | ErrorKind::TooFewValues => {
            format!("argument {arg}: expected one argument")
        }
        ErrorKind::TooManyValues => {
            format!(
                "unrecognized arguments: {}",
                value_of(e.get(ContextKind::InvalidValue))
            )
        }
        _ => e
            .to_string()
            .lines()
            .next()
            .unwrap_or("invalid arguments")
            .trim_start_matches("error: ")
            .to_string(),
    }
}

/// The output format chosen with `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowFormat {
    Csv,
    Jsonl,
}

/// Run `routeval rag`.
pub(crate) fn run(cmd: RagCmd) -> CmdResult {
    let argv: Vec<String> = cmd
        .args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let args = match RagArgs::try_parse_from(&argv) {
        Ok(a) => a,
        Err(e) => {
            // `-h` wins over other problems, as with argparse when it comes first.
            if argv.iter().any(|a| a == "-h" || a == "--help") {
                print!("{}", help_text());
                return Ok(0);
            }
            return usage_error(&argparse_message(&e));
        }
    };
    if args.help {
        print!("{}", help_text());
        return Ok(0);
    }
    if args.version {
        println!("{PROG} {}", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    // Huge pages off for this process (its heap is large and touched once:
    // `routeval_io::memory`), but not when an `--embed-cmd` child would inherit it.
    if args.embed_cmd.is_none() {
        routeval_io::memory::transparent_huge_pages_off();
    }
    match Plan::from_args(&args) {
        Ok(plan) => match &plan.trec_files {
            Some((qrels, run)) => run_trec(&args, &plan, qrels, run),
            None => run_cases(&args, &plan),
        },
        Err(stop) => stop.report(),
    }
}

/// Why `rag` stops before evaluating: a usage error (argparse's short usage block, or
/// `--help`'s for routeval's own options; exit 2) or an input error (exit 1).
enum Stop {
    Usage(String),
    FullUsage(String),
    Input(String),
}

impl Stop {
    fn report(self) -> CmdResult {
        match self {
            Stop::Usage(m) => usage_error(&m),
            Stop::FullUsage(m) => full_usage_error(&m),
            Stop::Input(m) => input_error(&m),
        }
    }
}

/// `--embed-batch/--embed-timeout/--embed-retries/--embed-backoff-ms`, validated. Without
/// the `embed-http` feature they are still validated (a bad value is the same usage error
/// either way) but only the timeout is read.
#[cfg_attr(not(feature = "embed-http"), allow(dead_code))]
struct EmbedLimits {
    batch: u64,
    timeout: Duration,
    retries: u64,
    backoff_ms: u64,
}

/// The validated options of one `rag` run.
struct Plan {
    opts: Options,
    weakest: i64,
    md: bool,
    format: Option<RowFormat>,
    gates: Vec<Gate>,
    ci: Option<CiRequest>,
    baseline: Option<baseline::Request>,
    /// `--qrels QRELS --run RUN` instead of CASES.
    trec_files: Option<(String, String)>,
    /// CASES (empty with `--qrels/--run`).
    target: String,
    selection: Option<(Query, OnMissingKey)>,
    limits: EmbedLimits,
}

/// An optional int (`py_int_str`), else `default`; argparse's message names `flag`.
fn int_arg(flag: &str, v: &Option<String>, default: i64) -> Result<i64, Stop> {
    match v {
        None => Ok(default),
        Some(s) => py_int_str(s).ok_or_else(|| {
            Stop::Usage(format!(
                "argument --{flag}: invalid int value: {}",
                pyfmt::repr_str(s)
            ))
        }),
    }
}

/// An optional count within `lo..=hi` (`crate::numarg`'s bounds), else `default`.
fn count_arg(name: &str, v: &Option<String>, default: u64, lo: i64, hi: i64) -> Result<u64, Stop> {
    match v {
        None => Ok(default),
        Some(s) => match py_int_str(s) {
            Some(n) if (lo..=hi).contains(&n) => Ok(n as u64),
            Some(_) => Err(Stop::Usage(format!(
                "argument --{name}: {} is out of range (expected {lo}..={hi})",
                pyfmt::repr_str(s)
            ))),
            None => Err(Stop::Usage(format!(
                "argument --{name}: invalid int value: {}",
                pyfmt::repr_str(s)
            ))),
        },
    }
}

impl Plan {
    /// What the outputs show besides the report: the row format, the weakest cases, the
    /// `--ci` intervals and the `--baseline` comparison.
    fn shown<'a>(
        &self,
        intervals: Option<&'a Intervals>,
        comparison: Option<&'a RagBaseline>,
    ) -> Shown<'a> {
        Shown {
            format: self.format,
            md: self.md,
            weakest: self.weakest,
            intervals,
            comparison,
        }
    }

    /// Every option checked, in the order the messages have always come (the first problem
    /// is the one reported).
    fn from_args(args: &RagArgs) -> Result<Plan, Stop> {
        let k = int_arg("k", &args.k, 5)?;
        let threshold = match &args.threshold {
            None => 0.5,
            Some(s) => py_float_str(s).ok_or_else(|| {
                Stop::Usage(format!(
                    "argument --threshold: invalid float value: {}",
                    pyfmt::repr_str(s)
                ))
            })?,
        };
        let weakest = int_arg("weakest", &args.weakest, 3)?;
        let (format, md) = row_format(args)?;
        let gates = parse_gates(args)?;
        let ci = match &args.ci {
            None => None,
            Some(s) => Some(
                crate::ci::parse_level(s)
                    .map_err(|e| Stop::Usage(format!("argument --ci: {e}")))?,
            ),
        };
        check_combinations(args, ci.is_some(), format.is_some())?;
        let limits = embed_limits(args)?;
        let replicates = count_arg("bootstrap", &args.bootstrap, 1000, 1, 10_000_000)?;
        let seed = match &args.seed {
            None => 42,
            Some(s) => match py_int_str(s) {
                Some(v) if v >= 0 => v as u64,
                _ => {
                    return Err(Stop::Usage(format!(
                        "argument --seed: invalid value: {} (expected an integer >= 0)",
                        pyfmt::repr_str(s)
                    )));
                }
            },
        };
        let baseline = match &args.baseline {
            None => None,
            Some(path) => Some(
                baseline::Request::parse(path, baseline_flags(args), ci, replicates, seed)
                    .map_err(Stop::Usage)?,
            ),
        };
        let ci = ci.map(|level| CiRequest {
            level,
            replicates,
            seed,
        });
        let (trec_files, target, selection) = sources(args)?;
        check_embed_flags(args)?;
        Ok(Plan {
            opts: Options { k, threshold },
            weakest,
            md,
            format,
            gates,
            ci,
            baseline,
            trec_files,
            target,
            selection,
            limits,
        })
    }
}

/// `--format csv|jsonl|md` (rows, or the Markdown report), refused together with `--json`.
fn row_format(args: &RagArgs) -> Result<(Option<RowFormat>, bool), Stop> {
    let md = args.format.as_deref() == Some("md");
    let format = match args.format.as_deref() {
        None | Some("md") => None,
        Some("csv") => Some(RowFormat::Csv),
        Some("jsonl") => Some(RowFormat::Jsonl),
        Some(other) => {
            return Err(Stop::Usage(format!(
                "argument --format: invalid choice: {} (choose from 'csv', 'jsonl', 'md')",
                pyfmt::repr_str(other)
            )));
        }
    };
    if args.json && (format.is_some() || md) {
        // Two different stdout formats asked for: refuse rather than pick one silently.
        return Err(Stop::Usage(
            "argument --format: not allowed with argument --json".into(),
        ));
    }
    Ok((format, md))
}

/// `--fail-under METRIC=VALUE` gates, each naming a metric.
fn parse_gates(args: &RagArgs) -> Result<Vec<Gate>, Stop> {
    let mut gates = Vec::with_capacity(args.fail_under.len());
    for g in &args.fail_under {
        gates.push(g.parse::<Gate>().map_err(|e| Stop::Usage(e.to_string()))?);
    }
    gate::validate(&gates, &Metric::ALL.map(|m| m.name().to_string()))
        .map_err(|e| Stop::Usage(e.to_string()))?;
    Ok(gates)
}

/// The flags that only make sense together (or never together).
fn check_combinations(args: &RagArgs, ci: bool, rows: bool) -> Result<(), Stop> {
    let no = |m: &str| Err(Stop::Usage(m.to_string()));
    if !ci && args.baseline.is_none() && (args.bootstrap.is_some() || args.seed.is_some()) {
        return no("--bootstrap and --seed go with --ci LEVEL or --baseline CASES2");
    }
    if args.baseline.is_none() {
        for (flag, v) in [
            ("--test", &args.test),
            ("--correction", &args.correction),
            ("--alpha", &args.alpha),
            ("--iterations", &args.iterations),
        ] {
            if v.is_some() {
                return no(&format!("{flag} goes with --baseline CASES2"));
            }
        }
    }
    if args.baseline.is_some() && rows {
        return no(
            "argument --baseline: not allowed with argument --format (rows are per case; use the report or --json)",
        );
    }
    if args.baseline.as_deref() == Some("-") && args.cases.as_deref() == Some("-") {
        return no("argument --baseline: CASES and CASES2 cannot both be \"-\" (stdin)");
    }
    if args.baseline.is_some() && (args.qrels.is_some() || args.run.is_some()) {
        return no("--baseline compares CASES files; it does not apply to --qrels/--run");
    }
    if ci && rows {
        return no(
            "argument --ci: not allowed with argument --format (rows have no intervals; use the report or --json)",
        );
    }
    Ok(())
}

/// The embedding client's limits, each within `crate::numarg`'s bounds.
fn embed_limits(args: &RagArgs) -> Result<EmbedLimits, Stop> {
    let batch = count_arg(
        "embed-batch",
        &args.embed_batch,
        256,
        1,
        crate::numarg::MAX_BATCH as i64,
    )?;
    let timeout = match &args.embed_timeout {
        None => 60.0,
        Some(s) => match py_float_str(s) {
            Some(v) if v > 0.0 && v <= crate::numarg::MAX_SECONDS => v,
            _ => {
                return Err(Stop::Usage(format!(
                    "argument --embed-timeout: invalid value: {} (expected seconds, more than 0, at most {})",
                    pyfmt::repr_str(s),
                    crate::numarg::MAX_SECONDS
                )));
            }
        },
    };
    let retries = count_arg(
        "embed-retries",
        &args.embed_retries,
        5,
        0,
        crate::numarg::MAX_COUNT as i64,
    )?;
    let max_ms = (crate::numarg::MAX_SECONDS * 1000.0) as i64;
    let backoff_ms = count_arg("embed-backoff-ms", &args.embed_backoff_ms, 500, 0, max_ms)?;
    Ok(EmbedLimits {
        batch,
        timeout: crate::numarg::duration(timeout),
        retries,
        backoff_ms,
    })
}

/// The raw `--test/--correction/--alpha/--iterations` of `--baseline`.
fn baseline_flags(args: &RagArgs) -> baseline::Flags<'_> {
    baseline::Flags {
        test: args.test.as_deref(),
        correction: args.correction.as_deref(),
        alpha: args.alpha.as_deref(),
        iterations: args.iterations.as_deref(),
    }
}

/// The sources: `--qrels/--run` or CASES, and the `--where` selection.
#[allow(clippy::type_complexity)]
fn sources(
    args: &RagArgs,
) -> Result<
    (
        Option<(String, String)>,
        String,
        Option<(Query, OnMissingKey)>,
    ),
    Stop,
> {
    let usage = |m: &str| Err(Stop::Usage(m.to_string()));
    let trec_files = match (&args.qrels, &args.run) {
        (Some(q), Some(r)) => Some((q.clone(), r.clone())),
        (None, None) => None,
        _ => return usage("--qrels and --run go together"),
    };
    if trec_files.is_some() && args.cases.is_some() {
        return usage("argument CASES: not allowed with --qrels/--run");
    }
    if trec_files.is_some() && (args.embed_url.is_some() || args.embed_cmd.is_some()) {
        return usage("--qrels/--run score ids only: embeddings do not apply");
    }
    let target = match (&args.cases, &trec_files) {
        (Some(t), _) => t.clone(),
        (None, Some(_)) => String::new(),
        (None, None) => return usage("the following arguments are required: CASES"),
    };
    let selection = match (&args.where_, args.on_missing_key.as_deref()) {
        (None, None) => None,
        (None, Some(_)) => return usage("--on-missing-key goes with --where"),
        (Some(w), omk) => {
            let omk = match omk {
                None | Some("skip") => OnMissingKey::Skip,
                Some("error") => OnMissingKey::Error,
                Some(other) => {
                    return usage(&format!(
                        "argument --on-missing-key: invalid choice: {} (choose from 'skip', 'error')",
                        pyfmt::repr_str(other)
                    ));
                }
            };
            if trec_files.is_some() {
                return usage("--where selects CASES; it does not apply to --qrels/--run");
            }
            let q = Query::parse_str(w).map_err(|e| Stop::Input(format!("--where: {e}")))?;
            Some((q, omk))
        }
    };
    Ok((trec_files, target, selection))
}

/// `--embed-url` needs `--embed-model` (and the reverse) and excludes `--embed-cmd`.
fn check_embed_flags(args: &RagArgs) -> Result<(), Stop> {
    if args.embed_url.is_some() && args.embed_cmd.is_some() {
        return Err(Stop::Usage(
            "argument --embed-cmd: not allowed with argument --embed-url".into(),
        ));
    }
    // routeval's own options: the usage block shown is the full one, which lists them.
    match (&args.embed_url, &args.embed_model) {
        (Some(_), None) => Err(Stop::FullUsage(
            "argument --embed-url: --embed-model NAME is required with it (the model name sent to the endpoint)".into(),
        )),
        (None, Some(_)) => Err(Stop::FullUsage(
            "argument --embed-model: goes with --embed-url URL (the OpenAI-compatible endpoint it names a model of)".into(),
        )),
        _ => Ok(()),
    }
}

/// `--qrels QRELS --run RUN`: the judged run queries as cases.
fn run_trec(args: &RagArgs, plan: &Plan, qrels: &str, run: &str) -> CmdResult {
    let report = match trec_report(qrels, run, &plan.opts) {
        Ok(r) => r,
        Err(msg) => return input_error(&msg),
    };
    let intervals = plan.ci.map(|c| c.of(&report));
    let shown = plan.shown(intervals.as_ref(), None);
    if let Err(e) = write_outputs(&report, args, &shown) {
        return e.report();
    }
    quality_gates(&report, args.strict, &plan.gates)
}

/// The embedder the flags ask for (`--embed-cmd`, or `--embed-url` with feature
/// `embed-http`), if any.
fn embedder(args: &RagArgs, limits: &EmbedLimits) -> Result<Option<Box<dyn Embedder>>, Stop> {
    if let Some(c) = &args.embed_cmd {
        return Ok(Some(Box::new(embed::CmdEmbedder::new(
            c.clone(),
            limits.timeout,
        ))));
    }
    let (Some(url), Some(model)) = (&args.embed_url, &args.embed_model) else {
        return Ok(None);
    };
    #[cfg(feature = "embed-http")]
    {
        let var = args.embed_key_env.as_deref().unwrap_or("OPENAI_API_KEY");
        let key = std::env::var(var).ok().filter(|k| !k.is_empty());
        let http = embed::HttpEmbedder::new(embed::HttpConfig {
            url: url.clone(),
            model: model.clone(),
            key,
            batch: limits.batch as usize,
            timeout: limits.timeout,
            retries: limits.retries as u32,
            label: PROG.into(),
            backoff: Duration::from_millis(limits.backoff_ms),
        });
        match http {
            Ok(h) => Ok(Some(Box::new(h))),
            Err(e) => Err(Stop::Usage(format!("--embed-url: {e}"))),
        }
    }
    #[cfg(not(feature = "embed-http"))]
    {
        let _ = (url, model);
        Err(Stop::Input(
            "--embed-url needs routeval built with the `embed-http` feature".into(),
        ))
    }
}

/// One input's report: streamed when lexical without a selection, else parsed whole (then
/// selected by `--where`, reported on stderr followed by `which`).
fn evaluate_text(
    input: &Input,
    text: &str,
    origin: &str,
    plan: &Plan,
    embedder: &mut Option<Box<dyn Embedder>>,
    which: &str,
) -> Result<RagReport, RagError> {
    if embedder.is_none() && plan.selection.is_none() {
        let bar = crate::progress::Bar::new();
        // A mapped input (the text is the map's bytes unless it had to be decoded lossily)
        // was released piece by piece as its UTF-8 was checked ([`as_text`]); the stream
        // faults each part back in as it reads it and lets the scored parts go, so the peak
        // holds a few batches of the file, not all of it (313 MB for the 100k-case text
        // bench).
        let mapped = std::ptr::eq(text.as_ptr(), input.as_ptr());
        let released = std::cell::Cell::new(0usize);
        let consumed = |end: usize| {
            if mapped {
                released.set(input.release(released.get()..end));
            }
        };
        if let Some(r) = stream_evaluate(text, origin, &plan.opts, &bar, &consumed) {
            return r;
        }
    }
    let cases = parse_cases(text, origin)?;
    let (cases, indices) = match &plan.selection {
        None => (cases, None),
        Some((query, omk)) => {
            let (chosen, indices) = select_cases(cases, query, *omk, which)?;
            (chosen, Some(indices))
        }
    };
    let e = embedder.as_mut().map(|e| e.as_mut() as &mut dyn Embedder);
    evaluate_indexed(&cases, indices.as_deref(), &plan.opts, e)
}

/// The input as text (lossily decoded when it is not valid UTF-8). A mapped input leaves the
/// resident set piece by piece as it is checked ([`common::InputBytes::text_released`]).
fn as_text(input: &Input) -> std::borrow::Cow<'_, str> {
    let checked = match input {
        Input::Mapped(m) => m.text_released(),
        Input::Owned(v) => simdutf8::basic::from_utf8(v).ok(),
    };
    match checked {
        Some(t) => std::borrow::Cow::Borrowed(t),
        None => String::from_utf8_lossy(input),
    }
}

/// CASES (and `--baseline CASES2`): evaluate, compare, write every output, apply the gates.
fn run_cases(args: &RagArgs, plan: &Plan) -> CmdResult {
    // Read the input (parsed below: streamed when lexical, whole when embedding).
    let (bytes, origin) = match read_bytes(&plan.target) {
        Ok(x) => x,
        Err(msg) => return input_error(&msg),
    };
    let mut embedder = match embedder(args, &plan.limits) {
        Ok(e) => e,
        Err(stop) => return stop.report(),
    };
    let result = evaluate_text(&bytes, &as_text(&bytes), &origin, plan, &mut embedder, "");
    drop(bytes);
    let report = match result {
        Ok(r) => r,
        Err(e) => return input_error(&e.to_string()),
    };
    // --baseline: the baseline's cases through the same options, selection and similarity,
    // then paired with these.
    let comparison = match &plan.baseline {
        None => None,
        Some(req) => {
            let (bbytes, borigin) = match read_bytes(&req.path) {
                Ok(x) => x,
                Err(msg) => return input_error(&format!("--baseline: {msg}")),
            };
            let btext = as_text(&bbytes);
            let base = match evaluate_text(
                &bbytes,
                &btext,
                &borigin,
                plan,
                &mut embedder,
                " (baseline)",
            ) {
                Ok(r) => r,
                Err(e) => return input_error(&format!("--baseline {}: {e}", req.path)),
            };
            match req.compare(&report, &base) {
                Ok(c) => Some(c),
                Err(msg) => return input_error(&msg),
            }
        }
    };
    drop(embedder);
    if args.strict && plan.selection.is_some() && report.n_cases == 0 {
        // A gate over no case would pass vacuously.
        return Err(common::Failure::bad_input(
            "--strict: --where selected 0 cases: nothing to gate",
        ));
    }
    // Outputs, in the reference's order: the file first, then stdout.
    let intervals = plan.ci.map(|c| c.of(&report));
    let shown = plan.shown(intervals.as_ref(), comparison.as_ref());
    if let Err(e) = write_outputs(&report, args, &shown) {
        return e.report();
    }
    let status = quality_gates(&report, args.strict, &plan.gates);
    // The process exits next and the OS takes the memory back at once: freeing 100k
    // per-case results one by one would only add tens of milliseconds.
    std::mem::forget(report);
    status
}

/// `--strict` and `--fail-under`, after every output is written: each failing gate is one
/// stderr line (`routeval rag: error: ...`), so the reason is visible even when the rows went
/// to a file; exit 3 when any failed.
fn quality_gates(report: &RagReport, strict: bool, gates: &[Gate]) -> CmdResult {
    let mut status = common::EXIT_OK;
    if strict && !report.ok() {
        let first = report.failures().next().unwrap_or_default();
        let _ = writeln!(
            std::io::stderr().lock(),
            "{PROG}: error: --strict: {} case failure(s) (first: {first})",
            report.n_failures()
        );
        status = common::EXIT_STRICT;
    }
    match crate::gate::apply(gates, report, &format!("{PROG}: error")) {
        Ok(common::EXIT_OK) => Ok(status),
        other => other,
    }
}

/// Keep the cases `query` matches (each case object seen as JSON), with their input
/// positions; reports `where: N of M case(s) selected` on stderr, followed by `which`
/// (`" (baseline)"` for `--baseline`'s cases, else empty).
fn select_cases<'a>(
    cases: Vec<PyValue<'a>>,
    query: &Query,
    omk: OnMissingKey,
    which: &str,
) -> Result<(Vec<PyValue<'a>>, Vec<usize>), RagError> {
    let total = cases.len();
    let mut chosen = Vec::new();
    let mut indices = Vec::new();
    for (i, case) in cases.into_iter().enumerate() {
        match query.matches(&case.to_json_value(), omk) {
            Ok(true) => {
                chosen.push(case);
                indices.push(i);
            }
            Ok(false) => {}
            Err(e) => {
                return Err(RagError::Input(format!("--where: case {i}: {e}")));
            }
        }
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "where: {} of {total} case(s) selected{which}",
        chosen.len()
    );
    Ok((chosen, indices))
}

/// Read `target` (`-` = stdin) as the reference does: a missing path is `'PATH' does not
/// exist`; a directory or socket says what it is ([`common::unreadable_input`]); other IO
/// errors are spelled like Python's `OSError`.
fn read_bytes(target: &str) -> Result<(Input, String), String> {
    if target == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut buf)
            .map_err(|e| os_error(&e, "<stdin>"))?;
        let buf = common::decode_input(buf, Path::new("-")).map_err(|f| f.message)?;
        return Ok((Input::Owned(buf), "standard input".to_string()));
    }
    let path = Path::new(target);
    // A missing path keeps the reference's message; anything else that is not a readable
    // file says what it is (the reference says "does not exist" for a directory, a FIFO or
    // `/dev/fd/N` too; FIFOs and `/dev/fd/N` are read here).
    if std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        && !target.starts_with("/dev/fd/")
    {
        return Err(format!("{} does not exist", pyfmt::repr_str(target)));
    }
    if let Some(msg) = common::unreadable_input(path) {
        return Err(msg);
    }
    let file = std::fs::File::open(path).map_err(|e| os_error(&e, target))?;
    crate::output::note_input_file(&file, path);
    if let Some(map) = common::map_file(&file) {
        return Ok((Input::Mapped(map), target.to_string()));
    }
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut &file, &mut buf).map_err(|e| os_error(&e, target))?;
    let buf = common::decode_input(buf, path).map_err(|f| f.message)?;
    Ok((Input::Owned(buf), target.to_string()))
}

/// The bytes of the input: a read-only map of a regular file (or its decompressed content),
/// or what was read (stdin, or a file that could not be mapped, e.g. an empty one).
enum Input {
    Mapped(common::InputBytes),
    Owned(Vec<u8>),
}

impl Input {
    /// Let the resident pages of `range` of a mapped input go ([`common::InputBytes::release`],
    /// whose next start it returns); a no-op for bytes read into memory.
    fn release(&self, range: std::ops::Range<usize>) -> usize {
        match self {
            Input::Mapped(m) => m.release(range),
            Input::Owned(_) => range.start,
        }
    }
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Owned(v) => v,
        }
    }
}

/// `--qrels QRELS --run RUN`: the TREC files as cases, scored with rag-quality-check's rules.
fn trec_report(qrels: &str, run: &str, opts: &Options) -> Result<RagReport, String> {
    use routeval_retrieval_metrics::trec::{Qrels, Run};
    // Our own input (no reference message to match): the shared conventions apply.
    let read = |p: &str| -> Result<Vec<u8>, String> {
        let mut reader = common::open_input(Path::new(p)).map_err(|f| f.message)?;
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut reader, &mut buf)
            .map_err(|e| format!("{}: cannot read: {e}", common::display_name(Path::new(p))))?;
        Ok(buf)
    };
    let q = Qrels::from_bytes(&read(qrels)?, qrels).map_err(|e| e.to_string())?;
    let r = Run::from_bytes(&read(run)?, run).map_err(|e| e.to_string())?;
    let cases = routeval_retrieval_metrics::rag::cases_from_trec(&q, &r);
    evaluate(&cases, opts, None).map_err(|e| e.to_string())
}

/// The per-case rows in `format`, streamed to `w`.
fn write_rows(report: &RagReport, format: RowFormat, w: &mut impl Write) -> std::io::Result<()> {
    match format {
        RowFormat::Csv => report.write_rows_csv(w),
        RowFormat::Jsonl => report.write_rows_jsonl(w),
    }
}

/// Why the outputs could not be written.
enum OutError {
    /// `--output` failed: the reference's `OSError` line, exit 1.
    File(String),
    /// An output over an input, or stdout failed (EPIPE included): one line, exit 2.
    Fatal(common::Failure),
}

impl OutError {
    fn report(self) -> CmdResult {
        match self {
            OutError::File(msg) => input_error(&msg),
            OutError::Fatal(f) => Err(f),
        }
    }
}

/// `--ci LEVEL [--bootstrap N] [--seed S]`, validated.
#[derive(Debug, Clone, Copy)]
struct CiRequest {
    level: f64,
    replicates: u64,
    seed: u64,
}

impl CiRequest {
    fn of(self, report: &RagReport) -> Intervals {
        report.intervals(self.level, self.replicates, self.seed)
    }
}

/// What the outputs show besides the report.
struct Shown<'a> {
    format: Option<RowFormat>,
    md: bool,
    weakest: i64,
    intervals: Option<&'a Intervals>,
    comparison: Option<&'a RagBaseline>,
}

/// Every output: `--html`, then `-o PATH` (rows, the `.json` report, or the text), then stdout.
fn write_outputs(report: &RagReport, args: &RagArgs, shown: &Shown<'_>) -> Result<(), OutError> {
    let input = match (&args.cases, &args.qrels, &args.run) {
        (Some(c), _, _) => c.clone(),
        (None, Some(q), Some(r)) => format!("{q} + {r}"),
        _ => "<stdin>".into(),
    };
    let stdin_used = args.cases.as_deref().is_none_or(|c| c == "-") && args.qrels.is_none();
    // Two outputs on one file would lose one: refused before either is written (exit 2).
    crate::output::check_outputs(&[
        ("--output", args.output.as_deref().map(Path::new)),
        ("--html", args.html.as_deref().map(Path::new)),
    ])
    .map_err(OutError::Fatal)?;
    let doc = (shown.md || args.html.is_some()).then(|| {
        let mut doc = routeval_views::rag::document(report, &input, shown.weakest, shown.intervals);
        // The same block the text prints under the summary and --json holds as "baseline".
        if let Some(c) = shown.comparison {
            doc.sections.push(routeval_views::rag::baseline_section(c));
        }
        doc
    });
    if let (Some(path), Some(doc)) = (&args.html, &doc) {
        let html = crate::report::HtmlArg {
            html: Some(PathBuf::from(path)),
        };
        crate::report::write_html(&html, doc, stdin_used).map_err(OutError::Fatal)?;
    }
    let text = || match &doc {
        Some(doc) if shown.md => crate::report::markdown(doc, stdin_used)
            .trim_end()
            .to_string(),
        _ => routeval_views::rag::summary_text(
            report,
            PROG,
            shown.weakest,
            shown.intervals,
            shown.comparison,
        ),
    };
    if let Some(path) = &args.output {
        crate::output::check_not_input(Path::new(path)).map_err(OutError::Fatal)?;
        // Streamed into the temporary file (renamed over PATH once complete): the rows and the
        // JSON report of 100,000 cases are tens of MB, never held whole in memory.
        let write = || -> std::io::Result<()> {
            let mut f = crate::output::AtomicFile::create_io(Path::new(path))?;
            let written = match shown.format {
                Some(format) => write_rows(report, format, &mut f),
                None if path.to_lowercase().ends_with(".json") => {
                    routeval_views::rag::write_report_json(
                        report,
                        shown.intervals,
                        shown.comparison,
                        &mut f,
                    )
                    .and_then(|()| f.write_all(b"\n"))
                }
                None => f.write_all(format!("{}\n", text()).as_bytes()),
            };
            match written {
                Ok(()) => f.commit_io(),
                // The file's own error (its errno, for the reference's `[Errno N]` line); the
                // file is dropped uncommitted, the old one kept.
                Err(e) => Err(f.take_error().unwrap_or(e)),
            }
        };
        write().map_err(|e| OutError::File(os_error(&e, path)))?;
    }
    write_stdout(report, args, shown, text)
}

/// stdout: the rows (unless they went to `-o`), the `--json` report, or the text (naming the
/// `-o` file it was also written to).
fn write_stdout(
    report: &RagReport,
    args: &RagArgs,
    shown: &Shown<'_>,
    text: impl Fn() -> String,
) -> Result<(), OutError> {
    crate::output::check_stdout_not_input().map_err(OutError::Fatal)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let res = match (shown.format, &args.output) {
        (Some(_), Some(_)) => Ok(()),
        (Some(f), None) => {
            // Streamed, as into `-o`: the rows of 100,000 cases are tens of MB.
            let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut out);
            write_rows(report, f, &mut w).and_then(|()| w.flush())
        }
        (None, _) if args.json => {
            // `Stdout` (not the lock) so that the report's writer thread can own the handle.
            drop(out);
            let mut w = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout());
            let res = routeval_views::rag::write_report_json(
                report,
                shown.intervals,
                shown.comparison,
                &mut w,
            )
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush());
            out = stdout.lock();
            res
        }
        (None, output) => {
            let mut s = text();
            if let Some(p) = output {
                s.push_str(&format!("\n  wrote the report to {p}"));
            }
            writeln!(out, "{s}")
        }
    };
    res.and_then(|()| out.flush())
        .map_err(|e| OutError::Fatal(crate::output::stdout_failure(&e)))
}
