//! `section_11`, `router_accounting`, `scores_v2`, `by_benchmark` and the eval summary
//! (`specs/crb.md` §13–§17), bit-equal to CommonRouterBench 0.1.0 under CPython 3.11.
//!
//! Every float sum is a plain left-to-right `f64` addition in the reference's order (records
//! order for `section_11`, walk order for the trajectory sums, first-appearance benchmark order
//! for the weighted cost score). Those parity sums are deliberately *not* computed by merging
//! shards; the mergeable [`Section11`] accumulator is exact for its counts and its USD sums
//! are merged in shard order (equal to one pass when shards are merged in record order).
//!
//! Non-finite values (`NaN` when a denominator is 0) are written as JSON `null`: the reference
//! writes the invalid bare token `NaN`.

use super::records::EvalRecord;
use super::walk::{Step, TrajectoryStatus, WalkContext, WalkError};
use routeval_core::{Accumulator, Tier};
use routeval_tier_cost::pricing::OUTPUT_USD_PER_1M;
use serde_json::{Map, Value, json};

/// `section_11.cost_formula` (constant text of the reference).
pub const SECTION11_COST_FORMULA: &str =
    "save_gt = baseline.cost - optimal_path.cost per §11.2 (nominal USD)";
/// `section_11.note`.
pub const SECTION11_NOTE: &str = "Sums are nominal USD under uniform T per step. If real completion_tokens v_i vary by case, §11.2 uses v_i in each cost; ratio equals current only when all v_i are equal.";
/// `router_accounting.note` when D > 0.
pub const ACCOUNTING_NOTE: &str = "100 * N / D; trajectory-level pass/fail. Pass: N += baseline_cost - pred_cost; Fail: N -= pred_cost.";
/// `router_accounting.note` when D ≤ 0 with trajectories.
pub const ACCOUNTING_NOTE_D0: &str =
    "D == 0: no nominal savings vs always-high (e.g. all gold high).";
/// `router_accounting.note` without trajectories.
pub const ACCOUNTING_NOTE_EMPTY: &str = "No trajectories.";
/// `scores_v2.note`.
pub const SCORES_V2_NOTE: &str = "cost_savings_score_percent is macro-averaged across benchmarks by each benchmark's total row count (same scope as case_pass_rate). All gold tiers are included; D_b = Σ baseline_cost over every evaluable step. Numerator is trajectory-level: passed trajectories (no error AND every step pred>=gold) contribute N_b += baseline_cost - pred_cost per step; failed trajectories contribute N_b -= pred_cost per step, which under D = Σ baseline encodes the failed-trajectory user bill = Σ pred_cost + Σ baseline_cost (router's chain wasted + one full always-high re-run of every step). No additional retry penalty is applied on top. trajectory_pass_rate_percent uses row-weighted denominator: a row counts toward the numerator iff its entire trajectory passes.";

/// A float for JSON: finite values as numbers, non-finite as `null`.
pub fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 { f64::NAN } else { a / b }
}

/// `section_11` (§13): per-row nominal savings at 1M completion tokens per step.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Section11 {
    /// Rows seen (error rows included).
    pub total: u64,
    /// Rows with pred ≥ gold.
    pub passed: u64,
    /// Passed rows with `save_gt > 0`.
    pub cost_score_cases_used: u64,
    /// Σ save_gt (USD), plain left-to-right.
    pub sum_save_gt_usd: f64,
    /// Σ save_test (USD).
    pub sum_save_test_usd: f64,
}

/// Nominal cost of one step at 1M completion tokens: `1_000_000 * OUTPUT[tier] / 1_000_000`.
fn nominal(tier: Tier) -> f64 {
    1_000_000.0 * OUTPUT_USD_PER_1M[tier as usize] / 1_000_000.0
}

impl Section11 {
    /// Add one record.
    pub fn add(&mut self, r: &EvalRecord) {
        self.total += 1;
        let Some(pred) = r.pred() else { return };
        if pred >= r.gold {
            self.passed += 1;
            let base = nominal(Tier::High);
            let save_gt = base - nominal(r.gold);
            let save_test = base - nominal(pred);
            if save_gt > 0.0 {
                self.sum_save_gt_usd += save_gt;
                self.sum_save_test_usd += save_test;
                self.cost_score_cases_used += 1;
            }
        }
    }

