//! `routeval crb`: CommonRouterBench tier-routing evaluation (`specs/crb.md`).
//!
//! * `routeval crb eval --bank PATH --predictor SPEC [...]`: select rows (full bank or the
//!   reference's proportional sample), run a predictor, price every trajectory step and print
//!   the headline scores (or the reference's whole summary JSON with `--json`).
//! * `routeval crb metrics --cases PATH`: the reference CLI's `metrics --cases` aggregate.
//!
//! IO lives here: files, the tokenizer directory, the external-command predictor (child
//! process) and the OpenAI-compatible classifier (HTTP, see [`llm`]).

pub(crate) mod bank_source;
mod llm;
mod sweep;

use bank_source::resolve_bank;

use crate::common::{self, CmdResult, Failure, display_name, emit, open_input, read_input};
use clap::{Args, Subcommand};
use routeval_bench_data::crb::selection::{
    SelectOptions, select_bank_rows as select_bank_rows_with,
};
use routeval_bench_data::crb::{BankRow, CheckedRow, Quotas, SampleError, check_row, id_repr};
use routeval_clients::command::CommandPredictor;
use routeval_core::Tier;
use routeval_query_dsl::{OnMissingKey, Query, QueryError};
use routeval_routing_scores::crb::cases::aggregate_cases;
use routeval_routing_scores::crb::eval::{
    self, BaselineRun, EvalInput, EvalReport, PublicBank, TokenizerInfo, needed_tiers,
};
use routeval_routing_scores::crb::predictions::{parse_predictions, parse_tier};
use routeval_routing_scores::crb::records::{
    ConstantPredictor, EvalRecord, GoldPredictor, PredictionMap, TierPrediction, TierPredictor,
    make_record,
};
use routeval_routing_scores::crb::scores::{CrbMetrics, ScoresV2, Selection, benchmark_counts};
use routeval_routing_scores::crb::walk::WalkContext;
use routeval_tier_cost::tokens::{
    EncoderKind, TierTokenizers, TokenizerFiles, TokenizerSetup, build_tier_tokenizers,
};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `routeval crb`: CommonRouterBench tier routing.
#[derive(Debug, Args)]
pub(crate) struct CrbArgs {
    #[command(subcommand)]
    command: CrbCommand,
}

#[derive(Debug, Subcommand)]
enum CrbCommand {
    /// Evaluate a tier router on a question bank (scores_v2, section_11, router_accounting, by_benchmark).
    Eval(Box<EvalArgs>),
    /// Aggregate case metrics like the reference CLI's `metrics --cases FILE`.
    Metrics(MetricsArgs),
    /// Sweep the threshold of a router emitting tier probabilities: per threshold the blocks
    /// `crb eval` prints, the cost-quality frontier, and a (calibrated) choice of threshold.
    Sweep(Box<sweep::SweepArgs>),
}

