//! Paired significance tests on per-unit differences `d = run − baseline` (one value per
//! query, case or text), each matching a named scipy function, plus effect size and
//! win/tie/loss counts.
//!
//! routeval's one deliberate deviation from scipy: when every difference is 0 the systems are
//! indistinguishable and every test returns `p = 1.0` (scipy returns NaN for the t-test and the
//! asymptotic Wilcoxon). An empty sample gives NaN.

use crate::rng::StatsRng;
use rayon::prelude::*;
use routeval_core::Accumulator;
use routeval_core::py::numpy_sum;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// scipy's relative tolerance for "numerically distinct but theoretically equal" statistics in
/// `permutation_test`: `100 · ε` (float64), times `|observed|`.
const REL_TIE: f64 = 100.0 * f64::EPSILON;

/// Largest sample for which [`fisher_randomization`] enumerates all `2ⁿ` sign flips.
pub const FISHER_EXACT_MAX_N: usize = 20;

/// `run[i] − baseline[i]` for each unit (the order scipy's `ttest_rel(run, baseline)` and
/// `wilcoxon(run − baseline)` use). Errors when the lengths differ.
pub fn differences(run: &[f64], baseline: &[f64]) -> Result<Vec<f64>, crate::StatsError> {
    if run.len() != baseline.len() {
        return Err(crate::StatsError::LengthMismatch {
            left: run.len(),
            right: baseline.len(),
        });
    }
    Ok(run.iter().zip(baseline).map(|(a, b)| a - b).collect())
}

/// The arithmetic mean in numpy's summation order (`np.mean`); NaN when empty.
pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    numpy_sum(x) / x.len() as f64
}

/// The sample variance with `ddof` = 1 (two-pass, numpy order); NaN when `n < 2`.
pub fn variance(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 2 {
        return f64::NAN;
    }
    let m = mean(x);
    let sq: Vec<f64> = x.iter().map(|v| (v - m) * (v - m)).collect();
    numpy_sum(&sq) / (n - 1) as f64
}

fn all_zero(d: &[f64]) -> bool {
    !d.is_empty() && d.iter().all(|&v| v == 0.0)
}

fn all_equal(d: &[f64]) -> bool {
    d.windows(2).all(|w| w[0] == w[1])
}

/// Every difference the same value up to rounding: `max − min ≤ 100·ε·max|d|` (scipy's
/// tolerance for theoretically equal values), e.g. `[0.3 − 0.1, 0.4 − 0.2, 0.5 − 0.3]`, whose
/// spread of 3e−17 would otherwise give the t-test p ≈ 1e−32.
fn constant_up_to_rounding(d: &[f64]) -> bool {
    let (lo, hi) = d
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let scale = lo.abs().max(hi.abs());
    hi - lo <= REL_TIE * scale
}

/// Why a paired test on the differences `d` has no evidence behind it: its p-value is
/// undefined (NaN, JSON `null`) and it is never called significant. Identical systems (every
/// difference exactly 0) are *not* degenerate: they give `p = 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Degenerate {
    /// No paired units at all.
    NoUnits,
    /// A single paired unit: nothing to estimate the spread from.
    OneUnit,
    /// Some difference is NaN or ±inf (a per-unit value was not a finite number).
    NonFinite,
    /// Every difference is the same non-zero value (up to rounding: a spread within
    /// `100·ε·max|d|`): zero variance, so no resampling or t statistic can say how sure the
    /// shift is.
    ZeroVariance,
}

impl Degenerate {
    /// The one-line reason printed in text and JSON (`"note"`).
    pub fn reason(self) -> &'static str {
        match self {
            Degenerate::NoUnits => "no paired units",
            Degenerate::OneUnit => "only 1 paired unit (a test needs at least 2)",
            Degenerate::NonFinite => "a per-unit value is NaN or infinite",
            Degenerate::ZeroVariance => {
                "zero variance: every unit has the same difference, no test can say how sure"
            }
        }
    }
}

