//! `routeval compare --anova`, `--test tukey|randomized-tukey` and `--risk` end to end, on the
//! collections of `tests/fixtures/compare/`, against `<name>_multi.json`: statsmodels'
//! `anova_lm`, scipy's `studentized_range` and the risk formulas applied by
//! `crates/stats/tests/fixtures/gen_multi.py` to per-query values it computes from the same
//! files itself.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compare")
}

fn collection(name: &str) -> Vec<String> {
    let d = fixtures();
    let mut v = vec![d.join(format!("{name}.qrels")).display().to_string()];
    for s in ["base", "better", "noisy"] {
        v.push(d.join(format!("{name}_{s}.run")).display().to_string());
    }
    v
}

fn run(args: &[String], threads: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .expect("run routeval")
}

fn args(name: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["compare".to_string()];
    a.extend(collection(name));
    for m in ["map", "P.5", "recip_rank"] {
        a.push("-m".into());
        a.push(m.into());
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn json(a: &[String]) -> Value {
    let out = run(a, "2");
    assert!(
        out.status.success(),
        "{a:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn close(got: &Value, want: &Value, abs: f64, rel: f64, what: &str) {
    match (got.as_f64(), want.as_f64()) {
        (None, None) => assert!(got.is_null() && want.is_null(), "{what}: {got} vs {want}"),
        (Some(g), Some(w)) => assert!(
            (g - w).abs() <= abs + rel * w.abs(),
            "{what}: got {g:e}, reference {w:e}"
        ),
        _ => panic!("{what}: got {got}, reference {want}"),
    }
}

#[test]
fn anova_tukey_and_risk_equal_statsmodels_and_scipy() {
    for name in ["small", "medium"] {
        let want: Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures().join(format!("{name}_multi.json"))).unwrap(),
        )
        .unwrap();
        let got = json(&args(
            name,
            &[
                "--json", "--anova", "--test", "tukey", "--risk", "0", "--risk", "1", "--risk", "5",
            ],
        ));
        assert_eq!(got["test"], "tukey");
        assert_eq!(got["correction"], "tukey");
        let names: Vec<&str> = got["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["base", "better", "noisy"]);
        for m in ["map", "P_5", "recip_rank"] {
            let w = &want["per_measure"][m];
            let a = &got["anova"][m];
            for key in [
                "f",
                "p_value",
                "mse",
                "ss_systems",
                "ss_queries",
                "ss_residual",
            ] {
                close(
                    &a[key],
                    &w["anova"][key],
                    1e-12,
                    1e-9,
                    &format!("{name} {m} {key}"),
                );
            }
            for key in ["df_systems", "df_queries", "df_residual"] {
                assert_eq!(a[key], w["anova"][key], "{name} {m} {key}");
            }
            // Pairs in (a, b) order: (0,1), (0,2), (1,2).
            let pairs = got["pairs"].as_array().unwrap();
            assert_eq!(pairs.len(), 3);
            for (p, wp) in pairs.iter().zip(w["tukey"].as_array().unwrap()) {
                let c = &p["vs"][m];
                close(
                    &c["p_value"],
                    &wp["p_value"],
                    1e-9,
                    1e-6,
                    &format!("{name} {m} tukey"),
                );
                assert_eq!(c["p_value"], c["p_adjusted"]);
            }
            for (i, alpha) in ["0.0", "1.0", "5.0"].iter().enumerate() {
                for (r, wr) in w["risk"][alpha].as_array().unwrap().iter().enumerate() {
                    let g = &got["runs"][r]["risk"][m][i];
                    assert_eq!(g["alpha"].as_f64().unwrap(), alpha.parse::<f64>().unwrap());
                    for key in ["urisk", "trisk", "georisk"] {
                        close(
                            &g[key],
                            &wr[key],
                            1e-12,
                            1e-9,
                            &format!("{name} {m} {key} {alpha} {r}"),
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn randomized_tukey_is_seeded_and_thread_independent() {
    let a = args(
        "small",
        &[
            "--json",
            "--test",
            "randomized-tukey",
            "--iterations",
            "3000",
            "--no-ci",
        ],
    );
    let one = run(&a, "1");
    let two = run(&a, "2");
    assert!(one.status.success());
    assert_eq!(one.stdout, two.stdout);
    let mut b = a.clone();
    b.extend(["--seed".to_string(), "5".to_string()]);
    let other = run(&b, "2");
    assert_ne!(one.stdout, other.stdout, "the seed is used");
    let v: Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(v["test"], "randomized-tukey");
    // p = (count + 1) / (N + 1): a multiple of 1/3001.
    let p = v["pairs"][0]["vs"]["map"]["p_value"].as_f64().unwrap();
    let k = p * 3001.0;
    assert!((k - k.round()).abs() < 1e-6 && k >= 1.0, "{p}");
}

/// Every face of one report carries the same many-systems numbers.
#[test]
fn every_face_shows_anova_letters_and_risk() {
    let base = args(
        "medium",
        &["--anova", "--test", "tukey", "--risk", "1", "--seed", "3"],
    );
    let mut j = base.clone();
    j.push("--json".into());
    let v = json(&j);
    let f = v["anova"]["map"]["f"].as_f64().unwrap();
    let urisk = v["runs"][1]["risk"]["map"][0]["urisk"].as_f64().unwrap();
    let georisk = v["runs"][2]["risk"]["P_5"][0]["georisk"].as_f64().unwrap();
    let letters = v["runs"][1]["letters"]["map"].as_str().unwrap().to_string();
    let four = |x: f64| format!("{x:.4}");
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let mut faces: Vec<(String, String)> = Vec::new();
    for fmt in ["text", "md", "latex"] {
        let mut a = base.clone();
        a.extend(["--format".to_string(), fmt.to_string()]);
        let out = run(&a, "2");
        assert!(out.status.success());
        faces.push((fmt.into(), String::from_utf8(out.stdout).unwrap()));
    }
    let mut a = base.clone();
    a.extend(["--html".to_string(), html.display().to_string()]);
    assert!(run(&a, "2").status.success());
    faces.push(("html".into(), std::fs::read_to_string(&html).unwrap()));
    for (face, text) in &faces {
        for want in [four(f), format!("{urisk:+.4}"), four(georisk)] {
            assert!(text.contains(&want), "{face} lacks {want}");
        }
        assert!(
            text.contains(&format!(
                "0.{} {letters}",
                &four(v["runs"][1]["means"]["map"].as_f64().unwrap())[2..]
            )),
            "{face} lacks the letters {letters}"
        );
        assert!(text.contains("ANOVA"), "{face}");
        assert!(text.contains("URisk"), "{face}");
    }
    // CSV: full-precision columns.
    let mut a = base.clone();
    a.extend(["--format".to_string(), "csv".to_string()]);
    let out = run(&a, "2");
    let csv = String::from_utf8(out.stdout).unwrap();
    let head = csv.lines().next().unwrap();
    for col in [
        "anova_f",
        "anova_p_value",
        "baseline_letters",
        "run_letters",
        "run_urisk_1",
        "run_trisk_1",
        "baseline_georisk_1",
        "run_georisk_1",
    ] {
        assert!(head.split(',').any(|c| c == col), "csv lacks {col}: {head}");
    }
    assert!(csv.contains(&format!("{f}")), "csv lacks F {f}");
    assert!(csv.contains(&format!("{urisk}")), "csv lacks URisk {urisk}");
}

#[test]
fn many_system_bad_inputs_exit_2_with_one_line() {
    let c = collection("small");
    let two = vec![
        "compare".to_string(),
        c[0].clone(),
        c[1].clone(),
        c[2].clone(),
    ];
    let with = |base: &[String], extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let three = args("small", &[]);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (with(&two, &["--anova"]), "at least 3 runs"),
        (with(&two, &["--test", "tukey"]), "paired test"),
        (
            with(&two, &["--test", "randomized-tukey"]),
            "at least 3 runs",
        ),
        (with(&three, &["--risk", "-1"]), "alpha"),
        (with(&three, &["--risk", "nan"]), "finite"),
        (with(&three, &["--risk", "inf"]), "finite"),
        (with(&three, &["--risk", "x"]), "not a number"),
        (
            with(&three, &["--test", "randomized-tukey", "--iterations", "0"]),
            "1..=10000000",
        ),
        (
            with(
                &three,
                &["--test", "randomized-tukey", "--iterations", "10000001"],
            ),
            "10000000",
        ),
        (
            with(&three, &["--test", "tukey", "--correction", "holm"]),
            "family-wise",
        ),
        (with(&three, &["--test", "tukee"]), "tukey"),
    ];
    for (a, needle) in cases {
        let out = run(&a, "2");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{a:?}: {err}");
        assert!(err.contains(needle), "{a:?}: {err}");
    }
}

#[test]
fn an_all_zero_measure_gives_null_georisk_and_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("qrels");
    std::fs::write(&q, "q1 0 R1 1\nq2 0 R2 1\nq3 0 R3 1\n").unwrap();
    let mut runs = Vec::new();
    for s in ["a", "b", "c"] {
        let p = dir.path().join(format!("{s}.run"));
        std::fs::write(
            &p,
            format!("q1 Q0 X1 1 1.0 {s}\nq2 Q0 X2 1 1.0 {s}\nq3 Q0 X3 1 1.0 {s}\n"),
        )
        .unwrap();
        runs.push(p.display().to_string());
    }
    let mut a = vec!["compare".to_string(), q.display().to_string()];
    a.extend(runs);
    a.extend(["-m", "P.5", "--anova", "--risk", "1", "--json"].map(String::from));
    let out = run(&a, "2");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("NaN"));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v["runs"][1]["risk"]["P_5"][0]["georisk"].is_null());
    assert!(v["anova"]["P_5"]["f"].is_null());
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("GeoRisk is undefined"))
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("GeoRisk is undefined"), "{err}");
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/compare")
}

#[test]
fn judged_queries_without_results_are_noted_per_run() {
    let d = examples();
    let a: Vec<String> = ["qrels", "base.run", "better.run"]
        .iter()
        .map(|f| d.join(f).display().to_string())
        .collect();
    let mut args = vec!["compare".to_string()];
    args.extend(a.clone());
    let out = run(&args, "2");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    // The shipped base.run has no results for q003.
    let line = err
        .lines()
        .find(|l| l.contains("base.run: no results for"))
        .unwrap_or_else(|| panic!("no missing-query note: {err}"));
    assert!(line.contains("1 of 12 judged queries (q003)"), "{line}");
    assert!(
        !err.lines().any(|l| l.contains("better.run: no results")),
        "{err}"
    );
}

#[test]
fn a_run_sharing_no_query_with_the_qrels_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("qrels");
    std::fs::write(&q, "q1 0 D1 1\nq2 0 D2 1\n").unwrap();
    let good = dir.path().join("good.run");
    std::fs::write(&good, "q1 Q0 D1 1 1.0 good\nq2 Q0 D2 1 1.0 good\n").unwrap();
    let other = dir.path().join("other.run");
    std::fs::write(&other, "x1 Q0 D1 1 1.0 other\nx2 Q0 D2 1 1.0 other\n").unwrap();
    let args: Vec<String> = [
        "compare",
        &q.display().to_string(),
        &good.display().to_string(),
        &other.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = run(&args, "2");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("other.run") && err.contains("none of the 2 judged queries"),
        "{err}"
    );
}

#[test]
fn names_set_display_names_and_markdown_escapes_them() {
    let d = examples();
    let mut args = vec!["compare".to_string()];
    for f in ["qrels", "base.run", "better.run", "noisy.run"] {
        args.push(d.join(f).display().to_string());
    }
    let mut j = args.clone();
    j.extend(
        [
            "--name",
            "base=BM25",
            "--name",
            "better=<img onerror=x>*b*",
            "--json",
        ]
        .map(String::from),
    );
    let v = json(&j);
    let names: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["BM25", "<img onerror=x>*b*", "noisy"]);
    let mut m = args.clone();
    m.extend(["--name", "better=<img onerror=x>*b*`c`", "--format", "md"].map(String::from));
    let out = run(&m, "2");
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("&lt;img onerror=x&gt;\\*b\\*\\`c\\`"), "{md}");
    assert!(!md.contains("<img"), "{md}");
    // A path works as the key too; unknown keys and clashes are refused.
    let mut p = args.clone();
    p.extend([
        "--name".to_string(),
        format!("{}=B", d.join("noisy.run").display()),
        "--json".into(),
    ]);
    assert_eq!(json(&p)["runs"][2]["name"], "B");
    for bad in [
        ["--name", "nosuch=X"],
        ["--name", "base=noisy"],
        ["--name", "base"],
    ] {
        let mut b = args.clone();
        b.extend(bad.map(String::from));
        let out = run(&b, "2");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{bad:?}: {err}");
    }
}