/// `routeval crb eval`.
#[derive(Debug, Args)]
pub(crate) struct EvalArgs {
    /// The question bank (JSONL, one row per line; `-` = stdin; gzip/zstd read transparently).
    /// Default: the public bank installed by `routeval data fetch crb`.
    #[arg(long, value_name = "FILE")]
    bank: Option<PathBuf>,
    /// Manifest whose `sources.*.line_count` set the sampling quotas (default with `--n`: the
    /// cached public bank's manifest without `--bank`, else the public bank's published line
    /// counts, as the reference always uses its shipped manifest).
    #[arg(long, value_name = "FILE")]
    manifest: Option<PathBuf>,
    /// Sample N rows proportionally to the manifest's line counts (default: the whole bank;
    /// 1..=10^12).
    #[arg(long, value_parser = crate::numarg::sample_size, allow_negative_numbers = true)]
    n: Option<i64>,
    /// Keep only rows of this benchmark (after sampling; repeat for several).
    #[arg(long = "benchmark")]
    benchmarks: Vec<String>,
    /// Keep only the bank rows this `where` query selects (a JSON object, evaluated on each
    /// row object, e.g. '{"benchmark": {"in": ["bfcl", "mtrag"]}, "step_index": {">": 1}}';
    /// see the README). Applied after sampling and `--benchmark`; the selected count goes to
    /// stderr, stdout is unchanged.
    #[arg(long = "where", value_name = "JSON")]
    where_: Option<String>,
    /// With `--where`: what a path missing from a row does, `skip` (not selected) or `error`
    /// (exit 2 naming the row's line).
    #[arg(long, value_name = "skip|error", requires = "where_")]
    on_missing_key: Option<String>,
    /// Seed of the sample (Python `random.Random(seed)`); also reported in full-bank mode.
    #[arg(long, default_value_t = 42, allow_negative_numbers = true)]
    seed: i128,
    /// The router: `gold`, `tier:low|mid|mid_high|high`, `file:PATH` (predictions JSON/JSONL),
    /// `cmd:COMMAND` (a process reading one JSON row per line, writing one tier per line), or
    /// `llm` (OpenAI-compatible digit classifier, see `--llm-*`).
    #[arg(long)]
    predictor: String,
    /// A baseline router on the same rows (same forms as `--predictor`): adds a paired
    /// comparison — each `scores_v2` headline delta (run − baseline, percentage points) with a
    /// paired bootstrap CI (the same trajectories drawn for both, within each benchmark;
    /// `--ci` level, default 0.95; `--bootstrap`, `--seed`), and an exact McNemar test on
    /// per-row case pass.
    #[arg(long, value_name = "SPEC")]
    baseline_predictor: Option<String>,
    /// With `--predictor cmd:`: seconds to wait for each answer before giving up (the
    /// command's process group is then killed and the run fails, exit 2).
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = crate::numarg::timeout_secs, allow_hyphen_values = true)]
    cmd_timeout: f64,
    /// Directory with `anthropic/`, `minimax-text-01/`, `deepseek-v3/` `tokenizer.json` files
    /// (default: the cache's tokenizer directory, where `routeval data fetch tokenizers` puts
    /// them: `$ROUTEVAL_TOKENIZERS`, else `$ROUTEVAL_CACHE_DIR/tokenizers`, else
    /// `$XDG_CACHE_HOME/routeval/tokenizers` or `~/.cache/routeval/tokenizers`). A missing
    /// file makes that tier count with cl100k_base, announced on stderr, in the table header
    /// and in the summary.
    #[arg(long, value_name = "DIR")]
    tokenizers: Option<PathBuf>,
    /// Tokenizer setup: `native` (the reference online), `hf_offline`, `all_cl100k`.
    #[arg(long, default_value = "native")]
    tokenizer_setup: String,
    /// Print the whole summary JSON (the reference's keys) instead of the table.
    #[arg(long)]
    json: bool,
    /// Write the output to PATH instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
    /// stdout format: `text` (the table) or `md` (the report as Markdown).
    #[arg(long, value_enum, default_value = "text", conflicts_with = "json")]
    format: crate::report::TextFormat,
    #[command(flatten)]
    html: crate::report::HtmlArg,
    #[command(flatten)]
    llm: llm::LlmArgs,
    #[command(flatten)]
    ci: crate::ci::CiArgs,
    #[command(flatten)]
    gates: crate::gate::GateArgs,
}

/// `routeval crb metrics`.
#[derive(Debug, Args)]
pub(crate) struct MetricsArgs {
    /// A JSON array of case objects (`case_id`, `task_passed`, costs or `*_steps`).
    #[arg(long, value_name = "FILE")]
    cases: PathBuf,
    /// Cap `cost_savings_score` at 100.
    #[arg(long)]
    cap_cost_score_at_100: bool,
    /// Print compact JSON (the output is always JSON, as the reference's).
    #[arg(long)]
    json: bool,
    /// Write the output to PATH instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
}

/// `routeval crb eval|metrics|sweep`: dispatch to the subcommand.
pub(crate) fn run(args: CrbArgs) -> CmdResult {
    match args.command {
        CrbCommand::Eval(a) => eval(*a),
        CrbCommand::Metrics(a) => metrics_cmd(a),
        CrbCommand::Sweep(a) => sweep::sweep(*a),
    }
}

/// Print warnings (at most 20, then a count; `routeval_sweep::crb::warning_lines`).
fn warn_all(warnings: &[String]) {
    let mut err = std::io::stderr().lock();
    for line in routeval_sweep::crb::warning_lines(warnings) {
        let _ = writeln!(err, "{line}");
    }
}

