//! `routeval crb eval` / `crb sweep` reports: per-benchmark pass / exact / savings bars, the
//! predicted-vs-gold tier confusion matrix, and for a sweep the cost–quality curve with its
//! hull and the chosen τ; with `--baseline-predictor` the paired comparison's section and text
//! block ([`BaselineComparison`]).

use routeval_core::Tier;
use routeval_report::{
    BarSeries, Document, Headline, Plot, PlotKind, RefLine, Section, Table, XySeries, XyStyle,
};
use routeval_routing_scores::crb::records::EvalRecord;
use routeval_routing_scores::crb::resample::BaselineComparison;
use routeval_routing_scores::crb::scores::CrbMetrics;
use routeval_routing_scores::crb::sweep::SweepPoint;
use routeval_stats::MetricDelta;
use routeval_sweep::crb::CrbSweepReport;

/// A percent value as the `crb` tables print it (2 decimals, `n/a`).
fn p2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "n/a".into()
    }
}

fn ratio_pct(n: u64, d: u64) -> f64 {
    if d == 0 {
        f64::NAN
    } else {
        n as f64 * 100.0 / d as f64
    }
}

/// The five `scores_v2` headline percentages, as `(JSON key, label, value)`.
pub fn v2_headline(
    v2: &routeval_routing_scores::crb::scores::ScoresV2,
) -> [(&'static str, &'static str, f64); 5] {
    [
        (
            "case_pass_rate_percent",
            "case pass rate (%)",
            v2.case_pass_rate_percent(),
        ),
        (
            "case_exact_match_percent",
            "case exact match (%)",
            v2.case_exact_match_percent(),
        ),
        (
            "trajectory_pass_rate_percent",
            "trajectory pass rate (%)",
            v2.trajectory_pass_rate_percent(),
        ),
        (
            "cost_savings_score_percent",
            "cost savings vs always-high (%)",
            v2.cost_savings_score_percent,
        ),
        (
            "combined_score_percent",
            "combined score (%)",
            v2.combined_score_percent(),
        ),
    ]
}

