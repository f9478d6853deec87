//! `cargo xtask build-data` end to end on mirrors generated here (nothing downloads):
//! the same synthetic mirror gives the same manifest twice, `--check` catches one changed
//! byte; tokenizers from the shared copies and from a 127.0.0.1 mock hub.

#[path = "support/mirror.rs"]
mod mirror;

use mirror::make_mirror;
use std::path::{Path, PathBuf};
use std::process::Command;

fn xtask(args: &[&str], envs: &[(&str, &Path)]) -> (bool, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
    c.args(args)
        .env_remove("HF_TOKEN")
        .env_remove("GQR_HUB_ENDPOINT")
        .env_remove("ROUTEVAL_PROGRESS");
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn gqr_build_is_deterministic_and_check_catches_one_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror = tmp.path().join("mirror");
    make_mirror(&mirror);
    let m = mirror.to_str().unwrap();
    let (c1, c2): (PathBuf, PathBuf) = (tmp.path().join("c1"), tmp.path().join("c2"));
    let args = ["build-data", "gqr", "--from", m, "--dataset-size", "2100"];
    let (ok, err) = xtask(&args, &[("GQR_CACHE_DIR", &c1)]);
    assert!(ok, "{err}");
    let (ok, err2) = xtask(&args, &[("GQR_CACHE_DIR", &c2)]);
    assert!(ok, "{err2}");
    let m1 = std::fs::read_to_string(c1.join("build/manifest.json")).unwrap();
    let m2 = std::fs::read_to_string(c2.join("build/manifest.json")).unwrap();
    assert_eq!(m1, m2, "same mirror, same manifest");
    let man: serde_json::Value = serde_json::from_str(&m1).unwrap();
    assert_eq!(man["missing"].as_array().unwrap().len(), 0, "{err}");
    let rows = |name: &str| {
        man["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == format!("{name}.jsonl"))
            .unwrap_or_else(|| panic!("{name} built: {err}"))["rows"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(rows("id_test"), 1260); // ceil(0.2 * 3 * 2100)
    assert_eq!(rows("train") + rows("eval"), 6300 - 1260);
    assert_eq!(rows("dev_train"), 1000);
    assert_eq!(
        rows("background_train"),
        (rows("train") as f64 / 3.0).round() as u64
    );
    assert_eq!(rows("train_v2"), rows("train") + rows("background_train"));
    // jigsaw: odd or insult rows (27; the NA and blank texts dropped), olid 30, hate_xplain 15
    // hateful, slovak 13 with label 0, dkhate 12, web_questions 33, ml_questions 9.
    assert_eq!(rows("ood_test"), 27 + 30 + 15 + 13 + 12 + 33 + 9);
    assert!(rows("unseen_id") > 100);
    assert!(
        err.contains("fingerprint"),
        "the fingerprint check warns on a non-reference corpus: {err}"
    );
    // --check passes, then catches one changed byte.
    let (ok, err) = xtask(&["build-data", "gqr", "--check"], &[("GQR_CACHE_DIR", &c1)]);
    assert!(ok, "{err}");
    let f = c1.join("build/train.jsonl");
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&f, bytes).unwrap();
    let (ok, err) = xtask(&["build-data", "gqr", "--check"], &[("GQR_CACHE_DIR", &c1)]);
    assert!(!ok, "a changed byte must fail --check");
    assert!(
        err.contains("train.jsonl") && err.contains("blake3"),
        "{err}"
    );
}

#[test]
fn build_draws_its_bar_only_when_asked_or_on_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror = tmp.path().join("mirror");
    make_mirror(&mirror);
    let m = mirror.to_str().unwrap();
    let args = ["build-data", "gqr", "--from", m, "--dataset-size", "2100"];
    // ROUTEVAL_PROGRESS=always: the bar is drawn on this pipe as on a terminal.
    let (ok, forced) = xtask(
        &args,
        &[
            ("GQR_CACHE_DIR", &tmp.path().join("c1")),
            ("ROUTEVAL_PROGRESS", Path::new("always")),
        ],
    );
    assert!(ok, "{forced}");
    assert!(forced.contains("building gqr (1 of 1)"), "{forced:?}");
    assert!(
        forced.contains("\r\x1b[2K"),
        "bar drawn and cleared: {forced:?}"
    );
    // stderr is a pipe: no bar, the same per-source lines and summary.
    let c2 = tmp.path().join("c2");
    let (ok, plain) = xtask(&args, &[("GQR_CACHE_DIR", &c2)]);
    assert!(ok, "{plain}");
    assert!(
        !plain.contains('\x1b') && !plain.contains("building gqr"),
        "{plain:?}"
    );
    let c1 = tmp.path().join("c1").to_string_lossy().into_owned();
    let forced = forced.replace(&c1, "<cache>");
    for line in plain.replace(&*c2.to_string_lossy(), "<cache>").lines() {
        assert!(forced.contains(line), "lost {line:?}: {forced:?}");
    }
}

#[test]
fn help_works() {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("build-data"));
}

