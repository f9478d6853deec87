//! Query-routed metrics through the `routeval` facade: different metrics for different subsets
//! of one dataset (flexeval's QueryRoutedMetric).
//!
//! `cargo run --example route` (data: `examples/data/dsl/`).

use routeval::query_dsl::route::QueryRoutedMetric;
use routeval::query_dsl::route::metrics::BuiltinMetric;
use routeval::query_dsl::serde_json::{self, Value, json};
use routeval::query_dsl::to_python_json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/dsl/outputs.jsonl");
    let records: Vec<Value> = std::fs::read_to_string(path)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let config = json!({
        "routes": [
            {"name": "qa", "where": {"task": "qa"}, "metrics": ["exact_match"], "group_by": "lang"},
            {"name": "open", "where": {"task": {"in": ["open", "mt"]}}, "metrics": ["output_length_stats"]},
        ],
        "on_unmatched": "error",
    });
    let routed = QueryRoutedMetric::from_config(&config, BuiltinMetric::from_config)?;
    let result = routed.evaluate(&records)?;
    println!(
        "{}",
        to_python_json(&Value::Object(result.summary), Some(4))
    );
    Ok(())
}
