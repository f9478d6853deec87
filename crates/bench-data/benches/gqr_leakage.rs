//! The GQR-unseen leakage screen at scale (synthetic texts made here): index 50k test texts
//! (exact + 8-word shingles, BLAKE2b-64), then screen 1M candidate texts; single thread and
//! rayon (the index is read-only, so candidates split freely).

use criterion::{Criterion, criterion_group, criterion_main};
use rayon::prelude::*;
use routeval_bench_data::gqr::text::OverlapIndex;
use std::hint::black_box;

fn texts(n: usize, seed: u64, words: usize) -> Vec<String> {
    const VOCAB: [&str; 32] = [
        "the", "a", "river", "Garden", "quiet", "distant", "comet", "falcon", "harbor", "orchard",
        "violin", "meadow", "lantern", "castle", "glacier", "tundra", "puzzle", "sonnet", "marble",
        "pebble", "quartz", "compass", "silver", "golden", "ancient", "hidden", "bright",
        "recalls", "explores", "mentions", "Why?", "café,",
    ];
    let mut x = seed | 1;
    (0..n)
        .map(|i| {
            let mut s = String::with_capacity(words * 8);
            for _ in 0..words {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push_str(VOCAB[(x % 32) as usize]);
                s.push(' ');
            }
            s.push_str(&i.to_string());
            s
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let test = texts(50_000, 7, 20);
    let cands = texts(1_000_000, 11, 20);
    let mut g = c.benchmark_group("gqr_leakage_screen");
    g.sample_size(10);
    g.bench_function("index_50k", |b| {
        b.iter(|| black_box(OverlapIndex::from_texts(&test)))
    });
    let ix = OverlapIndex::from_texts(&test);
    g.bench_function("screen_1M_vs_50k_one_thread", |b| {
        b.iter(|| black_box(cands.iter().filter(|t| ix.hit(t)).count()))
    });
    g.bench_function("screen_1M_vs_50k_rayon", |b| {
        b.iter(|| black_box(cands.par_iter().filter(|t| ix.hit(t)).count()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
