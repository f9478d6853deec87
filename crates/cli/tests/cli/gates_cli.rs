//! Quality gates (`--fail-under METRIC=VALUE`) on every subcommand that produces metrics:
//! trec, rag, route, crb eval, gqr score. All on the shipped example data (no shared files).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

fn routeval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .output()
        .unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A gate that passes keeps exit 0 and stdout unchanged; a failing gate exits 3 with one
/// stderr line naming the metric, the value and the bound; a second failing gate adds a line;
/// an unknown metric is exit 2 listing the valid names.
fn check_gates(base: &[&str], pass: &str, fail: &str, fail2: &str, metric: &str) {
    let plain = routeval(base);
    assert_eq!(code(&plain), 0, "{}", err(&plain));
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        routeval(&a)
    };
    let ok = with(&["--fail-under", pass]);
    assert_eq!(code(&ok), 0, "{pass}: {}", err(&ok));
    assert_eq!(ok.stdout, plain.stdout, "a passing gate changes no output");
    let bad = with(&["--fail-under", fail]);
    assert_eq!(code(&bad), 3, "{fail}: {}", err(&bad));
    assert_eq!(bad.stdout, plain.stdout, "the report is still printed");
    let e = err(&bad);
    let lines: Vec<&str> = e.lines().filter(|l| l.contains("quality gate")).collect();
    assert_eq!(lines.len(), 1, "{e}");
    let bound = fail.rsplit_once('=').unwrap().1;
    assert!(
        lines[0].contains(metric) && lines[0].contains(bound) && lines[0].contains(" < "),
        "{e}"
    );
    let two = with(&[
        "--fail-under",
        fail,
        "--fail-under",
        fail2,
        "--fail-under",
        pass,
    ]);
    assert_eq!(code(&two), 3);
    assert_eq!(
        err(&two)
            .lines()
            .filter(|l| l.contains("quality gate"))
            .count(),
        2,
        "{}",
        err(&two)
    );
    let unknown = with(&["--fail-under", "no_such_metric=0.5"]);
    assert_eq!(code(&unknown), 2, "{}", err(&unknown));
    let e = err(&unknown);
    assert!(
        e.lines()
            .any(|l| l.contains("no_such_metric") && l.contains(metric)),
        "{e}"
    );
    let syntax = with(&["--fail-under", "map"]);
    assert_eq!(code(&syntax), 2, "{}", err(&syntax));
}

#[test]
fn trec_fail_under() {
    let (q, r) = (ex("trec/qrels.txt"), ex("trec/run.txt"));
    let base = ["trec", &q, &r, "-m", "map", "-m", "P.10"];
    check_gates(&base, "map=0.01", "map=0.999", "P_10=0.99", "map");
    // JSON output too.
    let j = routeval(&["trec", &q, &r, "--json", "--fail-under", "map=0.999"]);
    assert_eq!(code(&j), 3);
    assert!(serde_json::from_slice::<serde_json::Value>(&j.stdout).is_ok());
}

#[test]
fn rag_fail_under_and_strict() {
    let c = ex("rag/cases.json");
    let base = ["rag", &c];
    check_gates(&base, "mrr=0.01", "mrr=0.999", "hit_rate=0.999", "mrr");
    // A metric no case produced: the gate cannot pass.
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("c.json");
    std::fs::write(
        &f,
        r#"[{"query": "q", "retrieved": ["a"], "relevant": ["a"]}]"#,
    )
    .unwrap();
    let o = routeval(&[
        "rag",
        f.to_str().unwrap(),
        "--fail-under",
        "groundedness=0.1",
    ]);
    assert_eq!(code(&o), 3);
    assert!(
        err(&o).contains("groundedness was not computed"),
        "{}",
        err(&o)
    );
    // --format csv -o: nothing on stdout, the reason on stderr.
    let rows = d.path().join("rows.csv");
    let o = routeval(&[
        "rag",
        &c,
        "--format",
        "csv",
        "-o",
        rows.to_str().unwrap(),
        "--fail-under",
        "mrr=0.999",
    ]);
    assert_eq!(code(&o), 3);
    assert!(o.stdout.is_empty());
    assert!(err(&o).contains("mrr = ") && rows.exists(), "{}", err(&o));
    // --strict keeps its meaning (any case failure), and says why on stderr.
    let o = routeval(&[
        "rag",
        &c,
        "--strict",
        "--format",
        "csv",
        "-o",
        rows.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 3);
    assert!(err(&o).contains("--strict"), "{}", err(&o));
    // Unknown metric: argparse-style usage error, exit 2.
    let o = routeval(&["rag", &c, "--fail-under", "map=0.1"]);
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("unknown metric \"map\""), "{}", err(&o));
}

#[test]
fn route_fail_under() {
    let (cfg, data) = (ex("dsl/routes.json"), ex("dsl/outputs.jsonl"));
    let base = ["route", "--config", &cfg, "--data", &data];
    check_gates(
        &base,
        "all/exact_match=0.1",
        "all/exact_match=1.01",
        "qa/exact_match=1.01",
        "all/exact_match",
    );
}