impl fmt::Display for Degenerate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// The [`Degenerate`] case of `d`, if any (checked in this order: empty, non-finite, all
/// zero (not degenerate), one unit, zero variance).
pub fn degeneracy(d: &[f64]) -> Option<Degenerate> {
    if d.is_empty() {
        Some(Degenerate::NoUnits)
    } else if d.iter().any(|v| !v.is_finite()) {
        Some(Degenerate::NonFinite)
    } else if all_zero(d) {
        None
    } else if d.len() < 2 {
        Some(Degenerate::OneUnit)
    } else if constant_up_to_rounding(d) {
        Some(Degenerate::ZeroVariance)
    } else {
        None
    }
}

/// The paired tests `routeval compare --test` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PairedTest {
    /// Two-sided paired t-test ([`ttest_rel`]).
    T,
    /// Wilcoxon signed-rank test with scipy's defaults ([`wilcoxon`]).
    Wilcoxon,
    /// Fisher's paired sign-flip randomization test ([`fisher_randomization`]).
    Fisher,
    /// Paired bootstrap test on centred differences ([`bootstrap_test`]).
    Bootstrap,
}

impl PairedTest {
    /// Every test, in documentation order.
    pub const ALL: [PairedTest; 4] = [
        PairedTest::T,
        PairedTest::Wilcoxon,
        PairedTest::Fisher,
        PairedTest::Bootstrap,
    ];

    /// The name used on the command line and in JSON (`t`, `wilcoxon`, `fisher`, `bootstrap`).
    pub fn name(self) -> &'static str {
        match self {
            PairedTest::T => "t",
            PairedTest::Wilcoxon => "wilcoxon",
            PairedTest::Fisher => "fisher",
            PairedTest::Bootstrap => "bootstrap",
        }
    }

    /// The two-sided p-value of this test on the differences `d`. `iterations` and `seed` are
    /// used by the resampling tests (Fisher beyond [`FISHER_EXACT_MAX_N`] units, bootstrap).
    ///
    /// NaN whenever [`degeneracy`] finds a reason (no or one unit, a NaN/±inf value, a
    /// constant non-zero difference) — for every test alike, where the bare functions would
    /// disagree (scipy's t-test gives 0 for a constant shift, the exact tests 1 for one
    /// unit); such a comparison is never significant. Every `d` = 0 gives 1.
    pub fn p_value(self, d: &[f64], iterations: u64, seed: u64) -> f64 {
        if degeneracy(d).is_some() {
            return f64::NAN;
        }
        match self {
            PairedTest::T => ttest_rel(d).p_value,
            PairedTest::Wilcoxon => wilcoxon(d).p_value,
            PairedTest::Fisher => fisher_randomization(d, iterations, seed).p_value,
            PairedTest::Bootstrap => bootstrap_test(d, iterations, seed),
        }
    }
}

impl fmt::Display for PairedTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PairedTest {
    type Err = crate::StatsError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PairedTest::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| crate::StatsError::UnknownName {
                what: "test",
                name: s.to_string(),
                expected: "t, wilcoxon, fisher, bootstrap",
            })
    }
}

/// Result of the paired t-test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TTest {
    /// `mean(d) / (sd(d) / √n)` (`±inf` when every difference is the same non-zero value).
    pub statistic: f64,
    /// Degrees of freedom `n − 1`.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Two-sided paired t-test = `scipy.stats.ttest_rel(run, baseline)` (scipy 1.17), i.e. the
/// one-sample t-test of `d` against 0: `t = mean(d) / √(var(d, ddof=1)/n)`, `df = n − 1`,
/// `p = 2·P(T_df ≥ |t|)`. Assumes the differences are (roughly) normal or `n` is large.
/// Every `d` = 0 gives `p = 1`; `n < 2` gives NaN.
pub fn ttest_rel(d: &[f64]) -> TTest {
    let n = d.len();
    let df = n as f64 - 1.0;
    if all_zero(d) {
        return TTest {
            statistic: 0.0,
            df,
            p_value: 1.0,
        };
    }
    if n < 2 {
        return TTest {
            statistic: f64::NAN,
            df: f64::NAN,
            p_value: f64::NAN,
        };
    }
    let m = mean(d);
    let v = if all_equal(d) { 0.0 } else { variance(d) };
    let t = m / (v / n as f64).sqrt();
    TTest {
        statistic: t,
        df,
        p_value: crate::special::student_t_two_sided(t, df),
    }
}

