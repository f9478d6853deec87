//! Parse + evaluate: the input is `QUERY\nVALUE` (two JSON documents); neither compiling nor
//! evaluating may panic, in either on_missing_key mode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_query_dsl::{OnMissingKey, Query};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (q, v) = text.split_once('\n').unwrap_or((text, "{}"));
    let Ok(q) = serde_json::from_str::<serde_json::Value>(q) else { return };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(v) else { return };
    if let Ok(query) = Query::parse(&q) {
        let _ = query.matches(&v, OnMissingKey::Skip);
        let _ = query.matches(&v, OnMissingKey::Error);
    }
});
