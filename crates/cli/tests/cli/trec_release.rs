//! `--trec-eval 10.0|9.0.8`: the CLI can follow either release, as the Python package does
//! (`routeval.trec`'s `trec_eval_version`), so the two faces can be made to agree.

use std::process::Command;

fn routeval(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .output()
        .expect("run routeval")
}

#[test]
fn releases_differ_where_trec_eval_did_and_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("qrels");
    let r = dir.path().join("run");
    // 7 relevant documents: recall 0.2 is 1.4 documents, which 10.0 rounds to 1 (+0.5) and
    // 9.0.8 to 2 (+0.9).
    let mut qrels = String::new();
    for i in 0..7 {
        qrels.push_str(&format!("q1 0 R{i} 1\n"));
    }
    std::fs::write(&q, qrels).unwrap();
    // Relevant at ranks 1, 5, 6, ...: precision at the first relevant is 1, at the second 2/5.
    let order = ["R0", "N1", "N2", "N3", "R1", "R2", "N4", "R3"];
    let run: String = order
        .iter()
        .enumerate()
        .map(|(i, d)| format!("q1 Q0 {d} {} {} t\n", i + 1, 10 - i))
        .collect();
    std::fs::write(&r, run).unwrap();
    let (q, r) = (q.display().to_string(), r.display().to_string());
    let value = |release: &str| -> f64 {
        let out = routeval(&[
            "trec",
            "--trec-eval",
            release,
            "-m",
            "iprec_at_recall.0.20",
            "--json",
            &q,
            &r,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["all"]["iprec_at_recall_0.20"].as_f64().unwrap()
    };
    let ten = value("10.0");
    let nine = value("9.0.8");
    assert_eq!(ten, 1.0);
    assert!((nine - 0.5).abs() < 1e-12, "{nine}");
    // The default is 10.0.
    let out = routeval(&["trec", "-m", "iprec_at_recall.0.20", "--json", &q, &r]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["all"]["iprec_at_recall_0.20"].as_f64(), Some(ten));
    // 9.0.8 has no rbp; an unknown release is a usage error.
    for args in [
        vec!["trec", "--trec-eval", "9.0.8", "-m", "rbp", &q, &r],
        vec!["trec", "--trec-eval", "8", &q, &r],
        vec!["compare", "--trec-eval", "9.0.8", "-m", "unj", &q, &r, &r],
    ] {
        let out = routeval(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