fn shared(test: &str) -> Option<PathBuf> {
    routeval_core::fixtures::shared_dir(test)
}

const TOKENIZERS: [&str; 3] = ["anthropic", "deepseek-v3", "minimax-text-01"];

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn tokenizers_from_shared_copies_then_check() {
    let Some(sh) = shared("tokenizers_from_shared_copies_then_check") else {
        return;
    };
    let src = sh.join("thirdparty/tokenizers");
    for t in TOKENIZERS {
        assert!(
            src.join(t).join("tokenizer.json").is_file(),
            "missing shared tokenizer {t}"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let env = [("ROUTEVAL_CACHE_DIR", tmp.path())];
    let (ok, err) = xtask(
        &[
            "build-data",
            "tokenizers",
            "--from",
            src.to_str().unwrap(),
            "--no-registries",
        ],
        &env,
    );
    assert!(ok, "{err}");
    for t in TOKENIZERS {
        let p = tmp.path().join("tokenizers").join(t).join("tokenizer.json");
        assert_eq!(
            std::fs::read(&p).unwrap(),
            std::fs::read(src.join(t).join("tokenizer.json")).unwrap()
        );
    }
    let (ok, err) = xtask(&["build-data", "tokenizers", "--check"], &env);
    assert!(ok, "{err}");
    let p = tmp.path().join("tokenizers/deepseek-v3/tokenizer.json");
    let mut b = std::fs::read(&p).unwrap();
    b[100] ^= 1;
    std::fs::write(&p, b).unwrap();
    let (ok, err) = xtask(&["build-data", "tokenizers", "--check"], &env);
    assert!(
        !ok && err.contains("deepseek-v3") && err.contains("blake3"),
        "{err}"
    );
}

/// A one-thread HTTP server on 127.0.0.1 serving `routes` (path → body), 404 otherwise.
fn serve(
    routes: Vec<(String, Vec<u8>)>,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log2 = log.clone();
    std::thread::spawn(move || {
        for st in l.incoming() {
            let Ok(mut st) = st else { continue };
            let mut r = BufReader::new(st.try_clone().unwrap());
            let mut line = String::new();
            let _ = r.read_line(&mut line);
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
                    break;
                }
            }
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            log2.lock().unwrap().push(path.clone());
            let resp = match routes.iter().find(|(p, _)| *p == path) {
                Some((_, b)) => {
                    let mut v = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        b.len()
                    )
                    .into_bytes();
                    v.extend_from_slice(b);
                    v
                }
                None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_vec(),
            };
            let _ = st.write_all(&resp);
        }
    });
    (base, log)
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn tokenizers_from_mock_hub() {
    let Some(sh) = shared("tokenizers_from_mock_hub") else {
        return;
    };
    let src = sh.join("thirdparty/tokenizers");
    let read = |t: &str| {
        std::fs::read(src.join(t).join("tokenizer.json"))
            .unwrap_or_else(|e| panic!("missing shared tokenizer {t}: {e}"))
    };
    let (base, log) = serve(vec![
        (
            "/deepseek-ai/DeepSeek-V3/resolve/main/tokenizer.json".into(),
            read("deepseek-v3"),
        ),
        // A wrong file for MiniMax: the blake3 check must refuse it.
        (
            "/MiniMaxAI/MiniMax-Text-01/resolve/main/tokenizer.json".into(),
            b"{\"not\": \"it\"}".to_vec(),
        ),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let only_anthropic = tmp.path().join("from");
    std::fs::create_dir_all(only_anthropic.join("anthropic")).unwrap();
    std::fs::write(
        only_anthropic.join("anthropic/tokenizer.json"),
        read("anthropic"),
    )
    .unwrap();
    let cache = tmp.path().join("cache");
    let (ok, err) = xtask(
        &[
            "build-data",
            "tokenizers",
            "--from",
            only_anthropic.to_str().unwrap(),
            "--no-registries",
            "--hub-endpoint",
            &base,
        ],
        &[("ROUTEVAL_CACHE_DIR", &cache)],
    );
    assert!(!ok, "minimax must fail: {err}");
    assert!(
        err.contains("MISSING minimax-text-01") && err.contains("blake3 mismatch"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(cache.join("tokenizers/deepseek-v3/tokenizer.json")).unwrap(),
        read("deepseek-v3")
    );
    assert!(
        !cache
            .join("tokenizers/minimax-text-01/tokenizer.json")
            .exists()
    );
    assert!(
        !cache
            .join("tokenizers/minimax-text-01/tokenizer.json.part")
            .exists(),
        "no half-written file"
    );
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .any(|p| p == "/deepseek-ai/DeepSeek-V3/resolve/main/tokenizer.json")
    );
}