    /// `pass_rate` (fraction; NaN without rows).
    pub fn pass_rate(&self) -> f64 {
        ratio(self.passed as f64, self.total as f64)
    }

    /// `cost_savings_score` = `100 * Σsave_test / Σsave_gt` (NaN unless Σsave_gt > 0).
    pub fn cost_savings_score(&self) -> f64 {
        if self.sum_save_gt_usd > 0.0 {
            100.0 * self.sum_save_test_usd / self.sum_save_gt_usd
        } else {
            f64::NAN
        }
    }

    /// The reference's JSON block.
    pub fn to_json(&self) -> Value {
        json!({
            "pass_rate": num(self.pass_rate()),
            "passed": self.passed,
            "total": self.total,
            "cost_savings_score": num(self.cost_savings_score()),
            "cost_score_cases_used": self.cost_score_cases_used,
            "sum_save_gt_usd": num(self.sum_save_gt_usd),
            "sum_save_test_usd": num(self.sum_save_test_usd),
            "assumed_completion_tokens_per_routing_step": 1_000_000,
            "baseline_tier": "high",
            "baseline_nominal_cost_per_step_usd": num(nominal(Tier::High)),
            "cost_formula": SECTION11_COST_FORMULA,
            "note": SECTION11_NOTE,
        })
    }
}

impl Accumulator for Section11 {
    fn merge(&mut self, other: Self) {
        self.total += other.total;
        self.passed += other.passed;
        self.cost_score_cases_used += other.cost_score_cases_used;
        self.sum_save_gt_usd += other.sum_save_gt_usd;
        self.sum_save_test_usd += other.sum_save_test_usd;
    }
}

/// `compute_section11` over `subset` in order.
pub fn section_11(records: &[EvalRecord], subset: &[usize]) -> Section11 {
    let mut s = Section11::default();
    for &i in subset {
        s.add(&records[i]);
    }
    s
}

/// `router_accounting` (§14).
#[derive(Debug, Clone, PartialEq)]
pub struct RouterAccounting {
    /// Trajectories.
    pub total_trajectories: u64,
    /// Passed trajectories.
    pub passed_trajectories: u64,
    /// Exact-match trajectories.
    pub exact_match_trajectories: u64,
    /// Steps walked.
    pub evaluable_step_count: u64,
    /// Error rows.
    pub skipped_step_count: u64,
    /// Σ (baseline − gold) USD.
    pub d_usd: f64,
    /// Σ (baseline − pred) over passed trajectories − Σ pred over failed ones, USD.
    pub n_usd: f64,
}

impl RouterAccounting {
    /// Compute from a walk.
    pub fn from_walk(
        records: &[EvalRecord],
        subset: &[usize],
        steps: &[Step],
        statuses: &[TrajectoryStatus],
    ) -> Self {
        let mut d = 0.0;
        let mut n = 0.0;
        for s in steps {
            d += s.baseline.cost - s.gold.cost;
            if s.trajectory_passed {
                n += s.baseline.cost - s.pred.cost;
            } else {
                n -= s.pred.cost;
            }
        }
        RouterAccounting {
            total_trajectories: statuses.len() as u64,
            passed_trajectories: statuses.iter().filter(|s| s.passed()).count() as u64,
            exact_match_trajectories: statuses.iter().filter(|s| s.exact()).count() as u64,
            evaluable_step_count: steps.len() as u64,
            skipped_step_count: subset.iter().filter(|&&i| records[i].is_error()).count() as u64,
            d_usd: d,
            n_usd: n,
        }
    }

    /// `pass_rate_percent`.
    pub fn pass_rate_percent(&self) -> f64 {
        ratio(
            100.0 * self.passed_trajectories as f64,
            self.total_trajectories as f64,
        )
    }
    /// `exact_match_rate_percent`.
    pub fn exact_match_rate_percent(&self) -> f64 {
        ratio(
            100.0 * self.exact_match_trajectories as f64,
            self.total_trajectories as f64,
        )
    }
    /// `accounting_savings_score_percent` = `100 N / D` if D > 0, else NaN.
    pub fn savings_percent(&self) -> f64 {
        if self.d_usd > 0.0 {
            100.0 * self.n_usd / self.d_usd
        } else {
            f64::NAN
        }
    }
    /// `overall_score_percent` = `(pass + exact + savings) / 3`.
    pub fn overall_percent(&self) -> f64 {
        let (a, b, c) = (
            self.pass_rate_percent(),
            self.exact_match_rate_percent(),
            self.savings_percent(),
        );
        if a.is_nan() || b.is_nan() || c.is_nan() {
            f64::NAN
        } else {
            (a + b + c) / 3.0
        }
    }

