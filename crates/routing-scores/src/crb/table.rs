//! The `routeval crb eval` summary as a typed value ([`EvalTable`]): what the text table shows,
//! built from the typed metrics ([`CrbMetrics`]) and the run's header facts, never from the
//! summary JSON. Front ends render it ([`EvalTable::render_text`]; the CLI's `--json` stays
//! the reference's summary layout, [`super::scores::build_summary`]).

use super::scores::CrbMetrics;
use serde::Serialize;
use std::fmt::Write as _;

/// One benchmark's `scores_v2` row (§15): sizes, failures, cost sums and the savings score.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BenchmarkRow {
    /// Benchmark name.
    pub name: String,
    /// Rows of the benchmark in the selection.
    pub rows: u64,
    /// Evaluable routing steps.
    pub steps: u64,
    /// Failed trajectories.
    pub failed: u64,
    /// `D_usd`: the always-high baseline's cost (USD).
    pub d_usd: f64,
    /// `N_usd`: the savings net of failures (USD).
    pub n_usd: f64,
    /// `100 · N / D` (percent; NaN when `D = 0`).
    pub savings_percent: f64,
    /// The benchmark's weight in the global savings score (fraction of rows).
    pub weight: f64,
}

/// The `crb eval` summary table: header facts, the five `scores_v2` headline metrics, the
/// per-benchmark rows, `router_accounting` and `section_11`. Percentages are percent (0–100),
/// NaN = undefined (`n/a`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvalTable {
    /// The predictor spec (`gold`, `file:…`, `cmd:…`, `llm:…`).
    pub classifier: String,
    /// `full_bank` or `proportional_sample`.
    pub sample_mode: String,
    /// Rows evaluated.
    pub sampled: u64,
    /// Rows whose prediction failed (predictor errors).
    pub api_errors: u64,
    /// The tokenizer set-up as shown (e.g. `native (fallback: cl100k for high)`).
    pub tokenizers: String,
    /// The cached public bank used when no `--bank` was given.
    pub public_bank: Option<String>,
    /// `(label, value)` of the five [`super::scores::ScoresV2::HEADLINE`] metrics (percent).
    pub scores_v2: Vec<(String, f64)>,
    /// Trajectories that passed.
    pub passed_trajectories: u64,
    /// Trajectories.
    pub total_trajectories: u64,
    /// Per benchmark, in the walk's order.
    pub by_benchmark: Vec<BenchmarkRow>,
    /// `router_accounting`: pass, exact, savings and overall (percent).
    pub router_accounting: [f64; 4],
    /// `section_11`: pass rate and cost savings score (fractions, as the reference prints).
    pub section_11: [f64; 2],
    /// Tokenizers that fell back to cl100k.
    pub tokenizer_fallbacks: usize,
}

/// The labels of the five headline metrics, in [`super::scores::ScoresV2::HEADLINE`] order.
const HEADLINE_LABELS: [&str; 5] = [
    "case pass rate (pred >= gold)",
    "case exact match (pred = gold)",
    "trajectory pass rate (row-weighted)",
    "cost savings vs always-high",
    "combined score",
];

/// A value with 2 decimals, `n/a` when not finite (the summary JSON's `null`).
fn f2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "n/a".into()
    }
}

