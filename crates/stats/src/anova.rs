//! Many systems at once: which of them differ at all?
//!
//! * [`two_way_anova`]: the two-way ANOVA without replication (factors system and query, one
//!   score per cell) = statsmodels `anova_lm(ols("score ~ C(system) + C(query)", df))`
//!   (type I sums of squares; for this balanced complete design they do not depend on the
//!   order of the factors). Checked to 1e-9 against statsmodels on random tables.
//! * [`tukey_hsd`]: Tukey's honestly significant difference with the two-way ANOVA's residual
//!   mean square (query difficulty removed, as in Carterette 2012 and Sakai's *Statistical
//!   Reform in Information Retrieval?*, 2014): for every pair, `q = |mean_i − mean_j| /
//!   √(MSE / n)` and `p = P(Q ≥ q)` of the studentized range with `k` means and the residual
//!   degrees of freedom (= `scipy.stats.studentized_range.sf(q, k, df)`, see [`crate::range`]).
//! * [`randomized_tukey`]: Carterette's randomized Tukey HSD ("Multiple testing in
//!   statistical analysis of systems-based information retrieval experiments", TOIS 2012):
//!   each iteration permutes every query's scores across the systems and records the largest
//!   minus the smallest system mean; `p = (#{range ≥ |mean_i − mean_j|} + 1) / (N + 1)`.
//! * [`compact_letters`]: the compact letter display of a set of pairwise decisions
//!   (Piepho, "An algorithm for a letter-based representation of all-pairwise comparisons",
//!   J. Comput. Graph. Stat. 2004: insert and absorb).
//!
//! Tukey's procedures already control the family-wise error over all `k (k − 1) / 2` pairs of
//! one measure, so their p-values are not corrected again (no Holm on top).

use crate::StatsError;
use crate::range::StudentizedRange;
use crate::rng::StatsRng;
use rayon::prelude::*;
use serde::Serialize;

/// The two-way ANOVA (system × query, no replication) of one measure.
///
/// Sums of squares are in the measure's squared units; `None` marks a statistic that is
/// undefined because the residual variance is 0 (a table that is exactly additive, e.g. every
/// score equal): no F and no p-value, never "significant".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TwoWayAnova {
    /// F statistic of the system effect, `(ss_systems / df_systems) / mse`.
    pub f: Option<f64>,
    /// `P(F ≥ f)` under `F(df_systems, df_residual)`.
    pub p_value: Option<f64>,
    /// `k − 1`.
    pub df_systems: u64,
    /// `n − 1`.
    pub df_queries: u64,
    /// `(k − 1)(n − 1)`.
    pub df_residual: u64,
    /// Residual mean square `ss_residual / df_residual`.
    pub mse: f64,
    /// `n Σ_i (mean_i − grand)²`.
    pub ss_systems: f64,
    /// `k Σ_j (mean_j − grand)²`.
    pub ss_queries: f64,
    /// `Σ_ij (x_ij − mean_i − mean_j + grand)²`.
    pub ss_residual: f64,
}

/// Checks a `systems × queries` table: at least 2 systems, at least 2 queries, equal lengths,
/// finite values. Returns `(k, n)`.
fn check_table(table: &[&[f64]]) -> Result<(usize, usize), StatsError> {
    let k = table.len();
    if k < 2 {
        return Err(StatsError::InvalidOption(format!(
            "an analysis of many systems needs at least 2 systems, got {k}"
        )));
    }
    let n = table[0].len();
    for row in table {
        if row.len() != n {
            return Err(StatsError::LengthMismatch {
                left: row.len(),
                right: n,
            });
        }
        if let Some(v) = row.iter().find(|v| !v.is_finite()) {
            return Err(StatsError::InvalidOption(format!(
                "scores must be finite numbers, got {v}"
            )));
        }
    }
    if n < 2 {
        return Err(StatsError::InvalidOption(format!(
            "an analysis of many systems needs at least 2 queries, got {n}"
        )));
    }
    Ok((k, n))
}

/// Row (system) and column (query) means and the grand mean.
fn margins(table: &[&[f64]], k: usize, n: usize) -> (Vec<f64>, Vec<f64>, f64) {
    let sys: Vec<f64> = table
        .iter()
        .map(|r| r.iter().sum::<f64>() / n as f64)
        .collect();
    let mut q = vec![0.0; n];
    for r in table {
        for (a, v) in q.iter_mut().zip(r.iter()) {
            *a += v;
        }
    }
    for a in &mut q {
        *a /= k as f64;
    }
    let grand = sys.iter().sum::<f64>() / k as f64;
    (sys, q, grand)
}