    /// The reference's JSON block.
    pub fn to_json(&self) -> Value {
        let note = if self.d_usd > 0.0 {
            ACCOUNTING_NOTE
        } else if self.total_trajectories == 0 {
            ACCOUNTING_NOTE_EMPTY
        } else {
            ACCOUNTING_NOTE_D0
        };
        json!({
            "total_trajectories": self.total_trajectories,
            "passed_trajectories": self.passed_trajectories,
            "exact_match_trajectories": self.exact_match_trajectories,
            "evaluable_step_count": self.evaluable_step_count,
            "skipped_step_count": self.skipped_step_count,
            "D_usd": num(self.d_usd),
            "N_usd": num(self.n_usd),
            "pass_rate_percent": num(self.pass_rate_percent()),
            "exact_match_rate_percent": num(self.exact_match_rate_percent()),
            "accounting_savings_score_percent": num(self.savings_percent()),
            "overall_score_percent": num(self.overall_percent()),
            "fallback_output_tokens": 500,
            "note": note,
        })
    }
}

/// One benchmark's block of `scores_v2.by_benchmark`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct V2Benchmark {
    /// Benchmark name.
    pub name: String,
    /// Rows of the benchmark (error rows included).
    pub row_count: u64,
    /// Evaluable steps.
    pub step_count: u64,
    /// Failed trajectories attributed to the benchmark.
    pub failed_trajectory_count: u64,
    /// Σ baseline over steps of failed trajectories (USD).
    pub failed_retry_baseline_usd: f64,
    /// Σ baseline (USD).
    pub d_usd: f64,
    /// Trajectory-level numerator (USD).
    pub n_usd: f64,
    /// `100 N / D` or NaN.
    pub score: f64,
    /// `row_count / total_rows`.
    pub weight: f64,
}

/// `scores_v2` (§15), the headline.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoresV2 {
    /// Rows.
    pub total_rows: u64,
    /// Error rows.
    pub error_rows: u64,
    /// Rows with pred ≥ gold.
    pub case_pass_count: u64,
    /// Rows with pred = gold.
    pub case_exact_count: u64,
    /// Trajectories.
    pub total_trajectories: u64,
    /// Passed trajectories.
    pub passed_trajectories: u64,
    /// Rows in passed trajectories.
    pub rows_in_passed_trajectories: u64,
    /// Per benchmark, first-appearance order.
    pub by_benchmark: Vec<V2Benchmark>,
    /// Weighted cost score (NaN when every benchmark is NaN or there are no rows).
    pub cost_savings_score_percent: f64,
}

impl ScoresV2 {
    /// Compute from the global walk.
    pub fn from_walk(
        records: &[EvalRecord],
        steps: &[Step],
        statuses: &[TrajectoryStatus],
    ) -> Self {
        let total_rows = records.len() as u64;
        let mut order: Vec<V2Benchmark> = Vec::new();
        let mut idx: rustc_hash::FxHashMap<&str, usize> = Default::default();
        for r in records {
            let i = *idx.entry(r.benchmark.as_str()).or_insert_with(|| {
                order.push(V2Benchmark {
                    name: r.benchmark.clone(),
                    ..Default::default()
                });
                order.len() - 1
            });
            order[i].row_count += 1;
        }
        // Failed trajectories seen per benchmark.
        let mut counted: rustc_hash::FxHashSet<(usize, usize)> = Default::default();
        let mut counted_any: rustc_hash::FxHashSet<usize> = Default::default();
        for s in steps {
            let b = idx[records[s.record].benchmark.as_str()];
            let e = &mut order[b];
            e.step_count += 1;
            e.d_usd += s.baseline.cost;
            if s.trajectory_passed {
                e.n_usd += s.baseline.cost - s.pred.cost;
            } else {
                e.n_usd -= s.pred.cost;
                e.failed_retry_baseline_usd += s.baseline.cost;
                if counted.insert((b, s.trajectory)) {
                    e.failed_trajectory_count += 1;
                    counted_any.insert(s.trajectory);
                }
            }
        }
        // Failed trajectories with no step (only error rows): benchmark of their first row.
        let groups = super::walk::group(records, &(0..records.len()).collect::<Vec<_>>());
        for (t, (rows, st)) in groups.iter().enumerate() {
            if st.passed() || counted_any.contains(&t) {
                continue;
            }
            let b = idx[records[rows[0]].benchmark.as_str()];
            order[b].failed_trajectory_count += 1;
        }
        let mut wsum = 0.0;
        let mut have = false;
        for e in &mut order {
            e.score = if e.d_usd > 0.0 {
                100.0 * e.n_usd / e.d_usd
            } else {
                f64::NAN
            };
            e.weight = e.row_count as f64 / total_rows as f64;
            if !e.score.is_nan() {
                wsum += e.weight * e.score;
                have = true;
            }
        }
        let passed: Vec<&TrajectoryStatus> = statuses.iter().filter(|s| s.passed()).collect();
        ScoresV2 {
            total_rows,
            error_rows: records.iter().filter(|r| r.is_error()).count() as u64,
            case_pass_count: records.iter().filter(|r| r.is_passed()).count() as u64,
            case_exact_count: records.iter().filter(|r| r.is_match()).count() as u64,
            total_trajectories: statuses.len() as u64,
            passed_trajectories: passed.len() as u64,
            rows_in_passed_trajectories: passed.iter().map(|s| s.rows as u64).sum(),
            by_benchmark: order,
            cost_savings_score_percent: if total_rows > 0 && have {
                wsum
            } else {
                f64::NAN
            },
        }
    }

