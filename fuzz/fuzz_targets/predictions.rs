//! Prediction files, line by line as the CLI reads them: `crb eval --predictor file:` (a JSON
//! object `id → entry` or JSONL `{"id", "tier_id"|"pred_tier_id"|"tier", "usage"?}`; entries
//! through `crb::predictions::parse_predictions`, the CLI's parser) and `gqr score --predictions`
//! (JSONL `{"id", "label"}` through `RawLabel::from_json` and the reference's label rules).
//! Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_routing_scores::gqr::RawLabel;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    // The CLI's whole parser (bytes in: JSON object or JSONL, typed errors out).
    let _ = routeval_routing_scores::crb::predictions::parse_predictions(data);
    for line in data.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<Value>(line) else { continue };
        if let Some(label) = v.get("label").and_then(RawLabel::from_json) {
            let _ = label.strict().map_err(|e| e.to_string());
            let _ = label.cast().map_err(|e| e.to_string());
        }
    }
});