/// A residual sum of squares at or below this fraction of the total is rounding noise of an
/// exactly additive table: the residual variance is taken as 0.
const RESIDUAL_NOISE: f64 = 1e-24;

/// The two-way ANOVA without replication of `table[system][query]` (see the module docs).
/// Errors: fewer than 2 systems or 2 queries, ragged rows, non-finite scores.
pub fn two_way_anova(table: &[&[f64]]) -> Result<TwoWayAnova, StatsError> {
    let (k, n) = check_table(table)?;
    let (sys, q, grand) = margins(table, k, n);
    let ss_systems = n as f64 * sys.iter().map(|m| (m - grand).powi(2)).sum::<f64>();
    let ss_queries = k as f64 * q.iter().map(|m| (m - grand).powi(2)).sum::<f64>();
    let mut ss_residual = 0.0;
    let mut ss_total = 0.0;
    for (r, ms) in table.iter().zip(&sys) {
        for (v, mq) in r.iter().zip(&q) {
            ss_residual += (v - ms - mq + grand).powi(2);
            ss_total += (v - grand).powi(2);
        }
    }
    let df_systems = (k - 1) as u64;
    let df_queries = (n - 1) as u64;
    let df_residual = df_systems * df_queries;
    if ss_residual <= RESIDUAL_NOISE * ss_total {
        ss_residual = 0.0;
    }
    let mse = ss_residual / df_residual as f64;
    let (f, p_value) = if mse > 0.0 {
        let f = (ss_systems / df_systems as f64) / mse;
        (
            Some(f),
            Some(f_sf(f, df_systems as f64, df_residual as f64)),
        )
    } else {
        (None, None)
    };
    Ok(TwoWayAnova {
        f,
        p_value,
        df_systems,
        df_queries,
        df_residual,
        mse,
        ss_systems,
        ss_queries,
        ss_residual,
    })
}

/// `P(F ≥ f)` for Fisher's F with `(d1, d2)` degrees of freedom (= `scipy.stats.f.sf`), as
/// `I_{d2/(d2 + d1 f)}(d2/2, d1/2)`.
pub fn f_sf(f: f64, d1: f64, d2: f64) -> f64 {
    if f.is_nan() || !(d1 > 0.0 && d2 > 0.0) {
        return f64::NAN;
    }
    if f <= 0.0 {
        return 1.0;
    }
    if f.is_infinite() {
        return 0.0;
    }
    let den = d2 + d1 * f;
    crate::special::beta_reg_xy(0.5 * d2, 0.5 * d1, d2 / den, d1 * f / den)
}

/// One pair's result of a Tukey procedure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TukeyPair {
    /// First system (row index of the table).
    pub a: usize,
    /// Second system.
    pub b: usize,
    /// `mean_b − mean_a`.
    pub delta: f64,
    /// The studentized range statistic `|delta| / √(MSE / n)` (`None` when MSE = 0).
    pub q: Option<f64>,
    /// The pair's p-value, already family-wise over all pairs (NaN when undefined).
    pub p_value: f64,
}

/// Tukey's HSD over every pair `a < b` of `table[system][query]` with the two-way ANOVA's
/// MSE (see the module docs). `dist` must be the studentized range with `k` = number of
/// systems and the ANOVA's residual degrees of freedom (build it once with
/// [`StudentizedRange::new`] for every measure of one table). With MSE = 0 every p-value is
/// NaN (undefined, never significant).
pub fn tukey_hsd(
    table: &[&[f64]],
    anova: &TwoWayAnova,
    dist: &StudentizedRange,
) -> Result<Vec<TukeyPair>, StatsError> {
    let (k, n) = check_table(table)?;
    if dist.k() as usize != k {
        return Err(StatsError::InvalidOption(format!(
            "the studentized range was built for {} means, the table has {k} systems",
            dist.k()
        )));
    }
    let (sys, _, _) = margins(table, k, n);
    let se = (anova.mse / n as f64).sqrt();
    let pairs: Vec<(usize, usize)> = (0..k)
        .flat_map(|a| (a + 1..k).map(move |b| (a, b)))
        .collect();
    Ok(pairs
        .par_iter()
        .map(|&(a, b)| {
            let delta = sys[b] - sys[a];
            let q = (se > 0.0).then(|| delta.abs() / se);
            TukeyPair {
                a,
                b,
                delta,
                q,
                p_value: q.map_or(f64::NAN, |q| dist.sf(q)),
            }
        })
        .collect())
}

