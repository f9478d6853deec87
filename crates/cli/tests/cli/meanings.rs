//! Inputs that silently meant something else (issue 10, item 6) and the differential test's
//! trec findings (item 7), end to end.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn routeval_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const CASES: &[u8] = br#"[{"query": "refund policy", "retrieved": ["refund policy text"], "relevant": ["refund policy text"]}]"#;

#[test]
fn rag_conflicting_formats_and_empty_gate() {
    let d = tempfile::tempdir().unwrap();
    let o = routeval_in(d.path(), &["rag", "-", "--json", "--format", "csv"], CASES);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(o.stdout.is_empty());
    assert!(
        err(&o)
            .lines()
            .last()
            .unwrap()
            .contains("--format: not allowed with argument --json")
    );

    let o = routeval_in(
        d.path(),
        &[
            "rag",
            "-",
            "--strict",
            "--where",
            r#"{"query": {"eq": "nothing"}}"#,
        ],
        CASES,
    );
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(o.stdout.is_empty());
    assert!(err(&o).contains("nothing to gate"), "{}", err(&o));
    // Selecting something still gates as before.
    let o = routeval_in(
        d.path(),
        &[
            "rag",
            "-",
            "--strict",
            "--where",
            r#"{"query": {"eq": "refund policy"}}"#,
        ],
        CASES,
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

#[test]
fn crb_repeated_prediction_ids_warn() {
    let bank = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/crb/bank.jsonl");
    let d = tempfile::tempdir().unwrap();
    let preds = d.path().join("p.jsonl");
    std::fs::write(
        &preds,
        "{\"id\": \"swebench_paging-1_step_1\", \"tier_id\": 3}\n\
         {\"id\": \"swebench_paging-1_step_1\", \"tier_id\": 2}\n\
         {\"id\": \"swebench_paging-1_step_2\", \"tier_id\": 3}\n\
         {\"id\": \"swebench_paging-1_step_2\", \"tier_id\": 3}\n",
    )
    .unwrap();
    let o = routeval_in(
        d.path(),
        &[
            "crb",
            "eval",
            "--bank",
            bank.to_str().unwrap(),
            "--predictor",
            "file:p.jsonl",
            "--tokenizer-setup",
            "all_cl100k",
        ],
        b"",
    );
    let e = err(&o);
    let warn: Vec<&str> = e.lines().filter(|l| l.contains("repeated id")).collect();
    assert_eq!(warn.len(), 1, "{e}");
    assert!(
        warn[0].contains("2 repeated id(s), first swebench_paging-1_step_1 at line 2"),
        "{e}"
    );
}

#[test]
fn crb_repeated_ids_in_a_json_object_file_warn() {
    let bank = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/crb/bank.jsonl");
    let d = tempfile::tempdir().unwrap();
    // serde_json (as Python's json.load) keeps only the last value of a repeated key: the
    // repetition must still be reported.
    std::fs::write(
        d.path().join("p.json"),
        "{\"swebench_paging-1_step_2\": 3, \"swebench_paging-1_step_1\": 3,\n \"swebench_paging-1_step_2\": 1, \"swebench_paging-1_step_1\": 0, \"swebench_paging-1_step_2\": 2}",
    )
    .unwrap();
    let args = [
        "crb",
        "eval",
        "--bank",
        bank.to_str().unwrap(),
        "--predictor",
        "file:p.json",
        "--tokenizer-setup",
        "all_cl100k",
        "--json",
    ];
    let o = routeval_in(d.path(), &args, b"");
    let e = err(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    let warn: Vec<&str> = e.lines().filter(|l| l.contains("repeated id")).collect();
    assert_eq!(warn.len(), 1, "{e}");
    assert!(
        warn[0].contains("p.json: 3 repeated id(s), first swebench_paging-1_step_2;"),
        "{e}"
    );
    // The last value of each id is used.
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let pred = |id: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| r["pred_tier_id"].clone())
    };
    assert_eq!(pred("swebench_paging-1_step_1"), Some(serde_json::json!(0)));
    assert_eq!(pred("swebench_paging-1_step_2"), Some(serde_json::json!(2)));
}

#[test]
fn gqr_repeated_prediction_ids_warn() {
    let d = tempfile::tempdir().unwrap();
    let b = d.path().join("build");
    std::fs::create_dir(&b).unwrap();
    verified_build(&b);
    std::fs::write(
        d.path().join("p.jsonl"),
        "{\"id\": \"id_test/law/0\", \"label\": 1}\n\
         {\"id\": \"id_test/finance/0\", \"label\": 1}\n\
         {\"id\": \"ood_test/jigsaw/0\", \"label\": 3}\n\
         {\"id\": \"id_test/law/0\", \"label\": 0}\n\
         {\"id\": \"ood_test/jigsaw/0\", \"label\": 3}\n",
    )
    .unwrap();
    let o = routeval_in(
        d.path(),
        &[
            "gqr",
            "score",
            "--predictions",
            "p.jsonl",
            "--build-dir",
            b.to_str().unwrap(),
            "--json",
        ],
        b"",
    );
    let e = err(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    let warn: Vec<&str> = e.lines().filter(|l| l.contains("repeated id")).collect();
    assert_eq!(warn.len(), 1, "{e}");
    assert!(
        warn[0].contains("p.jsonl: 2 repeated id(s), first \"id_test/law/0\" at line 4"),
        "{e}"
    );
    // The last line of an id wins: every prediction is then right.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.is_empty());
}

/// A build with real row counts and blake3 values.
fn verified_build(dir: &Path) {
    let id = "{\"id\": \"id_test/law/0\", \"text\": \"a contract\", \"label\": 0, \"domain\": \"law\", \"dataset\": \"law\"}\n\
              {\"id\": \"id_test/finance/0\", \"text\": \"a loan\", \"label\": 1, \"domain\": \"finance\", \"dataset\": \"finance\"}\n";
    let ood = "{\"id\": \"ood_test/jigsaw/0\", \"text\": \"hi\", \"label\": 3, \"domain\": \"ood\", \"dataset\": \"jigsaw\"}\n";
    std::fs::write(dir.join("id_test.jsonl"), id).unwrap();
    std::fs::write(dir.join("ood_test.jsonl"), ood).unwrap();
    let h = |s: &str| blake3::hash(s.as_bytes()).to_hex().to_string();
    let manifest = format!(
        r#"{{"build": "gqr", "registry_blake3": "-", "files": [
        {{"path": "id_test.jsonl", "rows": 2, "blake3": "{}"}},
        {{"path": "ood_test.jsonl", "rows": 1, "blake3": "{}"}}],
        "missing": [], "datasets": [], "warnings": []}}"#,
        h(id),
        h(ood)
    );
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
}

