//! `routeval compare`: is run B really better than the baseline A? Every run is scored with
//! trec_eval's measures on every judged query (`-c`), then compared with the baseline (or every
//! pair) by a paired test; p-values are corrected over the whole table. The statistics and the
//! report are `routeval_stats::compare`; this module reads files and renders the report.

use crate::common::{self, CmdResult, Failure};
use crate::trec::read_all;
use clap::{Args, ValueEnum};
use routeval_retrieval_metrics::trec::{self, EvalOptions, MeasureSet, Qrels};
use routeval_stats::{
    CompareOptions, ComparisonReport, Correction, FamilyTest, PairedTest, SystemScores,
    compare_systems,
};
use std::fmt::Write as _;
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
    let qrels_name = common::display_name(&args.qrels);
    let qrels = Qrels::from_bytes(&read_all(&args.qrels)?, &qrels_name)?;
    let mut systems: Vec<SystemScores> = Vec::with_capacity(paths.len());
    let mut tags: Vec<String> = Vec::with_capacity(paths.len());
    // Printed once every input is read, so a bad input still gives exactly one stderr line.
    let mut notes: Vec<String> = Vec::new();
    let mut ties: Vec<serde_json::Value> = Vec::new();
    for path in &paths {
        let name = common::display_name(path);
        let bytes = read_all(path)?;
        let ev = {
            let bar = crate::progress::Bar::new();
            trec::evaluate_bytes_with_progress(&qrels, &bytes, &name, &opts, &qrels_name, &bar)?
        };
        drop(bytes);
        if args.ties {
            ties.push(crate::trec::ties_json(&ev)?);
        }
        notes.extend(trec::compared::run_only_note(&name, &ev));
        trec::compared::check_overlap(&name, &ev, qrels.len(), &qrels_name)
            .map_err(Failure::bad_input)?;
        notes.extend(trec::compared::missing_results_note(
            &name,
            &ev,
            qrels.len(),
        ));
        let path = path.display().to_string();
        let system = trec::compared::system_scores(&ev, &values, qrels.len(), &name, &path)
            .map_err(Failure::bad_input)?;
        tags.push(String::from_utf8_lossy(&ev.runid).into_owned());
        systems.push(system);
    }
    // Names: run tags, the file stem where tags repeat.
    trec::compared::name_systems(&mut systems, &tags);
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
    for n in &notes {
        eprintln!("{n}");
    }
    for n in &report.notes {
        eprintln!("note: {n}");
    }
    let tie_blocks: Vec<ExtraBlock> = if args.ties {
        vec![tie_block(&report, &ties)]
    } else {
        Vec::new()
    };
    if args.html.html.is_some() {
        let mut doc = crate::report::compare::document(&report, &systems);
        crate::report::compare::push_blocks(&mut doc, "Tie sensitivity", &tie_blocks);
        doc.notes.clone_from(&notes);
        doc.notes
            .extend(report.notes.iter().map(|n| format!("note: {n}")));
        let stdin_used = crate::report::uses_stdin(
            std::iter::once(args.qrels.as_path()).chain(args.runs.iter().map(PathBuf::as_path)),
        );
        crate::report::write_html(&args.html, &doc, stdin_used)?;
    }
    let out = if args.json {
        let mut v = if args.ties {
            serde_json::to_value(&report).and_then(|mut j| {
                if let Some(runs) = j.get_mut("runs").and_then(|r| r.as_array_mut()) {
                    for (run, t) in runs.iter_mut().zip(ties) {
                        if let Some(o) = run.as_object_mut() {
                            o.insert("ties".into(), t);
                        }
                    }
                }
                serde_json::to_vec(&j)
            })
        } else {
            serde_json::to_vec(&report)
        }
        .map_err(|e| Failure::bad_input(format!("cannot encode JSON: {e}")))?;
        v.push(b'\n');
        v
    } else {
        render(&report, args.format, &tie_blocks)?.into_bytes()
    };
    common::emit(args.output.as_ref(), &out)?;
    if args.fail_if_worse {
        let worse = report.significantly_worse();
        for &(r, m) in &worse {
            let c = &report.runs[r]
                .vs_baseline
                .as_ref()
                .expect("run has comparisons")[m];
            eprintln!(
                "fail: {} is significantly worse than {} on {}: delta {:+.4}, p_adjusted {} ({}, {}, alpha {})",
                report.runs[r].name,
                report.runs[0].name,
                report.measures[m],
                c.delta,
                fmt_p(c.p_adjusted),
                report.test_name(),
                report.correction_name(),
                report.alpha
            );
        }
        if !worse.is_empty() {
            return Ok(common::EXIT_STRICT);
        }
    }
    Ok(common::EXIT_OK)
}

