//! Percentile bootstrap confidence intervals over resampled units (Efron & Tibshirani, *An
//! Introduction to the Bootstrap*, 1993, ch. 13), generic over the statistic.
//!
//! A *unit* is whatever is resampled with replacement: a query, a RAG case, a whole
//! trajectory, a scored text. The caller's statistic receives the resampled unit indices and
//! recomputes its number from them (a mean, a pass rate, a GQR score…). Replicate `r` draws its
//! indices from [`StatsRng::for_replicate`]`(seed, r)`, so results depend only on the seed —
//! never on the number of threads (replicates run in parallel on rayon's pool).
//!
//! The interval is `(q_{(1−level)/2}, q_{(1+level)/2})` of the replicate statistics, with
//! numpy's default (`"linear"`, Hyndman & Fan type 7) quantile — the `percentile` method of
//! `scipy.stats.bootstrap`. Replicates whose statistic is NaN (e.g. an empty subgroup) are left
//! out and counted.

use crate::rng::StatsRng;
use rayon::prelude::*;
use serde::Serialize;

/// A percentile bootstrap confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BootstrapCi {
    /// Lower bound (NaN when no replicate gave a number).
    pub low: f64,
    /// Upper bound (NaN when no replicate gave a number).
    pub high: f64,
    /// Confidence level as a fraction (0.95).
    pub level: f64,
    /// Replicates drawn.
    pub replicates: u64,
    /// Replicates whose statistic was NaN (left out of the quantiles).
    pub nan_replicates: u64,
}

/// numpy's default quantile (`np.quantile(x, q)`, method `"linear"`) of sorted finite values;
/// NaN when empty. Uses numpy's `_lerp` (which switches formula at `t ≥ 0.5`).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 || q.is_nan() {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor();
    let i = lo as usize;
    if i + 1 >= n {
        return sorted[n - 1];
    }
    let t = h - lo;
    let (a, b) = (sorted[i], sorted[i + 1]);
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// The percentile interval of replicate values at `level` (values are sorted here; NaNs are
/// dropped and counted).
pub fn percentile_interval(mut values: Vec<f64>, level: f64) -> BootstrapCi {
    let replicates = values.len() as u64;
    values.retain(|v| !v.is_nan());
    let nan_replicates = replicates - values.len() as u64;
    values.sort_by(f64::total_cmp);
    let alpha = 1.0 - level;
    BootstrapCi {
        low: quantile_sorted(&values, alpha / 2.0),
        high: quantile_sorted(&values, 1.0 - alpha / 2.0),
        level,
        replicates,
        nan_replicates,
    }
}

/// The replicate statistics of a bootstrap: for each replicate `r in 0..replicates`, `n_units`
/// indices drawn uniformly with replacement from `0..n_units`, passed to `statistic`.
/// Returned in replicate order (deterministic for a seed on any number of threads).
pub fn bootstrap_replicates<F>(n_units: usize, replicates: u64, seed: u64, statistic: F) -> Vec<f64>
where
    F: Fn(&[usize]) -> f64 + Sync,
{
    (0..replicates as usize)
        .into_par_iter()
        .map_init(
            || vec![0usize; n_units],
            |idx, r| {
                StatsRng::for_replicate(seed, r as u64).fill_indices(n_units, idx);
                statistic(idx)
            },
        )
        .collect()
}

/// Percentile bootstrap CI of any statistic over `n_units` resampled units (see the module
/// docs). `level` is a fraction in (0, 1).
///
/// ```
/// use routeval_stats::bootstrap::bootstrap_ci;
/// let scores = [0.2, 0.4, 0.9, 0.5, 0.7, 0.1, 0.3, 0.8];
/// let mean = |idx: &[usize]| idx.iter().map(|&i| scores[i]).sum::<f64>() / idx.len() as f64;
/// let ci = bootstrap_ci(scores.len(), 1000, 42, 0.95, mean);
/// assert!(ci.low < 0.4875 && 0.4875 < ci.high);
/// ```
pub fn bootstrap_ci<F>(
    n_units: usize,
    replicates: u64,
    seed: u64,
    level: f64,
    statistic: F,
) -> BootstrapCi
where
    F: Fn(&[usize]) -> f64 + Sync,
{
    percentile_interval(
        bootstrap_replicates(n_units, replicates, seed, statistic),
        level,
    )
}

