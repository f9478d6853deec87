//! Multiple-testing corrections = `statsmodels.stats.multitest.multipletests` (statsmodels
//! 0.14/0.15), methods `"holm"` and `"bonferroni"`, with its reject rules.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// A family-wise error rate correction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Correction {
    /// Holm's step-down method (Holm 1979): controls the family-wise error rate like
    /// Bonferroni under any dependence, and is uniformly more powerful. routeval's default.
    Holm,
    /// Bonferroni: `p · m`, capped at 1.
    Bonferroni,
    /// No correction: adjusted p = p, reject when `p ≤ α`.
    None,
}

impl Correction {
    /// Every correction, in documentation order.
    pub const ALL: [Correction; 3] = [Correction::Holm, Correction::Bonferroni, Correction::None];

    /// The name used on the command line and in JSON (`holm`, `bonferroni`, `none`).
    pub fn name(self) -> &'static str {
        match self {
            Correction::Holm => "holm",
            Correction::Bonferroni => "bonferroni",
            Correction::None => "none",
        }
    }
}

impl fmt::Display for Correction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Correction {
    type Err = crate::StatsError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Correction::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| crate::StatsError::UnknownName {
                what: "correction",
                name: s.to_string(),
                expected: "holm, bonferroni, none",
            })
    }
}

/// Adjusted p-values and reject decisions, in the input order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Adjusted {
    /// Adjusted p-values (capped at 1; NaN inputs stay NaN).
    pub p_adjusted: Vec<f64>,
    /// Whether each hypothesis is rejected at the family-wise level `alpha`.
    pub reject: Vec<bool>,
}

/// Adjust a family of p-values = `multipletests(pvals, alpha, method)[:2]`.
///
/// * Holm: sort ascending; `p̃_(k) = max_{j ≤ k} (m − j + 1)·p_(j)`, capped at 1; reject the
///   hypotheses before the first `p_(k) > α/(m − k + 1)`.
/// * Bonferroni: `p̃ = min(1, m·p)`, reject when `p ≤ α/m`.
/// * None: `p̃ = p`, reject when `p ≤ α`.
///
/// `m` counts every entry, NaN included (as statsmodels does); a NaN p-value is never
/// rejected, sorts last and leaves its adjusted value NaN.
pub fn adjust(pvalues: &[f64], alpha: f64, correction: Correction) -> Adjusted {
    let m = pvalues.len();
    let mf = m as f64;
    match correction {
        Correction::None => Adjusted {
            p_adjusted: pvalues.to_vec(),
            reject: pvalues.iter().map(|&p| p <= alpha).collect(),
        },
        Correction::Bonferroni => Adjusted {
            p_adjusted: pvalues
                .iter()
                .map(|&p| if p * mf > 1.0 { 1.0 } else { p * mf })
                .collect(),
            reject: pvalues.iter().map(|&p| p <= alpha / mf).collect(),
        },
        Correction::Holm => {
            let mut order: Vec<usize> = (0..m).collect();
            // NaN last, as numpy's argsort.
            order.sort_by(|&a, &b| {
                let (x, y) = (pvalues[a], pvalues[b]);
                match (x.is_nan(), y.is_nan()) {
                    (false, false) => x.total_cmp(&y),
                    (a_nan, b_nan) => a_nan.cmp(&b_nan),
                }
            });
            let mut p_adjusted = vec![f64::NAN; m];
            let mut reject = vec![false; m];
            let mut running = f64::NEG_INFINITY;
            let mut still_rejecting = true;
            for (k, &i) in order.iter().enumerate() {
                let p = pvalues[i];
                let factor = (m - k) as f64;
                // notreject = p_sorted > alpha / factor; NaN compares false, as in numpy.
                if p > alpha / factor || p.is_nan() {
                    still_rejecting = false;
                }
                reject[i] = still_rejecting;
                let raw = p * factor;
                // np.maximum.accumulate propagates NaN.
                running = if raw.is_nan() || running.is_nan() {
                    f64::NAN
                } else {
                    running.max(raw)
                };
                p_adjusted[i] = if running > 1.0 { 1.0 } else { running };
            }
            Adjusted { p_adjusted, reject }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_by_hand() {
        let a = adjust(&[0.01, 0.04, 0.03, 0.2], 0.05, Correction::Holm);
        // sorted: 0.01*4=0.04, 0.03*3=0.09, 0.04*2=0.08→0.09, 0.2*1=0.2
        let want = [0.04, 0.09, 0.09, 0.2];
        for (x, w) in a.p_adjusted.iter().zip(want) {
            assert!((x - w).abs() < 1e-15);
        }
        assert_eq!(a.reject, vec![true, false, false, false]);
    }

    #[test]
    fn bonferroni_caps() {
        let a = adjust(&[0.5, 0.01], 0.05, Correction::Bonferroni);
        assert_eq!(a.p_adjusted, vec![1.0, 0.02]);
        assert_eq!(a.reject, vec![false, true]);
    }

    #[test]
    fn names_round_trip() {
        for c in Correction::ALL {
            assert_eq!(c.name().parse::<Correction>().unwrap(), c);
        }
    }
}