#[test]
fn crb_eval_fail_under() {
    let bank = ex("crb/bank.jsonl");
    let base = [
        "crb",
        "eval",
        "--bank",
        &bank,
        "--predictor",
        "tier:mid",
        "--tokenizer-setup",
        "all_cl100k",
        "--json",
    ];
    check_gates(
        &base,
        "case_pass_rate_percent=1",
        // Bounds above the maximum (100.5) are refused now (exit 2): failing bounds in range.
        "case_pass_rate_percent=99.5",
        "combined_score_percent=99.5",
        "case_pass_rate_percent",
    );
}

/// A GQR build directory from the shipped example rows (ID rows and OOD rows).
fn example_build(dir: &Path) -> String {
    routeval_test_support::gqr::example_build(dir, &[])
}

#[test]
fn gqr_score_fail_under() {
    let d = tempfile::tempdir().unwrap();
    let b = example_build(d.path());
    let p = ex("gqr/predictions.jsonl");
    let base = ["gqr", "score", "--predictions", &p, "--build-dir", &b];
    check_gates(
        &base,
        "ood_accuracy=0.01",
        "gqr_score=0.999",
        "id_accuracy=0.999",
        "gqr_score",
    );
}

/// Issue 24: a bound in the other unit or outside the metric's range is a usage error (exit
/// 2, one stderr line naming the unit) — `case_pass_rate_percent=0.8` used to pass (75 ≥ 0.8).
#[test]
fn bounds_in_the_wrong_unit_are_refused() {
    let bank = ex("crb/bank.jsonl");
    let crb = [
        "crb",
        "eval",
        "--bank",
        &bank,
        "--predictor",
        "tier:mid",
        "--tokenizer-setup",
        "all_cl100k",
    ];
    let (q, r) = (ex("trec/qrels.txt"), ex("trec/run.txt"));
    let trec = ["trec", &q, &r];
    let c = ex("rag/cases.json");
    let rag = ["rag", &c];
    for (base, gate, unit) in [
        (&crb[..], "case_pass_rate_percent=0.8", "percent"),
        (&crb[..], "case_pass_rate_percent=150", "percent"),
        (&crb[..], "trajectory_pass_rate_percent=-5", "percent"),
        (&trec[..], "map=30", "fraction"),
        (&trec[..], "P_10=-0.1", "fraction"),
        (&trec[..], "num_ret=-1", "count"),
        (&rag[..], "mrr=75", "fraction"),
    ] {
        let mut a = base.to_vec();
        a.extend(["--fail-under", gate]);
        let o = routeval(&a);
        assert_eq!(code(&o), 2, "{gate}: {}", err(&o));
        let e = err(&o);
        let lines: Vec<&str> = e.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(lines.len(), 1, "{e}");
        assert!(lines[0].contains(gate) && lines[0].contains(unit), "{e}");
    }
    // In range and in the right unit: checked as before.
    let mut a = crb.to_vec();
    a.extend(["--fail-under", "case_pass_rate_percent=80"]);
    assert_eq!(code(&routeval(&a)), 3);
}

/// Issue 24: a partial GQR build keeps the metric's name (`gqr_score`, with `"partial": true`
/// and the missing sets), `--fail-under gqr_score` gates on it and says it is partial.
#[test]
fn gates_on_a_partial_gqr_score_say_so() {
    let d = tempfile::tempdir().unwrap();
    let b = example_build(d.path());
    let p = ex("gqr/predictions.jsonl");
    let base = [
        "gqr",
        "score",
        "--predictions",
        &p,
        "--build-dir",
        &b,
        "--json",
    ];
    let o = routeval(&base);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["complete"], false, "the example build lacks sets");
    assert_eq!(v["partial"], true);
    assert!(v["gqr_score"].is_number(), "{v}");
    assert!(v.get("partial_gqr_score").is_none());
    assert!(!v["missing_sets"].as_array().unwrap().is_empty());
    let mut a = base.to_vec();
    a.extend(["--fail-under", "gqr_score=0.01"]);
    let o = routeval(&a);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        err(&o)
            .contains("note: --fail-under gqr_score=0.01 checked a PARTIAL score, missing sets: "),
        "{}",
        err(&o)
    );
    let mut a = base.to_vec();
    a.extend(["--fail-under", "gqr_score=0.999"]);
    let o = routeval(&a);
    assert_eq!(code(&o), 3);
    assert!(
        err(&o).contains("[a PARTIAL score, missing sets: "),
        "{}",
        err(&o)
    );
}

/// Issue 24: 1-row GQR sets got a `[1, 1]` interval with no warning; each set's interval is
/// now named degenerate in JSON (`ci.per_set_degenerate`) and text.
#[test]
fn gqr_one_row_set_intervals_are_named_degenerate() {
    let d = tempfile::tempdir().unwrap();
    let b = example_build(d.path());
    let p = ex("gqr/predictions.jsonl");
    let base = [
        "gqr",
        "score",
        "--predictions",
        &p,
        "--build-dir",
        &b,
        "--ci",
        "0.95",
    ];
    let mut a = base.to_vec();
    a.push("--json");
    let o = routeval(&a);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let deg = &v["ci"]["per_set_degenerate"];
    assert!(
        deg["jigsaw"].as_str().unwrap().contains("1 resampled unit"),
        "{v}"
    );
    let text = String::from_utf8_lossy(&routeval(&base).stdout).into_owned();
    assert!(
        text.contains("set jigsaw: CI degenerate: 1 resampled unit"),
        "{text}"
    );
}
