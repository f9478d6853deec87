//! CommonRouterBench price tables, model → tier map and step costs (`specs/crb.md` §8).
//!
//! All prices are **USD per 1,000,000 tokens**. Costs are computed with the reference's
//! operation order (products first, additions left to right, then one division by 1e6), so
//! results are bit-equal to CommonRouterBench 0.1.0 (`main.pricing`).

use routeval_core::Tier;

/// Output (completion) price per tier, USD per 1M tokens: low 0.5, mid 2.0, mid_high 5.0, high 25.0.
pub const OUTPUT_USD_PER_1M: [f64; 4] = [0.5, 2.0, 5.0, 25.0];
/// Input (uncached prompt) price per tier, USD per 1M tokens: 0.26, 0.30, 0.50, 5.0.
pub const INPUT_USD_PER_1M: [f64; 4] = [0.26, 0.30, 0.50, 5.0];
/// Cache-read price per tier, USD per 1M tokens: 0.13, 0.059, 0.05, 0.50.
pub const CACHE_READ_USD_PER_1M: [f64; 4] = [0.13, 0.059, 0.05, 0.50];
/// Cache-write price per tier, USD per 1M tokens: 0.26, 0.30, 0.08333, 6.25.
pub const CACHE_WRITE_USD_PER_1M: [f64; 4] = [0.26, 0.30, 0.08333, 6.25];

/// The model ids CommonRouterBench maps to tiers (`model_to_tier`, exact string match).
///
/// TwinRouterBench additionally maps `anthropic/claude-opus-4.6` to high (spec §20); it is
/// included here too, since it names the same model.
pub const MODEL_TIERS: [(&str, Tier); 14] = [
    ("anthropic/claude-opus-4-6", Tier::High),
    ("anthropic/claude-opus-4.6", Tier::High),
    ("openai/gpt-5.4", Tier::High),
    ("openai/gpt-5.4-2026-03-05", Tier::High),
    ("anthropic/claude-haiku-4-5", Tier::MidHigh),
    ("google/gemini-3-flash-preview", Tier::MidHigh),
    ("gemini/gemini-3-flash-preview", Tier::MidHigh),
    ("qwen/qwen3.5-397b-a17b", Tier::MidHigh),
    ("minimax/minimax-m2.5", Tier::Mid),
    ("qwen/qwen3.5-27b", Tier::Mid),
    ("qwen/qwen3-coder", Tier::Mid),
    ("deepseek/deepseek-v3.2", Tier::Low),
    ("z-ai/glm-4.5-air", Tier::Low),
    ("qwen/qwen3.5-9b", Tier::Low),
];

/// Errors of the pricing functions; messages are the reference's `ValueError` texts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PricingError {
    /// A model id that is not in [`MODEL_TIERS`].
    #[error("Unknown model_id for tier mapping: {}", crate::pyjson::py_repr_str(.0))]
    UnknownModel(String),
    /// A tier label that is not one of `low`, `mid`, `mid_high`, `high`.
    #[error("Unknown tier: {}; expected one of ('low', 'mid', 'mid_high', 'high')", crate::pyjson::py_repr_str(.0))]
    UnknownTier(String),
    /// A negative token count (`name` is the argument's name).
    #[error("{name} must be non-negative, got {value}")]
    Negative {
        /// The argument (`input_tokens`, `cache_read_tokens`, `cache_write_tokens`, `output_tokens`, `completion_tokens`).
        name: &'static str,
        /// The value given.
        value: i64,
    },
    /// A [`StepCost`] with neither a model nor a tier.
    #[error("StepCost requires either model or tier")]
    NoModelOrTier,
}

/// The tier CommonRouterBench assigns to `model_id` (exact match; unknown ids are an error).
pub fn model_to_tier(model_id: &str) -> Result<Tier, PricingError> {
    MODEL_TIERS
        .iter()
        .find(|(m, _)| *m == model_id)
        .map(|(_, t)| *t)
        .ok_or_else(|| PricingError::UnknownModel(model_id.to_string()))
}

/// The tier named `label` (`low`, `mid`, `mid_high`, `high`; exact, case-sensitive).
pub fn tier_from_label(label: &str) -> Result<Tier, PricingError> {
    Tier::from_name(label).ok_or_else(|| PricingError::UnknownTier(label.to_string()))
}

