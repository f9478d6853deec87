//! Score a guarded router on GQR-Bench-shaped rows as a library: ID accuracy, per-OOD-set
//! accuracy, mean OOD accuracy, GQR score, and the sklearn-weighted blocks.
//!
//! `cargo run -p routeval-routing-scores --example gqr_score` (sample data in
//! `examples/data/gqr/`: exported rows and a router's predictions).

use routeval_routing_scores::gqr::{GqrAccumulator, RawLabel};
use std::collections::HashMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/gqr");
    let preds: HashMap<String, RawLabel> =
        std::fs::read_to_string(format!("{dir}/predictions.jsonl"))?
            .lines()
            .map(|l| -> Result<_, Box<dyn std::error::Error>> {
                let v: serde_json::Value = serde_json::from_str(l)?;
                let label = RawLabel::from_json(&v["label"]).ok_or("label must be a number")?;
                Ok((v["id"].as_str().ok_or("id")?.to_string(), label))
            })
            .collect::<Result<_, _>>()?;
    let mut acc = GqrAccumulator::default();
    for line in std::fs::read_to_string(format!("{dir}/rows.jsonl"))?.lines() {
        let row: serde_json::Value = serde_json::from_str(line)?;
        let id = row["id"].as_str().ok_or("id")?;
        let pred = preds
            .get(id)
            .ok_or_else(|| format!("no prediction for {id}"))?
            .strict()?;
        match row["label"].as_i64() {
            Some(3) => acc.add_ood(row["dataset"].as_str().ok_or("dataset")?, pred),
            Some(label) => acc.add_id(label, pred),
            None => return Err("label".into()),
        }
    }
    let s = acc.finish();
    println!(
        "ID accuracy  {:.4}  (sklearn weighted P/R/F1 {:.4} {:.4} {:.4})",
        s.id_accuracy, s.id.precision, s.id.recall, s.id.f1
    );
    for d in &s.ood_per_dataset {
        println!(
            "  OOD {:<22} {:.4}",
            format!("{:?}", d.dataset),
            d.eval.accuracy
        );
    }
    println!(
        "OOD accuracy {:.4} (mean of {} sets)",
        s.ood_accuracy,
        s.ood_per_dataset.len()
    );
    println!(
        "GQR score    {:.4} (partial: this sample has 4 of the 7 OOD sets)",
        s.gqr_score
    );
    Ok(())
}
