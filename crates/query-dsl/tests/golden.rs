//! Data-driven parity with the shared corpus: every `*.jsonl` under
//! `$ROUTEVAL_SHARED/golden/query-dsl/` (matcher cases: files named `*cases.jsonl` except
//! route cases; route cases: `*route_cases.jsonl`), plus the copies in `tests/data/`.

mod common;

use common::{golden_files, read_lines};
use routeval_query_dsl::{Doc, OnMissingKey, Query, QueryError};
use serde_json::Value;

fn run_case(case: &Value) -> Result<bool, QueryError> {
    let omk = OnMissingKey::from_json(case.get("on_missing_key"))?;
    let q = Query::parse(case.get("where").unwrap_or(&Value::Null))?;
    q.matches(case.get("extra_info").unwrap_or(&Value::Null), omk)
}

/// The same case through the compact `Doc` path (`Query::matches_doc`).
fn run_case_doc(case: &Value) -> Result<bool, QueryError> {
    let omk = OnMissingKey::from_json(case.get("on_missing_key"))?;
    let q = Query::parse(case.get("where").unwrap_or(&Value::Null))?;
    let doc = Doc::from_value(case.get("extra_info").unwrap_or(&Value::Null)).unwrap();
    q.matches_doc(&doc, omk)
}

fn check_matcher_file(path: &std::path::Path) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut n = 0;
    for (line_no, case) in read_lines(path) {
        n += 1;
        let id = case["id"].as_str().unwrap_or("?").to_string();
        let got = run_case(&case);
        let got_doc = run_case_doc(&case);
        if format!("{got:?}") != format!("{got_doc:?}") {
            failures.push(format!(
                "{}:{line_no} {id}: Doc path gave {got_doc:?}, Value path {got:?}",
                path.display()
            ));
        }
        let expect = &case["expect"];
        let ok = match (&got, expect) {
            (Ok(b), Value::Bool(e)) => b == e,
            (Err(e), Value::String(s)) if s == "error" => {
                case["error_kind"].as_str() == Some(e.kind())
            }
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{}:{line_no} {id}: expected {expect} {}, got {got:?}",
                path.display(),
                case.get("error_kind").cloned().unwrap_or(Value::Null)
            ));
        }
    }
    (n, failures)
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn matcher_cases_golden() {
    let Some(files) = golden_files("cases.jsonl", |name| !name.contains("route")) else {
        return;
    };
    let mut total = 0;
    let mut failures = Vec::new();
    for f in &files {
        let (n, mut fails) = check_matcher_file(f);
        total += n;
        failures.append(&mut fails);
    }
    assert!(
        total >= 652,
        "expected at least 652 matcher cases, found {total}"
    );
    assert!(
        failures.is_empty(),
        "{} of {total} matcher cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn matcher_cases_fixture_copy() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cases.jsonl");
    let (n, failures) = check_matcher_file(&path);
    assert!(n >= 652);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
