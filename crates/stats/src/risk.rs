//! Risk-sensitive measures: does a system that wins on average hurt some queries badly?
//!
//! With `Δ_j = run_j − baseline_j` over the `n` paired queries and `t_j = Δ_j` if `Δ_j ≥ 0`,
//! else `(1 + α) Δ_j` (losses weighted by `1 + α`):
//!
//! * **URisk_α** `= mean(t)` (Wang, Bennett & Collins-Thompson, "Robust ranking models via
//!   risk-sensitive optimization", SIGIR 2012);
//! * **TRisk_α** `= URisk_α / (sd(t) / √n)`, `sd` with ddof 1, undefined (`None`) when
//!   `sd = 0` or `n < 2` (Dinçer, Macdonald & Ounis, "Hypothesis testing for the
//!   risk-sensitive evaluation of retrieval systems", SIGIR 2014; `|TRisk| > 2` flags a
//!   significant risk (< −2) or reward (> 2));
//! * **GeoRisk_α** over the whole table of systems (Dinçer, Macdonald & Ounis, "Risk-sensitive
//!   evaluation and learning to rank using multiple baselines", SIGIR 2016): with `x_ij`
//!   system `i`'s score on query `j`, `S_i = Σ_j x_ij`, `T_j = Σ_i x_ij`, `N = Σ x_ij`,
//!   `e_ij = S_i T_j / N`, `z_ij = (x_ij − e_ij) / √e_ij` (0 where `e_ij = 0`),
//!   `ZRisk_α(i) = Σ_j (z_ij if z_ij ≥ 0 else (1 + α) z_ij)` and
//!   `GeoRisk_α(i) = √((S_i / n) · Φ(ZRisk_α(i) / n))`. Undefined (`None`) when `N = 0` (every
//!   score 0) or a score is negative (the chi-square-like standardization needs `x ≥ 0`).
//!
//! All values are in the measure's units (URisk, GeoRisk) or unitless (TRisk).

use crate::StatsError;
use crate::special::normal_sf;
use serde::Serialize;

/// The risk measures of one run against the baseline for one `α`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RiskValues {
    /// The loss weight `α ≥ 0`.
    pub alpha: f64,
    /// URisk_α (`None` for the baseline itself).
    pub urisk: Option<f64>,
    /// TRisk_α (`None` for the baseline, or when the weighted differences have no variance).
    pub trisk: Option<f64>,
    /// GeoRisk_α over the table (`None` when undefined, see the module docs).
    pub georisk: Option<f64>,
}

/// Validates a loss weight: finite and ≥ 0.
pub fn check_alpha(alpha: f64) -> Result<f64, StatsError> {
    if alpha.is_finite() && alpha >= 0.0 {
        Ok(alpha)
    } else {
        Err(StatsError::InvalidOption(format!(
            "a risk weight alpha must be a finite number >= 0, got {alpha}"
        )))
    }
}

/// The loss-weighted differences `t_j` of `run − baseline`.
fn weighted(run: &[f64], baseline: &[f64], alpha: f64) -> Vec<f64> {
    run.iter()
        .zip(baseline)
        .map(|(r, b)| {
            let d = r - b;
            if d >= 0.0 { d } else { (1.0 + alpha) * d }
        })
        .collect()
}

/// URisk_α and TRisk_α of `run` against `baseline` (same queries, same order). Errors on
/// unequal lengths or a bad `alpha`; URisk is NaN for no queries.
pub fn urisk_trisk(
    run: &[f64],
    baseline: &[f64],
    alpha: f64,
) -> Result<(f64, Option<f64>), StatsError> {
    check_alpha(alpha)?;
    if run.len() != baseline.len() {
        return Err(StatsError::LengthMismatch {
            left: run.len(),
            right: baseline.len(),
        });
    }
    let t = weighted(run, baseline, alpha);
    let n = t.len();
    let u = crate::paired::mean(&t);
    let trisk = if n >= 2 {
        let sd = crate::paired::variance(&t).sqrt();
        (sd > 0.0).then(|| u / (sd / (n as f64).sqrt()))
    } else {
        None
    };
    Ok((u, trisk))
}

/// GeoRisk_α of every system of `table[system][query]` (see the module docs). `None` for
/// every system when the table sums to 0 or holds a negative score.
pub fn georisk(table: &[&[f64]], alpha: f64) -> Result<Vec<Option<f64>>, StatsError> {
    check_alpha(alpha)?;
    let k = table.len();
    let n = table.first().map_or(0, |r| r.len());
    for r in table {
        if r.len() != n {
            return Err(StatsError::LengthMismatch {
                left: r.len(),
                right: n,
            });
        }
    }
    if n == 0
        || table
            .iter()
            .any(|r| r.iter().any(|v| v.is_nan() || *v < 0.0 || v.is_infinite()))
    {
        return Ok(vec![None; k]);
    }
    let s: Vec<f64> = table.iter().map(|r| r.iter().sum()).collect();
    let mut tq = vec![0.0; n];
    for r in table {
        for (a, v) in tq.iter_mut().zip(r.iter()) {
            *a += v;
        }
    }
    let total: f64 = s.iter().sum();
    if total <= 0.0 {
        return Ok(vec![None; k]);
    }
    Ok(table
        .iter()
        .zip(&s)
        .map(|(r, &si)| {
            let mut z = 0.0;
            for (x, tj) in r.iter().zip(&tq) {
                let e = si * tj / total;
                let zij = if e > 0.0 { (x - e) / e.sqrt() } else { 0.0 };
                z += if zij >= 0.0 { zij } else { (1.0 + alpha) * zij };
            }
            let phi = normal_sf(-(z / n as f64));
            Some(((si / n as f64) * phi).sqrt())
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urisk_weights_losses() {
        let base = [0.5, 0.5, 0.5, 0.5];
        let run = [0.7, 0.3, 0.6, 0.5];
        // Δ = 0.2, −0.2, 0.1, 0 → t (α = 1) = 0.2, −0.4, 0.1, 0 → mean −0.025.
        let (u, t) = urisk_trisk(&run, &base, 1.0).unwrap();
        assert!((u + 0.025).abs() < 1e-15);
        assert!(t.unwrap() < 0.0);
        let (u0, _) = urisk_trisk(&run, &base, 0.0).unwrap();
        assert!((u0 - 0.025).abs() < 1e-15);
        assert!(urisk_trisk(&run, &base, -1.0).is_err());
        assert!(urisk_trisk(&run, &base, f64::NAN).is_err());
        // No variance: TRisk undefined.
        let (_, t) = urisk_trisk(&base, &base, 1.0).unwrap();
        assert_eq!(t, None);
    }

    #[test]
    fn georisk_of_zero_table_is_undefined() {
        let z = [0.0, 0.0];
        assert_eq!(georisk(&[&z, &z], 1.0).unwrap(), vec![None, None]);
        let a = [0.2, 0.4];
        let b = [0.4, 0.2];
        let g = georisk(&[&a, &b], 0.0).unwrap();
        // Symmetric table: equal GeoRisk.
        assert!((g[0].unwrap() - g[1].unwrap()).abs() < 1e-15);
    }
}
