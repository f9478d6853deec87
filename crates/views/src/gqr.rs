//! `routeval gqr score` / `gqr sweep` reports: per-set accuracy bars (CIs with `--ci`), the
//! 4-class confusion matrix, the latency histogram; for a sweep ID vs OOD accuracy and the
//! score over τ with the chosen τ.

use crate::pct;
use routeval_report::{
    BarSeries, Document, Headline, Plot, PlotKind, RefLine, Section, Table, XySeries, XyStyle,
    histogram_bins,
};
use routeval_routing_scores::gqr::GqrBaseline;
use routeval_routing_scores::gqr::report::{row as text_row, set_display_name as set_name};
use routeval_routing_scores::gqr::run::ScoreRun;
use routeval_sweep::gqr::GqrSweepReport;
use serde_json::{Map, Value, json};

/// One scored set of a GQR run (defined with the run, `routeval_routing_scores::gqr::run`).
pub use routeval_routing_scores::gqr::run::SetAccuracy;

/// What `gqr score` computed, for the report.
pub struct ScoreView<'a> {
    /// `GQR-Bench` or `GQR-unseen`.
    pub benchmark: &'static str,
    /// `(label, JSON key, fraction)`: ID accuracy, OOD accuracy, the score (NaN = n/a).
    pub headline: [(String, &'static str, f64); 3],
    /// Per set.
    pub sets: Vec<SetAccuracy>,
    /// `(gold, predicted)` per row: domain labels 0..=2, 3 = OOD.
    pub gold_pred: Vec<(i64, i64)>,
    /// Router latency per text (ms), empty for a predictions file.
    pub latency_ms: &'a [f64],
    /// `--ci` intervals of `[ID accuracy, OOD accuracy, score]`.
    pub ci: Option<&'a routeval_stats::Intervals>,
    /// Sets that are missing (a partial score).
    pub missing: Vec<String>,
    /// Where the data came from.
    pub data: String,
}

/// GQR-Bench's four classes in label order (`routeval_core::Domain`, 3 = OOD).
const CLASSES: [&str; 4] = ["law", "finance", "healthcare", "OOD"];

/// The `gqr score` report.
pub fn score_document(v: &ScoreView<'_>, source: &str) -> Document {
    let mut doc = Document {
        title: format!("routeval gqr score: {} ({source})", v.benchmark),
        subtitle: Some(format!(
            "{} rows in {} sets; data {}",
            v.gold_pred.len(),
            v.sets.len(),
            v.data
        )),
        ..Default::default()
    };
    for (label, _, x) in &v.headline {
        doc.headline
            .push(Headline::new(format!("{label} (%)"), pct(*x)));
    }
    let ci_of = |i: usize| {
        v.ci.and_then(|iv| iv.intervals.get(i))
            .map(|(_, c)| (c.low, c.high))
    };
    let mut sec = Section::new("Score");
    sec.push(Plot {
        title: if v.ci.is_some() {
            "Accuracy and score, with bootstrap CIs".into()
        } else {
            "Accuracy and score".into()
        },
        x_label: "percent (%)".into(),
        y_label: "".into(),
        kind: PlotKind::Bars {
            categories: v.headline.iter().map(|h| h.0.clone()).collect(),
            series: vec![BarSeries {
                name: v.benchmark.into(),
                values: v.headline.iter().map(|h| h.2 * 100.0).collect(),
                intervals: v.ci.map(|_| {
                    (0..3)
                        .map(|i| {
                            ci_of(i).map_or((f64::NAN, f64::NAN), |(l, h)| (l * 100.0, h * 100.0))
                        })
                        .collect()
                }),
            }],
            range: Some((0.0, 100.0)),
        },
    });
    let mut cols = vec!["", "percent"];
    if v.ci.is_some() {
        cols.extend(["CI low", "CI high"]);
    }
    let mut t = Table::new(cols);
    for (i, (label, _, x)) in v.headline.iter().enumerate() {
        let mut row = vec![label.clone(), pct(*x)];
        if v.ci.is_some() {
            let (l, h) = ci_of(i).unwrap_or((f64::NAN, f64::NAN));
            row.extend([pct(l), pct(h)]);
        }
        t.row(row);
    }
    sec.push(t);
    doc.sections.push(sec);

    let with_ci = v.ci.is_some() && v.sets.iter().any(|s| s.ci.is_some());
    let mut cols = vec!["set", "kind", "rows", "accuracy (%)"];
    if with_ci {
        cols.extend(["CI low (%)", "CI high (%)"]);
    }
    let mut st = Table::new(cols);
    for s in &v.sets {
        let mut row = vec![
            s.name.clone(),
            s.kind.to_string(),
            s.rows.to_string(),
            pct(s.accuracy),
        ];
        if with_ci {
            let (l, h) = s.ci.unwrap_or((f64::NAN, f64::NAN));
            row.extend([pct(l), pct(h)]);
        }
        st.row(row);
    }
    doc.sections.push(
        Section::new("Accuracy per set")
            .with(Plot {
                title: if with_ci {
                    "Accuracy per set, with bootstrap CIs".into()
                } else {
                    "Accuracy per set".into()
                },
                x_label: "accuracy (%)".into(),
                y_label: "set".into(),
                kind: PlotKind::Bars {
                    categories: v
                        .sets
                        .iter()
                        .map(|s| format!("{} ({})", s.name, s.kind))
                        .collect(),
                    series: vec![BarSeries {
                        name: "accuracy".into(),
                        values: v.sets.iter().map(|s| s.accuracy * 100.0).collect(),
                        intervals: with_ci.then(|| {
                            v.sets
                                .iter()
                                .map(|s| {
                                    s.ci.map_or((f64::NAN, f64::NAN), |(l, h)| {
                                        (l * 100.0, h * 100.0)
                                    })
                                })
                                .collect()
                        }),
                    }],
                    range: Some((0.0, 100.0)),
                },
            })
            .with(st),
    );

    // 4-class confusion matrix (+ a column for labels outside 0..=3).
    let mut cols: Vec<String> = CLASSES.iter().map(|c| c.to_string()).collect();
    let other = v.gold_pred.iter().any(|&(_, p)| !(0..4).contains(&p));
    if other {
        cols.push("other label".into());
    }
    let mut counts = vec![vec![0u64; cols.len()]; 4];
    for &(g, p) in &v.gold_pred {
        let Ok(g) = usize::try_from(g) else { continue };
        if g >= 4 {
            continue;
        }
        let c = usize::try_from(p).ok().filter(|&p| p < 4).unwrap_or(4);
        counts[g][c] += 1;
    }
    let mut ct =
        Table::new(std::iter::once("gold \\ predicted".to_string()).chain(cols.iter().cloned()));
    for (g, row) in counts.iter().enumerate() {
        ct.row(std::iter::once(CLASSES[g].to_string()).chain(row.iter().map(u64::to_string)));
    }
    doc.sections.push(
        Section::new("Confusion matrix")
            .with(Plot {
                title: "Predicted vs gold class (3 domains + OOD)".into(),
                x_label: "predicted class".into(),
                y_label: "gold class".into(),
                kind: PlotKind::Heatmap {
                    rows: CLASSES.iter().map(|c| c.to_string()).collect(),
                    columns: cols,
                    counts,
                },
            })
            .with(ct),
    );

    if !v.latency_ms.is_empty() {
        let mut l: Vec<f64> = v.latency_ms.to_vec();
        l.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let h = (l.len() - 1) as f64 * p;
            let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
            l[lo] + (h - lo as f64) * (l[hi] - l[lo])
        };
        let mut lt = Table::new(["texts", "p50 (ms)", "p95 (ms)", "p99 (ms)", "max (ms)"]);
        lt.row([
            l.len().to_string(),
            format!("{:.3}", q(0.5)),
            format!("{:.3}", q(0.95)),
            format!("{:.3}", q(0.99)),
            format!("{:.3}", q(1.0)),
        ]);
        doc.sections.push(
            Section::new("Router latency")
                .with(Plot {
                    title: format!("Latency per text ({} texts)", l.len()),
                    x_label: "latency (ms)".into(),
                    y_label: "texts (count)".into(),
                    kind: PlotKind::Histogram {
                        bins: histogram_bins(&l, 30),
                    },
                })
                .with(lt),
        );
    }
    if !v.missing.is_empty() {
        doc.notes.push(format!(
            "PARTIAL: {} sets missing ({}); the score is not the benchmark's",
            v.missing.len(),
            v.missing.join(", ")
        ));
    }
    doc.notes.extend(crate::degenerate_notes(v.ci));
    doc
}

