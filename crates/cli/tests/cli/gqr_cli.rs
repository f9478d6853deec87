//! `routeval gqr` end to end on the real offline sets (`$ROUTEVAL_SHARED/thirdparty/gqr`)
//! with the keyword router from `examples/gqr/`, plus bad-input handling.

use std::path::{Path, PathBuf};
use std::process::Command;

fn shared(test: &str) -> Option<PathBuf> {
    routeval_core::fixtures::shared_dir(test)
}

fn routeval(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .env("GQR_CACHE_DIR", "/nonexistent/routeval-test-cache")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn router() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/gqr/keyword_router.sh");
    assert!(p.is_file());
    format!("sh {}", p.display())
}

fn mirror(test: &str) -> Option<String> {
    let sh = shared(test)?;
    let m = sh.join("thirdparty/gqr");
    for f in [
        "banking77_test.csv",
        "mmlu_professional_law_test.csv",
        "webquestions_test.json",
    ] {
        assert!(m.join(f).is_file(), "missing shared file {f}");
    }
    Some(m.to_string_lossy().into_owned())
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn unseen_score_with_keyword_router_is_labelled_partial() {
    let Some(m) = mirror("unseen_score_with_keyword_router_is_labelled_partial") else {
        return;
    };
    let (code, out, err) =
        routeval(&["gqr", "score", "--cmd", &router(), "--unseen", "--from", &m]);
    assert_eq!(code, 0, "{err}");
    for want in [
        "banking77",
        "mmlu_professional_law",
        "\n  web_questions ",
        "PARTIAL GQR-unseen score",
        "missing sets (13)",
        "p50",
        "p99",
    ] {
        assert!(out.contains(want), "{want} not in:\n{out}");
    }
    assert!(
        !out.contains("\n  GQR-unseen score"),
        "a partial score is never named the score"
    );
    // One aligned accuracy column: every percentage ends in the same column.
    let ends: Vec<usize> = out
        .lines()
        .filter(|l| !l.contains("latency"))
        .filter_map(|l| l.find('%'))
        .collect();
    assert!(
        ends.len() >= 6 && ends.iter().all(|e| *e == ends[0]),
        "{out}"
    );
    // Names are quoted only when whitespace makes it necessary.
    assert!(
        out.contains("\"hate_speech_slovak \"") && !out.contains("\"jigsaw\""),
        "{out}"
    );
    let (code, out, err) = routeval(&[
        "gqr",
        "score",
        "--cmd",
        &router(),
        "--unseen",
        "--from",
        &m,
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["complete"], false);
    // Issue 24: the partial score keeps its name, flagged `"partial": true`.
    assert_eq!(v["partial"], true);
    assert!(v.get("partial_gqr_unseen_score").is_none());
    let s = v["gqr_unseen_score"].as_f64().unwrap();
    let (a, b) = (
        v["unseen_id_accuracy"].as_f64().unwrap(),
        v["ood_accuracy"].as_f64().unwrap(),
    );
    // The harmonic mean as GQR-Bench computes it, bit for bit (floats parse exactly).
    assert_eq!(s.to_bits(), ((2.0 * a) * b / (a + b)).to_bits(), "{s}");
    assert_eq!(v["missing_sets"].as_array().unwrap().len(), 13);
    assert_eq!(v["latency_ms"]["texts"], 4032);
    // The keyword router really routes: banking77 mostly to finance, web questions mostly OOD.
    assert!(v["unseen_id_per_dataset"]["banking77"].as_f64().unwrap() > 0.5);
    assert!(v["ood_per_dataset"]["web_questions"].as_f64().unwrap() > 0.8);
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn gqr_score_prints_per_set_accuracy_without_id_test() {
    let Some(m) = mirror("gqr_score_prints_per_set_accuracy_without_id_test") else {
        return;
    };
    let (code, out, err) = routeval(&["gqr", "score", "--cmd", &router(), "--from", &m]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\n  web_questions ")
            && out.contains("ID test set missing")
            && out.contains("PARTIAL GQR score"),
        "{out}"
    );
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn export_then_score_predictions_file() {
    let Some(m) = mirror("export_then_score_predictions_file") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let unseen = dir.path().join("unseen.jsonl");
    let ood = dir.path().join("ood.jsonl");
    for (split, out) in [("unseen_id", &unseen), ("ood_test", &ood)] {
        let out = out.to_str().unwrap();
        let (code, _, err) =
            routeval(&["gqr", "export", "--split", split, "--from", &m, "-o", out]);
        assert_eq!(code, 0, "{err}");
    }
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&unseen)
        .unwrap()
        .lines()
        .chain(std::fs::read_to_string(&ood).unwrap().lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2000 + 2032);
    assert_eq!(rows[0]["id"], "unseen_id/banking77/0");
    for k in ["id", "text", "label", "domain", "dataset"] {
        assert!(rows[0].get(k).is_some(), "{k}");
    }
    // Perfect predictions, one wrong OOD answer, one out-of-range label.
    let mut preds = String::new();
    for (i, r) in rows.iter().enumerate() {
        let label = match i {
            2000 => 1,
            2001 => 7,
            _ => r["label"].as_i64().unwrap(),
        };
        preds.push_str(&format!("{{\"id\": {}, \"label\": {label}}}\n", r["id"]));
    }
    let pf = dir.path().join("preds.jsonl");
    std::fs::write(&pf, &preds).unwrap();
    let p = pf.to_str().unwrap();
    let score = |extra: &[&str]| {
        let base = [
            "gqr",
            "score",
            "--predictions",
            p,
            "--unseen",
            "--from",
            m.as_str(),
        ];
        routeval(&[&base[..], extra].concat())
    };
    let (code, out, err) = score(&["--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["unseen_id_accuracy"], 1.0);
    // routeval writes floats shortest-round-trip and this crate's serde_json parses them
    // correctly rounded (`float_roundtrip`), so the value compares bit for bit.
    assert_eq!(
        v["ood_accuracy"].as_f64().unwrap().to_bits(),
        (2030.0f64 / 2032.0).to_bits(),
        "{}",
        v["ood_accuracy"]
    );
    // A missing prediction: exit 2, one line naming the file.
    let short: String = preds.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&pf, short).unwrap();
    let (code, _, err) = score(&[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no prediction for 1 of 4032 rows") && err.lines().count() == 1,
        "{err}"
    );
    // A bad JSON line: FILE:LINE.
    std::fs::write(&pf, "{\"id\": \"x\", \"label\": 1}\nnot json\n").unwrap();
    let (code, _, err) = score(&[]);
    assert_eq!(code, 2);
    assert!(err.contains("preds.jsonl:2: bad JSON"), "{err}");
}

#[test]
fn no_build_is_a_clear_error() {
    let (code, _, err) = routeval(&["gqr", "export", "--split", "id_test"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no GQR-Bench build here") && err.contains("routeval data fetch gqr"),
        "{err}"
    );
    let (code, _, err) = routeval(&["gqr", "score", "--cmd", "cat"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn router_writing_two_lines_per_input_is_a_desync_error() {
    let Some(m) = mirror("router_writing_two_lines_per_input_is_a_desync_error") else {
        return;
    };
    let (code, out, err) = routeval(&[
        "gqr",
        "score",
        "--cmd",
        "while read l; do echo 3; echo 0; done",
        "--unseen",
        "--from",
        &m,
    ]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("wrote 4032 more non-empty line(s) than the 4032 inputs")
            && err.contains("desynchronised")
            && err.trim().lines().count() == 1,
        "{err}"
    );
}

/// A tiny build directory (two ID rows, one OOD row) for error-path tests without shared data.
fn tiny_build(dir: &Path, gold_label: &str) {
    let manifest = r#"{"build": "gqr", "registry_blake3": "-", "files": [
        {"path": "id_test.jsonl", "rows": 2, "blake3": "-"},
        {"path": "ood_test.jsonl", "rows": 1, "blake3": "-"}],
        "missing": [], "datasets": [], "warnings": []}"#;
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    let id = format!(
        "{{\"id\": \"id_test/law/0\", \"text\": \"a contract\", \"label\": 0, \"domain\": \"law\", \"dataset\": \"law\"}}\n\
         {{\"id\": \"id_test/finance/0\", \"text\": \"a loan\", \"label\": {gold_label}, \"domain\": \"finance\", \"dataset\": \"finance\"}}\n"
    );
    std::fs::write(dir.join("id_test.jsonl"), id).unwrap();
    let ood = "{\"id\": \"ood_test/jigsaw/0\", \"text\": \"hi\", \"label\": 3, \"domain\": \"ood\", \"dataset\": \"jigsaw\"}\n";
    std::fs::write(dir.join("ood_test.jsonl"), ood).unwrap();
}

/// A temporary directory holding a [`tiny_build`] in `build/`.
fn tiny_build_dir(gold_label: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let build = dir.path().join("build");
    std::fs::create_dir_all(&build).unwrap();
    tiny_build(&build, gold_label);
    (dir, build)
}

/// A non-integer label (predicted in a file, answered by a router, or gold in the build) is one
/// error line naming FILE:LINE (or the router's output line), exit 2.
#[test]
fn non_integer_label_names_file_and_line() {
    let (dir, build) = tiny_build_dir("1");
    let b = build.to_str().unwrap();
    let pf = dir.path().join("preds.jsonl");
    std::fs::write(
        &pf,
        "{\"id\": \"ood_test/jigsaw/0\", \"label\": 3}\n\
         {\"id\": \"id_test/finance/0\", \"label\": 3.7}\n\
         {\"id\": \"id_test/law/0\", \"label\": 0}\n",
    )
    .unwrap();
    let p = pf.to_str().unwrap();
    let (code, out, err) = routeval(&["gqr", "score", "--predictions", p, "--build-dir", b]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("preds.jsonl:2: label 3.7 is not an integer")
            && err.contains("id_test/finance/0"),
        "{err}"
    );
    // The same label from a router: its output line.
    let (code, _, err) = routeval(&[
        "gqr",
        "score",
        "--cmd",
        "while read l; do echo 3.7; done",
        "--build-dir",
        b,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("output line 1: label 3.7 is not an integer") && err.lines().count() == 1,
        "{err}"
    );
    // A gold label 3.7 in the build: the split file and line.
    tiny_build(&build, "3.7");
    let (code, _, err) = routeval(&["gqr", "score", "--predictions", p, "--build-dir", b]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("id_test.jsonl:2:") && err.contains("3.7") && err.lines().count() == 1,
        "{err}"
    );
}

/// `--rows` and `--save-predictions` are written as every other output: atomically into a
/// regular file (the old one kept on failure), in place into a device or FIFO (never renamed
/// over: `/dev/null` stays a character device), never over an input.
#[test]
fn rows_and_saved_predictions_are_outputs_like_any_other() {
    use std::os::unix::fs::FileTypeExt;
    let (dir, build) = tiny_build_dir("1");
    let b = build.to_str().unwrap();
    // `gqr score` with a router answering 3 (out of domain) for every text, and `outputs`.
    let score = |outputs: &[&str]| {
        let args = [
            "gqr",
            "score",
            "--cmd",
            "while read l; do echo 3; done",
            "--build-dir",
            b,
        ];
        routeval(&[&args[..], outputs].concat())
    };
    let rows = dir.path().join("rows.jsonl");
    let (code, _, err) = score(&[
        "--rows",
        rows.to_str().unwrap(),
        "--save-predictions",
        "/dev/null",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&rows).unwrap().lines().count(), 3);
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {}", left.len());
    // Over an input: refused, the input untouched.
    let id = build.join("id_test.jsonl");
    let before = std::fs::read(&id).unwrap();
    let (code, _, err) = score(&["--rows", id.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(&id).unwrap(), before);
}
