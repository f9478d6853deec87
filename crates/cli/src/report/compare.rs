//! `routeval compare` report: the ranx-style table with significance markers, and per run and
//! measure the per-query differences from the reference (sorted) with the mean's CI.

use super::f4;
use crate::compare::{better_than, letter, num, superscript};
use routeval_report::{
    Band, BarSeries, Document, Headline, Plot, PlotKind, RefLine, Section, Table, sorted_bars,
};
use routeval_stats::{ComparisonReport, SystemScores};

/// At most this many columns per sorted-difference plot (more queries: each column is the mean
/// of a run of neighbouring ranks, so a 100k-query comparison stays small).
const MAX_BARS: usize = 200;
/// Difference plots for at most this many measures.
const MAX_MEASURES: usize = 4;

/// The comparison report; `systems` = the per-query scores the report was computed from.
pub(crate) fn document(report: &ComparisonReport, systems: &[SystemScores]) -> Document {
    let marks = better_than(report);
    let mut doc = Document {
        title: format!(
            "routeval compare: {} runs against {}",
            report.runs.len().saturating_sub(1),
            report.runs.first().map_or("", |r| r.name.as_str())
        ),
        subtitle: Some(format!(
            "{} queries; {}, alpha {}{}",
            report.queries,
            crate::compare::test_label(report),
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
            crate::compare::fmt_p(c.p_value),
            crate::compare::fmt_p(c.p_adjusted),
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
        let level = report
            .ci_level
            .map_or_else(String::new, crate::ci::level_label);
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
                "{} − {} on {} per query, sorted ({} queries{per})",
                rb.name,
                ra.name,
                report.measures[m],
                d.len()
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
pub(crate) fn push_blocks(doc: &mut Document, title: &str, blocks: &[crate::compare::ExtraBlock]) {
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
    let blocks = crate::compare::many_systems_blocks(report);
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
                    "{} − {} on {} per query, losses × (1 + {}), sorted ({} queries)",
                    run.name,
                    report.runs[0].name,
                    report.measures[m],
                    v.alpha,
                    t.len()
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
