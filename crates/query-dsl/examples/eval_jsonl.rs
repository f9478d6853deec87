//! Evaluate cases given as JSON lines on stdin (used by `tests/diff/diff_model.py` for the
//! differential run against the Python model and Python's `re`):
//!
//! * `{"where": ..., "extra_info": ..., "on_missing_key": ...}` prints
//!   `{"expect": true|false|"error", "error_kind": ...}`;
//! * `{"pattern": P, "haystacks": [...]}` prints `{"ok": bool, "matches": [bool...]}` (or the
//!   error).
//!
//! `cargo run -p routeval-query-dsl --example eval_jsonl < cases.jsonl`

use routeval_query_dsl::{OnMissingKey, PyRegex, Query, QueryError};
use serde_json::{Value, json};
use std::io::{BufRead, Write};

fn case(c: &Value) -> Result<bool, QueryError> {
    let omk = OnMissingKey::from_json(c.get("on_missing_key"))?;
    Query::parse(c.get("where").unwrap_or(&Value::Null))?
        .matches(c.get("extra_info").unwrap_or(&Value::Null), omk)
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for line in stdin.lock().lines() {
        let line = line.expect("read stdin");
        if line.trim().is_empty() {
            continue;
        }
        let c: Value = serde_json::from_str(&line).expect("JSON line");
        let r = if let Some(p) = c.get("pattern").and_then(Value::as_str) {
            match PyRegex::new(p) {
                Ok(re) => {
                    let hs = c["haystacks"].as_array().cloned().unwrap_or_default();
                    let m: Vec<Value> = hs
                        .iter()
                        .map(|h| match re.search(h.as_str().unwrap_or("")) {
                            Ok(b) => Value::Bool(b),
                            Err(e) => Value::String(e),
                        })
                        .collect();
                    json!({"ok": true, "matches": m})
                }
                Err(e) => json!({"ok": false, "error": e}),
            }
        } else {
            match case(&c) {
                Ok(b) => json!({"expect": b}),
                Err(e) => json!({"expect": "error", "error_kind": e.kind()}),
            }
        };
        writeln!(out, "{r}").expect("write stdout");
    }
}
