//! `routeval compare`: is run B really better than the baseline A? Every run is scored with
//! trec_eval's measures on every judged query (`-c`), then compared with the baseline (or every
//! pair) by a paired test; p-values are corrected over the whole table. The statistics and the
//! report are `routeval_stats::compare`, its faces (text, Markdown, LaTeX, CSV, HTML)
//! `routeval_views::compare`; this module reads files and writes the rendered report.

use crate::common::{self, CmdResult, Failure};
use crate::trec::read_all;
use clap::{Args, ValueEnum};
use routeval_retrieval_metrics::trec::{self, EvalOptions, MeasureSet, Qrels};
use routeval_stats::{
    CompareOptions, Correction, FamilyTest, PairedTest, SystemScores, compare_systems,
};
use routeval_views::compare as views;
use std::path::{Path, PathBuf};

/// The measures compared when no `-m` is given.
const DEFAULT_MEASURES: [&str; 5] = ["map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"];

/// Table formats of `routeval compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TableFormat {
    /// Aligned plain text (ranx's layout).
    Text,
    /// A Markdown table.
    Md,
    /// A LaTeX `tabular`.
    Latex,
    /// One CSV row per comparison (long form).
    Csv,
}

impl From<TableFormat> for views::TableFormat {
    fn from(f: TableFormat) -> Self {
        match f {
            TableFormat::Text => Self::Text,
            TableFormat::Md => Self::Md,
            TableFormat::Latex => Self::Latex,
            TableFormat::Csv => Self::Csv,
        }
    }
}