/// The `crb eval` report: `predictor` as given, `records` with their predictions,
/// `tokenizers` the set-up as the table's header shows it (`EvalTable::tokenizers`),
/// `fallbacks` the tiers counted with another encoder (one note each).
pub fn eval_document(
    m: &CrbMetrics,
    records: &[EvalRecord],
    predictor: &str,
    bank: &str,
    ci: Option<&routeval_stats::Intervals>,
    tokenizers: &str,
    fallbacks: &[String],
) -> Document {
    let v2 = &m.scores_v2;
    let mut doc = Document {
        title: format!("routeval crb eval: {predictor}"),
        subtitle: Some(format!(
            "CommonRouterBench scores_v2 on {bank}: {} rows, {} trajectories, {} predictor errors, tokenizers {tokenizers}",
            v2.total_rows, v2.total_trajectories, v2.error_rows
        )),
        ..Default::default()
    };
    // The fallbacks the table's header counts and --json lists (routeval_tokenizers.fallbacks):
    // token counts, hence costs, of those tiers use another encoder.
    for f in fallbacks {
        doc.notes.push(format!("tokenizer fallback: {f}"));
    }
    let mut t = Table::new(["scores_v2", "percent"]);
    for (_, label, v) in v2_headline(v2) {
        doc.headline.push(Headline::new(label, p2(v)));
        t.row([label.to_string(), p2(v)]);
    }
    t.row([
        "trajectories passed".to_string(),
        format!("{} of {}", v2.passed_trajectories, v2.total_trajectories),
    ]);
    let mut head = Section::new("scores_v2").with(t);
    if let Some(iv) = ci {
        let mut ct = Table::new(["metric", "CI low", "CI high"]).caption(format!(
            "{}% percentile bootstrap ({} replicates over {}, seed {})",
            iv.level * 100.0,
            iv.replicates,
            iv.units,
            iv.seed
        ));
        for (n, c) in &iv.intervals {
            ct.row([n.clone(), p2(c.low), p2(c.high)]);
        }
        head.push(ct);
    }
    doc.sections.push(head);

    // Per benchmark.
    let names: Vec<String> = m.by_benchmark.iter().map(|b| b.name.clone()).collect();
    let pass: Vec<f64> = m
        .by_benchmark
        .iter()
        .map(|b| ratio_pct(b.section_11.passed, b.section_11.total))
        .collect();
    let exact: Vec<f64> = m
        .by_benchmark
        .iter()
        .map(|b| ratio_pct(b.exact_match, b.sampled))
        .collect();
    let savings: Vec<f64> = names
        .iter()
        .map(|n| {
            v2.by_benchmark
                .iter()
                .find(|b| &b.name == n)
                .map_or(f64::NAN, |b| b.score)
        })
        .collect();
    let mut sec = Section::new("Per benchmark");
    if !names.is_empty() {
        sec.push(Plot {
            title: "Pass, exact match and cost savings per benchmark".into(),
            x_label: "percent (%)".into(),
            y_label: "benchmark".into(),
            kind: PlotKind::Bars {
                categories: names.clone(),
                series: vec![
                    BarSeries {
                        name: "case pass (pred ≥ gold)".into(),
                        values: pass.clone(),
                        intervals: None,
                    },
                    BarSeries {
                        name: "exact match (pred = gold)".into(),
                        values: exact.clone(),
                        intervals: None,
                    },
                    BarSeries {
                        name: "cost savings (scores_v2)".into(),
                        values: savings.clone(),
                        intervals: None,
                    },
                ],
                range: None,
            },
        });
    }
    let mut bt = Table::new([
        "benchmark",
        "rows",
        "steps",
        "failed trajectories",
        "case pass (%)",
        "exact (%)",
        "savings (%)",
        "D (USD)",
        "N (USD)",
        "weight",
    ]);
    for (i, b) in m.by_benchmark.iter().enumerate() {
        let vb = v2.by_benchmark.iter().find(|x| x.name == b.name);
        bt.row([
            b.name.clone(),
            b.sampled.to_string(),
            vb.map_or("".into(), |x| x.step_count.to_string()),
            vb.map_or("".into(), |x| x.failed_trajectory_count.to_string()),
            p2(pass[i]),
            p2(exact[i]),
            p2(savings[i]),
            vb.map_or("".into(), |x| format!("{:.6}", x.d_usd)),
            vb.map_or("".into(), |x| format!("{:.6}", x.n_usd)),
            vb.map_or("".into(), |x| format!("{:.3}", x.weight)),
        ]);
    }
    sec.push(bt);
    doc.sections.push(sec);

    // Confusion matrix: rows gold, columns predicted (+ errors).
    let mut cols: Vec<String> = Tier::ALL.iter().map(|t| t.name().to_string()).collect();
    cols.push("error".into());
    let mut counts = vec![vec![0u64; cols.len()]; Tier::ALL.len()];
    for r in records {
        let c = r.pred().map_or(Tier::ALL.len(), |p| p as usize);
        counts[r.gold as usize][c] += 1;
    }
    let rows: Vec<String> = Tier::ALL.iter().map(|t| t.name().to_string()).collect();
    let mut ctab = Table::new(
        std::iter::once("gold \\ predicted".to_string()).chain(cols.iter().cloned()),
    )
    .caption("Rows per (gold tier, predicted tier); above the diagonal = over-routed (passes, costs more)");
    for (r, row) in counts.iter().enumerate() {
        ctab.row(std::iter::once(rows[r].clone()).chain(row.iter().map(u64::to_string)));
    }
    doc.sections.push(
        Section::new("Tier confusion matrix")
            .with(Plot {
                title: "Predicted vs gold tier".into(),
                x_label: "predicted tier".into(),
                y_label: "gold tier".into(),
                kind: PlotKind::Heatmap {
                    rows,
                    columns: cols,
                    counts,
                },
            })
            .with(ctab),
    );
    doc.notes.extend(crate::degenerate_notes(ci));
    doc
}