/// `t test, holm correction`, or for a family test `tukey test, family-wise over every pair`.
pub(crate) fn test_label(report: &ComparisonReport) -> String {
    if report.family.is_some() {
        format!("{} test, family-wise over every pair", report.test_name())
    } else {
        format!(
            "{} test, {} correction",
            report.test_name(),
            report.correction_name()
        )
    }
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

/// A p-value for messages: 4 significant digits.
pub(crate) fn fmt_p(p: f64) -> String {
    if p.is_nan() {
        "nan".into()
    } else if p >= 1e-4 {
        format!("{p:.4}")
    } else {
        format!("{p:.3e}")
    }
}

/// Run letters a, b, …, z, aa, ab, … (ranx's labels).
pub(crate) fn letter(i: usize) -> String {
    let mut i = i;
    let mut s = Vec::new();
    loop {
        s.push(b'a' + (i % 26) as u8);
        if i < 26 {
            break;
        }
        i = i / 26 - 1;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

/// `s` in Unicode superscript letters (the marks naming the runs a run beats in the table).
pub(crate) fn superscript(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'a' => 'ᵃ',
            'b' => 'ᵇ',
            'c' => 'ᶜ',
            'd' => 'ᵈ',
            'e' => 'ᵉ',
            'f' => 'ᶠ',
            'g' => 'ᵍ',
            'h' => 'ʰ',
            'i' => 'ⁱ',
            'j' => 'ʲ',
            'k' => 'ᵏ',
            'l' => 'ˡ',
            'm' => 'ᵐ',
            'n' => 'ⁿ',
            'o' => 'ᵒ',
            'p' => 'ᵖ',
            'r' => 'ʳ',
            's' => 'ˢ',
            't' => 'ᵗ',
            'u' => 'ᵘ',
            'v' => 'ᵛ',
            'w' => 'ʷ',
            'x' => 'ˣ',
            'y' => 'ʸ',
            'z' => 'ᶻ',
            other => other,
        })
        .collect()
}

/// For each (run, measure): the letters of the runs it is significantly better than.
pub(crate) fn better_than(report: &ComparisonReport) -> Vec<Vec<Vec<usize>>> {
    let mut out = vec![vec![Vec::new(); report.measures.len()]; report.runs.len()];
    for (a, b, m, c) in report.comparisons() {
        if c.significant {
            if c.delta > 0.0 {
                out[b][m].push(a);
            } else if c.delta < 0.0 {
                out[a][m].push(b);
            }
        }
    }
    for row in &mut out {
        for cell in row {
            cell.sort_unstable();
        }
    }
    out
}

/// A table cell for `x`: `nan` for NaN, else four decimals.
pub(crate) fn num(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else {
        format!("{x:.4}")
    }
}

fn render(
    report: &ComparisonReport,
    format: TableFormat,
    more: &[ExtraBlock],
) -> Result<String, Failure> {
    let marks = better_than(report);
    let mut header: Vec<String> = vec!["#".into(), "run".into()];
    header.extend(report.measures.iter().cloned());
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut latex_rows: Vec<Vec<String>> = Vec::new();
    for (r, run) in report.runs.iter().enumerate() {
        let mut row = vec![letter(r), run.name.clone()];
        let mut lrow = vec![letter(r), latex_escape(&run.name)];
        for m in 0..report.measures.len() {
            let mut cell = num(run.means[m]);
            let mut lcell = cell.clone();
            if let Some(v) = &run.vs_baseline {
                let d = format!(" ({:+.4})", v[m].delta);
                cell.push_str(&d);
                lcell.push_str(&d);
            }
            let letters: String = marks[r][m].iter().map(|&i| letter(i)).collect();
            if !letters.is_empty() {
                cell.push_str(&superscript(&letters));
                let _ = write!(lcell, "$^{{{letters}}}$");
            }
            row.push(cell);
            lrow.push(lcell);
        }
        rows.push(row);
        latex_rows.push(lrow);
    }
    let legend = format!(
        "{} queries; mean (difference from run a); superscripts: significantly better than that \
run ({}, alpha {}).",
        report.queries,
        test_label(report),
        report.alpha
    );
    let mut extra = many_systems_blocks(report);
    extra.extend(more.iter().cloned());
    // Comparisons with no evidence behind them (one query, zero variance, NaN values).
    let mut notes = String::new();
    for (a, b, m, c) in report.comparisons() {
        if let Some(note) = c.note {
            let _ = write!(
                notes,
                "\nnote: {} vs {} on {}: no test ({note}); never marked significant.",
                report.runs[b].name, report.runs[a].name, report.measures[m]
            );
        }
    }
    let legend = format!("{legend}{notes}");
    let mut s = String::new();
    match format {
        TableFormat::Text => {
            s.push_str(&text_table(&header, &rows));
            let _ = writeln!(s, "\n{legend}");
            for b in &extra {
                let _ = write!(s, "\n{}\n", b.title);
                let _ = write!(s, "{}", text_table(&b.header, &b.rows));
                if let Some(n) = &b.note {
                    let _ = writeln!(s, "{n}");
                }
            }
        }
        TableFormat::Md => {
            let _ = writeln!(s, "| {} |", header.join(" | "));
            let _ = writeln!(
                s,
                "|{}|",
                header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
            );
            for r in &rows {
                let cells: Vec<String> = r
                    .iter()
                    .map(|c| routeval_report::markdown_escape(c))
                    .collect();
                let _ = writeln!(s, "| {} |", cells.join(" | "));
            }
            let _ = writeln!(s, "\n{legend}");
            for b in &extra {
                let _ = writeln!(s, "\n**{}**\n", b.title);
                let _ = writeln!(s, "| {} |", b.header.join(" | "));
                let _ = writeln!(
                    s,
                    "|{}|",
                    b.header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
                );
                for r in &b.rows {
                    let cells: Vec<String> = r
                        .iter()
                        .map(|c| routeval_report::markdown_escape(c))
                        .collect();
                    let _ = writeln!(s, "| {} |", cells.join(" | "));
                }
                if let Some(n) = &b.note {
                    let _ = writeln!(s, "\n{n}");
                }
            }
        }
        TableFormat::Latex => {
            let _ = writeln!(
                s,
                "\\begin{{tabular}}{{ll{}}}",
                "r".repeat(report.measures.len())
            );
            let _ = writeln!(s, "\\toprule");
            let h: Vec<String> = header.iter().map(|c| latex_escape(c)).collect();
            let _ = writeln!(s, "{} \\\\", h.join(" & "));
            let _ = writeln!(s, "\\midrule");
            for r in &latex_rows {
                let _ = writeln!(s, "{} \\\\", r.join(" & "));
            }
            let _ = writeln!(s, "\\bottomrule\n\\end{{tabular}}");
            let _ = writeln!(s, "% {legend}");
            for b in &extra {
                let _ = writeln!(s, "\n% {}", b.title);
                let _ = writeln!(s, "\\begin{{tabular}}{{{}}}", "l".repeat(b.header.len()));
                let _ = writeln!(s, "\\toprule");
                let h: Vec<String> = b.header.iter().map(|c| latex_escape(c)).collect();
                let _ = writeln!(s, "{} \\\\", h.join(" & "));
                let _ = writeln!(s, "\\midrule");
                for r in &b.rows {
                    let cells: Vec<String> = r.iter().map(|c| latex_escape(c)).collect();
                    let _ = writeln!(s, "{} \\\\", cells.join(" & "));
                }
                let _ = writeln!(s, "\\bottomrule\n\\end{{tabular}}");
                if let Some(n) = &b.note {
                    let _ = writeln!(s, "% {n}");
                }
            }
        }
        TableFormat::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            let head = [
                "baseline",
                "run",
                "measure",
                "baseline_mean",
                "run_mean",
                "delta",
                "p_value",
                "p_adjusted",
                "significant",
                "effect_size",
                "ci_low",
                "ci_high",
                "wins",
                "ties",
                "losses",
            ];
            let err = |e: csv::Error| Failure::bad_input(format!("cannot write CSV: {e}"));
            let mut head: Vec<String> = head.iter().map(|h| h.to_string()).collect();
            head.extend(csv_extra_header(report));
            w.write_record(&head).map_err(err)?;
            for (a, b, m, c) in report.comparisons() {
                let opt = |x: Option<f64>| x.map(num_full).unwrap_or_default();
                let mut rec: Vec<String> = vec![
                    report.runs[a].name.clone(),
                    report.runs[b].name.clone(),
                    report.measures[m].clone(),
                    num_full(report.runs[a].means[m]),
                    num_full(report.runs[b].means[m]),
                    num_full(c.delta),
                    num_full(c.p_value),
                    num_full(c.p_adjusted),
                    c.significant.to_string(),
                    opt(c.effect_size),
                    opt(c.ci.map(|x| x[0])),
                    opt(c.ci.map(|x| x[1])),
                    c.wins.to_string(),
                    c.ties.to_string(),
                    c.losses.to_string(),
                ];
                rec.extend(csv_extra_cells(report, a, b, m));
                w.write_record(&rec).map_err(err)?;
            }
            let bytes = w
                .into_inner()
                .map_err(|e| Failure::bad_input(format!("cannot write CSV: {e}")))?;
            s = String::from_utf8(bytes).unwrap_or_default();
        }
    }
    Ok(s)
}

