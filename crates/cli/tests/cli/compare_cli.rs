//! `routeval compare` end to end, on the collection `crates/stats/tests/fixtures/gen_vectors.py`
//! writes (`fixtures/compare/`): qrels, three runs and the p-values scipy 1.17 / statsmodels
//! give on per-query measures the script computes itself.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TOL: f64 = 1e-9;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compare")
}

fn collection(name: &str) -> Vec<String> {
    let d = fixtures();
    ["qrels", "base.run", "better.run", "noisy.run"]
        .iter()
        .map(|f| {
            let file = if *f == "qrels" {
                format!("{name}.qrels")
            } else {
                format!("{name}_{f}")
            };
            d.join(file).display().to_string()
        })
        .collect()
}

const MEASURES: [&str; 6] = ["-m", "map", "-m", "P.5", "-m", "recip_rank"];

fn run(args: &[String]) -> Output {
    bin().args(args).output().expect("run routeval")
}

fn run_json(args: &[String]) -> (Value, String) {
    let out = run(args);
    assert!(
        out.status.success(),
        "routeval {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        serde_json::from_slice(&out.stdout).expect("JSON output"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn args(coll: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["compare".to_string()];
    a.extend(collection(coll));
    a.extend(MEASURES.iter().map(|s| s.to_string()));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

#[test]
fn json_p_values_equal_scipy_and_statsmodels() {
    let mut checked = 0;
    for coll in ["small", "medium"] {
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures().join(format!("{coll}_expected.json"))).unwrap(),
        )
        .unwrap();
        for (test, per_run) in expected["tests"].as_object().unwrap() {
            for correction in ["holm", "bonferroni"] {
                let (j, stderr) = run_json(&args(
                    coll,
                    &["--json", "--test", test, "--correction", correction],
                ));
                assert_eq!(j["queries"], expected["queries"]);
                assert_eq!(j["test"], test.as_str());
                assert_eq!(j["correction"], correction);
                // Each run has one query that is not in the qrels.
                assert_eq!(
                    stderr.matches("1 query without judgments ignored").count(),
                    3,
                    "{stderr}"
                );
                let runs = j["runs"].as_array().unwrap();
                for run in &runs[1..] {
                    let name = run["name"].as_str().unwrap();
                    for (m, want) in per_run[name].as_object().unwrap() {
                        let got = &run["vs_baseline"][m];
                        let close = |key: &str, w: &Value| {
                            let (g, w) = (got[key].as_f64().unwrap(), w.as_f64().unwrap());
                            assert!(
                                (g - w).abs() <= TOL,
                                "{coll} {test} {correction} {name} {m} {key}: {g} vs {w}"
                            );
                        };
                        close("p_value", &want["p_value"]);
                        close("delta", &want["delta"]);
                        close("p_adjusted", &want[format!("p_{correction}").as_str()]);
                        checked += 1;
                    }
                }
            }
        }
    }
    // small: t, wilcoxon, fisher; medium: t, wilcoxon; × 2 corrections × 2 runs × 3 measures.
    assert_eq!(checked, (3 + 2) * 2 * 2 * 3);
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn json_has_exactly_the_documented_shape() {
    let (j, _) = run_json(&args("small", &["--json"]));
    assert_eq!(
        keys(&j),
        ["alpha", "correction", "measures", "queries", "runs", "test"]
    );
    assert_eq!(
        j["measures"],
        serde_json::json!(["map", "recip_rank", "P_5"])
    );
    assert_eq!(j["test"], "t");
    assert_eq!(j["correction"], "holm");
    assert_eq!(j["alpha"], 0.05);
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(keys(&runs[0]), ["means", "name", "path"]);
    let names: Vec<&str> = runs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["base", "better", "noisy"]);
    for r in &runs[1..] {
        assert_eq!(keys(r), ["means", "name", "path", "vs_baseline"]);
        for m in ["map", "P_5", "recip_rank"] {
            let c = &r["vs_baseline"][m];
            assert_eq!(
                keys(c),
                [
                    "ci",
                    "delta",
                    "effect_size",
                    "losses",
                    "p_adjusted",
                    "p_value",
                    "significant",
                    "ties",
                    "wins"
                ]
            );
            let ci = c["ci"].as_array().unwrap();
            let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
            assert!(lo <= hi);
            let n = c["wins"].as_u64().unwrap()
                + c["ties"].as_u64().unwrap()
                + c["losses"].as_u64().unwrap();
            assert_eq!(n, 12);
        }
    }
    // The better run's MAP gain is large and its CI excludes 0.
    let c = &runs[1]["vs_baseline"]["map"];
    assert_eq!(c["significant"], true);
    assert!(c["ci"][0].as_f64().unwrap() > 0.0);
    // Means equal `routeval trec -c`'s summary values.
    let out = run(&[
        "trec".into(),
        "-c".into(),
        "--json".into(),
        "-m".into(),
        "map".into(),
        collection("small")[0].clone(),
        collection("small")[2].clone(),
    ]);
    let t: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(t["all"]["map"], runs[1]["means"]["map"]);
}

