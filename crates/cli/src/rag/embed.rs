//! Embedding adapters for `routeval rag` (IO lives here, not in `retrieval-metrics`):
//!
//! * [`HttpEmbedder`]: an OpenAI-compatible `POST /v1/embeddings` endpoint via `ureq`
//!   (feature `embed-http`, on by default) through [`routeval_io::http::Client`]: retries and
//!   exponential backoff on HTTP 408/429/5xx and dropped connections, a per-request timeout,
//!   batching, a reply limit sized for the batch, and a dimension check. The API key is read
//!   from an environment variable and redacted from every message.
//! * [`CmdEmbedder`]: a long-running child process speaking one JSON array of texts per line on
//!   its stdin and answering one JSON array of vectors per line on its stdout.

use ndarray::Array2;
use routeval_io::child::LineChild;
use routeval_retrieval_metrics::rag::{EmbedError, Embedder};
use std::time::Duration;

/// Turn a JSON reply (an array of `n` number arrays, or one number array when `n == 1`) into
/// an `n × dim` matrix.
pub(crate) fn matrix_from_json(v: &serde_json::Value, n: usize) -> Result<Array2<f64>, EmbedError> {
    let bad = |what: &str| EmbedError::Failed(format!("reply is not {what}"));
    let arr = v.as_array().ok_or_else(|| bad("a JSON array of vectors"))?;
    // A single flat vector is accepted for a single text (numpy reshape, as the reference);
    // `[]` is numpy's shape `(0,)`.
    if arr.iter().all(|x| x.is_number()) {
        if n == 1 {
            let row: Vec<f64> = arr.iter().filter_map(|x| x.as_f64()).collect();
            let d = row.len();
            return Array2::from_shape_vec((1, d), row)
                .map_err(|e| EmbedError::Failed(e.to_string()));
        }
        return Err(EmbedError::Shape {
            shape: format!("({},)", arr.len()),
            n,
        });
    }
    let mut flat = Vec::new();
    let mut dim: Option<usize> = None;
    for (i, row) in arr.iter().enumerate() {
        let row = row
            .as_array()
            .ok_or_else(|| bad("a JSON array of number arrays"))?;
        match dim {
            None => dim = Some(row.len()),
            Some(d) if d != row.len() => {
                return Err(EmbedError::Dimension {
                    expected: d,
                    got: row.len(),
                });
            }
            _ => {}
        }
        for x in row {
            let f = x
                .as_f64()
                .ok_or_else(|| EmbedError::Failed(format!("vector {i} holds a non-number: {x}")))?;
            flat.push(f);
        }
    }
    let rows = arr.len();
    Array2::from_shape_vec((rows, dim.unwrap_or(0)), flat)
        .map_err(|e| EmbedError::Failed(e.to_string()))
}

// ------------------------------------------------------------------------------------------
// Child process.

/// `--embed-cmd CMD`: runs `CMD` with `sh -c` once per run (a [`LineChild`], started at the
/// first call); each [`Embedder::embed`] call writes one JSON array of strings and a newline to
/// its stdin and reads one line back, a JSON array with one vector per text. stderr passes
/// through. A reply slower than `timeout`, an early exit or an unparsable line is an error; the
/// command's process group is killed when the run ends.
pub(crate) struct CmdEmbedder {
    cmd: String,
    timeout: Duration,
    child: Option<LineChild>,
}

impl CmdEmbedder {
    /// An embedder that runs `cmd` (the `--embed-cmd` protocol, started on first use), each
    /// reply awaited at most `timeout`.
    pub(crate) fn new(cmd: String, timeout: Duration) -> Self {
        CmdEmbedder {
            cmd,
            timeout,
            child: None,
        }
    }
}

