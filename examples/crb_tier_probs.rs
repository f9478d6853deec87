//! A toy CommonRouterBench tier router that emits probabilities, for `routeval crb sweep`.
//!
//! For each bank row it guesses how hard the step is from the conversation (messages so far,
//! text length, tool use) and writes `{"id", "tier_probs": [p_low, p_mid, p_mid_high, p_high]}`:
//! a softmax over the four tiers centred on the guessed tier. Sweeping the threshold of the
//! cumulative rule then trades pass rate against cost.
//!
//! `cargo run --example crb_tier_probs -- examples/data/crb/bank.jsonl > scores.jsonl`
//! `routeval crb sweep --bank examples/data/crb/bank.jsonl --scores scores.jsonl --tokenizer-setup all_cl100k`

use routeval::query_dsl::serde_json::{self, Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/crb/bank.jsonl").to_string()
    });
    for line in std::fs::read_to_string(path)?.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Value = serde_json::from_str(line)?;
        let msgs = row["messages"].as_array().cloned().unwrap_or_default();
        let chars: usize = msgs.iter().map(|m| m.to_string().len()).sum();
        let tools = msgs
            .iter()
            .filter(|m| m["role"] == "tool" || m.get("tool_calls").is_some())
            .count();
        // Difficulty in tiers (0 = low .. 3 = high): longer, tool-heavy steps are harder.
        let guess = (0.4 * msgs.len() as f64 + chars as f64 / 1500.0 + 0.5 * tools as f64).min(3.0);
        let w: Vec<f64> = (0..4)
            .map(|t| (-1.5 * (t as f64 - guess).powi(2)).exp())
            .collect();
        let s: f64 = w.iter().sum();
        let probs: Vec<f64> = w.iter().map(|x| (x / s * 1e4).round() / 1e4).collect();
        println!("{}", json!({"id": row["id"], "tier_probs": probs}));
    }
    Ok(())
}
