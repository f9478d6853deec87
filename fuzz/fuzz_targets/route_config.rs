//! `routeval route` configs: JSON, or Jsonnet evaluated by routeval-io's adapter
//! (`routeval_io::jsonnet`; imports resolve in a
//! directory that does not exist), then `QueryRoutedMetric::from_config` with the built-in
//! metrics and an evaluation over the instances that follow. Input layout:
//! `FLAG CONFIG \0 INSTANCE-LINES`; FLAG bit 0 = the config is Jsonnet. Nothing may panic;
//! Jsonnet errors are one line naming the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_query_dsl::route::QueryRoutedMetric;
use routeval_query_dsl::route::metrics::BuiltinMetric;
use serde_json::Value;

use routeval_io::jsonnet;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let (config, instances) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &b""[..]),
    };
    let text = if flags & 1 == 1 {
        match jsonnet::to_json(config, "routes.jsonnet", std::path::Path::new("/nonexistent-fuzz-dir")) {
            Ok(t) => t,
            Err(jsonnet::JsonnetError(e)) => {
                assert!(e.starts_with("routes.jsonnet") || e.starts_with("/nonexistent-fuzz-dir"), "{e}");
                assert!(!e.contains('\n'), "multi-line error: {e}");
                return;
            }
        }
    } else {
        match std::str::from_utf8(config) {
            Ok(t) => t.to_string(),
            Err(_) => return,
        }
    };
    let Ok(config) = serde_json::from_str::<Value>(&text) else { return };
    let routed = match config.get("routes") {
        Some(_) => config.clone(),
        None => config.get("init_args").cloned().unwrap_or(Value::Null),
    };
    let Ok(metric) = QueryRoutedMetric::from_config(&routed, BuiltinMetric::from_config) else {
        return;
    };
    let instances: Vec<Value> = instances
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect();
    if let Ok(result) = metric.evaluate(&instances) {
        let _ = format!("{result:?}");
    }
});
