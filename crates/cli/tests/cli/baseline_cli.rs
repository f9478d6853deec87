//! Two routers, paired (issue 11 item 3): `gqr score --baseline PREDICTIONS`, `crb eval
//! --baseline-predictor SPEC` and `rag CASES --baseline CASES2`. The expected numbers are
//! computed here independently of the product: discordant pairs counted from the files,
//! McNemar p-values from the exact two-sided binomial formula (= `scipy.stats.binomtest(b,
//! b + c, 0.5)`), deltas from two separate single-router runs.

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

fn run(args: &[&str], threads: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap()
}

fn json(args: &[&str], threads: &str) -> Value {
    let o = run(args, threads);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Two-sided exact binomial test with p = 1/2 (`scipy.stats.binomtest(k, n, 0.5)`): by
/// symmetry 2·P(X ≤ min(k, n−k)), capped at 1; 1 when n = 0. Exact in rationals for n ≤ 60.
fn binom_half(k: u64, n: u64) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let m = k.min(n - k);
    if 2 * m == n {
        return 1.0;
    }
    let mut c: u128 = 1; // C(n, 0)
    let mut tail: u128 = 0;
    for i in 0..=m {
        if i > 0 {
            c = c * (n - i + 1) as u128 / i as u128;
        }
        tail += c;
    }
    (2.0 * tail as f64 / 2f64.powi(n as i32)).min(1.0)
}

#[test]
fn binom_half_matches_known_scipy_values() {
    // scipy.stats.binomtest(2, 3, 0.5).pvalue == 1.0; (0, 10) == 2 / 1024; (3, 12) == 0.146
    assert_eq!(binom_half(2, 3), 1.0);
    assert_eq!(binom_half(0, 10), 2.0 / 1024.0);
    assert!((binom_half(3, 12) - 0.1459960937500).abs() < 1e-15);
}

/// A GQR build directory with `n_id` ID rows (labels 0..2 cycling) and three OOD sets.
fn gqr_build(dir: &Path, n_id: usize, n_ood: usize) -> Vec<(String, String, i64)> {
    let mut rows = Vec::new();
    let (mut id, mut ood) = (String::new(), String::new());
    let domains = ["law", "finance", "healthcare"];
    for i in 0..n_id {
        let label = (i % 3) as i64;
        let set = domains[i % 3];
        let rid = format!("id_test/{set}/{i}");
        id.push_str(&format!(
            "{{\"id\": \"{rid}\", \"text\": \"q {i}\", \"label\": {label}, \"domain\": \"{set}\", \"dataset\": \"{set}\"}}\n"
        ));
        rows.push((rid, "id_test".to_string(), label));
    }
    for set in ["jigsaw", "olid", "web_questions"] {
        for i in 0..n_ood {
            let rid = format!("ood_test/{set}/{i}");
            ood.push_str(&format!(
                "{{\"id\": \"{rid}\", \"text\": \"o {i}\", \"label\": 3, \"domain\": \"ood\", \"dataset\": \"{set}\"}}\n"
            ));
            rows.push((rid, set.to_string(), 3));
        }
    }
    let manifest = format!(
        r#"{{"build": "gqr", "registry_blake3": "-", "files": [
        {{"path": "id_test.jsonl", "rows": {n_id}, "blake3": "-"}},
        {{"path": "ood_test.jsonl", "rows": {}, "blake3": "-"}}],
        "missing": [], "datasets": [], "warnings": []}}"#,
        3 * n_ood
    );
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    std::fs::write(dir.join("id_test.jsonl"), id).unwrap();
    std::fs::write(dir.join("ood_test.jsonl"), ood).unwrap();
    rows
}

/// Predictions: row `i` correct unless `wrong(i)` (then label + 1 mod 4).
fn write_preds(
    path: &Path,
    rows: &[(String, String, i64)],
    wrong: impl Fn(usize) -> bool,
) -> Vec<bool> {
    let mut s = String::new();
    let mut ok = Vec::new();
    for (i, (id, _, label)) in rows.iter().enumerate() {
        let w = wrong(i);
        let p = if w { (label + 1) % 4 } else { *label };
        s.push_str(&format!("{{\"id\": \"{id}\", \"label\": {p}}}\n"));
        ok.push(!w);
    }
    std::fs::write(path, s).unwrap();
    ok
}