/// Load a predictions file (`routeval_routing_scores::crb::predictions::parse_predictions`);
/// also returns the ids in file order (to report those that match no evaluated row). Repeated
/// ids are one stderr warning.
fn load_predictions(path: &Path) -> Result<(PredictionMap, Vec<String>), Failure> {
    let name = display_name(path);
    let p = parse_predictions(&read_input(path)?).map_err(|e| match e.line {
        Some(l) => Failure::bad_input(format!("{name}:{l}: {e}")),
        None => Failure::bad_input(format!("{name}: {e}")),
    })?;
    if let Some(r) = &p.repeated {
        eprintln!("warning: {name}: {r}");
    }
    Ok((p.map, p.ids))
}

/// The tokenizer directory by the cache rule (`routeval_bench_data::cache`).
/// `--tokenizer-setup NAME` and `--tokenizers DIR` of `crb eval` and `crb sweep`, checked
/// before any row is read: an unknown setup or a missing directory is a usage error.
fn check_tokenizer_args(setup: &str, dir: Option<&Path>) -> Result<TokenizerSetup, Failure> {
    let parsed = TokenizerSetup::parse(setup).ok_or_else(|| {
        Failure::bad_input(format!(
            "--tokenizer-setup: unknown setup {setup:?} (expected native, hf_offline or all_cl100k)"
        ))
    })?;
    if let Some(d) = dir
        && !d.is_dir()
    {
        return Err(Failure::bad_input(format!(
            "--tokenizers {}: no such directory",
            d.display()
        )));
    }
    Ok(parsed)
}

/// The tokenizers of the `needed` tiers, from `--tokenizers DIR` or else the cache; each
/// fallback to another encoder is one stderr warning naming the directory.
fn load_tier_tokenizers(
    setup: TokenizerSetup,
    dir: Option<&Path>,
    needed: [bool; 4],
) -> Result<TierTokenizers, Failure> {
    let dir = dir.map(Path::to_path_buf).or_else(default_tokenizer_dir);
    let files = read_tokenizer_files(dir.as_deref(), setup, needed);
    let toks = build_tier_tokenizers(setup, &files, needed)
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    for f in &toks.fallbacks {
        eprintln!(
            "warning: tokenizers{}: {f} (get the native files with `routeval data fetch tokenizers`)",
            dir.as_deref()
                .map(|d| format!(" ({})", d.display()))
                .unwrap_or_default()
        );
    }
    Ok(toks)
}

fn default_tokenizer_dir() -> Option<PathBuf> {
    routeval_bench_data::cache::CacheDirs::from_process()
        .ok()
        .map(|d| d.tokenizers.path)
}

/// Read the tokenizer files the needed tiers use (in parallel threads).
fn read_tokenizer_files(
    dir: Option<&Path>,
    setup: TokenizerSetup,
    needed: [bool; 4],
) -> TokenizerFiles {
    let mut kinds: Vec<EncoderKind> = Tier::ALL
        .iter()
        .filter(|t| needed[**t as usize])
        .map(|t| setup.encoder_for(*t))
        .filter(|k| *k != EncoderKind::Cl100k)
        .collect();
    kinds.sort();
    kinds.dedup();
    let read = |k: EncoderKind| {
        dir.and_then(|d| std::fs::read(d.join(k.dir_name()).join("tokenizer.json")).ok())
    };
    let results: Vec<(EncoderKind, Option<Vec<u8>>)> = std::thread::scope(|s| {
        let handles: Vec<_> = kinds
            .iter()
            .map(|k| (*k, s.spawn(move || read(*k))))
            .collect();
        handles
            .into_iter()
            .map(|(k, h)| (k, h.join().ok().flatten()))
            .collect()
    });
    let mut files = TokenizerFiles::default();
    for (k, b) in results {
        match k {
            EncoderKind::Anthropic => files.anthropic = b,
            EncoderKind::MiniMaxText01 => files.minimax = b,
            EncoderKind::DeepSeekV3 => files.deepseek = b,
            EncoderKind::Cl100k => {}
        }
    }
    files
}