/// `compare --ties`: the JSON's tie ranges and the "Tie sensitivity" table of every other face
/// carry the same numbers.
#[test]
fn tie_ranges_appear_in_every_face() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/trec");
    let mut base = vec!["compare".to_string()];
    for f in ["qrels.txt", "run.txt", "run-ties.txt"] {
        base.push(d.join(f).display().to_string());
    }
    base.extend(["--ties", "-m", "recip_rank", "--no-ci"].map(String::from));
    let mut j = base.clone();
    j.push("--json".into());
    let v = json(&j);
    let r = &v["runs"][1]["ties"]["all"]["recip_rank"];
    let (lo, hi, e) = (
        r["min"].as_f64().unwrap(),
        r["max"].as_f64().unwrap(),
        r["expected"].as_f64().unwrap(),
    );
    assert!(lo < hi, "{r}");
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("t.html");
    let mut faces = Vec::new();
    for fmt in ["text", "md", "latex"] {
        let mut a = base.clone();
        a.extend(["--format".to_string(), fmt.to_string()]);
        faces.push(String::from_utf8(run(&a, "2").stdout).unwrap());
    }
    let mut a = base.clone();
    a.extend(["--html".to_string(), html.display().to_string()]);
    assert!(run(&a, "2").status.success());
    faces.push(std::fs::read_to_string(&html).unwrap());
    for f in &faces {
        assert!(f.contains("Tie sensitivity"), "{f}");
        for x in [lo, hi, e] {
            assert!(f.contains(&format!("{x:.4}")), "{x:.4} missing:\n{f}");
        }
    }
}
