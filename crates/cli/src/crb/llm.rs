//! The `llm` predictor: CommonRouterBench's OpenAI-compatible digit classifier over HTTP
//! (`specs/crb.md` §6.2), with bounded concurrency, retries with exponential backoff, a progress
//! bar on stderr and an on-disk reply cache keyed by blake3(model, prompt).
//!
//! Prompt, request body and reply parsing are the reference's (see
//! `routeval_routing_scores::crb::classifier`). Retries: timeouts and connection errors, and
//! HTTP 408/429/500/502/503/504, up to `--llm-max-attempts` attempts, sleeping
//! `backoff * 2^(attempt-1)` seconds between them; other statuses fail at once.

use crate::common::Failure;
use clap::Args;
use routeval_routing_scores::crb::classifier::{
    ClassifierConfig, SystemPromptCache, chat_completions_url, http_error_message,
    is_retryable_status, parse_response_body, row_prompt,
};
use routeval_routing_scores::crb::records::{TierPrediction, TierPredictor};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Options of the `llm` predictor.
#[derive(Debug, Clone, Args)]
pub(crate) struct LlmArgs {
    /// Base URL of an OpenAI-compatible API (`…/v1`; `/chat/completions` is appended).
    #[arg(long)]
    pub(crate) llm_url: Option<String>,
    /// Model id sent in each request.
    #[arg(long)]
    pub(crate) llm_model: Option<String>,
    /// Environment variable holding the API key (sent as `Authorization: Bearer …`).
    #[arg(long, default_value = "OPENAI_API_KEY")]
    pub(crate) llm_key_env: String,
    /// Requests in flight at once (1..=10000).
    #[arg(long, default_value = "4", value_parser = crate::numarg::count_usize, allow_hyphen_values = true)]
    pub(crate) concurrency: usize,
    /// Directory caching replies by blake3(model, prompt); a re-run makes no request.
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

/// The classifier client.
pub(crate) struct LlmPredictor {
    url: String,
    key: String,
    cfg: ClassifierConfig,
    concurrency: usize,
    cache_dir: Option<PathBuf>,
    max_attempts: u32,
    backoff: f64,
    agent: ureq::Agent,
    /// Requests actually sent (for tests and the summary).
    pub(crate) requests_sent: AtomicUsize,
}

impl LlmPredictor {
    pub(crate) fn new(a: &LlmArgs) -> Result<Self, Failure> {
        let url = a
            .llm_url
            .as_deref()
            .ok_or_else(|| Failure::bad_input("--predictor llm needs --llm-url"))?;
        let model = a
            .llm_model
            .as_deref()
            .ok_or_else(|| Failure::bad_input("--predictor llm needs --llm-model"))?;
        let key = std::env::var(&a.llm_key_env).map_err(|_| {
            Failure::bad_input(format!(
                "--predictor llm: environment variable {} is not set",
                a.llm_key_env
            ))
        })?;
        if a.llm_max_attempts < 1 {
            return Err(Failure::bad_input(
                "--llm-max-attempts: max_attempts must be >= 1",
            ));
        }
        let mut cfg = ClassifierConfig::new(model);
        if let Some(s) = &a.llm_system_instruction {
            cfg.system_instruction = s.clone();
        }
        cfg.max_completion_tokens = a.llm_max_tokens;
        cfg.system_prompt_cache = match a.llm_system_cache.as_str() {
            "on" => SystemPromptCache::On,
            "off" => SystemPromptCache::Off,
            "auto" => SystemPromptCache::Auto,
            other => {
                return Err(Failure::bad_input(format!(
                    "--llm-system-cache: unknown mode {other:?}"
                )));
            }
        };
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(crate::numarg::duration(a.llm_timeout)))
                .build(),
        );
        Ok(LlmPredictor {
            url: chat_completions_url(url),
            key,
            cfg,
            concurrency: a.concurrency.max(1),
            cache_dir: a.cache_dir.clone(),
            max_attempts: a.llm_max_attempts,
            backoff: a.llm_backoff,
            agent,
            requests_sent: AtomicUsize::new(0),
        })
    }

    fn cache_path(&self, prompt: &str) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        let mut h = blake3::Hasher::new();
        h.update(self.cfg.model.as_bytes());
        h.update(&[0]);
        h.update(prompt.as_bytes());
        Some(dir.join(format!("{}.json", h.finalize().to_hex())))
    }

    /// One classification: cache, then HTTP with retries.
    fn classify(&self, prompt: &str) -> Result<TierPrediction, String> {
        let cache = self.cache_path(prompt);
        if let Some(p) = &cache
            && let Ok(bytes) = std::fs::read(p)
            && let Ok(v) = serde_json::from_slice::<Value>(&bytes)
            && let Some(t) = v.get("tier_id").and_then(Value::as_i64)
        {
            return Ok(TierPrediction {
                tier_id: t,
                usage: v.get("usage").filter(|u| u.is_object()).cloned(),
            });
        }
        let body = self.cfg.request_body(prompt);
        let mut attempt = 1;
        let reply = loop {
            self.requests_sent.fetch_add(1, Ordering::Relaxed);
            let sent = self
                .agent
                .post(&self.url)
                .header("Authorization", &format!("Bearer {}", self.key))
                .header("Content-Type", "application/json")
                .send(body.as_bytes());
            let retry_err = match sent {
                Ok(mut resp) => {
                    let status = resp.status().as_u16();
                    let text = resp.body_mut().read_to_string().unwrap_or_default();
                    if status == 200 {
                        break parse_response_body(&text)?;
                    }
                    let msg = http_error_message(status, &self.url, &text);
                    if !is_retryable_status(status) || attempt >= self.max_attempts {
                        return Err(msg);
                    }
                    msg
                }
                Err(e) => {
                    if attempt >= self.max_attempts {
                        let kind = match e {
                            ureq::Error::Timeout(_) => "Timeout",
                            _ => "ConnectionError",
                        };
                        return Err(format!("{kind} after {attempt} attempt(s): {e}"));
                    }
                    e.to_string()
                }
            };
            let _ = retry_err;
            std::thread::sleep(backoff_wait(self.backoff, attempt));
            attempt += 1;
        };
        if let Some(p) = &cache {
            let _ = std::fs::create_dir_all(p.parent().unwrap_or(p));
            let v = json!({"model": self.cfg.model, "tier_id": reply.tier_id, "raw_content": reply.raw_content, "usage": reply.usage});
            // Atomic (temporary file + rename): a reader never sees a partial entry.
            let _ = crate::output::write_file_io(p, v.to_string().as_bytes());
        }
        Ok(TierPrediction {
            tier_id: reply.tier_id,
            usage: reply.usage,
        })
    }
}