/// Which branch of scipy's `method="auto"` computed a Wilcoxon p-value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WilcoxonMethod {
    /// The exact null distribution of `R+` (n ≤ 50, no ties, no zeros).
    Exact,
    /// All `2ⁿ` sign flips of the data (n ≤ 13 with ties or zeros): scipy's
    /// `PermutationMethod()`, deterministic because `2ⁿ ≤ 9999`.
    Permutation,
    /// Normal approximation with tie correction, no continuity correction.
    Asymptotic,
}

/// Result of the Wilcoxon signed-rank test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Wilcoxon {
    /// `min(R+, R−)`, scipy's two-sided statistic.
    pub statistic: f64,
    /// `R+`, the sum of the ranks of the positive differences.
    pub r_plus: f64,
    /// The z statistic `(R+ − mean)/se` (computed on every branch; meaningful for
    /// `Asymptotic`).
    pub z: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// The branch used.
    pub method: WilcoxonMethod,
}

/// Wilcoxon signed-rank test = `scipy.stats.wilcoxon(d)` with scipy 1.17's defaults
/// (`zero_method="wilcox"`, `correction=False`, `method="auto"`, two-sided).
///
/// Zeros are dropped before ranking (`|d|` ranked with average ranks for ties); `n` below is
/// the length *including* zeros, as in scipy's rule (`scipy/stats/_wilcoxon.py`):
/// * `n > 50` → asymptotic;
/// * else no ties and no zeros → exact: `p = 2·min(P(R+ ≥ ⌊r⌋), P(R+ ≤ ⌈r⌉))`, capped at 1;
/// * else `n ≤ 13` → permutation over all `2ⁿ` sign flips, `p = 2·min(#{≤ r}, #{≥ r})/2ⁿ`;
/// * else asymptotic: `z = (R+ − m(m+1)/4) / √((m(m+1)(2m+1) − Σ(t³ − t)/2)/24)` over the
///   `m` non-zero differences with tie-group sizes `t`, `p = 2·P(Z ≥ |z|)`.
///
/// Assumes the differences are symmetric about their median. Every `d` = 0 gives `p = 1`
/// (scipy: NaN on the asymptotic branch); an empty sample gives NaN.
pub fn wilcoxon(d: &[f64]) -> Wilcoxon {
    let n = d.len();
    let nan = Wilcoxon {
        statistic: f64::NAN,
        r_plus: f64::NAN,
        z: f64::NAN,
        p_value: f64::NAN,
        method: WilcoxonMethod::Asymptotic,
    };
    if n == 0 || d.iter().any(|v| v.is_nan()) {
        return nan;
    }
    // Non-zero differences, ranked by absolute value (average ranks).
    let mut nz: Vec<(f64, bool)> = d
        .iter()
        .filter(|&&v| v != 0.0)
        .map(|&v| (v.abs(), v > 0.0))
        .collect();
    let n_zero = n - nz.len();
    let m = nz.len();
    nz.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut ranks = vec![0.0f64; m];
    let mut has_ties = false;
    let mut tie_term = 0.0f64;
    let mut i = 0;
    while i < m {
        let mut j = i + 1;
        while j < m && nz[j].0 == nz[i].0 {
            j += 1;
        }
        let t = (j - i) as f64;
        if j - i > 1 {
            has_ties = true;
        }
        tie_term += t * t * t - t;
        let r = (i + 1) as f64 + (t - 1.0) / 2.0;
        ranks[i..j].fill(r);
        i = j;
    }
    let r_plus: f64 = nz
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| x.1)
        .map(|(_, r)| r)
        .sum();
    let total = (m * (m + 1)) as f64 / 2.0;
    let r_minus = total - r_plus;
    let mf = m as f64;
    let mn = mf * (mf + 1.0) * 0.25;
    let se = ((mf * (mf + 1.0) * (2.0 * mf + 1.0) - tie_term / 2.0) / 24.0).sqrt();
    let z = (r_plus - mn) / se;
    let statistic = r_plus.min(r_minus);
    let method = if n > 50 {
        WilcoxonMethod::Asymptotic
    } else if !(has_ties || n_zero > 0) {
        WilcoxonMethod::Exact
    } else if n <= 13 {
        WilcoxonMethod::Permutation
    } else {
        WilcoxonMethod::Asymptotic
    };
    let p_value = if m == 0 {
        1.0
    } else {
        match method {
            WilcoxonMethod::Asymptotic => (2.0 * crate::special::normal_sf(z.abs())).min(1.0),
            WilcoxonMethod::Exact => {
                let counts = signed_rank_counts(m);
                let total_count: u64 = 1u64 << m;
                let lo = r_plus.floor() as usize;
                let hi = r_plus.ceil() as usize;
                let sf: u64 = counts[lo.min(counts.len())..].iter().sum();
                let cdf: u64 = counts[..=hi.min(counts.len() - 1)].iter().sum();
                (2.0 * (sf.min(cdf) as f64 / total_count as f64)).min(1.0)
            }
            WilcoxonMethod::Permutation => {
                // Ranks doubled are integers; enumerate the 2^m sign patterns of the non-zero
                // differences (zeros only multiply every count by 2^n_zero).
                let r2: Vec<u64> = ranks.iter().map(|r| (r * 2.0) as u64).collect();
                let obs2 = (r_plus * 2.0).round() as u64;
                let (mut le, mut ge) = (0u64, 0u64);
                for mask in 0u64..(1u64 << m) {
                    let mut s = 0u64;
                    for (k, r) in r2.iter().enumerate() {
                        if mask >> k & 1 == 1 {
                            s += r;
                        }
                    }
                    le += u64::from(s <= obs2);
                    ge += u64::from(s >= obs2);
                }
                (2.0 * le.min(ge) as f64 / (1u64 << m) as f64).min(1.0)
            }
        }
    };
    Wilcoxon {
        statistic,
        r_plus,
        z,
        p_value,
        method,
    }
}