/// A uniform permutation of `0..k` into `perm` (Fisher–Yates; bounded draws by Lemire's method
/// on 32-bit halves of one 64-bit word).
fn shuffle(rng: &mut StatsRng, perm: &mut [u32]) {
    let mut spare: Option<u32> = None;
    let mut draw32 = |rng: &mut StatsRng| -> u32 {
        if let Some(v) = spare.take() {
            v
        } else {
            let w = rng.next_u64();
            spare = Some((w >> 32) as u32);
            w as u32
        }
    };
    for i in (1..perm.len()).rev() {
        let n = (i + 1) as u32;
        let mut m = u64::from(draw32(rng)) * u64::from(n);
        let mut low = m as u32;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = u64::from(draw32(rng)) * u64::from(n);
                low = m as u32;
            }
        }
        perm.swap(i, (m >> 32) as usize);
    }
}

/// The largest number of iterations [`randomized_tukey`] accepts.
pub const MAX_ITERATIONS: u64 = 10_000_000;

/// Carterette's randomized Tukey HSD for several measures of the same systems and queries,
/// from the same permutations: `tables[m][system][query]`. Returns, per measure, the pairs
/// `a < b` in the order of [`tukey_hsd`] with `p = (#{range ≥ |delta|} + 1) / (N + 1)`
/// (`q` is `None`). A permuted range counts as at least the observed difference when it is no
/// more than `1e-12 ×` the largest absolute system sum below it (sums of the same numbers in
/// another order differ by rounding only). Iteration `r` draws from
/// `StatsRng::for_replicate(seed, r)`, so the result depends on the seed only, never on the
/// thread count. Errors: shapes as [`two_way_anova`], `iterations` outside
/// `1..=`[`MAX_ITERATIONS`].
pub fn randomized_tukey(
    tables: &[Vec<&[f64]>],
    iterations: u64,
    seed: u64,
) -> Result<Vec<Vec<TukeyPair>>, StatsError> {
    if iterations == 0 || iterations > MAX_ITERATIONS {
        return Err(StatsError::InvalidOption(format!(
            "iterations must be in 1..={MAX_ITERATIONS}, got {iterations}"
        )));
    }
    let Some(first) = tables.first() else {
        return Ok(Vec::new());
    };
    let (k, n) = check_table(first)?;
    for t in tables {
        let (k2, n2) = check_table(t)?;
        if (k2, n2) != (k, n) {
            return Err(StatsError::LengthMismatch {
                left: k2 * n2,
                right: k * n,
            });
        }
    }
    // Query-major copies: x[m][j * k + i].
    let xs: Vec<Vec<f64>> = tables
        .iter()
        .map(|t| {
            let mut x = vec![0.0; k * n];
            for (i, row) in t.iter().enumerate() {
                for (j, v) in row.iter().enumerate() {
                    x[j * k + i] = *v;
                }
            }
            x
        })
        .collect();
    // Observed sums and pair thresholds (sums, not means: no division per iteration).
    let sums: Vec<Vec<f64>> = tables
        .iter()
        .map(|t| t.iter().map(|r| r.iter().sum::<f64>()).collect())
        .collect();
    let pairs: Vec<(usize, usize)> = (0..k)
        .flat_map(|a| (a + 1..k).map(move |b| (a, b)))
        .collect();
    // Per measure: thresholds sorted ascending with their pair index, so one iteration's
    // range is counted against every pair by a binary search.
    let thresholds: Vec<Vec<f64>> = sums
        .iter()
        .map(|s| {
            let scale = s.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            let mut t: Vec<f64> = pairs
                .iter()
                .map(|&(a, b)| (s[b] - s[a]).abs() - 1e-12 * scale)
                .collect();
            t.sort_by(f64::total_cmp);
            t
        })
        .collect();
    let m = tables.len();
    const CHUNK: u64 = 256;
    let chunks = iterations.div_ceil(CHUNK);
    // hist[m][t]: iterations whose range reached exactly t thresholds (t = 0..=pairs).
    let hist: Vec<Vec<u64>> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut hist = vec![vec![0u64; pairs.len() + 1]; m];
            let mut perm: Vec<u32> = (0..k as u32).collect();
            let mut acc = vec![0.0f64; m * k];
            for r in c * CHUNK..((c + 1) * CHUNK).min(iterations) {
                let mut rng = StatsRng::for_replicate(seed, r);
                acc.iter_mut().for_each(|v| *v = 0.0);
                for j in 0..n {
                    shuffle(&mut rng, &mut perm);
                    for (mi, x) in xs.iter().enumerate() {
                        let row = &x[j * k..(j + 1) * k];
                        let a = &mut acc[mi * k..(mi + 1) * k];
                        for (i, &p) in perm.iter().enumerate() {
                            a[p as usize] += row[i];
                        }
                    }
                }
                for mi in 0..m {
                    let a = &acc[mi * k..(mi + 1) * k];
                    let (lo, hi) = a
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                            (lo.min(v), hi.max(v))
                        });
                    let range = hi - lo;
                    let reached = thresholds[mi].partition_point(|&t| t <= range);
                    hist[mi][reached] += 1;
                }
            }
            hist
        })
        .reduce(
            || vec![vec![0u64; pairs.len() + 1]; m],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    for (u, v) in x.iter_mut().zip(y) {
                        *u += v;
                    }
                }
                a
            },
        );
    let mut out = Vec::with_capacity(m);
    for mi in 0..m {
        // count(range ≥ threshold_t) = iterations that reached more than t thresholds.
        let mut at_least = vec![0u64; pairs.len()];
        let mut running = 0u64;
        for t in (0..pairs.len()).rev() {
            running += hist[mi][t + 1];
            at_least[t] = running;
        }
        let s = &sums[mi];
        let scale = s.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let res = pairs
            .iter()
            .map(|&(a, b)| {
                let thr = (s[b] - s[a]).abs() - 1e-12 * scale;
                // Index of the first sorted threshold equal to this one.
                let t = thresholds[mi].partition_point(|&x| x < thr);
                let count = at_least[t];
                TukeyPair {
                    a,
                    b,
                    delta: (s[b] - s[a]) / n as f64,
                    q: None,
                    p_value: (count + 1) as f64 / (iterations + 1) as f64,
                }
            })
            .collect();
        out.push(res);
    }
    Ok(out)
}

