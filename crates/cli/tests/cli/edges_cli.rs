//! Issue 24 (honest statistics at the edges), end to end: degenerate intervals named in every
//! face, degenerate tests never significant, replicate counts bounded, resampling flags that
//! would do nothing refused. All on the shipped example data or tiny files written here.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ex(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/data")
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

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn usage_error(args: &[&str], needle: &str) {
    let o = routeval(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
    let e = err(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains(needle), "{args:?}: {e}");
}

/// `crb eval --baseline-predictor tier:mid` on the example has one trajectory per benchmark:
/// the paired bootstrap has no variance. It printed `+25.00 [+25.00, +25.00]` as certainty;
/// now text, JSON and Markdown name it degenerate.
#[test]
fn crb_baseline_zero_width_interval_is_named_in_every_face() {
    let bank = ex("crb/bank.jsonl");
    let base = [
        "crb",
        "eval",
        "--bank",
        &bank,
        "--predictor",
        "gold",
        "--baseline-predictor",
        "tier:mid",
        "--tokenizer-setup",
        "all_cl100k",
    ];
    let o = routeval(&base);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = out(&o);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("case_pass_rate_percent"))
        .unwrap();
    assert!(line.contains("(degenerate: zero width"), "{line}");
    let mut a = base.to_vec();
    a.push("--json");
    let v: Value = serde_json::from_slice(&routeval(&a).stdout).unwrap();
    let metrics = v["baseline"]["metrics"]
        .as_array()
        .or_else(|| v["vs_baseline"]["metrics"].as_array())
        .unwrap_or_else(|| panic!("no baseline block: {v}"));
    assert!(
        metrics
            .iter()
            .all(|m| m["degenerate"].as_str().unwrap().contains("zero width")),
        "{metrics:?}"
    );
    let mut a = base.to_vec();
    a.extend(["--ci", "0.95", "--format", "md"]);
    let md = out(&routeval(&a));
    assert!(
        md.contains("CI of case_pass_rate_percent: degenerate"),
        "{md}"
    );
}

