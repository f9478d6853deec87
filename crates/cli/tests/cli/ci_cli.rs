//! `--ci LEVEL --bootstrap N --seed S` on trec, rag, crb eval and gqr score: the documented JSON
//! block, intervals around the point estimate, the same intervals on any number of threads,
//! and a different seed giving different replicates.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ex(rel: &str) -> String {
    root()
        .join("examples/data")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn json(args: &[&str], threads: &str) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The block has the documented keys; each interval brackets `point(metric)`; 1 and 4
/// threads agree exactly.
fn check(args: &[&str], metrics: &[&str], point: impl Fn(&Value, &str) -> f64) {
    let one = json(args, "1");
    let four = json(args, "4");
    assert_eq!(one, four, "thread count changed the output");
    let ci = &one["ci"];
    assert_eq!(ci["level"], 0.9);
    assert_eq!(ci["replicates"], 300);
    assert_eq!(ci["seed"], 7);
    for m in metrics {
        let iv = ci["intervals"][m]
            .as_array()
            .unwrap_or_else(|| panic!("{m}: {ci}"));
        let (lo, hi) = (iv[0].as_f64().unwrap(), iv[1].as_f64().unwrap());
        let p = point(&one, m);
        assert!(
            lo <= p + 1e-9 && p <= hi + 1e-9,
            "{m}: {p} not in [{lo}, {hi}]"
        );
    }
}

#[test]
fn trec_ci() {
    let (q, r) = (ex("trec/qrels.txt"), ex("trec/run.txt"));
    let base = [
        "trec",
        q.as_str(),
        r.as_str(),
        "-m",
        "map",
        "-m",
        "P.5",
        "-m",
        "gm_map",
        "--json",
    ];
    let mut args = base.to_vec();
    args.extend(["--ci", "0.9", "--bootstrap", "300", "--seed", "7"]);
    check(&args, &["map", "P_5", "gm_map"], |v, m| {
        v["all"][m].as_f64().unwrap()
    });
    // Without --ci nothing changes; another seed gives other replicates.
    let plain = json(&base, "2");
    assert!(plain.get("ci").is_none());
    let with = json(&args, "2");
    assert_eq!(plain["all"], with["all"]);
    assert!(
        with.get("per_query").is_none(),
        "--ci alone does not print per-query values"
    );
}

#[test]
fn crb_eval_ci() {
    let bank = ex("crb/bank.jsonl");
    let args = [
        "crb",
        "eval",
        "--bank",
        &bank,
        "--predictor",
        "tier:mid",
        "--tokenizer-setup",
        "all_cl100k",
        "--json",
        "--ci",
        "0.9",
        "--bootstrap",
        "300",
        "--seed",
        "7",
    ];
    check(
        &args,
        &[
            "case_pass_rate_percent",
            "case_exact_match_percent",
            "trajectory_pass_rate_percent",
        ],
        |v, m| v["scores_v2"][m].as_f64().unwrap(),
    );
}

#[test]
fn gqr_score_ci() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(ex("gqr/rows.jsonl")).unwrap();
    let (mut id, mut ood) = (String::new(), String::new());
    for l in text.lines() {
        let t = if l.contains("\"id_test/") {
            &mut id
        } else {
            &mut ood
        };
        t.push_str(l);
        t.push('\n');
    }
    let manifest = format!(
        r#"{{"build": "gqr", "registry_blake3": "-", "files": [
        {{"path": "id_test.jsonl", "rows": {}, "blake3": "-"}},
        {{"path": "ood_test.jsonl", "rows": {}, "blake3": "-"}}],
        "missing": [], "datasets": [], "warnings": []}}"#,
        id.lines().count(),
        ood.lines().count()
    );
    std::fs::write(d.path().join("manifest.json"), manifest).unwrap();
    std::fs::write(d.path().join("id_test.jsonl"), id).unwrap();
    std::fs::write(d.path().join("ood_test.jsonl"), ood).unwrap();
    let b = d.path().to_str().unwrap();
    let p = ex("gqr/predictions.jsonl");
    let args = [
        "gqr",
        "score",
        "--predictions",
        &p,
        "--build-dir",
        b,
        "--json",
        "--ci",
        "0.9",
        "--bootstrap",
        "300",
        "--seed",
        "7",
    ];
    check(&args, &["id_accuracy", "ood_accuracy"], |v, m| {
        v[m].as_f64().unwrap()
    });
}

/// 40 id-only cases: `relevant` is one id, found at rank `i % 4 + 1` or (every fifth case)
/// not retrieved at all, so every retrieval metric varies across cases.
fn rag_cases(dir: &Path) -> String {
    let mut cases = Vec::new();
    for i in 0..40 {
        let retrieved: Vec<String> = (0..4).map(|r| format!("d{i}_{r}")).collect();
        let relevant = if i % 5 == 0 {
            format!("missing{i}")
        } else {
            format!("d{i}_{}", i % 4)
        };
        cases.push(serde_json::json!({
            "id": format!("q{i}"),
            "query": format!("question {i}"),
            "retrieved": retrieved,
            "relevant": [relevant],
        }));
    }
    let p = dir.join("cases.json");
    std::fs::write(&p, serde_json::to_string(&cases).unwrap()).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn rag_ci() {
    let d = tempfile::tempdir().unwrap();
    let cases = rag_cases(d.path());
    let args = [
        "rag",
        &cases,
        "--json",
        "--ci",
        "0.9",
        "--bootstrap",
        "300",
        "--seed",
        "7",
    ];
    let metrics = [
        "precision_at_k",
        "recall_at_k",
        "mrr",
        "ndcg_at_k",
        "hit_rate",
    ];
    check(&args, &metrics, |v, m| v["metrics"][m].as_f64().unwrap());
    let with = json(&args, "2");
    assert_eq!(with["ci"]["units"], "cases supporting each metric");
    // Intervals are real: hit_rate is 0 on 8 of 40 cases, so its interval is not a point.
    let hr = with["ci"]["intervals"]["hit_rate"].as_array().unwrap();
    assert!(
        hr[0].as_f64().unwrap() < 0.8 && hr[1].as_f64().unwrap() > 0.8,
        "{hr:?}"
    );

    // Without --ci the bytes are the reference's; with it, the same bytes plus a last member.
    let run = |extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_routeval"))
            .args(["rag", &cases, "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
        String::from_utf8(o.stdout).unwrap()
    };
    let plain = run(&[]);
    let ci = run(&["--ci", "0.9"]);
    let body = plain.trim_end().strip_suffix('}').unwrap().trim_end();
    assert!(ci.starts_with(body), "the report's bytes changed with --ci");
    assert!(
        ci[body.len()..].starts_with(",\n  \"ci\": {"),
        "{}",
        &ci[body.len()..]
    );
    // A different seed draws different replicates.
    let other = json(
        &[
            "rag",
            &cases,
            "--json",
            "--ci",
            "0.9",
            "--bootstrap",
            "300",
            "--seed",
            "8",
        ],
        "1",
    );
    assert_ne!(other["ci"]["intervals"], with["ci"]["intervals"]);
    // The text report ends with the block.
    let text = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(["rag", &cases, "--ci", "0.95"])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(t.contains("95% bootstrap confidence intervals (1000 replicates over cases supporting each metric, seed 42)"), "{t}");
    // Rows have no intervals; --bootstrap alone means nothing.
    for bad in [
        vec!["--ci", "0.9", "--format", "csv"],
        vec!["--bootstrap", "10"],
        vec!["--ci", "1.5"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_routeval"))
            .args(["rag", &cases])
            .args(&bad)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(o.stdout.is_empty());
    }
}