impl Embedder for CmdEmbedder {
    fn embed(&mut self, texts: &[String]) -> Result<Array2<f64>, EmbedError> {
        if self.child.is_none() {
            let c = LineChild::spawn(&self.cmd, self.timeout)
                .map_err(|e| EmbedError::Failed(format!("cannot start embed command: {e}")))?;
            self.child = Some(c);
        }
        let line = serde_json::to_string(texts).map_err(|e| EmbedError::Failed(e.to_string()))?;
        // One request for all texts: a spinner while the command works.
        let _bar = crate::progress::Bar::with_stage(
            &format!("embedding {} texts with the command", texts.len()),
            None,
            routeval_core::progress::Unit::Items,
        );
        let child = self
            .child
            .as_mut()
            .ok_or_else(|| EmbedError::Failed("embed command not running".into()))?;
        let reply = child
            .ask(&line)
            .map_err(|e| EmbedError::Failed(format!("the embed command {e}")))?;
        let v: serde_json::Value = serde_json::from_str(reply.trim()).map_err(|e| {
            EmbedError::Failed(format!(
                "the embed command's reply is not JSON: {e}: {:?}",
                routeval_io::child::clip(reply.trim())
            ))
        })?;
        matrix_from_json(&v, texts.len())
    }
}

impl Drop for CmdEmbedder {
    fn drop(&mut self) {
        // Closing stdin is the end-of-run signal; give the command a moment, then its group
        // is killed.
        if let Some(c) = self.child.take() {
            let _ = c.finish(Duration::from_millis(500));
        }
    }
}

// ------------------------------------------------------------------------------------------
// HTTP.

/// Settings for [`HttpEmbedder`].
#[cfg(feature = "embed-http")]
#[derive(Debug, Clone)]
pub(crate) struct HttpConfig {
    /// Endpoint URL (`.../v1/embeddings`).
    pub(crate) url: String,
    /// `model` field of the request.
    pub(crate) model: String,
    /// Bearer token, if the key variable was set. Never printed.
    pub(crate) key: Option<String>,
    /// Texts per request.
    pub(crate) batch: usize,
    /// Per-request timeout.
    pub(crate) timeout: Duration,
    /// Retries after a 408/429/5xx/transport error (attempts = retries + 1).
    pub(crate) retries: u32,
    /// First backoff; doubles each retry (a `Retry-After` header in seconds wins, capped at
    /// max(60 s, backoff)).
    pub(crate) backoff: Duration,
}

/// `--embed-url URL --embed-model NAME`: OpenAI-compatible embeddings over HTTP, through
/// [`routeval_io::http::Client`] (retries with one stderr line each, `Retry-After`, redirects, key
/// redaction).
#[cfg(feature = "embed-http")]
pub(crate) struct HttpEmbedder {
    cfg: HttpConfig,
    client: routeval_io::http::Client,
}

/// The largest embedding reply accepted: 256 KiB per text (a 3072-float vector printed as
/// JSON is 40-80 KB), at least 64 MiB; a 256 × 3072 reply (~16 MB) fits, a runaway server is
/// still cut off.
pub(crate) fn reply_limit(batch: usize) -> u64 {
    (batch as u64)
        .saturating_mul(256 * 1024)
        .max(64 * 1024 * 1024)
}

/// The endpoint for a user-given URL: kept when it ends in `/embeddings`; `/embeddings` is
/// appended to a `.../v1` base; `/v1/embeddings` to a bare host.
pub(crate) fn endpoint(url: &str) -> String {
    let u = url.trim_end_matches('/');
    if u.ends_with("/embeddings") {
        u.to_string()
    } else if u.ends_with("/v1") {
        format!("{u}/embeddings")
    } else {
        format!("{u}/v1/embeddings")
    }
}

#[cfg(feature = "embed-http")]
impl HttpEmbedder {
    /// The embedder, or why `cfg.url` is not a usable endpoint.
    pub(crate) fn new(mut cfg: HttpConfig) -> Result<Self, String> {
        cfg.url = endpoint(&cfg.url);
        routeval_io::http::check_url(&cfg.url).map_err(|e| {
            routeval_io::http::redact(&format!("--embed-url: {e}"), cfg.key.as_deref())
        })?;
        let client = routeval_io::http::Client::new(
            cfg.key.clone(),
            routeval_io::http::Policy {
                label: "routeval rag".into(),
                max_attempts: cfg.retries.saturating_add(1),
                backoff: cfg.backoff.as_secs_f64(),
                timeout: cfg.timeout,
                body_limit: reply_limit(cfg.batch),
                retryable: |s| s == 408 || s == 429 || s >= 500,
            },
        );
        Ok(HttpEmbedder { cfg, client })
    }

