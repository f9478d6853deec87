//! Router threshold rules, probability validation, threshold grids and picking a threshold.
//!
//! * CommonRouterBench tiers ([`cumulative_tier`]): a router emits `[p_low, p_mid, p_mid_high,
//!   p_high]`, the probability that each tier is the cheapest sufficient one. At threshold τ it
//!   routes to the cheapest tier `t` whose cumulative probability `p_0 + … + p_t` (summed left
//!   to right in f64) reaches τ, i.e. the cheapest tier that suffices with probability ≥ τ;
//!   `high` if none does. Raising τ never lowers a row's tier.
//! * GQR-Bench ([`argmax_or_ood`]): a router emits `[p_law, p_finance, p_healthcare]`; at τ it
//!   predicts the argmax (the first on ties, as `np.argmax`) if its probability is ≥ τ, else 3
//!   (out of domain). Raising τ only turns in-domain predictions into 3.
//! * [`check_probs`]: exactly N finite numbers in [0, 1]; a sum away from 1 is allowed and
//!   reported so callers can note it once.
//! * [`parse_thresholds`] (`A:B:STEP` or a comma list) and [`thin_grid`] (default grids).
//! * [`pick_threshold`]: choose τ on a curve by a target or a budget.

use routeval_core::Tier;
use serde_json::Value;

/// How far from 1 a probability vector may sum before it is noted (absolute).
pub const SUM_TOLERANCE: f64 = 1e-6;

/// A probability vector that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProbError {
    /// Not a JSON array.
    #[error("{key} must be a list of {n} probabilities")]
    NotList {
        /// The field name.
        key: String,
        /// The expected length.
        n: usize,
    },
    /// Wrong length.
    #[error("{key} must have {n} probabilities, got {got}")]
    Length {
        /// The field name.
        key: String,
        /// The expected length.
        n: usize,
        /// The length found.
        got: usize,
    },
    /// An element that is not a finite number in [0, 1].
    #[error("{key}[{index}] = {value} is not a finite number in [0, 1]")]
    Value {
        /// The field name.
        key: String,
        /// The element's index.
        index: usize,
        /// The element as written.
        value: String,
    },
}

/// Parse `v` (the JSON value of field `key`) as exactly `N` finite numbers in [0, 1].
/// Returns the probabilities and whether their sum is more than [`SUM_TOLERANCE`] from 1
/// (accepted; callers note it).
pub fn check_probs<const N: usize>(key: &str, v: &Value) -> Result<([f64; N], bool), ProbError> {
    let Value::Array(a) = v else {
        return Err(ProbError::NotList {
            key: key.into(),
            n: N,
        });
    };
    if a.len() != N {
        return Err(ProbError::Length {
            key: key.into(),
            n: N,
            got: a.len(),
        });
    }
    let mut out = [0.0; N];
    for (i, x) in a.iter().enumerate() {
        match x
            .as_f64()
            .filter(|p| p.is_finite() && (0.0..=1.0).contains(p))
        {
            Some(p) if x.is_number() => out[i] = p,
            _ => {
                return Err(ProbError::Value {
                    key: key.into(),
                    index: i,
                    value: x.to_string(),
                });
            }
        }
    }
    let sum: f64 = out.iter().sum();
    Ok((out, (sum - 1.0).abs() > SUM_TOLERANCE))
}

/// The cumulative probabilities `[p0, p0+p1, p0+p1+p2]` (left to right in f64) that the
/// CommonRouterBench rule compares with τ.
pub fn cumulative(p: &[f64; 4]) -> [f64; 3] {
    let c0 = p[0];
    let c1 = c0 + p[1];
    let c2 = c1 + p[2];
    [c0, c1, c2]
}

/// The tier routed to at threshold `tau`: the cheapest `t` with cumulative probability ≥ τ,
/// `high` if none (see the module docs).
pub fn cumulative_tier(p: &[f64; 4], tau: f64) -> Tier {
    let c = cumulative(p);
    if c[0] >= tau {
        Tier::Low
    } else if c[1] >= tau {
        Tier::Mid
    } else if c[2] >= tau {
        Tier::MidHigh
    } else {
        Tier::High
    }
}

/// `np.argmax` of three probabilities (the first maximum) and its probability.
pub fn argmax3(p: &[f64; 3]) -> (usize, f64) {
    let mut best = 0;
    for i in 1..3 {
        if p[i] > p[best] {
            best = i;
        }
    }
    (best, p[best])
}

