//! Resampling costs: Fisher's Monte Carlo sign-flip test with 10,000 iterations on 1,000
//! queries (issue 11 acceptance: ≤ 1 s), the paired bootstrap test and a 1,000-replicate
//! percentile CI of a mean on the same data.

use criterion::{Criterion, criterion_group, criterion_main};
use routeval_stats::{StatsRng, bootstrap_test, fisher_monte_carlo, mean_ci};
use std::hint::black_box;

fn data(n: usize) -> Vec<f64> {
    let mut rng = StatsRng::for_replicate(1, 0);
    (0..n)
        .map(|_| (rng.below(21) as f64 - 9.0) / 20.0)
        .collect()
}

fn bench(c: &mut Criterion) {
    let d = data(1000);
    let mut g = c.benchmark_group("resampling_1000_queries");
    g.sample_size(10);
    g.bench_function("fisher_monte_carlo_10000", |b| {
        b.iter(|| fisher_monte_carlo(black_box(&d), 10_000, 0))
    });
    g.bench_function("bootstrap_test_10000", |b| {
        b.iter(|| bootstrap_test(black_box(&d), 10_000, 0))
    });
    g.bench_function("mean_ci_1000", |b| {
        b.iter(|| mean_ci(black_box(&d), 1000, 0, 0.95))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
