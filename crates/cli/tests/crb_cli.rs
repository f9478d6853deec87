//! `routeval crb eval` / `crb metrics` end to end on every case of
//! `$ROUTEVAL_SHARED/golden/crb/cases/*` and the metrics CLI vectors.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shared() -> Option<PathBuf> {
    routeval_core::fixtures::shared_dir("crb_cli")
}

/// Run `routeval ARGS` in `dir`.
fn routeval_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Exit code, stdout and stderr of a run, as text.
fn texts(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The JSON stdout of a run that must succeed (its stderr shown otherwise).
fn ok_json(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The `scores_v2` block of a summary equals the expected one (see [`compare`]).
fn assert_scores_v2(exp: &Value, got: &Value) {
    let mut diffs = Vec::new();
    compare(
        &exp["scores_v2"],
        &got["scores_v2"],
        "scores_v2",
        &mut diffs,
    );
    assert!(diffs.is_empty(), "{diffs:?}");
}

fn load(p: &Path) -> Value {
    serde_json::from_slice(
        &std::fs::read(p).unwrap_or_else(|e| panic!("missing {}: {e}", p.display())),
    )
    .unwrap()
}

fn compare(exp: &Value, got: &Value, path: &str, diffs: &mut Vec<String>) {
    match (exp, got) {
        (Value::Object(e), Value::Object(g)) => {
            for (k, v) in e {
                match g.get(k) {
                    Some(gv) => compare(v, gv, &format!("{path}.{k}"), diffs),
                    None => diffs.push(format!("{path}.{k}: missing")),
                }
            }
        }
        (Value::Array(e), Value::Array(g)) => {
            if e.len() != g.len() {
                diffs.push(format!("{path}: len {} vs {}", e.len(), g.len()));
            }
            for (i, (a, b)) in e.iter().zip(g).enumerate() {
                compare(a, b, &format!("{path}[{i}]"), diffs);
            }
        }
        (Value::String(s), Value::Null) if s == "NaN" => {}
        (Value::Number(a), Value::Number(b)) => {
            if a.is_f64() != b.is_f64()
                || a.as_f64().unwrap().to_bits() != b.as_f64().unwrap().to_bits()
            {
                diffs.push(format!("{path}: {a} vs {b}"));
            }
        }
        (a, b) if a == b => {}
        (a, b) => diffs.push(format!("{path}: {a} vs {b}")),
    }
}

#[test]
fn eval_reproduces_every_golden_case() {
    let Some(sh) = shared() else { return };
    let toks = sh.join("thirdparty/tokenizers");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(sh.join("golden/crb/cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut failures = Vec::new();
    let mut checked = 0;
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let case = load(&dir.join("case.json"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_routeval"));
        cmd.current_dir(&dir)
            .args([
                "crb",
                "eval",
                "--bank",
                "bank.jsonl",
                "--predictor",
                "file:predictions.json",
                "--json",
                "--tokenizers",
            ])
            .arg(&toks);
        if let Some(n) = case["n"].as_i64() {
            cmd.args(["--n", &n.to_string(), "--seed", &case["seed"].to_string()]);
            if case["mode"] == "select_evaluate_build" {
                cmd.args(["--manifest", "manifest.json"]);
            }
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if dir.join("expected_error.json").exists() {
            let errs: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
            if out.status.code() != Some(2) || errs.len() != 1 || !errs[0].contains("bank.jsonl") {
                failures.push(format!(
                    "{name}: expected exit 2 with one error line, got {:?} {stderr}",
                    out.status.code()
                ));
            }
            assert!(!stderr.contains("panicked"), "{name}: {stderr}");
            checked += 1;
            continue;
        }
        if out.status.code() != Some(0) {
            failures.push(format!("{name}: exit {:?}: {stderr}", out.status.code()));
            continue;
        }
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut exp = load(&dir.join("expected_summary.json"));
        // The CLI labels the summary with the --predictor text and the bank path as given;
        // extra_summary is a library feature.
        let o = exp.as_object_mut().unwrap();
        o.remove("classifier");
        if let Some(extra) = case["extra_summary"].as_object() {
            for k in extra.keys() {
                if !["sampled", "classifier"].contains(&k.as_str()) {
                    o.remove(k);
                }
            }
        }
        assert_eq!(got["classifier"], "file:predictions.json");
        let mut diffs = Vec::new();
        compare(&exp, &got, &name, &mut diffs);
        if diffs.is_empty() {
            checked += 1;
        } else {
            failures.push(diffs[..diffs.len().min(5)].join("; "));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 40, "{checked}");
}

#[test]
fn tier_and_gold_predictors_and_bad_usage() {
    let Some(sh) = shared() else { return };
    let dir = sh.join("golden/crb/cases/mixed_always_high");
    let toks = sh.join("thirdparty/tokenizers");
    let run = |args: &[&str]| {
        routeval_in(
            &dir,
            &[args, &["--tokenizers", toks.to_str().unwrap()][..]].concat(),
        )
    };
    let out = run(&[
        "crb",
        "eval",
        "--bank",
        "bank.jsonl",
        "--predictor",
        "tier:high",
        "--json",
    ]);
    let got = ok_json(&out);
    assert_scores_v2(&load(&dir.join("expected_summary.json")), &got);
    let gold = run(&["crb", "eval", "--bank", "bank.jsonl", "--predictor", "gold"]);
    let text = String::from_utf8_lossy(&gold.stdout);
    assert!(
        text.contains("case exact match (pred = gold)") && text.contains("100.00"),
        "{text}"
    );
    let bad = run(&[
        "crb",
        "eval",
        "--bank",
        "bank.jsonl",
        "--predictor",
        "tier:ultra",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let missing = run(&["crb", "eval", "--bank", "nope.jsonl", "--predictor", "gold"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nope.jsonl"));
}

#[test]
fn command_predictor_is_a_persistent_process() {
    let Some(sh) = shared() else { return };
    let dir = sh.join("golden/crb/cases/mixed_always_low");
    let toks = sh.join("thirdparty/tokenizers");
    // One process answers every row with "low" (and proves it stays alive by counting).
    let out = routeval_in(
        &dir,
        &[
            "crb",
            "eval",
            "--bank",
            "bank.jsonl",
            "--json",
            "--predictor",
            "cmd:n=0; while read -r line; do n=$((n+1)); echo low; done",
            "--tokenizers",
            toks.to_str().unwrap(),
        ],
    );
    assert_scores_v2(&load(&dir.join("expected_summary.json")), &ok_json(&out));
}

#[test]
fn metrics_cli_vectors() {
    let Some(sh) = shared() else { return };
    let mdir = sh.join("golden/crb/metrics");
    let v = load(&mdir.join("metrics_vectors.json"));
    let mut n = 0;
    for c in v["cli"].as_array().unwrap() {
        let argv: Vec<&str> = c["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        if argv.len() < 3 {
            continue; // argparse usage errors: our clap usage errors also exit 2
        }
        let out = routeval_in(&mdir, &[&["crb"][..], &argv[..]].concat());
        if c["exit_code"] == 0 {
            let got = ok_json(&out);
            // Python's json.dump writes NaN bare; parse its stdout with NaN as a string.
            let exp_text = c["stdout"].as_str().unwrap().replace("NaN", "\"NaN\"");
            let exp: Value = serde_json::from_str(&exp_text).unwrap();
            let mut diffs = Vec::new();
            compare(&exp, &got, &argv.join(" "), &mut diffs);
            assert!(diffs.is_empty(), "{diffs:?}");
        } else {
            // The reference exits 1 for bad input; routeval's convention is 2 with one line.
            assert_eq!(out.status.code(), Some(2));
            let err = String::from_utf8_lossy(&out.stderr);
            let last = c["stderr_last_line"].as_str().unwrap();
            let last = last.strip_prefix("ValueError: ").unwrap_or(last);
            assert!(err.contains(last), "{err} vs {last}");
        }
        n += 1;
    }
    assert!(n >= 6);
}

/// `crb eval --where`: selects bank rows by a `where` query (count on stderr, stdout as with
/// the equivalent `--benchmark` filter), query errors exit 2 naming kind and FILE:LINE.
#[test]
fn eval_where_selects_rows() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/crb");
    let run = |args: &[&str]| {
        let base = [
            "crb",
            "eval",
            "--bank",
            "bank.jsonl",
            "--predictor",
            "tier:high",
            "--tokenizer-setup",
            "all_cl100k",
            "--json",
        ];
        routeval_in(&dir, &[&base[..], args].concat())
    };
    let by_benchmark = run(&["--benchmark", "swebench"]);
    let by_where = run(&["--where", r#"{"benchmark": "swebench"}"#]);
    let a = ok_json(&by_benchmark);
    let b = ok_json(&by_where);
    assert_eq!(a["scores_v2"], b["scores_v2"]);
    assert_eq!(a["by_benchmark"], b["by_benchmark"]);
    let err = String::from_utf8_lossy(&by_where.stderr);
    assert!(
        err.lines()
            .any(|l| l == "crb eval: --where selected 4 of 8 rows"),
        "{err}"
    );
    // A query using operators and a list index selects a different subset.
    let later = run(&[
        "--where",
        r#"{"step_index": {">": 1}, "messages.0.role": "system"}"#,
    ]);
    assert_eq!(later.status.code(), Some(0));
    let err = String::from_utf8_lossy(&later.stderr);
    let expected = {
        let text = std::fs::read_to_string(dir.join("bank.jsonl")).unwrap();
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| {
                r["step_index"].as_i64().unwrap() > 1 && r["messages"][0]["role"] == "system"
            })
            .count()
    };
    assert!(
        err.contains(&format!("--where selected {expected} of 8 rows")),
        "{err}"
    );
    let s: Value = serde_json::from_slice(&later.stdout).unwrap();
    assert_ne!(s["scores_v2"], b["scores_v2"]);
    // Errors: malformed query, missing key in error mode, type error, nothing selected.
    let bad = run(&["--where", r#"{"benchmark": {"like": "x"}}"#]);
    assert_eq!(bad.status.code(), Some(2));
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(e.contains("--where: unknown_operator"), "{e}");
    assert!(bad.stdout.is_empty());
    let missing = run(&[
        "--where",
        r#"{"difficulty": "hard"}"#,
        "--on-missing-key",
        "error",
    ]);
    assert_eq!(missing.status.code(), Some(2));
    let e = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("bank.jsonl:1: --where: missing_key"), "{e}");
    let skipped = run(&["--where", r#"{"difficulty": "hard"}"#]);
    assert_eq!(skipped.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&skipped.stderr).contains("selected no rows"));
    let type_err = run(&["--where", r#"{"step_index": {"gt": "2"}}"#]);
    assert_eq!(type_err.status.code(), Some(2));
    let e = String::from_utf8_lossy(&type_err.stderr);
    assert!(e.contains("bank.jsonl:1: --where: type_error"), "{e}");
    let bad_omk = run(&["--where", "{}", "--on-missing-key", "maybe"]);
    assert_eq!(bad_omk.status.code(), Some(2));
}

/// Run `crb eval` in a golden case directory with `--predictor PRED` and the shared tokenizers.
fn eval_with(case: &str, predictor: &str, extra: &[&str]) -> Option<(i32, String, String)> {
    let sh = shared()?;
    let dir = sh.join("golden/crb/cases").join(case);
    let toks = sh.join("thirdparty/tokenizers");
    let base = [
        "crb",
        "eval",
        "--bank",
        "bank.jsonl",
        "--predictor",
        predictor,
        "--tokenizers",
        toks.to_str().unwrap(),
    ];
    Some(texts(&routeval_in(&dir, &[&base[..], extra].concat())))
}

#[test]
fn command_predictor_desync_start_failure_and_bad_answers() {
    let case = "mixed_always_low";
    let Some(sh) = shared() else { return };
    let rows = std::fs::read_to_string(sh.join("golden/crb/cases").join(case).join("bank.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    // Two lines per row: misaligned answers are one clear error, not a score.
    let (code, out, err) =
        eval_with(case, "cmd:while read l; do echo 3; echo 0; done", &[]).unwrap();
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(out.is_empty(), "{out}");
    let want = format!("wrote {rows} more non-empty line(s) than the {rows} input rows");
    assert!(
        err.contains(&want) && err.contains("desynchronised") && err.trim().lines().count() == 1,
        "{err}"
    );
    // A program that cannot start is one error, not one predictor error per row.
    let (code, out, err) = eval_with(case, "cmd:nonexistent_xyz", &[]).unwrap();
    assert_eq!(code, 2, "{out}\n{err}");
    let ours: Vec<&str> = err.lines().filter(|l| l.contains("cmd:")).collect();
    assert_eq!(ours.len(), 1, "{err}");
    assert!(
        ours[0].contains("cmd:nonexistent_xyz") && ours[0].contains("127"),
        "{err}"
    );
    // An unparsable answer warns with the row id and counts as a predictor error.
    let (code, out, err) =
        eval_with(case, "cmd:while read l; do echo 2.5; done", &["--json"]).unwrap();
    assert_eq!(code, 0, "{err}");
    let warns: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("unreadable answer \"2.5\""))
        .collect();
    assert_eq!(warns.len(), rows, "{err}");
    assert!(
        warns[0].starts_with("warning: ") && warns[0].contains("row "),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["api_errors"].as_u64(), Some(rows as u64), "{out}");
}

#[test]
fn missing_tokenizers_dir_is_an_error_and_fallbacks_show_in_the_header() {
    let Some(sh) = shared() else { return };
    let dir = sh.join("golden/crb/cases/mixed_always_low");
    let run = |toks: &Path| {
        texts(&routeval_in(
            &dir,
            &[
                "crb",
                "eval",
                "--bank",
                "bank.jsonl",
                "--predictor",
                "gold",
                "--tokenizers",
                toks.to_str().unwrap(),
            ],
        ))
    };
    let (code, out, err) = run(Path::new("/nonexistent/routeval-tokenizers-xyz"));
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("--tokenizers /nonexistent/routeval-tokenizers-xyz")
            && err.lines().count() == 1,
        "{err}"
    );
    // An existing but empty directory: every tier falls back, and the header says so.
    let empty = std::env::temp_dir().join(format!("routeval-empty-toks-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let (code, out, err) = run(&empty);
    std::fs::remove_dir_all(&empty).unwrap();
    assert_eq!(code, 0, "{err}");
    let header = out.lines().next().unwrap_or_default();
    assert!(
        header.contains("tokenizers native (fallback: cl100k for ")
            && ["low", "mid", "high"].iter().all(|t| header.contains(t)),
        "{header}"
    );
    // With the real tokenizers, plain "native".
    let (code, out, err) = run(&sh.join("thirdparty/tokenizers"));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .next()
            .unwrap_or_default()
            .ends_with("tokenizers native)"),
        "{out}"
    );
}

/// `crb metrics`: a cost that is not a number, where a passed case needs it, is one error line
/// naming FILE:LINE of that field and the case; where the reference never reads it (a failed
/// case), it is ignored as there.
#[test]
fn metrics_non_numeric_cost_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = r#"[
  {"case_id": "a", "task_passed": true, "baseline_cost_nominal": 1.0,
   "optimal_cost_nominal": 0.5, "test_cost_nominal": 0.6},
  {"case_id": "b", "task_passed": true,
   "baseline_cost_nominal": 1.0,
   "optimal_cost_nominal": "cheap",
   "test_cost_nominal": 0.6},
  {"case_id": "c", "task_passed": false, "test_cost_nominal": "n/a"}
]
"#;
    std::fs::write(dir.path().join("cases.json"), cases).unwrap();
    let (code, out, err) = texts(&routeval_in(
        dir.path(),
        &["crb", "metrics", "--cases", "cases.json"],
    ));
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "cases.json:6: case 1: optimal_cost_nominal must be a number (USD), got \"cheap\""
        ),
        "{err}"
    );
    // Without case b: the failed case's string cost is never read (as in the reference).
    let ok = r#"[
  {"case_id": "a", "task_passed": true, "baseline_cost_nominal": 1.0,
   "optimal_cost_nominal": 0.5, "test_cost_nominal": 0.6},
  {"case_id": "c", "task_passed": false, "test_cost_nominal": "n/a"}
]"#;
    std::fs::write(dir.path().join("ok.json"), ok).unwrap();
    let (code, out, err) = texts(&routeval_in(
        dir.path(),
        &["crb", "metrics", "--cases", "ok.json"],
    ));
    assert_eq!(code, 0, "{ok}\n{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["valid_cases"].as_u64(), v["passed_cases"].as_u64()),
        (Some(2), Some(1))
    );
}

/// `crb eval --predictor file:`: prediction ids that match no evaluated row are counted and
/// named in one warning line, never dropped silently.
#[test]
fn eval_warns_about_prediction_ids_not_in_the_bank() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/crb");
    let dir = tempfile::tempdir().unwrap();
    let mut preds = String::new();
    for line in std::fs::read_to_string(data.join("bank.jsonl"))
        .unwrap()
        .lines()
    {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            preds.push_str(&format!("{{\"id\": {}, \"tier_id\": 3}}\n", v["id"]));
        }
    }
    preds
        .push_str("{\"id\": \"ghost-1\", \"tier_id\": 0}\n{\"id\": \"ghost-2\", \"tier_id\": 1}\n");
    let pf = dir.path().join("preds.jsonl");
    std::fs::write(&pf, preds).unwrap();
    let predictor = format!("file:{}", pf.display());
    let run = |extra: &[&str]| {
        let base = [
            "crb",
            "eval",
            "--bank",
            "bank.jsonl",
            "--predictor",
            predictor.as_str(),
            "--tokenizer-setup",
            "all_cl100k",
            "--json",
        ];
        texts(&routeval_in(&data, &[&base[..], extra].concat()))
    };
    let (code, _, err) = run(&[]);
    assert_eq!(code, 0, "{err}");
    let warns: Vec<&str> = err.lines().filter(|l| l.contains("ghost")).collect();
    assert_eq!(warns.len(), 1, "{err}");
    assert!(
        warns[0].starts_with("warning: ")
            && warns[0].contains("2 of 10 prediction(s) have ids not among the 8 evaluated rows")
            && warns[0].contains("\"ghost-1\""),
        "{err}"
    );
    // Rows left out by --benchmark count too (their predictions are unused).
    let (code, _, err) = run(&["--benchmark", "swebench"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("6 of 10 prediction(s) have ids not among the 4 evaluated rows"),
        "{err}"
    );
}
