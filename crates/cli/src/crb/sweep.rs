//! `routeval crb sweep`: sweep the threshold of a tier router that emits probabilities.
//!
//! The sweep itself (rule, points, frontier, choice of τ, calibration) is
//! `routeval_sweep::crb::sweep`, shared with the Python package; this adapter selects the
//! bank rows as `crb eval` does, loads the tokenizers and renders the report.

use crate::common::{self, CmdResult, Failure, display_name, emit, open_input};
use clap::Args;
use routeval_frontier::threshold::parse_thresholds;
use routeval_query_dsl::{OnMissingKey, Query, QueryError};
use routeval_sweep::crb::{self as engine, CrbRows, CrbSweepOptions};
use std::path::PathBuf;

/// Which pass rate is the quality axis (and what `--target-pass-rate` means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PassRate {
    /// `scores_v2.trajectory_pass_rate_percent` (row-weighted; a trajectory passes when no
    /// step is under-routed).
    Trajectory,
    /// `scores_v2.case_pass_rate_percent` (rows with predicted tier ≥ gold).
    Case,
}

impl From<PassRate> for engine::PassRate {
    fn from(p: PassRate) -> Self {
        match p {
            PassRate::Trajectory => engine::PassRate::Trajectory,
            PassRate::Case => engine::PassRate::Case,
        }
    }
}

/// `routeval crb sweep`.
#[derive(Debug, Args)]
pub(crate) struct SweepArgs {
    /// The question bank (JSONL; `-` = stdin), selected as `crb eval` does (default: the
    /// public bank installed by `routeval data fetch crb`, with its manifest).
    #[arg(long)]
    bank: Option<PathBuf>,
    /// Tier probabilities, one `{"id", "tier_probs": [p_low, p_mid, p_mid_high, p_high]}` per
    /// line (`-` = stdin). Each probability must be a finite number in [0, 1]; vectors not
    /// summing to 1 are accepted (noted once).
    #[arg(long)]
    scores: PathBuf,
    /// Thresholds: `A:B:STEP` (inclusive) or a comma list (default: 0, 1 and every distinct
    /// cumulative probability, thinned to at most 1000).
    #[arg(long, value_name = "LIST|A:B:STEP")]
    thresholds: Option<String>,
    /// Choose τ: the cheapest point whose pass rate (percent, see `--pass-rate`) reaches P.
    #[arg(long, value_name = "P", conflicts_with = "max_cost_usd")]
    target_pass_rate: Option<f64>,
    /// Choose τ: the best pass rate whose predicted-path cost is at most C USD.
    #[arg(long, value_name = "C")]
    max_cost_usd: Option<f64>,
    /// The quality axis: `trajectory` (scores_v2 trajectory pass rate, default) or `case`.
    #[arg(long, value_enum, default_value = "trajectory")]
    pass_rate: PassRate,
    /// Calibrate on the trajectories whose first row this `where` query selects (e.g.
    /// '{"benchmark": "swebench"}'); report the other rows at the chosen τ.
    #[arg(long, value_name = "JSON", conflicts_with = "calibrate_fraction")]
    calibrate_on: Option<String>,
    /// Calibrate on this fraction (0 < F < 1) of the trajectories, drawn with `--seed`;
    /// report the others at the chosen τ.
    #[arg(long, value_name = "F")]
    calibrate_fraction: Option<f64>,
    #[command(flatten)]
    select: SelectArgs,
}

/// The row selection and tokenizer options shared with `crb eval`.
#[derive(Debug, Args)]
pub(crate) struct SelectArgs {
    /// Manifest whose `sources.*.line_count` set the sampling quotas (with `--n`).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Sample N rows proportionally to the manifest's line counts (default: the whole bank;
    /// 1..=10^12).
    #[arg(long, value_parser = crate::numarg::sample_size, allow_negative_numbers = true)]
    n: Option<i64>,
    /// Keep only rows of this benchmark (repeat for several).
    #[arg(long = "benchmark")]
    benchmarks: Vec<String>,
    /// Keep only the bank rows this `where` query selects (as `crb eval --where`).
    #[arg(long = "where", value_name = "JSON")]
    where_: Option<String>,
    /// With `--where`/`--calibrate-on`: a missing path `skip`s the row or is an `error`.
    #[arg(long, value_name = "skip|error")]
    on_missing_key: Option<String>,
    /// Seed of the sample (Python `random.Random(seed)`) and of `--calibrate-fraction`.
    #[arg(long, default_value_t = 42, allow_negative_numbers = true)]
    seed: i128,
    /// Tokenizer directory (as `crb eval --tokenizers`).
    #[arg(long)]
    tokenizers: Option<PathBuf>,
    /// Tokenizer setup: `native`, `hf_offline`, `all_cl100k`.
    #[arg(long, default_value = "native")]
    tokenizer_setup: String,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write the output to PATH instead of stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// stdout format: `text` (the table) or `md` (the report as Markdown).
    #[arg(long, value_enum, default_value = "text", conflicts_with = "json")]
    format: crate::report::TextFormat,
    #[command(flatten)]
    html: crate::report::HtmlArg,
}

