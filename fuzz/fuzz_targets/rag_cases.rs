//! rag case parsing and evaluation, as `routeval rag` does on a file (lexical path, no
//! embedder): JSON list / object / JSON Lines → cases → metrics → every report view. The first
//! byte picks `k` and the threshold. Nothing may panic; the report's JSON must be valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_retrieval_metrics::rag::{Options, evaluate, parse_cases};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let Ok(cases) = parse_cases(text, "cases.json") else { return };
    let opts = Options {
        k: [5, 1, 3, 10][(flags & 3) as usize],
        threshold: [0.5, 0.0, 1.0, 0.25][((flags >> 2) & 3) as usize],
    };
    let Ok(report) = evaluate(&cases, &opts, None) else { return };
    let _ = report.render("rag-quality-check", 3);
    let _ = report.grouped_notes();
    let json = report.to_json();
    if let Err(e) = serde_json::from_str::<serde_json::Value>(&json) {
        // NaN/Infinity are Python json.dumps spellings serde_json refuses; anything else is a bug.
        assert!(json.contains("NaN") || json.contains("Infinity"), "invalid report JSON: {e}\n{json}");
    }
    let mut csv = Vec::new();
    report.write_rows_csv(&mut csv).unwrap();
    let mut jsonl = Vec::new();
    report.write_rows_jsonl(&mut jsonl).unwrap();
});