#[test]
fn identical_runs_give_p_one_and_no_effect_size() {
    let c = collection("small");
    let mut a = vec![
        "compare".to_string(),
        c[0].clone(),
        c[1].clone(),
        c[1].clone(),
    ];
    a.extend(MEASURES.iter().map(|s| s.to_string()));
    for test in ["t", "wilcoxon", "fisher", "bootstrap"] {
        let mut a = a.clone();
        a.extend(["--json".into(), "--test".into(), test.into()]);
        let (j, _) = run_json(&a);
        let runs = j["runs"].as_array().unwrap();
        // Same tag twice: names fall back to the file stem.
        assert_eq!(runs[0]["name"], "small_base");
        let v = &runs[1]["vs_baseline"]["map"];
        assert_eq!(v["p_value"], 1.0, "{test}");
        assert_eq!(v["effect_size"], Value::Null);
        assert_eq!(v["ties"], 12);
        assert_eq!(v["significant"], false);
    }
}

#[test]
fn resampling_is_seeded() {
    let base = args(
        "medium",
        &["--json", "--test", "fisher", "--iterations", "2000"],
    );
    let (a, _) = run_json(&base);
    let (b, _) = run_json(&base);
    assert_eq!(a, b);
    let mut other = base.clone();
    other.extend(["--seed".into(), "7".into()]);
    let (c, _) = run_json(&other);
    assert_ne!(
        a["runs"][2]["vs_baseline"]["map"]["ci"],
        c["runs"][2]["vs_baseline"]["map"]["ci"]
    );
    // 60 queries: Monte Carlo, p = (hits + 1)/(N + 1) is a multiple of 1/2001.
    let p = a["runs"][2]["vs_baseline"]["map"]["p_value"]
        .as_f64()
        .unwrap();
    let k = p * 2001.0;
    assert!((k - k.round()).abs() < 1e-6, "{p}");
    let mut no_ci = base.clone();
    no_ci.push("--no-ci".into());
    let (d, _) = run_json(&no_ci);
    assert_eq!(d["runs"][1]["vs_baseline"]["map"]["ci"], Value::Null);
}

