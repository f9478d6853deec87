//! Price one agent step the way CommonRouterBench does: count the prompt with a tier's
//! tokenizer, split it into cache-read / cache-write tokens against the previous step, and
//! turn tokens into USD.
//!
//! Run: `cargo run -p routeval-tier-cost --example crb_costs` (uses tiktoken's cl100k_base for
//! every tier, the reference's `all_cl100k` setup, so no tokenizer files are needed).

use routeval_tier_cost::Tier;
use routeval_tier_cost::cache::split_prompt_tokens_for_step;
use routeval_tier_cost::pricing::{CallTokens, model_to_tier, step_full_cost_usd};
use routeval_tier_cost::tokens::{TokenizerFiles, TokenizerSetup, build_tier_tokenizers};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let toks = build_tier_tokenizers(
        TokenizerSetup::AllCl100k,
        &TokenizerFiles::default(),
        [true; 4],
    )?;
    let step1 = json!([
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the failing test in utils/paging.py."}
    ]);
    let step2 = json!([
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the failing test in utils/paging.py."},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": "{\"path\": \"utils/paging.py\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "def page(items, n):\n    return items[0:n-1]\n"}
    ]);
    let (prev, curr) = (step1.as_array().unwrap(), step2.as_array().unwrap());
    for tier in [Tier::High, model_to_tier("deepseek/deepseek-v3.2")?] {
        // Same tier as the previous step, cache not expired: the old prompt is a cache read.
        let (input, read, write) =
            split_prompt_tokens_for_step(Some(tier), tier, Some(prev), curr, false, &toks)?;
        let usd = step_full_cost_usd(
            CallTokens {
                input,
                cache_read: read,
                cache_write: write,
                output: 120,
            },
            tier,
        );
        println!(
            "{tier:>8}: cache read {read:>3}, cache write {write:>3}, 120 output tokens -> {usd:.8} USD"
        );
    }
    Ok(())
}