impl EvalTable {
    /// The table of `metrics` over `sampled` rows with `api_errors` predictor errors.
    pub fn new(
        classifier: &str,
        sample_mode: &str,
        sampled: u64,
        api_errors: u64,
        metrics: &CrbMetrics,
    ) -> Self {
        let v2 = &metrics.scores_v2;
        let ra = &metrics.router_accounting;
        let s11 = &metrics.section_11;
        EvalTable {
            classifier: classifier.to_string(),
            sample_mode: sample_mode.to_string(),
            sampled,
            api_errors,
            tokenizers: String::new(),
            public_bank: None,
            scores_v2: super::scores::ScoresV2::HEADLINE
                .iter()
                .zip(HEADLINE_LABELS)
                .map(|(k, l)| (l.to_string(), v2.headline(k).unwrap_or(f64::NAN)))
                .collect(),
            passed_trajectories: v2.passed_trajectories,
            total_trajectories: v2.total_trajectories,
            by_benchmark: v2
                .by_benchmark
                .iter()
                .map(|b| BenchmarkRow {
                    name: b.name.clone(),
                    rows: b.row_count,
                    steps: b.step_count,
                    failed: b.failed_trajectory_count,
                    d_usd: b.d_usd,
                    n_usd: b.n_usd,
                    savings_percent: b.score,
                    weight: b.weight,
                })
                .collect(),
            router_accounting: [
                ra.pass_rate_percent(),
                ra.exact_match_rate_percent(),
                ra.savings_percent(),
                ra.overall_percent(),
            ],
            section_11: [s11.pass_rate(), s11.cost_savings_score()],
            tokenizer_fallbacks: 0,
        }
    }

    /// Set the tokenizer label from the set-up's name and the fallbacks (`"<tier>: …"`
    /// entries): `native`, or `native (fallback: cl100k for high, low)` (builder style).
    #[must_use]
    pub fn with_tokenizers(mut self, setup: &str, fallbacks: &[String]) -> Self {
        let tiers: Vec<&str> = fallbacks
            .iter()
            .filter_map(|f| f.split(':').next())
            .collect();
        self.tokenizers = if tiers.is_empty() {
            setup.to_string()
        } else {
            format!("{setup} (fallback: cl100k for {})", tiers.join(", "))
        };
        self.tokenizer_fallbacks = fallbacks.len();
        self
    }

    /// Name the cached public bank used when no `--bank` was given (builder style).
    #[must_use]
    pub fn with_public_bank(mut self, bank: Option<&str>) -> Self {
        self.public_bank = bank.map(str::to_string);
        self
    }

    /// The plain-text table (`routeval crb eval` without `--json`), ending in a newline.
    pub fn render_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "CommonRouterBench eval: {} ({}, {} rows, {} predictor errors, tokenizers {})",
            self.classifier, self.sample_mode, self.sampled, self.api_errors, self.tokenizers
        );
        if let Some(p) = &self.public_bank {
            let _ = writeln!(o, "bank: {p} (no --bank given)");
        }
        let _ = writeln!(o, "\nscores_v2 (percent)");
        for (label, v) in &self.scores_v2 {
            let _ = writeln!(o, "  {label:<38} {:>9}", f2(*v));
        }
        let _ = writeln!(
            o,
            "  trajectories: {} passed of {}",
            self.passed_trajectories, self.total_trajectories
        );
        let _ = writeln!(
            o,
            "\n{:<14} {:>6} {:>6} {:>7} {:>12} {:>12} {:>10} {:>7}",
            "benchmark", "rows", "steps", "failed", "D_usd", "N_usd", "savings%", "weight"
        );
        for b in &self.by_benchmark {
            let _ = writeln!(
                o,
                "{:<14} {:>6} {:>6} {:>7} {:>12.6} {:>12.6} {:>10} {:>7.3}",
                b.name,
                b.rows,
                b.steps,
                b.failed,
                b.d_usd,
                b.n_usd,
                if b.savings_percent.is_nan() {
                    "n/a".into()
                } else {
                    format!("{:.2}", b.savings_percent)
                },
                b.weight
            );
        }
        let [pass, exact, savings, overall] = self.router_accounting;
        let _ = writeln!(
            o,
            "\nrouter_accounting: pass {}%  exact {}%  savings {}%  overall {}%",
            f2(pass),
            f2(exact),
            f2(savings),
            f2(overall)
        );
        let _ = writeln!(
            o,
            "section_11: pass rate {}  cost savings score {}",
            f2(self.section_11[0]),
            f2(self.section_11[1])
        );
        if self.tokenizer_fallbacks > 0 {
            let _ = writeln!(o, "tokenizer fallbacks: {}", self.tokenizer_fallbacks);
        }
        o
    }
}
