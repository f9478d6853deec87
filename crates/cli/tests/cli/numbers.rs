//! No panics from numbers (issue 10, item 1): every numeric option is validated when parsed —
//! NaN, ±infinity, negative, zero where it means nothing, beyond a sane maximum — and is a
//! usage error (exit 2) naming the flag; a server's `Retry-After` is sanitised.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Output, Stdio};

fn routeval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Exit 2, no stdout, no panic, and the last stderr line names `flag`.
fn assert_usage_error(args: &[&str], flag: &str) {
    let o = routeval(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    let last = err.lines().last().unwrap_or("");
    assert!(last.contains(flag), "{args:?}: {flag} not named in {err:?}");
}

#[test]
fn trec_levels_and_limits() {
    let base = ["trec", "no-such-qrels", "no-such-run"];
    for (flag, bad) in [
        ("-l", &["nan", "inf", "1e300", "99999999999999", "1.5"][..]),
        (
            "-M",
            // `-M 0` is valid (no documents evaluated, as trec_eval 10.0): see trec.rs.
            &["-1", "nan", "inf", "1e300", "99999999999999999999"][..],
        ),
        ("-N", &["-1", "nan", "inf", "1e300"][..]),
    ] {
        for v in bad {
            let mut args = base.to_vec();
            args.extend([flag, v]);
            assert_usage_error(&args, flag.trim_start_matches('-'));
        }
    }
}

#[test]
fn crb_timeouts_backoffs_counts() {
    let base = [
        "crb",
        "eval",
        "--bank",
        "no-such-bank",
        "--predictor",
        "llm",
    ];
    let cases: &[(&str, &[&str])] = &[
        ("--llm-timeout", &["0", "nan", "-1", "inf", "1e300", "NaN"]),
        ("--llm-backoff", &["nan", "-1", "inf", "1e300", "-inf"]),
        (
            "--llm-max-attempts",
            &["0", "-1", "1e300", "nan", "99999999999"],
        ),
        ("--concurrency", &["0", "-1", "nan", "1e300"]),
        ("--llm-max-tokens", &["0", "-1", "nan"]),
        ("--n", &["0", "-1", "nan", "1e300"]),
        ("--cmd-timeout", &["0", "-1", "nan", "inf", "1e300"]),
    ];
    for (flag, bad) in cases {
        for v in *bad {
            let mut args = base.to_vec();
            args.extend([*flag, *v]);
            assert_usage_error(&args, flag);
        }
    }
}

#[test]
fn rag_embedding_options() {
    let cases: &[(&str, &[&str])] = &[
        (
            "--embed-timeout",
            &["nan", "inf", "-1", "0", "1e300", "-inf"],
        ),
        ("--embed-batch", &["0", "-1", "1e300", "99999999999"]),
        ("--embed-retries", &["-1", "1e300", "99999999999"]),
        ("--embed-backoff-ms", &["-1", "nan", "99999999999999"]),
    ];
    for (flag, bad) in cases {
        for v in *bad {
            let arg = format!("{flag}={v}");
            assert_usage_error(&["rag", "cases.json", "--embed-cmd", "cat", &arg], flag);
        }
    }
}

/// A server that answers the first request 429 with `Retry-After: <value>`, then an embedding.
fn retry_after_server(value: &'static str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for (i, stream) in listener.incoming().enumerate() {
            let Ok(mut s) = stream else { break };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let l = line.to_ascii_lowercase();
                if let Some(v) = l.strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0u8; len];
            let _ = r.read_exact(&mut body);
            let reply = if i == 0 {
                format!(
                    "HTTP/1.1 429 Too Many Requests\r\nRetry-After: {value}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            } else {
                let req: serde_json::Value = serde_json::from_slice(&body).unwrap();
                let n = req["input"].as_array().map_or(1, Vec::len);
                let data: Vec<_> = (0..n)
                    .map(|i| serde_json::json!({"index": i, "embedding": [1.0, 0.5]}))
                    .collect();
                let b = serde_json::json!({"data": data}).to_string();
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
                    b.len()
                )
            };
            let _ = s.write_all(reply.as_bytes());
        }
    });
    format!("http://{addr}/v1")
}

#[test]
fn retry_after_from_a_server_is_sanitised() {
    // (A huge value is capped at 60 s: unit-tested in numarg, too slow here.)
    for value in ["nan", "-1", "inf", "-inf", "soon"] {
        let url = retry_after_server(value);
        let mut child = Command::new(env!("CARGO_BIN_EXE_routeval"))
            .args(["rag", "-", "--embed-url", &url, "--embed-model", "m"])
            .args(["--embed-backoff-ms", "10", "--embed-timeout", "10"])
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(br#"[{"query": "q", "retrieved": ["a b", "c"], "answer": "a b"}]"#)
            .unwrap();
        let t = std::time::Instant::now();
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "Retry-After: {value}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            t.elapsed() < std::time::Duration::from_secs(30),
            "Retry-After: {value} waited too long"
        );
    }
}