/// Options of `routeval compare`.
#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// Relevance judgments (trec_eval qrels).
    pub(crate) qrels: PathBuf,
    /// The baseline run: every other run is compared with it.
    pub(crate) baseline: PathBuf,
    /// The runs to compare with the baseline.
    #[arg(required = true, value_name = "RUN")]
    pub(crate) runs: Vec<PathBuf>,
    /// Measure (as `routeval trec -m`; repeatable). Default: map, ndcg_cut.10, P.10,
    /// recall.100, recip_rank. Measures without per-query values (gm_map, num_q, runid) are
    /// refused.
    #[arg(short = 'm', long = "measure", value_name = "MEASURE[.PARAMS]")]
    pub(crate) measures: Vec<String>,
    /// Minimum qrels value counted as relevant (trec_eval -l).
    #[arg(
        short = 'l',
        long = "level-for-rel",
        value_name = "NUM",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    pub(crate) level: i64,
    /// Drop unjudged retrieved documents first (trec_eval -J).
    #[arg(short = 'J', long = "judged-docs-only")]
    pub(crate) judged_only: bool,
    /// Number of documents in the collection, for `utility` (trec_eval -N).
    #[arg(
        short = 'N',
        long = "num-docs-in-coll",
        value_name = "NUM",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub(crate) num_docs: i64,
    /// Evaluate only the top NUM documents of each query (trec_eval -M).
    #[arg(short = 'M', long = "max-retrieved-per-topic", value_name = "NUM")]
    pub(crate) max_docs: Option<u64>,
    /// The trec_eval release whose definitions apply where releases differ: 10.0 (default) or
    /// 9.0.8 (pytrec_eval's), as `routeval trec --trec-eval`.
    #[arg(long = "trec-eval", value_name = "RELEASE", default_value = "10.0", value_parser = crate::trec::parse_release)]
    pub(crate) trec_eval: trec::eval::TrecEvalVersion,
    /// Test: t (scipy.stats.ttest_rel), wilcoxon (scipy.stats.wilcoxon defaults),
    /// fisher (sign-flip randomization; exact for ≤ 20 queries), bootstrap (paired bootstrap
    /// test on centred differences) — paired tests, corrected by --correction; or, over every
    /// pair of ≥ 3 runs at once, tukey (Tukey's HSD with the two-way ANOVA's MSE,
    /// scipy.stats.studentized_range) or randomized-tukey (Carterette 2012, --iterations
    /// permutations), whose p-values are already family-wise.
    #[arg(long, default_value = "t", value_parser = parse_test)]
    pub(crate) test: TestArg,
    /// Monte Carlo iterations of the fisher (> 20 queries), bootstrap and randomized-tukey
    /// tests (1 to 10^7).
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=crate::ci::MAX_REPLICATES))]
    pub(crate) iterations: u64,
    /// Add the two-way ANOVA (factors system and query, one score per cell; statsmodels
    /// anova_lm) of every measure over all runs: F, p, degrees of freedom, sums of squares.
    /// Needs at least 3 runs.
    #[arg(long)]
    pub(crate) anova: bool,
    /// Risk measures against the baseline with loss weight ALPHA (repeatable, e.g. --risk 1
    /// --risk 5): URisk (Wang et al. 2012), TRisk (Dinçer et al. 2014) and GeoRisk over the
    /// whole table (Dinçer et al. 2016). ALPHA is a finite number ≥ 0.
    #[arg(
        long = "risk",
        value_name = "ALPHA",
        value_parser = crate::numarg::risk_alpha,
        allow_negative_numbers = true
    )]
    pub(crate) risk: Vec<f64>,
    /// Seed of every resampling step (tests and confidence intervals) [default: 42]. Refused
    /// with --no-ci and a test that draws nothing (t, wilcoxon, tukey).
    #[arg(long, value_name = "S")]
    pub(crate) seed: Option<u64>,
    /// Multiple-testing correction over every comparison in the table (statsmodels
    /// multipletests): holm (default), bonferroni or none. Not with tukey or
    /// randomized-tukey, which control the family-wise error themselves.
    #[arg(long, value_parser = parse_correction)]
    pub(crate) correction: Option<Correction>,
    /// Family-wise significance level.
    #[arg(long, value_name = "ALPHA", default_value_t = 0.05)]
    pub(crate) alpha: f64,
    /// Level of the paired bootstrap percentile CI of each mean difference.
    #[arg(long, value_name = "LEVEL", default_value_t = 0.95)]
    pub(crate) ci: f64,
    /// Bootstrap replicates of the confidence intervals, 1 to 10^7 [default: 1000]. Refused
    /// with --no-ci.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=crate::ci::MAX_REPLICATES))]
    pub(crate) bootstrap: Option<u64>,
    /// No confidence intervals (`ci` is null in JSON).
    #[arg(long, conflicts_with = "ci")]
    pub(crate) no_ci: bool,
    /// Compare every pair of runs, not only each run with the baseline (the correction then
    /// covers every pair × measure).
    #[arg(long)]
    pub(crate) all_pairs: bool,
    /// Exit 3 when a run is significantly worse than the baseline on any measure (one stderr
    /// line per failing comparison): a CI gate.
    #[arg(long)]
    pub(crate) fail_if_worse: bool,
    /// Table format.
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub(crate) format: TableFormat,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Display name of a run: RUN (up to the first `=`) is its path as given or its automatic name (the run tag,
    /// or the file stem where tags repeat); repeatable.
    #[arg(long = "name", value_name = "RUN=NAME", value_parser = parse_name)]
    pub(crate) names: Vec<(String, String)>,
    /// Tie sensitivity: each run's min, max and expected value of every measure over the
    /// orders of tied documents (as `routeval trec --ties`): a "ties" object per run in
    /// --json, a "Tie sensitivity" table (the runs and measures whose range is not a point) in
    /// the text, Markdown, LaTeX and HTML faces.
    #[arg(long)]
    pub(crate) ties: bool,
    /// Write the output to PATH instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) html: crate::report::HtmlArg,
}

/// The value of `--test`: a paired test or a family-wise test over all pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TestArg {
    /// A paired test, corrected over the table.
    Paired(PairedTest),
    /// Tukey's HSD or the randomized Tukey HSD.
    Family(FamilyTest),
}

fn parse_test(s: &str) -> Result<TestArg, String> {
    if let Some(f) = FamilyTest::from_name(s) {
        return Ok(TestArg::Family(f));
    }
    s.parse().map(TestArg::Paired).map_err(|_| {
        format!("unknown test '{s}' (expected one of: t, wilcoxon, fisher, bootstrap, tukey, randomized-tukey)")
    })
}

fn parse_name(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((run, name)) if !run.is_empty() && !name.is_empty() => {
            Ok((run.to_string(), name.to_string()))
        }
        _ => Err(format!(
            "{s:?}: expected RUN=NAME (a run's path or name, then its display name)"
        )),
    }
}

fn parse_correction(s: &str) -> Result<Correction, String> {
    s.parse()
        .map_err(|e: routeval_stats::StatsError| e.to_string())
}

/// `routeval compare --help` description.
pub(crate) const LONG_ABOUT: &str = "\
Compare TREC runs with a baseline on the same queries: per measure the mean, the difference \
from the baseline, a paired significance test corrected for multiple comparisons (Holm by \
default), Cohen's d_z, a paired bootstrap confidence interval of the difference, and \
wins/ties/losses.

