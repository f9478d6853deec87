//! One HTTP POST client for routeval's peers (`crb eval --predictor llm`, `rag --embed-url`):
//! URL checks, retries, redirects, reply limits and API-key redaction, in one place.
//!
//! * **Fail at once** on what cannot succeed: a malformed URL or one whose scheme is not
//!   `http`/`https` (refused when the client is built), an unknown host, a server speaking
//!   something other than HTTP (e.g. `http://` against a TLS port), a TLS failure, a reply over
//!   the size limit, and HTTP statuses the caller does not retry (4xx other than 408/429).
//! * **Retry** timeouts, dropped/refused connections, failures while reading a reply body, and
//!   the caller's retryable statuses, up to `max_attempts` attempts. The wait before attempt
//!   `n + 1` is `backoff * 2^(n-1)` seconds, capped at max(60 s, backoff); a `Retry-After`
//!   header in seconds wins, sanitised (NaN, negative or garbage ignored, capped at the same
//!   bound). Each retry prints one stderr line: `<label>: retrying in 2.0 s after HTTP 500
//!   (attempt 2 of 4)`.
//! * **Redirects** never drop the body: 307/308 are followed (up to 5 hops) with the same POST
//!   body (the API key only to the same origin); 301/302/303 would turn the POST into a GET and
//!   are refused with an error naming the target.
//! * **TLS**: the agent comes from `routeval_bench_data::net::agent_config` (the platform's CA
//!   store, `SSL_CERT_FILE`/`SSL_CERT_DIR`), as every HTTP client of the workspace; a
//!   certificate failure names the roots in use and those variables.
//! * **Secrets**: every text this module returns has the API key's value replaced by `***`
//!   ([`redact`]), even when a server echoes the key.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How many 307/308 hops one request may take.
const MAX_REDIRECTS: usize = 5;

/// A `Retry-After` header value as a server sent it (RFC 9110: delay-seconds; an HTTP date
/// is not honoured): `None` unless it is a finite, non-negative number; the wait is clamped
/// to `max`.
pub fn retry_after(header: &str, max: Duration) -> Option<Duration> {
    let v: f64 = header.trim().parse().ok()?;
    if !v.is_finite() || v < 0.0 {
        return None;
    }
    Some(crate::duration(v).min(max))
}

/// Replace every occurrence of `key` in `text` by `***` (no-op for an absent or empty key).
pub fn redact(text: &str, key: Option<&str>) -> String {
    match key {
        Some(k) if !k.is_empty() && text.contains(k) => text.replace(k, "***"),
        _ => text.to_string(),
    }
}

/// [`redact`] every string (and object key) inside a JSON value, in place.
pub fn redact_value(v: &mut serde_json::Value, key: Option<&str>) {
    let Some(k) = key.filter(|k| !k.is_empty()) else {
        return;
    };
    match v {
        serde_json::Value::String(s) if s.contains(k) => *s = s.replace(k, "***"),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| redact_value(x, key)),
        serde_json::Value::Object(m) => {
            if m.keys().any(|name| name.contains(k)) {
                let old = std::mem::take(m);
                for (name, mut x) in old {
                    redact_value(&mut x, key);
                    m.insert(redact(&name, key), x);
                }
            } else {
                m.values_mut().for_each(|x| redact_value(x, key));
            }
        }
        _ => {}
    }
}

/// Check a user-given endpoint URL: absolute, `http` or `https`, with a host. The error text
/// says what is wrong (the caller adds the flag name).
pub fn check_url(u: &str) -> Result<url::Url, String> {
    let parsed = url::Url::parse(u).map_err(|e| format!("{u:?} is not a valid URL: {e}"))?;
    match parsed.scheme() {
        "http" | "https" => {}
        s => {
            return Err(format!(
                "{u:?}: unsupported scheme {s:?} (expected http or https)"
            ));
        }
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("{u:?} has no host"));
    }
    Ok(parsed)
}