/// Number of sign patterns of ranks `1..=n` with each rank sum `0..=n(n+1)/2` (the exact null
/// distribution of `R+` times `2ⁿ`; exact integers for n ≤ 62).
pub fn signed_rank_counts(n: usize) -> Vec<u64> {
    let mut c = vec![1u64];
    for k in 1..=n {
        let mut next = vec![0u64; k * (k + 1) / 2 + 1];
        for (s, &v) in c.iter().enumerate() {
            next[s] += v;
            next[s + k] += v;
        }
        c = next;
    }
    c
}

/// Result of Fisher's randomization test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Randomization {
    /// Two-sided p-value.
    pub p_value: f64,
    /// Whether all `2ⁿ` sign flips were enumerated (else Monte Carlo).
    pub exact: bool,
    /// Number of sign patterns evaluated (`2ⁿ`, or the Monte Carlo iterations).
    pub resamples: u64,
}

/// Fisher's paired sign-flip randomization test of the mean difference, two-sided.
///
/// * `n ≤ 20` ([`FISHER_EXACT_MAX_N`]): exact over all `2ⁿ` flips ([`fisher_exact`]).
/// * otherwise Monte Carlo with `iterations` flips ([`fisher_monte_carlo`]).
///
/// Assumes only that, under the null hypothesis, each difference is as likely to have been
/// negated (exchangeability of the two systems within a unit).
pub fn fisher_randomization(d: &[f64], iterations: u64, seed: u64) -> Randomization {
    if d.len() <= FISHER_EXACT_MAX_N {
        fisher_exact(d)
    } else {
        fisher_monte_carlo(d, iterations, seed)
    }
}