/// The stderr summary of a run with predictor errors: how many rows, and the first row's id
/// and cause (`None` when every row has a prediction).
fn predictor_error_summary(
    predictions: &[Result<TierPrediction, String>],
    checked: &[CheckedRow],
) -> Option<String> {
    let n = predictions.iter().filter(|p| p.is_err()).count();
    let (i, why) = predictions
        .iter()
        .enumerate()
        .find_map(|(i, p)| p.as_ref().err().map(|e| (i, e)))?;
    let id = checked.get(i).map(|c| id_repr(&c.id)).unwrap_or_default();
    Some(format!(
        "warning: {n} of {} row(s) had predictor errors (first, row {id}: {})",
        predictions.len(),
        routeval_io::child::clip(why)
    ))
}

/// The flag checks of `crb eval` before any row is read; returns the tokenizer setup.
fn check_eval_args(a: &EvalArgs) -> Result<TokenizerSetup, Failure> {
    // --seed also seeds the sample, so only --bootstrap is refused without --ci.
    a.ci.check_used(
        false,
        a.baseline_predictor.is_some(),
        Some("--baseline-predictor SPEC"),
    )?;
    a.gates.validate(&ScoresV2::HEADLINE.map(String::from))?;
    let setup = check_tokenizer_args(&a.tokenizer_setup, a.tokenizers.as_deref())?;
    crate::report::check_outputs(&a.html, &[("-o", a.output.as_deref())])?;
    Ok(setup)
}

fn eval(a: EvalArgs) -> CmdResult {
    let setup = check_eval_args(&a)?;
    // Huge pages off for this process (`routeval_io::memory`: a run straight after another
    // large process otherwise stalls in the kernel's compaction), but not when a `cmd:`
    // predictor's child would inherit it.
    let spawns = |s: Option<&str>| s.is_some_and(|s| s.starts_with("cmd:"));
    if !spawns(Some(&a.predictor)) && !spawns(a.baseline_predictor.as_deref()) {
        routeval_io::memory::transparent_huge_pages_off();
    }
    let choice = resolve_bank(a.bank.as_deref(), a.manifest.as_deref())?;
    let bank_path = choice.bank.clone();
    let bank_name = display_name(&bank_path);
    let where_query = where_query(&a)?;
    // 1. Select rows.
    let (rows, sample_mode, quotas) = select_bank_rows(
        &bank_path,
        choice.manifest.as_deref(),
        a.n,
        a.seed,
        &a.benchmarks,
        where_query.as_ref(),
    )?;
    // 2. Validate (reference order: per row, before prediction).
    let (checked, mut warnings) = check_rows(&rows, &bank_name)?;
    // 3. Predict.
    let (predictions, baseline_predictions) = predict_all(&a, &rows, &checked, &mut warnings)?;
    let counts = benchmark_counts(checked.iter().map(|c| c.benchmark.as_str()));
    let lines: Vec<u64> = rows.iter().map(|r| r.line).collect();
    let (records, baseline_records) = records_all(
        &a,
        rows,
        &checked,
        predictions,
        baseline_predictions,
        &bank_name,
    )?;
    warn_all(&warnings);
    // 4. Tokenizers for the tiers that occur.
    let needed = needed_tiers(records.iter().chain(baseline_records.iter().flatten()));
    let toks = load_tier_tokenizers(setup, a.tokenizers.as_deref(), needed)?;
    // 5. Score.
    let m = score_records(&records, &toks, &bank_name, &lines)?;
    let baseline = match &baseline_records {
        None => None,
        Some(b) => Some(score_records(b, &toks, &bank_name, &lines)?),
    };
    let report = eval::assemble(EvalInput {
        predictor: &a.predictor,
        bank: bank_name.clone(),
        selection: Selection {
            shard: bank_name.clone(),
            sample_mode: sample_mode.into(),
            seed: seed_value(a.seed),
            quotas,
            benchmark_counts: counts,
        },
        sample_mode,
        records,
        metrics: m,
        include_rows: a.json,
        public: choice.public.as_ref().map(|p| PublicBank {
            public: p.clone(),
            bank: bank_name.clone(),
            manifest: choice.manifest.as_deref().map(display_name),
        }),
        tokenizers: TokenizerInfo {
            setup: setup.name().to_string(),
            encoders: toks.encoder_names(),
            fallbacks: toks.fallbacks,
        },
        ci_level: a.ci.ci_level,
        replicates: a.ci.replicates(),
        // --seed also seeds the bootstrap (mod 2^64).
        seed: a.seed as u64,
        baseline: baseline_records
            .as_deref()
            .zip(baseline.as_ref())
            .map(|(records, metrics)| BaselineRun {
                spec: a.baseline_predictor.as_deref().unwrap_or_default(),
                records,
                metrics,
            }),
    })
    .map_err(|e| Failure::bad_input(format!("--baseline-predictor: {e}")))?;
    render_eval(&a, &report, &bank_path)?;
    a.gates.apply(&report.metrics.scores_v2)
}

