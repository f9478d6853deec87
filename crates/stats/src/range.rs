//! The studentized range distribution: `Q = (max − min of k independent N(0, 1)) / s` with
//! `ν s² ~ χ²_ν` independent of them — the reference distribution of Tukey's HSD.
//!
//! Definition (Hartley 1942; the double integral that `scipy.stats.studentized_range` and R's
//! `ptukey` evaluate):
//!
//! * `W(w) = P(range < w) = k ∫ φ(z) [Φ(z) − Φ(z − w)]^{k−1} dz`, and
//! * `P(Q ≥ q) = ∫₀^∞ f_ν(s) (1 − W(q s)) ds`, `f_ν` the density of `s = √(χ²_ν / ν)`.
//!
//! Computation: the upper tail `1 − W(w)` is integrated directly, never as `1 − W`, using
//! `a^{k−1} − b^{k−1} = (a − b) Σ aⁱ b^{k−2−i}` with `a = Φ(z)`, `b = Φ(z) − Φ(z − w)` and
//! `a − b = Φ(z − w)`, so small p-values keep their relative precision. The inner integral is
//! composite Gauss–Legendre over the region where the integrand is above 1e-16 of its
//! peak. For many p-values with the same `k` and `ν` (every pair of a Tukey table),
//! [`StudentizedRange`] tabulates `ln(1 − W)` once as piecewise Chebyshev interpolants of
//! width 1/4 (relative error ≈ 1e-13) and fixes the outer nodes (composite Gauss–Legendre over
//! the window where `f_ν` is above e⁻⁴⁵ of its mode, the weights normalized to sum to 1), so
//! each p-value costs a few hundred interpolant evaluations. Agreement with scipy 1.17 is
//! checked on golden vectors (`tests/fixtures/gen_multi.py`) to 1e-9 absolute.

use crate::special::{ln_gamma, normal_sf};

/// Gauss–Legendre nodes and weights on `[−1, 1]` (Newton iteration on `P_n`; Golub–Welsch
/// accuracy for these orders).
fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut x = vec![0.0; n];
    let mut w = vec![0.0; n];
    let nf = n as f64;
    for i in 0..n.div_ceil(2) {
        let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (nf + 0.5)).cos();
        let mut dp = 0.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, z);
            for j in 2..=n {
                let jf = j as f64;
                let p2 = ((2.0 * jf - 1.0) * z * p1 - (jf - 1.0) * p0) / jf;
                p0 = p1;
                p1 = p2;
            }
            dp = nf * (z * p1 - p0) / (z * z - 1.0);
            let dz = p1 / dp;
            z -= dz;
            if dz.abs() < 1e-15 {
                break;
            }
        }
        x[i] = -z;
        x[n - 1 - i] = z;
        let wi = 2.0 / ((1.0 - z * z) * dp * dp);
        w[i] = wi;
        w[n - 1 - i] = wi;
    }
    (x, w)
}

