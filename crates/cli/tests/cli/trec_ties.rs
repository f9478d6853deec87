//! `routeval trec --ties` end to end: the text lines after trec_eval's (which stay byte for
//! byte), the JSON "ties" object (the other keys' bytes unchanged), `-M` through a tie group,
//! and unsupported measures.

use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
}

fn data(name: &str) -> String {
    format!(
        "{}/../../examples/data/trec/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn run(args: &[&str]) -> Output {
    bin().arg("trec").args(args).output().expect("run routeval")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn text_appends_one_line_per_changed_value() {
    let (q, r) = (data("qrels.txt"), data("run-ties.txt"));
    let plain = stdout(&run(&[&q, &r]));
    let o = run(&["--ties", &q, &r]);
    let with = stdout(&o);
    // trec_eval's lines first, unchanged; then the tie lines.
    let extra = with
        .strip_prefix(&plain)
        .expect("trec_eval's lines unchanged");
    assert_eq!(
        extra,
        "map  0.6417  [0.6139, 0.6667]  expected 0.6403  (2 queries have ties that matter)\n\
         Rprec  0.5417  [0.5417, 0.6667]  expected 0.6042  (1 query has ties that matter)\n\
         recip_rank  0.7500  [0.6667, 0.7500]  expected 0.7083  (1 query has ties that matter)\n"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("note: --ties: no exact range for gm_map, iprec_at_recall (not reported)"),
        "{err}"
    );
}

#[test]
fn no_changed_value_prints_a_note_only() {
    let (q, r) = (data("qrels.txt"), data("run.txt"));
    let plain = stdout(&run(&["-m", "map", &q, &r]));
    let o = run(&["--ties", "-m", "map", &q, &r]);
    assert_eq!(stdout(&o), plain);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no tie in") && err.contains("changes any reported measure"),
        "{err}"
    );
    assert!(!err.contains("no exact range"), "{err}");
}

#[test]
fn json_adds_a_ties_object_after_the_other_keys() {
    let (q, r) = (data("qrels.txt"), data("run-ties.txt"));
    let args = [
        "--json",
        "-q",
        "-m",
        "P.1,2",
        "-m",
        "recip_rank",
        "-m",
        "num_ret",
        "-m",
        "G",
        &q,
        &r,
    ];
    let plain = stdout(&run(&args));
    let mut with_args = vec!["--ties"];
    with_args.extend_from_slice(&args);
    let with = stdout(&run(&with_args));
    // The other keys' bytes are unchanged: the plain object is a prefix up to its last `}`.
    let head = plain.trim_end().strip_suffix('}').unwrap();
    let rest = with
        .strip_prefix(head)
        .expect("other keys unchanged")
        .to_string();
    assert!(rest.starts_with(",\"ties\":{"), "{rest}");
    let v: serde_json::Value = serde_json::from_str(&with).unwrap();
    let t = &v["ties"];
    let keys: Vec<&str> = t.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "all",
            "queries_affected",
            "queries_affected_per_measure",
            "unsupported",
            "per_query"
        ]
    );
    assert_eq!(t["queries_affected"], 1);
    assert_eq!(t["unsupported"], serde_json::json!(["G"]));
    // q2: java-gc (rel 0) alone at 7, then rust-lifetimes (rel 3) tied with go-channels (not
    // judged) at 6: the first relevant document is at rank 2 or 3.
    let rr = &t["per_query"]["q2"]["recip_rank"];
    assert_eq!(rr["min"], 1.0 / 3.0);
    assert_eq!(rr["max"], 0.5);
    let e = rr["expected"].as_f64().unwrap();
    assert!((e - (0.5 + 1.0 / 3.0) / 2.0).abs() < 1e-15, "{e}");
    let p2 = &t["per_query"]["q2"]["P_2"];
    assert_eq!(
        (&p2["min"], &p2["max"], &p2["expected"]),
        (
            &serde_json::json!(0.0),
            &serde_json::json!(0.5),
            &serde_json::json!(0.25)
        )
    );
    // Counts stay integers and points; all is the mean over the 2 queries.
    assert_eq!(t["all"]["num_ret"]["min"], 10);
    let e = t["all"]["recip_rank"]["expected"].as_f64().unwrap();
    assert!((e - (1.0 + 5.0 / 12.0) / 2.0).abs() < 1e-15, "{e}");
    assert_eq!(t["queries_affected_per_measure"]["recip_rank"], 1);
    assert_eq!(t["queries_affected_per_measure"]["P_1"], 0);
    assert!(t["queries_affected_per_measure"].get("num_ret").is_none());
    assert!(t["all"].get("G").is_none());
    // Without -q: no per_query anywhere.
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["--ties", "--json", "-m", "map", &q, &r]))).unwrap();
    assert!(v["ties"].get("per_query").is_none());
    assert!(v.get("per_query").is_none());
}

#[test]
fn max_docs_through_differently_judged_ties_is_one_error_line() {
    let (q, r) = (data("qrels.txt"), data("run-ties.txt"));
    // Rank 4 and 5 of q1 tie at 9 (weather-map not judged, ocean-tides rel 3).
    let o = run(&["--ties", "-M", "4", &q, &r]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ")
            && err.contains(
                "run-ties.txt:6: --ties: -M cuts through 2 documents of query 'q1' tied at score 9"
            )
            && err.contains("use -M 5 or more"),
        "{err}"
    );
    // Without --ties, -M 4 is trec_eval's -M.
    assert!(run(&["-M", "4", &q, &r]).status.success());
    // A cut between groups, or through equally judged documents (q1 ranks 2-3, both rel 1;
    // q2's rank 1 stands alone), is fine.
    for m in ["1", "3", "5"] {
        let o = run(&["--ties", "-M", m, "-m", "P.2", &q, &r]);
        assert!(
            o.status.success(),
            "-M {m}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = run(&["--ties", "-M", "2", "-m", "P.2", &q, &r]);
    assert_eq!(o.status.code(), Some(2), "q2's ranks 2-3 are cut");
}

#[test]
fn compare_json_has_a_ties_object_per_run() {
    let q = data("qrels.txt");
    let (a, b) = (data("run.txt"), data("run-ties.txt"));
    let o = bin()
        .args([
            "compare", "--json", "--ties", "-m", "map", "-m", "P.2", "-m", "infAP",
        ])
        .args([&q, &a, &b])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    // compare scores every judged query (-c): q3 counts, so the means are over 3 queries.
    let plain = &runs[0]["ties"];
    assert_eq!(plain["queries_affected"], 0);
    assert_eq!(plain["all"]["P_2"]["min"], plain["all"]["P_2"]["max"]);
    let tied = &runs[1]["ties"];
    assert_eq!(tied["queries_affected"], 2);
    assert_eq!(tied["queries_affected_per_measure"]["P_2"], 1);
    // P_2: q1 1 in every order, q2 0 or 1/2, q3 0.
    assert_eq!(tied["all"]["P_2"]["min"], 1.0 / 3.0);
    assert_eq!(tied["all"]["P_2"]["max"], 0.5);
    assert_eq!(tied["unsupported"], serde_json::json!(["infAP"]));
    assert!(tied.get("per_query").is_none());
    // Without --json, the table gains a "Tie sensitivity" block with the same ranges.
    let o = bin()
        .args(["compare", "--ties", "-m", "P.2", &q, &a, &b])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Tie sensitivity") && text.contains("0.3333") && text.contains("0.5000"),
        "{text}"
    );
}