/// Several statistics from the same resamples: `statistics(indices, out)` writes `k` values
/// into `out` for each replicate. Returns `k` intervals. Cheaper than `k` separate calls
/// (indices drawn once) and the statistics stay jointly paired.
pub fn bootstrap_ci_multi<F>(
    n_units: usize,
    replicates: u64,
    seed: u64,
    level: f64,
    k: usize,
    statistics: F,
) -> Vec<BootstrapCi>
where
    F: Fn(&[usize], &mut [f64]) + Sync,
{
    let rows: Vec<Vec<f64>> = (0..replicates as usize)
        .into_par_iter()
        .map_init(
            || vec![0usize; n_units],
            |idx, r| {
                StatsRng::for_replicate(seed, r as u64).fill_indices(n_units, idx);
                let mut out = vec![f64::NAN; k];
                statistics(idx, &mut out);
                out
            },
        )
        .collect();
    (0..k)
        .map(|j| percentile_interval(rows.iter().map(|row| row[j]).collect(), level))
        .collect()
}

/// Percentile CIs of `k` means from the same resamples, for a row-major table `rows` of
/// `n_units × k` values (`rows[u * k + j]` = column `j` on unit `u`): the paired bootstrap CIs
/// of many mean differences at once (`routeval compare`). Replicate `r` draws the same unit
/// indices as [`bootstrap_ci_multi`] (`StatsRng::for_replicate(seed, r)`), turns them into
/// per-unit counts and computes each mean as `Σ_u count_u · rows[u][j] / n_units` in one
/// sequential pass over the table — the same resample as summing the drawn rows, without
/// random access to them (the sums differ only by float rounding order). NaN intervals when
/// `n_units = 0`. Deterministic for a seed on any number of threads.
pub fn bootstrap_mean_ci_table(
    rows: &[f64],
    n_units: usize,
    k: usize,
    replicates: u64,
    seed: u64,
    level: f64,
) -> Vec<BootstrapCi> {
    // Replicates are processed in blocks of `B`: the counts of a block's replicates are drawn
    // first, then the table is read once for the whole block (B times less memory traffic
    // than one pass per replicate). Replicate r always draws from its own stream.
    const B: usize = 8;
    let reps = replicates as usize;
    let blocks = reps.div_ceil(B);
    let stats: Vec<Vec<f64>> = (0..blocks)
        .into_par_iter()
        .map_init(
            || (vec![0usize; n_units], vec![0u32; n_units * B]),
            |(idx, counts), b| {
                let lo = b * B;
                let m = B.min(reps - lo);
                let mut out = vec![vec![0.0f64; k]; m];
                if n_units == 0 || rows.len() < n_units * k {
                    out.iter_mut().for_each(|o| o.fill(f64::NAN));
                    return out;
                }
                // counts[u * B + t] = draws of unit u in replicate lo + t.
                counts.fill(0);
                for t in 0..m {
                    StatsRng::for_replicate(seed, (lo + t) as u64).fill_indices(n_units, idx);
                    for &u in idx.iter() {
                        counts[u * B + t] += 1;
                    }
                }
                for (row, c) in rows.chunks_exact(k).zip(counts.chunks_exact(B)) {
                    for (o, &ct) in out.iter_mut().zip(c) {
                        if ct != 0 {
                            let w = ct as f64;
                            for (x, v) in o.iter_mut().zip(row) {
                                *x += w * v;
                            }
                        }
                    }
                }
                let nf = n_units as f64;
                out.iter_mut()
                    .for_each(|o| o.iter_mut().for_each(|x| *x /= nf));
                out
            },
        )
        .flatten()
        .collect();
    (0..k)
        .map(|j| percentile_interval(stats.iter().map(|row| row[j]).collect(), level))
        .collect()
}

/// Stratified resampling: each stratum (a list of unit indices) is resampled with replacement
/// to its own size, independently; `statistic` receives the concatenation of the resampled
/// unit indices, stratum by stratum in the given order (so stratum sizes, and e.g. benchmark
/// weights, are preserved in every replicate). Use it for trajectories within benchmarks, or ID
/// rows and each OOD set separately.
pub fn stratified_bootstrap_replicates<F>(
    strata: &[Vec<usize>],
    replicates: u64,
    seed: u64,
    statistic: F,
) -> Vec<f64>
where
    F: Fn(&[usize]) -> f64 + Sync,
{
    let total: usize = strata.iter().map(Vec::len).sum();
    (0..replicates as usize)
        .into_par_iter()
        .map_init(
            || vec![0usize; total],
            |idx, r| {
                let mut rng = StatsRng::for_replicate(seed, r as u64);
                let mut at = 0;
                for s in strata {
                    for slot in &mut idx[at..at + s.len()] {
                        *slot = s[rng.below(s.len() as u64) as usize];
                    }
                    at += s.len();
                }
                statistic(idx)
            },
        )
        .collect()
}

