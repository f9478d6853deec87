//! # routeval-tier-cost
//!
//! Model capability tiers and what they cost (CommonRouterBench, `specs/crb.md`): per-tier
//! price tables in USD per 1M tokens, model id → tier maps, per-tier token counting, and
//! prompt-cache accounting. Pure: tokenizers are handed in already loaded.
