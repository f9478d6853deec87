//! CommonRouterBench's `main.metrics` (`specs/crb.md` §19): per-case nominal costs
//! ([`CaseMetrics`]), their aggregate ([`aggregate_routerbench_metrics`], the reference CLI's
//! `metrics --cases`), and [`routing_supervision_accuracy`].
//!
//! Sums are plain left-to-right additions (CPython 3.11 `sum()`); CPython ≥ 3.12 differs in the
//! last bit for `money_saved_test` (compensated `sum()`), see `golden/crb/python312_differences.json`.
//! NaN is written as JSON `null`. Quirk kept: the `pricing` block shows the reference's stale
//! output prices (mid 1.2, mid_high 3.0, high 20.0), not the prices used (2.0, 5.0, 25.0).

use super::scores::num;
use routeval_core::{Accumulator, Tier};
use routeval_tier_cost::pricing::{PricingError, StepCost, model_to_tier, step_nominal_cost_usd};
use routeval_tier_cost::pyjson::{py_repr_str, truthy};
use serde_json::{Value, json};

/// `aggregate_routerbench_metrics.cost_score_rule` (constant text).
pub const COST_SCORE_RULE: &str = "100 * sum(save_test) / sum(save_gt) over passed cases with save_gt > 0; costs from fixed tier rates * completion tokens";
/// `money_saved_test.definition` (constant text).
pub const MONEY_DEFINITION: &str =
    "baseline_nominal - test_nominal per case (passed cases only in mean/total below)";

/// A failure of the metrics functions (messages are the reference's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MetricsError {
    /// A required key is missing (the reference raises `KeyError`).
    #[error("missing key {0}")]
    MissingKey(String),
    /// Any other invalid input (the reference's `ValueError` text).
    #[error("{0}")]
    Invalid(String),
    /// A pricing error while resolving steps.
    #[error("{0}")]
    Pricing(#[from] PricingError),
    /// A nominal cost (USD) that is not a number, where the case needs it (passed and not
    /// replaced by `*_steps`). The reference crashes there with a `TypeError`.
    #[error("{key} must be a number (USD), got {got}")]
    CostNotNumber {
        /// The key, e.g. `baseline_cost_nominal`.
        key: &'static str,
        /// The value as JSON text.
        got: String,
    },
}

/// One case of the metrics CLI: did the task pass, and what did the three paths cost.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaseMetrics {
    /// `str(case_id)`.
    pub case_id: String,
    /// Python truthiness of `task_passed` (the string `"false"` is **true**, as in the reference).
    pub task_passed: bool,
    /// Always-high nominal cost (USD), replaced by `baseline_steps` when given.
    pub baseline_cost_nominal: Option<f64>,
    /// Optimal (gold) nominal cost (USD).
    pub optimal_cost_nominal: Option<f64>,
    /// Router nominal cost (USD).
    pub test_cost_nominal: Option<f64>,
    /// Steps of the baseline path.
    pub baseline_steps: Option<Vec<StepCost>>,
    /// Steps of the optimal path.
    pub optimal_steps: Option<Vec<StepCost>>,
    /// Steps of the router's path.
    pub test_steps: Option<Vec<StepCost>>,
}

fn resolve_tier(s: &StepCost) -> Result<Tier, MetricsError> {
    if let Some(t) = &s.tier {
        return Tier::from_name(t)
            .ok_or_else(|| MetricsError::Invalid(format!("Unknown tier: {}", py_repr_str(t))));
    }
    match &s.model {
        Some(m) => Ok(model_to_tier(m)?),
        None => Err(MetricsError::Invalid(
            "StepCost requires either model or tier".into(),
        )),
    }
}

fn path_cost(steps: &[StepCost]) -> Result<f64, MetricsError> {
    let mut total = 0.0;
    for s in steps {
        let tier = resolve_tier(s)?;
        total += step_nominal_cost_usd(s.completion_tokens, tier)
            .map_err(|_| MetricsError::Invalid("completion_tokens must be non-negative".into()))?;
    }
    Ok(total)
}

