//! `routeval compare`'s faces of one typed [`ComparisonReport`]: the ranx-style table as
//! aligned text, Markdown, LaTeX or long-form CSV ([`render`]), the many-systems and tie blocks
//! every face shares ([`ExtraBlock`]), and the report [`document`] (`--html`): the table with
//! significance markers, and per run and measure the per-query differences from the reference
//! (sorted) with the mean's CI.

use crate::f4;
use routeval_report::{
    Band, BarSeries, Document, Headline, Plot, PlotKind, RefLine, Section, Table, sorted_bars,
};
use routeval_stats::{ComparisonReport, SystemScores};
use std::fmt::Write as _;

/// Table formats of `routeval compare` (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Aligned plain text (ranx's layout).
    Text,
    /// A Markdown table.
    Md,
    /// A LaTeX `tabular`.
    Latex,
    /// One CSV row per comparison (long form).
    Csv,
}

/// Why a table could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The CSV writer failed (`cannot write CSV: ...`).
    #[error("cannot write CSV: {0}")]
    Csv(String),
}

/// `t test, holm correction`, or for a family test `tukey test, family-wise over every pair`.
pub fn test_label(report: &ComparisonReport) -> String {
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

/// A p-value for messages: 4 significant digits.
pub fn fmt_p(p: f64) -> String {
    if p.is_nan() {
        "nan".into()
    } else if p >= 1e-4 {
        format!("{p:.4}")
    } else {
        format!("{p:.3e}")
    }
}

/// A p-value cell of a report table: [`fmt_p`], or `n/a` when there is no test behind it
/// (NaN: the report's notes say why; `--json` has `null`, CSV an empty cell).
fn p_cell(p: f64) -> String {
    if p.is_nan() { "n/a".into() } else { fmt_p(p) }
}

/// Run letters a, b, …, z, aa, ab, … (ranx's labels): [`routeval_stats::anova::letter_name`],
/// the one definition the compact letter display uses too.
pub fn letter(i: usize) -> String {
    routeval_stats::anova::letter_name(i)
}

/// `s` in Unicode superscript letters (the marks naming the runs a run beats in the table).
pub fn superscript(s: &str) -> String {
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
pub fn better_than(report: &ComparisonReport) -> Vec<Vec<Vec<usize>>> {
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
pub fn num(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else {
        format!("{x:.4}")
    }
}

/// The table of `report` in `format` (what `routeval compare` prints without `--json`): the
/// runs' means with the difference from run a and superscript letters of the runs each is
/// significantly better than, the legend, then the many-systems blocks and `more` (e.g.
/// [`tie_block`]); CSV is one row per comparison with full-precision values. Errors: only
/// [`RenderError::Csv`] (the CSV writer).
pub fn render(
    report: &ComparisonReport,
    format: TableFormat,
    more: &[ExtraBlock],
) -> Result<String, RenderError> {
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
        "{}; mean (difference from run a); superscripts: significantly better than that \
run ({}, alpha {}).",
        crate::queries(report.queries),
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
        if let Some(d) = c.ci_degenerate {
            let _ = write!(
                notes,
                "\nnote: {} vs {} on {}: CI {d}.",
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
            for line in legend.lines() {
                let _ = writeln!(s, "% {line}");
            }
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
                    for line in n.lines() {
                        let _ = writeln!(s, "% {line}");
                    }
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
                "note",
                "ci_degenerate",
            ];
            let err = |e: csv::Error| RenderError::Csv(e.to_string());
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
                    // Why the test or the interval has no evidence behind it (empty when it
                    // has): the notes the JSON, text, md and HTML faces carry.
                    c.note.unwrap_or_default().to_string(),
                    c.ci_degenerate.map(|d| d.reason()).unwrap_or_default(),
                ];
                rec.extend(csv_extra_cells(report, a, b, m));
                w.write_record(&rec).map_err(err)?;
            }
            let bytes = w
                .into_inner()
                .map_err(|e| RenderError::Csv(e.to_string()))?;
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
pub struct ExtraBlock {
    /// Heading.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Cells.
    pub rows: Vec<Vec<String>>,
    /// A line under the table (how to read it), if any.
    pub note: Option<String>,
}

/// The "Tie sensitivity" table from each run's `--ties` object (the JSON of
/// `trec::format::TiesView`, one per run in report order): the runs and measures whose range
/// over the orders of tied documents is not a point.
pub fn tie_block(report: &ComparisonReport, ties: &[serde_json::Value]) -> ExtraBlock {
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
pub fn many_systems_blocks(report: &ComparisonReport) -> Vec<ExtraBlock> {
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

/// At most this many columns per sorted-difference plot (more queries: each column is the mean
/// of a run of neighbouring ranks, so a 100k-query comparison stays small).
const MAX_BARS: usize = 200;
/// Difference plots for at most this many measures.
const MAX_MEASURES: usize = 4;

/// The comparison report; `systems` = the per-query scores the report was computed from.
pub fn document(report: &ComparisonReport, systems: &[SystemScores]) -> Document {
    let marks = better_than(report);
    let mut doc = Document {
        title: format!(
            "routeval compare: {} runs against {}",
            report.runs.len().saturating_sub(1),
            report.runs.first().map_or("", |r| r.name.as_str())
        ),
        subtitle: Some(format!(
            "{}; {}, alpha {}{}",
            crate::queries(report.queries),
            test_label(report),
            report.alpha,
            report
                .ci_level
                .map(|l| format!("; paired bootstrap CIs at {l}"))
                .unwrap_or_default()
        )),
        ..Default::default()
    };
    if let Some(m0) = report.measures.first() {
        for run in &report.runs {
            doc.headline.push(Headline::new(
                format!("{m0} {}", run.name),
                num(run.means[0]),
            ));
        }
    }
    // The ranx-style table.
    let mut cols = vec!["#".to_string(), "run".to_string()];
    cols.extend(report.measures.iter().cloned());
    let mut t = Table::new(cols)
        .caption("mean (difference from run a); superscripts: significantly better than that run");
    for (r, run) in report.runs.iter().enumerate() {
        let mut row = vec![letter(r), run.name.clone()];
        for m in 0..report.measures.len() {
            let mut cell = num(run.means[m]);
            if let Some(v) = &run.vs_baseline {
                cell.push_str(&format!(" ({:+.4})", v[m].delta));
            }
            let letters: String = marks[r][m].iter().map(|&i| letter(i)).collect();
            if !letters.is_empty() {
                cell.push_str(&superscript(&letters));
            }
            row.push(cell);
        }
        t.row(row);
    }
    let mut sec = Section::new("Runs");
    let n_m = report.measures.len();
    if n_m > 0 {
        sec.push(Plot {
            title: "Mean per run and measure".into(),
            x_label: "mean over queries (measure units)".into(),
            y_label: "measure".into(),
            kind: PlotKind::Bars {
                categories: report.measures.clone(),
                series: report
                    .runs
                    .iter()
                    .map(|run| BarSeries {
                        name: run.name.clone(),
                        values: run.means.clone(),
                        intervals: None,
                    })
                    .collect(),
                range: None,
            },
        });
    }
    sec.push(t);
    doc.sections.push(sec);
    many_systems(&mut doc, report, systems);

    // Comparisons table and sorted per-query differences.
    let mut ct = Table::new([
        "run",
        "vs",
        "measure",
        "delta",
        "CI low",
        "CI high",
        "p",
        "p adjusted",
        "significant",
        "effect d_z",
        "wins",
        "ties",
        "losses",
    ])
    .caption("Paired comparisons (delta = run − reference)");
    let mut plots = Section::new("Per-query differences");
    for (a, b, m, c) in report.comparisons() {
        let (ra, rb) = (&report.runs[a], &report.runs[b]);
        ct.row([
            rb.name.clone(),
            ra.name.clone(),
            report.measures[m].clone(),
            format!("{:+.4}", c.delta),
            c.ci.map_or("".into(), |x| f4(x[0])),
            c.ci.map_or("".into(), |x| f4(x[1])),
            p_cell(c.p_value),
            p_cell(c.p_adjusted),
            if c.significant { "yes" } else { "no" }.into(),
            c.effect_size.map_or("n/a".into(), f4),
            c.wins.to_string(),
            c.ties.to_string(),
            c.losses.to_string(),
        ]);
        if m >= MAX_MEASURES {
            continue;
        }
        let (Some(sa), Some(sb)) = (systems.get(a), systems.get(b)) else {
            continue;
        };
        let (Some(xa), Some(xb)) = (sa.scores.get(m), sb.scores.get(m)) else {
            continue;
        };
        let mut d: Vec<f64> = xb.iter().zip(xa).map(|(y, x)| y - x).collect();
        d.sort_by(f64::total_cmp);
        let level = report.ci_level.map_or_else(String::new, crate::level_label);
        let band = c.ci.map(|[lo, hi]| Band {
            low: lo,
            high: hi,
            label: format!("{level} CI of the mean [{lo:+.4}, {hi:+.4}]"),
        });
        let bars = sorted_bars(&d, MAX_BARS);
        let per = if bars.len() < d.len() {
            format!(
                "; each column the mean of ~{} ranks",
                d.len().div_ceil(bars.len())
            )
        } else {
            String::new()
        };
        plots.push(Plot {
            title: format!(
                "{} − {} on {} per query, sorted ({}{per})",
                rb.name,
                ra.name,
                report.measures[m],
                crate::queries(d.len())
            ),
            x_label: "query rank by difference".into(),
            y_label: format!("{} difference (measure units)", report.measures[m]),
            kind: PlotKind::SortedBars {
                bars,
                hlines: vec![RefLine {
                    at: c.delta,
                    label: format!("mean {:+.4}", c.delta),
                }],
                band,
            },
        });
    }
    if n_m > MAX_MEASURES {
        plots.push(format!(
            "Difference plots for the first {MAX_MEASURES} measures; the table covers all {n_m}."
        ));
    }
    plots.push(ct);
    doc.sections.push(plots);
    // Comparisons without evidence behind them (routeval_stats): the test, the interval.
    for (a, b, m, c) in report.comparisons() {
        let what = format!(
            "{} vs {} on {}",
            report.runs[b].name, report.runs[a].name, report.measures[m]
        );
        if let Some(note) = c.note {
            doc.notes.push(format!(
                "{what}: no test ({note}); never marked significant"
            ));
        }
        if let Some(d) = c.ci_degenerate {
            doc.notes.push(format!("{what}: CI {d}"));
        }
    }
    doc
}

/// A section of `blocks` (tables with their notes) titled `title`; nothing when empty.
pub fn push_blocks(doc: &mut Document, title: &str, blocks: &[ExtraBlock]) {
    if blocks.is_empty() {
        return;
    }
    let mut sec = Section::new(title);
    for b in blocks {
        let mut t = Table::new(b.header.clone()).caption(b.title.clone());
        for r in &b.rows {
            t.row(r.clone());
        }
        sec.push(t);
        if let Some(n) = &b.note {
            sec.push(n.clone());
        }
    }
    doc.sections.push(sec);
}

/// The ANOVA, compact letters and risk tables (the same blocks as the text, Markdown and LaTeX
/// faces), and per run and measure the loss-weighted per-query differences as sorted bars.
fn many_systems(doc: &mut Document, report: &ComparisonReport, systems: &[SystemScores]) {
    let blocks = many_systems_blocks(report);
    if blocks.is_empty() {
        return;
    }
    let mut sec = Section::new("Many systems");
    for b in blocks {
        let mut t = Table::new(b.header).caption(b.title);
        for r in b.rows {
            t.row(r);
        }
        sec.push(t);
        if let Some(n) = b.note {
            sec.push(n);
        }
    }
    // Which queries pay for the mean gain: t_j = Δ_j, or (1 + α) Δ_j for a loss, sorted.
    let base = systems.first();
    for (r, run) in report.runs.iter().enumerate().skip(1) {
        let Some(risk) = &run.risk else { continue };
        for (m, per_alpha) in risk.iter().enumerate().take(MAX_MEASURES) {
            let (Some(v), Some(xb), Some(xa)) = (
                per_alpha.last(),
                systems.get(r).and_then(|s| s.scores.get(m)),
                base.and_then(|s| s.scores.get(m)),
            ) else {
                continue;
            };
            let mut t: Vec<f64> = xb
                .iter()
                .zip(xa)
                .map(|(y, x)| {
                    let d = y - x;
                    if d >= 0.0 { d } else { (1.0 + v.alpha) * d }
                })
                .collect();
            t.sort_by(f64::total_cmp);
            let bars = sorted_bars(&t, MAX_BARS);
            sec.push(Plot {
                title: format!(
                    "{} − {} on {} per query, losses × (1 + {}), sorted ({})",
                    run.name,
                    report.runs[0].name,
                    report.measures[m],
                    v.alpha,
                    crate::queries(t.len())
                ),
                x_label: "query rank by weighted difference".into(),
                y_label: format!("{} weighted difference (measure units)", report.measures[m]),
                kind: PlotKind::SortedBars {
                    bars,
                    hlines: v
                        .urisk
                        .map(|u| RefLine {
                            at: u,
                            label: format!("URisk {u:+.4}"),
                        })
                        .into_iter()
                        .collect(),
                    band: None,
                },
            });
        }
    }
    doc.sections.push(sec);
}

/// `compare --json`: the report as compact JSON and a newline; with tie sensitivity
/// (`ties`: one block per run, in run order) each run object gains `"ties"`.
///
/// # Errors
/// serde_json's, when the report cannot be serialised.
pub fn json_bytes(
    report: &ComparisonReport,
    ties: Option<Vec<serde_json::Value>>,
) -> Result<Vec<u8>, serde_json::Error> {
    let mut v = match ties {
        Some(ties) => serde_json::to_value(report).and_then(|mut j| {
            if let Some(runs) = j.get_mut("runs").and_then(|r| r.as_array_mut()) {
                for (run, t) in runs.iter_mut().zip(ties) {
                    if let Some(o) = run.as_object_mut() {
                        o.insert("ties".into(), t);
                    }
                }
            }
            serde_json::to_vec(&j)
        }),
        None => serde_json::to_vec(report),
    }?;
    v.push(b'\n');
    Ok(v)
}

/// `compare --html`'s document (also Python's `ComparisonReport.to_html()`/`to_markdown()`):
/// [`document`] with the tie-sensitivity blocks, its notes
/// after `input_notes` (the inputs' stderr notes), then the report's notes (`note: …`).
pub fn html_document(
    report: &ComparisonReport,
    systems: &[SystemScores],
    tie_blocks: &[ExtraBlock],
    input_notes: &[String],
) -> Document {
    let mut doc = document(report, systems);
    push_blocks(&mut doc, "Tie sensitivity", tie_blocks);
    let own = std::mem::take(&mut doc.notes);
    doc.notes = input_notes.to_vec();
    doc.notes.extend(own);
    doc.notes
        .extend(report.notes.iter().map(|n| format!("note: {n}")));
    doc
}

/// `compare --fail-if-worse`: one `fail: …` line per (run, measure) significantly worse than
/// the baseline (delta with 4 decimals, the adjusted p, the test, correction and alpha);
/// empty when none is.
pub fn worse_lines(report: &ComparisonReport) -> Vec<String> {
    report
        .significantly_worse()
        .into_iter()
        .filter_map(|(r, m)| {
            let c = &report.runs[r].vs_baseline.as_ref()?[m];
            Some(format!(
                "fail: {} is significantly worse than {} on {}: delta {:+.4}, p_adjusted {} ({}, {}, alpha {})",
                report.runs[r].name,
                report.runs[0].name,
                report.measures[m],
                c.delta,
                fmt_p(c.p_adjusted),
                report.test_name(),
                report.correction_name(),
                report.alpha
            ))
        })
        .collect()
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
