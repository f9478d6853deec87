//! # routeval-tier-cost
//!
//! Model capability tiers and what they cost, as CommonRouterBench 0.1.0 defines them
//! (`specs/crb.md` §8–§11):
//!
//! * [`pricing`]: the four price tables (USD per 1M tokens: output, input, cache read, cache
//!   write), the model id → tier map, step and path costs;
//! * [`tokens`]: per-tier token counting (Hugging Face `tokenizer.json` files loaded from bytes,
//!   tiktoken cl100k_base), the reference's three tokenizer setups, a count-only fast path;
//! * [`message`]: the text of a chat message that is counted, and its semantic fingerprint;
//! * [`cache`]: prompt-cache splits (cache read / cache write), the TTL, output-token estimation,
//!   and [`cache::MessageTable`], which interns messages and memoises counts per (text, tier);
//! * [`pyjson`]: Python's `json.dumps`/`str()`/`repr(float)` texts, which the counted texts use.
//!
//! Pure: no file, network or process IO; tokenizers are handed in as bytes.
//! Tiers are [`routeval_core::Tier`] (`low=0, mid=1, mid_high=2, high=3`).

pub mod cache;
pub mod message;
pub mod pricing;
pub mod pyjson;
pub mod tokens;

pub use routeval_core::Tier;
