//! The `llm` predictor: CommonRouterBench's OpenAI-compatible digit classifier over HTTP
//! (`specs/crb.md` §6.2), with bounded concurrency, retries with exponential backoff, a progress
//! bar on stderr and an on-disk reply cache keyed by blake3 of the request body (model, system
//! instruction, max_tokens, prompt).
//!
//! Prompt, request body and reply parsing are the reference's (see
//! `routeval_routing_scores::crb::classifier`). HTTP goes through [`routeval_io::http::Client`]:
//! retries on timeouts, connection errors, cut reply bodies and HTTP 408/429/500/502/503/504
//! (the reference's list), up to `--llm-max-attempts` attempts, sleeping
//! `backoff * 2^(attempt-1)` seconds between them (or the server's sanitised `Retry-After`),
//! one stderr line per retry; a bad URL, an unknown host, a refused redirect and other statuses
//! fail at once. The API key (optional: a server that needs none works without it) is
//! redacted from every error, row and cache entry.

use crate::common::Failure;
use clap::Args;
use routeval_io::http::{Client, HttpError, Policy, redact, redact_value};
use routeval_routing_scores::crb::classifier::{
    ClassifierConfig, SystemPromptCache, chat_completions_url, http_error_message,
    is_retryable_status, parse_response_body, row_prompt,
};
use routeval_routing_scores::crb::records::{TierPrediction, TierPredictor};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// The classifier client.
pub(crate) struct LlmPredictor {
    url: String,
    cfg: ClassifierConfig,
    concurrency: usize,
    cache_dir: Option<PathBuf>,
    client: Client,
    /// Rows whose request never got an answer (transport failures, HTTP errors).
    transport_failures: AtomicUsize,
    /// The first transport failure's text.
    first_transport: Mutex<Option<String>>,
}

impl LlmPredictor {
    /// The LLM classifier of `--predictor llm:...`, from its flags (URL, model, key, limits);
    /// a bad flag is a [`Failure`].
    pub(crate) fn new(a: &LlmArgs) -> Result<Self, Failure> {
        let url = a
            .llm_url
            .as_deref()
            .ok_or_else(|| Failure::bad_input("--predictor llm needs --llm-url"))?;
        let model = a
            .llm_model
            .as_deref()
            .ok_or_else(|| Failure::bad_input("--predictor llm needs --llm-model"))?;
        let key = std::env::var(&a.llm_key_env).ok().filter(|k| !k.is_empty());
        if a.llm_max_attempts < 1 {
            return Err(Failure::bad_input(
                "--llm-max-attempts: max_attempts must be >= 1",
            ));
        }
        let url = routeval_io::http::check_url(url.trim())
            .and_then(|_| {
                let full = chat_completions_url(url);
                routeval_io::http::check_url(&full).map(|_| full)
            })
            .map_err(|e| {
                Failure::bad_input(routeval_io::http::redact(
                    &format!("--llm-url: {e}"),
                    key.as_deref(),
                ))
            })?;
        if let Some(d) = &a.cache_dir {
            usable_cache_dir(d)?;
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
        let client = Client::new(
            key,
            Policy {
                label: "crb eval --predictor llm".into(),
                max_attempts: a.llm_max_attempts,
                backoff: a.llm_backoff,
                timeout: crate::numarg::duration(a.llm_timeout),
                // Chat replies of a few tokens; a bound all the same.
                body_limit: 16 * 1024 * 1024,
                retryable: is_retryable_status,
            },
        );
        Ok(LlmPredictor {
            url,
            cfg,
            concurrency: a.concurrency.max(1),
            cache_dir: a.cache_dir.clone(),
            client,
            transport_failures: AtomicUsize::new(0),
            first_transport: Mutex::new(None),
        })
    }

    /// Rows that never got an answer from the server, and the first such failure.
    pub(crate) fn transport_failures(&self) -> (usize, Option<String>) {
        let first = self.first_transport.lock().ok().and_then(|g| g.clone());
        (self.transport_failures.load(Ordering::Relaxed), first)
    }

    fn cache_path(&self, prompt: &str) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        // The key is the whole request body (model, system instruction and its cache mode,
        // max_tokens, prompt): a run that changes any of them asks the server again.
        let mut h = blake3::Hasher::new();
        h.update(b"routeval-crb-llm-cache-v2\0");
        h.update(self.cfg.request_body(prompt).as_bytes());
        Some(dir.join(format!("{}.json", h.finalize().to_hex())))
    }