impl CaseMetrics {
    /// `resolved_costs()`: (baseline, optimal, test) in USD; `*_steps` win over nominal values.
    pub fn resolved_costs(&self) -> Result<(f64, f64, f64), MetricsError> {
        let one = |steps: &Option<Vec<StepCost>>,
                   nominal: Option<f64>|
         -> Result<Option<f64>, MetricsError> {
            match steps {
                Some(s) => Ok(Some(path_cost(s)?)),
                None => Ok(nominal),
            }
        };
        let b = one(&self.baseline_steps, self.baseline_cost_nominal)?;
        let o = one(&self.optimal_steps, self.optimal_cost_nominal)?;
        let t = one(&self.test_steps, self.test_cost_nominal)?;
        match (b, o, t) {
            (Some(b), Some(o), Some(t)) => Ok((b, o, t)),
            _ => Err(MetricsError::Invalid(
                "CaseMetrics needs baseline/optimal/test costs or *_steps to compute path_nominal_cost_usd".into(),
            )),
        }
    }
}

fn py_int(v: &Value) -> Result<i64, MetricsError> {
    match v {
        Value::Bool(b) => Ok(*b as i64),
        Value::Number(n) => n
            .as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite())
                    .map(|f| f.trunc() as i64)
            })
            .ok_or_else(|| MetricsError::Invalid(format!("invalid completion_tokens {n}"))),
        Value::String(s) => s.trim().parse().map_err(|_| {
            MetricsError::Invalid(format!(
                "invalid literal for int() with base 10: {}",
                py_repr_str(s)
            ))
        }),
        other => Err(MetricsError::Invalid(format!(
            "invalid completion_tokens {other}"
        ))),
    }
}

fn steps_of(v: Option<&Value>) -> Result<Option<Vec<StepCost>>, MetricsError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let items = v.as_array().ok_or_else(|| {
        MetricsError::Invalid("baseline_steps / optimal_steps / test_steps must be a list".into())
    })?;
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        let o = it
            .as_object()
            .ok_or_else(|| MetricsError::Invalid("each step must be an object".into()))?;
        let ct = o
            .get("completion_tokens")
            .ok_or_else(|| MetricsError::MissingKey("'completion_tokens'".into()))?;
        let text = |k: &str| o.get(k).and_then(|x| x.as_str().map(str::to_string));
        out.push(StepCost {
            completion_tokens: py_int(ct)?,
            model: text("model"),
            tier: text("tier"),
        });
    }
    Ok(Some(out))
}

/// `case_metrics_from_dict(d)`.
///
/// Nominal costs are taken as the reference does arithmetic on them: numbers, and booleans as
/// 1/0 (Python `True - 0.5`); `null` or absent is "not given".
///
/// # Errors
/// [`MetricsError::MissingKey`] without `case_id`/`task_passed`; [`MetricsError::Invalid`] for
/// malformed `*_steps`; [`MetricsError::CostNotNumber`] for a non-numeric cost the case needs
/// (passed, no `*_steps` replacing it), where the reference crashes. A non-numeric cost the
/// reference never reads (failed case, or replaced by steps) is ignored, as there.
pub fn case_metrics_from_value(d: &Value) -> Result<CaseMetrics, MetricsError> {
    let case_id = d
        .get("case_id")
        .ok_or_else(|| MetricsError::MissingKey("'case_id'".into()))?;
    let passed = truthy(
        d.get("task_passed")
            .ok_or_else(|| MetricsError::MissingKey("'task_passed'".into()))?,
    );
    let baseline_steps = steps_of(d.get("baseline_steps"))?;
    let optimal_steps = steps_of(d.get("optimal_steps"))?;
    let test_steps = steps_of(d.get("test_steps"))?;
    let cost = |key: &'static str, replaced: bool| -> Result<Option<f64>, MetricsError> {
        match d.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(f64::from(u8::from(*b)))),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(other) if passed && !replaced => Err(MetricsError::CostNotNumber {
                key,
                got: other.to_string(),
            }),
            Some(_) => Ok(None),
        }
    };
    Ok(CaseMetrics {
        case_id: routeval_tier_cost::pyjson::py_str(case_id),
        task_passed: passed,
        baseline_cost_nominal: cost("baseline_cost_nominal", baseline_steps.is_some())?,
        optimal_cost_nominal: cost("optimal_cost_nominal", optimal_steps.is_some())?,
        test_cost_nominal: cost("test_cost_nominal", test_steps.is_some())?,
        baseline_steps,
        optimal_steps,
        test_steps,
    })
}

