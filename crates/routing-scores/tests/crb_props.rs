//! Properties of the CRB scores on random banks (no shared data needed: cl100k is built in):
//! never a panic, the gold oracle passes everything, and the `section_11` accumulator merges
//! shards into the one-pass result.

use proptest::prelude::*;
use routeval_core::{Accumulator, Tier};
use routeval_routing_scores::crb::records::{TierPrediction, make_record};
use routeval_routing_scores::crb::scores::{CrbMetrics, Section11, section_11};
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

/// (trajectory, step, gold, prediction or error, number of messages)
type Spec = (u8, u8, u8, Option<u8>, u8);

fn records(spec: &[Spec]) -> Vec<routeval_routing_scores::crb::records::EvalRecord> {
    spec.iter()
        .enumerate()
        .map(|(i, &(t, step, gold, pred, nmsg))| {
            let msgs: Vec<_> = (0..nmsg)
                .map(|k| if k % 2 == 0 { json!({"role": "user", "content": format!("u{k} of {t}")}) } else { json!({"role": "assistant", "content": format!("a{k} answer")}) })
                .collect();
            let bench = ["swebench", "mtrag", "bfcl"][t as usize % 3];
            let row = json!({"id": format!("r{i}"), "benchmark": bench, "instance_id": format!("t{t}"), "step_index": step, "target_tier_id": gold % 4, "messages": msgs});
            let p = match pred {
                Some(p) => Ok(TierPrediction { tier_id: (p % 4) as i64, usage: None }),
                None => Err("predictor error".to_string()),
            };
            make_record(row, json!(format!("r{i}")), bench.into(), Tier::from_id((gold % 4) as i64).unwrap(), p).unwrap()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_banks_never_panic(spec in proptest::collection::vec((0u8..5, 1u8..6, 0u8..4, proptest::option::weighted(0.85, 0u8..4), 0u8..6), 0..25)) {
        let recs = records(&spec);
        let mut ctx = WalkContext::new(&recs, toks());
        let m = CrbMetrics::compute(&recs, &mut ctx).unwrap();
        prop_assert_eq!(m.scores_v2.total_rows as usize, recs.len());
        prop_assert!(m.steps.len() <= recs.len());
    }

    /// The trajectory units behind `crb eval --ci` reproduce `scores_v2` on the identity
    /// sample, and each trajectory lands in the stratum of its benchmark.
    #[test]
    fn resample_units_reproduce_scores_v2(spec in proptest::collection::vec((0u8..6, 1u8..6, 0u8..4, proptest::option::weighted(0.85, 0u8..4), 0u8..5), 1..30)) {
        use routeval_routing_scores::crb::resample::ScoresV2Units;
        use routeval_routing_scores::crb::scores::ScoresV2;
        let recs = records(&spec);
        let mut ctx = WalkContext::new(&recs, toks());
        let m = CrbMetrics::compute(&recs, &mut ctx).unwrap();
        let units = ScoresV2Units::from_walk(&recs, &m.steps);
        let full = units.full();
        for (k, key) in ScoresV2::HEADLINE.iter().enumerate() {
            let want = m.scores_v2.headline(key).unwrap();
            prop_assert!(
                (want.is_nan() && full[k].is_nan()) || (want - full[k]).abs() <= 1e-9 * want.abs().max(1.0),
                "{key}: {want} vs {}", full[k]
            );
        }
        prop_assert_eq!(units.strata.iter().map(Vec::len).sum::<usize>(), units.units.len());
    }

    #[test]
    fn gold_oracle_passes_everything(spec in proptest::collection::vec((0u8..5, 1u8..6, 0u8..4, Just(None::<u8>), 1u8..6), 1..20)) {
        let spec: Vec<Spec> = spec.into_iter().map(|(t, s, g, _, n)| (t, s, g, Some(g), n)).collect();
        let recs = records(&spec);
        let mut ctx = WalkContext::new(&recs, toks());
        let m = CrbMetrics::compute(&recs, &mut ctx).unwrap();
        prop_assert_eq!(m.scores_v2.case_pass_rate_percent(), 100.0);
        prop_assert_eq!(m.scores_v2.trajectory_pass_rate_percent(), 100.0);
    }

    #[test]
    fn section11_merges(spec in proptest::collection::vec((0u8..5, 1u8..6, 0u8..4, proptest::option::weighted(0.8, 0u8..4), 0u8..2), 0..40), cut in 0usize..40) {
        let recs = records(&spec);
        let all: Vec<usize> = (0..recs.len()).collect();
        let one = section_11(&recs, &all);
        let cut = cut.min(recs.len());
        let merged = Section11::merge_all([section_11(&recs, &all[..cut]), section_11(&recs, &all[cut..])]);
        prop_assert_eq!((merged.total, merged.passed, merged.cost_score_cases_used), (one.total, one.passed, one.cost_score_cases_used));
        prop_assert!((merged.sum_save_gt_usd - one.sum_save_gt_usd).abs() <= 1e-12 * one.sum_save_gt_usd.abs().max(1.0));
    }
}
