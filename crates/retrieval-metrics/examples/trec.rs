//! Evaluate the example run with trec_eval's measures, as a library.
//!
//! Run: `cargo run -p routeval-retrieval-metrics --example trec`
//! (data: `examples/data/trec/{qrels,run}.txt` at the workspace root).

use routeval_retrieval_metrics::trec::{self, EvalOptions, MeasureSet, Qrels, Run, rank_by_score};
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/trec");
    // Parsers take bytes or readers; opening files is the caller's business.
    let qrels = Qrels::from_bytes(&std::fs::read(dir.join("qrels.txt"))?, "qrels.txt")?;
    let run_bytes = std::fs::read(dir.join("run.txt"))?;

    // trec_eval -q -m map -m P.5 -m ndcg_cut.5 -m relstring
    let opts = EvalOptions {
        measures: MeasureSet::parse(&["map", "P.5", "ndcg_cut.5", "relstring"])?,
        per_query: true,
        ..EvalOptions::default()
    };
    let ev = trec::evaluate_bytes(&qrels, &run_bytes, "run.txt", &opts, "qrels.txt")?;
    print!(
        "{}",
        String::from_utf8_lossy(&trec::format::render_text(&ev, true, true))
    );

    // Values are also available directly: summary slots follow the measure set's layout.
    for m in ev.measures.measures() {
        for (k, name) in m.names.iter().enumerate() {
            println!("{name} = {}", ev.summary[m.offset + k]);
        }
    }

    // The ranking trec_eval uses: score descending, ties by docno descending.
    let run = Run::from_bytes(&run_bytes, "run.txt")?;
    let mut q1: Vec<(String, f64)> = run.queries[&b"q1"[..]]
        .iter()
        .map(|d| (String::from_utf8_lossy(&d.docno).into_owned(), d.score))
        .collect();
    rank_by_score(&mut q1);
    println!(
        "q1 ranked: {:?}",
        q1.iter().map(|d| d.0.as_str()).collect::<Vec<_>>()
    );
    Ok(())
}