/// Print (and write) the faces of one run: the table, `--json`, `--format md`, `--html`
/// (`routeval_views::crb::{eval_text, eval_json, eval_report_document}`).
fn render_eval(a: &EvalArgs, report: &EvalReport, bank_path: &Path) -> Result<(), Failure> {
    let md = a.format == crate::report::TextFormat::Md;
    let doc =
        (md || a.html.html.is_some()).then(|| routeval_views::crb::eval_report_document(report));
    let stdin_used = crate::report::uses_stdin([bank_path]);
    if let Some(doc) = &doc {
        crate::report::write_html(&a.html, doc, stdin_used)?;
    }
    if a.json {
        return crate::common::emit_with(a.output.as_ref(), &mut |w| {
            routeval_views::crb::write_eval_json(report, w)
        });
    }
    let out = if let (true, Some(doc)) = (md, &doc) {
        crate::report::markdown(doc, stdin_used)
    } else {
        routeval_views::crb::eval_text(report)
    };
    emit(a.output.as_ref(), out.as_bytes())
}

/// One prediction (or the predictor's error) per row, in row order.
type Predictions = Vec<Result<TierPrediction, String>>;

/// Check every selected row (reference order: per row, before prediction); returns the
/// checked rows and the warnings (the rows', then duplicate steps').
fn check_rows(
    rows: &[BankRow],
    bank_name: &str,
) -> Result<(Vec<CheckedRow>, Vec<String>), Failure> {
    let mut warnings = Vec::new();
    let mut checked = Vec::with_capacity(rows.len());
    for r in rows {
        let c = check_row(r, bank_name)?;
        warnings.extend(c.warnings.iter().cloned());
        checked.push(c);
    }
    warnings.extend(duplicate_step_warnings(rows, bank_name));
    Ok((checked, warnings))
}

/// The predictions of `--predictor` and of `--baseline-predictor` (when given) on the rows.
fn predict_all(
    a: &EvalArgs,
    rows: &[BankRow],
    checked: &[CheckedRow],
    warnings: &mut Vec<String>,
) -> Result<(Predictions, Option<Predictions>), Failure> {
    let values: Vec<&Value> = rows.iter().map(|r| &r.value).collect();
    let run = predict(
        "--predictor",
        &a.predictor,
        a,
        &values,
        checked,
        rows,
        warnings,
    )?;
    let baseline = match &a.baseline_predictor {
        None => None,
        Some(spec) => Some(predict(
            "--baseline-predictor",
            spec,
            a,
            &values,
            checked,
            rows,
            warnings,
        )?),
    };
    Ok((run, baseline))
}

/// The records of the run and of the baseline (the same rows, cloned, with its predictions).
fn records_all(
    a: &EvalArgs,
    rows: Vec<BankRow>,
    checked: &[CheckedRow],
    predictions: Predictions,
    baseline_predictions: Option<Predictions>,
    bank_name: &str,
) -> Result<(Vec<EvalRecord>, Option<Vec<EvalRecord>>), Failure> {
    // The baseline's records: the same rows (cloned) with its predictions.
    let baseline_records = match baseline_predictions {
        None => None,
        Some(preds) => Some(records_of(
            rows.iter()
                .zip(checked)
                .map(|(r, c)| (r.value.clone(), c, r.line)),
            preds,
            a.baseline_predictor.as_deref().unwrap_or_default(),
            bank_name,
        )?),
    };
    let records = records_of(
        rows.into_iter()
            .zip(checked)
            .map(|(r, c)| (r.value, c, r.line)),
        predictions,
        &a.predictor,
        bank_name,
    )?;
    Ok((records, baseline_records))
}

