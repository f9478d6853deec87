//! `routeval rag` end to end: every golden file in `$ROUTEVAL_SHARED/golden/rag/cases/`
//! through the real binary (stdout/stderr byte-equal to rag-quality-check's CLI with the
//! program name read as `routeval rag`, exit status equal; embedding files through
//! `--embed-cmd` with the toy embedding example), plus bad input, `--strict`, rows output, and
//! the HTTP embedder against a mock server on 127.0.0.1 (retries on 429/500, 404, wrong
//! dimension, timeout, key never printed).

#[path = "../../examples/toy_embed.rs"]
mod toy_embed;

use routeval_retrieval_metrics::rag::{PyValue, pyfmt, pyjson};
use routeval_test_support::JsonCompare;
use routeval_test_support::golden::{Count, assert_count};
use routeval_test_support::pydump;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

const BIN: &str = env!("CARGO_BIN_EXE_routeval");

fn shared() -> Option<PathBuf> {
    routeval_core::fixtures::shared_dir("rag_cli golden test")
}

/// The toy embedding command built by `cargo test` (examples are compiled with the tests).
fn toy_cmd(kind: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let bin = dir.join("examples").join("toy_embed");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build -p routeval-cli --examples`",
        bin.display()
    );
    format!("{} {kind}", bin.display())
}

fn run(args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("rag")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut si = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = si.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// `json.dumps(value, ensure_ascii=False)` of a Python-decoded value.
fn dumps(v: &PyValue, out: &mut String) {
    match v {
        PyValue::Null => out.push_str("null"),
        PyValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        PyValue::Int(i) => out.push_str(&i.to_string()),
        PyValue::BigInt(s) => out.push_str(s),
        PyValue::Float(f) => out.push_str(&pyfmt::json_float(*f)),
        PyValue::Str(s) => pyfmt::json_str_into(out, s),
        PyValue::List(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dumps(x, out);
            }
            out.push(']');
        }
        PyValue::Dict(items) => {
            out.push('{');
            for (i, (k, x)) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                pyfmt::json_str_into(out, k);
                out.push_str(": ");
                dumps(x, out);
            }
            out.push('}');
        }
    }
}

/// What `rag --json` must print for a golden file: `json.dumps(expected_to_dict, indent=2,
/// ensure_ascii=False) + "\n"` (the golden README: the generator checked the reference's
/// `--json` bytes equal that), written by the test-support crate's own `json.dumps`.
fn expected_json(golden: &Value) -> String {
    let mut s = pydump::dumps(&golden["expected_to_dict"], Some(2), false);
    s.push('\n');
    s
}

/// Compare `--json` stdout with [`expected_json`] byte for byte; on a difference, also report
/// the strict JSON comparison's paths (when the output parses).
fn check_json_bytes(stdout: &[u8], golden: &Value, what: &str, errs: &mut Vec<String>) {
    let want = expected_json(golden);
    if stdout == want.as_bytes() {
        return;
    }
    let detail = match serde_json::from_slice::<Value>(stdout) {
        Ok(ours) => JsonCompare::strict()
            .diff(&golden["expected_to_dict"], &ours)
            .join("; "),
        Err(e) => format!("not JSON: {e}"),
    };
    let got = String::from_utf8_lossy(stdout);
    let line = got
        .lines()
        .zip(want.lines())
        .position(|(a, b)| a != b)
        .map_or(String::new(), |i| {
            format!(
                " first differing line {}: {:?} vs {:?}",
                i + 1,
                got.lines().nth(i).unwrap_or_default(),
                want.lines().nth(i).unwrap_or_default()
            )
        });
    errs.push(format!("{what} --json bytes differ:{line} [{detail}]"));
}

fn rename(s: &str) -> String {
    s.replace("rag-quality-check", "routeval rag")
}

/// The reference's summary text with routeval's one documented summary deviation applied
/// (README "Differences from rag-quality-check 0.1.0"; issue 16): with more than 10 notes,
/// where the reference lists the first 10 and `... N more note(s)`, routeval lists notes with
/// the same text once (`23 cases: TEXT`; a case note is `case N: TEXT`), first appearance
/// first, up to 10 lines, then `... M more note(s)` for the rest. Rebuilt here from the
/// reference's full notes list (`to_dict()["notes"]`); everything else must stay byte-equal.
fn with_grouped_notes(reference: &str, notes: &[Value]) -> String {
    let n = notes.len();
    if n <= 10 {
        return reference.to_string();
    }
    let case_text = |note: &str| -> Option<String> {
        let rest = note.strip_prefix("case ")?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0)
            .then(|| rest[digits..].strip_prefix(": ").map(str::to_string))
            .flatten()
    };
    // (text to group by, first note, count)
    let mut groups: Vec<(Option<String>, String, usize)> = Vec::new();
    for note in notes {
        let note = note.as_str().unwrap();
        let text = case_text(note);
        match groups.iter_mut().find(|g| text.is_some() && g.0 == text) {
            Some(g) => g.2 += 1,
            None => groups.push((text, note.to_string(), 1)),
        }
    }
    let mut block = format!("notes ({n}):\n");
    let mut shown = 0;
    for (text, first, count) in groups.iter().take(10) {
        shown += count;
        let line = match (count, text) {
            (1, _) | (_, None) => first.clone(),
            (c, Some(t)) => format!("{c} cases: {t}"),
        };
        block.push_str(&format!("  - {line}\n"));
    }
    if n > shown {
        block.push_str(&format!("  - ... {} more note(s)\n", n - shown));
    }
    let head = format!("notes ({n}):\n");
    let tail = format!("  - ... {} more note(s)\n", n - 10);
    let start = reference.find(&head).expect("reference notes block");
    let end = start
        + reference[start..]
            .find(&tail)
            .expect("reference notes tail")
        + tail.len();
    format!("{}{block}{}", &reference[..start], &reference[end..])
}

#[test]
fn grouping_rebuild_is_identity_up_to_ten_notes() {
    let notes: Vec<Value> = (0..10)
        .map(|i| Value::from(format!("case {i}: same")))
        .collect();
    assert_eq!(with_grouped_notes("x", &notes), "x");
    let mut notes: Vec<Value> = (0..12)
        .map(|i| Value::from(format!("case {i}: same")))
        .collect();
    notes.push(Value::from("a run note"));
    let reference = format!(
        "head\nnotes (13):\n{}  - ... 3 more note(s)\nfailures: none.",
        (0..10)
            .map(|i| format!("  - case {i}: same\n"))
            .collect::<String>()
    );
    assert_eq!(
        with_grouped_notes(&reference, &notes),
        "head\nnotes (13):\n  - 12 cases: same\n  - a run note\nfailures: none."
    );
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn rag_cli_golden_cases() {
    let Some(root) = shared() else { return };
    let dir = root.join("golden/rag/cases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no golden files in {}", dir.display());
    let log_dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut n_cli = 0;
    let mut n_embed = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let raw = std::fs::read_to_string(f).unwrap();
        let py = pyjson::parse(&raw).unwrap();
        let golden: Value = serde_json::from_str(&raw).unwrap();
        let mut stdin = String::new();
        dumps(py.get("input").unwrap().get("cases").unwrap(), &mut stdin);
        let mut errs = Vec::new();
        if let Some(cli) = golden.get("expected_cli") {
            n_cli += 1;
            let argv: Vec<&str> = cli["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            let out = run(&argv, stdin.as_bytes(), &[]);
            let notes = golden["expected_to_dict"]["notes"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let want_out = with_grouped_notes(&rename(cli["stdout"].as_str().unwrap()), &notes);
            let want_err = rename(cli["stderr"].as_str().unwrap());
            if String::from_utf8_lossy(&out.stdout) != want_out {
                errs.push(format!(
                    "stdout differs:\n--- ours\n{}\n--- expected\n{want_out}",
                    String::from_utf8_lossy(&out.stdout)
                ));
            }
            if String::from_utf8_lossy(&out.stderr) != want_err {
                errs.push(format!(
                    "stderr {:?} != {want_err:?}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            let code = cli["exit_code"].as_i64().unwrap() as i32;
            if out.status.code() != Some(code) {
                errs.push(format!("exit {:?} != {code}", out.status.code()));
            }
            if code == 0 {
                // --json prints to_dict() (values compared; the generator checked the
                // reference's --json bytes equal json.dumps(expected_to_dict)).
                let mut a: Vec<&str> = argv.clone();
                a.push("--json");
                let out = run(&a, stdin.as_bytes(), &[]);
                check_json_bytes(&out.stdout, &golden, "cli", &mut errs);
            }
        }
        if let Some(kind) = golden["input"]["embed"].as_str() {
            n_embed += 1;
            let log = log_dir.path().join(format!("{name}.log"));
            let log_s = log.to_string_lossy().to_string();
            // Python `str()` of the recorded values (as the generator's argv would spell them).
            let input = py.get("input").unwrap();
            let k = format!("--k={}", input.get("k").unwrap().py_str());
            let t = format!("--threshold={}", input.get("threshold").unwrap().py_str());
            let cmd = toy_cmd(kind);
            let args = ["-", &k, &t, "--embed-cmd", &cmd, "--json"];
            let out = run(&args, stdin.as_bytes(), &[("TOY_EMBED_LOG", &log_s)]);
            match golden["expected_error"].as_str() {
                Some(msg) => {
                    let want = format!("routeval rag: error: {msg}\n");
                    if String::from_utf8_lossy(&out.stderr) != want || out.status.code() != Some(1)
                    {
                        errs.push(format!(
                            "embed error: {:?} {:?}",
                            out.status.code(),
                            String::from_utf8_lossy(&out.stderr)
                        ));
                    }
                }
                None => {
                    if out.status.code() != Some(0) {
                        errs.push(format!(
                            "embed --json exit {:?}; stderr {}",
                            out.status.code(),
                            String::from_utf8_lossy(&out.stderr)
                        ));
                    }
                    check_json_bytes(&out.stdout, &golden, "embed", &mut errs);
                    // Text mode: the summary is the reference's (program name aside).
                    let args = ["-", &k, &t, "--embed-cmd", &cmd];
                    let out = run(&args, stdin.as_bytes(), &[]);
                    let text = String::from_utf8_lossy(&out.stdout).to_string();
                    let notes = golden["expected_to_dict"]["notes"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default();
                    let want = with_grouped_notes(
                        &rename(golden["expected_summary"].as_str().unwrap()),
                        &notes,
                    );
                    if !text.starts_with(&want) || out.status.code() != Some(0) {
                        errs.push(format!(
                            "embed summary differs:\n{text}\n--- expected\n{want}"
                        ));
                    }
                }
            }
            let calls: Vec<Value> = std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let want_calls = golden
                .get("expected_embed_calls")
                .cloned()
                .unwrap_or(Value::Array(vec![]));
            if Value::Array(calls.clone()) != want_calls {
                errs.push(format!("embed calls {calls:?} != {want_calls}"));
            }
        }
        if !errs.is_empty() {
            failures.push(format!("{name}:\n  {}", errs.join("\n  ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden file(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Count guard: 124 of the README's 166 files are visible (42 are held back and may be
    // added to the folder), 111 with a CLI record and 13 with a toy embedding: lower bounds.
    assert_count("rag golden files", files.len(), Count::AtLeast(124));
    assert_count("rag golden CLI files", n_cli, Count::AtLeast(111));
    assert_count("rag golden embedding files", n_embed, Count::AtLeast(13));
    assert_count(
        "rag golden files with neither a CLI record nor an embedding",
        files.len() - n_cli - n_embed,
        Count::Exact(0),
    );
}

fn cases_file(dir: &std::path::Path, body: &str) -> String {
    let p = dir.join("cases.json");
    std::fs::write(&p, body).unwrap();
    p.to_string_lossy().to_string()
}

const QUICKSTART: &str = r#"[{"query": "reset my password", "retrieved": ["p_reset", "p_billing"], "relevant": ["p_reset"]},
 {"query": "cancel my plan", "retrieved": ["p_faq", "p_billing"], "relevant": ["p_cancel"]}]"#;

#[test]
fn exit_statuses_and_strict() {
    let d = tempfile::tempdir().unwrap();
    let f = cases_file(d.path(), QUICKSTART);
    let ok = run(&[&f, "--k", "2"], b"", &[]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "failures alone do not fail the run"
    );
    let strict = run(&[&f, "--k", "2", "--strict"], b"", &[]);
    assert_eq!(strict.status.code(), Some(3));
    assert_eq!(strict.stdout, ok.stdout, "--strict prints the same report");
    let good = r#"[{"query": "q", "retrieved": ["a"], "relevant": ["a"]}]"#;
    let g = run(&["-", "--strict"], good.as_bytes(), &[]);
    assert_eq!(g.status.code(), Some(0));
}

#[test]
fn argparse_style_usage_errors() {
    for (args, msg) in [
        (
            vec!["x.json", "--k", "x"],
            "argument --k: invalid int value: 'x'",
        ),
        (
            vec!["x.json", "--threshold", "hi"],
            "argument --threshold: invalid float value: 'hi'",
        ),
        (vec![], "the following arguments are required: CASES"),
        (vec!["x.json", "--bogus"], "unrecognized arguments: --bogus"),
        (
            vec!["x.json", "--format", "xml"],
            "argument --format: invalid choice: 'xml' (choose from 'csv', 'jsonl', 'md')",
        ),
    ] {
        let out = run(&args, b"", &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        // rag-quality-check's usage block, program name renamed.
        assert!(
            err.starts_with(
                "usage: routeval rag [-h] [--k K] [--threshold THRESHOLD] [--weakest N]\n                         [--json] [--output PATH] [--version]\n                         CASES\n"
            ),
            "{err}"
        );
        assert!(
            err.ends_with(&format!("routeval rag: error: {msg}\n")),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    // argparse prefixes and `=` forms.
    let out = run(&["-", "--thr=0.4", "--we", "0", "--js"], b"[]", &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let help = run(&["--help"], b"", &[]);
    let text = String::from_utf8_lossy(&help.stdout);
    for m in [
        "precision_at_k",
        "recall_at_k",
        "mrr",
        "ndcg_at_k",
        "hit_rate",
        "groundedness",
        "citation_coverage",
        "answer_relevance",
        "answer_correctness",
    ] {
        assert!(text.contains(&format!("  {m:<19} ")), "--help lacks {m}");
    }
}

#[test]
fn bad_input_is_one_clear_error() {
    for (input, msg) in [
        ("", "standard input is empty; expected JSON cases"),
        (
            "{\"query\": \"q\"}\n{\"query\": ",
            "standard input line 2 is not valid JSON (Expecting value: line 1 column 10 (char 9))",
        ),
        (
            "{\"query\": \"q\"}\n[1]\n",
            "standard input line 2 is not a JSON object",
        ),
        (
            "[{\"query\": \"q\"}, 3]",
            "standard input: case 1 is not a JSON object",
        ),
        (
            "42",
            "standard input must hold a list of case objects, got int",
        ),
        (
            "[{\"query\": \"q\", \"retrieved\": 5}]",
            "case 0: 'retrieved' must be a list, got int",
        ),
        ("[{\"query\": \"q\", \"retrieved\": [NaN]}]", ""),
        (
            "\u{feff}[]",
            "standard input line 1 is not valid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0))",
        ),
        (
            "[{\"query\": \"q\", \"relevant\": {\"a\": \"high\"}}]",
            "relevance gain for 'a' is not a number: 'high'",
        ),
    ] {
        let out = run(&["-"], input.as_bytes(), &[]);
        if msg.is_empty() {
            assert_eq!(
                out.status.code(),
                Some(0),
                "{input}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{input}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("routeval rag: error: {msg}\n")
        );
        assert!(out.stdout.is_empty());
    }
    // Nesting: 992 containers with the outermost counted pass, 993 end where the
    // reference's `RecursionError` does, as one error line; in the array form (streamed)
    // and in JSON Lines alike.
    let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    for (total, ok) in [(992, true), (993, false)] {
        let array = format!(r#"[{{"query": "q", "x": {}}}]"#, nested(total - 2));
        // The deep case on line 2: the whole text fails as one value ("Extra data"), so
        // the lines are read one by one and line 2 meets the limit.
        let lines = format!(
            "{{\"query\": \"q\"}}\n{{\"query\": \"q\", \"x\": {}}}\n",
            nested(total - 1)
        );
        for input in [array, lines] {
            let out = run(&["-"], input.as_bytes(), &[]);
            if ok {
                assert_eq!(out.status.code(), Some(0), "{total}");
            } else {
                assert_eq!(out.status.code(), Some(1), "{total}");
                assert_eq!(
                    String::from_utf8_lossy(&out.stderr),
                    "routeval rag: error: maximum recursion depth exceeded while decoding a JSON array from a unicode string\n"
                );
            }
        }
    }
    // A `\uXXXX` escape that ends a line is an invalid escape, as in CPython.
    let out = run(
        &["-"],
        "{\"query\": \"q\"}\n{\"query\": \"\\u00e9\n".as_bytes(),
        &[],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "routeval rag: error: standard input line 2 is not valid JSON (Invalid \\uXXXX escape: line 1 column 13 (char 12))\n"
    );
    let out = run(&["/nonexistent/cases.json"], b"", &[]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "routeval rag: error: '/nonexistent/cases.json' does not exist\n"
    );
    let out = run(
        &["-", "--output", "/nonexistent/dir/r.json"],
        QUICKSTART.as_bytes(),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "routeval rag: error: [Errno 2] No such file or directory: '/nonexistent/dir/r.json'\n"
    );
}

/// A graded gain that is a huge integer: within the float range it is a gain like any other
/// (Python's `float(10**23)`, the reference's behaviour); beyond it (where the reference crashes
/// with `OverflowError`) one `error:` line naming the case, exit 1, on both input paths.
#[test]
fn huge_integer_gain() {
    let big = r#"[{"query": "q", "retrieved": ["d1", "d2"], "relevant": {"d1": 100000000000000000000000, "d2": 1}}]"#;
    let out = run(&["-", "--json"], big.as_bytes(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["metrics"]["ndcg_at_k"], 1.0);
    assert_eq!(v["per_case"][0]["n_relevant"], 2);
    let huge = "9".repeat(400);
    let array = format!(
        r#"[{{"query": "q", "retrieved": ["d1"], "relevant": ["d1"]}},
            {{"query": "q", "retrieved": ["d1"], "relevant": {{"d1": {huge}}}}}]"#
    );
    let lines = format!(
        "{{\"query\": \"q\", \"retrieved\": [\"d1\"], \"relevant\": [\"d1\"]}}\n\
         {{\"query\": \"q\", \"retrieved\": [\"d1\"], \"relevant\": {{\"d1\": -{huge}}}}}\n"
    );
    for input in [array, lines] {
        let out = run(&["-"], input.as_bytes(), &[]);
        assert_eq!(out.status.code(), Some(1), "{input}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "routeval rag: error: case 1: relevance gain for 'd1' is an integer too large for a float (400 digits)\n"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn output_and_rows() {
    let d = tempfile::tempdir().unwrap();
    let f = cases_file(d.path(), QUICKSTART);
    let txt = d.path().join("r.txt").to_string_lossy().to_string();
    let out = run(&[&f, "--k", "2", "--output", &txt], b"", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(stdout.ends_with(&format!("\n  wrote the report to {txt}\n")));
    let written = std::fs::read_to_string(&txt).unwrap();
    assert_eq!(format!("{written}  wrote the report to {txt}\n"), stdout);
    let js = d.path().join("r.JSON").to_string_lossy().to_string();
    let out = run(&[&f, "--k", "2", "-o", &js, "--json"], b"", &[]);
    assert_eq!(std::fs::read(&js).unwrap(), out.stdout);
    let csv = run(&[&f, "--k", "2", "--format", "csv"], b"", &[]);
    let csv = String::from_utf8_lossy(&csv.stdout).to_string();
    let mut lines = csv.lines();
    // Every metric has a column whether or not a case produced it (issue 16: one schema for
    // every file), then failures and failure_reasons.
    assert_eq!(
        lines.next().unwrap(),
        "index,query,n_retrieved,n_unique,n_relevant,estimated,score,precision_at_k,recall_at_k,mrr,ndcg_at_k,hit_rate,groundedness,citation_coverage,answer_relevance,answer_correctness,failures,failure_reasons"
    );
    assert_eq!(
        lines.next().unwrap(),
        "0,reset my password,2,2,1,False,0.9,0.5,1.0,1.0,1.0,1.0,,,,,0,"
    );
    assert_eq!(
        lines.next().unwrap(),
        "1,cancel my plan,2,2,1,False,0.0,0.0,0.0,0.0,0.0,0.0,,,,,1,nothing relevant in the top 2"
    );
    let jl = run(&[&f, "--k", "2", "--format", "jsonl"], b"", &[]);
    let rows: Vec<Value> = String::from_utf8_lossy(&jl.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["failures"], 1);
    assert_eq!(
        rows[1]["failure_reasons"],
        serde_json::json!(["nothing relevant in the top 2"])
    );
    assert_eq!(rows[0]["failure_reasons"], serde_json::json!([]));
    assert_eq!(rows[0]["answer_correctness"], Value::Null);
    assert_eq!(rows[0]["score"], 0.9);
}

/// `-o PATH` is streamed into its temporary file: every kind of output there equals what
/// stdout gets without `-o`, for an input large enough to pass many writer buffers and the
/// rows' rendering windows (the rows in case order); a write
/// that fails part-way (a file-size limit, EFBIG) is the reference's `[Errno 27]` line, exit
/// 1, with the old file kept and no temporary file left.
#[test]
fn streamed_output_file_equals_stdout_and_a_failed_write_keeps_the_old_file() {
    let d = tempfile::tempdir().unwrap();
    let mut cases = String::from("[");
    // Past the rows' rendering windows (8,192 cases, four parts each) and their last part.
    for i in 0..20_000 {
        if i > 0 {
            cases.push_str(", ");
        }
        cases.push_str(&format!(
            r#"{{"query": "q{i}", "retrieved": ["d{i}", "x{i}", "y"], "relevant": ["d{}"], "answer": "a{i}"}}"#,
            i % 7
        ));
    }
    cases.push(']');
    let f = cases_file(d.path(), &cases);
    for (file, extra) in [
        ("r.json", &["--json"][..]),
        ("r.csv", &["--format", "csv"][..]),
        ("r.jsonl", &["--format", "jsonl"][..]),
    ] {
        let want = run(&[&[f.as_str(), "--k", "2"][..], extra].concat(), b"", &[]);
        assert_eq!(want.status.code(), Some(0), "{file}");
        assert!(want.stdout.len() > 200_000, "{file}: {}", want.stdout.len());
        let path = d.path().join(file).to_string_lossy().to_string();
        let flags: Vec<&str> = extra.iter().copied().filter(|a| *a != "--json").collect();
        let out = run(
            &[&[f.as_str(), "--k", "2", "-o", &path][..], &flags].concat(),
            b"",
            &[],
        );
        assert_eq!(out.status.code(), Some(0), "{file}");
        assert!(std::fs::read(&path).unwrap() == want.stdout, "{file}");
        // The rows come in case order, every case once (rendered in parallel parts).
        let text = String::from_utf8(want.stdout).unwrap();
        let indexes: Vec<String> = match file {
            "r.csv" => text
                .lines()
                .skip(1)
                .map(|l| l.split(',').next().unwrap().to_string())
                .collect(),
            "r.jsonl" => text
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap()["index"].to_string())
                .collect(),
            _ => continue,
        };
        let want_idx: Vec<String> = (0..20_000).map(|i| i.to_string()).collect();
        assert!(indexes == want_idx, "{file}: rows out of order");
    }

    // Every kind of output into `-o` (the csv writer wraps IO errors without their errno: the
    // file's own error is reported).
    for (file, extra) in [
        ("old.json", ""),
        ("old.json", "--ci 0.9 --bootstrap 20"),
        ("old.csv", "--format csv"),
        ("old.jsonl", "--format jsonl"),
        ("old.txt", ""),
    ] {
        let out_path = d.path().join(file);
        std::fs::write(&out_path, "OLD\n").unwrap();
        let script = format!(
            "ulimit -f 1 && exec '{BIN}' rag '{f}' --k 2 {extra} -o '{}'",
            out_path.display()
        );
        let o = Command::new("sh").arg("-c").arg(&script).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{file} {extra}: {err}");
        assert_eq!(
            err,
            format!(
                "routeval rag: error: [Errno 27] File too large: '{}'\n",
                out_path.display()
            ),
            "{file} {extra}"
        );
        assert_eq!(std::fs::read_to_string(&out_path).unwrap(), "OLD\n");
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".routeval-"))
            .collect();
        assert!(
            left.is_empty(),
            "{file} {extra}: temporary files left: {}",
            left.len()
        );
    }
}

// ------------------------------------------------------------------------------------------
// HTTP embedder against a local mock server.

/// One scripted reply: status, optional delay (ms), or "embed" to answer with tri64 vectors
/// (optionally truncated to `dim`).
#[derive(Clone)]
enum Reply {
    Status(u16),
    Embed { dim: Option<usize> },
    Sleep(u64),
}

struct Mock {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

fn mock(script: Vec<Reply>) -> Mock {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let reqs = requests.clone();
    std::thread::spawn(move || {
        let mut script = script.into_iter();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0u8; len];
            let _ = reader.read_exact(&mut body);
            let body = String::from_utf8_lossy(&body).to_string();
            reqs.lock().unwrap().push(format!("{head}{body}"));
            let reply = script.next().unwrap_or(Reply::Status(500));
            let (status, payload) = match reply {
                Reply::Status(s) => (s, format!("{{\"error\": \"scripted {s}\"}}")),
                Reply::Sleep(ms) => {
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                    (500, "{}".to_string())
                }
                Reply::Embed { dim } => {
                    let req: Value = serde_json::from_str(&body).unwrap();
                    let data: Vec<Value> = req["input"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .enumerate()
                        .map(|(i, t)| {
                            let mut v = toy_embed::toy("tri64", t.as_str().unwrap());
                            if let Some(d) = dim
                                && i == 0
                            {
                                v.truncate(d);
                            }
                            serde_json::json!({"object": "embedding", "index": i, "embedding": v})
                        })
                        .collect();
                    (
                        200,
                        serde_json::json!({"object": "list", "data": data}).to_string(),
                    )
                }
            };
            let resp = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
                payload.len()
            );
            let _ = stream.write_all(resp.as_bytes());
        }
    });
    Mock { url, requests }
}

const EMBED_CASES: &str = r#"[{"query": "hello world", "retrieved": ["hello there world", "other text"], "answer": "hello world."}]"#;

fn http_run(m: &Mock, extra: &[&str]) -> Output {
    let mut args = vec![
        "-",
        "--json",
        "--embed-url",
        &m.url,
        "--embed-model",
        "toy-model",
        "--embed-key-env",
        "ROUTEVAL_TEST_KEY",
        "--embed-backoff-ms",
        "1",
    ];
    args.extend_from_slice(extra);
    run(
        &args,
        EMBED_CASES.as_bytes(),
        &[("ROUTEVAL_TEST_KEY", "sk-secret-123")],
    )
}

#[test]
fn http_embedder_retries_then_succeeds() {
    let m = mock(vec![
        Reply::Status(429),
        Reply::Status(500),
        Reply::Embed { dim: None },
    ]);
    let out = http_run(&m, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["similarity"], "embeddings");
    // Same numbers as the embed-cmd path with the same toy embedding.
    let cmd = toy_cmd("tri64");
    let via_cmd = run(
        &["-", "--json", "--embed-cmd", &cmd],
        EMBED_CASES.as_bytes(),
        &[],
    );
    assert_eq!(out.stdout, via_cmd.stdout);
    let reqs = m.requests.lock().unwrap();
    assert_eq!(reqs.len(), 3, "two retries then success");
    assert!(reqs[0].starts_with("POST /v1/embeddings "));
    assert!(
        reqs[0].contains("Bearer sk-secret-123"),
        "key sent as a bearer token"
    );
    assert!(reqs[0].contains("\"model\":\"toy-model\""));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("sk-secret"));
}

#[test]
fn http_embedder_gives_up_after_retries() {
    let m = mock(vec![Reply::Status(500); 10]);
    let out = http_run(&m, &["--embed-retries", "2"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    // Two retry lines, then the error.
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].starts_with("routeval rag: retrying in 0.0 s after HTTP 500 (attempt 2 of 3)"),
        "{err}"
    );
    assert!(
        lines[2].starts_with("routeval rag: error: embedding failed: HTTP 500 from "),
        "{err}"
    );
    assert!(err.contains("(after 3 attempt(s))"), "{err}");
    assert!(!err.contains("sk-secret"));
    assert_eq!(m.requests.lock().unwrap().len(), 3);
}

#[test]
fn http_embedder_does_not_retry_client_errors() {
    let m = mock(vec![Reply::Status(404), Reply::Embed { dim: None }]);
    let out = http_run(&m, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("HTTP 404"));
    assert_eq!(m.requests.lock().unwrap().len(), 1);
}

#[test]
fn http_embedder_rejects_wrong_dimension() {
    let m = mock(vec![Reply::Embed { dim: Some(10) }]);
    let out = http_run(&m, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "routeval rag: error: embedding dimension changed: expected 10, got 64\n"
    );
}

#[test]
fn http_embedder_times_out() {
    let m = mock(vec![Reply::Sleep(3000), Reply::Sleep(3000)]);
    let start = std::time::Instant::now();
    let out = http_run(&m, &["--embed-timeout", "0.3", "--embed-retries", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("no answer within 0.3 s"), "{err}");
    assert!(
        start.elapsed().as_secs_f64() < 2.9,
        "the timeout must cut the wait short"
    );
}

#[test]
fn embed_cmd_failures_are_errors() {
    // Exits without answering.
    let out = run(&["-", "--embed-cmd", "exit 0"], EMBED_CASES.as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exited before answering"));
    // Never answers.
    let out = run(
        &["-", "--embed-cmd", "sleep 5", "--embed-timeout", "0.3"],
        EMBED_CASES.as_bytes(),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did not answer within 0.3 s"));
    // Answers garbage.
    let out = run(
        &["-", "--embed-cmd", "echo nope"],
        EMBED_CASES.as_bytes(),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reply is not JSON"));
}

#[test]
fn trec_qrels_and_run_use_rag_definitions() {
    let d = tempfile::tempdir().unwrap();
    let qrels = d.path().join("qrels");
    let run_path = d.path().join("run");
    // q1: three tied scores; trec_eval ranks ties by docno descending (c, b, a), so the
    // relevant `a` is at rank 3. q2 has only a non-relevant judgment (excluded here, 0 in
    // trec_eval); q9 is not judged (not in both files).
    std::fs::write(&qrels, "q1 0 a 1\nq1 0 c 0\nq2 0 x 0\nq3 0 z 2\n").unwrap();
    std::fs::write(
        &run_path,
        "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 1.0 r\nq1 Q0 c 3 1.0 r\nq2 Q0 x 1 3.0 r\nq9 Q0 z 1 1 r\n",
    )
    .unwrap();
    let (q, r) = (
        qrels.to_string_lossy().to_string(),
        run_path.to_string_lossy().to_string(),
    );
    let out = run_ok(&["--qrels", &q, "--run", &r, "--k", "3", "--json"]);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["n_cases"], 2);
    assert_eq!(v["metrics"]["mrr"], 0.333333);
    assert_eq!(v["metrics"]["ndcg_at_k"], 0.5);
    assert_eq!(v["support"]["mrr"], 1);
    assert_eq!(v["per_case"][0]["query"], "q1");
    // Usage rules.
    let bad = run(&["--qrels", &q], b"", &[]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = run(&["x.json", "--qrels", &q, "--run", &r], b"", &[]);
    assert_eq!(bad.status.code(), Some(2));
    // A broken run file is one error line, exit 1.
    std::fs::write(&run_path, "q1 Q0 a\n").unwrap();
    let bad = run(&["--qrels", &q, "--run", &r], b"", &[]);
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.starts_with("routeval rag: error: ") && err.lines().count() == 1,
        "{err}"
    );
}

fn run_ok(args: &[&str]) -> Vec<u8> {
    let out = run(args, b"", &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn where_selects_cases_and_keeps_their_indices() {
    let d = tempfile::tempdir().unwrap();
    let f = cases_file(d.path(), QUICKSTART);
    let q = r#"{"query": {"regex": "cancel"}}"#;
    let sel = run(&[&f, "--k", "2", "--json", "--where", q], b"", &[]);
    assert_eq!(
        sel.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&sel.stderr)
    );
    let err = String::from_utf8_lossy(&sel.stderr);
    assert_eq!(err, "where: 1 of 2 case(s) selected\n");
    let v: Value = serde_json::from_slice(&sel.stdout).unwrap();
    let cases = v["per_case"].as_array().unwrap();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0]["index"], 1, "the input position is kept");
    assert_eq!(cases[0]["query"], "cancel my plan");
    // The same numbers as evaluating that case on its own.
    let alone = r#"[{"query": "cancel my plan", "retrieved": ["p_faq", "p_billing"], "relevant": ["p_cancel"]}]"#;
    let one = run(&["-", "--k", "2", "--json"], alone.as_bytes(), &[]);
    let w: Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(v["metrics"], w["metrics"]);
    assert_eq!(cases[0]["metrics"], w["per_case"][0]["metrics"]);
    assert!(one.stderr.is_empty(), "no where line without --where");
    // Summary output and the selection line; JSONL input too.
    let jsonl = "{\"query\": \"a\", \"retrieved\": [\"x\"], \"relevant\": [\"x\"], \"tier\": 1}\n\
                 {\"query\": \"b\", \"retrieved\": [\"y\"], \"relevant\": [\"x\"], \"tier\": 2}\n\
                 {\"query\": \"c\", \"retrieved\": [\"x\"], \"relevant\": [\"x\"]}\n";
    let t = run(
        &["-", "--where", r#"{"tier": {"gte": 2}}"#],
        jsonl.as_bytes(),
        &[],
    );
    assert_eq!(t.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&t.stderr),
        "where: 1 of 3 case(s) selected\n"
    );
    let out = String::from_utf8_lossy(&t.stdout);
    assert!(out.contains("[1] 'b'"), "{out}");
    assert!(!out.contains("[0] 'a'"), "{out}");
}

#[test]
fn where_errors_follow_the_rag_input_error_convention() {
    let d = tempfile::tempdir().unwrap();
    let f = cases_file(d.path(), QUICKSTART);
    // A case without the key, under --on-missing-key error: exit 1 naming the case.
    let miss = run(
        &[
            &f,
            "--where",
            r#"{"answer": "x"}"#,
            "--on-missing-key",
            "error",
        ],
        b"",
        &[],
    );
    assert_eq!(miss.status.code(), Some(1));
    let e = String::from_utf8_lossy(&miss.stderr);
    assert!(
        e.starts_with("routeval rag: error: --where: case 0: missing_key"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(miss.stdout.is_empty());
    // ... and the default (skip) selects nothing rather than failing on it.
    let skip = run(&[&f, "--where", r#"{"answer": "x"}"#, "--json"], b"", &[]);
    assert!(
        String::from_utf8_lossy(&skip.stderr).starts_with("where: 0 of 2 case(s) selected"),
        "{}",
        String::from_utf8_lossy(&skip.stderr)
    );
    // A malformed query: exit 1 with the query error's kind.
    let bad = run(&[&f, "--where", r#"{"query": {"bogus": 1}}"#], b"", &[]);
    assert_eq!(bad.status.code(), Some(1));
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(
        e.starts_with("routeval rag: error: --where: unknown_operator"),
        "{e}"
    );
    let notjson = run(&[&f, "--where", "{"], b"", &[]);
    assert_eq!(notjson.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&notjson.stderr).contains("bad_where"));
    // Bad option values are usage errors (2).
    let omk = run(
        &[&f, "--where", "{}", "--on-missing-key", "maybe"],
        b"",
        &[],
    );
    assert_eq!(omk.status.code(), Some(2));
    let lone = run(&[&f, "--on-missing-key", "error"], b"", &[]);
    assert_eq!(lone.status.code(), Some(2));
}

#[test]
fn embedding_progress_bar_counts_requests_and_retries_without_changing_stdout() {
    // ROUTEVAL_PROGRESS=always draws the bar on this pipe as on a terminal.
    let m = mock(vec![Reply::Status(503), Reply::Embed { dim: None }]);
    let forced = run(
        &[
            "-",
            "--json",
            "--embed-url",
            &m.url,
            "--embed-model",
            "toy-model",
            "--embed-backoff-ms",
            "1",
        ],
        EMBED_CASES.as_bytes(),
        &[("ROUTEVAL_PROGRESS", "always")],
    );
    let err = String::from_utf8_lossy(&forced.stderr).to_string();
    assert_eq!(forced.status.code(), Some(0), "{err}");
    assert!(err.contains("embedding texts"), "{err:?}");
    assert!(err.contains("\r\x1b[2K"), "bar drawn: {err:?}");
    // The retry is counted live and its line is printed above the bar, whole.
    assert!(err.contains("1 requests, 1 retries, 0 failed"), "{err:?}");
    assert!(
        err.contains("routeval rag: retrying in 0.0 s after HTTP 503 (attempt 2 of 6)\n"),
        "{err:?}"
    );
    // Without the variable (stderr is a pipe) there is no bar; stdout is the same.
    let m = mock(vec![Reply::Status(503), Reply::Embed { dim: None }]);
    let plain = http_run(&m, &[]);
    let perr = String::from_utf8_lossy(&plain.stderr).to_string();
    assert!(
        !perr.contains('\x1b') && !perr.contains("embedding texts"),
        "{perr:?}"
    );
    assert_eq!(forced.stdout, plain.stdout);
}