/// Settings of a [`Client`].
#[derive(Debug, Clone)]
pub struct Policy {
    /// Prefix of the retry lines on stderr (e.g. `routeval rag`).
    pub label: String,
    /// Attempts per request, at least 1.
    pub max_attempts: u32,
    /// Seconds before the first retry (doubles each retry).
    pub backoff: f64,
    /// Timeout of one attempt (connect, send, reply).
    pub timeout: Duration,
    /// Largest accepted reply body, in bytes.
    pub body_limit: u64,
    /// Statuses (other than 200) worth another attempt.
    pub retryable: fn(u16) -> bool,
}

/// Why a POST failed after its attempts (texts already redacted). Every variant is a failure
/// to get an answer from the server (a "transport" failure for `crb eval --allow-errors`).
/// Callers word their own messages from the fields; `Display` is a generic one-line form.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HttpError {
    /// The last reply was a non-200 status; `body` is its text.
    #[error("HTTP {status} from {url} (after {attempts} attempt(s))")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The URL that answered (after redirects).
        url: String,
        /// The reply's body text.
        body: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The server was never reached or the reply was cut (timeout, refused or reset
    /// connection, body read failure), after `attempts` attempts.
    #[error("{cause} (after {attempts} attempt(s))")]
    Transport {
        /// The last attempt timed out.
        timeout: bool,
        /// What went wrong, one line.
        cause: String,
        /// Attempts made.
        attempts: u32,
    },
    /// Cannot succeed by retrying: unknown host, not HTTP, TLS, refused redirect, reply over
    /// the limit.
    #[error("{0}")]
    Fatal(String),
}

/// A blocking POST client with the module's retry, redirect and redaction rules.
pub struct Client {
    agent: ureq::Agent,
    key: Option<String>,
    policy: Policy,
    /// POSTs started, retries made and POSTs failed after their attempts (for progress bars).
    requests: AtomicU64,
    retries: AtomicU64,
    failed: AtomicU64,
}

/// One attempt's outcome before the retry decision.
enum Attempt {
    Ok(String),
    Retry {
        cause: String,
        retry_after: Option<Duration>,
        last: HttpError,
    },
    Stop(HttpError),
}

impl Client {
    /// A client sending `Authorization: Bearer <key>` when `key` is set (never printed).
    pub fn new(key: Option<String>, policy: Policy) -> Self {
        // The workspace's one agent constructor: the platform's TLS roots, SSL_CERT_FILE.
        let agent = ureq::Agent::new_with_config(
            routeval_bench_data::net::agent_config()
                .max_redirects(0)
                .timeout_global(Some(policy.timeout))
                .build(),
        );
        Client {
            agent,
            key: key.filter(|k| !k.is_empty()),
            policy,
            requests: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        }
    }