/// The GQR-Bench label at threshold `tau`: the argmax domain (0 law, 1 finance,
/// 2 healthcare) if its probability ≥ τ, else 3 (out of domain).
pub fn argmax_or_ood(p: &[f64; 3], tau: f64) -> i64 {
    let (i, m) = argmax3(p);
    if m >= tau { i as i64 } else { 3 }
}

/// A threshold list that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--thresholds {spec:?}: {problem}")]
pub struct GridError {
    /// The text given.
    pub spec: String,
    /// What is wrong.
    pub problem: String,
}

/// Parse `A:B:STEP` (A, A+STEP, …, up to B inclusive within 1e-9·STEP; STEP > 0; at most
/// 1,000,000 values) or a comma-separated list. Values must be finite; the result is sorted
/// ascending without duplicates.
pub fn parse_thresholds(spec: &str) -> Result<Vec<f64>, GridError> {
    let err = |p: &str| GridError {
        spec: spec.to_string(),
        problem: p.to_string(),
    };
    let num = |s: &str| -> Result<f64, GridError> {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| err(&format!("{:?} is not a finite number", s.trim())))
    };
    let mut out = Vec::new();
    let parts: Vec<&str> = spec.split(':').collect();
    if parts.len() == 3 {
        let (a, b, step) = (num(parts[0])?, num(parts[1])?, num(parts[2])?);
        if step <= 0.0 {
            return Err(err("STEP must be positive"));
        }
        if b < a {
            return Err(err("B must be ≥ A in A:B:STEP"));
        }
        let n = ((b - a) / step + 1e-9).floor();
        if n > 1e6 {
            return Err(err("more than 1,000,000 thresholds"));
        }
        for i in 0..=(n as u64) {
            out.push(a + i as f64 * step);
        }
    } else if parts.len() == 1 {
        for s in spec.split(',') {
            out.push(num(s)?);
        }
    } else {
        return Err(err("expected A:B:STEP or a comma-separated list"));
    }
    out.sort_by(f64::total_cmp);
    out.dedup();
    Ok(out)
}

/// The default grid: 0, 1 and every distinct value of `candidates`, sorted; when that is more
/// than `max` values, `max` of them evenly spaced by rank (the smallest and largest kept).
pub fn thin_grid(candidates: impl IntoIterator<Item = f64>, max: usize) -> Vec<f64> {
    let mut v: Vec<f64> = candidates.into_iter().filter(|x| x.is_finite()).collect();
    v.push(0.0);
    v.push(1.0);
    v.sort_by(f64::total_cmp);
    v.dedup();
    if v.len() <= max || max < 2 {
        return v;
    }
    let n = v.len();
    let mut out: Vec<f64> = (0..max)
        .map(|i| v[((i as f64) * (n - 1) as f64 / (max - 1) as f64).round() as usize])
        .collect();
    out.dedup();
    out
}

/// What a threshold is chosen for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PickRule {
    /// The cheapest point whose quality reaches the target (ties: higher quality, then lower
    /// τ). None if no point reaches it.
    TargetQuality(f64),
    /// The best quality whose cost is within the budget (ties: lower cost, then lower τ).
    /// None if no point is within it.
    MaxCost(f64),
    /// The best quality (ties: lower cost, then lower τ).
    MaxQuality,
}

/// One point of a threshold curve: `(threshold, quality, cost)`; NaN quality never qualifies.
pub type CurvePoint = (f64, f64, f64);