    /// A cached reply for `path`, if the entry exists and is valid. An entry that exists but
    /// fails validation is named on stderr and treated as a miss.
    fn cached(&self, path: &Path) -> Option<TierPrediction> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                crate::progress::note(&format!(
                    "warning: cache entry {}: unreadable ({e}); asking the server",
                    path.display()
                ));
                return None;
            }
        };
        let problem = match serde_json::from_slice::<Value>(&bytes) {
            Err(e) => format!("not JSON ({e})"),
            Ok(v) => match v.get("tier_id").and_then(Value::as_i64) {
                Some(t) if (0..=3).contains(&t) => {
                    if v.get("model").and_then(Value::as_str) != Some(self.cfg.model.as_str()) {
                        "written for another model".to_string()
                    } else {
                        let mut usage = v.get("usage").filter(|u| u.is_object()).cloned();
                        if let Some(u) = usage.as_mut() {
                            redact_value(u, self.client.key());
                        }
                        return Some(TierPrediction { tier_id: t, usage });
                    }
                }
                Some(t) => format!("tier_id {t} is not 0..3"),
                None => "no integer tier_id".to_string(),
            },
        };
        crate::progress::note(&format!(
            "warning: cache entry {}: {problem}; treated as a miss, asking the server",
            path.display()
        ));
        None
    }

    /// One classification: cache, then HTTP with retries. Errors are the reference's texts,
    /// with the API key redacted.
    fn classify(&self, prompt: &str) -> Result<TierPrediction, String> {
        let key = self.client.key();
        let cache = self.cache_path(prompt);
        if let Some(p) = &cache
            && let Some(hit) = self.cached(p)
        {
            return Ok(hit);
        }
        let body = self.cfg.request_body(prompt);
        let text = match self.client.post_json(&self.url, body.as_bytes()) {
            Ok(t) => t,
            Err(e) => {
                let msg = match e {
                    HttpError::Status {
                        status, url, body, ..
                    } => {
                        let mut m = http_error_message(status, &url, &body);
                        if key.is_none() && matches!(status, 401 | 403) {
                            m.push_str(
                                " (no API key was sent: is the --llm-key-env variable set?)",
                            );
                        }
                        m
                    }
                    HttpError::Transport {
                        timeout,
                        cause,
                        attempts,
                    } => {
                        let kind = if timeout {
                            "Timeout"
                        } else {
                            "ConnectionError"
                        };
                        format!("{kind} after {attempts} attempt(s): {cause}")
                    }
                    HttpError::Fatal(m) => m,
                };
                let msg = redact(&msg, key);
                self.transport_failures.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut g) = self.first_transport.lock() {
                    g.get_or_insert_with(|| msg.clone());
                }
                return Err(msg);
            }
        };
        let reply = parse_response_body(&text).map_err(|e| redact(&e, key))?;
        let mut usage = reply.usage;
        if let Some(u) = usage.as_mut() {
            redact_value(u, key);
        }
        if let Some(p) = &cache {
            let v = json!({"model": self.cfg.model, "tier_id": reply.tier_id, "raw_content": redact(&reply.raw_content, key), "usage": usage});
            // Atomic (temporary file + rename): a reader never sees a partial entry.
            if let Err(e) = crate::output::write_file_io(p, v.to_string().as_bytes()) {
                crate::progress::note(&format!(
                    "warning: cache entry {}: cannot write: {e}",
                    p.display()
                ));
            }
        }
        Ok(TierPrediction {
            tier_id: reply.tier_id,
            usage,
        })
    }
}

/// Create `dir` if missing and check that a file can be written in it: an unusable
/// `--cache-dir` is a usage error (exit 2), not a silent loss of every reply.
fn usable_cache_dir(dir: &Path) -> Result<(), Failure> {
    let bad = |why: String| Failure::bad_input(format!("--cache-dir {}: {why}", dir.display()));
    if dir.exists() && !dir.is_dir() {
        return Err(bad("not a directory".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| bad(format!("cannot create it: {e}")))?;
    tempfile::NamedTempFile::new_in(dir)
        .map(drop)
        .map_err(|e| bad(format!("cannot write in it: {e}")))
}

impl TierPredictor for LlmPredictor {
    fn predict(&mut self, row: &Value) -> Result<TierPrediction, String> {
        self.classify(&row_prompt(row)?)
    }

    /// `--concurrency` workers pull rows from a shared counter; results keep row order.
    fn predict_batch(&mut self, rows: &[&Value]) -> Vec<Result<TierPrediction, String>> {
        let bar = crate::progress::Bar::with_stage(
            "classifying rows",
            Some(rows.len() as u64),
            routeval_core::progress::Unit::Items,
        );
        // Rows the classifier failed on so far (counted live in the bar's status).
        let errors = AtomicUsize::new(0);
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
                        if r.is_err() {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                        if let Ok(mut g) = results.lock() {
                            g[i] = Some(r);
                        }
                        routeval_core::Progress::advance(&bar, 1);
                        routeval_core::Progress::status(
                            &bar,
                            &format!(
                                "{} row errors; {}",
                                errors.load(Ordering::Relaxed),
                                this.client.tally()
                            ),
                        );
                    }
                });
            }
        });
        drop(bar);
        results
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err("classifier worker failed".into())))
            .collect()
    }
}
