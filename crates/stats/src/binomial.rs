//! Exact binomial test with p = ½ and the exact McNemar test built on it.

use crate::special::{binom_half_cdf, binom_half_pmf, binom_half_sf};

/// scipy's `_binary_search_for_binom_tst`: the `i` in `lo..=hi` with `a(i) ≤ d < a(i+1)` for a
/// function ascending on that range.
fn binary_search(a: impl Fn(i64) -> f64, d: f64, mut lo: i64, mut hi: i64) -> i64 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let v = a(mid);
        if v < d {
            lo = mid + 1;
        } else if v > d {
            hi = mid - 1;
        } else {
            return mid;
        }
    }
    if a(lo) <= d { lo } else { lo - 1 }
}

/// Two-sided exact binomial test of `k` successes in `n` trials against p = ½ =
/// `scipy.stats.binomtest(k, n, 0.5).pvalue` (scipy 1.17): the probability of every outcome
/// whose mass is at most `pmf(k)·(1 + 10⁻⁷)`, summed as scipy does (one tail from its cdf, the
/// other located by binary search), capped at 1. `n = 0` gives 1 (no evidence); `k > n` gives
/// NaN.
pub fn binom_test_half(k: u64, n: u64) -> f64 {
    if n == 0 {
        return 1.0;
    }
    if k > n {
        return f64::NAN;
    }
    let (k, ni) = (k as i64, n as i64);
    let pmf = |x: i64| binom_half_pmf(x, n);
    let d = pmf(k);
    let rerr = 1.0 + 1e-7;
    let pn = 0.5 * n as f64;
    let kf = k as f64;
    let pval = if kf == pn {
        1.0
    } else if kf < pn {
        let ix = binary_search(|x| -pmf(x), -d * rerr, pn.ceil() as i64, ni);
        let y = ni - ix + i64::from(d * rerr == pmf(ix));
        binom_half_cdf(k, n) + binom_half_sf(ni - y, n)
    } else {
        let ix = binary_search(pmf, d * rerr, 0, pn.floor() as i64);
        let y = ix + 1;
        binom_half_cdf(y - 1, n) + binom_half_sf(k - 1, n)
    };
    pval.min(1.0)
}

/// Exact McNemar test for paired binary outcomes (McNemar 1947; the exact conditional form):
/// `b` = units only the run got right, `c` = units only the baseline got right; the two-sided
/// binomial test of `b` among `b + c` discordant pairs against ½ =
/// `scipy.stats.binomtest(b, b + c, 0.5).pvalue`. No discordant pairs gives 1.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    binom_test_half(b, b + c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_cases_by_hand() {
        // binomtest(0, 4): outcomes 0 and 4 → 2/16.
        assert_eq!(binom_test_half(0, 4), 0.125);
        assert_eq!(binom_test_half(2, 4), 1.0);
        // binomtest(1, 5): {0,1,4,5} → 12/32.
        assert_eq!(binom_test_half(1, 5), 0.375);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert!(binom_test_half(5, 4).is_nan());
    }
}
