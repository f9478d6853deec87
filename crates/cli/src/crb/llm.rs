//! The `llm` predictor's flags; the client itself is [`routeval_clients::llm`] (the
//! OpenAI-compatible digit classifier of `specs/crb.md` §6.2: retries, the reply cache, key
//! redaction).

use crate::common::Failure;
use clap::Args;
use routeval_clients::llm::{LlmConfig, LlmPredictor};
use std::path::PathBuf;

/// Options of the `llm` predictor.
#[derive(Debug, Clone, Args)]
pub(crate) struct LlmArgs {
    /// Base URL of an OpenAI-compatible API (`…/v1`; `/chat/completions` is appended).
    #[arg(long)]
    pub(crate) llm_url: Option<String>,
    /// Model id sent in each request.
    #[arg(long)]
    pub(crate) llm_model: Option<String>,
    /// Environment variable holding the API key (sent as `Authorization: Bearer …`; unset or
    /// empty = no key, for servers that need none).
    #[arg(long, default_value = "OPENAI_API_KEY")]
    pub(crate) llm_key_env: String,
    /// Score even when every row failed to reach the server (each counts as a predictor
    /// error); without it such a run exits 2.
    #[arg(long)]
    pub(crate) allow_errors: bool,
    /// Requests in flight at once (1..=10000).
    #[arg(long, default_value = "4", value_parser = crate::numarg::count_usize, allow_hyphen_values = true)]
    pub(crate) concurrency: usize,
    /// Directory caching replies by blake3 of the request body (model, system instruction,
    /// max_tokens, prompt); a re-run of the same requests makes none. Created
    /// if missing; one that cannot be written is an error (exit 2); an entry that fails
    /// validation is named on stderr and asked again.
    #[arg(long)]
    pub(crate) cache_dir: Option<PathBuf>,
    /// Attempts per request (the reference's `max_attempts`, 1..=10000).
    #[arg(long, default_value = "4", value_parser = crate::numarg::count, allow_hyphen_values = true)]
    pub(crate) llm_max_attempts: u32,
    /// Seconds before the first retry (0..=86400), doubling each time; each wait is capped at
    /// max(60 s, this value).
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = crate::numarg::wait_secs, allow_hyphen_values = true)]
    pub(crate) llm_backoff: f64,
    /// Request timeout in seconds (more than 0, at most 86400).
    #[arg(long, value_name = "SECONDS", default_value = "180", value_parser = crate::numarg::timeout_secs, allow_hyphen_values = true)]
    pub(crate) llm_timeout: f64,
    /// System-prompt cache block: `auto` (models containing "claude"), `on`, `off`.
    #[arg(long, default_value = "auto")]
    pub(crate) llm_system_cache: String,
    /// System instruction (default: the reference's routing-labeler instruction).
    #[arg(long)]
    pub(crate) llm_system_instruction: Option<String>,
    /// `max_tokens` of each request (1..=10000000).
    #[arg(long, default_value = "4", value_parser = crate::numarg::max_tokens, allow_hyphen_values = true)]
    pub(crate) llm_max_tokens: i64,
}

impl LlmArgs {
    /// The predictor these flags describe (the API key read from `--llm-key-env`, the bar on
    /// stderr); a bad flag is a [`Failure`] (exit 2).
    pub(crate) fn predictor(&self) -> Result<LlmPredictor, Failure> {
        LlmPredictor::new(LlmConfig {
            url: self.llm_url.clone(),
            model: self.llm_model.clone(),
            api_key: std::env::var(&self.llm_key_env).ok(),
            concurrency: self.concurrency,
            cache_dir: self.cache_dir.clone(),
            max_attempts: self.llm_max_attempts,
            backoff: self.llm_backoff,
            timeout: crate::numarg::duration(self.llm_timeout),
            system_cache: self.llm_system_cache.clone(),
            system_instruction: self.llm_system_instruction.clone(),
            max_tokens: self.llm_max_tokens,
            progress: routeval_core::SharedProgress(std::sync::Arc::new(
                crate::progress::Bar::new(),
            )),
        })
        .map_err(|e| Failure::bad_input(e.to_string()))
    }
}
