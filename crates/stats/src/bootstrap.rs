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
    /// Resampled units behind the interval (all strata together; 0 = not recorded). Read by
    /// [`degenerate`](Self::degenerate); not serialized.
    #[serde(skip_serializing)]
    pub units: u64,
}

/// The fewest resampling units a percentile bootstrap interval is reported without a warning:
/// with fewer, the resamples are few distinct multisets and the interval is too narrow to be
/// read as a confidence statement (Efron & Tibshirani 1993, ch. 13, discuss small-sample
/// coverage; the bound 10 is routeval's stated rule).
pub const MIN_RESAMPLING_UNITS: u64 = 10;

/// Why an interval must not be read as a confidence statement: shown with the interval in
/// every face (text, JSON `"degenerate"`, Markdown/HTML notes). Serializes as its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DegenerateInterval {
    /// Fewer than 2 units were resampled: every replicate is the same sample.
    FewerThanTwoUnits {
        /// Units resampled.
        units: u64,
    },
    /// Every replicate gave the same value (e.g. one unit per stratum, or identical units):
    /// zero width, no variance behind it — not certainty.
    ZeroWidth,
    /// Fewer than [`MIN_RESAMPLING_UNITS`] units.
    FewUnits {
        /// Units resampled.
        units: u64,
    },
}

impl DegenerateInterval {
    /// The one-line reason.
    pub fn reason(self) -> String {
        match self {
            DegenerateInterval::FewerThanTwoUnits { units } => format!(
                "degenerate: {units} resampled unit{} (fewer than 2), no variance",
                if units == 1 { "" } else { "s" }
            ),
            DegenerateInterval::ZeroWidth => {
                "degenerate: zero width, every replicate gave the same value (no variance, not certainty)"
                    .to_string()
            }
            DegenerateInterval::FewUnits { units } => format!(
                "degenerate: only {units} resampled units (fewer than {MIN_RESAMPLING_UNITS})"
            ),
        }
    }
}

impl std::fmt::Display for DegenerateInterval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason())
    }
}

impl Serialize for DegenerateInterval {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.reason())
    }
}

impl BootstrapCi {
    /// Why this interval is degenerate, if it is (checked in order: fewer than 2 units, zero
    /// width, fewer than [`MIN_RESAMPLING_UNITS`] units). An interval without a value (NaN
    /// bounds, printed `n/a`/`null`) is not flagged here. `units` = 0 (not recorded) skips
    /// the unit rules.
    pub fn degenerate(&self) -> Option<DegenerateInterval> {
        if !(self.low.is_finite() && self.high.is_finite()) {
            return None;
        }
        let recorded = self.units > 0;
        if recorded && self.units < 2 {
            Some(DegenerateInterval::FewerThanTwoUnits { units: self.units })
        } else if self.low == self.high {
            Some(DegenerateInterval::ZeroWidth)
        } else if recorded && self.units < MIN_RESAMPLING_UNITS {
            Some(DegenerateInterval::FewUnits { units: self.units })
        } else {
            None
        }
    }

