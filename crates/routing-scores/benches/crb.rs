//! Criterion benchmarks of the CommonRouterBench pipeline (library level, no process start):
//! loading the tier tokenizers, the full metric computation (intern + tokenise + three walks)
//! on a golden bank, the walk alone with warm token counts, and each tokenizer's count of the
//! bank's message texts with a warm pre-token memo (the `Split` regex search and its walk). Needs `$ROUTEVAL_SHARED` (golden bank + tokenizer files);
//! without it the benchmarks are skipped with a message. Whole-process figures: `benches/crb.md`.

use criterion::{Criterion, criterion_group, criterion_main};
use routeval_bench_data::crb::{check_row, read_bank};
use routeval_core::Tier;
use routeval_routing_scores::crb::records::{GoldPredictor, TierPredictor, make_record};
use routeval_routing_scores::crb::scores::CrbMetrics;
use routeval_routing_scores::crb::walk::WalkContext;
use routeval_tier_cost::tokens::{TokenizerFiles, TokenizerSetup, build_tier_tokenizers};
use std::path::PathBuf;

fn bench(c: &mut Criterion) {
    let Ok(sh) = std::env::var("ROUTEVAL_SHARED") else {
        eprintln!("SKIPPED: crb bench needs ROUTEVAL_SHARED");
        return;
    };
    let sh = PathBuf::from(sh);
    let d = sh.join("thirdparty/tokenizers");
    let rd = |p: &str| std::fs::read(d.join(p).join("tokenizer.json")).ok();
    let files = TokenizerFiles {
        anthropic: rd("anthropic"),
        minimax: rd("minimax-text-01"),
        deepseek: rd("deepseek-v3"),
    };
    // Loading the four tier encoders from the files' bytes (the fixed cost of every
    // `routeval crb eval`): JSON parse, the count-only BPE tables, automata and regexes.
    let mut load = c.benchmark_group("tokenizer_load");
    load.sample_size(10);
    load.bench_function("native_all_tiers", |b| {
        b.iter(|| build_tier_tokenizers(TokenizerSetup::Native, &files, [true; 4]).expect("load"))
    });
    load.finish();
    let toks =
        build_tier_tokenizers(TokenizerSetup::Native, &files, [true; 4]).expect("tokenizers");
    let bank = sh.join("golden/crb/cases/swe_only_gold/bank.jsonl");
    let rows = read_bank(
        std::io::BufReader::new(std::fs::File::open(&bank).expect("bank")),
        "bank.jsonl",
    )
    .expect("rows");
    let make = || {
        rows.iter()
            .map(|r| {
                let ck = check_row(r, "bank.jsonl").expect("row");
                let p = GoldPredictor.predict(&r.value);
                make_record(
                    r.value.clone(),
                    ck.id,
                    ck.benchmark,
                    Tier::from_id(ck.gold).expect("tier"),
                    p,
                )
                .expect("record")
            })
            .collect::<Vec<_>>()
    };
    // Every message text of the bank, counted by each `tokenizer.json` tokenizer with a warm
    // pre-token memo: the count is then mostly the `Split` patterns' search
    // (`tier-cost/src/tokens/dfa.rs`, `split.rs`).
    let mut texts = Vec::new();
    for r in &rows {
        if let Some(ms) = r.value.get("messages").and_then(|m| m.as_array()) {
            texts.extend(ms.iter().filter_map(|m| m.get("content")?.as_str()));
        }
    }
    let mut split = c.benchmark_group("split_count_warm_memo");
    let mut seen = Vec::new();
    for tier in [Tier::Low, Tier::Mid, Tier::MidHigh, Tier::High] {
        let name = toks.encoder(tier).name().to_string();
        let Some(hf) = toks.encoder(tier).as_hf() else {
            continue;
        };
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        let mut memo = Default::default();
        for t in &texts {
            hf.count_with_memo(t, &mut memo).expect("count");
        }
        split.bench_function(name, |b| {
            b.iter(|| {
                texts
                    .iter()
                    .map(|t| hf.count_with_memo(t, &mut memo).expect("count"))
                    .sum::<usize>()
            })
        });
    }
    split.finish();
    let records = make();
    c.bench_function("crb_metrics_cold_swe_only_gold", |b| {
        b.iter(|| {
            // Fresh tokenizers memo per pre-token is kept by the counters; the message table is new.
            let mut ctx = WalkContext::new(&records, &toks);
            CrbMetrics::compute(&records, &mut ctx).expect("metrics")
        })
    });
    let mut ctx = WalkContext::new(&records, &toks);
    c.bench_function("crb_metrics_warm_walks_swe_only_gold", |b| {
        b.iter(|| CrbMetrics::compute(&records, &mut ctx).expect("metrics"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