#[test]
fn gqr_score_baseline_mcnemar_per_set_and_paired_score_delta() {
    let d = tempfile::tempdir().unwrap();
    let rows = gqr_build(d.path(), 90, 40);
    let run_p = d.path().join("run.jsonl");
    let base_p = d.path().join("base.jsonl");
    // The run is wrong on every 7th row; the baseline on every 3rd row and every 5th.
    let run_ok = write_preds(&run_p, &rows, |i| i % 7 == 0);
    let base_ok = write_preds(&base_p, &rows, |i| i % 3 == 0 || i % 5 == 1);
    let b = d.path().to_str().unwrap();
    let (rp, bp) = (run_p.to_str().unwrap(), base_p.to_str().unwrap());
    let args = [
        "gqr",
        "score",
        "--predictions",
        rp,
        "--baseline",
        bp,
        "--build-dir",
        b,
        "--json",
        "--bootstrap",
        "400",
        "--seed",
        "3",
    ];
    let one = json(&args, "1");
    assert_eq!(one, json(&args, "3"), "thread count changed the output");
    let cmp = &one["baseline"];
    assert_eq!(cmp["predictions"], bp);
    assert_eq!(cmp["level"], 0.95);
    assert_eq!(cmp["replicates"], 400);
    // Per set: discordant pairs and the exact McNemar p-value.
    let sets = cmp["sets"].as_array().unwrap();
    let names: Vec<&str> = sets.iter().map(|s| s["set"].as_str().unwrap()).collect();
    assert_eq!(names, ["id_test", "jigsaw", "olid", "web_questions"]);
    let mut raw = Vec::new();
    for s in sets {
        let set = s["set"].as_str().unwrap();
        let idx: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].1 == set).collect();
        let bb = idx.iter().filter(|&&i| run_ok[i] && !base_ok[i]).count() as u64;
        let cc = idx.iter().filter(|&&i| !run_ok[i] && base_ok[i]).count() as u64;
        assert_eq!(s["rows"], idx.len() as u64);
        assert_eq!(s["mcnemar"]["b"], bb, "{set}");
        assert_eq!(s["mcnemar"]["c"], cc, "{set}");
        let p = binom_half(bb, bb + cc);
        let got = s["mcnemar"]["p_value"].as_f64().unwrap();
        assert!(
            (got - p).abs() <= 1e-12 * p.max(1e-300),
            "{set}: {got} vs {p}"
        );
        let acc = |ok: &[bool]| idx.iter().filter(|&&i| ok[i]).count() as f64 / idx.len() as f64;
        let delta = acc(&run_ok) - acc(&base_ok);
        assert!((s["delta"].as_f64().unwrap() - delta).abs() < 1e-12);
        raw.push(p);
    }
    // Holm over the sets (statsmodels' multipletests: step-down, monotone, capped at 1).
    let mut order: Vec<usize> = (0..raw.len()).collect();
    order.sort_by(|&x, &y| raw[x].total_cmp(&raw[y]));
    let m = raw.len();
    let mut holm = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * raw[i]).min(1.0));
        holm[i] = running;
    }
    for (s, h) in sets.iter().zip(&holm) {
        assert!((s["p_adjusted"].as_f64().unwrap() - h).abs() < 1e-12);
    }
    // Score deltas equal the difference of two separate runs, inside their paired CIs.
    let single = |p: &str| {
        json(
            &[
                "gqr",
                "score",
                "--predictions",
                p,
                "--build-dir",
                b,
                "--json",
            ],
            "2",
        )
    };
    let (r, s) = (single(rp), single(bp));
    let metrics = cmp["metrics"].as_array().unwrap();
    let names: Vec<&str> = metrics
        .iter()
        .map(|m| m["metric"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["id_accuracy", "ood_accuracy", "gqr_score"]);
    for m in metrics {
        let k = m["metric"].as_str().unwrap();
        // This build lacks OOD sets: the score keeps its name (flagged `"partial": true`).
        let get = |v: &Value| v.get(k).and_then(Value::as_f64).unwrap();
        let (rv, sv) = (get(&r), get(&s));
        assert!((m["value"].as_f64().unwrap() - rv).abs() < 1e-12, "{k}");
        assert!((m["baseline"].as_f64().unwrap() - sv).abs() < 1e-12, "{k}");
        let delta = m["delta"].as_f64().unwrap();
        assert!((delta - (rv - sv)).abs() < 1e-12, "{k}");
        let ci = m["ci"].as_array().unwrap();
        let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        assert!(
            lo <= delta + 1e-12 && delta <= hi + 1e-12,
            "{k}: {delta} not in [{lo}, {hi}]"
        );
        assert!(lo < hi, "{k}: a degenerate interval [{lo}, {hi}]");
    }
    // The run's own report is unchanged by --baseline.
    let mut without = one.clone();
    without.as_object_mut().unwrap().remove("baseline");
    assert_eq!(without, r);
    // The table shows the comparison.
    let o = run(
        &args[..args.len() - 4]
            .iter()
            .copied()
            .filter(|a| *a != "--json")
            .collect::<Vec<_>>(),
        "2",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&format!("vs baseline {bp}")), "{text}");
    assert!(text.contains("McNemar"), "{text}");
}

