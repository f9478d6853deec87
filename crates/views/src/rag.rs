//! `routeval rag` report: metric bars with support counts (estimated values marked), the
//! weakest cases and the notes; with `--baseline CASES2` the paired comparison's section and
//! text block.

use crate::f4;
use routeval_report::{BarSeries, Document, Headline, Plot, PlotKind, Section, Table};
use routeval_retrieval_metrics::rag::RagReport;
use routeval_retrieval_metrics::rag::compare::{Pairing, RagBaseline, RagComparison};

/// The weakest cases listed (or `--weakest N` when larger).
pub const WEAKEST: usize = 5;
/// Notes listed (grouped by text); the rest are counted.
const MAX_NOTES: usize = 50;

/// The rag report; `weakest` = `--weakest N` (at least [`WEAKEST`] are shown).
/// `ci` = the `--ci` intervals of the metric means, if any.
pub fn document(
    r: &RagReport,
    input: &str,
    weakest: i64,
    ci: Option<&routeval_stats::Intervals>,
) -> Document {
    let estimated = r.n_estimated > 0;
    let mark = if estimated { " †" } else { "" };
    let mut doc = Document {
        title: "routeval rag: retrieval and answer quality".into(),
        subtitle: Some(format!(
            "{} cases of {input}; k = {}, threshold {}, similarity: {}; rag-quality-check 0.1.0 definitions",
            r.n_cases,
            r.k,
            r.threshold,
            r.similarity.as_str()
        )),
        ..Default::default()
    };
    doc.headline
        .push(Headline::new("cases", r.n_cases.to_string()));
    for (m, v) in r.metrics.iter().take(4) {
        doc.headline.push(Headline::new(m.name(), f4(*v)));
    }
    let ci_of = |name: &str| {
        ci.and_then(|iv| iv.intervals.iter().find(|(n, _)| n == name))
            .map(|(_, c)| (c.low, c.high))
    };
    let mut cols = vec!["metric", "mean", "support (cases)"];
    if ci.is_some() {
        cols.extend(["CI low", "CI high"]);
    }
    let mut t = Table::new(cols).caption(if estimated {
        format!(
            "Mean over the cases that produced each metric; † = {} of {} cases have estimated (unlabelled) relevance",
            r.n_estimated, r.n_cases
        )
    } else {
        "Mean over the cases that produced each metric".to_string()
    });
    for (m, v) in &r.metrics {
        let mut row = vec![
            format!("{}{mark}", m.name()),
            f4(*v),
            r.support_of(*m).to_string(),
        ];
        if ci.is_some() {
            let (l, h) = ci_of(m.name()).unwrap_or((f64::NAN, f64::NAN));
            row.extend([f4(l), f4(h)]);
        }
        t.row(row);
    }
    let mut sec = Section::new("Metrics");
    if !r.metrics.is_empty() {
        sec.push(Plot {
            title: "Mean per metric (support in the label)".into(),
            x_label: "mean over cases (fraction)".into(),
            y_label: "metric".into(),
            kind: PlotKind::Bars {
                categories: r
                    .metrics
                    .iter()
                    .map(|(m, _)| format!("{}{mark} (n={})", m.name(), r.support_of(*m)))
                    .collect(),
                series: vec![BarSeries {
                    name: "mean".into(),
                    values: r.metrics.iter().map(|(_, v)| *v).collect(),
                    intervals: ci.map(|_| {
                        r.metrics
                            .iter()
                            .map(|(m, _)| ci_of(m.name()).unwrap_or((f64::NAN, f64::NAN)))
                            .collect()
                    }),
                }],
                range: Some((0.0, 1.0)),
            },
        });
    }
    sec.push(t);
    doc.sections.push(sec);

    let n = (weakest.max(0) as usize).max(WEAKEST);
    let weak = r.weakest(n as i64);
    if !weak.is_empty() {
        let mut wt = Table::new(["case", "query", "score", "estimated", "failures"])
            .caption("Weakest cases (lowest mean of their metrics)");
        for c in weak {
            wt.row([
                c.index.to_string(),
                c.query.chars().take(120).collect::<String>(),
                f4(c.score()),
                if c.estimated { "yes" } else { "no" }.to_string(),
                c.failure_reasons().collect::<Vec<_>>().join("; "),
            ]);
        }
        doc.sections.push(Section::new("Weakest cases").with(wt));
    }
    let groups = r.grouped_notes();
    for g in groups.iter().take(MAX_NOTES) {
        doc.notes.push(if g.count > 1 {
            format!("{} ({} cases)", g.text, g.count)
        } else {
            g.first.to_string()
        });
    }
    if groups.len() > MAX_NOTES {
        doc.notes
            .push(format!("… {} more kinds of note", groups.len() - MAX_NOTES));
    }
    doc.notes.extend(crate::degenerate_notes(ci));
    doc
}

// `rag --baseline CASES2`: the paired comparison's faces.

/// The report section of a `rag --baseline CASES2` comparison (`--format md`, `--html`): one row per metric
/// with the same cells as [`baseline_text`] prints.
pub fn baseline_section(b: &RagBaseline) -> routeval_report::Section {
    let c = &b.comparison;
    let mut t = routeval_report::Table::new([
        "metric",
        "cases",
        "run",
        "baseline",
        "delta",
        "p",
        "p adj",
        "significant",
        "CI of delta",
        "W/T/L",
    ])
    .caption(baseline_caption(c));
    for m in &c.metrics {
        match &m.comparison {
            None => t.row([
                m.metric.name().to_string(),
                m.cases.to_string(),
                "(no case scored by both)".into(),
            ]),
            Some(k) => t.row([
                m.metric.name().to_string(),
                m.cases.to_string(),
                f4(m.value),
                f4(m.baseline),
                signed(k.delta),
                p_text(k.p_value),
                p_text(k.p_adjusted),
                if k.significant { "yes" } else { "no" }.to_string(),
                ci_text(k.ci),
                format!("{}/{}/{}", k.wins, k.ties, k.losses),
            ]),
        }
    }
    routeval_report::Section::new(format!("vs baseline {}", b.cases_file)).with(t)
}

