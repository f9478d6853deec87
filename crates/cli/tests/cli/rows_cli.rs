//! Per-item results to compare later: `gqr score --rows`, `--save-predictions` (re-scored
//! with `--predictions` gives identical scores), and `rag` rows carrying each case's own `id`
//! and `meta`. All on shipped example data.

use serde_json::Value;
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

fn ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn router() -> String {
    format!(
        "sh {}",
        root().join("examples/gqr/keyword_router.sh").display()
    )
}

/// A GQR build directory from the shipped example rows.
fn example_build(dir: &Path) -> String {
    routeval_test_support::gqr::example_build(dir, &[])
}

#[test]
fn gqr_rows_and_saved_predictions_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let b = example_build(&d.path().join("b").tap_mkdir());
    let saved = d.path().join("saved.jsonl");
    let rows = d.path().join("rows.jsonl");
    let s = saved.to_str().unwrap();
    let r = rows.to_str().unwrap();
    let cmd = router();
    let live = ok(&routeval(&[
        "gqr",
        "score",
        "--cmd",
        &cmd,
        "--build-dir",
        &b,
        "--json",
        "--save-predictions",
        s,
        "--rows",
        r,
    ]));
    let again = ok(&routeval(&[
        "gqr",
        "score",
        "--predictions",
        s,
        "--build-dir",
        &b,
        "--json",
    ]));
    let strip = |t: &str| {
        let mut v: Value = serde_json::from_str(t).unwrap();
        v.as_object_mut().unwrap().remove("latency_ms");
        v
    };
    assert_eq!(
        strip(&live),
        strip(&again),
        "saved predictions re-score identically"
    );
    // One row per scored text, with the documented keys; correctness agrees with the score.
    let lines: Vec<Value> = std::fs::read_to_string(&rows)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 10);
    for l in &lines {
        let o = l.as_object().unwrap();
        let keys: Vec<&str> = o.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["id", "set", "label", "prediction", "correct", "latency_ms"]
        );
        assert_eq!(o["correct"], o["label"] == o["prediction"]);
        assert!(o["latency_ms"].as_f64().unwrap() >= 0.0);
    }
    let id_rows: Vec<&Value> = lines
        .iter()
        .filter(|l| l["id"].as_str().unwrap().starts_with("id_test/"))
        .collect();
    let acc = id_rows.iter().filter(|l| l["correct"] == true).count() as f64 / id_rows.len() as f64;
    let v: Value = serde_json::from_str(&live).unwrap();
    assert_eq!(v["id_accuracy"].as_f64().unwrap(), acc);
    // --rows with --predictions: latency is null.
    let r2 = d.path().join("rows2.jsonl");
    ok(&routeval(&[
        "gqr",
        "score",
        "--predictions",
        s,
        "--build-dir",
        &b,
        "--rows",
        r2.to_str().unwrap(),
    ]));
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&r2)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert!(first["latency_ms"].is_null());
    // Never over an input; --save-predictions needs --cmd.
    let o = routeval(&[
        "gqr",
        "score",
        "--predictions",
        s,
        "--build-dir",
        &b,
        "--rows",
        s,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = routeval(&[
        "gqr",
        "score",
        "--predictions",
        s,
        "--build-dir",
        &b,
        "--save-predictions",
        "x.jsonl",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

trait Mkdir {
    fn tap_mkdir(self) -> Self;
}
impl Mkdir for PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).unwrap();
        self
    }
}

#[test]
fn rag_rows_carry_id_and_meta() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("c.jsonl");
    std::fs::write(
        &f,
        r#"{"id": "q-1", "meta": {"team": "a", "n": 1}, "query": "q", "retrieved": ["a"], "relevant": ["a"]}
{"id": 7, "query": "r", "retrieved": ["b"], "relevant": ["a"]}
{"query": "s, with comma", "retrieved": ["a"], "relevant": ["a"]}
"#,
    )
    .unwrap();
    let fp = f.to_str().unwrap();
    let jsonl = ok(&routeval(&["rag", fp, "--format", "jsonl"]));
    let rows: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[0]["id"], "q-1");
    assert_eq!(rows[0]["meta"]["team"], "a");
    assert_eq!(rows[1]["id"], 7);
    assert!(rows[1]["meta"].is_null() && rows[2]["id"].is_null());
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys[..2], ["index", "id"]);
    assert_eq!(keys.last(), Some(&"meta"));
    let csv = ok(&routeval(&["rag", fp, "--format", "csv"]));
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("index,id,query,") && header.ends_with(",failures,failure_reasons,meta"),
        "{header}"
    );
    assert!(lines.next().unwrap().starts_with("0,q-1,q,"));
    assert!(lines.next().unwrap().starts_with("1,7,r,"));
    // Without ids or meta the columns are the reference's.
    let plain = ok(&routeval(&[
        "rag",
        &ex("rag/cases.json"),
        "--format",
        "csv",
    ]));
    assert!(plain.starts_with("index,query,n_retrieved,"));
}