/// Exact sign-flip randomization test = `scipy.stats.permutation_test((run, baseline),
/// statistic=lambda x, y: np.mean(x - y), permutation_type="samples", n_resamples=inf)`
/// (scipy 1.17): with `T = mean(d)` (numpy's pairwise order) and the `2ⁿ` null values
/// `T_s = Σ(s∘d)/n` (summed left to right, as numpy reduces scipy's strided null samples),
/// `p = 2·min(#{T_s ≤ T + γ}, #{T_s ≥ T − γ}) / 2ⁿ` capped at 1, where `γ = |100·ε·T|` is
/// scipy's relative tolerance for theoretically equal values (`_resampling.py`:
/// `eps = finfo.eps * 100; gamma = abs(eps * observed)`). The counts come from a
/// meet-in-the-middle enumeration (time and memory about `2^(n/2)`, practical up to about 24
/// units); a null value within rounding distance of a bound is recomputed exactly as scipy
/// computes it, so a mean that is 0 up to rounding (e.g. `−6e−17` against `0`) is decided as
/// scipy decides it. Edge cases: every `d` = 0 gives 1; one unit gives 1 (two flips, both as
/// extreme); an empty sample or any NaN/±inf difference gives NaN.
pub fn fisher_exact(d: &[f64]) -> Randomization {
    let n = d.len();
    if n == 0 || d.iter().any(|v| !v.is_finite()) {
        return Randomization {
            p_value: f64::NAN,
            exact: true,
            resamples: 0,
        };
    }
    if all_zero(d) {
        return Randomization {
            p_value: 1.0,
            exact: true,
            resamples: 1u64 << n,
        };
    }
    let nf = n as f64;
    let obs = mean(d);
    let gamma = (REL_TIE * obs).abs();
    // Meet in the middle: all signed sums of each half, then every pair.
    let h = n / 2;
    let half_sums = |part: &[f64]| -> Vec<f64> {
        let mut s = vec![0.0f64; 1 << part.len()];
        for mask in 1usize..s.len() {
            let low = mask.trailing_zeros() as usize;
            let rest = mask & (mask - 1);
            // Sums with bit `low` set (= +d) built from the sum without it; unset bits are −d.
            s[mask] = s[rest] + part[low];
        }
        // s[mask] = Σ_{set} d; signed sum = 2·s − Σ d, computed per mask below for accuracy.
        let total: f64 = part.iter().sum();
        s.iter().map(|v| 2.0 * v - total).collect()
    };
    let a = half_sums(&d[..h]);
    let mut b: Vec<(f64, usize)> = half_sums(&d[h..])
        .into_iter()
        .enumerate()
        .map(|(mask, v)| (v, mask))
        .collect();
    b.sort_by(|x, y| x.0.total_cmp(&y.0));
    let bv: Vec<f64> = b.iter().map(|p| p.0).collect();
    // The meet-in-the-middle sums are rounded differently from scipy's null values (numpy's
    // `mean` of each flipped sample). They differ by less than `delta` (a bound on both
    // rounding errors); a pair whose fast value is within `delta` of a bound is recomputed
    // the way scipy computes it, so near-ties (a mean that is 0 up to rounding) are decided
    // on the same floating-point values scipy compares.
    let abs_sum: f64 = d.iter().map(|v| v.abs()).sum();
    let delta = 4.0 * (nf + 4.0) * f64::EPSILON * abs_sum / nf;
    // scipy evaluates the statistic on strided views of the flipped pairs, so numpy's mean
    // of each null sample sums its elements left to right (the observed mean, from
    // contiguous data, uses pairwise summation: `mean` above).
    let exact = |ma: usize, mb: usize| -> f64 {
        let mut s = 0.0f64;
        for (i, &v) in d.iter().enumerate() {
            let bit = if i < h { ma >> i } else { mb >> (i - h) };
            s += if bit & 1 == 1 { v } else { -v };
        }
        s / nf
    };
    let (mut le, mut ge) = (0u64, 0u64);
    let lo_bound = obs + gamma;
    let hi_bound = obs - gamma;
    for (ma, &x) in a.iter().enumerate() {
        // #{T_s ≤ lo_bound}: fast values below `lo_bound − delta` surely count, those above
        // `lo_bound + delta` surely do not; the band between is decided exactly.
        let sure = count_le(&bv, |y| (x + y) / nf < lo_bound - delta);
        let band = count_le(&bv, |y| (x + y) / nf <= lo_bound + delta);
        le += sure as u64;
        for &(_, mb) in &b[sure..band] {
            le += u64::from(exact(ma, mb) <= lo_bound);
        }
        // #{T_s ≥ hi_bound}, likewise.
        let below = count_le(&bv, |y| (x + y) / nf < hi_bound - delta);
        let band = count_le(&bv, |y| (x + y) / nf <= hi_bound + delta);
        ge += (bv.len() - band) as u64;
        for &(_, mb) in &b[below..band] {
            ge += u64::from(exact(ma, mb) >= hi_bound);
        }
    }
    let total = (a.len() * b.len()) as u64;
    Randomization {
        p_value: (2.0 * le.min(ge) as f64 / total as f64).min(1.0),
        exact: true,
        resamples: total,
    }
}