/// Index of the point `rule` chooses on `curve` (see [`PickRule`]).
pub fn pick_threshold(curve: &[CurvePoint], rule: PickRule) -> Option<usize> {
    let ok = |p: &CurvePoint| match rule {
        PickRule::TargetQuality(t) => p.1 >= t,
        PickRule::MaxCost(c) => p.2 <= c && !p.1.is_nan(),
        PickRule::MaxQuality => !p.1.is_nan(),
    };
    let better = |a: &CurvePoint, b: &CurvePoint| -> bool {
        // Is `a` strictly preferred to `b`?
        let by = |x: f64, y: f64| x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
        let order = match rule {
            PickRule::TargetQuality(_) => by(b.2, a.2).then(by(a.1, b.1)),
            PickRule::MaxCost(_) | PickRule::MaxQuality => by(a.1, b.1).then(by(b.2, a.2)),
        }
        .then(by(b.0, a.0));
        order == std::cmp::Ordering::Greater
    };
    let mut best: Option<usize> = None;
    for (i, p) in curve.iter().enumerate() {
        if !ok(p) {
            continue;
        }
        if best.is_none_or(|b| better(p, &curve[b])) {
            best = Some(i);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn cumulative_rule_picks_cheapest_sufficient_tier() {
        let p = [0.1, 0.2, 0.3, 0.4];
        assert_eq!(cumulative_tier(&p, 0.0), Tier::Low);
        assert_eq!(cumulative_tier(&p, 0.1), Tier::Low);
        assert_eq!(cumulative_tier(&p, 0.2), Tier::Mid);
        assert_eq!(cumulative_tier(&p, 0.6), Tier::MidHigh);
        assert_eq!(cumulative_tier(&p, 0.61), Tier::High);
        assert_eq!(cumulative_tier(&p, 1.0), Tier::High);
    }

    #[test]
    fn argmax_or_ood_rule() {
        assert_eq!(argmax_or_ood(&[0.2, 0.5, 0.3], 0.5), 1);
        assert_eq!(argmax_or_ood(&[0.2, 0.5, 0.3], 0.51), 3);
        assert_eq!(argmax_or_ood(&[0.4, 0.4, 0.2], 0.0), 0);
    }

    #[test]
    fn probabilities_are_checked() {
        assert_eq!(
            check_probs::<3>("probs", &json!([0.2, 0.5, 0.3])).unwrap(),
            ([0.2, 0.5, 0.3], false)
        );
        assert!(
            check_probs::<3>("probs", &json!([0.2, 0.5, 0.5]))
                .unwrap()
                .1
        );
        let e = check_probs::<3>("probs", &json!([0.2, 0.5])).unwrap_err();
        assert_eq!(e.to_string(), "probs must have 3 probabilities, got 2");
        let e = check_probs::<4>("tier_probs", &json!([0.2, 0.5, 1.5, 0])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tier_probs[2] = 1.5 is not a finite number in [0, 1]"
        );
        assert!(check_probs::<3>("probs", &json!([0.2, "0.5", 0.3])).is_err());
        assert!(check_probs::<3>("probs", &json!({"a": 1})).is_err());
    }

    #[test]
    fn grids() {
        assert_eq!(
            parse_thresholds("0:1:0.25").unwrap(),
            vec![0.0, 0.25, 0.5, 0.75, 1.0]
        );
        assert_eq!(parse_thresholds("0.5, 0.1,0.5").unwrap(), vec![0.1, 0.5]);
        assert_eq!(parse_thresholds("0:1:0.1").unwrap().len(), 11);
        assert!(parse_thresholds("0:1:0").is_err());
        assert!(parse_thresholds("a").is_err());
        assert!(parse_thresholds("0:1").is_err());
        let g = thin_grid((0..5000).map(|i| i as f64 / 5000.0), 1000);
        assert_eq!(g.len(), 1000);
        assert_eq!((g[0], g[999]), (0.0, 1.0));
        assert_eq!(thin_grid([0.5, 0.5, 0.2], 1000), vec![0.0, 0.2, 0.5, 1.0]);
    }

    #[test]
    fn picking() {
        let c = [
            (0.0, 0.5, 1.0),
            (0.5, 0.8, 2.0),
            (1.0, 0.9, 5.0),
            (0.7, 0.8, 2.0),
        ];
        assert_eq!(pick_threshold(&c, PickRule::TargetQuality(0.8)), Some(1));
        assert_eq!(pick_threshold(&c, PickRule::TargetQuality(0.95)), None);
        assert_eq!(pick_threshold(&c, PickRule::MaxCost(4.0)), Some(1));
        assert_eq!(pick_threshold(&c, PickRule::MaxCost(0.5)), None);
        assert_eq!(pick_threshold(&c, PickRule::MaxQuality), Some(2));
    }

    proptest! {
        /// Raising τ never lowers a row's tier (so the tier shares shift towards high).
        #[test]
        fn tier_is_monotone_in_tau(p in prop::array::uniform4(0.0f64..=1.0), a in 0.0f64..=1.0, b in 0.0f64..=1.0) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(cumulative_tier(&p, lo) <= cumulative_tier(&p, hi));
            let q = [p[0], p[1], p[2]];
            let (l1, l2) = (argmax_or_ood(&q, lo), argmax_or_ood(&q, hi));
            prop_assert!(l1 == l2 || l2 == 3);
        }
    }
}