/// The compact letter display of `k` systems from pairwise decisions: `differ(a, b)` is true
/// when the pair is significantly different. Systems that share a letter are not
/// significantly different; `order` gives the systems from best to worst so `a` goes to the
/// best group. Returns one string of letters (`a`, `b`, …, then `aa`, …) per system
/// (Piepho 2004, insert and absorb).
pub fn compact_letters(
    k: usize,
    order: &[usize],
    differ: impl Fn(usize, usize) -> bool,
) -> Vec<String> {
    // Columns: sets of systems, as boolean vectors.
    let mut cols: Vec<Vec<bool>> = vec![vec![true; k]];
    for a in 0..k {
        for b in a + 1..k {
            if !differ(a, b) {
                continue;
            }
            // Insert: split every column holding both.
            let mut next: Vec<Vec<bool>> = Vec::new();
            for c in cols.drain(..) {
                if c[a] && c[b] {
                    let mut ca = c.clone();
                    ca[b] = false;
                    let mut cb = c;
                    cb[a] = false;
                    next.push(ca);
                    next.push(cb);
                } else {
                    next.push(c);
                }
            }
            // Absorb: drop columns contained in another.
            let mut keep: Vec<Vec<bool>> = Vec::new();
            for (i, c) in next.iter().enumerate() {
                let contained = next.iter().enumerate().any(|(j, d)| {
                    j != i && c.iter().zip(d).all(|(x, y)| !*x || *y) && (c != d || j < i)
                });
                if !contained {
                    keep.push(c.clone());
                }
            }
            cols = keep;
        }
    }
    // Letter order: columns sorted by the best-ranked system they contain.
    let rank: Vec<usize> = {
        let mut r = vec![usize::MAX; k];
        for (pos, &s) in order.iter().enumerate() {
            if s < k {
                r[s] = pos;
            }
        }
        r
    };
    cols.sort_by_key(|c| {
        c.iter()
            .enumerate()
            .filter(|(_, x)| **x)
            .map(|(i, _)| rank[i])
            .min()
            .unwrap_or(usize::MAX)
    });
    let mut out = vec![String::new(); k];
    for (li, c) in cols.iter().enumerate() {
        let letter = crate::anova::letter_name(li);
        for (s, inside) in c.iter().enumerate() {
            if *inside {
                out[s].push_str(&letter);
            }
        }
    }
    out
}

