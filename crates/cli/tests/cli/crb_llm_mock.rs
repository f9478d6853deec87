//! The `llm` predictor against a loopback mock server replaying the reference's 17 recorded
//! HTTP scenarios (`$ROUTEVAL_SHARED/golden/crb/classifier/classifier_vectors.json`): request
//! path, headers and exact body, attempts (retries on 429/503, none on 400), reply parsing and
//! error texts; plus the connection-refused case and the on-disk reply cache.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

fn vectors() -> Option<Value> {
    let sh = routeval_core::fixtures::shared_dir("crb_llm_mock")?;
    let p = sh.join("golden/crb/classifier/classifier_vectors.json");
    Some(
        serde_json::from_slice(
            &std::fs::read(&p).unwrap_or_else(|e| panic!("missing {}: {e}", p.display())),
        )
        .unwrap(),
    )
}

#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

/// Serve `script` (status, body) to the next connections, one response each; record requests.
fn serve(script: Vec<(u16, String)>) -> (u16, Arc<Mutex<Vec<Seen>>>, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let h = std::thread::spawn(move || {
        for (status, body) in script {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            stream
                .set_read_timeout(Some(std::time::Duration::from_secs(10)))
                .unwrap();
            let mut r = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            let path = line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            let mut headers = Vec::new();
            let mut len = 0;
            loop {
                let mut l = String::new();
                r.read_line(&mut l).unwrap();
                let l = l.trim_end();
                if l.is_empty() {
                    break;
                }
                let (k, v) = l.split_once(':').unwrap();
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap();
                }
                headers.push((k.to_string(), v.trim().to_string()));
            }
            let mut buf = vec![0; len];
            r.read_exact(&mut buf).unwrap();
            s2.lock().unwrap().push(Seen {
                path,
                headers,
                body: String::from_utf8(buf).unwrap(),
            });
            let resp = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(resp.as_bytes()).unwrap();
        }
    });
    (port, seen, h)
}

