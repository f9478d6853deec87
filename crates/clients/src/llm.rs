//! `crb eval`'s `llm` predictor: CommonRouterBench's OpenAI-compatible digit classifier over
//! HTTP (`specs/crb.md` §6.2), with bounded concurrency, retries with exponential backoff,
//! progress through [`routeval_core::Progress`] and an on-disk reply cache keyed by blake3 of
//! the request body (model, system instruction, max_tokens, prompt).
//!
//! Prompt, request body and reply parsing are the reference's (see
//! `routeval_routing_scores::crb::classifier`). HTTP goes through [`routeval_io::http::Client`]:
//! retries on timeouts, connection errors, cut reply bodies and HTTP 408/429/500/502/503/504
//! (the reference's list), up to [`LlmConfig::max_attempts`] attempts, sleeping
//! `backoff * 2^(attempt-1)` seconds between them (or the server's sanitised `Retry-After`),
//! one stderr line per retry; a bad URL, an unknown host, a refused redirect and other statuses
//! fail at once. The API key (optional: a server that needs none works without it) is
//! redacted from every error, row and cache entry.

use routeval_core::SharedProgress;
use routeval_core::progress::Unit;
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
use std::time::Duration;

/// The settings of an [`LlmPredictor`] (the CLI's `--llm-*`, `--concurrency`, `--cache-dir`
/// flags).
pub struct LlmConfig {
    /// Base URL of an OpenAI-compatible API (`…/v1`; `/chat/completions` is appended);
    /// `None` is [`LlmSetupError::NoUrl`].
    pub url: Option<String>,
    /// Model id sent in each request; `None` is [`LlmSetupError::NoModel`].
    pub model: Option<String>,
    /// The API key (sent as `Authorization: Bearer …`), `None` for servers that need none.
    pub api_key: Option<String>,
    /// Requests in flight at once (at least 1 is used).
    pub concurrency: usize,
    /// Directory caching replies by blake3 of the request body; created if missing.
    pub cache_dir: Option<PathBuf>,
    /// Attempts per request (the reference's `max_attempts`, at least 1).
    pub max_attempts: u32,
    /// Seconds before the first retry, doubling each time.
    pub backoff: f64,
    /// Timeout of each request.
    pub timeout: Duration,
    /// System-prompt cache block: `auto` (models containing "claude"), `on`, `off`.
    pub system_cache: String,
    /// System instruction (`None`: the reference's routing-labeler instruction).
    pub system_instruction: Option<String>,
    /// `max_tokens` of each request.
    pub max_tokens: i64,
    /// Where the classification stage, its per-row progress and the cache warnings go.
    pub progress: SharedProgress,
}

/// Why an [`LlmPredictor`] cannot be built (each Display is one line naming the flag).
#[derive(Debug, thiserror::Error)]
pub enum LlmSetupError {
    /// No base URL.
    #[error("--predictor llm needs --llm-url")]
    NoUrl,
    /// No model id.
    #[error("--predictor llm needs --llm-model")]
    NoModel,
    /// `max_attempts` is 0.
    #[error("--llm-max-attempts: max_attempts must be >= 1")]
    MaxAttempts,
    /// The URL is not a usable http(s) URL (the message has the key redacted).
    #[error("{0}")]
    Url(String),
    /// The cache directory cannot be created or written in.
    #[error("--cache-dir {dir}: {why}")]
    CacheDir {
        /// The directory.
        dir: String,
        /// What is wrong with it.
        why: String,
    },
    /// An unknown system-prompt cache mode.
    #[error("--llm-system-cache: unknown mode {0:?}")]
    SystemCache(String),
}

/// The classifier client (a [`TierPredictor`]).
pub struct LlmPredictor {
    url: String,
    cfg: ClassifierConfig,
    concurrency: usize,
    cache_dir: Option<PathBuf>,
    client: Client,
    /// Rows whose request never got an answer (transport failures, HTTP errors).
    transport_failures: AtomicUsize,
    /// The first transport failure's text.
    first_transport: Mutex<Option<String>>,
    progress: SharedProgress,
}

impl LlmPredictor {
    /// The LLM classifier of `--predictor llm`, from its settings.
    ///
    /// # Errors
    /// [`LlmSetupError`]: no URL or model, `max_attempts` 0, a bad URL, an unusable cache
    /// directory, an unknown system-cache mode.
    pub fn new(a: LlmConfig) -> Result<Self, LlmSetupError> {
        let url = a.url.as_deref().ok_or(LlmSetupError::NoUrl)?;
        let model = a.model.as_deref().ok_or(LlmSetupError::NoModel)?;
        let key = a.api_key.filter(|k| !k.is_empty());
        if a.max_attempts < 1 {
            return Err(LlmSetupError::MaxAttempts);
        }
        let url = routeval_io::http::check_url(url.trim())
            .and_then(|_| {
                let full = chat_completions_url(url);
                routeval_io::http::check_url(&full).map(|_| full)
            })
            .map_err(|e| LlmSetupError::Url(redact(&format!("--llm-url: {e}"), key.as_deref())))?;
        if let Some(d) = &a.cache_dir {
            usable_cache_dir(d)?;
        }
        let mut cfg = ClassifierConfig::new(model);
        if let Some(s) = &a.system_instruction {
            cfg.system_instruction = s.clone();
        }
        cfg.max_completion_tokens = a.max_tokens;
        cfg.system_prompt_cache = match a.system_cache.as_str() {
            "on" => SystemPromptCache::On,
            "off" => SystemPromptCache::Off,
            "auto" => SystemPromptCache::Auto,
            other => return Err(LlmSetupError::SystemCache(other.to_string())),
        };
        let client = Client::new(
            key,
            Policy {
                label: "crb eval --predictor llm".into(),
                max_attempts: a.max_attempts,
                backoff: a.backoff,
                timeout: a.timeout,
                // Chat replies of a few tokens; a bound all the same.
                body_limit: 16 * 1024 * 1024,
                retryable: is_retryable_status,
            },
        );
        Ok(LlmPredictor {
            url,
            cfg,
            concurrency: a.concurrency.max(1),
            cache_dir: a.cache_dir,
            client,
            transport_failures: AtomicUsize::new(0),
            first_transport: Mutex::new(None),
            progress: a.progress,
        })
    }

    /// Rows that never got an answer from the server, and the first such failure.
    pub fn transport_failures(&self) -> (usize, Option<String>) {
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
                self.progress.0.note(&format!(
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
        self.progress.0.note(&format!(
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
            if let Err(e) = routeval_io::output::write_file_io(p, v.to_string().as_bytes()) {
                self.progress.0.note(&format!(
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
/// cache directory is a setup error, not a silent loss of every reply.
fn usable_cache_dir(dir: &Path) -> Result<(), LlmSetupError> {
    let bad = |why: String| LlmSetupError::CacheDir {
        dir: dir.display().to_string(),
        why,
    };
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
        let bar = &*self.progress.0;
        bar.stage("classifying rows", Some(rows.len() as u64), Unit::Items);
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
                        bar.advance(1);
                        bar.status(&format!(
                            "{} row errors; {}",
                            errors.load(Ordering::Relaxed),
                            this.client.tally()
                        ));
                    }
                });
            }
        });
        results
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err("classifier worker failed".into())))
            .collect()
    }
}
