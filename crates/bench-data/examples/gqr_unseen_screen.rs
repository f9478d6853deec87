//! The GQR-unseen leakage screen and hash-ranked cap as a library, on a few texts:
//! texts that overlap the benchmark (exactly after normalisation, or by an 8-word shingle)
//! are dropped, duplicates across sets are removed, and each set keeps its smallest seeded
//! BLAKE2b-64 hashes.
//!
//! `cargo run -p routeval-bench-data --example gqr_unseen_screen`

use routeval_bench_data::gqr::select::select_unseen;
use routeval_bench_data::gqr::text::{OverlapIndex, normalize};
use routeval_core::Domain;

fn main() {
    let benchmark = [
        "Can my landlord keep my deposit after I moved out of the apartment?",
        "what does jamaican people speak?",
    ];
    let seen = OverlapIndex::from_texts(benchmark);
    let s = |t: &str| Some(t.to_string());
    let raw = vec![
        (
            "banking77".to_string(),
            Domain::Finance,
            vec![
                s("Why was my card declined at the shop?"),
                s("why was my card DECLINED at the shop"),
                s("hi"),
                s("How do I top up my account by bank transfer?"),
            ],
        ),
        (
            "legal_reddit".to_string(),
            Domain::Law,
            vec![
                s(
                    "Landlord question: can my landlord keep my deposit after I moved out of the apartment?",
                ),
                s("My employer has not paid my final wages, what can I do?"),
                None,
            ],
        ),
    ];
    let (rows, stats) = select_unseen(&raw, &seen, 1000, 42);
    for r in &rows {
        println!("{:<13} {:<10} {}", r.dataset, r.domain, r.text);
    }
    for (name, st) in &stats {
        println!("{name}: {st:?}");
    }
    println!(
        "normalize(\"İstanbul café\") = {:?}",
        normalize("İstanbul café")
    );
}