fn on_missing_key(a: &SelectArgs) -> Result<OnMissingKey, Failure> {
    a.on_missing_key
        .as_deref()
        .unwrap_or("skip")
        .parse()
        .map_err(|e: QueryError| Failure::bad_input(format!("--on-missing-key: {e}")))
}

/// `routeval crb sweep`: read the bank rows and score file, run the threshold sweep, print it.
pub(crate) fn sweep(a: SweepArgs) -> CmdResult {
    crate::report::check_outputs(&a.select.html, &[("-o", a.select.output.as_deref())])?;
    let s = &a.select;
    let setup = super::check_tokenizer_args(&s.tokenizer_setup, s.tokenizers.as_deref())?;
    let omk = on_missing_key(s)?;
    let opts = CrbSweepOptions {
        thresholds: None,
        target_pass_rate: a.target_pass_rate,
        max_cost_usd: a.max_cost_usd,
        pass_rate: a.pass_rate.into(),
        calibrate_on: a.calibrate_on.clone(),
        calibrate_fraction: a.calibrate_fraction,
        on_missing_key: omk,
        seed: s.seed,
    };
    let calib_query = opts.validate().map_err(Failure::bad_input)?;
    let choice = crate::crb::resolve_bank(a.bank.as_deref(), s.manifest.as_deref())?;
    let bank_name = display_name(&choice.bank);
    let where_query = match &s.where_ {
        None => None,
        Some(t) => Some((
            Query::parse_str(t).map_err(|e| Failure::bad_input(format!("--where: {e}")))?,
            omk,
        )),
    };
    let opts = CrbSweepOptions {
        thresholds: match &a.thresholds {
            Some(t) => Some(parse_thresholds(t).map_err(Failure::bad_input)?),
            None => None,
        },
        ..opts
    };
    opts.validate().map_err(Failure::bad_input)?;
    // Rows, as `crb eval` selects them.
    let (rows, sample_mode, _quotas) = crate::crb::select_bank_rows(
        &choice.bank,
        choice.manifest.as_deref(),
        s.n,
        s.seed,
        &s.benchmarks,
        where_query.as_ref(),
    )?;
    let scores_name = display_name(&a.scores);
    let tokenizer_dir = s.tokenizers.clone();
    let report = engine::sweep(
        CrbRows {
            rows,
            sample_mode,
            subselected: s.n.is_some() || !s.benchmarks.is_empty() || s.where_.is_some(),
            bank: bank_name.clone(),
            bank_source: choice.public.clone(),
        },
        open_input(&a.scores)?,
        &scores_name,
        &opts,
        calib_query.as_ref(),
        &mut |needed| {
            super::load_tier_tokenizers(setup, tokenizer_dir.as_deref(), needed)
                .map_err(|f| routeval_sweep::SweepError::Data(f.message))
        },
        setup.name(),
        &mut |line| eprintln!("{line}"),
    )
    .map_err(Failure::bad_input)?;
    render(&a, &report)?;
    Ok(common::EXIT_OK)
}

/// Write `--html` and print the table, `--json` or `--format md` of a sweep report.
fn render(a: &SweepArgs, report: &routeval_sweep::crb::CrbSweepReport) -> Result<(), Failure> {
    let s = &a.select;
    let md = s.format == crate::report::TextFormat::Md;
    let doc = (md || s.html.html.is_some()).then(|| routeval_views::crb::sweep_document(report));
    let stdin_used = crate::report::uses_stdin(
        a.bank
            .iter()
            .map(PathBuf::as_path)
            .chain([a.scores.as_path()]),
    );
    if let Some(doc) = &doc {
        crate::report::write_html(&s.html, doc, stdin_used)?;
    }
    let out = if let (true, Some(doc)) = (md, &doc) {
        crate::report::markdown(doc, stdin_used)
    } else if s.json {
        let mut text = serde_json::to_string(&report.to_json())
            .map_err(|e| Failure::bad_input(e.to_string()))?;
        text.push('\n');
        text
    } else {
        report.render_text()
    };
    emit(s.output.as_ref(), out.as_bytes())
}
