//! Draw CommonRouterBench's proportional sample from a question bank: largest-remainder quotas
//! from the manifest's line counts, then one-pass reservoir sampling with Python's `random`,
//! so the same `n`/`seed` pick the same rows as the reference.
//!
//! Run: `cargo run -p routeval-bench-data --example crb_sample` (on `examples/data/crb/`).

use routeval_bench_data::crb::{
    BankReader, Manifest, manifest_proportional_quotas, proportional_reservoir_sample,
};
use routeval_bench_data::pyrandom::PyRandom;
use std::io::BufReader;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/crb");
    let manifest =
        Manifest::from_slice(&std::fs::read(dir.join("manifest.json"))?, "manifest.json")?;
    let quotas = manifest_proportional_quotas(&manifest, 4)?;
    println!("quotas for n=4: {quotas:?}");
    let bank = BufReader::new(std::fs::File::open(dir.join("bank.jsonl"))?);
    let mut rng = PyRandom::new(1);
    let rows =
        proportional_reservoir_sample(BankReader::new(bank, "bank.jsonl"), &mut rng, &quotas)??;
    for r in rows {
        println!("line {:>2}: {}", r.line, r.value["id"]);
    }
    Ok(())
}