/// What was compared and how (the text block's first line, without the path).
fn baseline_caption(c: &RagComparison) -> String {
    let pairing = match c.pairing {
        Pairing::Id => "by id",
        Pairing::Index => "by position",
    };
    format!(
        "{} paired cases {pairing}; {} test, {} correction, alpha {}; {} paired bootstrap CI of the mean difference",
        c.cases,
        c.test.name(),
        c.correction.name(),
        c.alpha,
        crate::level_label(c.ci_level.unwrap_or(0.95)),
    )
}

/// The text block `rag --baseline CASES2` prints under the summary: one line per metric.
pub fn baseline_text(b: &RagBaseline) -> String {
    let c = &b.comparison;
    let p = p_text;
    let pairing = match c.pairing {
        Pairing::Id => "by id",
        Pairing::Index => "by position",
    };
    let mut t = format!(
        "vs baseline {} ({} paired cases {pairing}; {} test, {} correction, alpha {}; {} paired bootstrap CI of the mean difference)\n",
        b.cases_file,
        c.cases,
        c.test.name(),
        c.correction.name(),
        c.alpha,
        crate::level_label(c.ci_level.unwrap_or(0.95)),
    );
    t.push_str(&format!(
        "  {:<19} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8}  {:<20} {}\n",
        "metric", "cases", "run", "baseline", "delta", "p", "p adj", "CI of delta", "W/T/L"
    ));
    for m in &c.metrics {
        match &m.comparison {
            None => t.push_str(&format!(
                "  {:<19} {:>6}  (no case scored by both)\n",
                m.metric.name(),
                m.cases
            )),
            Some(k) => {
                let ci = ci_text(k.ci);
                t.push_str(&format!(
                    "  {:<19} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8}{} {:<20} {}/{}/{}\n",
                    m.metric.name(),
                    m.cases,
                    f4(m.value),
                    f4(m.baseline),
                    signed(k.delta),
                    p(k.p_value),
                    p(k.p_adjusted),
                    if k.significant { "*" } else { " " },
                    ci,
                    k.wins,
                    k.ties,
                    k.losses
                ));
            }
        }
    }
    t.push_str("  (* significant after the correction)\n");
    for m in &c.metrics {
        if let Some(k) = &m.comparison {
            if let Some(note) = k.note {
                t.push_str(&format!("  note: {}: no test ({note})\n", m.metric.name()));
            }
            if let Some(why) = k.ci_degenerate {
                t.push_str(&format!("  note: {}: CI {why}\n", m.metric.name()));
            }
        }
    }
    t
}

/// A signed difference with 4 decimals (`n/a`).
fn signed(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.4}")
    } else {
        "n/a".into()
    }
}

/// A p-value with 4 decimals, `<0.0001` below (`n/a`).
fn p_text(x: f64) -> String {
    if !x.is_finite() {
        "n/a".to_string()
    } else if x < 1e-4 {
        "<0.0001".to_string()
    } else {
        format!("{x:.4}")
    }
}

/// A CI as `[low, high]` (`n/a` without finite bounds).
fn ci_text(ci: Option<[f64; 2]>) -> String {
    ci.filter(|x| x[0].is_finite() && x[1].is_finite())
        .map_or("n/a".to_string(), |x| {
            format!("[{}, {}]", signed(x[0]), signed(x[1]))
        })
}

/// The text `rag` prints (the reference's summary for `prog`, the `weakest` cases), followed,
/// with `--ci`, by the intervals block and, with `--baseline`, by the comparison block.
pub fn summary_text(
    report: &RagReport,
    prog: &str,
    weakest: i64,
    intervals: Option<&routeval_stats::Intervals>,
    comparison: Option<&RagBaseline>,
) -> String {
    let mut t = report.render(prog, weakest);
    if let Some(iv) = intervals {
        t.push_str("\n\n");
        t.push_str(crate::intervals_text(iv, |x| format!("{x:.4}")).trim_end());
    }
    if let Some(c) = comparison {
        t.push_str("\n\n");
        t.push_str(baseline_text(c).trim_end());
    }
    t
}

/// The report's JSON (`json.dumps(to_dict, indent=2)`, byte-identical to the reference)
/// followed, with `--ci`, by a `"ci"` member and, with `--baseline`, a last `"baseline"`
/// member (indented the same way).
///
/// # Errors
/// The writer's errors.
pub fn write_report_json<W: std::io::Write + Send>(
    report: &RagReport,
    intervals: Option<&routeval_stats::Intervals>,
    comparison: Option<&RagBaseline>,
    w: &mut W,
) -> std::io::Result<()> {
    let mut members: Vec<(&str, serde_json::Value)> = Vec::new();
    if let Some(iv) = intervals {
        members.push(("ci", crate::intervals_json(iv)));
    }
    if let Some(c) = comparison {
        members.push(("baseline", serde_json::to_value(c).unwrap_or_default()));
    }
    if members.is_empty() {
        return report.write_json(w);
    }
    // Streamed: the report's own members, then these, then the closing brace.
    report.write_json_open(w)?;
    for (key, value) in members {
        let block = serde_json::to_string_pretty(&value)
            .map_err(std::io::Error::other)?
            .replace('\n', "\n  ");
        write!(w, ",\n  \"{key}\": {block}")?;
    }
    w.write_all(b"\n}")
}
