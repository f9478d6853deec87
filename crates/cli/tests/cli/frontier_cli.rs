//! `routeval frontier`, `routeval crb sweep` and `routeval gqr sweep` end to end.
//!
//! * The frontier goldens (RouterBench `AIQ.py`, RouteLLM `evaluate.py`) through the binary:
//!   the in-repo copy and, with `ROUTEVAL_SHARED`, the shared folder; also with shuffled lines
//!   and from stdin.
//! * Every sweep point equals a separate `crb eval --predictor file:` / `gqr score
//!   --predictions` run on the thresholded predictions (the rule re-implemented here).
//! * Bad input: one `FILE:LINE: problem` line, exit 2; probabilities not summing to 1 noted once.

use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn routeval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .env("GQR_CACHE_DIR", "/nonexistent/routeval-test-cache")
        .output()
        .unwrap()
}

fn routeval_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn ok_json(out: &Output) -> Value {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

/// Exit 2 with exactly one stderr line (notes/warnings aside) containing every `want`.
fn assert_bad(out: &Output, wants: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    let errs: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errs.len(), 1, "{err}");
    for w in wants {
        assert!(errs[0].contains(w), "{w:?} not in {err}");
    }
    assert!(out.stdout.is_empty());
}

/// A small deterministic generator (SplitMix64) for random probabilities.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// `n` probabilities summing to about 1, rounded to 2 decimals (ties between rows).
    fn probs(&mut self, n: usize) -> Vec<f64> {
        let raw: Vec<f64> = (0..n).map(|_| self.next() + 0.05).collect();
        let s: f64 = raw.iter().sum();
        raw.iter()
            .map(|x| (x / s * 100.0).round() / 100.0)
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// routeval frontier

fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Run one golden case through the binary (file, shuffled copy, stdin); returns its kind.
fn check_frontier_case(dir: &Path, tmp: &Path) -> &'static str {
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let points = dir.join("points.jsonl");
    let p = points.to_str().unwrap();
    let text = std::fs::read_to_string(&points).unwrap();
    // A shuffled copy (reversed, then every other line first).
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.reverse();
    let shuffled: Vec<&str> = lines
        .iter()
        .step_by(2)
        .chain(lines.iter().skip(1).step_by(2))
        .copied()
        .collect();
    let shuffled_path = tmp.join(format!(
        "{}.jsonl",
        dir.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&shuffled_path, shuffled.join("\n") + "\n").unwrap();
    let sp = shuffled_path.to_str().unwrap();
    let name = dir.display().to_string();
    if dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("rl_")
    {
        let (w, s) = (expected["weak"].to_string(), expected["strong"].to_string());
        let args = [
            "frontier",
            p,
            "--strong-share",
            "--weak-quality",
            &w,
            "--strong-quality",
            &s,
            "--json",
        ];
        assert_eq!(ok_json(&routeval(&args)), expected, "{name}");
        let mut sargs = args;
        sargs[1] = "-";
        assert_eq!(
            ok_json(&routeval_stdin(&sargs, text.as_bytes())),
            expected,
            "{name} stdin"
        );
        // Systems keep first-appearance order, so compare per system after shuffling.
        let got = ok_json(&routeval(&[
            "frontier",
            sp,
            "--strong-share",
            "--weak-quality",
            &w,
            "--strong-quality",
            &s,
            "--json",
        ]));
        for e in expected["systems"].as_array().unwrap() {
            let g = got["systems"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["system"] == e["system"])
                .unwrap();
            assert_eq!(g, e, "{name} shuffled");
        }
        return "rl";
    }
    for (method, aiq_key, ndch_key) in [
        ("hull", "aiq_hull", "hull"),
        ("routerbench", "aiq_routerbench", "ndch_routerbench"),
    ] {
        for file in [p, sp] {
            let got = ok_json(&routeval(&["frontier", file, "--method", method, "--json"]));
            assert_eq!(got["max_cost"], expected["max_cost"], "{name} {method}");
            for e in expected["systems"].as_array().unwrap() {
                let g = got["systems"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|g| g["system"] == e["system"])
                    .unwrap_or_else(|| panic!("{name}: no system {}", e["system"]));
                assert_eq!(g["aiq"], e[aiq_key], "{name} {method} {file}");
                assert_eq!(g["ndch"], e[ndch_key], "{name} {method} {file}");
                // The Pareto set: undominated points, increasing cost, within the NDCH's
                // cost range only where they are on it.
                let par = g["pareto"].as_array().unwrap();
                assert!(!par.is_empty());
                for w in par.windows(2) {
                    assert!(
                        w[0][0].as_f64() < w[1][0].as_f64() && w[0][1].as_f64() < w[1][1].as_f64()
                    );
                }
            }
            if file == p {
                let order: Vec<&Value> = got["systems"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| &s["system"])
                    .collect();
                let want: Vec<&Value> = expected["systems"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| &s["system"])
                    .collect();
                assert_eq!(order, want, "{name}: first-appearance order");
            }
        }
    }
    "rb"
}

#[test]
fn frontier_cli_reproduces_the_goldens() {
    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../frontier/tests/golden/cases");
    let dirs = case_dirs(&root);
    let kinds: Vec<&str> = dirs
        .iter()
        .map(|d| check_frontier_case(d, tmp.path()))
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "rb").count(), 12);
    assert_eq!(kinds.iter().filter(|k| **k == "rl").count(), 12);
    if let Some(sh) = routeval_core::fixtures::shared_if_set("frontier_cli_reproduces_the_goldens")
    {
        let dirs = case_dirs(&sh.join("golden/frontier/cases"));
        assert!(dirs.len() >= 24, "{} shared cases", dirs.len());
        let mut n = 0;
        for d in &dirs {
            check_frontier_case(d, tmp.path());
            n += 1;
        }
        assert_eq!(n, dirs.len());
    }
}