/// A sweep's headline figures as the document's headline (label and printed value).
pub fn figures(f: &[routeval_sweep::Figure]) -> Vec<Headline> {
    f.iter()
        .map(|f| Headline::new(f.label.clone(), f.text.clone()))
        .collect()
}

/// The `crb sweep` report of `r` (the typed report `--json` and the table print): per
/// threshold τ the point, the NDCH of (cost, pass rate), the chosen τ if a rule was given; the
/// headline and caveats are the report's own.
pub fn sweep_document(r: &CrbSweepReport) -> Document {
    let (grid, points, hull, aiq, chosen) = (
        r.grid.as_slice(),
        r.points.as_slice(),
        r.ndch.as_slice(),
        r.aiq,
        r.chosen_threshold,
    );
    let (bank, scores) = (&r.bank, &r.scores);
    let pass_rate_key = r.pass_rate.key();
    let pass_rate = |p: &SweepPoint| r.pass_rate.of(p);
    let mut doc = Document {
        title: "routeval crb sweep: cost–quality over the threshold τ".into(),
        subtitle: Some(format!(
            "{} thresholds on {bank} with {scores}; quality = scores_v2 {pass_rate_key}",
            grid.len()
        )),
        ..Default::default()
    };
    // The headline and caveats are the typed report's (`routeval_sweep::crb::CrbSweepReport`),
    // the ones the table and --json print: held-out figures when calibrating.
    doc.headline = figures(&r.headline);
    doc.caveats.clone_from(&r.caveats);
    let chosen_i = chosen.and_then(|tau| grid.iter().position(|&t| t == tau));
    let curve: Vec<(f64, f64)> = points.iter().map(|p| (p.cost_usd, pass_rate(p))).collect();
    let mut series = vec![
        XySeries {
            name: "thresholds".into(),
            points: curve.clone(),
            style: XyStyle::Points,
            colour: Some(0),
            labels: grid.iter().map(|t| crate::tau_label(*t)).collect(),
        },
        XySeries {
            name: format!("NDCH (AIQ {})", p2(aiq)),
            points: hull.to_vec(),
            style: XyStyle::Line,
            colour: Some(1),
            labels: vec![],
        },
    ];
    let mut vlines = Vec::new();
    if let (Some(tau), Some(i)) = (chosen, chosen_i) {
        series.push(XySeries {
            name: format!("chosen τ = {tau}"),
            points: vec![curve[i]],
            style: XyStyle::Points,
            colour: Some(5),
            labels: vec![],
        });
        vlines.push(RefLine {
            at: tau,
            label: format!("chosen τ = {tau}"),
        });
    }
    let mut sec = Section::new("Cost–quality curve").with(Plot {
        title: "Pass rate over cost, one point per τ, with the NDCH".into(),
        x_label: "cost of the predicted path (USD)".into(),
        y_label: format!("{pass_rate_key} (%)"),
        kind: PlotKind::Xy {
            series,
            vlines: vec![],
            hlines: vec![],
        },
    });
    // Quality and cost over τ.
    sec.push(Plot {
        title: "scores_v2 over τ".into(),
        x_label: "threshold τ (cumulative probability)".into(),
        y_label: "percent (%)".into(),
        kind: PlotKind::Xy {
            series: vec![
                XySeries {
                    name: "case pass (%)".into(),
                    points: grid
                        .iter()
                        .zip(points)
                        .map(|(t, p)| (*t, p.scores_v2.case_pass_rate_percent()))
                        .collect(),
                    style: XyStyle::Step,
                    colour: None,
                    labels: vec![],
                },
                XySeries {
                    name: "trajectory pass (%)".into(),
                    points: grid
                        .iter()
                        .zip(points)
                        .map(|(t, p)| (*t, p.scores_v2.trajectory_pass_rate_percent()))
                        .collect(),
                    style: XyStyle::Step,
                    colour: None,
                    labels: vec![],
                },
                XySeries {
                    name: "cost savings (%)".into(),
                    points: grid
                        .iter()
                        .zip(points)
                        .map(|(t, p)| (*t, p.scores_v2.cost_savings_score_percent))
                        .collect(),
                    style: XyStyle::Step,
                    colour: None,
                    labels: vec![],
                },
            ],
            vlines,
            hlines: vec![],
        },
    });
    // Table: every point (thinned to 200 rows for long grids; the JSON has all).
    let step = grid.len().div_ceil(200).max(1);
    let mut t = Table::new([
        "τ",
        "case pass (%)",
        "trajectory pass (%)",
        "savings (%)",
        "combined (%)",
        "cost (USD)",
        "low",
        "mid",
        "mid_high",
        "high",
    ])
    .caption(if step > 1 {
        format!("Every {step}th threshold (and the chosen one); --json lists all")
    } else {
        "Every threshold (rows per predicted tier in the last four columns)".into()
    });
    for (i, (tau, p)) in grid.iter().zip(points).enumerate() {
        if i % step != 0 && Some(i) != chosen_i && i + 1 != grid.len() {
            continue;
        }
        let mut row = vec![
            format!("{tau:.6}"),
            p2(p.scores_v2.case_pass_rate_percent()),
            p2(p.scores_v2.trajectory_pass_rate_percent()),
            p2(p.scores_v2.cost_savings_score_percent),
            p2(p.scores_v2.combined_score_percent()),
            format!("{:.6}", p.cost_usd),
        ];
        row.extend(p.tier_counts.iter().map(u64::to_string));
        t.row(row);
    }
    sec.push(t);
    let mut ht = Table::new(["cost (USD)", "pass rate (%)"]).caption("NDCH points");
    for (c, q) in hull {
        ht.row([format!("{c:.6}"), p2(*q)]);
    }
    sec.push(ht);
    doc.sections.push(sec);
    doc
}