#[test]
fn all_pairs_compares_every_pair() {
    let (j, _) = run_json(&args("small", &["--json", "--all-pairs"]));
    let pairs = j["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 3);
    let ab: Vec<(String, String)> = pairs
        .iter()
        .map(|p| {
            (
                p["a"].as_str().unwrap().into(),
                p["b"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        ab,
        [
            ("base".to_string(), "better".to_string()),
            ("base".into(), "noisy".into()),
            ("better".into(), "noisy".into())
        ]
    );
    // The baseline pairs are the vs_baseline entries; Holm now spans 9 comparisons.
    assert_eq!(pairs[0]["vs"], j["runs"][1]["vs_baseline"]);
    let (k, _) = run_json(&args("small", &["--json"]));
    let p6 = k["runs"][1]["vs_baseline"]["map"]["p_adjusted"]
        .as_f64()
        .unwrap();
    let p9 = j["runs"][1]["vs_baseline"]["map"]["p_adjusted"]
        .as_f64()
        .unwrap();
    assert!(p9 >= p6);
}

#[test]
fn fail_if_worse_exits_3_with_one_line_per_failure() {
    let c = collection("small");
    // The strong run as baseline: the base run is significantly worse.
    let mut a = vec![
        "compare".to_string(),
        c[0].clone(),
        c[2].clone(),
        c[1].clone(),
    ];
    a.extend(MEASURES.iter().map(|s| s.to_string()));
    let out = run(&a);
    assert_eq!(out.status.code(), Some(0));
    a.push("--fail-if-worse".into());
    let out = run(&a);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let fails: Vec<&str> = stderr.lines().filter(|l| l.starts_with("fail: ")).collect();
    assert!(!fails.is_empty());
    assert!(
        fails[0].contains("base is significantly worse than better on "),
        "{stderr}"
    );
    // Reversed (a better run against the base): passes.
    let mut ok = vec![
        "compare".to_string(),
        c[0].clone(),
        c[1].clone(),
        c[2].clone(),
    ];
    ok.extend(MEASURES.iter().map(|s| s.to_string()));
    ok.push("--fail-if-worse".into());
    assert_eq!(run(&ok).status.code(), Some(0));
}

#[test]
fn table_formats() {
    let text = run(&args("small", &[]));
    assert!(text.status.success());
    let s = String::from_utf8(text.stdout).unwrap();
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines[0].starts_with("#  run"), "{s}");
    assert!(lines[3].starts_with("b  better"), "{s}");
    // better beats the baseline (run a) on every measure: superscript a, and a delta.
    assert!(lines[3].contains("ᵃ") && lines[3].contains("(+0."), "{s}");

    let md = String::from_utf8(run(&args("small", &["--format", "md"])).stdout).unwrap();
    assert!(
        md.starts_with("| # | run | map | recip_rank | P_5 |"),
        "{md}"
    );
    let tex = String::from_utf8(run(&args("small", &["--format", "latex"])).stdout).unwrap();
    assert!(
        tex.contains("\\begin{tabular}") && tex.contains("P\\_5"),
        "{tex}"
    );
    let csv = String::from_utf8(run(&args("small", &["--format", "csv"])).stdout).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("baseline,run,measure,baseline_mean,run_mean,delta,p_value"));
    assert_eq!(rows.len(), 1 + 2 * 3);
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let c = collection("small");
    let cases: Vec<Vec<String>> = vec![
        vec![
            c[0].clone(),
            c[1].clone(),
            c[2].clone(),
            "-m".into(),
            "gm_map".into(),
        ],
        vec![c[0].clone(), c[1].clone(), "/nonexistent/run".into()],
        vec![
            c[0].clone(),
            c[1].clone(),
            c[2].clone(),
            "--alpha".into(),
            "2".into(),
        ],
        vec![
            c[0].clone(),
            c[1].clone(),
            c[2].clone(),
            "--test".into(),
            "z".into(),
        ],
        vec![c[0].clone(), c[1].clone()],
    ];
    for case in cases {
        let mut a = vec!["compare".to_string()];
        a.extend(case.clone());
        let out = run(&a);
        assert_eq!(out.status.code(), Some(2), "{case:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{case:?}: {stderr}");
    }
}

/// The HTML report carries the notes of tests and intervals without evidence behind them, as
/// the JSON (`note`, `ci_degenerate`), the CSV and the text table do (the CLI once replaced the
/// document's notes with the inputs' notes).
#[test]
fn html_report_names_tests_and_intervals_without_evidence() {
    let d = tempfile::tempdir().unwrap();
    let c = collection("small");
    // One judged query: no paired test, a degenerate interval.
    let qrels = std::fs::read_to_string(&c[0]).unwrap();
    let first = qrels.split_whitespace().next().unwrap().to_string();
    let one: String = qrels
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(first.as_str()))
        .map(|l| format!("{l}\n"))
        .collect();
    let q1 = d.path().join("one.qrels");
    std::fs::write(&q1, one).unwrap();
    let html = d.path().join("r.html");
    let mut a = vec![
        "compare".to_string(),
        q1.display().to_string(),
        c[1].clone(),
        c[2].clone(),
        "-m".into(),
        "map".into(),
        "--json".into(),
        "--html".into(),
        html.display().to_string(),
    ];
    let (v, _) = run_json(&a);
    let cmp = &v["runs"][1]["vs_baseline"]["map"];
    let (note, ci) = (
        cmp["note"].as_str().expect("a test note"),
        cmp["ci_degenerate"].as_str().expect("a degenerate CI"),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    for want in [note, ci] {
        // The report escapes HTML; these reasons have no characters it changes but '('.
        assert!(page.contains(want), "the HTML report lacks {want:?}");
    }
    // A comparison with evidence behind it adds no such note.
    a[1] = c[0].clone();
    run_json(&a);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("no test ("), "unexpected note");
}