    /// `N requests, R retries, F failed` so far: the live status of a progress bar.
    pub fn tally(&self) -> String {
        format!(
            "{} requests, {} retries, {} failed",
            self.requests.load(Ordering::Relaxed),
            self.retries.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed)
        )
    }

    /// The API key, for callers redacting their own texts.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The wait before attempt `attempt + 1` (see the module doc).
    fn wait(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let cap = self.policy.backoff.max(60.0);
        let secs = self.policy.backoff * 2f64.powi(attempt.saturating_sub(1).min(64) as i32);
        let exp = crate::duration(secs.min(cap));
        match retry_after {
            Some(d) => d.min(crate::duration(cap)),
            None => exp,
        }
    }

    /// POST `body` (JSON) to `url`; the 200 reply's body text, or why not.
    pub fn post_json(&self, url: &str, body: &[u8]) -> Result<String, HttpError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let failed = |e: HttpError| {
            self.failed.fetch_add(1, Ordering::Relaxed);
            crate::progress::status(&self.tally());
            Err(e)
        };
        let mut attempt = 1u32;
        loop {
            match self.attempt(url, body, attempt) {
                Attempt::Ok(text) => return Ok(text),
                Attempt::Stop(e) => return failed(e),
                Attempt::Retry {
                    cause,
                    retry_after,
                    last,
                } => {
                    if attempt >= self.policy.max_attempts {
                        return failed(last);
                    }
                    let wait = self.wait(attempt, retry_after);
                    self.retries.fetch_add(1, Ordering::Relaxed);
                    crate::progress::note(&format!(
                        "{}: retrying in {:.1} s after {} (attempt {} of {})",
                        self.policy.label,
                        wait.as_secs_f64(),
                        cause,
                        attempt + 1,
                        self.policy.max_attempts
                    ));
                    crate::progress::status(&self.tally());
                    std::thread::sleep(wait);
                    attempt += 1;
                }
            }
        }
    }

    fn attempt(&self, url: &str, body: &[u8], attempt: u32) -> Attempt {
        let key = self.key.as_deref();
        let origin = url::Url::parse(url).ok().map(|u| u.origin());
        let mut target = url.to_string();
        for _hop in 0..=MAX_REDIRECTS {
            let same_origin = url::Url::parse(&target).ok().map(|u| u.origin()) == origin;
            let mut req = self
                .agent
                .post(&target)
                .header("Content-Type", "application/json");
            if let Some(k) = key
                && same_origin
            {
                req = req.header("Authorization", &format!("Bearer {k}"));
            }
            let mut resp = match req.send(body) {
                Ok(r) => r,
                Err(e) => return self.transport(&target, e, attempt),
            };
            let status = resp.status().as_u16();
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let loc = resp
                    .headers()
                    .get("location")
                    .and_then(|h| h.to_str().ok())
                    .map(str::to_string);
                let Some(loc) = loc else {
                    return Attempt::Stop(HttpError::Fatal(redact(
                        &format!("HTTP {status} from {target} without a Location header"),
                        key,
                    )));
                };
                let next = url::Url::parse(&target)
                    .and_then(|base| base.join(&loc))
                    .map_err(|e| e.to_string())
                    .and_then(|u| check_url(u.as_str()).map(|u| u.to_string()));
                let next = match next {
                    Ok(n) => n,
                    Err(e) => {
                        return Attempt::Stop(HttpError::Fatal(redact(
                            &format!("HTTP {status} from {target}: bad redirect target: {e}"),
                            key,
                        )));
                    }
                };
                if status < 307 {
                    return Attempt::Stop(HttpError::Fatal(redact(
                        &format!(
                            "HTTP {status} from {target} redirects to {next}: refused, as following it would turn the POST into a GET and drop the request body (use the final URL)"
                        ),
                        key,
                    )));
                }
                target = next;
                continue;
            }
            let retry_after = resp
                .headers()
                .get("retry-after")
                .and_then(|h| h.to_str().ok())
                .and_then(|s| retry_after(s, crate::duration(self.policy.backoff.max(60.0))));
            let text = resp
                .body_mut()
                .with_config()
                .limit(self.policy.body_limit)
                .read_to_string();
            let text = match text {
                Ok(t) => redact(&t, key),
                Err(ureq::Error::BodyExceedsLimit(n)) => {
                    return Attempt::Stop(HttpError::Fatal(redact(
                        &format!(
                            "{target}: the reply is larger than {} MiB (limit {n} bytes)",
                            n / (1024 * 1024)
                        ),
                        key,
                    )));
                }
                Err(e) => {
                    let cause = redact(
                        &format!("{target}: reading the reply body (HTTP {status}) failed: {e}"),
                        key,
                    );
                    return Attempt::Retry {
                        cause: format!("a cut reply body (HTTP {status})"),
                        retry_after: None,
                        last: HttpError::Transport {
                            timeout: matches!(e, ureq::Error::Timeout(_)),
                            cause,
                            attempts: attempt,
                        },
                    };
                }
            };
            if status == 200 {
                return Attempt::Ok(text);
            }
            let err = HttpError::Status {
                status,
                url: redact(&target, key),
                body: text,
                attempts: attempt,
            };
            if (self.policy.retryable)(status) {
                return Attempt::Retry {
                    cause: format!("HTTP {status}"),
                    retry_after,
                    last: err,
                };
            }
            return Attempt::Stop(err);
        }
        Attempt::Stop(HttpError::Fatal(redact(
            &format!("{url}: more than {MAX_REDIRECTS} redirects"),
            key,
        )))
    }

    fn transport(&self, target: &str, e: ureq::Error, attempt: u32) -> Attempt {
        let key = self.key.as_deref();
        use std::io::ErrorKind as K;
        let retry = match &e {
            ureq::Error::Timeout(_) | ureq::Error::ConnectionFailed => true,
            ureq::Error::Io(io) => matches!(
                io.kind(),
                K::ConnectionRefused
                    | K::ConnectionReset
                    | K::ConnectionAborted
                    | K::BrokenPipe
                    | K::UnexpectedEof
                    | K::TimedOut
                    | K::Interrupted
                    | K::NotConnected
                    | K::WouldBlock
            ),
            _ => false,
        };
        let timeout = matches!(e, ureq::Error::Timeout(_));
        let text = redact(&e.to_string(), key);
        if !retry {
            let tls =
                routeval_bench_data::net::classify(&e).0 == routeval_bench_data::net::NetKind::Tls;
            let advice;
            let hint = match &e {
                ureq::Error::HostNotFound => " (unknown host)",
                ureq::Error::Protocol(_) => " (is the URL's scheme right? an https server?)",
                _ if tls => {
                    // Names the roots in use and SSL_CERT_FILE / SSL_CERT_DIR.
                    advice = format!(" ({})", routeval_bench_data::net::tls_advice());
                    &advice
                }
                _ => "",
            };
            return Attempt::Stop(HttpError::Fatal(redact(
                &format!("{target}: {text}{hint}"),
                key,
            )));
        }
        Attempt::Retry {
            cause: if timeout {
                "a timeout".to_string()
            } else {
                text.clone()
            },
            retry_after: None,
            last: HttpError::Transport {
                timeout,
                cause: text,
                attempts: attempt,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction() {
        assert_eq!(redact("a sk-1 b sk-1", Some("sk-1")), "a *** b ***");
        assert_eq!(redact("a sk-1", None), "a sk-1");
        assert_eq!(redact("a", Some("")), "a");
        let mut v = serde_json::json!({"x": ["sk-1!"], "sk-1": 1, "n": 2});
        redact_value(&mut v, Some("sk-1"));
        assert_eq!(v, serde_json::json!({"x": ["***!"], "***": 1, "n": 2}));
    }

    #[test]
    fn urls() {
        assert!(check_url("http://127.0.0.1:1/v1").is_ok());
        assert!(check_url("https://api.example.com/v1").is_ok());
        for bad in [
            "ftp://x/v1",
            "127.0.0.1:8000/v1",
            "not a url",
            "http://",
            "file:///tmp",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn server_values_are_sanitised() {
        let max = Duration::from_secs(60);
        assert_eq!(retry_after("2", max), Some(Duration::from_secs(2)));
        assert_eq!(retry_after("1e300", max), Some(max));
        for bad in ["nan", "NaN", "inf", "-1", "-inf", "soon", ""] {
            assert_eq!(retry_after(bad, max), None, "{bad}");
        }
    }

    #[test]
    fn waits_are_bounded() {
        let c = Client::new(
            None,
            Policy {
                label: "t".into(),
                max_attempts: 4,
                backoff: 2.0,
                timeout: Duration::from_secs(1),
                body_limit: 1,
                retryable: |_| true,
            },
        );
        assert_eq!(c.wait(1, None), Duration::from_secs(2));
        assert_eq!(c.wait(2, None), Duration::from_secs(4));
        assert_eq!(c.wait(60, None), Duration::from_secs(60));
        assert_eq!(
            c.wait(1, Some(Duration::from_secs(1000))),
            Duration::from_secs(60)
        );
        assert_eq!(
            c.wait(1, Some(Duration::from_millis(10))),
            Duration::from_millis(10)
        );
    }
}