/// `--where JSON` (with `--on-missing-key`), compiled before any row is read, so a bad query
/// fails fast.
fn where_query(a: &EvalArgs) -> Result<Option<(Query, OnMissingKey)>, Failure> {
    let Some(text) = &a.where_ else {
        return Ok(None);
    };
    let omk: OnMissingKey = a
        .on_missing_key
        .as_deref()
        .unwrap_or("skip")
        .parse()
        .map_err(|e: QueryError| Failure::bad_input(format!("--on-missing-key: {e}")))?;
    let q = Query::parse_str(text).map_err(|e| Failure::bad_input(format!("--where: {e}")))?;
    Ok(Some((q, omk)))
}

/// The evaluation records of `(row value, checked row, bank line)` with the predictions of
/// `spec`; a bad prediction names the bank line and the spec.
fn records_of<'a>(
    rows: impl Iterator<Item = (Value, &'a CheckedRow, u64)>,
    predictions: Vec<Result<TierPrediction, String>>,
    spec: &str,
    bank_name: &str,
) -> Result<Vec<EvalRecord>, Failure> {
    rows.zip(predictions)
        .map(|((value, c, line), p)| {
            let gold = Tier::from_id(c.gold).expect("checked range");
            make_record(value, c.id.clone(), c.benchmark.clone(), gold, p)
                .map_err(|e| Failure::bad_input(format!("{bank_name}:{line}: {e} (from {spec})")))
        })
        .collect()
}

/// `CrbMetrics` of evaluated records (the walk over every trajectory); a walk error names the
/// bank line and row id.
fn score_records(
    records: &[EvalRecord],
    toks: &routeval_tier_cost::tokens::TierTokenizers,
    bank_name: &str,
    lines: &[u64],
) -> Result<CrbMetrics, Failure> {
    let mut ctx = WalkContext::new(records, toks);
    CrbMetrics::compute(records, &mut ctx).map_err(|e| {
        let i = e.record();
        let rec = &records[i];
        let what = e.problem();
        Failure::bad_input(format!(
            "{bank_name}:{}: row {}: {what}",
            lines[i],
            id_repr(&rec.id)
        ))
    })
}

/// Run the predictor `spec` (`gold`, `tier:NAME`, `file:PATH`, `cmd:COMMAND`, `llm`) on the
/// selected rows, in order; rows without a prediction count as predictor errors (a warning
/// says how many).
fn predict(
    flag: &str,
    spec: &str,
    a: &EvalArgs,
    values: &[&Value],
    checked: &[routeval_bench_data::crb::CheckedRow],
    rows: &[BankRow],
    warnings: &mut Vec<String>,
) -> Result<Vec<Result<TierPrediction, String>>, Failure> {
    let predictions = if spec == "llm" {
        let mut p = a.llm.predictor()?;
        let out = p.predict_batch(values);
        let (failed, first) = p.transport_failures();
        if failed > 0 && failed == values.len() && !a.llm.allow_errors {
            return Err(Failure::bad_input(format!(
                "{flag} llm: all {failed} row(s) failed to get an answer from the server (first: {}); nothing to score (--allow-errors scores them as predictor errors)",
                first.unwrap_or_default()
            )));
        }
        out
    } else if let Some(cmd) = spec.strip_prefix("cmd:") {
        let ids: Vec<String> = checked.iter().map(|c| id_repr(&c.id)).collect();
        {
            let bar = crate::progress::Bar::new();
            CommandPredictor::spawn(cmd, crate::numarg::duration(a.cmd_timeout))
                .and_then(|p| p.run(values, &ids, &bar))
                .map_err(|e| Failure::bad_input(e.0))?
        }
    } else {
        let mut p: Box<dyn TierPredictor> = if spec == "gold" {
            Box::new(GoldPredictor)
        } else if let Some(t) = spec.strip_prefix("tier:") {
            Box::new(ConstantPredictor(parse_tier(t).ok_or_else(|| {
                Failure::bad_input(format!(
                    "{flag}: unknown tier {t:?} (expected low, mid, mid_high, high or 0..3)"
                ))
            })?))
        } else if let Some(path) = spec.strip_prefix("file:") {
            let (pm, ids) = load_predictions(Path::new(path))?;
            if let Some(w) = unmatched_predictions_warning(&ids, rows, path) {
                warnings.push(w);
            }
            Box::new(pm)
        } else {
            return Err(Failure::bad_input(format!(
                "{flag}: unknown predictor {spec:?} (expected gold, tier:NAME, file:PATH, cmd:COMMAND or llm)"
            )));
        };
        p.predict_batch(values)
    };
    if let Some(w) = predictor_error_summary(&predictions, checked) {
        eprintln!("{w}");
    }
    let missing = predictions
        .iter()
        .filter(|p| matches!(p, Err(e) if e.starts_with("no prediction for row id")))
        .count();
    if missing > 0 {
        warnings.push(format!(
            "{missing} rows had no prediction in {spec} and count as predictor errors"
        ));
    }
    Ok(predictions)
}