    fn pct(&self, x: u64) -> f64 {
        ratio(100.0 * x as f64, self.total_rows as f64)
    }
    /// `case_pass_rate_percent`.
    pub fn case_pass_rate_percent(&self) -> f64 {
        self.pct(self.case_pass_count)
    }
    /// `case_exact_match_percent`.
    pub fn case_exact_match_percent(&self) -> f64 {
        self.pct(self.case_exact_count)
    }
    /// `trajectory_pass_rate_percent` (row-weighted).
    pub fn trajectory_pass_rate_percent(&self) -> f64 {
        self.pct(self.rows_in_passed_trajectories)
    }
    /// `combined_score_percent` = `sum([a, b, c, d]) / 4` (CPython 3.11 plain summation).
    pub fn combined_score_percent(&self) -> f64 {
        let xs = [
            self.case_pass_rate_percent(),
            self.case_exact_match_percent(),
            self.trajectory_pass_rate_percent(),
            self.cost_savings_score_percent,
        ];
        if xs.iter().any(|x| x.is_nan()) {
            return f64::NAN;
        }
        let mut s = 0.0;
        for x in xs {
            s += x;
        }
        s / 4.0
    }

    /// The reference's JSON block.
    pub fn to_json(&self) -> Value {
        let mut by = Map::new();
        for e in &self.by_benchmark {
            by.insert(
                e.name.clone(),
                json!({
                    "row_count": e.row_count,
                    "step_count": e.step_count,
                    "failed_trajectory_count": e.failed_trajectory_count,
                    "failed_retry_baseline_usd": num(e.failed_retry_baseline_usd),
                    "D_usd": num(e.d_usd),
                    "N_usd": num(e.n_usd),
                    "cost_savings_score_percent": num(e.score),
                    "weight_in_global_cost_savings": num(e.weight),
                }),
            );
        }
        json!({
            "case_pass_rate_percent": num(self.case_pass_rate_percent()),
            "case_exact_match_percent": num(self.case_exact_match_percent()),
            "trajectory_pass_rate_percent": num(self.trajectory_pass_rate_percent()),
            "cost_savings_score_percent": num(self.cost_savings_score_percent),
            "combined_score_percent": num(self.combined_score_percent()),
            "total_rows": self.total_rows,
            "error_rows": self.error_rows,
            "case_pass_count": self.case_pass_count,
            "case_exact_count": self.case_exact_count,
            "total_trajectories": self.total_trajectories,
            "passed_trajectories": self.passed_trajectories,
            "rows_in_passed_trajectories": self.rows_in_passed_trajectories,
            "by_benchmark": by,
            "note": SCORES_V2_NOTE,
        })
    }
}

impl ScoresV2 {
    /// The headline metrics of `scores_v2` by key, in the reference's key order (percent).
    pub const HEADLINE: [&'static str; 5] = [
        "case_pass_rate_percent",
        "case_exact_match_percent",
        "trajectory_pass_rate_percent",
        "cost_savings_score_percent",
        "combined_score_percent",
    ];

