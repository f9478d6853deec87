//! `routeval compare`: is run B really better than the baseline A? Every run is scored with
//! trec_eval's measures on every judged query (`-c`), then compared with the baseline (or every
//! pair) by a paired test; p-values are corrected over the whole table. The statistics and the
//! report are `routeval_stats::compare`; this module reads files and renders the report.

use crate::common::{self, CmdResult, Failure};
use crate::trec::read_all;
use clap::{Args, ValueEnum};
use routeval_retrieval_metrics::trec::{self, EvalOptions, MeasureSet, Qrels};
use routeval_stats::{
    CompareOptions, ComparisonReport, Correction, PairedTest, SystemScores, compare_systems,
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
    /// Paired test: t (scipy.stats.ttest_rel), wilcoxon (scipy.stats.wilcoxon defaults),
    /// fisher (sign-flip randomization; exact for ≤ 20 queries), bootstrap (paired bootstrap
    /// test on centred differences).
    #[arg(long, default_value = "t", value_parser = parse_test)]
    pub(crate) test: PairedTest,
    /// Monte Carlo iterations of the fisher (> 20 queries) and bootstrap tests.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub(crate) iterations: u64,
    /// Seed of every resampling step (tests and confidence intervals).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub(crate) seed: u64,
    /// Multiple-testing correction over every comparison in the table (statsmodels
    /// multipletests): holm, bonferroni or none.
    #[arg(long, default_value = "holm", value_parser = parse_correction)]
    pub(crate) correction: Correction,
    /// Family-wise significance level.
    #[arg(long, value_name = "ALPHA", default_value_t = 0.05)]
    pub(crate) alpha: f64,
    /// Level of the paired bootstrap percentile CI of each mean difference.
    #[arg(long, value_name = "LEVEL", default_value_t = 0.95)]
    pub(crate) ci: f64,
    /// Bootstrap replicates of the confidence intervals.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub(crate) bootstrap: u64,
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
    /// Add to each run of the JSON report a "ties" object: every measure's min, max and
    /// expected value over the orders of tied documents, as `routeval trec --ties --json`.
    #[arg(long, requires = "json")]
    pub(crate) ties: bool,
    /// Write the output to PATH instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) html: crate::report::HtmlArg,
}

fn parse_test(s: &str) -> Result<PairedTest, String> {
    s.parse()
        .map_err(|e: routeval_stats::StatsError| e.to_string())
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
    let measure_args: Vec<String> = if args.measures.is_empty() {
        DEFAULT_MEASURES.iter().map(|s| s.to_string()).collect()
    } else {
        args.measures.clone()
    };
    let measures = MeasureSet::parse(&measure_args).map_err(Failure::from)?;
    // Values compared: every per-query numeric value.
    let values = trec::compared::compared_values(&measures).map_err(Failure::bad_input)?;
    let opts = EvalOptions {
        measures,
        relevance_level: args.level,
        complete: true,
        judged_only: args.judged_only,
        max_docs_per_topic: args
            .max_docs
            .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX)),
        num_docs_in_coll: args.num_docs,
        per_query: true,
        ties: args.ties,
        ..EvalOptions::default()
    };
    let mut paths: Vec<&PathBuf> = vec![&args.baseline];
    paths.extend(args.runs.iter());
    let stdin_uses = std::iter::once(&args.qrels)
        .chain(paths.iter().copied())
        .filter(|p| p.as_path() == Path::new("-"))
        .count();
    if stdin_uses > 1 {
        return Err(Failure::bad_input("only one input can be stdin ('-')"));
    }
    crate::report::check_target(&args.html)?;
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
        let path = path.display().to_string();
        let system = trec::compared::system_scores(&ev, &values, qrels.len(), &name, &path)
            .map_err(Failure::bad_input)?;
        tags.push(String::from_utf8_lossy(&ev.runid).into_owned());
        systems.push(system);
    }
    // Names: run tags, the file stem where tags repeat.
    trec::compared::name_systems(&mut systems, &tags);
    let names: Vec<String> = values.iter().map(|v| v.name.clone()).collect();
    let copts = CompareOptions {
        test: args.test,
        iterations: args.iterations,
        seed: args.seed,
        correction: args.correction,
        alpha: args.alpha,
        ci_level: (!args.no_ci).then_some(args.ci),
        ci_replicates: args.bootstrap,
        all_pairs: args.all_pairs,
    };
    let report = compare_systems(&names, &systems, &copts).map_err(Failure::bad_input)?;
    for n in &notes {
        eprintln!("{n}");
    }
    if args.html.html.is_some() {
        let mut doc = crate::report::compare::document(&report, &systems);
        doc.notes.clone_from(&notes);
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
        render(&report, args.format)?.into_bytes()
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
                report.test,
                report.correction,
                report.alpha
            );
        }
        if !worse.is_empty() {
            return Ok(common::EXIT_STRICT);
        }
    }
    Ok(common::EXIT_OK)
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

pub(crate) fn num(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else {
        format!("{x:.4}")
    }
}

fn render(report: &ComparisonReport, format: TableFormat) -> Result<String, Failure> {
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
run ({} test, {} correction, alpha {}).",
        report.queries, report.test, report.correction, report.alpha
    );
    let mut s = String::new();
    match format {
        TableFormat::Text => {
            let widths: Vec<usize> = (0..header.len())
                .map(|c| {
                    rows.iter()
                        .map(|r| r[c].chars().count())
                        .chain(std::iter::once(header[c].chars().count()))
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let line = |cells: &[String]| -> String {
                let parts: Vec<String> = cells
                    .iter()
                    .zip(&widths)
                    .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
                    .collect();
                parts.join("  ").trim_end().to_string()
            };
            let _ = writeln!(s, "{}", line(&header));
            let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            let _ = writeln!(s, "{}", line(&dashes));
            for r in &rows {
                let _ = writeln!(s, "{}", line(r));
            }
            let _ = writeln!(s, "\n{legend}");
        }
        TableFormat::Md => {
            let _ = writeln!(s, "| {} |", header.join(" | "));
            let _ = writeln!(
                s,
                "|{}|",
                header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
            );
            for r in &rows {
                let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
                let _ = writeln!(s, "| {} |", cells.join(" | "));
            }
            let _ = writeln!(s, "\n{legend}");
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
            w.write_record(head).map_err(err)?;
            for (a, b, m, c) in report.comparisons() {
                let opt = |x: Option<f64>| x.map(num_full).unwrap_or_default();
                w.write_record([
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
                ])
                .map_err(err)?;
            }
            let bytes = w
                .into_inner()
                .map_err(|e| Failure::bad_input(format!("cannot write CSV: {e}")))?;
            s = String::from_utf8(bytes).unwrap_or_default();
        }
    }
    Ok(s)
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