    fn request(&self, texts: &[String]) -> Result<Array2<f64>, EmbedError> {
        let key = self.client.key();
        let body =
            serde_json::to_vec(&serde_json::json!({ "model": self.cfg.model, "input": texts }))
                .map_err(|e| EmbedError::Failed(e.to_string()))?;
        let text = self.client.post_json(&self.cfg.url, &body).map_err(|e| {
            let msg = match e {
                routeval_io::http::HttpError::Status {
                    status,
                    url,
                    body,
                    attempts,
                } => {
                    let snippet: String = body.chars().take(200).collect();
                    let hint = if key.is_none() && matches!(status, 401 | 403) {
                        " (no API key was sent: is the --embed-key-env variable set?)"
                    } else {
                        ""
                    };
                    format!(
                        "HTTP {status} from {url}: {}{hint} (after {attempts} attempt(s))",
                        snippet.trim()
                    )
                }
                routeval_io::http::HttpError::Transport {
                    timeout: true,
                    attempts,
                    ..
                } => format!(
                    "{}: no answer within {} s (after {attempts} attempt(s))",
                    self.cfg.url,
                    self.cfg.timeout.as_secs_f64()
                ),
                routeval_io::http::HttpError::Transport {
                    cause, attempts, ..
                } => format!("{}: {cause} (after {attempts} attempt(s))", self.cfg.url),
                routeval_io::http::HttpError::Fatal(m) => m,
            };
            EmbedError::Failed(routeval_io::http::redact(&msg, key))
        })?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            EmbedError::Failed(routeval_io::http::redact(
                &format!("{}: reply is not JSON: {e}", self.cfg.url),
                key,
            ))
        })?;
        parse_openai(&v, texts.len()).map_err(|e| match e {
            EmbedError::Failed(m) => EmbedError::Failed(routeval_io::http::redact(&m, key)),
            other => other,
        })
    }
}

/// Parse an OpenAI embeddings reply: `{"data": [{"index": i, "embedding": [...]}, ...]}`,
/// rows ordered by `index`.
pub(crate) fn parse_openai(v: &serde_json::Value, n: usize) -> Result<Array2<f64>, EmbedError> {
    let data = v
        .get("data")
        .and_then(|d| d.as_array())
        .ok_or_else(|| EmbedError::Failed("reply has no 'data' array".into()))?;
    let mut rows: Vec<(u64, &serde_json::Value)> = Vec::with_capacity(data.len());
    for (i, item) in data.iter().enumerate() {
        let idx = item
            .get("index")
            .and_then(|x| x.as_u64())
            .unwrap_or(i as u64);
        let emb = item
            .get("embedding")
            .ok_or_else(|| EmbedError::Failed(format!("data[{i}] has no 'embedding'")))?;
        rows.push((idx, emb));
    }
    rows.sort_by_key(|(i, _)| *i);
    let arr = serde_json::Value::Array(rows.into_iter().map(|(_, e)| e.clone()).collect());
    matrix_from_json(&arr, n)
}

#[cfg(feature = "embed-http")]
impl Embedder for HttpEmbedder {
    fn embed(&mut self, texts: &[String]) -> Result<Array2<f64>, EmbedError> {
        let batch = self.cfg.batch.max(1);
        let mut parts: Vec<Array2<f64>> = Vec::new();
        let bar = crate::progress::Bar::with_stage(
            "embedding texts",
            Some(texts.len() as u64),
            routeval_core::progress::Unit::Items,
        );
        for chunk in texts.chunks(batch) {
            let m = self.request(chunk)?;
            routeval_core::Progress::advance(&bar, chunk.len() as u64);
            routeval_core::Progress::status(&bar, &self.client.tally());
            if m.nrows() != chunk.len() {
                // Surface the reference's shape error for the whole call.
                return Ok(m);
            }
            if let Some(first) = parts.first()
                && first.ncols() != m.ncols()
            {
                return Err(EmbedError::Dimension {
                    expected: first.ncols(),
                    got: m.ncols(),
                });
            }
            parts.push(m);
        }
        let views: Vec<_> = parts.iter().map(|m| m.view()).collect();
        ndarray::concatenate(ndarray::Axis(0), &views)
            .map_err(|e| EmbedError::Failed(e.to_string()))
    }
}
