//! routeval's main job on the shipped example: trec_eval-exact evaluation of a TREC run.
//!
//! Run: `cargo run --example trec` (the CLI equivalent is
//! `cargo run -p routeval-cli -- trec examples/data/trec/qrels.txt examples/data/trec/run.txt`).

use routeval::retrieval_metrics::trec::{self, EvalOptions, Qrels};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/trec");
    let qrels = Qrels::from_bytes(&std::fs::read(dir.join("qrels.txt"))?, "qrels.txt")?;
    let run = std::fs::read(dir.join("run.txt"))?;
    // No -m: trec_eval's `official` measures, printed exactly as trec_eval prints them.
    let ev = trec::evaluate_bytes(
        &qrels,
        &run,
        "run.txt",
        &EvalOptions::default(),
        "qrels.txt",
    )?;
    print!(
        "{}",
        String::from_utf8_lossy(&trec::format::render_text(&ev, false, true))
    );
    Ok(())
}
