//! Properties of the resampling procedures: Monte Carlo agrees with exact enumeration,
//! results depend on the seed only (not on the thread count), and percentile intervals cover a
//! known mean at about their nominal rate.

use routeval_stats::{
    CompareOptions, PairedTest, StatsRng, SystemScores, bootstrap_test, compare_systems,
    fisher_exact, fisher_monte_carlo, mean_ci, stratified_bootstrap_ci,
};

/// Synthetic per-query differences: discrete, metric-like (multiples of 0.1) plus a shift.
fn synthetic(n: usize, seed: u64, shift: f64) -> Vec<f64> {
    let mut rng = StatsRng::for_replicate(seed, 0);
    (0..n)
        .map(|_| (rng.below(11) as f64 - 5.0) / 10.0 + shift)
        .collect()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

#[test]
fn monte_carlo_fisher_within_three_standard_errors_of_exact() {
    let iterations = 20_000u64;
    let mut checked = 0;
    for (k, shift) in [0.0, 0.05, 0.1, 0.15, 0.3].into_iter().enumerate() {
        let d = synthetic(20, 100 + k as u64, shift);
        let exact = fisher_exact(&d).p_value;
        for seed in 0..3 {
            let mc = fisher_monte_carlo(&d, iterations, seed);
            assert!(!mc.exact);
            let se = (exact * (1.0 - exact) / iterations as f64).sqrt();
            // The add-one estimator is biased by at most 1/(N+1).
            let tol = 3.0 * se + 1.0 / (iterations as f64 + 1.0);
            assert!(
                (mc.p_value - exact).abs() <= tol,
                "shift {shift} seed {seed}: MC {} vs exact {exact} (tol {tol})",
                mc.p_value
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 15);
}

#[test]
fn resampling_is_independent_of_thread_count() {
    let d = synthetic(300, 7, 0.03);
    let one = pool(1).install(|| {
        (
            mean_ci(&d, 500, 11, 0.95),
            fisher_monte_carlo(&d, 2000, 11),
            bootstrap_test(&d, 2000, 11),
        )
    });
    let two = pool(2).install(|| {
        (
            mean_ci(&d, 500, 11, 0.95),
            fisher_monte_carlo(&d, 2000, 11),
            bootstrap_test(&d, 2000, 11),
        )
    });
    assert_eq!(one, two);
    // A different seed gives a different interval (the seed is actually used).
    assert_ne!(one.0, mean_ci(&d, 500, 12, 0.95));

    let strata = vec![(0..100).collect::<Vec<_>>(), (100..300).collect()];
    let stat = |idx: &[usize]| idx.iter().map(|&i| d[i]).sum::<f64>() / idx.len() as f64;
    let s1 = pool(1).install(|| stratified_bootstrap_ci(&strata, 300, 5, 0.9, stat));
    let s2 = pool(2).install(|| stratified_bootstrap_ci(&strata, 300, 5, 0.9, stat));
    assert_eq!(s1, s2);

    let systems: Vec<SystemScores> = (0..3)
        .map(|s| SystemScores {
            name: format!("s{s}"),
            path: String::new(),
            scores: vec![synthetic(300, 50 + s, 0.0), synthetic(300, 60 + s, 0.01)],
            means: None,
        })
        .collect();
    let measures = vec!["a".to_string(), "b".to_string()];
    for test in PairedTest::ALL {
        let opts = CompareOptions {
            test,
            iterations: 500,
            ci_replicates: 200,
            all_pairs: true,
            ..Default::default()
        };
        let r1 = pool(1).install(|| compare_systems(&measures, &systems, &opts).unwrap());
        let r2 = pool(2).install(|| compare_systems(&measures, &systems, &opts).unwrap());
        assert_eq!(r1, r2, "{test}");
    }
    // The randomized Tukey HSD: the same permutations on any thread count.
    let opts = CompareOptions {
        family: Some(routeval_stats::FamilyTest::RandomizedTukey),
        iterations: 700,
        ci_level: None,
        ..Default::default()
    };
    let r1 = pool(1).install(|| compare_systems(&measures, &systems, &opts).unwrap());
    let r2 = pool(2).install(|| compare_systems(&measures, &systems, &opts).unwrap());
    assert_eq!(r1, r2, "randomized-tukey");
    let r3 = compare_systems(
        &measures,
        &systems,
        &CompareOptions {
            seed: 1,
            ..opts.clone()
        },
    )
    .unwrap();
    assert_ne!(r1, r3, "the seed is used");
}

/// Coverage of 95 % percentile intervals of a mean, on 400 synthetic data sets of 40
/// Uniform(0, 1) draws (true mean 0.5), 400 bootstrap replicates each.
///
/// Tolerance: the percentile interval of a mean at n = 40 under-covers slightly (its width
/// uses the plug-in variance, a factor (n−1)/n), so the expected rate is about 94 %; with 400
/// data sets the binomial standard error of the observed rate is ≈ 1.2 points. [0.90, 0.98]
/// is ±3.3 SE around 94 %: wide enough to hold for any correct implementation, narrow enough
/// to catch a wrong quantile, a wrong level or a resampler that ignores its draws (those give
/// 70–100 %). Everything is seeded, so the test is deterministic, not flaky.
#[test]
fn percentile_intervals_cover_the_true_mean_at_about_95_percent() {
    let sets = 400u64;
    let n = 40;
    let mut covered = 0u64;
    let mut narrow = 0u64;
    for s in 0..sets {
        let mut rng = StatsRng::for_replicate(2024, s);
        let x: Vec<f64> = (0..n).map(|_| rng.unit_f64()).collect();
        let ci = mean_ci(&x, 400, s, 0.95);
        if ci.low <= 0.5 && 0.5 <= ci.high {
            covered += 1;
        }
        // An 50 % interval must be much less often right: guards against a level mix-up.
        let ci50 = mean_ci(&x, 400, s, 0.5);
        if ci50.low <= 0.5 && 0.5 <= ci50.high {
            narrow += 1;
        }
    }
    let rate = covered as f64 / sets as f64;
    let rate50 = narrow as f64 / sets as f64;
    assert!((0.90..=0.98).contains(&rate), "95% coverage {rate}");
    assert!((0.40..=0.60).contains(&rate50), "50% coverage {rate50}");
}