/// Number of leading elements of the sorted `b` satisfying the monotone predicate `pred`.
fn count_le(b: &[f64], pred: impl Fn(f64) -> bool) -> usize {
    b.partition_point(|&y| pred(y))
}

/// Monte Carlo sign-flip randomization test: `iterations` random flip patterns (pattern `r`
/// from [`StatsRng::for_replicate`]`(seed, r)`), `p = (hits + 1) / (iterations + 1)` with
/// `hits = #{|T_s| ≥ |T| − γ}` (the add-one estimator of Phipson & Smyth 2010, never 0).
/// Thread-count independent. Every `d` = 0 gives 1; empty gives NaN.
pub fn fisher_monte_carlo(d: &[f64], iterations: u64, seed: u64) -> Randomization {
    let n = d.len();
    if n == 0 || d.iter().any(|v| !v.is_finite()) {
        return Randomization {
            p_value: f64::NAN,
            exact: false,
            resamples: iterations,
        };
    }
    if all_zero(d) {
        return Randomization {
            p_value: 1.0,
            exact: false,
            resamples: iterations,
        };
    }
    let nf = n as f64;
    let obs = mean(d).abs();
    let bound = obs - REL_TIE * obs;
    let hits: u64 = (0..iterations as usize)
        .into_par_iter()
        .with_min_len(64)
        .map(|r| {
            let mut rng = StatsRng::for_replicate(seed, r as u64);
            let mut s = 0.0f64;
            for chunk in d.chunks(64) {
                let bits = rng.next_u64();
                for (k, &v) in chunk.iter().enumerate() {
                    // Branch-free sign: bit set → −v.
                    let sign = 1.0 - 2.0 * ((bits >> k) & 1) as f64;
                    s += sign * v;
                }
            }
            u64::from((s / nf).abs() >= bound)
        })
        .sum();
    Randomization {
        p_value: (hits as f64 + 1.0) / (iterations as f64 + 1.0),
        exact: false,
        resamples: iterations,
    }
}

