//! `routeval gqr` on a complete synthetic build (every registry source present, generated
//! here): complete scores are named the GQR / GQR-unseen score, v2 and dev exports.

use crate::mirror;

use routeval_bench_data::gqr::build::{BuildOptions, MirrorDir, build_all};
use routeval_bench_data::gqr::registry::Registry;
use routeval_bench_data::gqr::store::write_build;
use std::path::Path;
use std::process::Command;

fn routeval(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn lines(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn complete_build_gives_named_scores() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("mirror");
    mirror::make_mirror(&m);
    let reg = Registry::load().unwrap();
    let opts = BuildOptions {
        dataset_size: 2100,
        ..BuildOptions::default()
    };
    let build = build_all(&reg, &mut MirrorDir { root: m }, &opts).unwrap();
    assert!(build.missing.is_empty(), "{:?}", build.missing);
    let dir = tmp.path().join("build");
    write_build(&build, &dir).unwrap();
    let d = dir.to_str().unwrap();
    let out = |n: &str| tmp.path().join(n);
    for (split, file) in [
        ("id_test", "id.jsonl"),
        ("ood_test", "ood.jsonl"),
        ("unseen_id", "unseen.jsonl"),
        ("dev", "dev.jsonl"),
    ] {
        let (code, _, err) = routeval(&[
            "gqr",
            "export",
            "--split",
            split,
            "--build-dir",
            d,
            "-o",
            out(file).to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{split}: {err}");
    }
    let (code, _, err) = routeval(&[
        "gqr",
        "export",
        "--split",
        "train",
        "--version",
        "v2",
        "--build-dir",
        d,
        "-o",
        out("train_v2.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let dev = lines(&out("dev.jsonl"));
    assert_eq!(dev.len(), 2000);
    assert!(dev[0]["id"].as_str().unwrap().starts_with("dev_train/"));
    assert!(dev[1999]["id"].as_str().unwrap().starts_with("dev_eval/"));
    let v2 = lines(&out("train_v2.jsonl"));
    let bg = v2.iter().filter(|r| r["label"] == 3).count();
    assert_eq!(bg, (4032f64 / 3.0).round() as usize);
    assert_eq!(v2.len(), 4032 + bg);
    // Perfect predictions except two ID rows: a complete, named GQR score.
    let id = lines(&out("id.jsonl"));
    let ood = lines(&out("ood.jsonl"));
    let mut preds = String::new();
    for (i, r) in id.iter().chain(&ood).enumerate() {
        let l = if i < 2 {
            3
        } else {
            r["label"].as_i64().unwrap()
        };
        preds.push_str(&format!("{{\"id\": {}, \"label\": {l}}}\n", r["id"]));
    }
    let pf = out("preds.jsonl");
    std::fs::write(&pf, preds).unwrap();
    let (code, table, err) = routeval(&[
        "gqr",
        "score",
        "--predictions",
        pf.to_str().unwrap(),
        "--build-dir",
        d,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains("\n  GQR score") && !table.contains("PARTIAL"),
        "{table}"
    );
    assert!(table.contains("OOD accuracy (mean of 7 sets)"), "{table}");
    let (code, js, err) = routeval(&[
        "gqr",
        "score",
        "--predictions",
        pf.to_str().unwrap(),
        "--build-dir",
        d,
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&js).unwrap();
    assert_eq!(v["complete"], true);
    assert!(v.get("partial_gqr_score").is_none() && v.get("missing_sets").is_none());
    let ida = (id.len() - 2) as f64 / id.len() as f64;
    // Floats parse exactly (`float_roundtrip`): bit-for-bit comparisons.
    assert_eq!(v["id_accuracy"].as_f64().unwrap().to_bits(), ida.to_bits());
    assert_eq!(v["ood_accuracy"], 1.0);
    assert_eq!(
        v["gqr_score"].as_f64().unwrap().to_bits(),
        (2.0 * ida * 1.0 / (ida + 1.0)).to_bits()
    );
    assert_eq!(v["ood_per_dataset"].as_array().unwrap().len(), 7);
    // GQR-unseen, complete.
    let unseen = lines(&out("unseen.jsonl"));
    let mut preds = String::new();
    for r in unseen.iter().chain(&ood) {
        preds.push_str(&format!(
            "{{\"id\": {}, \"label\": {}}}\n",
            r["id"], r["label"]
        ));
    }
    std::fs::write(&pf, preds).unwrap();
    let (code, js, err) = routeval(&[
        "gqr",
        "score",
        "--predictions",
        pf.to_str().unwrap(),
        "--build-dir",
        d,
        "--unseen",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&js).unwrap();
    assert_eq!(
        (v["complete"].clone(), v["gqr_unseen_score"].clone()),
        (serde_json::json!(true), serde_json::json!(1.0))
    );
    assert_eq!(v["unseen_id_per_dataset"].as_object().unwrap().len(), 9);
    // The keyword router as a persistent process on the whole build.
    let router = format!(
        "sh {}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/gqr/keyword_router.sh")
            .display()
    );
    let (code, table, err) = routeval(&["gqr", "score", "--cmd", &router, "--build-dir", d]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains("router latency per text") && table.contains("\n  GQR score"),
        "{table}"
    );
}