/// The CSV columns of the many-systems analyses, after the comparison columns (none without
/// them, so the plain CSV is unchanged): the measure's ANOVA, both runs' letters, and per risk
/// weight α the reference's GeoRisk and the run's URisk/TRisk (against the baseline, run a)
/// and GeoRisk.
fn csv_extra_header(report: &ComparisonReport) -> Vec<String> {
    let mut h = Vec::new();
    if report.anova.is_some() {
        for c in [
            "anova_f",
            "anova_p_value",
            "anova_df_systems",
            "anova_df_queries",
            "anova_df_residual",
            "anova_mse",
            "anova_ss_systems",
            "anova_ss_queries",
            "anova_ss_residual",
        ] {
            h.push(c.to_string());
        }
    }
    if report.runs.iter().any(|r| r.letters.is_some()) {
        h.push("baseline_letters".into());
        h.push("run_letters".into());
    }
    if let Some(risk) = report.runs.first().and_then(|r| r.risk.as_ref()) {
        for v in risk.first().map(Vec::as_slice).unwrap_or_default() {
            let a = v.alpha;
            h.push(format!("baseline_georisk_{a}"));
            h.push(format!("run_urisk_{a}"));
            h.push(format!("run_trisk_{a}"));
            h.push(format!("run_georisk_{a}"));
        }
    }
    h
}

