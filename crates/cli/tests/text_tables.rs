//! The plain-text tables of `crb eval` and `gqr score`, rendered from typed library values
//! (`routeval_routing_scores::crb::table::EvalTable`, `gqr::report::ScoreReport`), pinned
//! byte for byte on the shipped examples (insta snapshots taken from the CLI before the
//! tables moved into the libraries, so the move is checked to change no byte).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// stdout of a successful run in the repository root, with an empty data cache.
fn stdout(args: &[&str]) -> String {
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .current_dir(root())
        .env("ROUTEVAL_CACHE_DIR", cache.path())
        .env_remove("ROUTEVAL_TOKENIZERS")
        .env_remove("ROUTEVAL_PROGRESS")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A GQR build of the shipped example rows (ID test + OOD sets), with `missing` in its
/// manifest (`(set, reason)`).
fn gqr_build(dir: &Path, missing: &[(&str, &str)]) -> String {
    routeval_test_support::gqr::example_build(dir, missing)
}

#[test]
fn crb_eval_tables() {
    let bank = "examples/data/crb/bank.jsonl";
    let file = stdout(&[
        "crb",
        "eval",
        "--bank",
        bank,
        "--predictor",
        "file:examples/data/crb/predictions.json",
        "--tokenizer-setup",
        "all_cl100k",
    ]);
    insta::assert_snapshot!("crb_eval_file", file);
    // Predictor errors counted in the header.
    let errors = stdout(&[
        "crb",
        "eval",
        "--bank",
        bank,
        "--predictor",
        "cmd:n=0; while read -r l; do n=$((n+1)); if [ $((n % 3)) = 0 ]; then echo 'error: x'; else echo high; fi; done",
        "--tokenizer-setup",
        "all_cl100k",
    ]);
    insta::assert_snapshot!("crb_eval_errors", errors);
}

#[test]
fn gqr_score_tables() {
    let d = tempfile::tempdir().unwrap();
    let plain = d.path().join("plain");
    let gated = d.path().join("gated");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::create_dir_all(&gated).unwrap();
    let plain = gqr_build(&plain, &[]);
    let gated = gqr_build(
        &gated,
        &[
            ("dkhate", "gated on the hub (needs HF_TOKEN)"),
            ("olid", "fetch failed"),
        ],
    );
    let preds = "examples/data/gqr/predictions.jsonl";
    let args = |b: &str, extra: &[&str]| -> String {
        let mut a = vec!["gqr", "score", "--predictions", preds, "--build-dir", b];
        a.extend_from_slice(extra);
        stdout(&a)
    };
    insta::assert_snapshot!("gqr_score_partial", args(&plain, &[]));
    insta::assert_snapshot!("gqr_score_gated", args(&gated, &[]));
    insta::assert_snapshot!("gqr_score_unseen", args(&plain, &["--unseen"]));
    let json: serde_json::Value = serde_json::from_str(&args(&gated, &["--json"])).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "benchmark",
            "complete",
            // Issue 24: a partial score keeps its name and is flagged.
            "partial",
            "id_accuracy",
            "ood_accuracy",
            "gqr_score",
            "id",
            "ood_per_dataset",
            "missing_sets",
            "data"
        ]
    );
    assert_eq!(
        json["missing_sets"][2],
        serde_json::json!({"set": "dkhate", "reason": "gated on the hub (needs HF_TOKEN)"})
    );
}
