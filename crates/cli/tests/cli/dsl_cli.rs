//! `routeval route` and `routeval filter` end to end, on `examples/data/dsl/`.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn routeval(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run routeval");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const DATA: &str = "examples/data/dsl/outputs.jsonl";
const INFO: &str = "examples/data/dsl/extra_info.jsonl";

#[test]
fn route_plain_config_prints_metrics() {
    let (code, out, err) = routeval(&[
        "route",
        "--config",
        "examples/data/dsl/routes.json",
        "--data",
        DATA,
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // qa: Paris (hit), " Tokyo\n" (hit after strip), Berlin vs "Berlin " (hit), Rome (miss).
    assert_eq!(v["qa/exact_match"], 0.75);
    assert_eq!(v["qa/ja/exact_match"], 1.0);
    assert_eq!(v["qa/en/exact_match"], 2.0 / 3.0);
    assert_eq!(v["open/min_output_length"], 58);
    assert_eq!(v["all/exact_match"], 0.5);
    assert!(
        out.starts_with("{\n    \"qa/exact_match\": 0.75,\n"),
        "{out}"
    );
}

#[test]
fn route_jsonnet_flexeval_form_writes_out_dir() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, out, err) = routeval(&[
        "route",
        "--config",
        "examples/data/dsl/toytask.jsonnet",
        "--data",
        DATA,
        "--out",
        d,
    ]);
    assert_eq!(code, 0, "{err}");
    let metrics = std::fs::read_to_string(dir.path().join("metrics.json")).unwrap();
    assert_eq!(metrics.trim_end(), out.trim_end());
    let v: serde_json::Value = serde_json::from_str(&metrics).unwrap();
    assert_eq!(v["open/avg_output_length"], 58.0);
    let outputs = std::fs::read_to_string(dir.path().join("outputs.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(outputs.lines().next().unwrap()).unwrap();
    assert_eq!(first["qa/exact_match"], true);
    // The rendered extra_info template is part of extra_info.
    assert_eq!(first["extra_info"]["first_word"], "What");
    assert_eq!(outputs.lines().count(), 6);
}

#[test]
fn route_errors_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.json");
    std::fs::write(&cfg, r#"{"routes": [{"name": "a", "where": {"nope": 1}, "metrics": ["exact_match"]}], "on_missing_key": "error"}"#).unwrap();
    let (code, _, err) = routeval(&["route", "--config", cfg.to_str().unwrap(), "--data", DATA]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("outputs.jsonl:1") && err.contains("missing_key"),
        "{err}"
    );

    std::fs::write(&cfg, r#"{"routes": [{"name": "a", "metrics": ["exact_match"]}, {"name": "a", "metrics": ["char_f1"]}]}"#).unwrap();
    let (code, _, err) = routeval(&["route", "--config", cfg.to_str().unwrap(), "--data", DATA]);
    assert_eq!(code, 2);
    assert!(err.contains("duplicate_route_name"), "{err}");
}

#[test]
fn filter_prints_matching_lines_unchanged_and_counts() {
    let (code, out, _) = routeval(&[
        "filter",
        "--where",
        r#"{"task": "qa", "lang": {"ne": "ja"}}"#,
        INFO,
    ]);
    assert_eq!(code, 0);
    let src = std::fs::read_to_string(root().join(INFO)).unwrap();
    let want: Vec<&str> = src
        .lines()
        .filter(|l| l.contains("\"task\": \"qa\"") && !l.contains("\"ja\""))
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), want);

    let (code, out, _) = routeval(&[
        "filter",
        "--count",
        "--where",
        r#"{"messages.*.role": "system"}"#,
        INFO,
    ]);
    assert_eq!((code, out.as_str()), (0, "1\n"));
    let (code, out, _) = routeval(&["filter", "--count", "--where", r#"{"task": "none"}"#, INFO]);
    assert_eq!((code, out.as_str()), (0, "0\n"));
}

#[test]
fn filter_errors_exit_2() {
    let (code, out, err) = routeval(&["filter", "--where", r#"{"x": {"regex": "("}}"#, INFO]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("bad_regex") && err.lines().count() == 1,
        "{err}"
    );
    let (code, _, err) = routeval(&[
        "filter",
        "--on-missing-key",
        "error",
        "--where",
        r#"{"nope": 1}"#,
        INFO,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("extra_info.jsonl:1: missing_key"), "{err}");
    let (code, _, err) = routeval(&["filter", "--where", r#"{"prompt": {"gt": 1}}"#, INFO]);
    assert_eq!(code, 2);
    assert!(err.contains(":1: type_error"), "{err}");
    let (code, _, err) = routeval(&["filter", "--where", "[1]", INFO]);
    assert_eq!(code, 2);
    assert!(err.contains("bad_where"), "{err}");
}

#[test]
fn filter_rejects_lines_that_are_not_objects() {
    let dir = std::env::temp_dir().join(format!("routeval-dsl-nonobj-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, bad) in ["[1,2]", r#""str""#, "3", "null"].iter().enumerate() {
        let f = dir.join(format!("info{i}.jsonl"));
        std::fs::write(&f, format!("{{\"a\": 1}}\n\n{bad}\n{{\"a\": 2}}\n")).unwrap();
        let (code, out, err) = routeval(&["filter", "--where", "{}", f.to_str().unwrap()]);
        assert_eq!((code, out.as_str()), (2, ""), "{bad}: {err}");
        assert!(
            err.contains(&format!("info{i}.jsonl:3: bad_instance")) && err.lines().count() == 1,
            "{bad}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `routeval filter ARGS -` with `text` on stdin: (exit code, stdout, stderr).
fn filter_stdin(args: &[&str], text: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .arg("filter")
        .args(args)
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feed = text.to_string();
    // The child may stop reading early (on an error): a broken pipe is fine then.
    let writer = std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut stdin, feed.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Matching lines are printed byte for byte as read, in input order, each ending in `\n`
/// (CRLF lines keep their `\r`; a last line without `\n` gets one; blank lines are never
/// printed): from a mapped file (printed from the map as runs of consecutive matching lines,
/// across many 128 KiB pieces), from stdin (copies) and into `-o`, all three the same bytes.
/// An error anywhere prints nothing, also after matches in earlier pieces.
#[test]
fn filter_prints_exact_bytes_from_the_map_from_stdin_and_into_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    let mut want = String::new();
    for i in 0..40_000usize {
        // Runs of matches of varying length, CRLF on some lines, a blank line now and then.
        let m = (i / 7) % 3 != 0 || i % 11 == 0;
        let eol = if i % 5 == 0 { "\r\n" } else { "\n" };
        let line = format!(r#"{{"m": {m}, "i": {i}, "pad": "{}"}}"#, "x".repeat(i % 13));
        text.push_str(&line);
        text.push_str(eol);
        if m {
            want.push_str(&line);
            want.push_str(if eol == "\r\n" { "\r\n" } else { "\n" });
        }
        if i % 97 == 0 {
            text.push_str("  \n");
        }
    }
    // The last line has no newline and matches.
    text.push_str(r#"{"m": true, "i": -1}"#);
    want.push_str("{\"m\": true, \"i\": -1}\n");
    assert!(text.len() > 1 << 20, "{}", text.len());
    let f = dir.path().join("in.jsonl");
    std::fs::write(&f, &text).unwrap();
    let fs = f.to_str().unwrap();
    let q = r#"{"m": true}"#;
    let (code, out, err) = routeval(&["filter", "--where", q, fs]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out == want,
        "mapped file: {} bytes, want {}",
        out.len(),
        want.len()
    );
    let (code, out, err) = filter_stdin(&["--where", q], &text);
    assert_eq!(code, 0, "{err}");
    assert!(
        out == want,
        "stdin: {} bytes, want {}",
        out.len(),
        want.len()
    );
    let o = dir.path().join("out.jsonl");
    let (code, out, err) = routeval(&["filter", "--where", q, fs, "-o", o.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(std::fs::read_to_string(&o).unwrap() == want);
    let (code, out, _) = routeval(&["filter", "--where", "{}", fs]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 40_001);

    // A bad last line: nothing printed, nothing written, the old file kept.
    std::fs::write(&f, format!("{text}\n{{\"m\": tru}}\n")).unwrap();
    let (code, out, err) = routeval(&["filter", "--where", q, fs]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    let bad = text.lines().count() + 1;
    assert!(err.contains(&format!(":{bad}: invalid JSON")), "{err}");
    let (code, out, _) = routeval(&["filter", "--where", q, fs, "-o", o.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(std::fs::read_to_string(&o).unwrap() == want);
}

/// Members the query does not read are still fully validated (here a bad token nested in an
/// unread member), UTF-8 is checked, and lines are numbered and counted correctly across the
/// reader's 8 MiB chunks, including a single line longer than a chunk.
#[test]
fn filter_validates_whole_lines_across_chunks() {
    let dir = std::env::temp_dir().join(format!("routeval-dsl-chunks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pad = "p".repeat(200);
    let mut text = String::new();
    let n = 50_000usize;
    for i in 0..n {
        text.push_str(&format!(
            "{{\"i\": {i}, \"even\": {}, \"pad\": \"{pad}\"}}\n",
            i % 2 == 0
        ));
        if i == 1000 {
            // one line of 9 MiB
            text.push_str(&format!(
                "{{\"even\": true, \"big\": \"{}\"}}\n",
                "b".repeat(9 << 20)
            ));
        }
    }
    assert!(text.len() > 2 * (8 << 20));
    let good = dir.join("good.jsonl");
    std::fs::write(&good, &text).unwrap();
    // From stdin (streamed in chunks) as from the file (mapped).
    let (code, out, err) = filter_stdin(&["--count", "--where", r#"{"even": true}"#], &text);
    assert_eq!(
        (code, out.as_str()),
        (0, format!("{}\n", n / 2 + 1).as_str()),
        "{err}"
    );
    let (code, out, err) = routeval(&[
        "filter",
        "--count",
        "--where",
        r#"{"even": true}"#,
        good.to_str().unwrap(),
    ]);
    assert_eq!(
        (code, out.as_str()),
        (0, format!("{}\n", n / 2 + 1).as_str()),
        "{err}"
    );

    // A broken line near the end: the error names its line (n + 1 lines before it, 1-based).
    let bad = dir.join("bad.jsonl");
    std::fs::write(
        &bad,
        format!("{text}{{\"even\": true, \"x\": [1, {{\"y\": nul}}]}}\n"),
    )
    .unwrap();
    let (code, out, err) = routeval(&[
        "filter",
        "--count",
        "--where",
        r#"{"even": true}"#,
        bad.to_str().unwrap(),
    ]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains(&format!(
            "bad.jsonl:{}: invalid JSON: expected ident",
            n + 2
        )) && err.lines().count() == 1,
        "{err}"
    );
    let (code, out, err) = filter_stdin(
        &["--count", "--where", r#"{"even": true}"#],
        &std::fs::read_to_string(&bad).unwrap(),
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains(&format!("<stdin>:{}: invalid JSON: expected ident", n + 2)),
        "{err}"
    );

    let utf8 = dir.join("utf8.jsonl");
    std::fs::write(
        &utf8,
        b"{\"even\": true}\n{\"x\": \"\xff\", \"even\": true}\n",
    )
    .unwrap();
    let (code, _, err) = routeval(&[
        "filter",
        "--where",
        r#"{"even": true}"#,
        utf8.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("utf8.jsonl:2: invalid JSON: invalid UTF-8"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Jsonnet config that fails to parse, analyse or evaluate: one stderr line
/// `FILE:LINE: jsonnet error: MESSAGE` (no Rust debug dump), exit 2; an error inside an
/// imported file names that file and line.
#[test]
fn route_jsonnet_errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let (code, out, err) =
            routeval(&["route", "--config", p.to_str().unwrap(), "--data", DATA]);
        assert_eq!((code, out.as_str()), (2, ""), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        for debug in ["SpanId", "span:", "Expected {", "EvalError", "LoadError"] {
            assert!(!err.contains(debug), "{name}: debug text in {err}");
        }
        err
    };
    let err = run(
        "parse.jsonnet",
        "{\n  routes: [\n    { name: 'a' \n  ]\n}\n",
    );
    assert!(err.contains("parse.jsonnet:4: jsonnet error: "), "{err}");
    assert!(
        err.contains("unexpected `]` (expected an operator or `,` or `}`)"),
        "{err}"
    );
    let err = run(
        "explicit.jsonnet",
        "{\n  routes: [],\n  x: error 'no routes here',\n}\n",
    );
    assert!(
        err.trim_end()
            .ends_with("explicit.jsonnet:3: jsonnet error: no routes here"),
        "{err}"
    );
    let err = run("unknown.jsonnet", "local a = 1;\n{\n  routes: [b],\n}\n");
    assert!(
        err.contains("unknown.jsonnet:3: jsonnet error: unknown variable `b`"),
        "{err}"
    );
    let err = run("types.jsonnet", "{\n  routes: [],\n  n: 1 - 'x',\n}\n");
    assert!(
        err.contains(
            "types.jsonnet:3: jsonnet error: operator `-` does not apply to number and string"
        ),
        "{err}"
    );
    std::fs::write(dir.path().join("lib.libsonnet"), "{\n  a: 1,\n  b: ,\n}\n").unwrap();
    let err = run(
        "imports.jsonnet",
        "local lib = import 'lib.libsonnet';\n{ routes: [lib.a] }\n",
    );
    assert!(err.contains("lib.libsonnet:3: jsonnet error: "), "{err}");
}

/// Where `json.loads` is lax (a number beyond `f64`, a lone surrogate escape, deep nesting),
/// `filter` is too in members the query does not read; in a member it reads, serde_json cannot
/// represent them and the line is an error (README, filter notes). A byte-order mark and a
/// form-feed-only line are named errors, not skipped; a plain JSON config error names its
/// line; a missing required argument is named on the one usage line.
#[test]
fn filter_lax_members_byte_order_mark_and_usage_lines() {
    let dir = std::env::temp_dir().join(format!("routeval-dsl-verdict-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    for (i, member) in ["1e400", r#""\ud800""#, deep.as_str()].iter().enumerate() {
        let f = dir.join(format!("v{i}.jsonl"));
        std::fs::write(&f, format!("{{\"task\": \"qa\", \"x\": {member}}}\n")).unwrap();
        let f = f.to_str().unwrap();
        let (c1, o1, e1) = routeval(&["filter", "--count", "--where", r#"{"task": "qa"}"#, f]);
        assert_eq!((c1, o1.as_str()), (0, "1\n"), "{member}: {e1}");
        let (c2, _, e2) = routeval(&[
            "filter",
            "--count",
            "--where",
            r#"{"x": {"exists": true}}"#,
            f,
        ]);
        assert_eq!(c2, 2, "{member}");
        assert!(e2.contains(":1: invalid JSON: "), "{e2}");
    }
    let bom = dir.join("bom.jsonl");
    std::fs::write(&bom, b"\xEF\xBB\xBF{\"a\": 1}\n").unwrap();
    let (code, _, err) = routeval(&["filter", "--where", "{}", bom.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bom.jsonl:1: invalid JSON: a UTF-8 byte-order mark"),
        "{err}"
    );
    let ff = dir.join("ff.jsonl");
    std::fs::write(&ff, b"{\"a\": 1}\n \r\n\x0c\n").unwrap();
    let (code, _, err) = routeval(&["filter", "--count", "--where", "{}", ff.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("ff.jsonl:3: invalid JSON"), "{err}");
    let cfg = dir.join("bad.json");
    std::fs::write(&cfg, "{\n  \"routes\": [1,]\n}\n").unwrap();
    let (code, _, err) = routeval(&["route", "--config", cfg.to_str().unwrap(), "--data", DATA]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.json:2: invalid JSON: trailing comma"),
        "{err}"
    );
    let (code, _, err) = routeval(&["filter", "--where", "{}"]);
    assert_eq!(code, 2);
    assert!(err.contains("<FILE>") && err.lines().count() == 1, "{err}");
    let (code, _, err) = routeval(&["filter", "--json", "--where", "{}", INFO]);
    assert_eq!(code, 2);
    assert!(err.contains("--count") && err.lines().count() == 1, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `route` streams its data in batches (4096 lines): a file spanning several batches, with
/// blank lines, templates and `--out`, gives the counts and means of one pass, outputs.jsonl
/// keeps every record in input order with its own instance keys, and an error on a line past
/// the first batch names that line.
#[test]
fn route_streams_many_batches_with_out_and_templates() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("routes.json");
    std::fs::write(
        &cfg,
        r#"{"routes": [
            {"name": "even", "where": {"parity": "even"}, "metrics": ["exact_match"], "group_by": "bucket"},
            {"name": "all", "metrics": ["exact_match"]}],
           "extra_info_templates": {"tag": "{{ parity }}-{{ bucket }}"}}"#,
    )
    .unwrap();
    let n = 10_001usize;
    let mut data = String::new();
    let (mut even, mut even_hits, mut hits) = (0usize, 0usize, 0usize);
    for i in 0..n {
        let hit = i % 3 == 0;
        let parity = if i % 2 == 0 { "even" } else { "odd" };
        hits += usize::from(hit);
        if i % 2 == 0 {
            even += 1;
            even_hits += usize::from(hit);
        }
        let out = if hit { "yes" } else { "no" };
        data.push_str(&format!(
            "{{\"id\": {i}, \"lm_output\": \"{out}\", \"references\": [\"yes\"], \"extra_info\": {{\"parity\": \"{parity}\", \"bucket\": {}}}}}\n",
            i % 4
        ));
        if i % 1000 == 0 {
            data.push('\n');
        }
    }
    let path = dir.path().join("data.jsonl");
    std::fs::write(&path, &data).unwrap();
    let out_dir = dir.path().join("out");
    let (code, out, err) = routeval(&[
        "route",
        "--config",
        cfg.to_str().unwrap(),
        "--data",
        path.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["instances"], n);
    assert_eq!(v["routing"][0]["selected"]["even"], even);
    assert_eq!(v["routing"][0]["selected"]["all"], n);
    let close = |a: &serde_json::Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-12;
    assert!(
        close(&v["metrics"]["all/exact_match"], hits as f64 / n as f64),
        "{v}"
    );
    assert!(
        close(
            &v["metrics"]["even/exact_match"],
            even_hits as f64 / even as f64
        ),
        "{v}"
    );
    let outputs = std::fs::read_to_string(out_dir.join("outputs.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = outputs
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), n);
    for (i, rec) in lines.iter().enumerate() {
        assert_eq!(rec["id"], i, "outputs.jsonl keeps input order");
        assert_eq!(rec["all/exact_match"], i % 3 == 0);
        assert_eq!(rec["even/exact_match"].is_null(), i % 2 == 1);
        let tag = format!("{}-{}", if i % 2 == 0 { "even" } else { "odd" }, i % 4);
        assert_eq!(rec["extra_info"]["tag"], tag.as_str());
    }
    // A bad line in the third batch: its own line number (blank lines counted), exit 2.
    let mut lines: Vec<&str> = data.split('\n').collect();
    lines[9_000] = "{not json";
    std::fs::write(&path, lines.join("\n")).unwrap();
    let (code, out, err) = routeval(&[
        "route",
        "--config",
        cfg.to_str().unwrap(),
        "--data",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(err.contains(":9001: invalid JSON"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
