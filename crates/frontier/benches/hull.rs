//! NDCH hull and AIQ on 100,000 random (cost, quality) points (the budget: ≤ 0.2 s).

use criterion::{Criterion, criterion_group, criterion_main};
use routeval_frontier::ndch::{aiq, ndch_hull, pareto};

/// A fixed pseudo-random sequence (SplitMix64), so runs are comparable.
fn points(n: usize) -> Vec<(f64, f64)> {
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n).map(|_| (next() * 20.0, next())).collect()
}

fn bench(c: &mut Criterion) {
    let p = points(100_000);
    let mut g = c.benchmark_group("frontier");
    g.sample_size(20);
    g.bench_function("ndch_hull+aiq 100k points", |b| {
        b.iter(|| {
            let h = ndch_hull(std::hint::black_box(&p));
            aiq(&[h])
        })
    });
    g.bench_function("pareto 100k points", |b| {
        b.iter(|| pareto(std::hint::black_box(&p)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