/// One threshold of a `gqr sweep`.
struct SweepRow {
    /// τ.
    tau: f64,
    /// ID accuracy (fraction).
    id: f64,
    /// OOD accuracy (fraction).
    ood: f64,
    /// The score (fraction).
    score: f64,
}

/// The `gqr sweep` report of `report` (the typed report `--json` and the table print): ID and
/// OOD accuracy and the score over τ, the chosen τ.
pub fn sweep_document(report: &GqrSweepReport) -> Document {
    let rows: Vec<SweepRow> = report
        .grid
        .iter()
        .zip(&report.curve)
        .zip(&report.test_scores)
        .map(|((tau, (ood, id)), sc)| SweepRow {
            tau: *tau,
            id: *id,
            ood: *ood,
            score: *sc,
        })
        .collect();
    let chosen = report.chosen_threshold();
    let score_name = if report.unseen {
        "GQR-unseen score"
    } else {
        "GQR score"
    };
    let subtitle = format!(
        "{}: {} thresholds, {} scored texts of {}; data {}{}{}",
        if report.unseen {
            "GQR-unseen"
        } else {
            "GQR-Bench"
        },
        report.grid.len(),
        report.scored_texts,
        report.scores,
        report.data,
        if report.partial() {
            " (PARTIAL: sets missing)"
        } else {
            ""
        },
        if chosen.is_some() {
            "; τ chosen on the calibration split, reported on the test split"
        } else {
            ""
        }
    );
    let mut doc = Document {
        title: "routeval gqr sweep: accuracy over the threshold τ".into(),
        subtitle: Some(subtitle),
        ..Default::default()
    };
    let best = chosen.and_then(|t| rows.iter().find(|r| r.tau == t));
    // The typed report's headline and caveats (`routeval_sweep::gqr::GqrSweepReport`), as the
    // table and --json print them: held-out test figures at a calibrated τ, else the best test
    // point labelled optimistic.
    doc.headline = crate::crb::figures(&report.headline);
    doc.caveats.clone_from(&report.caveats);
    let line = |name: &str, f: &dyn Fn(&SweepRow) -> f64| XySeries {
        name: name.into(),
        points: rows.iter().map(|r| (r.tau, f(r) * 100.0)).collect(),
        // The accuracies are step functions of τ (they change where τ passes a text's top
        // probability).
        style: XyStyle::Step,
        colour: None,
        labels: vec![],
    };
    let mut sec = Section::new("Sweep").with(Plot {
        title: "ID accuracy, OOD accuracy and score over τ".into(),
        x_label: "threshold τ (router units)".into(),
        y_label: "percent (%)".into(),
        kind: PlotKind::Xy {
            series: vec![
                line("ID accuracy", &|r| r.id),
                line("OOD accuracy", &|r| r.ood),
                line(score_name, &|r| r.score),
            ],
            vlines: chosen
                .map(|t| RefLine {
                    at: t,
                    label: format!("chosen τ = {t}"),
                })
                .into_iter()
                .collect(),
            hlines: vec![],
        },
    });
    sec.push(Plot {
        title: "ID vs OOD accuracy (one point per τ)".into(),
        x_label: "OOD accuracy (%)".into(),
        y_label: "ID accuracy (%)".into(),
        kind: PlotKind::Xy {
            series: {
                let mut s = vec![XySeries {
                    name: "thresholds".into(),
                    points: rows.iter().map(|r| (r.ood * 100.0, r.id * 100.0)).collect(),
                    style: XyStyle::LinePoints,
                    colour: Some(0),
                    labels: rows.iter().map(|r| crate::tau_label(r.tau)).collect(),
                }];
                if let Some(r) = best {
                    s.push(XySeries {
                        name: format!("chosen τ = {}", r.tau),
                        points: vec![(r.ood * 100.0, r.id * 100.0)],
                        style: XyStyle::Points,
                        colour: Some(5),
                        labels: vec![],
                    });
                }
                s
            },
            vlines: vec![],
            hlines: vec![],
        },
    });
    let step = rows.len().div_ceil(200).max(1);
    let mut t = Table::new([
        "τ",
        "ID accuracy (%)",
        "OOD accuracy (%)",
        &format!("{score_name} (%)"),
    ]);
    for (i, r) in rows.iter().enumerate() {
        if i % step != 0 && Some(r.tau) != chosen && i + 1 != rows.len() {
            continue;
        }
        t.row([format!("{}", r.tau), pct(r.id), pct(r.ood), pct(r.score)]);
    }
    sec.push(t);
    doc.sections.push(sec);
    doc
}