/// One warning line for prediction ids that match no evaluated row (they are ignored): how many,
/// and the first in file order. `None` when every id matches.
fn unmatched_predictions_warning(ids: &[String], rows: &[BankRow], path: &str) -> Option<String> {
    let known: std::collections::HashSet<String> = rows
        .iter()
        .filter_map(|r| r.value.get("id"))
        .map(routeval_routing_scores::crb::records::id_key)
        .collect();
    let mut unmatched = ids.iter().filter(|id| !known.contains(*id));
    let first = unmatched.next()?;
    let n = 1 + unmatched.count();
    Some(format!(
        "{path}: {n} of {} prediction(s) have ids not among the {} evaluated rows and were ignored (first: {first:?})",
        ids.len(),
        rows.len()
    ))
}

fn seed_value(seed: i128) -> Value {
    routeval_sweep::crb::seed_value(seed)
}

/// Warn about rows sharing `(instance_id, step_index)` (the reference costs the earlier one at
/// the later one's position).
fn duplicate_step_warnings(rows: &[BankRow], source: &str) -> Vec<String> {
    routeval_sweep::crb::duplicate_step_warnings(rows, source)
}

fn metrics_cmd(a: MetricsArgs) -> CmdResult {
    let name = display_name(&a.cases);
    let bytes = read_input(&a.cases)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| Failure::bad_input(format!("{name}: not UTF-8: {e}")))?;
    let agg = aggregate_cases(text, a.cap_cost_score_at_100).map_err(|e| match e.line {
        Some(l) => Failure::bad_input(format!("{name}:{l}: {e}")),
        None => Failure::bad_input(format!("{name}: {e}")),
    })?;
    let out = if a.json {
        serde_json::to_string(&agg)
    } else {
        serde_json::to_string_pretty(&agg)
    }
    .map_err(|e| Failure::bad_input(e.to_string()))?;
    emit(a.output.as_ref(), format!("{out}\n").as_bytes())?;
    Ok(common::EXIT_OK)
}

/// Rows of the bank selected as `crb eval` selects them (shared with `crb sweep` and the Python
/// package: `routeval_bench_data::crb::selection`), in the reference's order of checks (spec
/// §5): the bank exists, then `n`, then the manifest's quotas, then the sample; then
/// `--benchmark` and `--where`.
pub(crate) fn select_bank_rows(
    bank_path: &Path,
    manifest_path: Option<&Path>,
    n: Option<i64>,
    seed: i128,
    benchmarks: &[String],
    where_query: Option<&(Query, OnMissingKey)>,
) -> Result<(Vec<BankRow>, &'static str, Option<Quotas>), Failure> {
    let bank_name = display_name(bank_path);
    if bank_path != Path::new("-")
        && std::fs::metadata(bank_path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        return Err(Failure::bad_input(
            SampleError::BankNotFound(bank_name.clone()).to_string(),
        ));
    }
    let mut keep = where_query.map(|(q, omk)| {
        move |v: &Value| -> Result<bool, String> { q.matches(v, *omk).map_err(|e| e.to_string()) }
    });
    let s = select_bank_rows_with(
        &bank_name,
        &mut || open_input(bank_path).map_err(|f| f.message),
        &mut || {
            manifest_path
                .map(|p| read_input(p).map(|b| (b, display_name(p))))
                .transpose()
                .map_err(|f| f.message)
        },
        SelectOptions {
            n,
            seed,
            benchmarks,
        },
        keep.as_mut()
            .map(|k| k as &mut dyn FnMut(&Value) -> Result<bool, String>),
        &mut |line| eprintln!("{line}"),
    )
    .map_err(Failure::bad_input)?;
    Ok((s.rows, s.sample_mode, s.quotas))
}
