//! RouteLLM's strong-model-share curve metrics (lm-sys/RouteLLM `routellm/evals/evaluate.py`,
//! `generate_results`): a router's quality at several shares of calls sent to the strong model.
//!
//! * AUC: `np.trapz(quality, strong_pct / 100)`, the points sorted by strong share (a fraction
//!   0..1 on the x axis).
//! * APGR (average performance gap recovered): `(AUC − weak AUC) / (strong AUC − weak AUC)`,
//!   the weak and strong AUCs being the constant curves `W` and `S` over the same x points.
//! * CPT(x) ("x % qual"), x ∈ {20, 50, 80}: the strong share in percent at which quality reaches
//!   `x/100 · (S − W) + W`, `np.interp(target, quality, strong_pct)`. `np.interp` needs
//!   non-decreasing `quality`; where it is not, the reference's value is undefined, and
//!   routeval interpolates over the running maximum of quality instead (flagged in
//!   [`StrongShareMetrics::running_max_used`]).

use crate::numpy::{interp, trapz};

/// The CPT levels RouteLLM reports (percent of the weak-to-strong quality gap).
pub const CPT_LEVELS: [(u32, f64); 3] = [(20, 0.2), (50, 0.5), (80, 0.8)];

/// One system's RouteLLM metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct StrongShareMetrics {
    /// AUC of quality over the strong share as a fraction (quality units × 1).
    pub auc: f64,
    /// APGR (fraction; NaN when `S == W`).
    pub apgr: f64,
    /// `(x, CPT(x))` for x in [`CPT_LEVELS`], strong share in percent.
    pub cpt: Vec<(u32, f64)>,
    /// Quality was not non-decreasing in strong share, so CPT used its running maximum.
    pub running_max_used: bool,
}

/// Compute the metrics of one system's points `(strong_pct, quality)` (strong share in
/// percent, 0..100) given the weak and strong models' qualities `weak`, `strong`.
///
/// Points are sorted by strong share, stably (equal shares keep input order; pandas'
/// `sort_values` uses numpy's quicksort, stable on up to 16 points). Empty input gives NaNs.
pub fn strong_share_metrics(points: &[(f64, f64)], weak: f64, strong: f64) -> StrongShareMetrics {
    let mut p = points.to_vec();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    let x: Vec<f64> = p.iter().map(|q| q.0).collect();
    let xf: Vec<f64> = x.iter().map(|v| v / 100.0).collect();
    let q: Vec<f64> = p.iter().map(|q| q.1).collect();
    let auc = trapz(&q, &xf);
    let weak_auc = trapz(&vec![weak; q.len()], &xf);
    let strong_auc = trapz(&vec![strong; q.len()], &xf);
    let apgr = (auc - weak_auc) / (strong_auc - weak_auc);
    let monotone = q.windows(2).all(|w| w[0] <= w[1]);
    let qm: Vec<f64> = if monotone {
        q.clone()
    } else {
        q.iter()
            .scan(f64::NEG_INFINITY, |m, &v| {
                *m = m.max(v);
                Some(*m)
            })
            .collect()
    };
    let cpt = CPT_LEVELS
        .iter()
        .map(|&(level, frac)| (level, interp(frac * (strong - weak) + weak, &qm, &x)))
        .collect();
    StrongShareMetrics {
        auc: if q.is_empty() { f64::NAN } else { auc },
        apgr: if q.is_empty() { f64::NAN } else { apgr },
        cpt,
        running_max_used: !monotone,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_router_recovers_half_the_gap() {
        let pts = [(100.0, 1.0), (0.0, 0.0), (50.0, 0.5)];
        let m = strong_share_metrics(&pts, 0.0, 1.0);
        assert_eq!(m.auc, 0.5);
        assert_eq!(m.apgr, 0.5);
        assert_eq!(m.cpt, vec![(20, 20.0), (50, 50.0), (80, 80.0)]);
        assert!(!m.running_max_used);
    }

    #[test]
    fn non_monotone_quality_uses_running_max() {
        let pts = [(0.0, 0.0), (50.0, 0.8), (60.0, 0.4), (100.0, 1.0)];
        let m = strong_share_metrics(&pts, 0.0, 1.0);
        assert!(m.running_max_used);
        // 0.8 is first reached at 50 % and held until 60 %: numpy takes the last equal xp.
        assert_eq!(m.cpt[2], (80, 60.0));
    }
}