// `crb eval --baseline-predictor`: the paired comparison's faces.

/// The report section of a `crb eval --baseline-predictor` comparison (`--format md`,
/// `--html`): the same cells as
/// [`baseline_text`] prints (percent, deltas in percentage points), one row per
/// metric, then the McNemar counts.
pub fn baseline_section(c: &BaselineComparison) -> routeval_report::Section {
    let mut t = routeval_report::Table::new([
        "metric (percent)",
        "run",
        "baseline",
        "delta (pp)",
        "CI of delta",
    ])
    .caption(format!(
        "{} paired bootstrap CIs of the differences, {} replicates over trajectories within benchmarks, seed {}",
        crate::level_label(c.level),
        c.replicates,
        c.seed
    ));
    for m in &c.deltas {
        t.row([
            m.metric.clone(),
            f2(m.value),
            f2(m.baseline),
            d2(m.delta),
            delta_ci(m),
        ]);
    }
    let mut mt = routeval_report::Table::new([
        "rows",
        "passed only by the run",
        "passed only by the baseline",
        "p (exact McNemar)",
    ])
    .caption("Case pass (pred ≥ gold), exact McNemar test on the discordant rows");
    mt.row([
        c.rows.to_string(),
        c.mcnemar.b.to_string(),
        c.mcnemar.c.to_string(),
        p_text(c.mcnemar.p_value),
    ]);
    routeval_report::Section::new(format!(
        "vs baseline {} (paired on the same rows)",
        c.predictor
    ))
    .with(t)
    .with(mt)
}

