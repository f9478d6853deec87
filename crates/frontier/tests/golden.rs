//! The frontier goldens (computed by RouterBench's `AIQ.py` and RouteLLM's `evaluate.py`
//! themselves): every case folder under `tests/golden/cases` (a copy of
//! `$ROUTEVAL_SHARED/golden/frontier/cases`) and, when `ROUTEVAL_SHARED` is set, every case of
//! the shared folder (new cases dropped there are picked up). Numbers must be bit-equal.

use routeval_frontier::ndch::{aiq, ndch_hull, ndch_routerbench};
use routeval_frontier::points::{
    NdchMethod, frontier_report, read_points, read_strong_share_points, strong_share_report,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn pairs(v: &[(f64, f64)]) -> Value {
    Value::Array(v.iter().map(|&(a, b)| json!([a, b])).collect())
}

/// Check one case folder; returns "rb" or "rl".
fn check_case(dir: &Path) -> &'static str {
    let name = dir.display().to_string();
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let points = std::fs::read(dir.join("points.jsonl")).unwrap();
    let case = dir.file_name().unwrap().to_string_lossy().into_owned();
    if case.starts_with("rb_") {
        let pts = read_points(points.as_slice(), &name).unwrap();
        for (method, aiq_key, ndch_key) in [
            (NdchMethod::Hull, "aiq_hull", "hull"),
            (
                NdchMethod::RouterBench,
                "aiq_routerbench",
                "ndch_routerbench",
            ),
        ] {
            let r = frontier_report(&pts, method);
            assert_eq!(
                r.systems.len(),
                expected["systems"].as_array().unwrap().len(),
                "{name}"
            );
            for (s, e) in r
                .systems
                .iter()
                .zip(expected["systems"].as_array().unwrap())
            {
                assert_eq!(s.system, e["system"].as_str().unwrap(), "{name}");
                assert_eq!(
                    pairs(&s.ndch),
                    e[ndch_key],
                    "{name} {} {ndch_key}",
                    s.system
                );
                assert_eq!(
                    s.aiq.to_bits(),
                    e[aiq_key].as_f64().unwrap().to_bits(),
                    "{name} {} {aiq_key}: {} vs {}",
                    s.system,
                    s.aiq,
                    e[aiq_key]
                );
            }
            assert_eq!(r.max_cost, expected["max_cost"].as_f64().unwrap(), "{name}");
            assert!(r.notes.is_empty(), "{name}: {:?}", r.notes);
        }
        // The two constructions agree on AIQ to rounding.
        let hulls: Vec<_> = expected["systems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let sys = s["system"].as_str().unwrap();
                let cq: Vec<(f64, f64)> = pts
                    .iter()
                    .filter(|p| p.system == sys)
                    .map(|p| (p.cost, p.quality))
                    .collect();
                (ndch_hull(&cq), ndch_routerbench(&cq).unwrap())
            })
            .collect();
        let (_, a1) = aiq(&hulls.iter().map(|h| h.0.clone()).collect::<Vec<_>>());
        let (_, a2) = aiq(&hulls.iter().map(|h| h.1.clone()).collect::<Vec<_>>());
        for (x, y) in a1.iter().zip(&a2) {
            assert!((x - y).abs() <= 1e-12, "{name}: {x} vs {y}");
        }
        "rb"
    } else {
        assert!(case.starts_with("rl_"), "{name}: unknown case kind");
        let pts = read_strong_share_points(points.as_slice(), &name).unwrap();
        let w = expected["weak"].as_f64().unwrap();
        let s = expected["strong"].as_f64().unwrap();
        let r = strong_share_report(&pts, w, s);
        assert_eq!(r.to_json(), expected, "{name}");
        "rl"
    }
}

fn check_folder(root: &Path) -> (usize, usize) {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    dirs.sort();
    let (mut rb, mut rl) = (0, 0);
    for d in &dirs {
        match check_case(d) {
            "rb" => rb += 1,
            _ => rl += 1,
        }
    }
    (rb, rl)
}

#[test]
fn in_repo_frontier_goldens() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cases");
    assert_eq!(check_folder(&root), (12, 12));
}

#[test]
fn shared_frontier_goldens() {
    let Some(dir) = routeval_core::fixtures::shared_dir("shared_frontier_goldens") else {
        return;
    };
    let root = dir.join("golden/frontier/cases");
    let n = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter(|e| e.as_ref().unwrap().path().join("expected.json").is_file())
        .count();
    let (rb, rl) = check_folder(&root);
    assert_eq!(rb + rl, n);
    assert!(rb >= 12 && rl >= 12, "{rb} rb cases, {rl} rl cases");
}
