//! `crb eval --baseline-predictor SPEC`: the paired comparison of two tier routers on the same
//! rows, rendered for the table and the JSON summary. The numbers come from the library
//! (`routeval_routing_scores::crb::resample`: `ScoresV2Units::compare`, `case_pass_mcnemar`).

use routeval_stats::{McNemar, MetricDelta};
use serde_json::{Value, json};

/// A finished comparison with the options that produced it.
pub(crate) struct Comparison {
    /// The baseline's predictor spec, as given.
    pub(crate) spec: String,
    /// Confidence level of the paired intervals (fraction).
    pub(crate) level: f64,
    /// Bootstrap replicates.
    pub(crate) replicates: u64,
    /// Seed of the replicate streams.
    pub(crate) seed: u64,
    /// The five `scores_v2` headline metrics (percent): run, baseline, delta (percentage
    /// points), paired bootstrap CI of the delta.
    pub(crate) deltas: Vec<MetricDelta>,
    /// Exact McNemar test on per-row case pass (pred ≥ gold).
    pub(crate) mcnemar: McNemar,
    /// Rows compared.
    pub(crate) rows: u64,
}

fn num(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

impl Comparison {
    /// `{"predictor", "level", "replicates", "seed", "units", "metrics": [{"metric", "value",
    /// "baseline", "delta", "ci"}], "case_pass_mcnemar": {"rows", "b", "c", "p_value"}}`
    /// (percent and percentage points; `b` = rows only the run passes, `c` = rows only the
    /// baseline passes).
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "predictor": self.spec,
            "level": self.level,
            "replicates": self.replicates,
            "seed": self.seed,
            "units": "trajectories, resampled within each benchmark (the same draws for both)",
            "metrics": serde_json::to_value(&self.deltas).unwrap_or_default(),
            "case_pass_mcnemar": {
                "rows": self.rows,
                "b": self.mcnemar.b,
                "c": self.mcnemar.c,
                "p_value": num(self.mcnemar.p_value),
            },
        })
    }

    /// The report section of the comparison (`--format md`, `--html`): the same cells as
    /// [`render`](Self::render) prints (percent, deltas in percentage points), one row per
    /// metric, then the McNemar counts.
    pub(crate) fn section(&self) -> routeval_report::Section {
        let mut t = routeval_report::Table::new([
            "metric (percent)",
            "run",
            "baseline",
            "delta (pp)",
            "CI of delta",
        ])
        .caption(format!(
            "{} paired bootstrap CIs of the differences, {} replicates over trajectories within benchmarks, seed {}",
            routeval_views::level_label(self.level),
            self.replicates,
            self.seed
        ));
        for m in &self.deltas {
            t.row([
                m.metric.clone(),
                f2(m.value),
                f2(m.baseline),
                d2(m.delta),
                ci(m),
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
            self.rows.to_string(),
            self.mcnemar.b.to_string(),
            self.mcnemar.c.to_string(),
            p_text(self.mcnemar.p_value),
        ]);
        routeval_report::Section::new(format!(
            "vs baseline {} (paired on the same rows)",
            self.spec
        ))
        .with(t)
        .with(mt)
    }

    /// The text block printed under `crb eval`'s table.
    pub(crate) fn render(&self) -> String {
        let (f, d) = (f2, d2);
        let mut t = format!(
            "vs baseline {} (paired on the same rows; {} paired bootstrap CIs of the differences, {} replicates over trajectories within benchmarks, seed {}):\n",
            self.spec,
            routeval_views::level_label(self.level),
            self.replicates,
            self.seed
        );
        t.push_str(&format!(
            "  {:<30} {:>8} {:>8} {:>8}  {}\n",
            "metric (percent)", "run", "baseline", "delta", "CI of delta"
        ));
        for m in &self.deltas {
            let ci = ci(m);
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
            self.mcnemar.b,
            self.mcnemar.c,
            p_text(self.mcnemar.p_value)
        ));
        t
    }
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
fn ci(m: &MetricDelta) -> String {
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