/// Standard normal density.
fn phi(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// `Φ(z)`.
fn big_phi(z: f64) -> f64 {
    normal_sf(-z)
}

/// `P(x < Z < y)` for `x ≤ y`, from the tail that keeps the digits.
fn normal_between(x: f64, y: f64) -> f64 {
    if x >= 0.0 {
        normal_sf(x) - normal_sf(y)
    } else if y <= 0.0 {
        big_phi(y) - big_phi(x)
    } else {
        1.0 - normal_sf(y) - big_phi(x)
    }
}

/// `1 − W(w)`: the probability that the range of `k` standard normals is at least `w`.
pub fn range_tail(w: f64, k: u32) -> f64 {
    if w.is_nan() || k < 2 {
        return f64::NAN;
    }
    if w <= 0.0 {
        return 1.0;
    }
    if w.is_infinite() {
        return 0.0;
    }
    let (gx, gw) = gauss_legendre(10);
    let lo = (0.5 * w - 8.0).min(-8.5);
    let hi = (0.5 * w + 8.0).max(8.5);
    let panels = ((hi - lo) / 0.5).ceil() as usize;
    let h = (hi - lo) / panels as f64;
    let m = k - 2;
    let mut total = 0.0;
    for p in 0..panels {
        let a0 = lo + p as f64 * h;
        let mid = a0 + 0.5 * h;
        for (x, wt) in gx.iter().zip(&gw) {
            let z = mid + 0.5 * h * x;
            let a = big_phi(z);
            let c = big_phi(z - w);
            let b = normal_between(z - w, z);
            // Σ aⁱ b^{m−i} = (a^{m+1} − b^{m+1}) / (a − b), a − b = c; the closed form loses
            // at most a few digits while c ≥ a/1000 (relative error ≈ ε·a/((m + 1)·c)), else
            // the sum term by term.
            let sum = if c >= 1e-3 * a && c > 0.0 {
                (a.powi(m as i32 + 1) - b.powi(m as i32 + 1)) / c
            } else {
                geometric_sum(a, b, m)
            };
            total += wt * 0.5 * h * phi(z) * c * sum;
        }
    }
    (k as f64 * total).clamp(0.0, 1.0)
}

/// `Σ_{i=0}^{m} aⁱ b^{m−i}` for `0 ≤ b ≤ a` (terms all non-negative, no cancellation).
fn geometric_sum(a: f64, b: f64, m: u32) -> f64 {
    // Horner: ((a + b) a + b²) ... written as s_{j+1} = s_j · a + b^{j+1}.
    let mut s = 1.0;
    let mut bp = 1.0;
    for _ in 0..m {
        bp *= b;
        s = s * a + bp;
    }
    s
}

/// Chebyshev interpolant of `ln(1 − W(w))` on `[0, W_MAX]` for one `k`.
#[derive(Debug, Clone)]
struct TailTable {
    k: u32,
    /// Chebyshev coefficients per segment of width [`SEG`], each computed on first use (a
    /// Tukey table needs the segments up to its largest `q · s` only).
    segments: Vec<std::sync::OnceLock<[f64; ORDER]>>,
}

const SEG: f64 = 0.25;
const W_MAX: f64 = 40.0;
const ORDER: usize = 12;

impl TailTable {
    fn new(k: u32) -> TailTable {
        let segs = (W_MAX / SEG) as usize;
        TailTable {
            k,
            segments: (0..segs).map(|_| std::sync::OnceLock::new()).collect(),
        }
    }

    /// The interpolant of `ln(1 − W)` on segment `s`.
    fn segment(&self, s: usize) -> &[f64; ORDER] {
        self.segments[s].get_or_init(|| {
            let a = s as f64 * SEG;
            let mut vals = [0.0; ORDER];
            for (j, v) in vals.iter_mut().enumerate() {
                let t = (std::f64::consts::PI * (j as f64 + 0.5) / ORDER as f64).cos();
                let w = a + 0.5 * SEG * (1.0 + t);
                *v = range_tail(w, self.k).max(f64::MIN_POSITIVE).ln();
            }
            let mut c = [0.0; ORDER];
            for (i, ci) in c.iter_mut().enumerate() {
                let mut acc = 0.0;
                for (j, v) in vals.iter().enumerate() {
                    acc += v
                        * (std::f64::consts::PI * i as f64 * (j as f64 + 0.5) / ORDER as f64).cos();
                }
                *ci = acc * 2.0 / ORDER as f64;
            }
            c[0] *= 0.5;
            c
        })
    }

    /// `1 − W(w)` from the table.
    fn tail(&self, w: f64) -> f64 {
        if w <= 0.0 {
            return 1.0;
        }
        if w >= W_MAX {
            return 0.0;
        }
        let s = ((w / SEG) as usize).min(self.segments.len() - 1);
        let a = s as f64 * SEG;
        let t = 2.0 * (w - a) / SEG - 1.0;
        let c = self.segment(s);
        // Clenshaw.
        let (mut b1, mut b2) = (0.0, 0.0);
        for &ci in c.iter().skip(1).rev() {
            let b0 = 2.0 * t * b1 - b2 + ci;
            b2 = b1;
            b1 = b0;
        }
        let v = t * b1 - b2 + c[0];
        v.exp().min(1.0)
    }
}

/// The studentized range distribution for one `(k, ν)`, ready to give many upper tails.
#[derive(Debug, Clone)]
pub struct StudentizedRange {
    table: TailTable,
    /// Outer nodes `s_i` and normalized weights (`None` for ν = ∞).
    outer: Option<(Vec<f64>, Vec<f64>)>,
}

impl StudentizedRange {
    /// The distribution of `k ≥ 2` means with `df > 0` degrees of freedom (`f64::INFINITY`
    /// allowed). `None` for `k < 2`, `df ≤ 0` or NaN.
    pub fn new(k: u32, df: f64) -> Option<StudentizedRange> {
        if k < 2 || df.is_nan() || df <= 0.0 {
            return None;
        }
        let table = TailTable::new(k);
        let outer = df.is_finite().then(|| outer_rule(df));
        Some(StudentizedRange { table, outer })
    }

    /// The number of means `k`.
    pub fn k(&self) -> u32 {
        self.table.k
    }

    /// `P(Q ≥ q)` (= `scipy.stats.studentized_range.sf(q, k, df)`); 1 for `q ≤ 0`, NaN for NaN.
    pub fn sf(&self, q: f64) -> f64 {
        if q.is_nan() {
            return f64::NAN;
        }
        if q <= 0.0 {
            return 1.0;
        }
        match &self.outer {
            None => self.table.tail(q),
            Some((s, w)) => {
                let mut acc = 0.0;
                for (si, wi) in s.iter().zip(w) {
                    acc += wi * self.table.tail(q * si);
                }
                acc.clamp(0.0, 1.0)
            }
        }
    }
}

/// `P(Q ≥ q)` of the studentized range with `k` means and `df` degrees of freedom
/// (= `scipy.stats.studentized_range.sf(q, k, df)`). Builds the tables each call: for many
/// values of one `(k, df)` use [`StudentizedRange`]. NaN for invalid parameters.
pub fn studentized_range_sf(q: f64, k: u32, df: f64) -> f64 {
    StudentizedRange::new(k, df).map_or(f64::NAN, |d| d.sf(q))
}

/// `ln f_ν(s)` up to its constant.
fn ln_density(s: f64, nu: f64) -> f64 {
    if s <= 0.0 {
        return f64::NEG_INFINITY;
    }
    (nu - 1.0) * s.ln() - 0.5 * nu * s * s
}

/// The outer quadrature: composite Gauss–Legendre over the window of `f_ν`, weights × density
/// normalized to sum to 1 (which also removes the normalizing constant's rounding).
fn outer_rule(nu: f64) -> (Vec<f64>, Vec<f64>) {
    let mode = if nu > 1.0 {
        ((nu - 1.0) / nu).sqrt()
    } else {
        0.0
    };
    let peak = if mode > 0.0 {
        ln_density(mode, nu)
    } else {
        // ν ≤ 1: the density is decreasing (ν = 1: half-normal); use its value near 0.
        ln_density(1e-300_f64.max(1e-8), nu).max(0.0)
    };
    let drop = 45.0;
    // Upper end: step out until the log density is `drop` below the peak.
    let step = 1.0 / (2.0 * nu).sqrt();
    let mut hi = mode + step;
    while ln_density(hi, nu) > peak - drop {
        hi += step;
    }
    let mut lo = mode - step;
    while lo > 0.0 && ln_density(lo, nu) > peak - drop {
        lo -= step;
    }
    let lo = lo.max(0.0);
    let (gx, gw) = gauss_legendre(10);
    let panels = 48;
    let h = (hi - lo) / panels as f64;
    let mut s = Vec::with_capacity(panels * gx.len());
    let mut lw = Vec::with_capacity(panels * gx.len());
    for p in 0..panels {
        let mid = lo + (p as f64 + 0.5) * h;
        for (x, wt) in gx.iter().zip(&gw) {
            let si = mid + 0.5 * h * x;
            s.push(si);
            lw.push(ln_density(si, nu) + (wt * 0.5 * h).ln());
        }
    }
    let mx = lw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut w: Vec<f64> = lw.iter().map(|v| (v - mx).exp()).collect();
    // Normalize by the exact constant where it is accurate (small ν, where the window may
    // start at 0 with a non-negligible density), else by the sum.
    let total: f64 = w.iter().sum();
    let exact = exact_norm(nu, mx);
    let norm = match exact {
        Some(e) if nu < 50.0 => e,
        _ => 1.0 / total,
    };
    for v in &mut w {
        *v *= norm;
    }
    (s, w)
}

/// `exp(mx) · c_ν` where `c_ν` is the density's normalizing constant: the factor that turns
/// the shifted weights into probabilities.
fn exact_norm(nu: f64, mx: f64) -> Option<f64> {
    let ln_c = 0.5 * nu * (0.5 * nu).ln() + std::f64::consts::LN_2 - ln_gamma(0.5 * nu);
    let v = (ln_c + mx).exp();
    v.is_finite().then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauss_legendre_integrates_polynomials() {
        let (x, w) = gauss_legendre(10);
        let s: f64 = x.iter().zip(&w).map(|(x, w)| w * x.powi(18)).sum();
        assert!((s - 2.0 / 19.0).abs() < 1e-14, "{s}");
        assert!((w.iter().sum::<f64>() - 2.0).abs() < 1e-14);
    }

    #[test]
    fn range_of_two_normals_is_sqrt2_half_normal() {
        // k = 2: range = |Z1 − Z2| ~ √2 |N(0,1)|, so P(range ≥ w) = 2 Φ(−w/√2).
        for w in [0.1, 0.5, 1.0, 2.0, 4.0, 8.0] {
            let want = 2.0 * normal_sf(w / std::f64::consts::SQRT_2);
            let got = range_tail(w, 2);
            assert!(
                ((got - want) / want).abs() < 1e-10,
                "w={w}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn table_matches_direct_integration() {
        let t = TailTable::new(5);
        for w in [0.01, 0.3, 1.7, 3.3, 5.0, 9.9, 15.2] {
            let a = t.tail(w);
            let b = range_tail(w, 5);
            assert!(((a - b) / b).abs() < 1e-10, "w={w}: {a} vs {b}");
        }
    }

    #[test]
    fn studentized_range_with_two_means_is_a_t_test() {
        // k = 2: Q = √2 |T_ν|, so P(Q ≥ q) = P(|T_ν| ≥ q/√2).
        for (q, df) in [
            (1.0, 5.0),
            (3.0, 10.0),
            (4.5, 30.0),
            (2.0, 2.0),
            (6.0, 100.0),
        ] {
            let want = crate::special::student_t_two_sided(q / std::f64::consts::SQRT_2, df);
            let got = studentized_range_sf(q, 2, df);
            assert!((got - want).abs() < 1e-9, "q={q} df={df}: {got} vs {want}");
        }
    }
}
