//! Threshold-sweep points (`crb::sweep::evaluate_tiers`) on random banks with random tier
//! probabilities under CommonRouterBench's cumulative rule (no shared data: cl100k is built in).
//!
//! * A sweep point equals `CrbMetrics::compute` on records carrying the same predictions with a
//!   fresh walk context (the shared context changes no number).
//! * Raising τ never lowers a row's tier, so the output cost (`output_cost_usd`) is
//!   non-decreasing in τ and the share of rows at or above each tier never shrinks.
//! * The billed cost (`cost_usd`, prompt caching included) is *not* monotone under
//!   CommonRouterBench's prices: `mid_high` writes the prompt cache at 0.08333 USD/1M tokens,
//!   `mid` at 0.30, so a long-prompt step gets cheaper when moved from mid to mid_high.

use proptest::prelude::*;
use routeval_core::Tier;
use routeval_frontier::threshold::cumulative_tier;
use routeval_routing_scores::crb::records::{EvalRecord, TierPrediction, make_record};
use routeval_routing_scores::crb::scores::CrbMetrics;
use routeval_routing_scores::crb::sweep::evaluate_tiers;
use routeval_routing_scores::crb::walk::WalkContext;
use routeval_tier_cost::tokens::{
    TierTokenizers, TokenizerFiles, TokenizerSetup, build_tier_tokenizers,
};
use serde_json::json;
use std::sync::OnceLock;

fn toks() -> &'static TierTokenizers {
    static T: OnceLock<TierTokenizers> = OnceLock::new();
    T.get_or_init(|| {
        build_tier_tokenizers(
            TokenizerSetup::AllCl100k,
            &TokenizerFiles::default(),
            [true; 4],
        )
        .unwrap()
    })
}

/// (trajectory, step, gold, number of messages, words per message)
type Spec = (u8, u8, u8, u8, u16);

fn records(spec: &[Spec]) -> Vec<EvalRecord> {
    spec.iter()
        .enumerate()
        .map(|(i, &(t, step, gold, nmsg, words))| {
            let msgs: Vec<_> = (0..nmsg)
                .map(|k| {
                    let body = format!("w{k} ").repeat(words as usize);
                    if k % 2 == 0 {
                        json!({"role": "user", "content": format!("u{k} of {t} {body}")})
                    } else {
                        json!({"role": "assistant", "content": format!("a{k} answer {body}")})
                    }
                })
                .collect();
            let bench = ["swebench", "mtrag", "bfcl"][t as usize % 3];
            let row = json!({"id": format!("r{i}"), "benchmark": bench, "instance_id": format!("t{t}"), "step_index": step, "target_tier_id": gold % 4, "messages": msgs});
            make_record(
                row,
                json!(format!("r{i}")),
                bench.into(),
                Tier::from_id((gold % 4) as i64).unwrap(),
                Ok(TierPrediction { tier_id: 3, usage: None }),
            )
            .unwrap()
        })
        .collect()
}

fn bank() -> impl Strategy<Value = (Vec<Spec>, Vec<[f64; 4]>)> {
    proptest::collection::vec(
        (
            (0u8..5, 1u8..6, 0u8..4, 1u8..6, 0u16..40),
            prop::array::uniform4(0.0f64..=1.0),
        ),
        1..20,
    )
    .prop_map(|v| v.into_iter().unzip())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn output_cost_is_non_decreasing_in_tau(
        (spec, probs) in bank(),
        mut taus in proptest::collection::vec(0.0f64..=1.0, 2..8),
    ) {
        taus.sort_by(f64::total_cmp);
        let mut recs = records(&spec);
        let mut ctx = WalkContext::new(&recs, toks());
        let mut prev: Option<(f64, [u64; 4])> = None;
        for &tau in &taus {
            let tiers: Vec<Tier> = probs.iter().map(|p| cumulative_tier(p, tau)).collect();
            let p = evaluate_tiers(&mut recs, &tiers, &mut ctx).unwrap();
            if let Some((cost, counts)) = prev {
                prop_assert!(p.output_cost_usd >= cost, "τ = {}: {} < {}", tau, p.output_cost_usd, cost);
                // Rows at or above each tier never decrease.
                for t in 0..4 {
                    let above = |c: &[u64; 4]| c[t..].iter().sum::<u64>();
                    prop_assert!(above(&p.tier_counts) >= above(&counts));
                }
            }
            prev = Some((p.output_cost_usd, p.tier_counts));
        }
    }

    #[test]
    fn a_sweep_point_equals_crb_metrics_on_the_same_predictions(
        (spec, probs) in bank(),
        taus in proptest::collection::vec(0.0f64..=1.0, 1..5),
    ) {
        let mut recs = records(&spec);
        let mut ctx = WalkContext::new(&recs, toks());
        ctx.prefill_tiers(&Tier::ALL);
        for &tau in &taus {
            let tiers: Vec<Tier> = probs.iter().map(|p| cumulative_tier(p, tau)).collect();
            let p = evaluate_tiers(&mut recs, &tiers, &mut ctx).unwrap();
            // A fresh evaluation of the same predictions, as `crb eval` does it.
            let fresh: Vec<EvalRecord> = records(&spec)
                .into_iter()
                .zip(&tiers)
                .map(|(mut r, t)| {
                    r.outcome = routeval_routing_scores::crb::records::Outcome::Predicted { pred: *t, usage: None };
                    r
                })
                .collect();
            let mut fctx = WalkContext::new(&fresh, toks());
            let m = CrbMetrics::compute(&fresh, &mut fctx).unwrap();
            prop_assert_eq!(p.scores_v2.to_json(), m.scores_v2.to_json());
            prop_assert_eq!(p.section_11.to_json(), m.section_11.to_json());
            prop_assert_eq!(p.router_accounting.to_json(), m.router_accounting.to_json());
            let billed: f64 = m.steps.iter().map(|s| s.pred.cost).sum();
            prop_assert_eq!(p.cost_usd.to_bits(), billed.to_bits());
        }
    }
}

/// The billed cost is not monotone: one long-prompt step is cheaper at mid_high than at mid
/// (cache-write prices 0.08333 vs 0.30 USD/1M outweigh output prices 5 vs 2 USD/1M).
#[test]
fn billed_cost_is_not_monotone_in_the_tier() {
    let mut recs = records(&[(0, 1, 0, 1, 8000)]);
    let mut ctx = WalkContext::new(&recs, toks());
    let mid = evaluate_tiers(&mut recs, &[Tier::Mid], &mut ctx).unwrap();
    let mid_high = evaluate_tiers(&mut recs, &[Tier::MidHigh], &mut ctx).unwrap();
    assert!(
        mid_high.cost_usd < mid.cost_usd,
        "{} vs {}",
        mid_high.cost_usd,
        mid.cost_usd
    );
    assert!(mid_high.output_cost_usd > mid.output_cost_usd);
}