/// Paired bootstrap test of the mean difference on centred differences (Efron & Tibshirani,
/// *An Introduction to the Bootstrap*, 1993, §16.4: resample from the null-shifted data
/// `d − mean(d)`): for each of `iterations` resamples of the units (resample `r` from
/// [`StatsRng::for_replicate`]`(seed, r)`), `T* = mean(resampled centred d)`;
/// `p = (#{|T*| ≥ |T| − γ} + 1) / (iterations + 1)`. Assumes the units are independent
/// draws; no distributional shape. Every `d` = 0 gives 1; empty, one unit, a NaN/±inf
/// difference or a constant non-zero difference give NaN: the centred resamples are then all
/// 0, so the add-one estimate would be `1/(iterations + 1)` — "significant" with no variance
/// behind it.
pub fn bootstrap_test(d: &[f64], iterations: u64, seed: u64) -> f64 {
    let n = d.len();
    if n == 0 || d.iter().any(|v| !v.is_finite()) {
        return f64::NAN;
    }
    if all_zero(d) {
        return 1.0;
    }
    if n < 2 || constant_up_to_rounding(d) {
        return f64::NAN;
    }
    let m = mean(d);
    let centred: Vec<f64> = d.iter().map(|v| v - m).collect();
    let obs = m.abs();
    let bound = obs - REL_TIE * obs;
    let nf = n as f64;
    let hits: u64 = (0..iterations as usize)
        .into_par_iter()
        .with_min_len(16)
        .map(|r| {
            let mut rng = StatsRng::for_replicate(seed, r as u64);
            let mut s = 0.0f64;
            for _ in 0..n {
                s += centred[rng.below(n as u64) as usize];
            }
            u64::from((s / nf).abs() >= bound)
        })
        .sum();
    (hits as f64 + 1.0) / (iterations as f64 + 1.0)
}

/// Cohen's `d_z` for paired samples (Cohen 1988; Lakens 2013, eq. 6): `mean(d) / sd(d)` with
/// `sd` the sample standard deviation (ddof = 1). `None` when `sd = 0` (every difference the
/// same, including all 0) or `n < 2`.
pub fn cohens_dz(d: &[f64]) -> Option<f64> {
    if d.len() < 2 || all_equal(d) {
        return None;
    }
    let sd = variance(d).sqrt();
    (sd > 0.0 && sd.is_finite()).then(|| mean(d) / sd)
}

/// Per-unit exact comparisons of a run with a baseline (a mergeable accumulator).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WinsTiesLosses {
    /// Units where the run scores strictly higher.
    pub wins: u64,
    /// Units where both score exactly the same.
    pub ties: u64,
    /// Units where the run scores strictly lower.
    pub losses: u64,
}

impl WinsTiesLosses {
    /// Record one unit (`run` vs `baseline`; NaN on either side counts as a tie).
    pub fn add(&mut self, run: f64, baseline: f64) {
        if run > baseline {
            self.wins += 1;
        } else if run < baseline {
            self.losses += 1;
        } else {
            self.ties += 1;
        }
    }
}

impl Accumulator for WinsTiesLosses {
    fn merge(&mut self, other: Self) {
        self.wins += other.wins;
        self.ties += other.ties;
        self.losses += other.losses;
    }
}

