//! `routeval rag` report: metric bars with support counts (estimated values marked), the
//! weakest cases and the notes.

use crate::f4;
use routeval_report::{BarSeries, Document, Headline, Plot, PlotKind, Section, Table};
use routeval_retrieval_metrics::rag::RagReport;

/// The weakest cases listed (or `--weakest N` when larger).
const WEAKEST: usize = 5;
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
