//! A toy GQR-Bench router that emits probabilities, for `routeval gqr sweep`.
//!
//! Reads texts exported with `routeval gqr export` (`{"id", "text", ...}` per line) and writes
//! `{"id", "probs": [p_law, p_finance, p_healthcare]}`: keyword hits per domain, smoothed so a
//! text with no keyword gets 1/3 each (and is rejected as out of domain at any τ above 1/3).
//!
//! `cargo run --example gqr_probs -- texts.jsonl > probs.jsonl`
//! `routeval gqr sweep --scores probs.jsonl --from DIR`

use routeval::query_dsl::serde_json::{self, Value, json};

const KEYWORDS: [&[&str]; 3] = [
    &[
        "law",
        "legal",
        "court",
        "sue",
        "landlord",
        "contract",
        "liab",
        "defendant",
        "plaintiff",
        "statute",
        "lawyer",
        "tenant",
    ],
    &[
        "card", "bank", "money", "transfer", "pay", "account", "cash", "fee", "exchange", "invest",
        "stock", "loan",
    ],
    &[
        "doctor",
        "symptom",
        "pain",
        "disease",
        "medic",
        "health",
        "treat",
        "pill",
        "dose",
        "fever",
        "infection",
    ],
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: gqr_probs TEXTS.jsonl (from `routeval gqr export`)")?;
    for line in std::fs::read_to_string(path)?.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Value = serde_json::from_str(line)?;
        let text = row["text"].as_str().unwrap_or_default().to_lowercase();
        let hits: Vec<f64> = KEYWORDS
            .iter()
            .map(|ks| ks.iter().filter(|k| text.contains(*k)).count() as f64)
            .collect();
        let total: f64 = hits.iter().sum();
        let probs: Vec<f64> = hits
            .iter()
            .map(|h| ((h + 0.25) / (total + 0.75) * 1e4).round() / 1e4)
            .collect();
        println!("{}", json!({"id": row["id"], "probs": probs}));
    }
    Ok(())
}