/// Percentile CI with stratified resampling (see [`stratified_bootstrap_replicates`]).
pub fn stratified_bootstrap_ci<F>(
    strata: &[Vec<usize>],
    replicates: u64,
    seed: u64,
    level: f64,
    statistic: F,
) -> BootstrapCi
where
    F: Fn(&[usize]) -> f64 + Sync,
{
    percentile_interval(
        stratified_bootstrap_replicates(strata, replicates, seed, statistic),
        level,
    )
}

/// Percentile CI of the mean of `values` over resampled units (the paired bootstrap CI of a
/// mean difference when `values` are per-unit differences).
pub fn mean_ci(values: &[f64], replicates: u64, seed: u64, level: f64) -> BootstrapCi {
    let n = values.len();
    bootstrap_ci(n, replicates, seed, level, |idx| {
        if idx.is_empty() {
            return f64::NAN;
        }
        idx.iter().map(|&i| values[i]).sum::<f64>() / n as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_form_equals_index_form_with_a_partial_block() {
        let (n, k) = (97usize, 3usize);
        let rows: Vec<f64> = (0..n * k)
            .map(|i| ((i * 7919) % 101) as f64 / 13.0 - 3.0)
            .collect();
        let fast = bootstrap_mean_ci_table(&rows, n, k, 403, 11, 0.9);
        let slow = bootstrap_ci_multi(n, 403, 11, 0.9, k, |idx, out| {
            out.fill(0.0);
            for &u in idx {
                for (o, v) in out.iter_mut().zip(&rows[u * k..(u + 1) * k]) {
                    *o += v;
                }
            }
            out.iter_mut().for_each(|o| *o /= n as f64);
        });
        for (a, b) in fast.iter().zip(&slow) {
            assert!(
                (a.low - b.low).abs() <= 1e-12 * a.low.abs().max(1.0),
                "{a:?} {b:?}"
            );
            assert!(
                (a.high - b.high).abs() <= 1e-12 * a.high.abs().max(1.0),
                "{a:?} {b:?}"
            );
            assert_eq!(a.replicates, b.replicates);
        }
        assert!(
            bootstrap_mean_ci_table(&[], 0, 2, 10, 0, 0.9)[1]
                .low
                .is_nan()
        );
    }

    #[test]
    fn quantile_matches_numpy_linear() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&x, 0.0), 1.0);
        assert_eq!(quantile_sorted(&x, 1.0), 4.0);
        assert_eq!(quantile_sorted(&x, 0.5), 2.5);
        // np.quantile([1,2,3,4], 0.025) = 1.075
        assert!((quantile_sorted(&x, 0.025) - 1.075).abs() < 1e-15);
        assert!(quantile_sorted(&[], 0.5).is_nan());
    }

    #[test]
    fn deterministic_for_a_seed() {
        let v: Vec<f64> = (0..50).map(|i| (i as f64 * 0.37).sin()).collect();
        let a = mean_ci(&v, 200, 9, 0.95);
        let b = mean_ci(&v, 200, 9, 0.95);
        assert_eq!(a, b);
        let c = mean_ci(&v, 200, 10, 0.95);
        assert_ne!(a, c);
    }

    #[test]
    fn stratified_keeps_stratum_membership() {
        let strata = vec![vec![0, 1, 2], vec![3, 4]];
        let reps = stratified_bootstrap_replicates(&strata, 50, 1, |idx| {
            assert_eq!(idx.len(), 5);
            assert!(idx[..3].iter().all(|&i| i < 3));
            assert!(idx[3..].iter().all(|&i| (3..5).contains(&i)));
            1.0
        });
        assert_eq!(reps.len(), 50);
    }

    #[test]
    fn nan_replicates_are_counted() {
        let ci = bootstrap_ci(3, 10, 0, 0.9, |_| f64::NAN);
        assert_eq!(ci.nan_replicates, 10);
        assert!(ci.low.is_nan());
    }
}
