//! Score a tier router on a CommonRouterBench question bank: predictions → records → the
//! trajectory walk → `scores_v2` (the headline), `router_accounting`, `section_11`.
//!
//! Run: `cargo run -p routeval-routing-scores --example crb_scores` (on `examples/data/crb/`).
//! Without tokenizer files it counts every tier with cl100k_base (`all_cl100k`); set
//! `ROUTEVAL_TOKENIZERS=DIR` (with `anthropic/`, `minimax-text-01/`, `deepseek-v3/`) for `native`.

use routeval_bench_data::crb::{check_row, read_bank};
use routeval_core::Tier;
use routeval_routing_scores::crb::records::{PredictionMap, TierPredictor, make_record};
use routeval_routing_scores::crb::scores::CrbMetrics;
use routeval_routing_scores::crb::walk::WalkContext;
use routeval_tier_cost::tokens::{TokenizerFiles, TokenizerSetup, build_tier_tokenizers};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/crb");
    let file = std::fs::File::open(dir.join("bank.jsonl"))?;
    let rows = read_bank(std::io::BufReader::new(file), "bank.jsonl")?;
    let preds: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("predictions.json"))?)?;
    let mut router = PredictionMap::new("predictor error");
    for (id, v) in preds.as_object().into_iter().flatten() {
        router.insert(id.clone(), PredictionMap::parse_entry(id, v)?);
    }
    let mut records = Vec::new();
    for row in rows {
        let c = check_row(&row, "bank.jsonl")?;
        let p = router.predict(&row.value);
        let gold = Tier::from_id(c.gold).expect("check_row validated the range");
        records.push(make_record(row.value, c.id, c.benchmark, gold, p)?);
    }
    let (setup, files) = match std::env::var_os("ROUTEVAL_TOKENIZERS") {
        Some(d) => {
            let d = PathBuf::from(d);
            let rd = |p: &str| std::fs::read(d.join(p).join("tokenizer.json")).ok();
            let files = TokenizerFiles {
                anthropic: rd("anthropic"),
                minimax: rd("minimax-text-01"),
                deepseek: rd("deepseek-v3"),
            };
            (TokenizerSetup::Native, files)
        }
        None => (TokenizerSetup::AllCl100k, TokenizerFiles::default()),
    };
    let toks = build_tier_tokenizers(setup, &files, [true; 4])?;
    let mut ctx = WalkContext::new(&records, &toks);
    let m = CrbMetrics::compute(&records, &mut ctx)?;
    let v2 = &m.scores_v2;
    println!("tokenizers: {}", setup.name());
    println!(
        "case pass rate        {:6.2} %",
        v2.case_pass_rate_percent()
    );
    println!(
        "case exact match      {:6.2} %",
        v2.case_exact_match_percent()
    );
    println!(
        "trajectory pass rate  {:6.2} %",
        v2.trajectory_pass_rate_percent()
    );
    println!(
        "cost savings          {:6.2} %",
        v2.cost_savings_score_percent
    );
    println!(
        "combined              {:6.2} %",
        v2.combined_score_percent()
    );
    for b in &v2.by_benchmark {
        println!(
            "  {:<10} rows {} steps {} D {:.6} USD N {:.6} USD",
            b.name, b.row_count, b.step_count, b.d_usd, b.n_usd
        );
    }
    Ok(())
}