#[test]
fn frontier_notes_and_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.jsonl");
    // A system RouterBench's algorithm cannot handle: the hull and a note.
    std::fs::write(
        &p,
        "{\"system\": \"a\", \"cost\": 1, \"quality\": 0.5, \"param\": 0.1}\n{\"system\": \"a\", \"cost\": 2, \"quality\": 0.7, \"param\": 0.2}\n",
    )
    .unwrap();
    let out = routeval(&[
        "frontier",
        p.to_str().unwrap(),
        "--method",
        "routerbench",
        "--json",
    ]);
    let j = ok_json(&out);
    assert_eq!(j["systems"][0]["ndch"], json!([[1.0, 0.5], [2.0, 0.7]]));
    assert_eq!(j["systems"][0]["pareto_params"], json!([0.1, 0.2]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("note: system \"a\": RouterBench's algorithm crashes"),
        "{err}"
    );
    for (body, want) in [
        (
            "{\"system\": \"a\", \"cost\": 1, \"quality\": 0.5}\n{\"system\": \"a\", \"cost\": \"x\", \"quality\": 0.5}\n",
            "p.jsonl:2: \"cost\" must be a finite number",
        ),
        (
            "{\"system\": \"a\", \"cost\": 1}\n",
            "p.jsonl:1: missing \"quality\"",
        ),
        (
            "{\"system\": \"a\", \"cost\": 1, \"quality\": 0.5\n",
            "p.jsonl:1: invalid JSON",
        ),
        ("", "p.jsonl: no points"),
    ] {
        std::fs::write(&p, body).unwrap();
        assert_bad(&routeval(&["frontier", p.to_str().unwrap()]), &[want]);
    }
    std::fs::write(
        &p,
        "{\"system\": \"a\", \"strong_pct\": 120, \"quality\": 0.5}\n",
    )
    .unwrap();
    assert_bad(
        &routeval(&[
            "frontier",
            p.to_str().unwrap(),
            "--strong-share",
            "--weak-quality",
            "0.2",
            "--strong-quality",
            "0.6",
        ]),
        &["p.jsonl:1: strong_pct 120 is outside [0, 100]"],
    );
    // Non-monotone quality: running maximum and a note.
    std::fs::write(
        &p,
        "{\"system\": \"a\", \"strong_pct\": 0, \"quality\": 0.2}\n{\"system\": \"a\", \"strong_pct\": 50, \"quality\": 0.5}\n{\"system\": \"a\", \"strong_pct\": 60, \"quality\": 0.4}\n{\"system\": \"a\", \"strong_pct\": 100, \"quality\": 0.6}\n",
    )
    .unwrap();
    let out = routeval(&[
        "frontier",
        p.to_str().unwrap(),
        "--strong-share",
        "--weak-quality",
        "0.2",
        "--strong-quality",
        "0.6",
        "--json",
    ]);
    let j = ok_json(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("running maximum"));
    // Target 0.4 lies between 0.2 (0 %) and the running maximum 0.5 (50 %).
    let cpt50 = j["systems"][0]["cpt"]["50"].as_f64().unwrap();
    assert!((cpt50 - 100.0 / 3.0).abs() < 1e-9, "{cpt50}");
    // Usage: --strong-share without the model qualities.
    let out = routeval(&["frontier", p.to_str().unwrap(), "--strong-share"]);
    assert_eq!(out.status.code(), Some(2));
}