#[test]
fn gqr_score_baseline_identical_router_has_no_difference() {
    let d = tempfile::tempdir().unwrap();
    let rows = gqr_build(d.path(), 30, 10);
    let p = d.path().join("p.jsonl");
    let q = d.path().join("q.jsonl");
    write_preds(&p, &rows, |i| i % 4 == 0);
    write_preds(&q, &rows, |i| i % 4 == 0);
    let v = json(
        &[
            "gqr",
            "score",
            "--predictions",
            p.to_str().unwrap(),
            "--baseline",
            q.to_str().unwrap(),
            "--build-dir",
            d.path().to_str().unwrap(),
            "--json",
        ],
        "2",
    );
    for s in v["baseline"]["sets"].as_array().unwrap() {
        assert_eq!(s["mcnemar"]["b"], 0);
        assert_eq!(s["mcnemar"]["c"], 0);
        assert_eq!(s["mcnemar"]["p_value"], 1.0);
        assert_eq!(s["delta"], 0.0);
    }
    for m in v["baseline"]["metrics"].as_array().unwrap() {
        assert_eq!(m["delta"], 0.0);
        assert_eq!(m["ci"], serde_json::json!([0.0, 0.0]));
    }
}

#[test]
fn gqr_score_baseline_missing_rows_and_bad_labels_are_errors() {
    let d = tempfile::tempdir().unwrap();
    let rows = gqr_build(d.path(), 6, 2);
    let p = d.path().join("p.jsonl");
    write_preds(&p, &rows, |_| false);
    // A baseline without a prediction for some rows: exit 2 naming the file.
    let q = d.path().join("short.jsonl");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&q, text.lines().skip(1).collect::<Vec<_>>().join("\n")).unwrap();
    let b = d.path().to_str().unwrap();
    let o = run(
        &[
            "gqr",
            "score",
            "--predictions",
            p.to_str().unwrap(),
            "--baseline",
            q.to_str().unwrap(),
            "--build-dir",
            b,
        ],
        "1",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("short.jsonl: no prediction for 1 of 12 rows"),
        "{err}"
    );
    // A non-integer label in the baseline names its line.
    let r = d.path().join("bad.jsonl");
    std::fs::write(&r, text.replacen("\"label\": 0}", "\"label\": 0.5}", 1)).unwrap();
    let o = run(
        &[
            "gqr",
            "score",
            "--predictions",
            p.to_str().unwrap(),
            "--baseline",
            r.to_str().unwrap(),
            "--build-dir",
            b,
        ],
        "1",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.jsonl:1:"), "{err}");
    // --rows refuses to overwrite the baseline.
    let o = run(
        &[
            "gqr",
            "score",
            "--predictions",
            p.to_str().unwrap(),
            "--baseline",
            q.to_str().unwrap(),
            "--rows",
            q.to_str().unwrap(),
            "--build-dir",
            b,
        ],
        "1",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("refusing to overwrite an input"));
}