#[test]
fn gqr_builds_are_verified_when_read() {
    let d = tempfile::tempdir().unwrap();
    let b = d.path().join("build");
    std::fs::create_dir(&b).unwrap();
    let export = |b: &Path| {
        routeval_in(
            d.path(),
            &[
                "gqr",
                "export",
                "--split",
                "id_test",
                "--build-dir",
                b.to_str().unwrap(),
            ],
            b"",
        )
    };
    verified_build(&b);
    let o = export(&b);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // Truncated at a line boundary.
    let full = std::fs::read_to_string(b.join("id_test.jsonl")).unwrap();
    std::fs::write(
        b.join("id_test.jsonl"),
        full.lines().next().unwrap().to_string() + "\n",
    )
    .unwrap();
    let o = export(&b);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(o.stdout.is_empty());
    assert!(
        err(&o).contains("1 rows, manifest.json says 2"),
        "{}",
        err(&o)
    );
    // Emptied.
    std::fs::write(b.join("id_test.jsonl"), "").unwrap();
    assert_eq!(export(&b).status.code(), Some(2));
    // Relabelled dataset, same row count.
    verified_build(&b);
    let relabelled = full.replace("\"dataset\": \"law\"", "\"dataset\": \"lax\"");
    std::fs::write(b.join("id_test.jsonl"), relabelled).unwrap();
    let o = export(&b);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("blake3"), "{}", err(&o));
    assert_eq!(err(&o).lines().count(), 1, "{}", err(&o));
    // Scoring reads the same way.
    let o = routeval_in(
        d.path(),
        &[
            "gqr",
            "score",
            "--cmd",
            "while read l; do echo 0; done",
            "--build-dir",
            b.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
}

const QRELS: &str = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d4 1\nq3 0 d5 2\n";
const RUN: &str = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\nq2 Q0 d4 1 0.5 r\n";

fn trec(args: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("qrels"), QRELS).unwrap();
    std::fs::write(d.path().join("run"), RUN).unwrap();
    let mut all = vec!["trec"];
    all.extend_from_slice(args);
    all.extend(["qrels", "run"]);
    let o = routeval_in(d.path(), &all, b"");
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    String::from_utf8(o.stdout).unwrap()
}

fn all_value(out: &str, measure: &str) -> String {
    out.lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|f| f[0].trim() == measure && f[1] == "all")
        .map(|f| f[2].to_string())
        .unwrap_or_default()
}

/// trec_eval 10.0 m_num_rel.c `te_calc_avg_num_rel`: with `-c`, the summary counts every raw
/// qrels judgment with rel > 0 (d1, d2, d4, d5 = 4), ignoring `-l`; the per-query values under
/// `-l 2` are q1 = 1 (d1), q2 = 0, q3 = 1 (d5), which sum to 2. Hand-computed.
#[test]
fn trec_complete_num_rel_counts_raw_qrels() {
    assert_eq!(
        all_value(&trec(&["-c", "-l", "2", "-m", "num_rel"]), "num_rel"),
        "4"
    );
    assert_eq!(all_value(&trec(&["-c", "-m", "num_rel"]), "num_rel"), "4");
    // Without -c, the sum over evaluated queries (q1 = 1, q2 = 0 at -l 2).
    assert_eq!(
        all_value(&trec(&["-l", "2", "-m", "num_rel"]), "num_rel"),
        "1"
    );
    // -l 0 counts rel 0 judgments per query, but the -c summary still counts rel > 0 only.
    assert_eq!(
        all_value(&trec(&["-c", "-l", "0", "-m", "num_rel"]), "num_rel"),
        "4"
    );
}

