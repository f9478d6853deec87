//! Data-driven parity for routing: every `*route_cases.jsonl` under
//! `$ROUTEVAL_SHARED/golden/query-dsl/` (and the copy in `tests/data/`), with the corpus's stub
//! metrics (`mean_stub`, `count_stub`; `specs/query-dsl.md` §B15). Floats compare exactly.

mod common;

use common::{golden_files, read_lines};
use routeval_query_dsl::route::{
    InstanceValues, QueryRoutedMetric, RouteError, RouteMetric, float_value, py_mean,
};
use serde_json::{Map, Value};

struct Stub {
    name: String,
    count: bool,
}

impl RouteMetric for Stub {
    fn instance(&self, instance: &Value) -> Result<Map<String, Value>, String> {
        Ok(instance
            .get("scores")
            .and_then(|s| s.get(&self.name))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default())
    }
    fn has_details(&self) -> bool {
        !self.count
    }
    fn summarize(&self, rows: &[&InstanceValues]) -> Map<String, Value> {
        let mut out = Map::new();
        if self.count {
            out.insert("count".into(), Value::from(rows.len()));
            return out;
        }
        let mut keys: Vec<&String> = Vec::new();
        for r in rows {
            for k in r.keys() {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        for k in keys {
            let vals = rows
                .iter()
                .filter_map(|r| r.get(k))
                .filter(|v| matches!(v, Value::Number(_) | Value::Bool(_)));
            if let Some(m) = py_mean(vals) {
                out.insert(k.clone(), float_value(m));
            }
        }
        out
    }
}

fn run(case: &Value) -> Result<Value, RouteError> {
    let metrics = case["metrics"].as_object().cloned().unwrap_or_default();
    let qr = QueryRoutedMetric::from_config(&case["config"], |m| {
        let name = m.as_str().unwrap_or_default().to_string();
        let kind = metrics[&name]["kind"].as_str().unwrap_or_default();
        Ok(Stub {
            name,
            count: kind == "count_stub",
        })
    })?;
    let instances = case["instances"].as_array().cloned().unwrap_or_default();
    let r = qr.evaluate(&instances)?;
    Ok(serde_json::json!({
        "summary": Value::Object(r.summary),
        "instance_details": r.instance_details.into_iter().map(Value::Object).collect::<Vec<_>>(),
    }))
}

/// Exact structural equality, numbers compared by type and bits (1 != 1.0).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            _ if x.is_f64() != y.is_f64() => false,
            (Some(p), Some(q)) if x.is_f64() => p.to_bits() == q.to_bits(),
            _ => x == y,
        },
        _ => a == b,
    }
}

fn check_file(path: &std::path::Path) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut n = 0;
    for (line, case) in read_lines(path) {
        n += 1;
        let id = case["id"].as_str().unwrap_or("?");
        let got = run(&case);
        let ok = match (&got, &case["expect"]) {
            (Err(e), Value::String(s)) if s == "error" => {
                case["error_kind"].as_str() == Some(e.kind())
            }
            (Ok(v), exp @ Value::Object(_)) => same(v, exp),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{}:{line} {id}: expected {} {}, got {got:?}",
                path.display(),
                case["expect"],
                case.get("error_kind").cloned().unwrap_or(Value::Null)
            ));
        }
    }
    (n, failures)
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn route_cases_golden() {
    let Some(files) = golden_files("route_cases.jsonl", |_| true) else {
        return;
    };
    let mut total = 0;
    let mut failures = Vec::new();
    for f in &files {
        let (n, mut fl) = check_file(f);
        total += n;
        failures.append(&mut fl);
    }
    assert!(
        total >= 34,
        "expected at least 34 route cases, found {total}"
    );
    assert!(
        failures.is_empty(),
        "{} of {total} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn route_cases_fixture_copy() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/route_cases.jsonl");
    let (n, failures) = check_file(&path);
    assert!(n >= 34);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