/// Wins, ties and losses of `run` against `baseline`, unit by unit (extra units of the longer
/// slice are ignored; use [`differences`] to check lengths).
pub fn wins_ties_losses(run: &[f64], baseline: &[f64]) -> WinsTiesLosses {
    let mut w = WinsTiesLosses::default();
    for (a, b) in run.iter().zip(baseline) {
        w.add(*a, *b);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_zero_differences_give_one() {
        let d = [0.0; 30];
        assert_eq!(ttest_rel(&d).p_value, 1.0);
        assert_eq!(wilcoxon(&d).p_value, 1.0);
        assert_eq!(wilcoxon(&d[..5]).p_value, 1.0);
        assert_eq!(fisher_randomization(&d, 100, 1).p_value, 1.0);
        assert_eq!(fisher_randomization(&d[..5], 100, 1).p_value, 1.0);
        assert_eq!(bootstrap_test(&d, 100, 1), 1.0);
        assert_eq!(cohens_dz(&d), None);
    }

    #[test]
    fn empty_gives_nan() {
        assert!(ttest_rel(&[]).p_value.is_nan());
        assert!(wilcoxon(&[]).p_value.is_nan());
        assert!(fisher_exact(&[]).p_value.is_nan());
        assert!(bootstrap_test(&[], 10, 0).is_nan());
    }

    #[test]
    fn signed_rank_counts_sum_to_power_of_two() {
        for n in 0..=50 {
            let c = signed_rank_counts(n);
            assert_eq!(c.iter().sum::<u64>(), 1u64 << n);
            assert_eq!(c.len(), n * (n + 1) / 2 + 1);
        }
    }

    #[test]
    fn fisher_exact_small_by_hand() {
        // d = [1, 2]: null sums {3, 1, -1, -3}/2; obs = 1.5 → #{≥} = 1, #{≤} = 4 → p = 0.5.
        assert_eq!(fisher_exact(&[1.0, 2.0]).p_value, 0.5);
        // d = [1, -1]: obs 0: #{≤0} = 3, #{≥0} = 3 → p = min(1, 1.5) = 1.
        assert_eq!(fisher_exact(&[1.0, -1.0]).p_value, 1.0);
    }

    #[test]
    fn fisher_exact_decides_near_ties_as_scipy() {
        // x = [0.1, 0.25, 0.1, 0.25], y = [0, 0.1, 0.5, 0.1]: mean(x − y) = −6.9e−18 (0 up to
        // rounding). scipy.stats.permutation_test(..., permutation_type="samples",
        // n_resamples=inf) with np.mean(x − y) gives p = 1.0 (the meet-in-the-middle sums
        // alone gave 0.875).
        let d = differences(&[0.1, 0.25, 0.1, 0.25], &[0.0, 0.1, 0.5, 0.1]).unwrap();
        assert_eq!(fisher_exact(&d).p_value, 1.0);
        // x = [0.1, 0, 0.5], y = [0.2, 0.2, 0.2]: scipy 1.0 (was 0.75).
        let d = differences(&[0.1, 0.0, 0.5], &[0.2, 0.2, 0.2]).unwrap();
        assert_eq!(fisher_exact(&d).p_value, 1.0);
        // One unit: two flips, both as extreme.
        assert_eq!(fisher_exact(&[0.3]).p_value, 1.0);
        assert!(fisher_exact(&[0.3, f64::INFINITY]).p_value.is_nan());
    }

    #[test]
    fn degenerate_inputs_are_never_significant() {
        // One unit or a constant shift: the bootstrap's centred resamples are all 0 and it
        // used to give 1/(N+1).
        assert!(bootstrap_test(&[0.2], 999, 0).is_nan());
        assert!(bootstrap_test(&[0.2; 12], 999, 0).is_nan());
        for t in PairedTest::ALL {
            for d in [
                &[0.2][..],
                &[0.2; 12],
                &[0.1, f64::NAN],
                &[0.1, f64::INFINITY],
                &[],
            ] {
                assert!(t.p_value(d, 99, 0).is_nan(), "{t} {d:?}");
            }
            assert_eq!(t.p_value(&[0.0; 5], 99, 0), 1.0);
        }
        assert_eq!(degeneracy(&[0.2]), Some(Degenerate::OneUnit));
        assert_eq!(degeneracy(&[0.2, 0.2]), Some(Degenerate::ZeroVariance));
        // A constant shift computed in floating point differs in the last bits.
        let d = differences(&[0.3, 0.4, 0.5], &[0.1, 0.2, 0.3]).unwrap();
        assert_ne!(d[0], d[1]);
        assert_eq!(degeneracy(&d), Some(Degenerate::ZeroVariance));
        assert!(PairedTest::T.p_value(&d, 9, 0).is_nan());
        assert_eq!(
            degeneracy(&[0.0, f64::NEG_INFINITY]),
            Some(Degenerate::NonFinite)
        );
        assert_eq!(degeneracy(&[0.0, 0.0]), None);
        assert_eq!(degeneracy(&[0.1, 0.2]), None);
    }

    #[test]
    fn wins_ties_losses_counts() {
        let w = wins_ties_losses(&[1.0, 0.5, 0.2], &[0.5, 0.5, 0.3]);
        assert_eq!((w.wins, w.ties, w.losses), (1, 1, 1));
    }

    #[test]
    fn test_names_round_trip() {
        for t in PairedTest::ALL {
            assert_eq!(t.name().parse::<PairedTest>().unwrap(), t);
        }
        assert!("z".parse::<PairedTest>().is_err());
    }
}