    /// This interval with `units` recorded.
    pub fn with_units(mut self, units: usize) -> BootstrapCi {
        self.units = units as u64;
        self
    }
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

/// [`quantile_sorted`] of `values` without sorting them all: the two order statistics it
/// reads are selected (`select_nth_unstable`, O(n)); the same value as sorting first.
fn quantile_select(values: &mut [f64], q: f64) -> f64 {
    let n = values.len();
    if n == 0 || q.is_nan() {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let i = h.floor() as usize;
    if i + 1 >= n {
        return values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    }
    let (_, a, rest) = values.select_nth_unstable_by(i, f64::total_cmp);
    let a = *a;
    let b = rest.iter().copied().min_by(f64::total_cmp).unwrap_or(a);
    quantile_sorted(&[a, b], h - i as f64)
}

/// The percentile interval of replicate values at `level` (NaNs are dropped and counted).
pub fn percentile_interval(mut values: Vec<f64>, level: f64) -> BootstrapCi {
    let replicates = values.len() as u64;
    values.retain(|v| !v.is_nan());
    let nan_replicates = replicates - values.len() as u64;
    let alpha = 1.0 - level;
    BootstrapCi {
        low: quantile_select(&mut values, alpha / 2.0),
        high: quantile_select(&mut values, 1.0 - alpha / 2.0),
        level,
        replicates,
        nan_replicates,
        units: 0,
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
    .with_units(n_units)
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
        .map(|j| {
            percentile_interval(rows.iter().map(|row| row[j]).collect(), level).with_units(n_units)
        })
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
    mean_ci_table_with_limit(rows, n_units, k, replicates, seed, level, IN_MEMORY_VALUES)
}

/// Replicate values kept in memory at most (`replicates × k`); beyond, the intervals are
/// computed by exact streamed selection ([`streamed_intervals`]), so memory does not grow with
/// the replicate count. 2^22 values = 32 MiB.
const IN_MEMORY_VALUES: u64 = 1 << 22;

/// Replicates per block of [`bootstrap_mean_ci_table`].
const TABLE_BLOCK: usize = 8;

/// Percentile CIs of the mean differences `mean_b − mean_a` for every `(a, b)` of `pairs`,
/// from one paired bootstrap of the columns of `rows` (the layout of
/// [`bootstrap_mean_ci_table`]: `rows[u * k + j]` = column `j` on unit `u`). Each replicate
/// resamples the units once (the same draws as [`bootstrap_mean_ci_table`]), computes every
/// column's mean and takes the pairs' differences, so `P` pairs of `k` columns cost one pass
/// over `k` columns instead of `P`: the CIs of every pair of many systems (`routeval compare
/// --test tukey`). A difference of means equals the mean of the differences up to float
/// rounding order. Out-of-range pair indices give NaN intervals.
pub fn bootstrap_mean_diff_ci_table(
    rows: &[f64],
    n_units: usize,
    k: usize,
    pairs: &[(usize, usize)],
    replicates: u64,
    seed: u64,
    level: f64,
) -> Vec<BootstrapCi> {
    mean_table_impl(
        rows,
        n_units,
        k,
        Some(pairs),
        replicates,
        seed,
        level,
        IN_MEMORY_VALUES,
    )
}

fn mean_ci_table_with_limit(
    rows: &[f64],
    n_units: usize,
    k: usize,
    replicates: u64,
    seed: u64,
    level: f64,
    in_memory: u64,
) -> Vec<BootstrapCi> {
    mean_table_impl(rows, n_units, k, None, replicates, seed, level, in_memory)
}

/// The kernel of [`bootstrap_mean_ci_table`] (`pairs` = `None`: one interval per column) and
/// [`bootstrap_mean_diff_ci_table`] (one interval per pair of columns).
#[allow(clippy::too_many_arguments)]
fn mean_table_impl(
    rows: &[f64],
    n_units: usize,
    k: usize,
    pairs: Option<&[(usize, usize)]>,
    replicates: u64,
    seed: u64,
    level: f64,
    in_memory: u64,
) -> Vec<BootstrapCi> {
    // Statistics per replicate: the columns' means, or the pairs' differences of them.
    let k_out = pairs.map_or(k, <[(usize, usize)]>::len);
    // Replicates are processed in blocks of `B`: the counts of a block's replicates are drawn
    // first, then the table is read once for the whole block (B times less memory traffic
    // than one pass per replicate). Replicate r always draws from its own stream, so a block
    // gives the same values however often it is evaluated.
    const B: usize = TABLE_BLOCK;
    let reps = replicates as usize;
    let blocks = reps.div_ceil(B);
    // The column means of the block's replicates into `out` (replicate-major, `k` each).
    let column_means =
        |lo: usize, m: usize, idx: &mut Vec<usize>, counts: &mut Vec<u32>, out: &mut Vec<f64>| {
            out.clear();
            out.resize(m * k, 0.0);
            if n_units == 0 || rows.len() < n_units * k {
                out.fill(f64::NAN);
                return;
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
                for (o, &ct) in out.chunks_exact_mut(k).zip(c) {
                    if ct != 0 {
                        let w = ct as f64;
                        for (x, v) in o.iter_mut().zip(row) {
                            *x += w * v;
                        }
                    }
                }
            }
            let nf = n_units as f64;
            out.iter_mut().for_each(|x| *x /= nf);
        };
    let block = |b: usize,
                 (idx, counts, means): &mut (Vec<usize>, Vec<u32>, Vec<f64>),
                 out: &mut Vec<f64>| {
        let lo = b * B;
        let m = B.min(reps - lo);
        let Some(p) = pairs else {
            column_means(lo, m, idx, counts, out);
            return;
        };
        column_means(lo, m, idx, counts, means);
        out.clear();
        for t in 0..m {
            let row = &means[t * k..(t + 1) * k];
            out.extend(p.iter().map(|&(a, b)| match (row.get(a), row.get(b)) {
                (Some(x), Some(y)) => y - x,
                _ => f64::NAN,
            }));
        }
    };
    let init = || (vec![0usize; n_units], vec![0u32; n_units * B], Vec::new());
    let with_units = |v: Vec<BootstrapCi>| v.into_iter().map(|c| c.with_units(n_units)).collect();
    if let Some(p) = pairs
        && replicates.saturating_mul(k as u64) <= in_memory
    {
        // Keep every replicate's column means (replicates × k values, however many pairs)
        // and take each pair's differences from them.
        let means: Vec<f64> = (0..blocks)
            .into_par_iter()
            .map_init(
                || (init(), Vec::new()),
                |((idx, counts, _), out), b| {
                    let lo = b * B;
                    column_means(lo, B.min(reps - lo), idx, counts, out);
                    out.clone()
                },
            )
            .flatten_iter()
            .collect();
        return with_units(
            p.par_iter()
                .map(|&(a, b)| {
                    let v: Vec<f64> = (0..reps)
                        .map(|r| match (means.get(r * k + a), means.get(r * k + b)) {
                            (Some(x), Some(y)) if a < k && b < k => y - x,
                            _ => f64::NAN,
                        })
                        .collect();
                    percentile_interval(v, level)
                })
                .collect(),
        );
    }
    let k = k_out;
    if replicates.saturating_mul(k as u64) > in_memory {
        return with_units(streamed_intervals(
            replicates, blocks, k, level, init, block,
        ));
    }
    let stats: Vec<f64> = (0..blocks)
        .into_par_iter()
        .map_init(
            || (init(), Vec::new()),
            |(scratch, out), b| {
                block(b, scratch, out);
                out.clone()
            },
        )
        .flatten_iter()
        .collect();
    with_units(
        (0..k)
            .map(|j| {
                percentile_interval(
                    stats.iter().skip(j).step_by(k.max(1)).copied().collect(),
                    level,
                )
            })
            .collect(),
    )
}

/// Order-preserving key of a non-NaN float (the order of `f64::total_cmp`).
fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// Bits of the key decided per selection pass.
const DIGIT_BITS: u32 = 12;

/// Candidates gathered at most per selected order statistic before the final exact pass.
const GATHER_CAP: u64 = 1 << 16;

/// One order statistic being selected: column, its rank among the column's non-NaN values,
/// the key prefix found so far (`bits` high bits) and the rank within that prefix's bucket.
#[derive(Debug, Clone, Copy)]
struct Target {
    col: usize,
    orig: u64,
    prefix: u64,
    bits: u32,
    rank: u64,
    bucket: u64,
    value: Option<f64>,
}

impl Target {
    fn matches(&self, key: u64) -> bool {
        self.bits == 0 || key >> (64 - self.bits) == self.prefix
    }
    fn digit(&self, key: u64) -> usize {
        let rest = key << self.bits;
        (rest >> (64 - DIGIT_BITS)) as usize
    }
}

/// Exact percentile intervals (the values [`percentile_interval`] gives) of `k` statistics
/// over `replicates` replicates, without keeping the replicate values: `block(b, scratch,
/// out)` writes the values of block `b` (replicate-major, `k` per replicate) and is called
/// again for each pass (radix selection of the needed order statistics on the float's order
/// key, 12 bits per pass, then the few remaining candidates gathered and sorted). Memory:
/// `O(k · 4096)` counts plus at most 65,536 candidates per order statistic, whatever the
/// replicate count; time: a few evaluations of every replicate.
fn streamed_intervals<S, I, F>(
    replicates: u64,
    blocks: usize,
    k: usize,
    level: f64,
    init: I,
    block: F,
) -> Vec<BootstrapCi>
where
    S: Send,
    I: Fn() -> S + Sync + Send,
    F: Fn(usize, &mut S, &mut Vec<f64>) + Sync + Send,
{
    let bins = 1usize << DIGIT_BITS;
    // A histogram of the next digit per target (or, first, per column).
    let histogram = |targets: &[Target]| -> Vec<u64> {
        (0..blocks)
            .into_par_iter()
            .fold(
                || (init(), Vec::new(), vec![0u64; targets.len() * bins]),
                |(mut scratch, mut out, mut h), b| {
                    block(b, &mut scratch, &mut out);
                    for row in out.chunks_exact(k) {
                        for (t, tg) in targets.iter().enumerate() {
                            let x = row[tg.col];
                            if x.is_nan() {
                                continue;
                            }
                            let key = order_key(x);
                            if tg.matches(key) {
                                h[t * bins + tg.digit(key)] += 1;
                            }
                        }
                    }
                    (scratch, out, h)
                },
            )
            .map(|(_, _, h)| h)
            .reduce(
                || vec![0u64; targets.len() * bins],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            )
    };
    // Pass 1: per-column histograms of the top digit; they also count the non-NaN values.
    let cols: Vec<Target> = (0..k)
        .map(|col| Target {
            col,
            orig: 0,
            prefix: 0,
            bits: 0,
            rank: 0,
            bucket: 0,
            value: None,
        })
        .collect();
    let h0 = histogram(&cols);
    let valid: Vec<u64> = (0..k)
        .map(|c| h0[c * bins..(c + 1) * bins].iter().sum())
        .collect();
    // The order statistics numpy's linear quantile reads (as in `quantile_sorted`).
    let alpha = 1.0 - level;
    let qs = [alpha / 2.0, 1.0 - alpha / 2.0];
    let ranks_of = |n: u64, q: f64| -> (u64, u64, f64) {
        let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
        let lo = h.floor();
        let i = lo as u64;
        (i.min(n - 1), (i + 1).min(n - 1), h - lo)
    };
    let mut targets: Vec<Target> = Vec::new();
    for (c, &n) in valid.iter().enumerate() {
        if n == 0 {
            continue;
        }
        for q in qs {
            let (i, j, _) = ranks_of(n, q);
            for r in [i, j] {
                if !targets.iter().any(|t| t.col == c && t.orig == r) {
                    targets.push(Target {
                        col: c,
                        orig: r,
                        prefix: 0,
                        bits: 0,
                        rank: r,
                        bucket: n,
                        value: None,
                    });
                }
            }
        }
    }
    // Descend into the bucket holding each target's rank.
    let descend = |t: &mut Target, h: &[u64]| {
        let mut before = 0u64;
        for (d, &cnt) in h.iter().enumerate() {
            if t.rank < before + cnt {
                t.prefix = (t.prefix << DIGIT_BITS) | d as u64;
                t.bits += DIGIT_BITS;
                t.rank -= before;
                t.bucket = cnt;
                return;
            }
            before += cnt;
        }
    };
    for t in &mut targets {
        descend(t, &h0[t.col * bins..(t.col + 1) * bins]);
    }
    loop {
        let refine: Vec<usize> = (0..targets.len())
            .filter(|&i| targets[i].bucket > GATHER_CAP && targets[i].bits + DIGIT_BITS <= 64)
            .collect();
        if refine.is_empty() {
            break;
        }
        let sub: Vec<Target> = refine.iter().map(|&i| targets[i]).collect();
        let h = histogram(&sub);
        for (n, &i) in refine.iter().enumerate() {
            descend(&mut targets[i], &h[n * bins..(n + 1) * bins]);
        }
    }
    // Final pass: gather each target's bucket (at most GATHER_CAP values, or all equal keys).
    let gathered: Vec<Vec<f64>> = (0..blocks)
        .into_par_iter()
        .fold(
            || (init(), Vec::new(), vec![Vec::new(); targets.len()]),
            |(mut scratch, mut out, mut g), b| {
                block(b, &mut scratch, &mut out);
                for row in out.chunks_exact(k) {
                    for (t, tg) in targets.iter().enumerate() {
                        let x = row[tg.col];
                        // Only an all-equal bucket (64 key bits decided) can exceed the cap.
                        if !x.is_nan()
                            && tg.matches(order_key(x))
                            && (g[t].len() as u64) < GATHER_CAP
                        {
                            g[t].push(x);
                        }
                    }
                }
                (scratch, out, g)
            },
        )
        .map(|(_, _, g)| g)
        .reduce(
            || vec![Vec::new(); targets.len()],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| x.extend(y));
                a
            },
        );
    for (t, mut g) in targets.iter_mut().zip(gathered) {
        g.sort_by(f64::total_cmp);
        // A bucket still larger than the cap has 64 key bits decided: every value is equal.
        t.value = g
            .get((t.rank as usize).min(g.len().saturating_sub(1)))
            .copied();
    }
    (0..k)
        .map(|c| {
            let n = valid[c];
            let at = |r: u64| -> f64 {
                targets
                    .iter()
                    .find(|t| t.col == c && t.orig == r)
                    .and_then(|t| t.value)
                    .unwrap_or(f64::NAN)
            };
            let bound = |q: f64| -> f64 {
                if n == 0 {
                    return f64::NAN;
                }
                let (i, j, t) = ranks_of(n, q);
                let (a, b) = (at(i), at(j));
                if i == j {
                    return a;
                }
                let diff = b - a;
                if t >= 0.5 {
                    b - diff * (1.0 - t)
                } else {
                    a + diff * t
                }
            };
            BootstrapCi {
                low: bound(qs[0]),
                high: bound(qs[1]),
                level,
                replicates,
                nan_replicates: replicates - n,
                units: 0,
            }
        })
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
    let total: usize = strata.iter().map(Vec::len).sum();
    percentile_interval(
        stratified_bootstrap_replicates(strata, replicates, seed, statistic),
        level,
    )
    .with_units(total)
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
    fn streamed_selection_equals_the_in_memory_intervals() {
        // Forcing the streamed path (in-memory limit 0) gives exactly the intervals of the
        // sorted replicate values, for discrete and continuous tables, odd levels, a NaN
        // column, and a small cap-sized bucket count.
        let (n, k) = (13usize, 4usize);
        let rows: Vec<f64> = (0..n * k)
            .map(|i| match i % k {
                0 => ((i * 7919) % 101) as f64 / 13.0 - 3.0,
                1 => ((i / k) % 3) as f64 * 0.1,
                2 => f64::NAN,
                _ => 0.25,
            })
            .collect();
        for (reps, level) in [
            (1u64, 0.95),
            (7, 0.9),
            (1001, 0.95),
            (20_000, 0.683),
            (150_000, 0.95),
        ] {
            let mem = mean_ci_table_with_limit(&rows, n, k, reps, 3, level, u64::MAX);
            let streamed = mean_ci_table_with_limit(&rows, n, k, reps, 3, level, 0);
            for (a, b) in mem.iter().zip(&streamed) {
                assert_eq!(a.low.to_bits(), b.low.to_bits(), "{reps} {a:?} {b:?}");
                assert_eq!(a.high.to_bits(), b.high.to_bits(), "{reps} {a:?} {b:?}");
                assert_eq!(a.nan_replicates, b.nan_replicates);
                assert_eq!(a.units, b.units);
            }
        }
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
    fn selected_quantiles_equal_sorted_quantiles() {
        let mut rng = StatsRng::for_replicate(5, 0);
        for n in [1usize, 2, 3, 10, 39, 40, 41, 1000] {
            let v: Vec<f64> = (0..n)
                .map(|i| if i % 7 == 0 { 0.5 } else { rng.unit_f64() })
                .collect();
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            for q in [0.0, 0.025, 0.05, 0.5, 0.95, 0.975, 1.0] {
                let mut w = v.clone();
                assert_eq!(
                    quantile_select(&mut w, q).to_bits(),
                    quantile_sorted(&sorted, q).to_bits(),
                    "n={n} q={q}"
                );
            }
        }
    }

    #[test]
    fn pair_differences_of_column_means_equal_means_of_differences() {
        // 3 columns × 40 units; pairs (0,1), (0,2), (2,1).
        let n = 40;
        let k = 3;
        let rows: Vec<f64> = (0..n * k)
            .map(|i| ((i * 37 % 101) as f64) / 101.0)
            .collect();
        let pairs = [(0usize, 1usize), (0, 2), (2, 1)];
        let got = bootstrap_mean_diff_ci_table(&rows, n, k, &pairs, 500, 9, 0.9);
        let mut diffs = vec![0.0; n * pairs.len()];
        for u in 0..n {
            for (p, &(a, b)) in pairs.iter().enumerate() {
                diffs[u * pairs.len() + p] = rows[u * k + b] - rows[u * k + a];
            }
        }
        let want = bootstrap_mean_ci_table(&diffs, n, pairs.len(), 500, 9, 0.9);
        assert_eq!(got.len(), 3);
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g.low - w.low).abs() < 1e-12 && (g.high - w.high).abs() < 1e-12,
                "{g:?} {w:?}"
            );
            assert!(g.high > g.low);
        }
        // Out-of-range columns: NaN, not a panic.
        let bad = bootstrap_mean_diff_ci_table(&rows, n, k, &[(0, 7)], 50, 9, 0.9);
        assert!(bad[0].low.is_nan());
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