    /// The value of a [`HEADLINE`](Self::HEADLINE) metric (percent; NaN when undefined).
    pub fn headline(&self, key: &str) -> Option<f64> {
        Some(match key {
            "case_pass_rate_percent" => self.case_pass_rate_percent(),
            "case_exact_match_percent" => self.case_exact_match_percent(),
            "trajectory_pass_rate_percent" => self.trajectory_pass_rate_percent(),
            "cost_savings_score_percent" => self.cost_savings_score_percent,
            "combined_score_percent" => self.combined_score_percent(),
            _ => return None,
        })
    }
}

/// Gates (`--fail-under`) on `scores_v2`: the [`ScoresV2::HEADLINE`] keys (percent).
impl routeval_core::gate::NamedMetrics for ScoresV2 {
    fn metric_names(&self) -> Vec<String> {
        Self::HEADLINE.iter().map(|s| s.to_string()).collect()
    }
    fn metric_value(&self, name: &str) -> Option<f64> {
        self.headline(name).filter(|v| v.is_finite())
    }
    /// Percent: pass and match rates in `[0, 100]`; the cost savings and combined scores at
    /// most 100 and negative when failed trajectories cost more than they save.
    fn metric_range(&self, name: &str) -> Option<routeval_core::gate::MetricRange> {
        use routeval_core::gate::MetricRange;
        match name {
            "cost_savings_score_percent" | "combined_score_percent" => Some(MetricRange {
                min: f64::NEG_INFINITY,
                ..MetricRange::PERCENT
            }),
            _ => Some(MetricRange::PERCENT),
        }
    }
}

/// One benchmark of the top-level `by_benchmark` (§16).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkBlock {
    /// Benchmark name.
    pub name: String,
    /// Rows.
    pub sampled: u64,
    /// Rows with pred = gold.
    pub exact_match: u64,
    /// Error rows.
    pub api_errors: u64,
    /// `section_11` on the benchmark's rows.
    pub section_11: Section11,
    /// `router_accounting` on the benchmark's rows (trajectories split by benchmark).
    pub router_accounting: RouterAccounting,
}

impl BenchmarkBlock {
    /// The reference's JSON block.
    pub fn to_json(&self) -> Value {
        let ok = self.sampled - self.api_errors;
        json!({
            "sampled": self.sampled,
            "exact_match": self.exact_match,
            "api_errors": self.api_errors,
            "tier_match_accuracy": num(ratio(self.exact_match as f64, ok as f64)),
            "valid_response_rate": num(ratio(ok as f64, self.sampled as f64)),
            "pass_rate": num(self.section_11.pass_rate()),
            "passed": self.section_11.passed,
            "cost_savings_score": num(self.section_11.cost_savings_score()),
            "cost_score_cases_used": self.section_11.cost_score_cases_used,
            "router_accounting": self.router_accounting.to_json(),
        })
    }
}

/// All four metric blocks of an eval.
#[derive(Debug, Clone, PartialEq)]
pub struct CrbMetrics {
    /// `scores_v2`.
    pub scores_v2: ScoresV2,
    /// `section_11` over all rows.
    pub section_11: Section11,
    /// `router_accounting` over all rows.
    pub router_accounting: RouterAccounting,
    /// `by_benchmark`, sorted by name.
    pub by_benchmark: Vec<BenchmarkBlock>,
    /// The global walk's steps (for per-step reports).
    pub steps: Vec<Step>,
}

