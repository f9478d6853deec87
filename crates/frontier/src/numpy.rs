//! numpy routines the reference metrics are computed with, reproduced bit for bit.
//!
//! * [`trapz`]: `np.trapz(y, x)` = `add.reduce(diff(x) * (y[1:] + y[:-1]) / 2.0)`, the sum in
//!   numpy's pairwise order ([`routeval_core::py::numpy_sum`]).
//! * [`interp`]: `np.interp(x, xp, fp)` for one `x` (numpy's `arr_interp`: the last `j` with
//!   `xp[j] <= x`, exact hits return `fp[j]`, left/right values outside the range).

use routeval_core::py::numpy_sum;

/// `np.trapz(y, x)`: the trapezoid area under `y` over `x` (same length; shorter of the two
/// is used). Fewer than two points give 0.0, as numpy does.
pub fn trapz(y: &[f64], x: &[f64]) -> f64 {
    let n = y.len().min(x.len());
    if n < 2 {
        return 0.0;
    }
    let terms: Vec<f64> = (1..n)
        .map(|i| (x[i] - x[i - 1]) * (y[i] + y[i - 1]) / 2.0)
        .collect();
    numpy_sum(&terms)
}

/// `np.interp(x, xp, fp)` for a scalar `x`, with `xp` non-decreasing (numpy does not check
/// and gives an arbitrary value otherwise). Empty `xp` gives NaN (numpy raises).
///
/// Mirrors numpy's `compiled_base.c`: below `xp[0]` → `fp[0]`; above `xp[-1]` → `fp[-1]`;
/// otherwise `j` = the last index with `xp[j] <= x` (what `binary_search_with_guess` returns on
/// sorted input); `j` = last index or `xp[j] == x` → `fp[j]`; else
/// `slope * (x - xp[j]) + fp[j]` with `slope = (fp[j+1] - fp[j]) / (xp[j+1] - xp[j])` and the
/// reference's NaN fall-backs.
pub fn interp(x: f64, xp: &[f64], fp: &[f64]) -> f64 {
    let n = xp.len().min(fp.len());
    if n == 0 {
        return f64::NAN;
    }
    if x.is_nan() {
        return x;
    }
    if n == 1 {
        return fp[0];
    }
    if x > xp[n - 1] {
        return fp[n - 1];
    }
    if x < xp[0] {
        return fp[0];
    }
    // Last j with xp[j] <= x (xp sorted): partition point minus one.
    let j = xp[..n].partition_point(|&v| v <= x) - 1;
    if j == n - 1 || xp[j] == x {
        return fp[j];
    }
    let slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
    let mut r = slope * (x - xp[j]) + fp[j];
    if r.is_nan() {
        r = slope * (x - xp[j + 1]) + fp[j + 1];
        if r.is_nan() && fp[j] == fp[j + 1] {
            r = fp[j];
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trapz_matches_hand_values() {
        assert_eq!(trapz(&[1.0, 3.0], &[0.0, 2.0]), 4.0);
        assert_eq!(trapz(&[1.0], &[0.0]), 0.0);
        assert_eq!(trapz(&[0.5, 0.5, 1.0], &[0.0, 1.0, 1.0]), 0.5);
    }

    #[test]
    fn interp_edges_and_plateaus() {
        let xp = [0.0, 1.0, 1.0, 2.0];
        let fp = [0.0, 10.0, 20.0, 30.0];
        assert_eq!(interp(-1.0, &xp, &fp), 0.0);
        assert_eq!(interp(3.0, &xp, &fp), 30.0);
        // On a plateau numpy takes the last equal xp.
        assert_eq!(interp(1.0, &xp, &fp), 20.0);
        assert_eq!(interp(1.5, &xp, &fp), 25.0);
        assert_eq!(interp(2.0, &xp, &fp), 30.0);
        assert_eq!(interp(0.5, &[0.0, 1.0], &[2.0, 4.0]), 3.0);
        assert_eq!(interp(5.0, &[1.0], &[7.0]), 7.0);
        assert!(interp(1.0, &[], &[]).is_nan());
    }
}