/// Gold tier ids of the example bank, in file order.
fn bank_gold() -> Vec<u64> {
    std::fs::read_to_string(ex("crb/bank.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["target_tier_id"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

fn crb(predictor: &str, extra: &[&str]) -> Value {
    let bank = ex("crb/bank.jsonl");
    let mut args = vec![
        "crb",
        "eval",
        "--bank",
        &bank,
        "--predictor",
        predictor,
        "--tokenizer-setup",
        "all_cl100k",
        "--json",
    ];
    args.extend_from_slice(extra);
    json(&args, "2")
}

#[test]
fn crb_eval_baseline_predictor_paired_deltas_and_case_pass_mcnemar() {
    let extra = [
        "--baseline-predictor",
        "tier:high",
        "--bootstrap",
        "300",
        "--seed",
        "5",
    ];
    let v = crb("tier:low", &extra);
    let cmp = &v["baseline"];
    assert_eq!(cmp["predictor"], "tier:high");
    assert_eq!(cmp["replicates"], 300);
    assert_eq!(cmp["seed"], 5);
    // tier:high passes every row (pred ≥ gold); tier:low only rows whose gold is low.
    let gold = bank_gold();
    let only_base = gold.iter().filter(|&&g| g > 0).count() as u64;
    let m = &cmp["case_pass_mcnemar"];
    assert_eq!(m["rows"], gold.len() as u64);
    assert_eq!(m["b"], 0);
    assert_eq!(m["c"], only_base);
    let p = binom_half(0, only_base);
    assert!((m["p_value"].as_f64().unwrap() - p).abs() <= 1e-12 * p);
    // Deltas equal the difference of two separate runs' scores_v2.
    let (r, s) = (
        crb("tier:low", &["--seed", "5"]),
        crb("tier:high", &["--seed", "5"]),
    );
    let metrics = cmp["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 5);
    for mm in metrics {
        let k = mm["metric"].as_str().unwrap();
        let (rv, sv) = (&r["scores_v2"][k], &s["scores_v2"][k]);
        let close = |a: &Value, b: &Value| match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() < 1e-9,
            _ => a.is_null() && b.is_null(),
        };
        assert!(close(&mm["value"], rv), "{k}: {} vs {rv}", mm["value"]);
        assert!(
            close(&mm["baseline"], sv),
            "{k}: {} vs {sv}",
            mm["baseline"]
        );
        if let (Some(rv), Some(sv)) = (rv.as_f64(), sv.as_f64()) {
            let delta = mm["delta"].as_f64().unwrap();
            assert!((delta - (rv - sv)).abs() < 1e-9, "{k}");
            let ci = mm["ci"].as_array().unwrap();
            let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
            assert!(
                lo <= delta + 1e-9 && delta <= hi + 1e-9,
                "{k}: {delta} not in [{lo}, {hi}]"
            );
        }
    }
    // The run's own summary is unchanged; same output on any number of threads.
    let mut without = v.clone();
    without.as_object_mut().unwrap().remove("baseline");
    assert!(
        without == r,
        "--baseline-predictor changed the run's own summary"
    );
    let bank = ex("crb/bank.jsonl");
    let mut args = vec![
        "crb",
        "eval",
        "--bank",
        &bank,
        "--predictor",
        "tier:low",
        "--tokenizer-setup",
        "all_cl100k",
        "--json",
    ];
    args.extend_from_slice(&extra);
    assert_eq!(json(&args, "1"), json(&args, "4"));
    // The table names the baseline and the McNemar counts.
    args.retain(|a| *a != "--json");
    let o = run(&args, "2");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("vs baseline tier:high"), "{text}");
    assert!(
        text.contains(&format!(
            "0 rows passed only by the run, {only_base} only by the baseline"
        )),
        "{text}"
    );
}

#[test]
fn crb_eval_bad_baseline_predictor_is_a_usage_error() {
    let bank = ex("crb/bank.jsonl");
    let o = run(
        &[
            "crb",
            "eval",
            "--bank",
            &bank,
            "--predictor",
            "gold",
            "--baseline-predictor",
            "tier:huge",
            "--tokenizer-setup",
            "all_cl100k",
        ],
        "1",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--baseline-predictor: unknown tier \"huge\""),
        "{err}"
    );
}

/// Twelve id-labelled cases; `shift` moves the relevant document down the ranking.
fn rag_cases(shift: impl Fn(usize) -> usize, with_ids: bool, reverse: bool) -> String {
    let mut cases: Vec<Value> = (0..12)
        .map(|i| {
            let mut retrieved: Vec<String> = (0..6).map(|r| format!("n{i}_{r}")).collect();
            let at = shift(i);
            if at < 6 {
                retrieved[at] = format!("rel{i}");
            }
            let mut c = serde_json::json!({
                "query": format!("question {i}"),
                "retrieved": retrieved,
                "relevant": [format!("rel{i}"), format!("other{i}")],
            });
            if with_ids {
                c["id"] = serde_json::json!(format!("q{i}"));
            }
            c
        })
        .collect();
    if reverse {
        cases.reverse();
    }
    serde_json::to_string(&cases).unwrap()
}

/// Per-case metric values of one file, by case id (or position), from `--format jsonl`.
fn rag_rows(path: &str) -> Vec<Value> {
    let o = run(&["rag", path, "--format", "jsonl"], "1");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// scipy.stats.permutation_test((x, y), mean difference, permutation_type="samples",
/// n_resamples=inf, alternative="two-sided") on the differences `d`: every sign flip.
fn fisher_exact_p(d: &[f64]) -> f64 {
    let n = d.len();
    let obs = d.iter().sum::<f64>() / n as f64;
    let gamma = (f64::EPSILON * 100.0 * obs).abs();
    let (mut less, mut greater) = (0u64, 0u64);
    for mask in 0u64..(1 << n) {
        let s: f64 = d
            .iter()
            .enumerate()
            .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
            .sum::<f64>()
            / n as f64;
        less += (s <= obs + gamma) as u64;
        greater += (s >= obs - gamma) as u64;
    }
    let total = (1u64 << n) as f64;
    (2.0 * (less.min(greater) as f64 / total)).min(1.0)
}

#[test]
fn rag_baseline_pairs_by_id_and_tests_each_metric() {
    let d = tempfile::tempdir().unwrap();
    let run_p = d.path().join("run.json");
    let base_p = d.path().join("base.json");
    // The run ranks the relevant document higher on most cases; the baseline file lists the
    // cases in reverse order (pairing is by id).
    std::fs::write(
        &run_p,
        rag_cases(|i| [0, 1, 0, 2, 0, 9, 1, 0, 0, 3, 0, 1][i], true, false),
    )
    .unwrap();
    std::fs::write(
        &base_p,
        rag_cases(|i| [2, 1, 4, 9, 1, 0, 3, 9, 2, 3, 5, 0][i], true, true),
    )
    .unwrap();
    let (rp, bp) = (run_p.to_str().unwrap(), base_p.to_str().unwrap());
    let args = [
        "rag",
        rp,
        "--baseline",
        bp,
        "--json",
        "--test",
        "fisher",
        "--correction",
        "none",
        "--bootstrap",
        "500",
        "--seed",
        "9",
    ];
    let v = json(&args, "1");
    assert_eq!(v, json(&args, "4"), "thread count changed the output");
    let cmp = &v["baseline"];
    assert_eq!(cmp["pairing"], "id");
    assert_eq!(cmp["cases"], 12);
    assert_eq!(cmp["test"], "fisher");
    assert_eq!(cmp["correction"], "none");
    // Per-case values from each file's own rows, paired by id.
    let (r, b) = (rag_rows(rp), rag_rows(bp));
    let by_id: std::collections::HashMap<String, &Value> = b
        .iter()
        .map(|row| (row["id"].as_str().unwrap().to_string(), row))
        .collect();
    let metrics = cmp["metrics"].as_object().unwrap();
    for name in [
        "precision_at_k",
        "recall_at_k",
        "mrr",
        "ndcg_at_k",
        "hit_rate",
    ] {
        let m = &metrics[name];
        let mut diffs = Vec::new();
        let (mut w, mut t, mut l) = (0, 0, 0);
        for row in &r {
            let other = by_id[row["id"].as_str().unwrap()];
            let (x, y) = (row[name].as_f64().unwrap(), other[name].as_f64().unwrap());
            diffs.push(x - y);
            if x > y {
                w += 1
            } else if x == y {
                t += 1
            } else {
                l += 1
            }
        }
        assert_eq!(m["cases"], 12, "{name}");
        assert_eq!(
            (m["wins"].as_u64(), m["ties"].as_u64(), m["losses"].as_u64()),
            (Some(w), Some(t), Some(l)),
            "{name}"
        );
        let delta = diffs.iter().sum::<f64>() / 12.0;
        assert!(
            (m["delta"].as_f64().unwrap() - delta).abs() < 1e-12,
            "{name}"
        );
        let p = fisher_exact_p(&diffs);
        let got = m["p_value"].as_f64().unwrap();
        assert!((got - p).abs() < 1e-9, "{name}: {got} vs {p}");
        assert_eq!(m["p_adjusted"], m["p_value"], "{name}: correction none");
        let ci = m["ci"].as_array().unwrap();
        let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        assert!(lo <= delta + 1e-12 && delta <= hi + 1e-12, "{name}");
        // The run's and the baseline's values are the reports' own means here (every case
        // produced every retrieval metric on both sides).
        let own =
            |rows: &[Value]| rows.iter().map(|x| x[name].as_f64().unwrap()).sum::<f64>() / 12.0;
        assert!((m["value"].as_f64().unwrap() - own(&r)).abs() < 1e-12);
        assert!((m["baseline"].as_f64().unwrap() - own(&b)).abs() < 1e-12);
    }
    // The reference's report is unchanged: the JSON is the plain report plus one member.
    let plain = json(&["rag", rp, "--json"], "1");
    let mut without = v.clone();
    without.as_object_mut().unwrap().remove("baseline");
    assert_eq!(without, plain);
    // Holm (the default) adjusts over the five metrics: never below the raw p-value.
    let holm = json(
        &["rag", rp, "--baseline", bp, "--json", "--test", "fisher"],
        "2",
    );
    for (name, m) in holm["baseline"]["metrics"].as_object().unwrap() {
        assert!(
            m["p_adjusted"].as_f64().unwrap() >= m["p_value"].as_f64().unwrap(),
            "{name}"
        );
    }
    // The text report ends with the comparison block.
    let o = run(&["rag", rp, "--baseline", bp], "1");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("vs baseline "), "{text}");
    assert!(text.contains("12 paired cases by id"), "{text}");
}

#[test]
fn rag_baseline_pairs_by_position_without_ids_and_refuses_mismatches() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a.json");
    let b = d.path().join("b.json");
    std::fs::write(&a, rag_cases(|i| i % 3, false, false)).unwrap();
    std::fs::write(&b, rag_cases(|i| i % 5, false, false)).unwrap();
    let (ap, bp) = (a.to_str().unwrap(), b.to_str().unwrap());
    let v = json(&["rag", ap, "--baseline", bp, "--json"], "2");
    assert_eq!(v["baseline"]["pairing"], "index");
    assert_eq!(v["baseline"]["test"], "t");
    assert_eq!(v["baseline"]["correction"], "holm");
    // Identical systems: every delta 0, p = 1, no significance.
    let same = json(&["rag", ap, "--baseline", ap, "--json"], "2");
    for (name, m) in same["baseline"]["metrics"].as_object().unwrap() {
        assert_eq!(m["delta"], 0.0, "{name}");
        assert_eq!(m["p_value"], 1.0, "{name}");
        assert_eq!(m["significant"], false, "{name}");
        assert_eq!(m["effect_size"], Value::Null, "{name}");
    }
    // Different counts without ids: an input error (exit 1) naming the baseline.
    let short = d.path().join("short.json");
    let mut cases: Vec<Value> = serde_json::from_str(&rag_cases(|i| i % 5, false, false)).unwrap();
    cases.pop();
    std::fs::write(&short, serde_json::to_string(&cases).unwrap()).unwrap();
    let o = run(&["rag", ap, "--baseline", short.to_str().unwrap()], "1");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--baseline") && err.contains("12 case(s) vs 11"),
        "{err}"
    );
    // Ids on both sides that do not match: an input error naming the first unpaired id.
    let x = d.path().join("x.json");
    let y = d.path().join("y.json");
    std::fs::write(&x, rag_cases(|i| i % 3, true, false)).unwrap();
    let mut cases: Vec<Value> = serde_json::from_str(&rag_cases(|i| i % 3, true, false)).unwrap();
    cases[4]["id"] = serde_json::json!("zz");
    std::fs::write(&y, serde_json::to_string(&cases).unwrap()).unwrap();
    let o = run(
        &[
            "rag",
            x.to_str().unwrap(),
            "--baseline",
            y.to_str().unwrap(),
        ],
        "1",
    );
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("\"q4\""), "{err}");
    // Usage errors: options of --baseline without it; --baseline with rows.
    let o = run(&["rag", ap, "--test", "t"], "1");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--test goes with --baseline"));
    let o = run(&["rag", ap, "--baseline", bp, "--format", "csv"], "1");
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["rag", "-", "--baseline", "-"], "1");
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["rag", ap, "--baseline", bp, "--test", "z"], "1");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid choice: 'z'"));
}