impl CrbMetrics {
    /// Compute everything (the global walk is shared by `router_accounting` and `scores_v2`;
    /// each benchmark is walked on its own rows, as the reference does).
    pub fn compute(records: &[EvalRecord], ctx: &mut WalkContext<'_>) -> Result<Self, WalkError> {
        let all: Vec<usize> = (0..records.len()).collect();
        let section = section_11(records, &all);
        let (steps, statuses) = ctx.walk(records, &all)?;
        let ra = RouterAccounting::from_walk(records, &all, &steps, &statuses);
        let v2 = ScoresV2::from_walk(records, &steps, &statuses);
        let mut names: Vec<&str> = records.iter().map(|r| r.benchmark.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let mut blocks = Vec::new();
        for name in names {
            let subset: Vec<usize> = all
                .iter()
                .copied()
                .filter(|&i| records[i].benchmark == name)
                .collect();
            let (bsteps, bstat) = ctx.walk(records, &subset)?;
            blocks.push(BenchmarkBlock {
                name: name.to_string(),
                sampled: subset.len() as u64,
                exact_match: subset.iter().filter(|&&i| records[i].is_match()).count() as u64,
                api_errors: subset.iter().filter(|&&i| records[i].is_error()).count() as u64,
                section_11: section_11(records, &subset),
                router_accounting: RouterAccounting::from_walk(records, &subset, &bsteps, &bstat),
            });
        }
        Ok(CrbMetrics {
            scores_v2: v2,
            section_11: section,
            router_accounting: ra,
            by_benchmark: blocks,
            steps,
        })
    }

    /// `{"scores_v2", "section_11", "router_accounting", "by_benchmark"}`.
    pub fn blocks_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("scores_v2".into(), self.scores_v2.to_json());
        m.insert("section_11".into(), self.section_11.to_json());
        m.insert("router_accounting".into(), self.router_accounting.to_json());
        let mut by = Map::new();
        for b in &self.by_benchmark {
            by.insert(b.name.clone(), b.to_json());
        }
        m.insert("by_benchmark".into(), Value::Object(by));
        m
    }
}

/// How the rows were selected (summary header fields).
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// `shard`: the bank path as given.
    pub shard: String,
    /// `"full_bank"` or `"proportional_sample"`.
    pub sample_mode: String,
    /// The seed (reported in full-bank mode too).
    pub seed: Value,
    /// Quotas in sorted-name order, or None.
    pub quotas: Option<Vec<(String, i64)>>,
    /// Rows per benchmark of the selection (sorted names).
    pub benchmark_counts: Vec<(String, u64)>,
}

/// `build_eval_summary` (§17): the whole summary, keys in the reference's order, with
/// `extra` keys first (core keys overwrite colliding extra keys but keep their position).
/// Moves the records' messages into `rows`.
pub fn build_summary(
    label: &str,
    sel: &Selection,
    records: &mut [EvalRecord],
    metrics: &CrbMetrics,
    extra: Option<&Map<String, Value>>,
    include_rows: bool,
) -> Map<String, Value> {
    let n = records.len() as u64;
    let errors: Vec<Value> = records
        .iter()
        .filter_map(|r| match &r.outcome {
            super::records::Outcome::Error(e) => Some(json!({"id": r.id, "error": e})),
            _ => None,
        })
        .collect();
    let n_err = errors.len() as u64;
    let correct = records.iter().filter(|r| r.is_match()).count() as u64;
    let graded = n - n_err;
    let acc = ratio(correct as f64, graded as f64);
    let mut s = extra.cloned().unwrap_or_default();
    s.insert("classifier".into(), Value::String(label.to_string()));
    s.insert("shard".into(), Value::String(sel.shard.clone()));
    s.insert("sample_mode".into(), Value::String(sel.sample_mode.clone()));
    s.insert("sampled".into(), Value::from(n));
    s.insert("seed".into(), sel.seed.clone());
    s.insert(
        "proportional_quotas".into(),
        match &sel.quotas {
            None => Value::Null,
            Some(q) => Value::Object(
                q.iter()
                    .map(|(k, v)| (k.clone(), Value::from(*v)))
                    .collect(),
            ),
        },
    );
    s.insert(
        "benchmark_counts".into(),
        Value::Object(
            sel.benchmark_counts
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(*v)))
                .collect(),
        ),
    );
    s.insert("exact_match".into(), Value::from(correct));
    s.insert("tier_match_accuracy".into(), num(acc));
    s.insert("accuracy_excluding_errors".into(), num(acc));
    s.insert("api_errors".into(), Value::from(n_err));
    s.insert(
        "valid_response_rate".into(),
        num(ratio(graded as f64, n as f64)),
    );
    for (k, v) in metrics.blocks_json() {
        s.insert(k, v);
    }
    s.insert("errors".into(), Value::Array(errors));
    if include_rows {
        s.insert(
            "rows".into(),
            Value::Array(records.iter_mut().map(|r| r.to_json()).collect()),
        );
    }
    s
}

/// Rows per benchmark, sorted by name (`rows_per_benchmark`).
pub fn benchmark_counts<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<(String, u64)> {
    let mut m: std::collections::BTreeMap<String, u64> = Default::default();
    for n in names {
        *m.entry(n.to_string()).or_default() += 1;
    }
    m.into_iter().collect()
}
