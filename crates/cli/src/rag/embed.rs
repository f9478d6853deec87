//! Embedding adapters for `routeval rag` (IO lives here, not in `retrieval-metrics`):
//!
//! * [`HttpEmbedder`]: an OpenAI-compatible `POST /v1/embeddings` endpoint via `ureq`
//!   (feature `embed-http`, on by default), with retries and exponential backoff on HTTP 429
//!   and 5xx, a per-request timeout, batching, and a dimension check. The API key is read from
//!   an environment variable and never printed.
//! * [`CmdEmbedder`]: a long-running child process speaking one JSON array of texts per line on
//!   its stdin and answering one JSON array of vectors per line on its stdout.

use ndarray::Array2;
use routeval_retrieval_metrics::rag::{EmbedError, Embedder};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
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

/// `--embed-cmd CMD`: runs `CMD` with `sh -c` once per run; each [`Embedder::embed`] call
/// writes one JSON array of strings and a newline to its stdin and reads one line back, a JSON
/// array with one vector per text. stderr passes through. A reply slower than `timeout`, an
/// early exit or an unparsable line is an error.
pub(crate) struct CmdEmbedder {
    cmd: String,
    timeout: Duration,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: Option<Receiver<std::io::Result<String>>>,
}

impl CmdEmbedder {
    pub(crate) fn new(cmd: String, timeout: Duration) -> Self {
        CmdEmbedder {
            cmd,
            timeout,
            child: None,
            stdin: None,
            lines: None,
        }
    }

    fn start(&mut self) -> Result<(), EmbedError> {
        if self.child.is_some() {
            return Ok(());
        }
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| EmbedError::Failed(format!("cannot start embed command: {e}")))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| EmbedError::Failed("embed command has no stdout".into()))?;
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line) {
                    Ok(0) => break,
                    Ok(_) => {
                        if tx.send(Ok(line)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        break;
                    }
                }
            }
        });
        self.stdin = child.stdin.take();
        self.lines = Some(rx);
        self.child = Some(child);
        Ok(())
    }
}

impl Embedder for CmdEmbedder {
    fn embed(&mut self, texts: &[String]) -> Result<Array2<f64>, EmbedError> {
        self.start()?;
        let line = serde_json::to_string(texts).map_err(|e| EmbedError::Failed(e.to_string()))?;
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| EmbedError::Failed("embed command stdin closed".into()))?;
        // A write error (the command already exited) is reported through the read below,
        // which sees either the command's last words or its exit.
        let written = stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush());
        let rx = self
            .lines
            .as_ref()
            .ok_or_else(|| EmbedError::Failed("embed command not running".into()))?;
        let reply = match rx.recv_timeout(self.timeout) {
            Ok(Ok(l)) => l,
            Ok(Err(e)) => {
                return Err(EmbedError::Failed(format!(
                    "reading the embed command: {e}"
                )));
            }
            Err(RecvTimeoutError::Timeout) if written.is_err() => {
                return Err(EmbedError::Failed(format!(
                    "cannot write to the embed command: {}",
                    written.err().map(|e| e.to_string()).unwrap_or_default()
                )));
            }
            Err(RecvTimeoutError::Timeout) => {
                return Err(EmbedError::Failed(format!(
                    "the embed command did not answer within {} s",
                    self.timeout.as_secs_f64()
                )));
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self
                    .child
                    .as_mut()
                    .and_then(|c| c.wait().ok())
                    .map_or_else(|| "unknown status".to_string(), |s| s.to_string());
                return Err(EmbedError::Failed(format!(
                    "the embed command exited before answering ({status})"
                )));
            }
        };
        let v: serde_json::Value = serde_json::from_str(reply.trim()).map_err(|e| {
            EmbedError::Failed(format!("the embed command's reply is not JSON: {e}"))
        })?;
        matrix_from_json(&v, texts.len())
    }
}

impl Drop for CmdEmbedder {
    fn drop(&mut self) {
        // Closing stdin is the end-of-run signal; give the child a moment, then stop it.
        self.stdin.take();
        if let Some(mut child) = self.child.take() {
            for _ in 0..50 {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
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
    /// Retries after a 429/5xx/transport error.
    pub(crate) retries: u32,
    /// First backoff; doubles each retry (a `Retry-After` header in seconds wins, capped at 60 s).
    pub(crate) backoff: Duration,
}

/// `--embed-url URL --embed-model NAME`: OpenAI-compatible embeddings over HTTP.
#[cfg(feature = "embed-http")]
pub(crate) struct HttpEmbedder {
    cfg: HttpConfig,
    agent: ureq::Agent,
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
    pub(crate) fn new(mut cfg: HttpConfig) -> Self {
        cfg.url = endpoint(&cfg.url);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(cfg.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        HttpEmbedder { cfg, agent }
    }

    fn request(&self, texts: &[String]) -> Result<Array2<f64>, EmbedError> {
        let body =
            serde_json::to_vec(&serde_json::json!({ "model": self.cfg.model, "input": texts }))
                .map_err(|e| EmbedError::Failed(e.to_string()))?;
        let mut attempt = 0u32;
        loop {
            let mut req = self
                .agent
                .post(&self.cfg.url)
                .header("Content-Type", "application/json");
            if let Some(key) = &self.cfg.key {
                req = req.header("Authorization", format!("Bearer {key}"));
            }
            let (retryable, why, retry_after) = match req.send(&body[..]) {
                Ok(mut resp) => {
                    let status = resp.status().as_u16();
                    if status == 200 {
                        let v: serde_json::Value = resp.body_mut().read_json().map_err(|e| {
                            EmbedError::Failed(format!("{}: reply is not JSON: {e}", self.cfg.url))
                        })?;
                        return parse_openai(&v, texts.len());
                    }
                    let retry_after = resp
                        .headers()
                        .get("retry-after")
                        .and_then(|h| h.to_str().ok())
                        .and_then(|s| s.trim().parse::<f64>().ok())
                        .map(|s| Duration::from_secs_f64(s.clamp(0.0, 60.0)));
                    let text = resp.body_mut().read_to_string().unwrap_or_default();
                    let snippet: String = text.chars().take(200).collect();
                    let why = format!("HTTP {status} from {}: {}", self.cfg.url, snippet.trim());
                    (status == 429 || status >= 500, why, retry_after)
                }
                Err(e) => {
                    let timeout = matches!(e, ureq::Error::Timeout(_));
                    let why = if timeout {
                        format!(
                            "{}: no answer within {} s",
                            self.cfg.url,
                            self.cfg.timeout.as_secs_f64()
                        )
                    } else {
                        format!("{}: {e}", self.cfg.url)
                    };
                    (true, why, None)
                }
            };
            if !retryable || attempt >= self.cfg.retries {
                let tries = attempt + 1;
                return Err(EmbedError::Failed(format!(
                    "{why} (after {tries} attempt(s))"
                )));
            }
            let wait = retry_after.unwrap_or(self.cfg.backoff * 2u32.saturating_pow(attempt));
            std::thread::sleep(wait);
            attempt += 1;
        }
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
        for chunk in texts.chunks(batch) {
            let m = self.request(chunk)?;
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