/// The text block `crb eval --baseline-predictor` prints under its table.
pub fn baseline_text(c: &BaselineComparison) -> String {
    let (f, d) = (f2, d2);
    let mut t = format!(
        "vs baseline {} (paired on the same rows; {} paired bootstrap CIs of the differences, {} replicates over trajectories within benchmarks, seed {}):\n",
        c.predictor,
        crate::level_label(c.level),
        c.replicates,
        c.seed
    );
    t.push_str(&format!(
        "  {:<30} {:>8} {:>8} {:>8}  {}\n",
        "metric (percent)", "run", "baseline", "delta", "CI of delta"
    ));
    for m in &c.deltas {
        let ci = delta_ci(m);
        t.push_str(&format!(
            "  {:<30} {:>8} {:>8} {:>8}  {ci}\n",
            m.metric,
            f(m.value),
            f(m.baseline),
            d(m.delta)
        ));
    }
    t.push_str(&format!(
        "  case pass, exact McNemar: {} rows passed only by the run, {} only by the baseline, p = {}\n",
        c.mcnemar.b,
        c.mcnemar.c,
        p_text(c.mcnemar.p_value)
    ));
    t
}

/// A percentage with 2 decimals (`n/a`).
fn f2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "n/a".into()
    }
}

/// A signed difference with 2 decimals (`n/a`).
fn d2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.2}")
    } else {
        "n/a".into()
    }
}

/// A delta's CI as `[low, high]` (`n/a` when a bound is not finite).
fn delta_ci(m: &MetricDelta) -> String {
    let mut ci = if m.ci.low.is_finite() && m.ci.high.is_finite() {
        format!("[{}, {}]", d2(m.ci.low), d2(m.ci.high))
    } else {
        "n/a".into()
    };
    if let Some(why) = m.ci.degenerate() {
        ci.push_str(&format!("  ({why})"));
    }
    ci
}

/// The McNemar p-value as printed (4 decimals, or 3 significant digits below 1e-4).
fn p_text(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.2e}")
    } else {
        format!("{p:.4}")
    }
}

/// `crb eval`'s text table of a run: the table, then with `--ci` the intervals block (2
/// decimals) and with `--baseline-predictor` the comparison block ([`baseline_text`]), each
/// after a blank line.
pub fn eval_text(r: &routeval_routing_scores::crb::eval::EvalReport) -> String {
    let mut t = r.table.render_text();
    if let Some(iv) = &r.intervals {
        t.push('\n');
        t.push_str(&crate::intervals_text(iv, |x| format!("{x:.2}")));
    }
    if let Some(c) = &r.comparison {
        t.push('\n');
        t.push_str(&baseline_text(c));
    }
    t
}

/// `crb eval --json`: the run's summary as one line of compact JSON and a newline, integers
/// beyond 64 bits (in the rows' messages) printed as they came in.
///
/// # Errors
/// serde_json's, when the summary cannot be serialised.
pub fn eval_json(
    r: &routeval_routing_scores::crb::eval::EvalReport,
) -> Result<String, serde_json::Error> {
    let mut s = routeval_core::py::unmark_big_ints_owned(serde_json::to_string(&r.summary)?);
    s.push('\n');
    Ok(s)
}

/// [`eval_json`] written to `out` as it is serialized (no text of the whole summary is built:
/// 80 MB at 20,000 rows), unless the summary holds a big-integer marker, whose text is built
/// and unmarked first. The bytes are [`eval_json`]'s.
///
/// # Errors
/// The writer's error.
pub fn write_eval_json(
    r: &routeval_routing_scores::crb::eval::EvalReport,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    if routeval_core::py::map_holds_big_int_marker(&r.summary) {
        let text = eval_json(r).map_err(std::io::Error::other)?;
        return out.write_all(text.as_bytes());
    }
    serde_json::to_writer(&mut *out, &r.summary).map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}

/// `crb eval`'s report document of a run (`--format md`, `--html`): [`eval_document`] and
/// the `--baseline-predictor` section ([`baseline_section`], the block the table prints under
/// it and `--json` holds as `"baseline"`).
pub fn eval_report_document(r: &routeval_routing_scores::crb::eval::EvalReport) -> Document {
    let mut doc = eval_document(
        &r.metrics,
        &r.records,
        &r.predictor,
        &r.bank,
        r.intervals.as_ref(),
        &r.table.tokenizers,
        &r.fallbacks,
    );
    if let Some(c) = &r.comparison {
        doc.sections.push(baseline_section(c));
    }
    doc
}