#[test]
fn trec_json_nosummary_omits_all() {
    let out = trec(&["--json", "-n", "-q", "-m", "P.5"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("all").is_none(), "{v}");
    assert!(v.get("per_query").is_some(), "{v}");
    let out = trec(&["--json", "-q", "-m", "P.5"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("all").is_some(), "{v}");
}

/// `trec` on inputs where trec_eval 10.0 itself crashes (so no reference output exists); the
/// expected values are computed by hand below.
fn trec_on(qrels: &str, run: &str, args: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("qrels"), qrels).unwrap();
    std::fs::write(d.path().join("run"), run).unwrap();
    let mut all = vec!["trec", "-q"];
    all.extend_from_slice(args);
    all.extend(["qrels", "run"]);
    let o = routeval_in(d.path(), &all, b"");
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    String::from_utf8(o.stdout).unwrap()
}

fn value(out: &str, measure: &str, qid: &str) -> String {
    out.lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|f| f[0].trim() == measure && f[1] == qid)
        .map(|f| f[2].to_string())
        .unwrap_or_else(|| panic!("no {measure} {qid} in\n{out}"))
}

#[test]
fn trec_first_query_with_only_negative_judgments() {
    // q1 (evaluated first) has only negative judgments: no relevant document, every measure 0,
    // and it still counts in the averages. q2: its one relevant document at rank 1.
    let qrels = "q1 0 d1 -1\nq1 0 d2 -2\nq2 0 d1 1\nq2 0 d3 0\n";
    let run = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d1 1 2.0 r\nq2 Q0 d3 2 1.0 r\n";
    let args = [
        "-m",
        "map",
        "-m",
        "P.2",
        "-m",
        "ndcg",
        "-m",
        "num_rel",
        "-m",
        "num_ret",
        "-m",
        "recip_rank",
        "-m",
        "bpref",
    ];
    let out = trec_on(qrels, run, &args);
    for (m, q1, q2, all) in [
        ("num_ret", "2", "2", "4"),
        ("num_rel", "0", "1", "1"),
        ("map", "0.0000", "1.0000", "0.5000"),
        ("recip_rank", "0.0000", "1.0000", "0.5000"),
        ("P_2", "0.0000", "0.5000", "0.2500"),
        ("ndcg", "0.0000", "1.0000", "0.5000"),
        ("bpref", "0.0000", "1.0000", "0.5000"),
    ] {
        assert_eq!(value(&out, m, "q1"), q1, "{m} q1\n{out}");
        assert_eq!(value(&out, m, "q2"), q2, "{m} q2\n{out}");
        assert_eq!(value(&out, m, "all"), all, "{m} all\n{out}");
    }
}

#[test]
fn trec_dcg_and_ideal_dcg_together() {
    // Ranking d2 (rel 1), d3 (rel 0), d1 (rel 2); gain = relevance level, discount log2(rank+1)
    // from rank 1 (m_ndcg.c):
    //   dcg       = 1/log2(2) + 0 + 2/log2(4)  = 1 + 1           = 2.0000
    //   ideal_dcg = 2/log2(2) + 1/log2(3)      = 2 + 0.63093     = 2.6309
    // With gains 1=3,2=5: dcg = 3 + 5/2 = 5.5000, ideal = 5 + 3/log2(3) = 6.8928.
    let qrels = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\n";
    let run = "q1 Q0 d2 1 3 r\nq1 Q0 d3 2 2 r\nq1 Q0 d1 3 1 r\n";
    let out = trec_on(qrels, run, &["-m", "dcg", "-m", "ideal_dcg"]);
    assert_eq!(value(&out, "dcg", "q1"), "2.0000", "{out}");
    assert_eq!(value(&out, "ideal_dcg", "q1"), "2.6309", "{out}");
    assert_eq!(value(&out, "dcg", "all"), "2.0000", "{out}");
    assert_eq!(value(&out, "ideal_dcg", "all"), "2.6309", "{out}");
    let out = trec_on(
        qrels,
        run,
        &["-m", "dcg.1=3,2=5", "-m", "ideal_dcg.1=3,2=5"],
    );
    assert_eq!(value(&out, "dcg_1=3,2=5", "q1"), "5.5000", "{out}");
    assert_eq!(value(&out, "ideal_dcg_1=3,2=5", "q1"), "6.8928", "{out}");
}