/// Letters `a` … `z`, then `aa`, `ab`, … for index `i`.
pub fn letter_name(i: usize) -> String {
    let mut i = i;
    let mut s = Vec::new();
    loop {
        s.push(b'a' + (i % 26) as u8);
        if i < 26 {
            break;
        }
        i = i / 26 - 1;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anova_of_a_small_table_by_hand() {
        // 3 systems × 2 queries.
        let a = [1.0, 2.0];
        let b = [2.0, 4.0];
        let c = [3.0, 3.0];
        let r = two_way_anova(&[&a, &b, &c]).unwrap();
        // grand 2.5; system means 1.5, 3, 3; query means 2, 3.
        assert!((r.ss_systems - 2.0 * (1.0 + 0.25 + 0.25)).abs() < 1e-12);
        assert!((r.ss_queries - 3.0 * (0.25 + 0.25)).abs() < 1e-12);
        assert_eq!((r.df_systems, r.df_queries, r.df_residual), (2, 1, 2));
        let total: f64 = [1.0f64, 2.0, 2.0, 4.0, 3.0, 3.0]
            .iter()
            .map(|v| (v - 2.5).powi(2))
            .sum();
        assert!((r.ss_residual - (total - r.ss_systems - r.ss_queries)).abs() < 1e-12);
    }

    #[test]
    fn additive_tables_have_no_f() {
        let a = [0.1, 0.2, 0.3];
        let b = [0.2, 0.3, 0.4];
        let c = [0.3, 0.4, 0.5];
        let r = two_way_anova(&[&a, &b, &c]).unwrap();
        assert_eq!(r.f, None);
        assert_eq!(r.p_value, None);
        let z = [0.0; 4];
        let r = two_way_anova(&[&z, &z, &z]).unwrap();
        assert_eq!(r.f, None);
    }

    #[test]
    fn anova_refuses_bad_tables() {
        let a = [0.1];
        assert!(two_way_anova(&[&a, &a, &a]).is_err());
        let b = [0.1, f64::NAN];
        assert!(two_way_anova(&[&b, &b]).is_err());
        let c = [0.1, 0.2];
        assert!(two_way_anova(&[&c]).is_err());
        assert!(two_way_anova(&[&c, &a]).is_err());
    }

    #[test]
    fn f_sf_known_values() {
        // scipy.stats.f.sf(3.0, 2, 10) = 0.0954906...
        assert!((f_sf(3.0, 2.0, 10.0) - 0.095_367_431_640_624_97).abs() < 1e-12);
        assert_eq!(f_sf(0.0, 2.0, 3.0), 1.0);
    }

    #[test]
    fn randomized_tukey_is_deterministic_and_counts_identity() {
        let a = [0.1, 0.5, 0.3, 0.9, 0.2];
        let b = [0.2, 0.6, 0.3, 0.8, 0.4];
        let c = [0.1, 0.5, 0.3, 0.9, 0.2];
        let t = vec![vec![&a[..], &b[..], &c[..]]];
        let r1 = randomized_tukey(&t, 2000, 7).unwrap();
        let r2 = randomized_tukey(&t, 2000, 7).unwrap();
        assert_eq!(r1, r2);
        // a and c are identical: every range reaches 0, p = 1.
        let ac = r1[0].iter().find(|p| p.a == 0 && p.b == 2).unwrap();
        assert_eq!(ac.p_value, 1.0);
        assert!(randomized_tukey(&t, 0, 7).is_err());
    }

    #[test]
    fn shuffle_is_uniform_over_three() {
        let mut counts = std::collections::HashMap::new();
        for r in 0..60_000 {
            let mut rng = StatsRng::for_replicate(3, r);
            let mut p = [0u32, 1, 2];
            shuffle(&mut rng, &mut p);
            *counts.entry(p).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 6);
        for c in counts.values() {
            assert!((9_400..10_600).contains(c), "{counts:?}");
        }
    }

    #[test]
    fn letters_group_systems_that_do_not_differ() {
        // 0 and 1 differ; 2 differs from neither.
        let l = compact_letters(3, &[0, 1, 2], |a, b| (a, b) == (0, 1));
        assert_eq!(l, vec!["a", "b", "ab"]);
        let l = compact_letters(3, &[0, 1, 2], |_, _| false);
        assert_eq!(l, vec!["a", "a", "a"]);
        let l = compact_letters(3, &[0, 1, 2], |_, _| true);
        assert_eq!(l, vec!["a", "b", "c"]);
        assert_eq!(letter_name(26), "aa");
    }
}
