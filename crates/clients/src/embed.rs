//! `rag`'s embedders, implementing `routeval_retrieval_metrics::rag::Embedder` (the IO the
//! pure metric crate leaves to its callers):
//!
//! * [`HttpEmbedder`]: an OpenAI-compatible `POST /v1/embeddings` endpoint through
//!   [`routeval_io::http::Client`]: retries and exponential backoff on HTTP 408/429/5xx and
//!   dropped connections, a per-request timeout, batching, a reply limit sized for the batch
//!   ([`reply_limit`]), and a dimension check. The API key is handed in (the caller reads it
//!   from its environment) and redacted from every message. The CLI gates its use behind its
//!   feature `embed-http`; this crate always builds it (the HTTP client is linked anyway).
//! * [`CmdEmbedder`]: a long-running child process speaking one JSON array of texts per line on
//!   its stdin and answering one JSON array of vectors per line on its stdout.
//!
//! Both draw a progress bar on stderr while they work (`routeval_io::progress`, only on a
//! terminal or with `ROUTEVAL_PROGRESS=always`). Their errors are
//! [`EmbedError`]s: `Failed` with a one-line message (the key redacted), `Shape` and
//! `Dimension` for replies of the wrong shape.

use ndarray::Array2;
use routeval_io::child::LineChild;
use routeval_retrieval_metrics::rag::{EmbedError, Embedder};
use std::time::Duration;