/// `compute_case_savings(b, o, t)` = `(b − o, b − t)` (save_gt, save_test).
pub fn compute_case_savings(b: f64, o: f64, t: f64) -> (f64, f64) {
    (b - o, b - t)
}

/// The aggregate of [`aggregate_routerbench_metrics`], a mergeable accumulator.
///
/// Counts merge exactly; the USD sums and the money list merge in shard order (append), which
/// equals one pass when shards are merged in case order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RouterbenchAggregate {
    /// Cases.
    pub valid_cases: u64,
    /// Passed cases.
    pub passed_cases: u64,
    /// Passed cases with save_gt > 0.
    pub cost_score_cases_used: u64,
    /// Σ save_gt over those (USD).
    pub sum_save_gt_usd: f64,
    /// Σ save_test over those (USD).
    pub sum_save_test_usd: f64,
    /// save_test of every passed case, in order (USD).
    pub money: Vec<f64>,
}

impl RouterbenchAggregate {
    /// Add one case (costs resolved only when it passed).
    pub fn add(&mut self, c: &CaseMetrics) -> Result<(), MetricsError> {
        self.valid_cases += 1;
        if !c.task_passed {
            return Ok(());
        }
        self.passed_cases += 1;
        let (b, o, t) = c.resolved_costs()?;
        let (save_gt, save_test) = compute_case_savings(b, o, t);
        self.money.push(save_test);
        if save_gt > 0.0 {
            self.sum_save_gt_usd += save_gt;
            self.sum_save_test_usd += save_test;
            self.cost_score_cases_used += 1;
        }
        Ok(())
    }

    /// The reference's output object (non-finite as `null`).
    pub fn to_json(&self, cap_cost_score_at_100: bool) -> Value {
        let mut score = if self.sum_save_gt_usd > 0.0 {
            100.0 * self.sum_save_test_usd / self.sum_save_gt_usd
        } else {
            f64::NAN
        };
        if cap_cost_score_at_100 && score > 100.0 {
            score = 100.0;
        }
        let (mean, total) = if self.money.is_empty() {
            (Value::Null, Value::from(0))
        } else {
            let mut s = 0.0;
            for x in &self.money {
                s += x;
            }
            (num(s / self.money.len() as f64), num(s))
        };
        json!({
            "valid_cases": self.valid_cases,
            "passed_cases": self.passed_cases,
            "pass_rate": num(self.passed_cases as f64 / self.valid_cases as f64),
            "cost_score_cases_used": self.cost_score_cases_used,
            "cost_score_excludes_nonpositive_save_gt": true,
            "pricing": {"unit": "USD_per_1M_output_tokens", "low": 0.5, "mid": 1.2, "mid_high": 3.0, "high": 20.0},
            "cost_score_rule": COST_SCORE_RULE,
            "sum_save_gt_usd": num(self.sum_save_gt_usd),
            "sum_save_test_usd": num(self.sum_save_test_usd),
            "cost_savings_score": num(score),
            "money_saved_test": {
                "currency": "USD",
                "definition": MONEY_DEFINITION,
                "mean_per_case_over_passed": mean,
                "total_over_passed": total,
            },
        })
    }
}

