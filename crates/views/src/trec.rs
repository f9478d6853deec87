//! `routeval trec` report: the summary measures, and per measure the distribution over queries.

use crate::f4;
use routeval_report::{
    BarSeries, Document, Headline, Plot, PlotKind, Section, Table, histogram_bins,
};
use routeval_retrieval_metrics::trec::eval::{Evaluation, summary_slots};

/// Measures shown in the headline, in this order of preference (those evaluated).
const HEADLINE: [&str; 6] = ["map", "ndcg", "ndcg_cut_10", "P_10", "recip_rank", "Rprec"];
/// At most this many per-measure histograms (the quantile table covers every measure).
const MAX_HISTOGRAMS: usize = 8;
/// Histogram bins.
const BINS: usize = 20;

fn quantile(sorted: &[f64], q: f64) -> f64 {
    // numpy's default (linear) quantile.
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The report of an evaluation. `ev` must carry per-query values for the distributions
/// (`EvalOptions::per_query`); without them only the summary is shown. `ci` = the `--ci`
/// intervals, if any.
pub fn document(
    ev: &Evaluation,
    run_name: &str,
    qrels_name: &str,
    ci: Option<&routeval_stats::Intervals>,
) -> Document {
    let runid = String::from_utf8_lossy(&ev.runid).into_owned();
    let count_slots: Vec<usize> = ev
        .measures
        .measures()
        .iter()
        .filter(|m| m.id.is_count())
        .flat_map(|m| (0..m.names.len()).map(move |k| m.offset + k))
        .collect();
    let fmt = |slot: usize, v: f64| {
        if count_slots.contains(&slot) {
            format!("{}", v as i64)
        } else {
            f4(v)
        }
    };
    let slots = summary_slots(&ev.measures);
    let mut doc = Document {
        title: format!("routeval trec: {runid}"),
        subtitle: Some(format!(
            "run {run_name} against qrels {qrels_name}; {} queries; trec_eval 10.0-rc3 measures",
            ev.num_q
        )),
        ..Default::default()
    };
    for want in HEADLINE {
        if let Some(&(name, slot)) = slots.iter().find(|(n, _)| *n == want) {
            doc.headline
                .push(Headline::new(name, fmt(slot, ev.summary[slot])));
        }
    }
    if doc.headline.is_empty()
        && let Some(&(name, slot)) = slots.first()
    {
        doc.headline
            .push(Headline::new(name, fmt(slot, ev.summary[slot])));
    }
    doc.headline
        .push(Headline::new("num_q", ev.num_q.to_string()));

    // Summary table (every measure, trec_eval's print order) with CIs when given.
    let mut cols = vec!["measure", "all"];
    if ci.is_some() {
        cols.extend(["CI low", "CI high"]);
    }
    let mut t = Table::new(cols).caption("Summary over queries (trec_eval's `all` lines)");
    for &(name, slot) in &slots {
        let mut row = vec![name.to_string(), fmt(slot, ev.summary[slot])];
        if let Some(iv) = ci {
            match iv.intervals.iter().find(|(n, _)| n == name) {
                Some((_, c)) => row.extend([f4(c.low), f4(c.high)]),
                None => row.extend(["".into(), "".into()]),
            }
        }
        t.row(row);
    }
    // Mean measures in [0, 1] as bars.
    let means = ev.interval_slots();
    let mut summary = Section::new("Summary");
    if !means.is_empty() {
        let shown: Vec<_> = means.iter().take(40).collect();
        summary.push(Plot {
            title: "Mean per measure".into(),
            x_label: "mean over queries (measure units)".into(),
            y_label: "measure".into(),
            kind: PlotKind::Bars {
                categories: shown.iter().map(|m| m.0.to_string()).collect(),
                series: vec![BarSeries {
                    name: runid.clone(),
                    values: shown.iter().map(|m| ev.summary[m.1]).collect(),
                    intervals: ci.map(|iv| {
                        shown
                            .iter()
                            .map(|m| {
                                iv.intervals
                                    .iter()
                                    .find(|(n, _)| n == m.0)
                                    .map_or((f64::NAN, f64::NAN), |(_, c)| (c.low, c.high))
                            })
                            .collect()
                    }),
                }],
                range: None,
            },
        });
    }
    summary.push(t);
    doc.sections.push(summary);

    // Distributions over queries.
    if !ev.queries.is_empty() && !means.is_empty() {
        let mut sec = Section::new("Distribution over queries");
        let mut qt = Table::new([
            "measure", "queries", "min", "25%", "median", "75%", "max", "zero",
        ])
        .caption("Per-query values (numpy linear quantiles)");
        for (k, &(name, slot, _)) in means.iter().enumerate() {
            let mut v: Vec<f64> = ev
                .queries
                .iter()
                .filter_map(|q| q.values.get(slot).copied())
                .filter(|x| x.is_finite())
                .collect();
            v.sort_by(f64::total_cmp);
            let zeros = v.iter().filter(|&&x| x == 0.0).count();
            qt.row([
                name.to_string(),
                v.len().to_string(),
                f4(quantile(&v, 0.0)),
                f4(quantile(&v, 0.25)),
                f4(quantile(&v, 0.5)),
                f4(quantile(&v, 0.75)),
                f4(quantile(&v, 1.0)),
                zeros.to_string(),
            ]);
            if k < MAX_HISTOGRAMS {
                sec.push(Plot {
                    title: format!("{name} over {} queries", v.len()),
                    x_label: format!("{name} per query (measure units)"),
                    y_label: "queries (count)".into(),
                    kind: PlotKind::Histogram {
                        bins: histogram_bins(&v, BINS),
                    },
                });
            }
        }
        if means.len() > MAX_HISTOGRAMS {
            sec.push(format!(
                "Histograms of the first {MAX_HISTOGRAMS} measures; the table covers all {}.",
                means.len()
            ));
        }
        sec.push(qt);
        doc.sections.push(sec);
    }
    if ev.judged_without_results > 0 {
        doc.notes.push(format!(
            "{} judged queries had no results in the run",
            ev.judged_without_results
        ));
    }
    if ev.run_only_queries > 0 {
        doc.notes.push(format!(
            "{} run queries have no judgments (ignored, as trec_eval does)",
            ev.run_only_queries
        ));
    }
    doc.notes.extend(crate::degenerate_notes(ci));
    doc
}