// ---------------------------------------------------------------------------------------------
// routeval crb sweep

fn crb_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/crb")
}

/// The CommonRouterBench rule, written again here: the cheapest tier whose cumulative
/// probability reaches τ, else high.
fn crb_tier(p: &[f64], tau: f64) -> u8 {
    let mut c = 0.0;
    for (t, x) in p.iter().take(3).enumerate() {
        c += x;
        if c >= tau {
            return t as u8;
        }
    }
    3
}

fn bank_ids(bank: &Path) -> Vec<String> {
    std::fs::read_to_string(bank)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["id"].as_str().unwrap().to_string()
        })
        .collect()
}

/// `crb sweep` points equal `crb eval --predictor file:` on the thresholded predictions.
fn crb_sweep_matches_eval(bank: &Path, tok_args: &[&str], seed: u64, thresholds: &str) {
    let dir = tempfile::tempdir().unwrap();
    let ids = bank_ids(bank);
    let mut rng = Rng(seed);
    let probs: Vec<Vec<f64>> = ids.iter().map(|_| rng.probs(4)).collect();
    let scores = dir.path().join("scores.jsonl");
    let mut text = String::new();
    for (id, p) in ids.iter().zip(&probs) {
        text.push_str(&json!({"id": id, "tier_probs": p}).to_string());
        text.push('\n');
    }
    std::fs::write(&scores, text).unwrap();
    let b = bank.to_str().unwrap();
    let mut args = vec![
        "crb",
        "sweep",
        "--bank",
        b,
        "--scores",
        scores.to_str().unwrap(),
        "--thresholds",
        thresholds,
        "--json",
    ];
    args.extend(tok_args);
    let sweep = ok_json(&routeval(&args));
    let points = sweep["points"].as_array().unwrap();
    assert!(points.len() >= 3);
    let mut distinct = std::collections::HashSet::new();
    for pt in points {
        let tau = pt["threshold"].as_f64().unwrap();
        let preds = dir.path().join("preds.jsonl");
        let mut text = String::new();
        let mut counts = [0u64; 4];
        for (id, p) in ids.iter().zip(&probs) {
            let t = crb_tier(p, tau);
            counts[t as usize] += 1;
            text.push_str(&json!({"id": id, "tier_id": t}).to_string());
            text.push('\n');
        }
        distinct.insert(counts);
        std::fs::write(&preds, text).unwrap();
        let pred_arg = format!("file:{}", preds.display());
        let mut eargs = vec![
            "crb",
            "eval",
            "--bank",
            b,
            "--predictor",
            &pred_arg,
            "--json",
        ];
        eargs.extend(tok_args);
        let eval = ok_json(&routeval(&eargs));
        for key in ["scores_v2", "section_11", "router_accounting"] {
            assert_eq!(pt[key], eval[key], "τ = {tau}: {key}");
        }
        let n = ids.len() as f64;
        for (t, name) in ["low", "mid", "mid_high", "high"].iter().enumerate() {
            assert_eq!(
                pt["tier_shares"][name].as_f64().unwrap(),
                counts[t] as f64 / n,
                "τ = {tau}"
            );
        }
    }
    assert!(
        distinct.len() >= 3,
        "thresholds should give different routings"
    );
}