impl Accumulator for RouterbenchAggregate {
    fn merge(&mut self, other: Self) {
        self.valid_cases += other.valid_cases;
        self.passed_cases += other.passed_cases;
        self.cost_score_cases_used += other.cost_score_cases_used;
        self.sum_save_gt_usd += other.sum_save_gt_usd;
        self.sum_save_test_usd += other.sum_save_test_usd;
        self.money.extend(other.money);
    }
}

/// `aggregate_routerbench_metrics(cases, cap_cost_score_at_100=...)`; empty → error.
pub fn aggregate_routerbench_metrics(
    cases: &[CaseMetrics],
    cap_cost_score_at_100: bool,
) -> Result<Value, MetricsError> {
    if cases.is_empty() {
        return Err(MetricsError::Invalid("cases must be non-empty".into()));
    }
    let mut agg = RouterbenchAggregate::default();
    for c in cases {
        agg.add(c)?;
    }
    Ok(agg.to_json(cap_cost_score_at_100))
}

fn label_id(label: &Value) -> Result<i64, MetricsError> {
    label
        .as_str()
        .and_then(Tier::from_name)
        .map(|t| t.id() as i64)
        .ok_or_else(|| {
            MetricsError::Invalid(format!(
                "Unknown public tier: {}; expected one of ['low', 'mid', 'mid_high', 'high']",
                match label {
                    Value::String(s) => py_repr_str(s),
                    other => routeval_tier_cost::pyjson::py_repr(other),
                }
            ))
        })
}

fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(*b as i64),
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f.trunc() as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `routing_supervision_accuracy(gold_rows, predictions_by_id)` →
/// `{total, correct, accuracy (null if total is 0), missing_predictions}`.
pub fn routing_supervision_accuracy(
    gold_rows: &[Value],
    predictions_by_id: &serde_json::Map<String, Value>,
) -> Result<Value, MetricsError> {
    let (mut total, mut correct, mut missing) = (0u64, 0u64, 0u64);
    for g in gold_rows {
        let id = g
            .get("id")
            .ok_or_else(|| MetricsError::Invalid("gold row missing id".into()))?;
        let key = routeval_tier_cost::pyjson::py_str(id);
        total += 1;
        let Some(p) = predictions_by_id.get(&key) else {
            missing += 1;
            continue;
        };
        let gl = g.get("target_tier").filter(|v| !v.is_null());
        let gi = g.get("target_tier_id").filter(|v| !v.is_null());
        let idr = match id {
            Value::String(s) => py_repr_str(s),
            other => other.to_string(),
        };
        if gl.is_none() && gi.is_none() {
            return Err(MetricsError::Invalid(format!(
                "gold row {idr} missing target_tier and target_tier_id"
            )));
        }
        if let (Some(l), Some(i)) = (gl, gi)
            && Some(label_id(l)?) != int_of(i)
        {
            return Err(MetricsError::Invalid(format!(
                "gold row {idr} has inconsistent target_tier / target_tier_id"
            )));
        }
        let pl = p.get("predicted_tier").filter(|v| !v.is_null());
        let pi = p.get("predicted_tier_id").filter(|v| !v.is_null());
        let mut ok = false;
        if let (Some(a), Some(b)) = (pl, gl)
            && a == b
        {
            ok = true;
        }
        if !ok
            && let (Some(a), Some(b)) = (pi, gi)
            && int_of(a).is_some()
            && int_of(a) == int_of(b)
        {
            ok = true;
        }
        if !ok
            && let (Some(l), None, Some(i)) = (gl, pl, pi)
            && Some(label_id(l)?) == int_of(i)
        {
            ok = true;
        }
        if !ok
            && let (Some(i), None, Some(l)) = (gi, pi, pl)
            && Some(label_id(l)?) == int_of(i)
        {
            ok = true;
        }
        correct += ok as u64;
    }
    Ok(json!({
        "total": total,
        "correct": correct,
        "accuracy": num(if total == 0 { f64::NAN } else { correct as f64 / total as f64 }),
        "missing_predictions": missing,
    }))
}
