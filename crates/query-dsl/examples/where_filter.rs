//! Select instances with a `where` query and compute query-routed metrics, as a library.
//!
//! `cargo run -p routeval-query-dsl --example where_filter`
//! (reads `examples/data/dsl/outputs.jsonl` and `examples/data/dsl/routes.json`).

use routeval_query_dsl::route::QueryRoutedMetric;
use routeval_query_dsl::route::metrics::BuiltinMetric;
use routeval_query_dsl::{OnMissingKey, Query, to_python_json};
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/dsl");
    let text = std::fs::read_to_string(dir.join("outputs.jsonl"))?;
    let records: Vec<Value> = text
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;

    // 1. A query, compiled once, evaluated on each instance's extra_info.
    let q = Query::parse(&json!({
        "task": "qa",
        "messages.-1.content": {"regex": "(?i)^(what|capital)"},
    }))?;
    for r in &records {
        if q.matches(&r["extra_info"], OnMissingKey::Error)? {
            println!("selected: {}", r["extra_info"]["prompt"]);
        }
    }

    // 2. Query-routed metrics over the same records.
    let config: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("routes.json"))?)?;
    let routed = QueryRoutedMetric::from_config(&config, BuiltinMetric::from_config)?;
    let result = routed.evaluate(&records)?;
    println!(
        "{}",
        to_python_json(&Value::Object(result.summary), Some(4))
    );
    Ok(())
}