/// The cells of [`csv_extra_header`] for the comparison of run `b` with run `a` on measure `m`.
fn csv_extra_cells(report: &ComparisonReport, a: usize, b: usize, m: usize) -> Vec<String> {
    let opt = |x: Option<f64>| x.map(num_full).unwrap_or_default();
    let mut c = Vec::new();
    if let Some(an) = report.anova.as_ref().and_then(|v| v.get(m)) {
        c.extend([
            opt(an.f),
            opt(an.p_value),
            an.df_systems.to_string(),
            an.df_queries.to_string(),
            an.df_residual.to_string(),
            num_full(an.mse),
            num_full(an.ss_systems),
            num_full(an.ss_queries),
            num_full(an.ss_residual),
        ]);
    }
    if report.runs.iter().any(|r| r.letters.is_some()) {
        for r in [a, b] {
            c.push(
                report.runs[r]
                    .letters
                    .as_ref()
                    .and_then(|l| l.get(m))
                    .cloned()
                    .unwrap_or_default(),
            );
        }
    }
    let risk = |r: usize| report.runs[r].risk.as_ref().and_then(|v| v.get(m));
    if let (Some(ra), Some(rb)) = (risk(a), risk(b)) {
        for (va, vb) in ra.iter().zip(rb) {
            c.extend([
                opt(va.georisk),
                opt(vb.urisk),
                opt(vb.trisk),
                opt(vb.georisk),
            ]);
        }
    }
    c
}