Every judged query counts; a run without results for a query scores 0 there (trec_eval -c), so \
the tests are paired. Queries only in a run are ignored and counted on stderr.

Exit 0; 2 on bad input; 3 with --fail-if-worse when a run is significantly worse than the \
baseline on some measure.";

/// Run `routeval compare`.
pub(crate) fn run(args: CompareArgs) -> CmdResult {
    check_resampling_flags(&args)?;
    let measure_args: Vec<String> = if args.measures.is_empty() {
        DEFAULT_MEASURES.iter().map(|s| s.to_string()).collect()
    } else {
        args.measures.clone()
    };
    let measures = MeasureSet::parse(&measure_args).map_err(Failure::from)?;
    crate::trec::check_release(&measures, args.trec_eval)?;
    // Values compared: every per-query numeric value.
    let values = trec::compared::compared_values(&measures).map_err(Failure::bad_input)?;
    let opts = EvalOptions {
        measures,
        version: args.trec_eval,
        relevance_level: args.level,
        complete: true,
        judged_only: args.judged_only,
        max_docs_per_topic: args
            .max_docs
            .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX)),
        num_docs_in_coll: args.num_docs,
        per_query: true,
        ties: args.ties,
    };
    check_test_flags(&args)?;
    let mut paths: Vec<&PathBuf> = vec![&args.baseline];
    paths.extend(args.runs.iter());
    let stdin_uses = std::iter::once(&args.qrels)
        .chain(paths.iter().copied())
        .filter(|p| p.as_path() == Path::new("-"))
        .count();
    if stdin_uses > 1 {
        return Err(Failure::bad_input("only one input can be stdin ('-')"));
    }
    crate::report::check_outputs(&args.html, &[("-o", args.output.as_deref())])?;
    let inputs = read_systems(&args, &paths, &values, &opts)?;
    let mut systems = inputs.systems;
    // Names: run tags, the file stem where tags repeat.
    trec::compared::name_systems(&mut systems, &inputs.tags);
    trec::compared::rename_systems(&mut systems, &args.names).map_err(Failure::bad_input)?;
    let names: Vec<String> = values.iter().map(|v| v.name.clone()).collect();
    let (test, family) = match args.test {
        TestArg::Paired(t) => (t, None),
        TestArg::Family(f) => (PairedTest::T, Some(f)),
    };
    let copts = CompareOptions {
        test,
        family,
        anova: args.anova,
        risk_alphas: args.risk.clone(),
        iterations: args.iterations,
        seed: args.seed.unwrap_or(crate::ci::DEFAULT_SEED),
        correction: args.correction.unwrap_or(Correction::Holm),
        alpha: args.alpha,
        ci_level: (!args.no_ci).then_some(args.ci),
        ci_replicates: args.bootstrap.unwrap_or(crate::ci::DEFAULT_REPLICATES),
        all_pairs: args.all_pairs,
    };
    let report = compare_systems(&names, &systems, &copts).map_err(Failure::bad_input)?;
    for n in &inputs.notes {
        eprintln!("{n}");
    }
    for n in &report.notes {
        eprintln!("note: {n}");
    }
    render(&args, &report, &systems, &inputs.notes, inputs.ties)?;
    if args.fail_if_worse {
        let worse = views::worse_lines(&report);
        for line in &worse {
            eprintln!("{line}");
        }
        if !worse.is_empty() {
            return Ok(common::EXIT_STRICT);
        }
    }
    Ok(common::EXIT_OK)
}

/// `--correction` with a family test, and a family test or `--anova` with fewer than 3 runs:
/// usage errors.
fn check_test_flags(args: &CompareArgs) -> Result<(), Failure> {
    if let (TestArg::Family(f), Some(c)) = (args.test, args.correction) {
        return Err(Failure::bad_input(format!(
            "--correction {c} does not apply to --test {}: its p-values already control the family-wise error over every pair of runs",
            f.name()
        )));
    }
    let n_runs = 1 + args.runs.len();
    if n_runs < 3 {
        let what = match args.test {
            TestArg::Family(f) => Some(format!("--test {}", f.name())),
            TestArg::Paired(_) if args.anova => Some("--anova".to_string()),
            TestArg::Paired(_) => None,
        };
        if let Some(what) = what {
            return Err(Failure::bad_input(format!(
                "{what} needs at least 3 runs (the baseline and two others), got {n_runs}; with two runs use a paired test (--test t, wilcoxon, fisher or bootstrap)"
            )));
        }
    }
    Ok(())
}

