//! Misbehaving peers (issue 10, item 5): the LLM predictor (`crb eval --predictor llm`) and the
//! embedding client (`rag --embed-url`) against scripted servers on 127.0.0.1: API-key
//! redaction (even when the server echoes the key), retry rules and retry lines, `Retry-After`
//! sanitised, cut reply bodies retried with their real cause, redirects (307/308 followed with
//! the body, 301/302/303 refused), bad URLs and scheme mismatches failing at once, no key for a
//! server that needs none, `--cache-dir` checks, the failure summary and `--allow-errors`, and an
//! embedding reply of 256 × 3072 floats.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

const KEY: &str = "sk-test-Secret-4242";

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Req {
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Req {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Reply = Box<dyn FnOnce(&Req) -> Vec<u8> + Send>;

/// A full HTTP/1.1 response.
fn resp(status: u16, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut s = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        s.push_str(&format!("{k}: {v}\r\n"));
    }
    s.push_str("\r\n");
    s.push_str(body);
    s.into_bytes()
}

fn fixed(status: u16, headers: &'static [(&'static str, &'static str)], body: &str) -> Reply {
    let b = body.to_string();
    Box::new(move |_| resp(status, headers, &b))
}

/// The chat reply answering tier `t`.
fn chat(t: u8) -> String {
    json!({"choices": [{"message": {"role": "assistant", "content": t.to_string()}}]}).to_string()
}

/// Serve `script`, one reply per connection, recording each request; connections beyond the
/// script get HTTP 500. The server stops when the test process ends.
fn serve(script: Vec<Reply>) -> (u16, Arc<Mutex<Vec<Req>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    std::thread::spawn(move || {
        let mut script = script.into_iter();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(10)));
            let mut r = BufReader::new(stream.try_clone().unwrap());
            let mut first = Vec::new();
            let _ = r.read_until(b'\n', &mut first);
            let line = String::from_utf8_lossy(&first).to_string();
            let path = line.split_whitespace().nth(1).unwrap_or("?").to_string();
            let mut headers = Vec::new();
            let mut len = 0;
            let mut garbage = !line.starts_with("POST ");
            while !garbage {
                let mut l = Vec::new();
                if r.read_until(b'\n', &mut l).unwrap_or(0) == 0 {
                    break;
                }
                let l = String::from_utf8_lossy(&l).trim_end().to_string();
                if l.is_empty() {
                    break;
                }
                let Some((k, v)) = l.split_once(':') else {
                    garbage = true;
                    break;
                };
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap_or(0);
                }
                headers.push((k.to_string(), v.trim().to_string()));
            }
            let mut buf = vec![0; len];
            if !garbage {
                let _ = r.read_exact(&mut buf);
            }
            let req = Req {
                path: if garbage { "<not HTTP>".into() } else { path },
                headers,
                body: String::from_utf8_lossy(&buf).to_string(),
            };
            s2.lock().unwrap().push(req.clone());
            if garbage {
                // What a plain-HTTP server says to a TLS handshake.
                let _ = stream.write_all(&resp(400, &[], "bad request"));
                continue;
            }
            let bytes = match script.next() {
                Some(f) => f(&req),
                None => resp(500, &[], "{\"error\": \"script over\"}"),
            };
            let _ = stream.write_all(&bytes);
        }
    });
    (port, seen)
}

fn bank(dir: &Path, n: usize) -> std::path::PathBuf {
    let mut s = String::new();
    for i in 0..n {
        let row = json!({"id": format!("r{i}"), "benchmark": "bfcl", "target_tier_id": 1,
            "messages": [{"role": "user", "content": format!("question {i}")}]});
        s.push_str(&format!("{row}\n"));
    }
    let p = dir.join("bank.jsonl");
    std::fs::write(&p, s).unwrap();
    p
}