/// An aligned plain-text table: header, dashes, rows; columns two spaces apart, lines
/// right-trimmed.
fn text_table(header: &[String], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |x| x.chars().count()))
                .chain(std::iter::once(header[c].chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| -> String {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.chars().count()))))
            .collect();
        parts.join("  ").trim_end().to_string()
    };
    let mut s = String::new();
    let _ = writeln!(s, "{}", line(header));
    let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let _ = writeln!(s, "{}", line(&dashes));
    for r in rows {
        let _ = writeln!(s, "{}", line(r));
    }
    s
}

/// One extra table of the many-systems analyses (ANOVA, groups, risk, tie ranges), shared by
/// every face of the report (text, Markdown, LaTeX, HTML).
#[derive(Debug, Clone)]
pub(crate) struct ExtraBlock {
    /// Heading.
    pub(crate) title: String,
    /// Column names.
    pub(crate) header: Vec<String>,
    /// Cells.
    pub(crate) rows: Vec<Vec<String>>,
    /// A line under the table (how to read it), if any.
    pub(crate) note: Option<String>,
}

/// The "Tie sensitivity" table from each run's `--ties` object (the JSON of
/// `trec::format::TiesView`, one per run in report order): the runs and measures whose range
/// over the orders of tied documents is not a point.
fn tie_block(report: &ComparisonReport, ties: &[serde_json::Value]) -> ExtraBlock {
    let header = [
        "run",
        "measure",
        "value",
        "min",
        "max",
        "expected",
        "queries with ties that matter",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    for (run, t) in report.runs.iter().zip(ties) {
        for (m, name) in report.measures.iter().enumerate() {
            let r = &t["all"][name];
            let (Some(lo), Some(hi), Some(e)) =
                (r["min"].as_f64(), r["max"].as_f64(), r["expected"].as_f64())
            else {
                continue;
            };
            if lo == hi {
                continue;
            }
            rows.push(vec![
                run.name.clone(),
                name.clone(),
                num(run.means[m]),
                num(lo),
                num(hi),
                num(e),
                t["queries_affected_per_measure"][name]
                    .as_u64()
                    .unwrap_or(0)
                    .to_string(),
            ]);
        }
    }
    let unsupported: Vec<String> = ties
        .first()
        .and_then(|t| t["unsupported"].as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut note = if rows.is_empty() {
        "No tie changes any compared measure of any run.".to_string()
    } else {
        "min / max / expected over every order of the documents that share a score (each group's orders equally likely); value = trec_eval's (ties by docno).".to_string()
    };
    if !unsupported.is_empty() {
        note.push_str(&format!(" No exact range for: {}.", unsupported.join(", ")));
    }
    ExtraBlock {
        title: "Tie sensitivity".into(),
        header,
        rows,
        note: Some(note),
    }
}

/// A value or `n/a` (undefined statistics are `null` in JSON).
fn opt4(x: Option<f64>) -> String {
    x.map_or("n/a".into(), num)
}

/// The ANOVA, compact-letter and risk tables of a report (empty when none was asked for).
pub(crate) fn many_systems_blocks(report: &ComparisonReport) -> Vec<ExtraBlock> {
    let mut out = Vec::new();
    if let Some(anova) = &report.anova {
        let header = [
            "measure",
            "F",
            "df systems",
            "df queries",
            "df residual",
            "p",
            "MSE",
            "SS systems",
            "SS queries",
            "SS residual",
        ]
        .map(String::from)
        .to_vec();
        let rows = report
            .measures
            .iter()
            .zip(anova)
            .map(|(m, a)| {
                vec![
                    m.clone(),
                    opt4(a.f),
                    a.df_systems.to_string(),
                    a.df_queries.to_string(),
                    a.df_residual.to_string(),
                    a.p_value.map_or("n/a".into(), fmt_p),
                    format!("{:.6}", a.mse),
                    format!("{:.6}", a.ss_systems),
                    format!("{:.6}", a.ss_queries),
                    format!("{:.6}", a.ss_residual),
                ]
            })
            .collect();
        out.push(ExtraBlock {
            title: "Two-way ANOVA (system × query, one score per cell): the system effect".into(),
            header,
            rows,
            note: Some("F = (SS systems / df systems) / MSE; p from F(df systems, df residual); n/a where the residual variance is 0.".into()),
        });
    }
    if report.runs.iter().any(|r| r.letters.is_some()) {
        let mut header = vec!["#".to_string(), "run".to_string()];
        header.extend(report.measures.iter().cloned());
        let rows = report
            .runs
            .iter()
            .enumerate()
            .map(|(r, run)| {
                let mut row = vec![letter(r), run.name.clone()];
                for m in 0..report.measures.len() {
                    let l = run
                        .letters
                        .as_ref()
                        .and_then(|l| l.get(m))
                        .cloned()
                        .unwrap_or_default();
                    row.push(format!("{} {l}", num(run.means[m])));
                }
                row
            })
            .collect();
        out.push(ExtraBlock {
            title: format!(
                "Groups ({} test, alpha {}): runs that share a letter do not differ significantly",
                report.test_name(),
                report.alpha
            ),
            header,
            rows,
            note: Some("Compact letter display (Piepho 2004) over every pair; 'a' is the group of the best mean.".into()),
        });
    }
    if report.runs.iter().any(|r| r.risk.is_some()) {
        let header = ["run", "measure", "alpha", "URisk", "TRisk", "GeoRisk"]
            .map(String::from)
            .to_vec();
        let mut rows = Vec::new();
        for run in &report.runs {
            let Some(risk) = &run.risk else { continue };
            for (m, per_alpha) in risk.iter().enumerate() {
                for v in per_alpha {
                    rows.push(vec![
                        run.name.clone(),
                        report.measures[m].clone(),
                        format!("{}", v.alpha),
                        v.urisk.map_or("-".into(), |u| format!("{u:+.4}")),
                        v.trisk.map_or(
                            if v.urisk.is_some() {
                                "n/a".into()
                            } else {
                                "-".into()
                            },
                            |t| format!("{t:+.4}"),
                        ),
                        opt4(v.georisk),
                    ]);
                }
            }
        }
        out.push(ExtraBlock {
            title: format!("Risk against {} (losses weighted by 1 + alpha)", report.runs.first().map_or("", |r| r.name.as_str())),
            header,
            rows,
            note: Some("URisk = mean of the weighted differences (Wang et al. 2012); TRisk = URisk / (sd / √n), |TRisk| > 2 a significant risk (< −2) or reward (> 2) (Dinçer et al. 2014); GeoRisk over all runs (Dinçer et al. 2016); '-' for the baseline itself, n/a where undefined.".into()),
        });
    }
    out
}

/// Full precision for CSV (shortest round-trip form; empty for NaN).
fn num_full(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x}")
    }
}

fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '_' | '%' | '&' | '#' | '$' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '\\' => out.push_str("\\textbackslash{}"),
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_continue_past_z() {
        assert_eq!(letter(0), "a");
        assert_eq!(letter(25), "z");
        assert_eq!(letter(26), "aa");
        assert_eq!(letter(27), "ab");
    }

    #[test]
    fn latex_escapes_specials() {
        assert_eq!(latex_escape("P_10 & 5%"), "P\\_10 \\& 5\\%");
    }
}
