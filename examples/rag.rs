//! RAG quality with routeval: score the sample cases in `examples/data/rag/cases.json` exactly
//! as rag-quality-check 0.1.0 would, then print the summary, one case in detail and the
//! per-case rows as CSV.
//!
//! `cargo run --example rag` (or `routeval rag examples/data/rag/cases.json --k 2`).

use routeval::retrieval_metrics::rag::{Options, evaluate, parse_cases};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/rag/cases.json");
    // IO at the edge: the library takes text, not paths.
    let raw = std::fs::read_to_string(path)?;
    let cases = parse_cases(&raw, path)?;
    let report = evaluate(
        &cases,
        &Options {
            k: 2,
            threshold: 0.5,
        },
        None,
    )?;

    println!("{}\n", report.summary_as("routeval rag"));
    if let Some(case) = report.weakest(1).first() {
        println!("weakest case:\n{}\n", case.summary());
    }
    println!(
        "mean nDCG@2 (linear gains): {:?}",
        report.metric("ndcg_at_k")
    );
    println!("every case ok: {}\n", report.ok());
    report.write_rows_csv(std::io::stdout())?;
    Ok(())
}
