//! One point of a threshold sweep: the blocks `crb eval` prints (`scores_v2`, `section_11`,
//! `router_accounting`) for a given tier per row, computed with the same functions
//! [`CrbMetrics::compute`](super::scores::CrbMetrics::compute) uses, on one shared
//! [`WalkContext`] so token counts are computed once for the whole sweep.
//!
//! Costs: `cost_usd` is the predicted path's bill as the walk prices it (prompt caching
//! included; Σ over evaluable steps in walk order). It is **not** monotone in the tiers: the
//! price table's `mid_high` cache-write price (0.08333 USD/1M) is below `mid`'s (0.30), so a
//! long-prompt step moved from `mid` to `mid_high` can get cheaper, and a changed tier can
//! break or create a cache hit on the next step. `output_cost_usd` (Σ output tokens × the
//! predicted tier's output price) is monotone: raising any row's tier never lowers it.

use super::records::{EvalRecord, Outcome};
use super::scores::{RouterAccounting, ScoresV2, Section11, num, section_11};
use super::walk::{WalkContext, WalkError};
use routeval_core::Tier;
use routeval_tier_cost::pricing::OUTPUT_USD_PER_1M;
use serde_json::{Map, Value, json};

/// The blocks of one sweep point.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// `scores_v2` (as `crb eval`).
    pub scores_v2: ScoresV2,
    /// `section_11` over all rows (as `crb eval`).
    pub section_11: Section11,
    /// `router_accounting` over all rows (as `crb eval`).
    pub router_accounting: RouterAccounting,
    /// Predicted path's bill in USD (prompt caching included).
    pub cost_usd: f64,
    /// Σ output tokens × output price of the predicted tier, USD (monotone in the tiers).
    pub output_cost_usd: f64,
    /// Rows per predicted tier (low, mid, mid_high, high).
    pub tier_counts: [u64; 4],
}

/// Set every record's prediction to `tiers[i]` (no usage) and compute the point's blocks.
///
/// `ctx` must have been built on the same `records` (their messages); it is reused across
/// calls. Errors: the walk's ([`WalkError`]).
pub fn evaluate_tiers(
    records: &mut [EvalRecord],
    tiers: &[Tier],
    ctx: &mut WalkContext<'_>,
) -> Result<SweepPoint, WalkError> {
    let mut tier_counts = [0u64; 4];
    for (r, &t) in records.iter_mut().zip(tiers) {
        r.outcome = Outcome::Predicted {
            pred: t,
            usage: None,
        };
        tier_counts[t as usize] += 1;
    }
    let records: &[EvalRecord] = records;
    let all: Vec<usize> = (0..records.len()).collect();
    let section = section_11(records, &all);
    let (steps, statuses) = ctx.walk(records, &all)?;
    let ra = RouterAccounting::from_walk(records, &all, &steps, &statuses);
    let v2 = ScoresV2::from_walk(records, &steps, &statuses);
    let mut cost = 0.0;
    let mut out_cost = 0.0;
    for s in &steps {
        cost += s.pred.cost;
        out_cost += s.output_tokens as f64 * OUTPUT_USD_PER_1M[s.pred.tier as usize] / 1_000_000.0;
    }
    Ok(SweepPoint {
        scores_v2: v2,
        section_11: section,
        router_accounting: ra,
        cost_usd: cost,
        output_cost_usd: out_cost,
        tier_counts,
    })
}

impl SweepPoint {
    /// Share of rows per tier (fraction), `{"low", "mid", "mid_high", "high"}`.
    pub fn tier_shares(&self) -> Map<String, Value> {
        let n: u64 = self.tier_counts.iter().sum();
        Tier::ALL
            .iter()
            .map(|t| {
                let share = if n == 0 {
                    f64::NAN
                } else {
                    self.tier_counts[*t as usize] as f64 / n as f64
                };
                (t.name().to_string(), num(share))
            })
            .collect()
    }

    /// `{"scores_v2", "section_11", "router_accounting", "cost_usd", "output_cost_usd",
    /// "tier_shares"}` (the first three exactly as `crb eval --json` prints them).
    pub fn to_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("scores_v2".into(), self.scores_v2.to_json());
        m.insert("section_11".into(), self.section_11.to_json());
        m.insert("router_accounting".into(), self.router_accounting.to_json());
        m.insert("cost_usd".into(), num(self.cost_usd));
        m.insert("output_cost_usd".into(), num(self.output_cost_usd));
        m.insert("tier_shares".into(), json!(self.tier_shares()));
        m
    }
}
