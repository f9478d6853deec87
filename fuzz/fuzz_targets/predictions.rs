//! Prediction files, line by line as the CLI reads them: `crb eval --predictor file:` (a JSON
//! object `id → entry` or JSONL `{"id", "tier_id"|"pred_tier_id"|"tier", "usage"?}`; entries
//! through `PredictionMap::parse_entry`, ids through `id_key`) and `gqr score --predictions`
//! (JSONL `{"id", "label"}` through `RawLabel::from_json` and the reference's label rules).
//! Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_routing_scores::crb::records::{PredictionMap, id_key};
use routeval_routing_scores::gqr::RawLabel;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(data) {
        for (k, v) in &m {
            let _ = PredictionMap::parse_entry(k, v);
        }
    }
    for line in data.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<Value>(line) else { continue };
        if let Some(id) = v.get("id") {
            let id = id_key(id);
            let t = v
                .get("tier_id")
                .or_else(|| v.get("pred_tier_id"))
                .or_else(|| v.get("tier"))
                .cloned()
                .unwrap_or(Value::Null);
            let _ = PredictionMap::parse_entry(&id, &t);
            if let Some(u) = v.get("usage") {
                let _ = PredictionMap::parse_entry(&id, &serde_json::json!({"tier_id": t, "usage": u}));
            }
        }
        if let Some(label) = v.get("label").and_then(RawLabel::from_json) {
            let _ = label.strict().map_err(|e| e.to_string());
            let _ = label.cast().map_err(|e| e.to_string());
        }
    }
});
