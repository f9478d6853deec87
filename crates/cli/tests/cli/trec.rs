//! `routeval trec` end to end: conformance with trec_eval's own test collection (read from
//! `$ROUTEVAL_SHARED/thirdparty/trec_eval/`), options, JSON, and error paths (exit 2, one line).

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
}

/// `$ROUTEVAL_SHARED/thirdparty/trec_eval`, or `None` (skip) when the variable is unset;
/// under `CI=true` a skip is a failure. A missing file with the variable set fails loudly.
fn shared_trec_eval(test: &str) -> Option<PathBuf> {
    routeval_core::fixtures::shared_files(
        test,
        "thirdparty/trec_eval",
        &[
            "qrels.test",
            "results.test",
            "out.test",
            "out.test.a",
            "out.test.aq",
        ],
    )
}

fn run_ok(args: &[&str]) -> String {
    let out = bin().args(args).output().expect("run routeval");
    assert!(
        out.status.success(),
        "routeval {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn check_conformance(args: &[&str], expected: &str, test: &str) {
    let Some(d) = shared_trec_eval(test) else {
        return;
    };
    let q = d.join("qrels.test");
    let r = d.join("results.test");
    let mut full: Vec<&str> = vec!["trec"];
    full.extend_from_slice(args);
    let (qs, rs) = (q.to_str().unwrap(), r.to_str().unwrap());
    full.push(qs);
    full.push(rs);
    let got = run_ok(&full);
    let want = std::fs::read_to_string(d.join(expected)).unwrap();
    assert!(
        got == want,
        "{test}: output differs from {expected}\n--- got\n{got}\n--- want\n{want}"
    );
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn conformance_official_matches_out_test() {
    check_conformance(&[], "out.test", "conformance_official_matches_out_test");
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn conformance_all_trec_matches_out_test_a() {
    check_conformance(
        &["-m", "all_trec"],
        "out.test.a",
        "conformance_all_trec_matches_out_test_a",
    );
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn conformance_all_trec_q_matches_out_test_aq() {
    check_conformance(
        &["-m", "all_trec", "-q"],
        "out.test.aq",
        "conformance_all_trec_q_matches_out_test_aq",
    );
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn conformance_run_from_stdin() {
    let Some(d) = shared_trec_eval("conformance_run_from_stdin") else {
        return;
    };
    let run = std::fs::read(d.join("results.test")).unwrap();
    let mut child = bin()
        .args([
            "trec",
            "-m",
            "all_trec",
            d.join("qrels.test").to_str().unwrap(),
            "-",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&run).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        std::fs::read_to_string(d.join("out.test.a")).unwrap()
    );
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn fails(args: &[&str]) -> Output {
    let out = bin().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected exit 2 for {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "one stderr line: {err:?}");
    assert!(out.stdout.is_empty());
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn error_paths_exit_2_with_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let q = write(&d, "q.txt", "1 0 a 1\n1 0 b 0\n");
    let cases = [
        (
            "r1.txt",
            "1 Q0 a 1 2.0 t\n1 Q0 b 2\n",
            "r1.txt:2: missing column 5 (score)",
        ),
        (
            "r2.txt",
            "1 Q0 a 1 x2 t\n",
            "r2.txt:1: non-numeric score 'x2'",
        ),
        (
            "r3.txt",
            "1 Q0 a 1 1 t\n\n1 Q0 b 2 NaN t\n",
            "r3.txt:3: score is NaN",
        ),
        ("r4.txt", "", "r4.txt:1: empty run file"),
        ("r5.txt", "# only a comment\n", "r5.txt:1: empty run file"),
        (
            "r6.txt",
            "1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n1 Q0 a 3 0.5 t\n",
            "r6.txt:3: duplicate document 'a' for query '1' (also at line 1)",
        ),
    ];
    for (name, text, want) in cases {
        let r = write(&d, name, text);
        let o = fails(&["trec", &q, &r]);
        assert!(stderr(&o).contains(want), "{name}: {}", stderr(&o));
    }
    let r = write(&d, "ok.txt", "1 Q0 a 1 2 t\n");
    let bad_q = write(&d, "bq.txt", "1 0 a 1\n1 0 b zero\n");
    assert!(
        stderr(&fails(&["trec", &bad_q, &r])).contains("bq.txt:2: non-numeric relevance 'zero'")
    );
    let dup_q = write(&d, "dq.txt", "1 0 a 1\n1 0 a 0\n");
    assert!(
        stderr(&fails(&["trec", &dup_q, &r]))
            .contains("dq.txt:2: duplicate judgment of document 'a'")
    );
    let short_q = write(&d, "sq.txt", "1 0 a\n");
    assert!(stderr(&fails(&["trec", &short_q, &r])).contains("sq.txt:1: missing column 4 (rel)"));
    assert!(
        stderr(&fails(&["trec", &q, "/nonexistent/run"])).contains("/nonexistent/run: cannot open")
    );
    assert!(stderr(&fails(&["trec", "-m", "nosuch", &q, &r])).contains("illegal measure 'nosuch'"));
    assert!(stderr(&fails(&["trec", "-m", "P.0", &q, &r])).contains("must be positive"));
    let other = write(&d, "other.txt", "2 Q0 a 1 2 t\n");
    assert!(
        stderr(&fails(&["trec", &q, &other]))
            .contains("no query has both results and relevance judgments")
    );
}

#[test]
fn duplicates_beyond_max_retrieved_are_ignored_like_trec_eval() {
    let d = tempfile::tempdir().unwrap();
    let q = write(&d, "q.txt", "1 0 a 1\n");
    let r = write(&d, "r.txt", "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 b 3 1 t\n");
    fails(&["trec", &q, &r]);
    let out = run_ok(&["trec", "-M", "2", "-m", "num_ret", &q, &r]);
    assert_eq!(out, "num_ret               \tall\t2\n");
}

/// Issue 24: `-M 0` evaluates no document of any query, as trec_eval 10.0 does (it was
/// refused): every query keeps its place (`num_q`), `num_ret` is 0 and every measure 0.
#[test]
fn max_retrieved_zero_evaluates_no_documents_like_trec_eval_10() {
    let d = tempfile::tempdir().unwrap();
    let q = write(&d, "q.txt", "1 0 a 1\n1 0 b 0\n2 0 c 1\n");
    let r = write(&d, "r.txt", "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n2 Q0 c 1 1 t\n");
    let args = [
        "trec",
        "-M",
        "0",
        "-q",
        "-m",
        "num_q",
        "-m",
        "num_ret",
        "-m",
        "num_rel",
        "-m",
        "num_rel_ret",
        "-m",
        "map",
        "-m",
        "P.5",
        "-m",
        "recip_rank",
        "-m",
        "ndcg",
        &q,
        &r,
    ];
    let out = run_ok(&args);
    let mut summary = Vec::new();
    for line in out.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (name, qid, value) = (f[0].trim_end(), f[1], f[2]);
        match name {
            "num_q" => assert_eq!(value, "2", "{line}"),
            "num_rel" => assert_eq!(value, if qid == "all" { "2" } else { "1" }, "{line}"),
            "num_ret" | "num_rel_ret" => assert_eq!(value, "0", "{line}"),
            _ => assert_eq!(value, "0.0000", "{line}"),
        }
        if qid == "all" {
            summary.push(name.to_string());
        }
    }
    assert_eq!(summary.len(), 8, "{out}");
}

#[test]
fn whitespace_crlf_and_comments_accepted() {
    let d = tempfile::tempdir().unwrap();
    let q = write(&d, "q.txt", "# judgments\r\n1\t0 a  1\r\n1 0 b 0 \r\n");
    let r = write(
        &d,
        "r.txt",
        "\n  1 Q0 a 1 2.5 run1 extra fields\r\n# c\n1\tQ0\tb\t2\t1e0\trun2\t\r\n",
    );
    let out = run_ok(&["trec", "-m", "runid", "-m", "map", "-m", "num_ret", &q, &r]);
    assert_eq!(
        out,
        "runid                 \tall\trun2\nnum_ret               \tall\t2\nmap                   \tall\t1.0000\n"
    );
}

/// Graded judgments with -l, -J, -M, -c, -N on a collection small enough to check by hand.
#[test]
fn options_on_graded_qrels() {
    let d = tempfile::tempdir().unwrap();
    // q1: a=2, b=1, c=0, d=-1 (pooled, unjudged); q2: x=1; q3 (no results): y=3.
    let q = write(
        &d,
        "q.txt",
        "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq1 0 d -1\nq2 0 x 1\nq3 0 y 3\n",
    );
    // q1 ranking by score: e(0.9, not judged) b(0.8) c(0.8) -> tie: c before b (docno desc), a(0.5), d(0.1).
    let r = write(
        &d,
        "r.txt",
        "q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.8 t\nq1 Q0 c 3 0.8 t\nq1 Q0 e 4 0.9 t\nq1 Q0 d 5 0.1 t\nq2 Q0 z 1 1 t\nq2 Q0 x 2 0.5 t\n",
    );
    let m = [
        "-m",
        "map",
        "-m",
        "P.2,4",
        "-m",
        "num_rel",
        "-m",
        "num_ret",
        "-m",
        "relstring",
        "-m",
        "recip_rank",
    ];
    let run = |extra: &[&str]| {
        let mut a = vec!["trec", "-q"];
        a.extend_from_slice(extra);
        a.extend_from_slice(&m);
        a.push(&q);
        a.push(&r);
        run_ok(&a)
    };
    // Default -l 1: q1 ranks e(-) c(0) b(1) a(2) d(.): relevant b@3, a@4: AP = (1/3 + 2/4) / 2.
    let out = run(&[]);
    assert!(
        out.contains("relstring             \tq1\t'-012.'\n"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "map                   \tq1\t{:.4}\n",
            (1.0 / 3.0 + 0.5) / 2.0
        )),
        "{out}"
    );
    assert!(out.contains("P_2                   \tq1\t0.0000\n"));
    assert!(out.contains("recip_rank            \tq2\t0.5000\n"));
    // -l 2: only a is relevant (num_rel 1), at rank 4.
    let out = run(&["-l", "2"]);
    assert!(out.contains("num_rel               \tq1\t1\n"), "{out}");
    assert!(
        out.contains("map                   \tq1\t0.2500\n"),
        "{out}"
    );
    // -J: e and d dropped; q1 ranks c b a: AP = (1/2 + 2/3)/2; num_ret 3.
    let out = run(&["-J"]);
    assert!(out.contains("num_ret               \tq1\t3\n"), "{out}");
    assert!(
        out.contains(&format!(
            "map                   \tq1\t{:.4}\n",
            (0.5 + 2.0 / 3.0) / 2.0
        )),
        "{out}"
    );
    assert!(out.contains("relstring             \tq1\t'012'\n"));
    // -M 3: q1 keeps e c b: AP = (1/3)/2.
    let out = run(&["-M", "3"]);
    assert!(
        out.contains(&format!(
            "map                   \tq1\t{:.4}\n",
            (1.0 / 3.0) / 2.0
        )),
        "{out}"
    );
    // -c: q3 counts with zero scores; summary averages over 3 queries and num_ret ignores the stand-in.
    let out = run(&["-c"]);
    assert!(out.contains("num_ret               \tq3\t0\n"), "{out}");
    assert!(out.contains("relstring             \tq3\t''\n"), "{out}");
    assert!(out.contains("num_rel               \tq3\t1\n"));
    let ap1 = (1.0 / 3.0 + 0.5) / 2.0;
    assert!(
        out.contains(&format!(
            "map                   \tall\t{:.4}\n",
            (ap1 + 0.5) / 3.0
        )),
        "{out}"
    );
    assert!(out.contains("num_ret               \tall\t7\n"));
    // Without -c, q3 is skipped.
    let out = run(&[]);
    assert!(!out.contains("\tq3\t"));
    assert!(out.contains(&format!(
        "map                   \tall\t{:.4}\n",
        (ap1 + 0.5) / 2.0
    )));
    // -N with utility: p4 * (N + relret - ret - rel).
    let out = run_ok(&["trec", "-N", "100", "-m", "utility.0,0,0,1", &q, &r]);
    // q1: 100 + 2 - 5 - 2 = 95; q2: 100 + 1 - 2 - 1 = 98 -> mean 96.5.
    assert_eq!(out, "utility_0,0,0,1       \tall\t96.5000\n");
    // -n hides the summary.
    let out = run(&["-n"]);
    assert!(!out.contains("\tall\t"));
}

#[test]
fn json_output_has_all_and_per_query() {
    let d = tempfile::tempdir().unwrap();
    let q = write(&d, "q.txt", "q1 0 a 1\nq1 0 b 0\n");
    let r = write(&d, "r.txt", "q1 Q0 b 1 2 tag\nq1 Q0 a 2 1 tag\n");
    let out = run_ok(&[
        "trec",
        "--json",
        "-q",
        "-m",
        "official",
        "-m",
        "relstring",
        &q,
        &r,
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["all"]["runid"], "tag");
    assert_eq!(v["all"]["num_q"], 1);
    assert_eq!(v["all"]["map"], 0.5);
    assert_eq!(v["all"]["P_5"], 0.2);
    assert_eq!(v["per_query"]["q1"]["relstring"], "01");
    assert_eq!(v["per_query"]["q1"]["num_ret"], 2);
    assert!(v["all"].get("relstring").is_none());
    let out = run_ok(&["trec", "--json", "-m", "map", &q, &r]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("per_query").is_none());
    // -o writes the same bytes to a file.
    let o = d.path().join("out.txt");
    let printed = run_ok(&["trec", "-m", "map", &q, &r]);
    run_ok(&["trec", "-m", "map", "-o", o.to_str().unwrap(), &q, &r]);
    assert_eq!(std::fs::read_to_string(o).unwrap(), printed);
}

#[test]
fn help_lists_every_measure() {
    let out = run_ok(&["trec", "--help"]);
    for m in [
        "P",
        "ndcg_cut",
        "gm_map",
        "rbp_resid",
        "unj",
        "11pt_avg",
        "-M",
        "-J",
        "--json",
    ] {
        assert!(out.contains(m), "help lacks {m}");
    }
}
