//! Issue 16 ("newcomer polish"), end to end through the binary: measure names people type
//! (item 1), one convention for every subcommand (item 2), rag details (item 3) and messages
//! that point at the right thing (item 5). No shared data needed.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(rel: &str) -> String {
    root().join(rel).to_string_lossy().into_owned()
}

/// `routeval ARGS` with `stdin`: (exit code, stdout, stderr).
fn routeval_in(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .env("GQR_CACHE_DIR", "/nonexistent/routeval-test-cache")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut si = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let w = std::thread::spawn(move || {
        let _ = si.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn routeval(args: &[&str]) -> (i32, String, String) {
    routeval_in(args, b"")
}

fn qrels() -> String {
    example("examples/data/trec/qrels.txt")
}

fn run_file() -> String {
    example("examples/data/trec/run.txt")
}

/// A usage or input error: exit `code`, nothing on stdout, exactly one stderr line.
fn one_line_error(r: &(i32, String, String), code: i32) -> &str {
    let (c, out, err) = r;
    assert_eq!(*c, code, "stdout {out}\nstderr {err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    err
}

// ---------------------------------------------------------------------------------------------
// Item 1: names people type.

#[test]
fn trec_accepts_printed_and_at_forms() {
    let (q, r) = (qrels(), run_file());
    let trec = |ms: &[&str]| {
        let mut a = vec!["trec", "-q"];
        for m in ms {
            a.push("-m");
            a.push(m);
        }
        a.push(&q);
        a.push(&r);
        let (code, out, err) = routeval(&a);
        assert_eq!(code, 0, "{ms:?}: {err}");
        out
    };
    // The printed form and the @ forms are the trec_eval measures under trec_eval's names.
    assert_eq!(trec(&["P_10"]), trec(&["P.10"]));
    assert_eq!(
        trec(&["P@5", "nDCG@5", "recall@100", "map@100", "success@1"]),
        trec(&[
            "P.5",
            "ndcg_cut.5",
            "recall.100",
            "map_cut.100",
            "success.1"
        ])
    );
    assert_eq!(trec(&["ndcg_cut@5"]), trec(&["ndcg_cut.5"]));
    assert_eq!(trec(&["NDCG@5", "ndcg@5"]), trec(&["ndcg_cut.5"]));
    assert_eq!(trec(&["MAP", "MRR"]), trec(&["map", "recip_rank"]));
    let out = trec(&["MRR@10"]);
    assert!(
        out.contains(&format!("{:<22}\tall\t0.7500", "recip_rank_cut_10")),
        "{out}"
    );
}

#[test]
fn mrr_at_k_equals_recip_rank_under_max_retrieved() {
    // q1's first relevant doc is at rank 1, q2's at rank 2: cut at 1, q2 scores 0.
    let (q, r) = (qrels(), run_file());
    for k in ["1", "2", "10"] {
        let mrr = format!("MRR@{k}");
        let (code, cut, err) = routeval(&["trec", "-q", "--json", "-m", &mrr, &q, &r]);
        assert_eq!(code, 0, "{err}");
        let (code, limited, err) =
            routeval(&["trec", "-q", "--json", "-M", k, "-m", "recip_rank", &q, &r]);
        assert_eq!(code, 0, "{err}");
        let cut: Value = serde_json::from_str(&cut).unwrap();
        let limited: Value = serde_json::from_str(&limited).unwrap();
        let name = format!("recip_rank_cut_{k}");
        assert_eq!(cut["all"][&name], limited["all"]["recip_rank"], "k={k}");
        for qid in ["q1", "q2"] {
            assert_eq!(
                cut["per_query"][qid][&name], limited["per_query"][qid]["recip_rank"],
                "k={k} {qid}"
            );
        }
    }
    let (_, out, _) = routeval(&["trec", "--json", "-m", "MRR@1", &q, &r]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["all"]["recip_rank_cut_1"], 0.5);
}

#[test]
fn unknown_measure_suggests_and_unknown_flag_keeps_clap_tip() {
    let (q, r) = (qrels(), run_file());
    let res = routeval(&["trec", "-m", "ndcgg@10", &q, &r]);
    let err = one_line_error(&res, 2);
    assert!(
        err.contains("illegal measure 'ndcgg@10' (did you mean 'ndcg@10'?)"),
        "{err}"
    );
    let res = routeval(&["trec", "-m", "bpref@10", &q, &r]);
    assert!(one_line_error(&res, 2).contains("'bpref' has no document cut-off"));
    // clap's "did you mean" survives the one-line error.
    let res = routeval(&["trec", "--qeury-eval", &q, &r]);
    let err = one_line_error(&res, 2);
    assert!(
        err.contains("unexpected argument '--qeury-eval'")
            && err.contains("tip: a similar argument exists: '--query-eval'"),
        "{err}"
    );
    let res = routeval(&["crb", "eval", "--tokenizer", "x"]);
    let err = one_line_error(&res, 2);
    assert!(err.contains("'--tokenizers'"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Item 2: one convention for every subcommand.

const SUBCOMMANDS: &[&[&str]] = &[
    &["trec"],
    &["rag"],
    &["route"],
    &["filter"],
    &["crb"],
    &["crb", "eval"],
    &["crb", "metrics"],
    &["gqr"],
    &["gqr", "export"],
    &["gqr", "score"],
];

#[test]
fn every_subcommand_prints_the_binary_version() {
    let want = env!("CARGO_PKG_VERSION");
    for sub in SUBCOMMANDS {
        let mut a = sub.to_vec();
        a.push("--version");
        let (code, out, err) = routeval(&a);
        assert_eq!(code, 0, "{sub:?}: {err}");
        assert!(
            out.starts_with("routeval") && out.trim_end().ends_with(want),
            "{sub:?}: {out}"
        );
    }
}

#[test]
fn every_help_names_the_output_path_and_json() {
    for sub in SUBCOMMANDS {
        if matches!(sub, [_] if ["crb", "gqr"].contains(&sub[0])) {
            continue; // command groups: no options of their own
        }
        let mut a = sub.to_vec();
        a.push("--help");
        let (code, out, err) = routeval(&a);
        assert_eq!(code, 0, "{sub:?}: {err}");
        assert!(!out.contains("<OUTPUT>"), "{sub:?}: {out}");
        let output = if sub == &["rag"] {
            "--output PATH, -o PATH"
        } else {
            "-o, --output <PATH>"
        };
        assert!(out.contains(output), "{sub:?} lacks {output}:\n{out}");
        assert!(out.contains("--json"), "{sub:?} lacks --json:\n{out}");
    }
}

#[test]
fn route_json_adds_routing_counts() {
    let cfg = example("examples/data/dsl/routes.json");
    let data = example("examples/data/dsl/outputs.jsonl");
    let (code, plain, err) = routeval(&["route", "--config", &cfg, "--data", &data]);
    assert_eq!(code, 0, "{err}");
    let (code, json, err) = routeval(&["route", "--config", &cfg, "--data", &data, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(plain, json, "--json changes the output");
    assert_eq!(json.lines().count(), 1, "{json}");
    let plain: Value = serde_json::from_str(&plain).unwrap();
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["metrics"], plain);
    let n = std::fs::read_to_string(&data)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    assert_eq!(v["instances"], n);
    let routing = v["routing"][0].as_object().unwrap();
    assert!(routing["selected"].as_object().unwrap().len() > 1, "{v}");
    assert!(routing["unmatched"].is_u64(), "{v}");
}

#[test]
fn filter_json_without_count_is_refused_with_a_reason() {
    let info = example("examples/data/dsl/extra_info.jsonl");
    let res = routeval(&["filter", "--json", "--where", "{}", &info]);
    assert!(one_line_error(&res, 2).contains("--json goes with --count"));
    let (code, out, _) = routeval(&["filter", "--json", "--count", "--where", "{}", &info]);
    assert_eq!(code, 0);
    assert!(serde_json::from_str::<Value>(&out).unwrap()["count"].is_u64());
}

/// A tiny GQR build directory (two ID rows, one OOD row).
fn tiny_build(dir: &Path, id_tail: &[u8]) {
    let manifest = r#"{"build": "gqr", "registry_blake3": "-", "files": [
        {"path": "id_test.jsonl", "rows": 2, "blake3": "-"},
        {"path": "ood_test.jsonl", "rows": 1, "blake3": "-"}],
        "missing": [], "datasets": [], "warnings": []}"#;
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    let mut id = b"{\"id\": \"id_test/law/0\", \"text\": \"a contract\", \"label\": 0, \"domain\": \"law\", \"dataset\": \"law\"}\n".to_vec();
    id.extend_from_slice(id_tail);
    std::fs::write(dir.join("id_test.jsonl"), id).unwrap();
    let ood = "{\"id\": \"ood_test/jigsaw/0\", \"text\": \"hi\", \"label\": 3, \"domain\": \"ood\", \"dataset\": \"jigsaw\"}\n";
    std::fs::write(dir.join("ood_test.jsonl"), ood).unwrap();
}

const FINANCE_ROW: &[u8] = b"{\"id\": \"id_test/finance/0\", \"text\": \"a loan\", \"label\": 1, \"domain\": \"finance\", \"dataset\": \"finance\"}\n";

#[test]
fn gqr_export_data_version_json_summary_and_old_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let build = dir.path().join("build");
    std::fs::create_dir_all(&build).unwrap();
    tiny_build(&build, FINANCE_ROW);
    let b = build.to_str().unwrap();
    let out_file = dir.path().join("id.jsonl");
    let o = out_file.to_str().unwrap();
    let (code, out, err) = routeval(&[
        "gqr",
        "export",
        "--split",
        "id_test",
        "--data-version",
        "v2",
        "--build-dir",
        b,
        "-o",
        o,
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["split"], "id_test");
    assert_eq!(v["data_version"], "v2");
    assert_eq!(v["rows"], 2);
    assert_eq!(v["files"], serde_json::json!(["id_test"]));
    assert_eq!(v["output"], o);
    assert_eq!(
        std::fs::read_to_string(&out_file).unwrap().lines().count(),
        2
    );
    // --json needs -o: stdout would otherwise mix rows and summary.
    let res = routeval(&[
        "gqr",
        "export",
        "--split",
        "id_test",
        "--build-dir",
        b,
        "--json",
    ]);
    assert!(one_line_error(&res, 2).contains("need -o/--output"));
    // The old spelling still works, with a deprecation line on stderr.
    let (code, out, err) = routeval(&[
        "gqr",
        "export",
        "--split",
        "id_test",
        "--version",
        "v1",
        "--build-dir",
        b,
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 2);
    assert!(
        err.contains("deprecated") && err.contains("--data-version v1"),
        "{err}"
    );
    // ... and is not in --help.
    let (_, help, _) = routeval(&["gqr", "export", "--help"]);
    assert!(help.contains("--data-version <VERSION>"), "{help}");
    assert!(!help.contains("--version <"), "{help}");
}

// ---------------------------------------------------------------------------------------------
// Item 3: rag details.

fn rag_cases(n: usize) -> String {
    let cases: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"query": "question {i} about tides", "retrieved": ["tides are driven by the moon", "bread recipes"], "answer": "the moon drives tides"}}"#
            )
        })
        .collect();
    format!("[{}]", cases.join(",\n"))
}

#[test]
fn rag_weakest_zero_lists_no_case() {
    let cases = rag_cases(4);
    let (code, out, err) = routeval_in(&["rag", "-"], cases.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("weakest cases:") && out.contains("worst 3 case(s) in detail:"));
    let (code, out, err) = routeval_in(&["rag", "-", "--weakest", "0"], cases.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains("weakest cases:") && !out.contains("in detail"),
        "{out}"
    );
}

#[test]
fn rag_groups_repeated_notes_in_the_summary_only() {
    let cases = rag_cases(12);
    let (code, out, err) = routeval_in(&["rag", "-"], cases.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("  - 12 cases: recall_at_k excluded - without 'relevant' ids"),
        "{out}"
    );
    assert!(!out.contains("  - case 1: recall_at_k"), "{out}");
    let (_, json, _) = routeval_in(&["rag", "-", "--json"], cases.as_bytes());
    let v: Value = serde_json::from_str(&json).unwrap();
    let notes = v["notes"].as_array().unwrap();
    let recall_notes = notes
        .iter()
        .filter(|n| {
            n.as_str()
                .unwrap()
                .contains("recall_at_k excluded - without")
        })
        .count();
    assert_eq!(recall_notes, 12, "JSON keeps every note");
    // The summary's header still counts every note.
    assert!(out.contains(&format!("notes ({}):", notes.len())), "{out}");
}

#[test]
fn rag_rows_have_one_schema_and_failure_reasons() {
    // No ground_truth anywhere: answer_correctness is still a column, empty.
    let cases = rag_cases(2);
    let (code, csv, err) = routeval_in(&["rag", "-", "--format", "csv"], cases.as_bytes());
    assert_eq!(code, 0, "{err}");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let ac = header
        .iter()
        .position(|c| *c == "answer_correctness")
        .unwrap();
    let fr = header.iter().position(|c| *c == "failure_reasons").unwrap();
    assert_eq!(header[fr - 1], "failures");
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    for row in rd.records() {
        assert_eq!(&row.unwrap()[ac], "");
    }
    // A case with ground_truth: same header.
    let with_gt = r#"[{"query": "q", "retrieved": ["d1"], "relevant": ["d2"], "answer": "x", "ground_truth": "y"}]"#;
    let (_, csv2, _) = routeval_in(&["rag", "-", "--format", "csv"], with_gt.as_bytes());
    assert_eq!(csv.lines().next(), csv2.lines().next());
    let mut rd = csv::Reader::from_reader(csv2.as_bytes());
    let row = rd.records().next().unwrap().unwrap();
    let reasons = &row[fr];
    assert!(
        reasons.contains("nothing relevant in the top 5") && reasons.contains("; "),
        "{reasons}"
    );
    assert!(!reasons.contains("case 0"), "{reasons}");
}

#[test]
fn rag_embed_url_without_model_names_the_missing_flag() {
    let (code, out, err) = routeval(&["rag", "x.json", "--embed-url", "http://127.0.0.1:9/v1"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains("argument --embed-url: --embed-model NAME is required"),
        "{err}"
    );
    assert!(
        err.contains("[--embed-url URL] [--embed-model NAME]"),
        "{err}"
    );
    let (code, _, err) = routeval(&["rag", "x.json", "--embed-model", "m"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("argument --embed-model: goes with --embed-url"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Item 5: messages that point at the right thing.

#[test]
fn a_directory_given_as_a_file_says_so_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let r = run_file();
    let res = routeval(&["trec", d, &r]);
    assert!(one_line_error(&res, 2).contains("is a directory, not a file"));
    let res = routeval(&["filter", "--where", "{}", d]);
    assert!(one_line_error(&res, 2).contains("is a directory, not a file"));
    let res = routeval(&["route", "--config", d, "--data", d]);
    assert!(one_line_error(&res, 2).contains("is a directory, not a file"));
    let res = routeval(&["crb", "metrics", "--cases", d]);
    assert!(one_line_error(&res, 2).contains("is a directory, not a file"));
    let res = routeval(&["rag", d]);
    assert!(one_line_error(&res, 1).contains("is a directory, not a file"));
    // A /dev/fd path that is not open here.
    let res = routeval(&["trec", "/dev/fd/97", &r]);
    assert!(one_line_error(&res, 2).contains("no file descriptor 97 is open"));
    // A missing file is still "does not exist" for rag (the reference's message).
    let res = routeval(&["rag", "/nonexistent/cases.json"]);
    assert!(one_line_error(&res, 1).contains("does not exist"));
}

#[cfg(unix)]
#[test]
fn a_fifo_is_read_as_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("run.fifo");
    routeval_test_support::fifo::mkfifo(&fifo);
    let body = std::fs::read(run_file()).unwrap();
    let f2 = fifo.clone();
    let writer = std::thread::spawn(move || {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f2)
            .unwrap()
            .write_all(&body)
            .unwrap();
    });
    let (code, out, err) = routeval(&["trec", "-m", "map", &qrels(), fifo.to_str().unwrap()]);
    writer.join().unwrap();
    assert_eq!(code, 0, "{err}");
    let (_, want, _) = routeval(&["trec", "-m", "map", &qrels(), &run_file()]);
    assert_eq!(out, want);
}

#[test]
fn invalid_utf8_in_predictions_and_split_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let build = dir.path().join("build");
    std::fs::create_dir_all(&build).unwrap();
    tiny_build(&build, FINANCE_ROW);
    let b = build.to_str().unwrap();
    let pf = dir.path().join("preds.jsonl");
    std::fs::write(
        &pf,
        b"{\"id\": \"id_test/law/0\", \"label\": 0}\n{\"id\": \"id_test/finance/0\xff\", \"label\": 1}\n",
    )
    .unwrap();
    let p = pf.to_str().unwrap();
    let res = routeval(&["gqr", "score", "--predictions", p, "--build-dir", b]);
    let err = one_line_error(&res, 2);
    assert!(
        err.contains("preds.jsonl:2: invalid UTF-8 at byte 26 of the line"),
        "{err}"
    );
    // The same in a split file of the build.
    tiny_build(
        &build,
        b"{\"id\": \"id_test/finance/0\", \"text\": \"a lo\xc3an\"}\n",
    );
    let res = routeval(&["gqr", "export", "--split", "id_test", "--build-dir", b]);
    let err = one_line_error(&res, 2);
    assert!(
        err.contains("id_test.jsonl:2: invalid UTF-8 at byte"),
        "{err}"
    );
}

#[test]
fn a_missing_from_directory_says_it_is_missing() {
    let res = routeval(&[
        "gqr",
        "export",
        "--split",
        "id_test",
        "--from",
        "/nonexistent/gqr-mirror",
    ]);
    let err = one_line_error(&res, 2);
    assert!(
        err.contains("--from /nonexistent/gqr-mirror: no such directory"),
        "{err}"
    );
    assert!(!err.contains("missing sources"), "{err}");
}

#[test]
fn judged_queries_without_results_get_one_stderr_note() {
    let (q, r) = (qrels(), run_file());
    // q3 is judged but has no results in the example run.
    let (code, out, err) = routeval(&["trec", "-m", "map", &q, &r]);
    assert_eq!(code, 0);
    assert_eq!(
        out, "map                   \tall\t0.6417\n",
        "stdout stays trec_eval's"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("note: 1 judged query in ")
            && err.contains("left out of the averages (num_q = 2); -c scores them 0"),
        "{err}"
    );
    let (code, out, err) = routeval(&["trec", "-c", "-m", "map", &q, &r]);
    assert_eq!(code, 0);
    assert_eq!(out, "map                   \tall\t0.4278\n");
    assert!(
        err.contains("with -c they score 0 and are averaged in (num_q = 3)"),
        "{err}"
    );
    // A run covering every judged query: no note.
    let mut full = std::fs::read_to_string(&r).unwrap();
    full.push_str("q3 Q0 x 1 1.0 bm25-demo\n");
    let (code, _, err) = routeval_in(&["trec", "-m", "map", &q, "-"], full.as_bytes());
    assert_eq!(code, 0);
    assert!(err.is_empty(), "{err}");
}