#[test]
fn crb_sweep_points_equal_crb_eval_runs() {
    crb_sweep_matches_eval(
        &crb_dir().join("bank.jsonl"),
        &["--tokenizer-setup", "all_cl100k"],
        7,
        "0,0.1,0.25,0.4,0.55,0.7,0.85,1",
    );
    crb_sweep_matches_eval(
        &crb_dir().join("bank.jsonl"),
        &["--tokenizer-setup", "all_cl100k"],
        11,
        "0:1:0.125",
    );
    // A golden bank with the native tokenizers when the shared data is there.
    if let Some(sh) = routeval_core::fixtures::shared_if_set("crb_sweep_points_equal_crb_eval_runs")
    {
        let toks = sh.join("thirdparty/tokenizers");
        for case in ["mixed_gold", "breaks_gold"] {
            let bank = sh.join("golden/crb/cases").join(case).join("bank.jsonl");
            assert!(bank.is_file(), "missing {}", bank.display());
            crb_sweep_matches_eval(
                &bank,
                &["--tokenizers", toks.to_str().unwrap()],
                3,
                "0,0.3,0.6,0.9,1",
            );
        }
    }
}

#[test]
fn crb_sweep_default_grid_frontier_and_calibration() {
    let dir = tempfile::tempdir().unwrap();
    let bank = crb_dir().join("bank.jsonl");
    let ids = bank_ids(&bank);
    let mut rng = Rng(5);
    let scores = dir.path().join("scores.jsonl");
    let mut text = String::new();
    for id in &ids {
        text.push_str(&json!({"id": id, "tier_probs": rng.probs(4)}).to_string());
        text.push('\n');
    }
    std::fs::write(&scores, &text).unwrap();
    let base = [
        "crb",
        "sweep",
        "--bank",
        bank.to_str().unwrap(),
        "--scores",
        scores.to_str().unwrap(),
        "--tokenizer-setup",
        "all_cl100k",
        "--json",
    ];
    let j = ok_json(&routeval(&base));
    let pts = j["points"].as_array().unwrap();
    let taus: Vec<f64> = pts
        .iter()
        .map(|p| p["threshold"].as_f64().unwrap())
        .collect();
    assert_eq!(taus.first(), Some(&0.0));
    assert_eq!(taus.last(), Some(&1.0));
    assert!(taus.windows(2).all(|w| w[0] < w[1]));
    // τ = 0: everything low; τ = 1: only rows whose first three probabilities reach 1.
    assert_eq!(pts[0]["tier_shares"]["low"], json!(1.0));
    assert!(j["frontier"]["aiq"].is_number());
    // Target pass rate, chosen on the same rows (flagged as optimistic).
    let mut a = base.to_vec();
    a.extend(["--target-pass-rate", "50", "--pass-rate", "case"]);
    let j = ok_json(&routeval(&a));
    let c = &j["chosen"];
    assert!(c["note"].as_str().unwrap().contains("optimistic"));
    let p = &c["point"];
    assert!(p["scores_v2"]["case_pass_rate_percent"].as_f64().unwrap() >= 50.0);
    // No cheaper point reaches the target.
    for q in j["points"].as_array().unwrap() {
        if q["scores_v2"]["case_pass_rate_percent"].as_f64().unwrap() >= 50.0 {
            assert!(q["cost_usd"].as_f64().unwrap() >= p["cost_usd"].as_f64().unwrap());
        }
    }
    // Calibration on one benchmark: the other rows are reported.
    let mut a = base.to_vec();
    a.extend([
        "--max-cost-usd",
        "1",
        "--calibrate-on",
        r#"{"benchmark": "swebench"}"#,
    ]);
    let j = ok_json(&routeval(&a));
    assert_eq!(j["swept_rows"], "calibration");
    assert_eq!(j["rows"], 4);
    let c = &j["chosen"];
    assert_eq!(c["calibration_rows"], 4);
    assert_eq!(c["report_rows"], 4);
    let rep = &c["report"]["scores_v2"]["by_benchmark"];
    assert!(rep.get("swebench").is_none(), "{rep}");
    let cal = &c["calibration_point"]["scores_v2"]["by_benchmark"];
    assert!(cal.get("swebench").is_some() && cal.as_object().unwrap().len() == 1);
    // Calibration on a fraction of the trajectories, never the same rows.
    let mut a = base.to_vec();
    a.extend([
        "--target-pass-rate",
        "0",
        "--calibrate-fraction",
        "0.5",
        "--seed",
        "3",
    ]);
    let j = ok_json(&routeval(&a));
    let c = &j["chosen"];
    assert_eq!(
        c["calibration_rows"].as_u64().unwrap() + c["report_rows"].as_u64().unwrap(),
        ids.len() as u64
    );
    assert!(c["calibration_rows"].as_u64().unwrap() > 0 && c["report_rows"].as_u64().unwrap() > 0);
}