/// `trec --ci` over 2 queries: the intervals are named degenerate (fewer than 10 units).
#[test]
fn trec_ci_over_two_queries_says_so() {
    let (q, r) = (ex("trec/qrels.txt"), ex("trec/run.txt"));
    let o = routeval(&["trec", &q, &r, "-m", "map", "--ci", "0.9"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("degenerate: "), "{}", out(&o));
    let o = routeval(&["trec", &q, &r, "-m", "map", "--ci", "0.9", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["ci"]["degenerate"]["map"]
            .as_str()
            .unwrap()
            .starts_with("degenerate: "),
        "{v}"
    );
}

fn one_query(d: &Path) -> [PathBuf; 3] {
    let q = d.join("qrels");
    let b = d.join("base.run");
    let r = d.join("run.run");
    std::fs::write(&q, "q1 0 d1 1\nq1 0 d2 0\n").unwrap();
    std::fs::write(&b, "q1 Q0 d2 1 2.0 base\nq1 Q0 d1 2 1.0 base\n").unwrap();
    std::fs::write(&r, "q1 Q0 d1 1 2.0 run\nq1 Q0 d2 2 1.0 run\n").unwrap();
    [q, b, r]
}

/// One query: `--test bootstrap` called it significant (p = 1/(N+1)); every test now gives
/// `p_value: null`, `significant: false` and a note, and the CI is named degenerate.
#[test]
fn compare_one_query_is_never_significant() {
    let d = tempfile::tempdir().unwrap();
    let [q, b, r] = one_query(d.path());
    let (q, b, r) = (
        q.to_str().unwrap(),
        b.to_str().unwrap(),
        r.to_str().unwrap(),
    );
    for test in ["t", "wilcoxon", "fisher", "bootstrap"] {
        let o = routeval(&[
            "compare",
            q,
            b,
            r,
            "-m",
            "map",
            "--test",
            test,
            "--correction",
            "none",
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let c = &v["runs"][1]["vs_baseline"]["map"];
        assert_eq!(c["significant"], false, "{test}: {c}");
        assert!(c["p_value"].is_null(), "{test}: {c}");
        assert!(c["note"].as_str().unwrap().contains("1 paired unit"), "{c}");
        assert!(
            c["ci_degenerate"]
                .as_str()
                .unwrap()
                .starts_with("degenerate"),
            "{c}"
        );
    }
    let o = routeval(&["compare", q, b, r, "-m", "map", "--test", "bootstrap"]);
    assert!(
        out(&o).contains("note: run vs base on map: no test"),
        "{}",
        out(&o)
    );
}

#[test]
fn replicate_counts_are_bounded_and_idle_flags_refused() {
    let (q, b, r) = (
        ex("compare/qrels"),
        ex("compare/base.run"),
        ex("compare/better.run"),
    );
    let cmp = ["compare", q.as_str(), b.as_str(), r.as_str()];
    let with = |extra: &[&'static str]| {
        let mut a: Vec<&str> = cmp.to_vec();
        a.extend_from_slice(extra);
        a
    };
    // 10^8 replicates used to be accepted (10^7 already took 1.5 GB).
    usage_error(&with(&["--bootstrap", "100000000"]), "--bootstrap");
    usage_error(&with(&["--iterations", "100000000"]), "--iterations");
    usage_error(&with(&["--no-ci", "--bootstrap", "50"]), "--no-ci");
    usage_error(&with(&["--no-ci", "--seed", "3"]), "--seed");
    // --seed with --no-ci still drives the bootstrap test: accepted.
    let o = routeval(&with(&[
        "--no-ci",
        "--seed",
        "3",
        "--test",
        "bootstrap",
        "--iterations",
        "99",
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let (tq, tr) = (ex("trec/qrels.txt"), ex("trec/run.txt"));
    usage_error(
        &["trec", &tq, &tr, "--bootstrap", "10"],
        "--bootstrap goes with --ci",
    );
    usage_error(&["trec", &tq, &tr, "--seed", "1"], "--seed goes with --ci");
    let bank = ex("crb/bank.jsonl");
    usage_error(
        &[
            "crb",
            "eval",
            "--bank",
            &bank,
            "--predictor",
            "gold",
            "--bootstrap",
            "5",
        ],
        "--bootstrap goes with --ci LEVEL or --baseline-predictor",
    );
}

/// compare's default seed is now 42, as everywhere (it was 0).
#[test]
fn compare_default_seed_is_42() {
    let (q, b, r) = (
        ex("compare/qrels"),
        ex("compare/base.run"),
        ex("compare/better.run"),
    );
    let j = |extra: &[&str]| -> Value {
        let mut a = vec!["compare", &q, &b, &r, "--json", "--bootstrap", "200"];
        a.extend_from_slice(extra);
        serde_json::from_slice(&routeval(&a).stdout).unwrap()
    };
    assert_eq!(j(&[]), j(&["--seed", "42"]));
    assert_ne!(j(&[]), j(&["--seed", "0"]));
}

/// `trec --json --ci` is the plain `--json` object with one more member, `"ci"`, last (after
/// `per_query` and `ties`), byte for byte: the view is streamed with the member appended.
#[test]
fn trec_json_ci_is_the_json_view_plus_a_last_ci_member() {
    let (q, r) = (ex("trec/qrels.txt"), ex("trec/run.txt"));
    for extra in [
        &[][..],
        &["-q"][..],
        &["-q", "--ties"][..],
        &["-n", "-q"][..],
    ] {
        let base = [
            &["trec", "--json", "-m", "map", "-m", "P.5"][..],
            extra,
            &[&q, &r],
        ]
        .concat();
        let plain = routeval(&base);
        assert_eq!(plain.status.code(), Some(0), "{}", err(&plain));
        let with_ci = routeval(&[&base[..], &["--ci", "0.9", "--bootstrap", "50"]].concat());
        assert_eq!(with_ci.status.code(), Some(0), "{}", err(&with_ci));
        let v: Value = serde_json::from_slice(&with_ci.stdout).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            keys.last().map(|k| k.as_str()),
            Some("ci"),
            "{extra:?}: {keys:?}"
        );
        let p = out(&plain);
        let want = format!(
            "{},\"ci\":{}}}\n",
            p.trim_end().strip_suffix('}').unwrap(),
            serde_json::to_string(&v["ci"]).unwrap()
        );
        assert!(
            out(&with_ci) == want,
            "{extra:?}:\n{}\n{want}",
            out(&with_ci)
        );
    }
}

/// Query ids that are one JSON key once their invalid UTF-8 is replaced (`q\xff`, `q\xfe`):
/// `--json -q` refuses them (one line, exit 2) instead of printing one key twice (a JSON
/// reader keeps one query's values) or dropping one; the text output prints both; `--json`
/// without `-q` has no per-query keys and is fine.
#[test]
fn trec_json_refuses_qids_that_collide_as_keys() {
    let d = tempfile::tempdir().unwrap();
    let q = d.path().join("qrels");
    let r = d.path().join("run");
    std::fs::write(&q, b"q\xff 0 d1 1\nq\xfe 0 d2 1\n").unwrap();
    std::fs::write(&r, b"q\xff Q0 d1 1 0.9 t\nq\xfe Q0 d1 1 0.9 t\n").unwrap();
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    let o = routeval(&["trec", "--json", "-q", "-m", "map", q, r]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(o.stdout.is_empty());
    let e = err(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains(r"'q\xfe' and 'q\xff' are one key in JSON"),
        "{e}"
    );
    let o = routeval(&["trec", "-q", "-m", "map", q, r]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        o.stdout
            .split(|&b| b == b'\n')
            .filter(|l| l.starts_with(b"map"))
            .count(),
        3
    );
    let o = routeval(&["trec", "--json", "-m", "map", q, r]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}