/// Turn a JSON reply (an array of `n` number arrays, or one number array when `n == 1`) into
/// an `n × dim` matrix (one row per text; `dim` = the vectors' length).
///
/// # Errors
/// [`EmbedError::Failed`] when the reply is not an array of number arrays;
/// [`EmbedError::Shape`] for a flat vector answering several texts (numpy's shape `(d,)`);
/// [`EmbedError::Dimension`] when the vectors' lengths differ. A row count other than `n` is
/// not checked here: the evaluation reports it as the reference's shape error.
pub fn matrix_from_json(v: &serde_json::Value, n: usize) -> Result<Array2<f64>, EmbedError> {
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

/// `rag --embed-cmd CMD`: runs `CMD` with `sh -c` once per run (a [`LineChild`], started at the
/// first call); each [`Embedder::embed`] call writes one JSON array of strings and a newline to
/// its stdin and reads one line back, a JSON array with one vector per text. stderr passes
/// through. A reply slower than `timeout`, an early exit or an unparsable line is an error; the
/// command's process group is killed when the run ends.
pub struct CmdEmbedder {
    cmd: String,
    timeout: Duration,
    child: Option<LineChild>,
}

impl CmdEmbedder {
    /// An embedder that runs `cmd` (the `--embed-cmd` protocol, started on first use), each
    /// reply awaited at most `timeout` (wall-clock time per [`Embedder::embed`] call); nothing
    /// is started yet, so this cannot fail: a command that cannot start is the first call's
    /// [`EmbedError::Failed`].
    pub fn new(cmd: String, timeout: Duration) -> Self {
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
        let _bar = routeval_io::progress::Bar::with_stage(
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

/// Why an [`HttpEmbedder`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The endpoint is not a usable URL (`routeval_io::http::check_url`'s message, the key
    /// redacted).
    #[error("{0}")]
    Url(String),
}

/// Settings for [`HttpEmbedder`].
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Endpoint URL as the user gave it (normalized by [`endpoint`]: `.../v1/embeddings`).
    pub url: String,
    /// `model` field of the request.
    pub model: String,
    /// Bearer token, if the key variable was set. Never printed.
    pub key: Option<String>,
    /// Texts per request (0 counts as 1); also sizes the reply limit ([`reply_limit`]).
    pub batch: usize,
    /// Per-request timeout (connect and whole reply, wall-clock), per attempt.
    pub timeout: Duration,
    /// Retries after a 408/429/5xx/transport error (attempts = retries + 1).
    pub retries: u32,
    /// Prefix of the one stderr line each retry prints (e.g. `routeval rag`).
    pub label: String,
    /// First backoff; doubles each retry (a `Retry-After` header in seconds wins, capped at
    /// max(60 s, backoff)).
    pub backoff: Duration,
}

/// `rag --embed-url URL --embed-model NAME`: OpenAI-compatible embeddings over HTTP, through
/// [`routeval_io::http::Client`] (retries with one stderr line each, `Retry-After`, redirects, key
/// redaction). Each [`Embedder::embed`] call sends the texts in batches of
/// [`HttpConfig::batch`] and returns their rows in order; a failed request is
/// [`EmbedError::Failed`] naming the status (with a hint when a 401/403 came without a key),
/// the timeout or the transport error and the attempts made.
pub struct HttpEmbedder {
    cfg: HttpConfig,
    client: routeval_io::http::Client,
}

/// The largest embedding reply accepted, in bytes, for `batch` texts per request: 256 KiB per text (a 3072-float vector printed as
/// JSON is 40-80 KB), at least 64 MiB; a 256 × 3072 reply (~16 MB) fits, a runaway server is
/// still cut off.
pub fn reply_limit(batch: usize) -> u64 {
    (batch as u64)
        .saturating_mul(256 * 1024)
        .max(64 * 1024 * 1024)
}

/// The endpoint for a user-given URL: kept when it ends in `/embeddings`; `/embeddings` is
/// appended to a `.../v1` base; `/v1/embeddings` to a bare host.
pub fn endpoint(url: &str) -> String {
    let u = url.trim_end_matches('/');
    if u.ends_with("/embeddings") {
        u.to_string()
    } else if u.ends_with("/v1") {
        format!("{u}/embeddings")
    } else {
        format!("{u}/v1/embeddings")
    }
}

impl HttpEmbedder {
    /// The embedder for `cfg` (its URL normalized by [`endpoint`]); no request is sent yet.
    ///
    /// # Errors
    /// [`SetupError::Url`] when the endpoint is not an `http`/`https` URL.
    pub fn new(mut cfg: HttpConfig) -> Result<Self, SetupError> {
        cfg.url = endpoint(&cfg.url);
        routeval_io::http::check_url(&cfg.url)
            .map_err(|e| SetupError::Url(routeval_io::http::redact(&e, cfg.key.as_deref())))?;
        let client = routeval_io::http::Client::new(
            cfg.key.clone(),
            routeval_io::http::Policy {
                label: cfg.label.clone(),
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
/// rows ordered by `index` (an item without one keeps its position), into an `n × dim` matrix.
///
/// # Errors
/// [`EmbedError::Failed`] without a `data` array or an item without `embedding`; then
/// [`matrix_from_json`]'s errors.
pub fn parse_openai(v: &serde_json::Value, n: usize) -> Result<Array2<f64>, EmbedError> {
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

impl Embedder for HttpEmbedder {
    fn embed(&mut self, texts: &[String]) -> Result<Array2<f64>, EmbedError> {
        let batch = self.cfg.batch.max(1);
        let mut parts: Vec<Array2<f64>> = Vec::new();
        let bar = routeval_io::progress::Bar::with_stage(
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn endpoints() {
        assert_eq!(endpoint("http://h:1"), "http://h:1/v1/embeddings");
        assert_eq!(endpoint("http://h:1/v1/"), "http://h:1/v1/embeddings");
        assert_eq!(endpoint("http://h/x/embeddings/"), "http://h/x/embeddings");
    }

    #[test]
    fn reply_limits() {
        assert_eq!(reply_limit(1), 64 * 1024 * 1024);
        assert_eq!(reply_limit(1024), 1024 * 256 * 1024);
        assert_eq!(reply_limit(usize::MAX), u64::MAX);
    }

    #[test]
    fn matrices() {
        let m = matrix_from_json(&json!([[1.0, 2.0], [3.0, 4.0]]), 2).unwrap();
        assert_eq!(m.shape(), &[2, 2]);
        assert_eq!(m[[1, 0]], 3.0);
        let flat = matrix_from_json(&json!([1.0, 2.0, 3.0]), 1).unwrap();
        assert_eq!(flat.shape(), &[1, 3]);
        assert_eq!(
            matrix_from_json(&json!([1.0, 2.0]), 2),
            Err(EmbedError::Shape {
                shape: "(2,)".into(),
                n: 2
            })
        );
        assert_eq!(
            matrix_from_json(&json!([[1.0], [1.0, 2.0]]), 2),
            Err(EmbedError::Dimension {
                expected: 1,
                got: 2
            })
        );
        assert!(matches!(
            matrix_from_json(&json!({"a": 1}), 1),
            Err(EmbedError::Failed(_))
        ));
        assert!(matches!(
            matrix_from_json(&json!([["x"]]), 1),
            Err(EmbedError::Failed(m)) if m.contains("non-number")
        ));
    }

    #[test]
    fn openai_replies_are_ordered_by_index() {
        let v = json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]},
            {"index": 0, "embedding": [1.0, 0.0]}
        ]});
        let m = parse_openai(&v, 2).unwrap();
        assert_eq!(m[[0, 0]], 1.0);
        assert_eq!(m[[1, 1]], 1.0);
        assert!(matches!(
            parse_openai(&json!({"x": []}), 1),
            Err(EmbedError::Failed(m)) if m.contains("'data'")
        ));
        assert!(matches!(
            parse_openai(&json!({"data": [{"index": 0}]}), 1),
            Err(EmbedError::Failed(m)) if m.contains("'embedding'")
        ));
    }

    #[test]
    fn bad_urls_are_refused_with_the_key_redacted() {
        let cfg = HttpConfig {
            url: "ftp://sekrit@h".into(),
            model: "m".into(),
            key: Some("sekrit".into()),
            batch: 1,
            timeout: Duration::from_secs(1),
            retries: 0,
            label: "test".into(),
            backoff: Duration::ZERO,
        };
        match HttpEmbedder::new(cfg) {
            Err(SetupError::Url(m)) => assert!(!m.contains("sekrit"), "{m}"),
            Ok(_) => panic!("ftp accepted"),
        }
    }
}