/// The wait before retry `attempt + 1`: `backoff * 2^(attempt-1)` seconds, at most
/// max(60 s, backoff) (an exponent never overflows into a panic or a day-long sleep).
fn backoff_wait(backoff: f64, attempt: u32) -> Duration {
    let cap = backoff.max(60.0);
    let secs = backoff * 2f64.powi(attempt.saturating_sub(1).min(64) as i32);
    crate::numarg::duration(secs.min(cap))
}

impl TierPredictor for LlmPredictor {
    fn predict(&mut self, row: &Value) -> Result<TierPrediction, String> {
        self.classify(&row_prompt(row)?)
    }

    /// `--concurrency` workers pull rows from a shared counter; results keep row order.
    fn predict_batch(&mut self, rows: &[&Value]) -> Vec<Result<TierPrediction, String>> {
        let bar = indicatif::ProgressBar::new(rows.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("classifying {pos}/{len} {wide_bar} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<Result<TierPrediction, String>>>> =
            Mutex::new(vec![None; rows.len()]);
        let this = &*self;
        std::thread::scope(|s| {
            for _ in 0..this.concurrency.min(rows.len().max(1)) {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(row) = rows.get(i) else { break };
                        let r = row_prompt(row).and_then(|p| this.classify(&p));
                        if let Ok(mut g) = results.lock() {
                            g[i] = Some(r);
                        }
                        bar.inc(1);
                    }
                });
            }
        });
        bar.finish_and_clear();
        results
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err("classifier worker failed".into())))
            .collect()
    }
}