/// `crb eval --predictor llm --json` against `url`, the key in `ROUTEVAL_PEER_KEY` when `key`.
fn llm(bank: &Path, url: &str, key: bool, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_routeval"));
    cmd.args(["crb", "eval", "--predictor", "llm", "--json"])
        .args(["--tokenizer-setup", "all_cl100k", "--llm-backoff", "0.001"])
        .args(["--llm-key-env", "ROUTEVAL_PEER_KEY", "--llm-model", "m1"])
        .arg("--bank")
        .arg(bank)
        .args(["--llm-url", url])
        .args(extra)
        .env_remove("ROUTEVAL_PEER_KEY")
        .env_remove("OPENAI_API_KEY");
    if key {
        cmd.env("ROUTEVAL_PEER_KEY", KEY);
    }
    let o = cmd.output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

fn base(port: u16) -> String {
    format!("http://127.0.0.1:{port}/v1")
}

#[test]
fn llm_key_is_redacted_even_when_echoed() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bank(tmp.path(), 1);
    // A 401 echoing the Authorization header: the row error, the summary and the exit-2
    // message never show the key.
    let echo: Reply = Box::new(|r: &Req| {
        resp(
            401,
            &[],
            &format!("bad token: {}", r.header("authorization").unwrap_or("")),
        )
    });
    let (port, seen) = serve(vec![echo]);
    let (code, out, err) = llm(&b, &base(port), true, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1, "401 is not retried");
    assert_eq!(
        seen.lock().unwrap()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(out.is_empty());
    assert!(err.contains("bad token: Bearer ***"), "{err}");
    assert!(!err.contains(KEY), "{err}");
    assert!(err.contains("all 1 row(s) failed"), "{err}");
    // With --allow-errors: scored, the JSON rows carry the redacted error.
    let echo: Reply = Box::new(|r: &Req| {
        resp(
            400,
            &[],
            &format!("bad: {}", r.header("authorization").unwrap_or("")),
        )
    });
    let (port, _) = serve(vec![echo]);
    let (code, out, err) = llm(&b, &base(port), true, &["--allow-errors"]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["api_errors"], 1);
    let e = v["rows"][0]["error"].as_str().unwrap();
    assert!(
        e.starts_with("HTTP 400 from ") && e.ends_with("bad: Bearer ***"),
        "{e}"
    );
    assert!(!out.contains(KEY) && !err.contains(KEY));
    assert!(
        err.contains("warning: 1 of 1 row(s) had predictor errors (first, row 'r0': HTTP 400"),
        "{err}"
    );
    // A 200 whose usage echoes the key: stdout and the cache entry hold `***`.
    let cache = tmp.path().join("cache");
    let reply: Reply = Box::new(|r: &Req| {
        let k = r.header("authorization").unwrap_or("").to_string();
        let body = json!({"choices": [{"message": {"content": "2"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "note": k}});
        resp(200, &[], &body.to_string())
    });
    let (port, _) = serve(vec![reply]);
    let c = cache.to_str().unwrap();
    let (code, out, err) = llm(&b, &base(port), true, &["--cache-dir", c]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains(KEY) && !err.contains(KEY));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"][0]["pred_tier_id"], 2);
    assert_eq!(v["rows"][0]["usage"]["note"], "Bearer ***");
    let entries: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
    assert_eq!(entries.len(), 1);
    for e in entries {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert!(!text.contains(KEY), "{text}");
        assert!(text.contains("Bearer ***"), "{text}");
    }
}

#[test]
fn llm_without_a_key_for_a_server_that_needs_none() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bank(tmp.path(), 2);
    let (port, seen) = serve(vec![fixed(200, &[], &chat(1)), fixed(200, &[], &chat(3))]);
    let (code, out, err) = llm(&b, &base(port), false, &["--concurrency", "1"]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["api_errors"], 0);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|r| r.header("authorization").is_none()));
    assert!(seen[0].path.ends_with("/v1/chat/completions"));
    // A server that does need one: the error says no key was sent.
    let (port, _) = serve(vec![fixed(401, &[], "{\"error\": \"no key\"}")]);
    let (code, _, err) = llm(
        &b,
        &base(port),
        false,
        &["--concurrency", "1", "--allow-errors"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("no API key was sent"), "{err}");
}

#[test]
fn llm_retry_lines_and_retry_after() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bank(tmp.path(), 1);
    let (port, seen) = serve(vec![
        fixed(503, &[("Retry-After", "nan")], "busy"),
        fixed(503, &[("Retry-After", "-5")], "busy"),
        fixed(429, &[("Retry-After", "1")], "slow down"),
        fixed(200, &[], &chat(0)),
    ]);
    let t0 = std::time::Instant::now();
    let (code, out, err) = llm(&b, &base(port), true, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(t0.elapsed().as_secs_f64() >= 1.0, "Retry-After: 1 honoured");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"][0]["pred_tier_id"], 0);
    assert_eq!(seen.lock().unwrap().len(), 4);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("retrying")).collect();
    assert_eq!(
        lines,
        [
            "crb eval --predictor llm: retrying in 0.0 s after HTTP 503 (attempt 2 of 4)",
            "crb eval --predictor llm: retrying in 0.0 s after HTTP 503 (attempt 3 of 4)",
            "crb eval --predictor llm: retrying in 1.0 s after HTTP 429 (attempt 4 of 4)",
        ],
        "{err}"
    );
    // 404 (a 4xx other than 408/429): one request, no retry line.
    let (port, seen) = serve(vec![fixed(404, &[], "nope"), fixed(200, &[], &chat(0))]);
    let (code, out, err) = llm(&b, &base(port), true, &["--allow-errors"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(!err.contains("retrying"), "{err}");
    assert!(out.contains("HTTP 404 from"));
}

/// A 200 announcing 100 bytes that sends 10 and closes.
fn cut_body() -> Reply {
    Box::new(|_| {
        let mut v = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n".to_vec();
        v.extend_from_slice(b"{\"choices\"");
        v
    })
}

#[test]
fn llm_cut_reply_bodies_are_retried_with_their_cause() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bank(tmp.path(), 1);
    let (port, seen) = serve(vec![cut_body(), fixed(200, &[], &chat(2))]);
    let (code, out, err) = llm(&b, &base(port), true, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert!(
        err.contains("retrying in 0.0 s after a cut reply body (HTTP 200) (attempt 2 of 4)"),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"][0]["pred_tier_id"], 2);
    // Every attempt cut: the error names the read failure, not "response is not JSON: ''".
    let (port, _) = serve(vec![cut_body(), cut_body()]);
    let (code, out, err) = llm(
        &b,
        &base(port),
        true,
        &["--llm-max-attempts", "2", "--allow-errors"],
    );
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let e = v["rows"][0]["error"].as_str().unwrap();
    assert!(e.starts_with("ConnectionError after 2 attempt(s): "), "{e}");
    assert!(
        e.contains("reading the reply body (HTTP 200) failed"),
        "{e}"
    );
    assert!(!e.contains("not JSON"), "{e}");
}

#[test]
fn llm_redirects_keep_the_body_or_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bank(tmp.path(), 1);
    for status in [307u16, 308] {
        let (port, seen) = serve(vec![
            Box::new(move |_: &Req| resp(status, &[("Location", "/v2/chat/completions")], "")),
            fixed(200, &[], &chat(3)),
        ]);
        let (code, out, err) = llm(&b, &base(port), true, &[]);
        assert_eq!(code, Some(0), "{status}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["rows"][0]["pred_tier_id"], 3, "{status}");
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1].path, "/v2/chat/completions");
        assert!(!seen[1].body.is_empty());
        assert_eq!(seen[0].body, seen[1].body, "{status}: the body follows");
        assert_eq!(
            seen[1].header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    for status in [301u16, 302, 303] {
        let (port, seen) = serve(vec![
            Box::new(move |_: &Req| resp(status, &[("Location", "/v2/chat/completions")], "")),
            fixed(200, &[], &chat(3)),
        ]);
        let (code, out, err) = llm(&b, &base(port), true, &[]);
        assert_eq!(code, Some(2), "{status}: {err}");
        assert!(out.is_empty());
        assert_eq!(
            seen.lock().unwrap().len(),
            1,
            "{status}: not followed, not retried"
        );
        assert!(err.contains(&format!("HTTP {status} from ")), "{err}");
        assert!(err.contains("refused"), "{err}");
    }
}

#[test]
fn llm_bad_urls_and_scheme_mismatch_fail_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bank(tmp.path(), 1);
    for url in ["ftp://127.0.0.1/v1", "127.0.0.1:9/v1", "http://"] {
        let (code, out, err) = llm(&b, url, true, &[]);
        assert_eq!(code, Some(2), "{url}: {err}");
        assert!(out.is_empty());
        assert!(err.contains("--llm-url"), "{url}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // https:// against a plain-HTTP server: one connection, no retry.
    let (port, seen) = serve(vec![]);
    let (code, _, err) = llm(&b, &format!("https://127.0.0.1:{port}/v1"), true, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(!err.contains("retrying"), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1);
    // http:// against a server that answers with something that is not HTTP.
    let (port, seen) = serve(vec![Box::new(|_: &Req| {
        b"\x15\x03\x01\x00\x02\x02\x50".to_vec()
    })]);
    let (code, _, err) = llm(&b, &base(port), true, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(!err.contains("retrying"), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn llm_all_transport_failures_exit_2_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bank(tmp.path(), 3);
    let dead = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let args = ["--llm-max-attempts", "2"];
    let (code, out, err) = llm(&b, &base(dead), true, &args);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("all 3 row(s) failed to get an answer"),
        "{err}"
    );
    assert!(err.contains("--allow-errors"), "{err}");
    assert_eq!(err.matches("retrying in 0.0 s after").count(), 3, "{err}");
    let (code, out, err) = llm(
        &b,
        &base(dead),
        true,
        &["--llm-max-attempts", "2", "--allow-errors"],
    );
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["api_errors"], 3);
    assert!(
        err.contains("warning: 3 of 3 row(s) had predictor errors (first, row 'r"),
        "{err}"
    );
    // Answers that are not digits are the model's failures, not transport: scored, exit 0.
    let (port, _) = serve(
        (0..3)
            .map(|_| {
                fixed(
                    200,
                    &[],
                    &json!({"choices": [{"message": {"content": "two"}}]}).to_string(),
                )
            })
            .collect(),
    );
    let (code, out, err) = llm(&b, &base(port), true, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning: 3 of 3 row(s) had predictor errors"),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["api_errors"], 3);
}

#[test]
fn llm_cache_dir_checks_and_bad_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bank(tmp.path(), 1);
    let file = tmp.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    for dir in [file.clone(), file.join("sub")] {
        let (code, out, err) = llm(
            &b,
            "http://127.0.0.1:9/v1",
            true,
            &["--cache-dir", dir.to_str().unwrap()],
        );
        assert_eq!(code, Some(2), "{err}");
        assert!(out.is_empty());
        assert!(err.contains("--cache-dir"), "{err}");
    }
    let cache = tmp.path().join("cache");
    let c = cache.to_str().unwrap();
    let (port, _) = serve(vec![fixed(200, &[], &chat(1))]);
    let (code, _, err) = llm(&b, &base(port), true, &["--cache-dir", c]);
    assert_eq!(code, Some(0), "{err}");
    let entry = std::fs::read_dir(&cache)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for bad in [
        "{not json",
        "{\"model\": \"m1\", \"tier_id\": 9}",
        "{\"model\": \"m1\"}",
        "[]",
    ] {
        std::fs::write(&entry, bad).unwrap();
        let (port, seen) = serve(vec![fixed(200, &[], &chat(2))]);
        let (code, out, err) = llm(&b, &base(port), true, &["--cache-dir", c]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(seen.lock().unwrap().len(), 1, "{bad}: a miss");
        assert!(
            err.contains(&format!("cache entry {}", entry.display())),
            "{err}"
        );
        assert!(err.contains("treated as a miss"), "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["rows"][0]["pred_tier_id"], 2);
    }
    // The rewritten entry is valid again: no request, no warning.
    let (code, out, err) = llm(&b, "http://127.0.0.1:9/v1", true, &["--cache-dir", c]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("cache entry"), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"][0]["pred_tier_id"], 2);
}

fn rag(cases: &str, url: &str, extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_routeval"));
    cmd.args([
        "rag",
        "-",
        "--json",
        "--embed-url",
        url,
        "--embed-model",
        "e1",
    ])
    .args([
        "--embed-key-env",
        "ROUTEVAL_PEER_KEY",
        "--embed-backoff-ms",
        "1",
    ])
    .args(extra)
    .env("ROUTEVAL_PEER_KEY", KEY)
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = cases.to_string();
    let w = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let o = child.wait_with_output().unwrap();
    let _ = w.join();
    o
}

/// OpenAI-style embeddings of `dim` floats for every input text, with long float texts.
fn embeddings(dim: usize) -> Reply {
    Box::new(move |r: &Req| {
        let req: Value = serde_json::from_str(&r.body).unwrap();
        let n = req["input"].as_array().unwrap().len();
        let mut body = String::from("{\"object\": \"list\", \"data\": [");
        for i in 0..n {
            if i > 0 {
                body.push_str(", ");
            }
            body.push_str(&format!(
                "{{\"object\": \"embedding\", \"index\": {i}, \"embedding\": ["
            ));
            for j in 0..dim {
                if j > 0 {
                    body.push_str(", ");
                }
                let x = ((i * 31 + j * 17) % 1000) as f64 / 1000.0 - 0.4987654321;
                body.push_str(&format!("{x:.16}"));
            }
            body.push_str("]}");
        }
        body.push_str("]}");
        resp(200, &[], &body)
    })
}

#[test]
fn embedding_reply_of_256_by_3072_floats_passes() {
    let retrieved: Vec<String> = (0..300).map(|i| format!("passage number {i}")).collect();
    let cases = json!([{"query": "q", "retrieved": retrieved, "answer": "a"}]).to_string();
    let (port, seen) = serve(vec![embeddings(3072), embeddings(3072)]);
    let o = rag(&cases, &base(port), &["--embed-batch", "256"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let first: Value = serde_json::from_str(&seen[0].body).unwrap();
    assert_eq!(first["input"].as_array().unwrap().len(), 256);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["similarity"], "embeddings");
}

#[test]
fn embedding_peers_redact_retry_and_redirect() {
    let cases = r#"[{"query": "hello", "retrieved": ["hello there"], "answer": "hello."}]"#;
    // 500 echoing the key, retried with a line each, then given up: no key anywhere.
    let echo = || -> Reply {
        Box::new(|r: &Req| {
            resp(
                500,
                &[],
                &format!("oops {}", r.header("authorization").unwrap_or("")),
            )
        })
    };
    let (port, seen) = serve(vec![echo(), echo(), echo()]);
    let o = rag(cases, &base(port), &["--embed-retries", "2"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 3);
    assert!(!err.contains(KEY), "{err}");
    assert!(err.contains("oops Bearer ***"), "{err}");
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("routeval rag: retrying in 0.0 s after HTTP 500 (attempt "))
            .count(),
        2,
        "{err}"
    );
    // 408 is retried, 400 is not.
    let (port, seen) = serve(vec![fixed(408, &[], "{}"), embeddings(8)]);
    let o = rag(cases, &base(port), &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(seen.lock().unwrap().len(), 2);
    let (port, seen) = serve(vec![fixed(400, &[], "{}"), embeddings(8)]);
    let o = rag(cases, &base(port), &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(seen.lock().unwrap().len(), 1);
    // 308 followed with the body; 302 refused.
    let (port, seen) = serve(vec![
        fixed(308, &[("Location", "/v9/embeddings")], ""),
        embeddings(8),
    ]);
    let o = rag(cases, &base(port), &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let s = seen.lock().unwrap();
    assert_eq!(
        (s[1].path.as_str(), &s[1].body),
        ("/v9/embeddings", &s[0].body)
    );
    drop(s);
    let (port, seen) = serve(vec![fixed(302, &[("Location", "/v9/embeddings")], "")]);
    let o = rag(cases, &base(port), &[]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("HTTP 302") && err.contains("refused"), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1);
    // A bad URL is a usage error before any request.
    let o = rag(cases, "ftp://127.0.0.1/v1", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unsupported scheme"));
}