/// A one-row bank with the prompts entry `row_id`.
fn bank_for(v: &Value, dir: &Path, row_id: &Value) -> std::path::PathBuf {
    let p = v["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| &p["row_id"] == row_id)
        .unwrap();
    let row = json!({"id": row_id, "benchmark": "bfcl", "target_tier_id": 1, "messages": p["messages"], "functions": p["functions"]});
    let path = dir.join("bank.jsonl");
    std::fs::write(&path, format!("{row}\n")).unwrap();
    path
}

fn routeval_suffix(v: &Value) -> String {
    v["ROUTER_USER_OUTPUT_SUFFIX"].as_str().unwrap().to_string()
}

fn run_llm(bank: &Path, port: u16, kw: &Value, extra: &[&str]) -> (Option<i32>, Value, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_routeval"));
    cmd.args([
        "crb",
        "eval",
        "--predictor",
        "llm",
        "--json",
        "--tokenizer-setup",
        "all_cl100k",
        "--llm-backoff",
        "0.001",
        "--llm-key-env",
        "ROUTEVAL_TEST_KEY",
        // The reference scores rows whose request failed as API errors; routeval exits 2 when
        // every row failed to reach the server unless told so (tests/peers.rs).
        "--allow-errors",
    ])
    .arg("--bank")
    .arg(bank)
    .arg("--llm-url")
    .arg(
        kw["base_url"]
            .as_str()
            .unwrap()
            .replace("<PORT>", &port.to_string()),
    )
    .arg("--llm-model")
    .arg(kw["model"].as_str().unwrap())
    .env("ROUTEVAL_TEST_KEY", kw["api_key"].as_str().unwrap())
    .args(extra);
    if let Some(m) = kw["system_prompt_cache"].as_str() {
        cmd.args(["--llm-system-cache", m]);
    }
    if let Some(s) = kw["system_instruction"].as_str() {
        cmd.args(["--llm-system-instruction", s]);
    }
    if let Some(m) = kw["max_completion_tokens"].as_i64() {
        cmd.args(["--llm-max-tokens", &m.to_string()]);
    }
    let out = cmd.output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code(),
        v,
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn recorded_http_scenarios() {
    let Some(v) = vectors() else { return };
    let tmp = tempfile::tempdir().unwrap();
    // The scenarios classified the prompts entry whose prompt the recorded bodies carry.
    let suffix = routeval_suffix(&v);
    let body: Value =
        serde_json::from_str(v["http"][0]["requests"][0]["body_text"].as_str().unwrap()).unwrap();
    let user = body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .strip_suffix(suffix.as_str())
        .unwrap()
        .to_string();
    let entry = v["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["prompt"]["value"].as_str().map(|t| t.trim_end()) == Some(user.as_str()))
        .expect("prompt of the recorded body");
    let bank = bank_for(&v, tmp.path(), &entry["row_id"]);
    let mut n = 0;
    for h in v["http"].as_array().unwrap() {
        let name = h["name"].as_str().unwrap();
        let kw = &h["constructor_kwargs"];
        let script: Vec<(u16, String)> = h["server_script"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["status"].as_u64().unwrap() as u16,
                    s["body"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let (port, seen, handle) = serve(script.clone());
        let (code, out, err) = run_llm(&bank, port, kw, &[]);
        assert_eq!(code, Some(0), "{name}: {err}");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen.len() as u64,
            h["attempts"].as_u64().unwrap(),
            "{name}: attempts"
        );
        for (s, r) in seen.iter().zip(h["requests"].as_array().unwrap()) {
            assert_eq!(s.path, r["path"].as_str().unwrap(), "{name}");
            if let Some(bt) = r["body_text"].as_str() {
                assert_eq!(s.body, bt, "{name}: body");
            }
            if let Some(hs) = r["headers"].as_object() {
                for (k, v) in hs {
                    let got = s
                        .headers
                        .iter()
                        .find(|(hk, _)| hk.eq_ignore_ascii_case(k))
                        .map(|(_, v)| v.as_str());
                    assert_eq!(got, v.as_str(), "{name}: header {k}");
                }
            }
        }
        let row = &out["rows"][0];
        match h["result"].get("value") {
            Some(exp) => {
                assert_eq!(row["pred_tier_id"], exp["tier_id"], "{name}");
                assert_eq!(
                    row.get("usage").cloned().unwrap_or(Value::Null),
                    exp["usage"],
                    "{name}"
                );
            }
            None => {
                let msg = h["result"]["error"]["message"]
                    .as_str()
                    .unwrap()
                    .replace("<PORT>", &port.to_string());
                assert_eq!(row["error"].as_str().unwrap(), msg, "{name}");
                assert_eq!(out["api_errors"], 1);
            }
        }
        handle.join().unwrap();
        n += 1;
    }
    assert!(n >= 17, "{n}");
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn connection_refused_and_reply_cache() {
    let Some(v) = vectors() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let bank = bank_for(&v, tmp.path(), &v["llm_predictor_end_to_end"]["row_id"]);
    let kw = json!({"base_url": "http://127.0.0.1:<PORT>/v1/", "api_key": "sk-test", "model": "deepseek/deepseek-v3.2"});
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (code, out, _) = run_llm(&bank, port, &kw, &["--llm-max-attempts", "2"]);
    assert_eq!(code, Some(0));
    let prefix = v["connection_refused_max_attempts_2"]["message_prefix"]
        .as_str()
        .unwrap();
    assert!(
        out["rows"][0]["error"]
            .as_str()
            .unwrap()
            .starts_with(prefix),
        "{}",
        out["rows"][0]["error"]
    );
    // Cache: the first run asks the server once, the second run asks nobody.
    let cache = tmp.path().join("cache");
    let body = r#"{"choices": [{"message": {"role": "assistant", "content": "1"}}], "usage": {"prompt_tokens": 1200, "completion_tokens": 1, "total_tokens": 1201}}"#;
    let (port, seen, handle) = serve(vec![(200, body.to_string())]);
    let c = cache.to_str().unwrap();
    let (code, out, _) = run_llm(&bank, port, &kw, &["--cache-dir", c]);
    handle.join().unwrap();
    assert_eq!((code, seen.lock().unwrap().len()), (Some(0), 1));
    assert_eq!(
        out["rows"][0]["pred_tier_id"],
        v["llm_predictor_end_to_end"]["tier_id"]
    );
    assert_eq!(
        out["rows"][0]["usage"],
        v["llm_predictor_end_to_end"]["usage"]
    );
    let dead = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (code, again, _) = run_llm(&bank, dead, &kw, &["--cache-dir", c]);
    assert_eq!(code, Some(0));
    assert_eq!(
        again["rows"][0]["pred_tier_id"],
        out["rows"][0]["pred_tier_id"]
    );
    assert_eq!(again["rows"][0]["usage"], out["rows"][0]["usage"]);
    // The key is the whole request: another system instruction or max_tokens is a miss (the
    // dead server then makes the row an error), the original request still a hit.
    for extra in [
        &["--llm-max-tokens", "5"][..],
        &["--llm-system-instruction", "Answer with one digit."][..],
    ] {
        let args = [&["--cache-dir", c][..], extra].concat();
        let (code, miss, _) = run_llm(&bank, dead, &kw, &args);
        assert_eq!(code, Some(0));
        assert!(miss["rows"][0]["error"].is_string(), "{extra:?}: {miss}");
    }
    let (_, hit, _) = run_llm(&bank, dead, &kw, &["--cache-dir", c]);
    assert_eq!(
        hit["rows"][0]["pred_tier_id"],
        out["rows"][0]["pred_tier_id"]
    );
}
