//! Parse + evaluate: the input is `QUERY\nVALUE` (two JSON documents); neither compiling nor
//! evaluating may panic, in either on_missing_key mode. The value text is also parsed straight
//! into a tape the way `routeval filter` does (`Doc::parse_projected`), which must never panic
//! and, when the text is valid JSON, must give the same result as the `Value` path.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_query_dsl::{Doc, OnMissingKey, Query};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (q, v) = text.split_once('\n').unwrap_or((text, "{}"));
    let Ok(q) = serde_json::from_str::<serde_json::Value>(q) else { return };
    let v_text = v;
    let Ok(query) = Query::parse(&q) else { return };
    let keys = query.top_level_keys();
    let mut doc = Doc::default();
    let projected = doc.parse_projected(v_text.as_bytes(), &keys);
    let Ok(v) = serde_json::from_str::<serde_json::Value>(v_text) else { return };
    assert!(projected.is_ok(), "valid JSON refused: {projected:?}");
    for omk in [OnMissingKey::Skip, OnMissingKey::Error] {
        let full = query.matches(&v, omk);
        if v.is_object() {
            assert_eq!(query.matches_doc(&doc, omk), full);
        }
    }
});