/// The evaluated inputs of `compare`: per run its scores and tag, the inputs' notes (printed
/// once every input is read, so a bad input still gives exactly one stderr line) and, with
/// `--ties`, each run's tie-sensitivity block.
struct Inputs {
    systems: Vec<SystemScores>,
    tags: Vec<String>,
    notes: Vec<String>,
    ties: Option<Vec<serde_json::Value>>,
}

/// Read the qrels and evaluate every run (`paths`: the baseline first).
fn read_systems(
    args: &CompareArgs,
    paths: &[&PathBuf],
    values: &[trec::compared::ComparedValue],
    opts: &EvalOptions,
) -> Result<Inputs, Failure> {
    let qrels_name = common::display_name(&args.qrels);
    let qrels = Qrels::from_bytes(&read_all(&args.qrels)?, &qrels_name)?;
    let mut out = Inputs {
        systems: Vec::with_capacity(paths.len()),
        tags: Vec::with_capacity(paths.len()),
        notes: Vec::new(),
        ties: args.ties.then(Vec::new),
    };
    for path in paths {
        let name = common::display_name(path);
        let bytes = read_all(path)?;
        let ev = {
            let bar = crate::progress::Bar::new();
            trec::evaluate_bytes_with_progress(&qrels, &bytes, &name, opts, &qrels_name, &bar)?
        };
        drop(bytes);
        if let Some(t) = out.ties.as_mut() {
            t.push(crate::trec::ties_json(&ev)?);
        }
        out.notes.extend(trec::compared::run_only_note(&name, &ev));
        trec::compared::check_overlap(&name, &ev, qrels.len(), &qrels_name)
            .map_err(Failure::bad_input)?;
        out.notes.extend(trec::compared::missing_results_note(
            &name,
            &ev,
            qrels.len(),
        ));
        let path = path.display().to_string();
        let system = trec::compared::system_scores(&ev, values, qrels.len(), &name, &path)
            .map_err(Failure::bad_input)?;
        out.tags
            .push(String::from_utf8_lossy(&ev.runid).into_owned());
        out.systems.push(system);
    }
    Ok(out)
}

/// Write `--html` and print the table (`--format`) or `--json`.
fn render(
    args: &CompareArgs,
    report: &routeval_stats::ComparisonReport,
    systems: &[SystemScores],
    notes: &[String],
    ties: Option<Vec<serde_json::Value>>,
) -> Result<(), Failure> {
    let tie_blocks: Vec<views::ExtraBlock> = match &ties {
        Some(t) => vec![views::tie_block(report, t)],
        None => Vec::new(),
    };
    if args.html.html.is_some() {
        let doc = views::html_document(report, systems, &tie_blocks, notes);
        let stdin_used = crate::report::uses_stdin(
            std::iter::once(args.qrels.as_path()).chain(args.runs.iter().map(PathBuf::as_path)),
        );
        crate::report::write_html(&args.html, &doc, stdin_used)?;
    }
    let out = if args.json {
        views::json_bytes(report, ties)
            .map_err(|e| Failure::bad_input(format!("cannot encode JSON: {e}")))?
    } else {
        views::render(report, args.format.into(), &tie_blocks)
            .map_err(|e| Failure::bad_input(e.to_string()))?
            .into_bytes()
    };
    common::emit(args.output.as_ref(), &out)
}

/// `--bootstrap` with `--no-ci`, and `--seed` where nothing is drawn (`--no-ci` with the t or
/// Wilcoxon test), would be silently ignored: a usage error instead.
fn check_resampling_flags(args: &CompareArgs) -> Result<(), Failure> {
    if !args.no_ci {
        return Ok(());
    }
    if args.bootstrap.is_some() {
        return Err(Failure::bad_input(
            "--bootstrap sets the replicates of the confidence intervals: it does nothing with --no-ci",
        ));
    }
    let draws_nothing = match args.test {
        TestArg::Paired(t) => matches!(t, PairedTest::T | PairedTest::Wilcoxon),
        TestArg::Family(f) => f == FamilyTest::Tukey,
    };
    if args.seed.is_some() && draws_nothing {
        let name = match args.test {
            TestArg::Paired(t) => t.name(),
            TestArg::Family(f) => f.name(),
        };
        return Err(Failure::bad_input(format!(
            "--seed does nothing with --no-ci and --test {name} (nothing is resampled)"
        )));
    }
    Ok(())
}