/// A fraction as a percentage with 2 decimals and the sign (`12.34%`; `n/a` when not
/// finite): `gqr score`'s text table and baseline blocks.
pub fn percent(x: f64) -> String {
    if x.is_finite() {
        format!("{:.2}%", 100.0 * x)
    } else {
        "n/a".into()
    }
}

/// One set's cells of the `--baseline` tables after its name: accuracy, baseline accuracy,
/// delta, McNemar's discordant counts (`only run`, `only base`), p and Holm-adjusted p — the
/// same cells in the text block and the report section.
fn set_cells(s: &routeval_routing_scores::gqr::SetComparison) -> [String; 7] {
    [
        percent(s.accuracy),
        percent(s.baseline_accuracy),
        pp(s.delta),
        s.mcnemar.b.to_string(),
        s.mcnemar.c.to_string(),
        pval(s.mcnemar.p_value),
        pval(s.p_adjusted),
    ]
}

/// A signed difference of fractions in percentage points (`+1.25 pp`).
fn pp(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.2} pp", 100.0 * x)
    } else {
        "n/a".into()
    }
}

/// A p-value for the table: four decimals, or `<0.0001`.
fn pval(p: f64) -> String {
    if !p.is_finite() {
        "n/a".into()
    } else if p < 1e-4 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

/// `gqr score --baseline`'s report section (`--format md`, `--html`): the cells of
/// [`baseline_text`] as two tables (per set; the paired bootstrap CIs of the deltas).
pub fn baseline_section(b: &GqrBaseline) -> routeval_report::Section {
    let (name, level, replicates, seed, c) =
        (&b.predictions, b.level, b.replicates, b.seed, &b.comparison);
    let mut st = routeval_report::Table::new([
        "set",
        "accuracy (%)",
        "baseline (%)",
        "delta",
        "only run",
        "only base",
        "p",
        "p (Holm)",
    ])
    .caption(format!(
        "Per set: McNemar exact test on the discordant rows, Holm over {} sets",
        c.sets.len()
    ));
    for s in &c.sets {
        let [acc, base, delta, b, c, p, p_holm] = set_cells(s);
        st.row([set_name(&s.set), acc, base, delta, b, c, p, p_holm]);
    }
    let mut mt =
        routeval_report::Table::new(["metric", "run (%)", "baseline (%)", "delta", "CI of delta"])
            .caption(format!(
                "{} paired bootstrap CIs of the differences ({replicates} replicates, seed {seed})",
                crate::level_label(level)
            ));
    for m in &c.metrics {
        mt.row([
            m.metric.clone(),
            percent(m.value),
            percent(m.baseline),
            pp(m.delta),
            delta_ci(m),
        ]);
    }
    routeval_report::Section::new(format!("vs baseline {name} (paired on the same rows)"))
        .with(st)
        .with(mt)
}

/// A delta's CI in percentage points (`n/a` without finite bounds).
fn delta_ci(m: &routeval_stats::MetricDelta) -> String {
    let mut ci = if m.ci.low.is_finite() && m.ci.high.is_finite() {
        format!("[{}, {}]", pp(m.ci.low), pp(m.ci.high))
    } else {
        "n/a".into()
    };
    if let Some(d) = m.ci.degenerate() {
        ci.push_str(&format!("  ({d})"));
    }
    ci
}

/// `gqr score --baseline`'s text block under the table (the `--json` `"baseline"` block's
/// figures: per set accuracy, delta, McNemar's discordant counts and p-values; the metrics'
/// paired bootstrap CIs).
pub fn baseline_text(b: &GqrBaseline) -> String {
    let (name, level, replicates, seed, c) =
        (&b.predictions, b.level, b.replicates, b.seed, &b.comparison);
    let mut t = format!(
        "\nvs baseline {name} (paired on the same rows; McNemar exact test, Holm over {} sets)\n",
        c.sets.len()
    );
    text_row(
        &mut t,
        "set",
        &[
            "accuracy",
            "baseline",
            "delta",
            "only run",
            "only base",
            "p",
            "p (Holm)",
        ],
        "",
    );
    for s in &c.sets {
        text_row(&mut t, &set_name(&s.set), &set_cells(s), "");
    }
    t.push_str(&format!(
        "{} paired bootstrap CIs of the differences ({replicates} replicates, seed {seed}):\n",
        crate::level_label(level)
    ));
    for m in &c.metrics {
        let ci = delta_ci(m);
        t.push_str(&format!(
            "  {:<30} {} vs {}: {}  {ci}\n",
            m.metric,
            percent(m.value),
            percent(m.baseline),
            pp(m.delta)
        ));
    }
    t
}

/// `gqr score`'s text table of a run: the report's table, then with `--ci` the intervals
/// block (percentages) and a line per set whose interval is degenerate, then the
/// `--baseline` block ([`baseline_text`]).
pub fn run_text(run: &ScoreRun) -> String {
    let mut table = run.report.render_text();
    if let Some(iv) = &run.intervals {
        table.push_str(&crate::intervals_text(iv, percent));
        for (n, c) in run.set_intervals.iter().flatten() {
            if let Some(d) = c.degenerate() {
                table.push_str(&format!("  set {}: CI {d}\n", set_name(n)));
            }
        }
    }
    if let Some(b) = &run.baseline {
        table.push_str(&baseline_text(b));
    }
    table
}

/// `gqr score --json`'s object of a run: the report's keys
/// (`routeval_routing_scores::gqr::report::ScoreReport::to_json`), then with `--ci` `"ci"`
/// (the intervals, plus `"per_set": {set: [lo, hi] | null}` and, when some set's interval is
/// degenerate, `"per_set_degenerate": {set: reason}`), with `--baseline` `"baseline"`, and
/// `"data"` (where the data came from). Fractions throughout.
pub fn run_json(run: &ScoreRun) -> Map<String, Value> {
    let mut report = run.report.to_json();
    if let Some(iv) = &run.intervals {
        let mut j = crate::intervals_json(iv);
        if let (Some(o), Some(sets)) = (j.as_object_mut(), &run.set_intervals) {
            let per_set: Map<String, Value> = sets
                .iter()
                .map(|(n, c)| {
                    let v = if c.low.is_finite() && c.high.is_finite() {
                        json!([c.low, c.high])
                    } else {
                        Value::Null
                    };
                    (n.clone(), v)
                })
                .collect();
            o.insert("per_set".into(), Value::Object(per_set));
            let degenerate: Map<String, Value> = sets
                .iter()
                .filter_map(|(n, c)| c.degenerate().map(|d| (n.clone(), json!(d.reason()))))
                .collect();
            if !degenerate.is_empty() {
                o.insert("per_set_degenerate".into(), Value::Object(degenerate));
            }
        }
        report.insert("ci".into(), j);
    }
    if let Some(b) = &run.baseline {
        report.insert(
            "baseline".into(),
            serde_json::to_value(b).unwrap_or_default(),
        );
    }
    report.insert("data".into(), json!(run.data));
    report
}

/// `gqr score`'s report document of a run (`--format md`, `--html`): [`score_document`],
/// a note per set whose `--ci` interval is degenerate and the `--baseline` section
/// ([`baseline_section`], the block the table prints and `--json` holds as `"baseline"`).
/// `source` names the predictions (a file name or `cmd: ROUTER`).
pub fn run_document(run: &ScoreRun, source: &str) -> Document {
    let view = ScoreView {
        benchmark: run.benchmark(),
        headline: run.report.headline(),
        sets: run.sets.clone(),
        gold_pred: run.gold_pred.clone(),
        latency_ms: &run.latency_ms,
        ci: run.intervals.as_ref(),
        missing: run.report.missing.iter().map(|m| m.set.clone()).collect(),
        data: run.data.clone(),
    };
    let mut doc = score_document(&view, source);
    for (n, c) in run.set_intervals.iter().flatten() {
        if let Some(d) = c.degenerate() {
            doc.notes.push(format!("CI of set {}: {d}", set_name(n)));
        }
    }
    if let Some(b) = &run.baseline {
        doc.sections.push(baseline_section(b));
    }
    doc
}