/// `step_nominal_cost_usd`: `completion_tokens * OUTPUT[tier] / 1e6` in USD.
///
/// Errors: negative `completion_tokens` (the reference's message names the argument).
pub fn step_nominal_cost_usd(completion_tokens: i64, tier: Tier) -> Result<f64, PricingError> {
    if completion_tokens < 0 {
        return Err(PricingError::Negative {
            name: "completion_tokens",
            value: completion_tokens,
        });
    }
    Ok(completion_tokens as f64 * OUTPUT_USD_PER_1M[tier as usize] / 1_000_000.0)
}

/// Token counts of one model call, split the way prompt caching bills them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallTokens {
    /// Uncached prompt tokens (CommonRouterBench's eval always passes 0).
    pub input: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache.
    pub cache_write: u64,
    /// Completion tokens.
    pub output: u64,
}

/// `step_full_cost_usd`: `(in*INPUT + cr*CACHE_READ + cw*CACHE_WRITE + out*OUTPUT) / 1e6` USD,
/// added left to right exactly as the reference does.
pub fn step_full_cost_usd(tokens: CallTokens, tier: Tier) -> f64 {
    let t = tier as usize;
    (tokens.input as f64 * INPUT_USD_PER_1M[t]
        + tokens.cache_read as f64 * CACHE_READ_USD_PER_1M[t]
        + tokens.cache_write as f64 * CACHE_WRITE_USD_PER_1M[t]
        + tokens.output as f64 * OUTPUT_USD_PER_1M[t])
        / 1_000_000.0
}

/// [`step_full_cost_usd`] with signed counts, checked as the reference does (in the order
/// input, cache_read, cache_write, output).
pub fn step_full_cost_usd_checked(
    input: i64,
    cache_read: i64,
    cache_write: i64,
    output: i64,
    tier: Tier,
) -> Result<f64, PricingError> {
    for (name, value) in [
        ("input_tokens", input),
        ("cache_read_tokens", cache_read),
        ("cache_write_tokens", cache_write),
        ("output_tokens", output),
    ] {
        if value < 0 {
            return Err(PricingError::Negative { name, value });
        }
    }
    Ok(step_full_cost_usd(
        CallTokens {
            input: input as u64,
            cache_read: cache_read as u64,
            cache_write: cache_write as u64,
            output: output as u64,
        },
        tier,
    ))
}

/// One step of a path priced by output tokens only (`main.pricing.StepCost`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepCost {
    /// Completion tokens of the step.
    pub completion_tokens: i64,
    /// The model id, mapped with [`model_to_tier`] when `tier` is absent.
    pub model: Option<String>,
    /// The tier label; wins over `model`.
    pub tier: Option<String>,
}

impl StepCost {
    /// The step's tier: `tier` if given (must be a known label), else the model's tier.
    pub fn resolved_tier(&self) -> Result<Tier, PricingError> {
        if let Some(t) = &self.tier {
            return Tier::from_name(t).ok_or_else(|| PricingError::UnknownTier(t.clone()));
        }
        match &self.model {
            Some(m) => model_to_tier(m),
            None => Err(PricingError::NoModelOrTier),
        }
    }
}

/// `path_nominal_cost_usd`: `0.0 + Σ step_nominal_cost_usd` over `steps` in order (USD).
pub fn path_nominal_cost_usd(steps: &[StepCost]) -> Result<f64, PricingError> {
    let mut total = 0.0;
    for s in steps {
        total += step_nominal_cost_usd(s.completion_tokens, s.resolved_tier()?)?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_cost_matches_reference_shapes() {
        // 133 cache-write tokens on high, 43 output tokens (golden mixed_gold_with_errors step 1).
        let c = step_full_cost_usd(
            CallTokens {
                input: 0,
                cache_read: 0,
                cache_write: 133,
                output: 43,
            },
            Tier::High,
        );
        assert_eq!(c, (133.0 * 6.25 + 43.0 * 25.0) / 1e6);
        assert_eq!(step_nominal_cost_usd(1_000_000, Tier::Mid).unwrap(), 2.0);
        assert!(step_nominal_cost_usd(-1, Tier::Mid).is_err());
        assert_eq!(model_to_tier("qwen/qwen3-coder").unwrap(), Tier::Mid);
        assert_eq!(
            model_to_tier("x").unwrap_err().to_string(),
            "Unknown model_id for tier mapping: 'x'"
        );
    }
}