#[test]
fn crb_sweep_bad_scores() {
    let dir = tempfile::tempdir().unwrap();
    let bank = crb_dir().join("bank.jsonl");
    let ids = bank_ids(&bank);
    let scores = dir.path().join("s.jsonl");
    let s = scores.to_str().unwrap();
    let run = || {
        routeval(&[
            "crb",
            "sweep",
            "--bank",
            bank.to_str().unwrap(),
            "--scores",
            s,
            "--tokenizer-setup",
            "all_cl100k",
            "--thresholds",
            "0,0.5,1",
            "--json",
        ])
    };
    let good = |id: &str| json!({"id": id, "tier_probs": [0.25, 0.25, 0.25, 0.25]}).to_string();
    let write = |bad_line: &str| {
        let mut lines: Vec<String> = ids.iter().map(|id| good(id)).collect();
        lines[2] = bad_line.to_string();
        std::fs::write(&scores, lines.join("\n") + "\n").unwrap();
    };
    for (bad, want) in [
        (
            json!({"id": ids[2], "tier_probs": [0.5, 0.5, 0.0]}),
            "s.jsonl:3: tier_probs must have 4 probabilities, got 3",
        ),
        (
            json!({"id": ids[2], "tier_probs": [0.5, 0.5, 1.5, 0.0]}),
            "s.jsonl:3: tier_probs[2] = 1.5 is not a finite number in [0, 1]",
        ),
        (
            json!({"id": ids[2], "tier_probs": [0.5, -0.1, 0.3, 0.3]}),
            "s.jsonl:3: tier_probs[1] = -0.1",
        ),
        (
            json!({"id": ids[2], "tier_probs": [0.5, "0.2", 0.3, 0.0]}),
            "s.jsonl:3: tier_probs[1] = \"0.2\"",
        ),
        (
            json!({"id": ids[2]}),
            "s.jsonl:3: row \"swebench_paging-1_step_3\" has no \"tier_probs\"",
        ),
        (
            json!({"id": "nope", "tier_probs": [0.25, 0.25, 0.25, 0.25]}),
            "s.jsonl:3: id \"nope\" is not in",
        ),
    ] {
        write(&bad.to_string());
        let out = run();
        if want.contains("is not in") {
            // The bank row that lost its line is reported first.
            assert_bad(&out, &["s.jsonl", "no \"tier_probs\" for 1 of 8 bank rows"]);
            let mut lines: Vec<String> = ids.iter().map(|id| good(id)).collect();
            lines.push(bad.to_string());
            std::fs::write(&scores, lines.join("\n") + "\n").unwrap();
            assert_bad(&run(), &["s.jsonl:9: id \"nope\" is not in"]);
        } else {
            assert_bad(&out, &[want]);
        }
    }
    write("{\"id\": 1, \"tier_probs\": [NaN, 0, 0, 1]}");
    assert_bad(&run(), &["s.jsonl:3: invalid JSON"]);
    // Not summing to 1: accepted, one note.
    let mut lines: Vec<String> = ids
        .iter()
        .map(|id| json!({"id": id, "tier_probs": [0.5, 0.5, 0.5, 0.5]}).to_string())
        .collect();
    lines[0] = good(&ids[0]);
    std::fs::write(&scores, lines.join("\n") + "\n").unwrap();
    let out = run();
    ok_json(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("do not sum to 1"))
        .collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(
        notes[0].contains("7 tier_probs vector(s)") && notes[0].contains("line 2"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// routeval gqr sweep

/// A synthetic GQR build: ID test (three domains), three OOD sets, the v2 eval split (ID rows
/// plus background) and two unseen ID sets, with random probabilities for every text.
fn synthetic_gqr(dir: &Path, seed: u64) -> (PathBuf, Vec<(String, Vec<f64>, u8)>) {
    let build = dir.join("build");
    std::fs::create_dir_all(&build).unwrap();
    let mut rng = Rng(seed);
    let mut all = Vec::new();
    let mut files = Vec::new();
    let domains = ["law", "finance", "healthcare"];
    let mut split = |name: &str, rows: Vec<(String, u8, String)>| {
        let mut text = String::new();
        for (i, (dataset, label, domain)) in rows.iter().enumerate() {
            let id = format!("{name}/{dataset}/{i}");
            text.push_str(
                &json!({"id": id, "text": format!("text {i}"), "label": label, "domain": domain, "dataset": dataset})
                    .to_string(),
            );
            text.push('\n');
            // Make the router right more often than not on in-domain rows.
            let mut p = rng.probs(3);
            if *label < 3 && rng.next() < 0.6 {
                let m = p.iter().cloned().fold(0.0, f64::max);
                let at = p.iter().position(|x| *x == m).unwrap();
                p.swap(at, *label as usize);
            }
            all.push((id, p, *label));
        }
        std::fs::write(build.join(format!("{name}.jsonl")), text).unwrap();
        files.push(json!({"path": format!("{name}.jsonl"), "rows": rows.len(), "blake3": "-"}));
    };
    let id_rows: Vec<(String, u8, String)> = (0..60)
        .map(|i| {
            (
                domains[i % 3].to_string(),
                (i % 3) as u8,
                domains[i % 3].to_string(),
            )
        })
        .collect();
    split("id_test", id_rows.clone());
    let ood: Vec<(String, u8, String)> = ["jigsaw", "olid", "web_questions"]
        .iter()
        .flat_map(|s| (0..15).map(move |_| (s.to_string(), 3u8, "ood".to_string())))
        .collect();
    split("ood_test", ood);
    let mut ev: Vec<(String, u8, String)> = id_rows[..30].to_vec();
    ev.extend((0..20).map(|_| ("wikitext".to_string(), 3u8, "ood".to_string())));
    split("eval_v2", ev);
    split("eval", id_rows[..30].to_vec());
    let unseen: Vec<(String, u8, String)> = (0..24)
        .map(|i| {
            let (s, l) = [("banking77", 1u8), ("mmlu_professional_law", 0u8)][i % 2];
            (s.to_string(), l, domains[l as usize].to_string())
        })
        .collect();
    split("unseen_id", unseen);
    let manifest = json!({"build": "gqr", "registry_blake3": "-", "files": files, "missing": [], "datasets": [], "warnings": []});
    std::fs::write(build.join("manifest.json"), manifest.to_string()).unwrap();
    (build, all)
}

fn gqr_rule(p: &[f64], tau: f64) -> u8 {
    let mut best = 0;
    for i in 1..3 {
        if p[i] > p[best] {
            best = i;
        }
    }
    if p[best] >= tau { best as u8 } else { 3 }
}

#[test]
fn gqr_sweep_points_equal_gqr_score_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (build, texts) = synthetic_gqr(dir.path(), 17);
    let b = build.to_str().unwrap();
    let scores = dir.path().join("probs.jsonl");
    let mut text = String::new();
    for (id, p, _) in &texts {
        text.push_str(&json!({"id": id, "probs": p}).to_string());
        text.push('\n');
    }
    std::fs::write(&scores, text).unwrap();
    let s = scores.to_str().unwrap();
    for unseen in [false, true] {
        let mut args = vec!["gqr", "sweep", "--scores", s, "--build-dir", b, "--json"];
        if unseen {
            args.push("--unseen");
        }
        args.extend(["--thresholds", "0,0.3,0.35,0.4,0.45,0.5,0.6,1"]);
        let j = ok_json(&routeval(&args));
        let pts = j["points"].as_array().unwrap();
        assert_eq!(pts.len(), 8);
        assert_eq!(j["curve"]["points"].as_array().unwrap().len(), 8);
        for pt in pts {
            let tau = pt["threshold"].as_f64().unwrap();
            let preds = dir.path().join("preds.jsonl");
            let mut text = String::new();
            for (id, p, _) in &texts {
                if id.starts_with("eval") {
                    continue;
                }
                text.push_str(&json!({"id": id, "label": gqr_rule(p, tau)}).to_string());
                text.push('\n');
            }
            std::fs::write(&preds, text).unwrap();
            let mut sargs = vec![
                "gqr",
                "score",
                "--predictions",
                preds.to_str().unwrap(),
                "--build-dir",
                b,
                "--json",
            ];
            if unseen {
                sargs.push("--unseen");
            }
            let score = ok_json(&routeval(&sargs));
            let score = score.as_object().unwrap();
            let mut keys = 0;
            for (k, v) in score {
                if ["missing_sets", "data", "latency_ms"].contains(&k.as_str()) {
                    continue;
                }
                assert_eq!(&pt[k], v, "unseen={unseen} τ = {tau}: {k}");
                keys += 1;
            }
            assert!(keys >= 6);
            assert_eq!(pt.as_object().unwrap().len(), keys + 1, "{pt}");
        }
    }
    // Calibration on the v2 background class; the chosen point is a test point.
    let j = ok_json(&routeval(&[
        "gqr",
        "sweep",
        "--scores",
        s,
        "--build-dir",
        b,
        "--json",
        "--calibrate-on",
        "background",
    ]));
    let c = &j["chosen"];
    assert_eq!(c["calibration_texts"], 50);
    let tau = c["threshold"].as_f64().unwrap();
    let at = j["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["threshold"].as_f64() == Some(tau))
        .unwrap();
    assert_eq!(&c["test"], at);
    assert!(c["calibration"]["gqr_score"].is_number());
    // v1 eval has no OOD rows: refused, pointing to the background class.
    assert_bad(
        &routeval(&[
            "gqr",
            "sweep",
            "--scores",
            s,
            "--build-dir",
            b,
            "--calibrate-on",
            "eval",
        ]),
        &["no out-of-domain rows", "--calibrate-on background"],
    );
}

#[test]
fn gqr_sweep_bad_probabilities() {
    let dir = tempfile::tempdir().unwrap();
    let (build, texts) = synthetic_gqr(dir.path(), 3);
    let b = build.to_str().unwrap();
    let scores = dir.path().join("p.jsonl");
    let s = scores.to_str().unwrap();
    let test: Vec<&(String, Vec<f64>, u8)> = texts
        .iter()
        .filter(|t| t.0.starts_with("id_test") || t.0.starts_with("ood_test"))
        .collect();
    let write = |bad: Option<String>| {
        let mut lines: Vec<String> = test
            .iter()
            .map(|(id, p, _)| json!({"id": id, "probs": p}).to_string())
            .collect();
        if let Some(b) = bad {
            lines[4] = b;
        }
        std::fs::write(&scores, lines.join("\n") + "\n").unwrap();
    };
    let run = || routeval(&["gqr", "sweep", "--scores", s, "--build-dir", b, "--json"]);
    let id4 = &test[4].0;
    for (bad, want) in [
        (
            json!({"id": id4, "probs": [0.5, 0.5]}),
            "p.jsonl:5: probs must have 3 probabilities, got 2",
        ),
        (
            json!({"id": id4, "probs": [0.5, 0.5, 0.1, 0.0]}),
            "p.jsonl:5: probs must have 3 probabilities, got 4",
        ),
        (
            json!({"id": id4, "probs": [0.5, 2, 0.1]}),
            "p.jsonl:5: probs[1] = 2 is not a finite number in [0, 1]",
        ),
        (
            json!({"id": id4, "probs": "0.5"}),
            "p.jsonl:5: probs must be a list of 3",
        ),
        (json!({"id": id4}), "p.jsonl:5: row"),
    ] {
        write(Some(bad.to_string()));
        assert_bad(&run(), &[want]);
    }
    // An id not in the data.
    let mut lines: Vec<String> = test
        .iter()
        .map(|(id, p, _)| json!({"id": id, "probs": p}).to_string())
        .collect();
    lines.push(json!({"id": "id_test/law/999", "probs": [1, 0, 0]}).to_string());
    std::fs::write(&scores, lines.join("\n") + "\n").unwrap();
    assert_bad(
        &run(),
        &[&format!(
            "p.jsonl:{}: id \"id_test/law/999\" is not in",
            lines.len()
        )],
    );
    // A text without probabilities.
    lines.truncate(test.len() - 1);
    std::fs::write(&scores, lines.join("\n") + "\n").unwrap();
    assert_bad(&run(), &["p.jsonl: no \"probs\" for 1 of"]);
    // Not summing to 1: accepted, noted once.
    let lines: Vec<String> = test
        .iter()
        .map(|(id, _, _)| json!({"id": id, "probs": [0.9, 0.9, 0.9]}).to_string())
        .collect();
    std::fs::write(&scores, lines.join("\n") + "\n").unwrap();
    let out = run();
    ok_json(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("do not sum to 1"))
            .count(),
        1,
        "{err}"
    );
}

/// `--method routerbench` (O(n³) per system) warns before it runs on a large system; the hull
/// method does not.
#[test]
fn routerbench_warns_before_a_large_cubic_run() {
    let mut lines = String::new();
    for i in 0..501 {
        let c = i as f64 / 500.0;
        lines.push_str(&format!(
            "{{\"system\": \"big\", \"cost\": {c}, \"quality\": {}}}\n",
            (c * 3.0).sqrt()
        ));
    }
    let out = routeval_stdin(
        &["frontier", "-", "--method", "routerbench", "--json"],
        lines.as_bytes(),
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("O(n³)") && err.contains("\"big\" has 501 points"),
        "{err}"
    );
    let out = routeval_stdin(&["frontier", "-", "--json"], lines.as_bytes());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("O(n³)"));
}
