//! Quality gates: `METRIC=VALUE` lower bounds checked against a typed report's named metrics.
//!
//! Every subcommand that produces metrics (`trec`, `rag`, `route`, `crb eval`, `gqr score`)
//! accepts `--fail-under METRIC=VALUE` (repeatable). A gate *fails* when the metric's value is
//! below the bound, or when the report has no value for it (the metric could not be computed,
//! e.g. a RAG metric no case supports, or it is NaN): a gate that cannot be checked must not
//! pass silently. Values and bounds are in the units of the report's `--json` output
//! (fractions for trec, rag and gqr; percent for CommonRouterBench's `scores_v2`).
//!
//! A report exposes its metrics through [`NamedMetrics`]: the names a gate may use and the
//! value of each. Names a report does not know are an error ([`GateError::UnknownMetric`]),
//! listing the valid names, so a typo cannot turn a gate off.
//!
//! Pure: no IO. The CLI parses the flag ([`Gate::from_str`](std::str::FromStr)), calls
//! [`check`] and prints each [`GateFailure`] on its own stderr line.

use std::fmt;
use std::str::FromStr;

/// One gate: the named metric must be at least `bound`.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// Metric name as the report spells it (e.g. `map`, `P_10`, `gqr_score`,
    /// `case_pass_rate_percent`).
    pub metric: String,
    /// Lower bound, in the metric's own units (a finite number).
    pub bound: f64,
}

/// A report whose metrics gates can check.
pub trait NamedMetrics {
    /// Every name a gate may use on this report, in the report's order.
    fn metric_names(&self) -> Vec<String>;
    /// The value of `name`; `None` when it was not computed (or is not finite).
    fn metric_value(&self, name: &str) -> Option<f64>;
}

/// A list of `(name, value)` pairs: the [`NamedMetrics`] of reports whose metric names are
/// data (e.g. `route`'s summary keys). `None` values are metrics that exist but were not
/// computed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricList(pub Vec<(String, Option<f64>)>);

impl NamedMetrics for MetricList {
    fn metric_names(&self) -> Vec<String> {
        self.0.iter().map(|(n, _)| n.clone()).collect()
    }
    fn metric_value(&self, name: &str) -> Option<f64> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| *v)
            .filter(|v| v.is_finite())
    }
}

/// Why a gate could not be parsed or checked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GateError {
    /// Not of the form `METRIC=VALUE` with a finite number.
    #[error("--fail-under {0:?}: expected METRIC=VALUE with a finite number VALUE")]
    Syntax(String),
    /// The report has no metric of that name.
    #[error("--fail-under: unknown metric {metric:?} (valid: {})", valid.join(", "))]
    UnknownMetric {
        /// The name given.
        metric: String,
        /// The names the report knows.
        valid: Vec<String>,
    },
}

impl FromStr for Gate {
    type Err = GateError;

    /// `METRIC=VALUE`: the name is everything before the last `=` (trimmed, non-empty), the
    /// value a finite decimal number.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || GateError::Syntax(s.to_string());
        let (name, value) = s.rsplit_once('=').ok_or_else(bad)?;
        let name = name.trim();
        let bound: f64 = value.trim().parse().map_err(|_| bad())?;
        if name.is_empty() || !bound.is_finite() {
            return Err(bad());
        }
        Ok(Gate {
            metric: name.to_string(),
            bound,
        })
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.metric, self.bound)
    }
}

/// A gate that failed: the metric, its value (`None` = not computed) and the bound.
#[derive(Debug, Clone, PartialEq)]
pub struct GateFailure {
    /// The gate.
    pub gate: Gate,
    /// The metric's value, `None` when the report could not compute it.
    pub value: Option<f64>,
}

impl fmt::Display for GateFailure {
    /// `quality gate failed: map = 0.2345 < 0.3 (--fail-under map=0.3)`, or
    /// `quality gate failed: recall_at_k not computed (--fail-under recall_at_k=0.5)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            Some(v) => write!(
                f,
                "quality gate failed: {} = {v} < {} (--fail-under {})",
                self.gate.metric, self.gate.bound, self.gate
            ),
            None => write!(
                f,
                "quality gate failed: {} was not computed (--fail-under {})",
                self.gate.metric, self.gate
            ),
        }
    }
}

/// Check that every gate names a metric of `names`.
///
/// # Errors
/// [`GateError::UnknownMetric`] for the first gate whose metric is not in `names`.
pub fn validate(gates: &[Gate], names: &[String]) -> Result<(), GateError> {
    for g in gates {
        if !names.contains(&g.metric) {
            return Err(GateError::UnknownMetric {
                metric: g.metric.clone(),
                valid: names.to_vec(),
            });
        }
    }
    Ok(())
}

/// Check every gate against `report`, in the order given: the failures (empty = all pass).
///
/// A gate fails when the value is below the bound or not available (`None`, NaN).
///
/// # Errors
/// [`GateError::UnknownMetric`] when a gate names a metric the report does not know.
pub fn check<R: NamedMetrics + ?Sized>(
    gates: &[Gate],
    report: &R,
) -> Result<Vec<GateFailure>, GateError> {
    if gates.is_empty() {
        return Ok(Vec::new());
    }
    validate(gates, &report.metric_names())?;
    Ok(gates
        .iter()
        .filter_map(|g| {
            let value = report.metric_value(&g.metric).filter(|v| !v.is_nan());
            match value {
                Some(v) if v >= g.bound => None,
                _ => Some(GateFailure {
                    gate: g.clone(),
                    value,
                }),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> MetricList {
        MetricList(vec![
            ("map".into(), Some(0.25)),
            ("P_10".into(), Some(0.5)),
            ("recall".into(), None),
        ])
    }

    #[test]
    fn parses_metric_value() {
        let g: Gate = "P_10=0.3".parse().unwrap();
        assert_eq!(g.metric, "P_10");
        assert_eq!(g.bound, 0.3);
        // The name may contain '=' only before the last one; spaces are trimmed.
        let g: Gate = " ndcg = 1e-1 ".parse().unwrap();
        assert_eq!((g.metric.as_str(), g.bound), ("ndcg", 0.1));
        for bad in ["map", "=0.3", "map=", "map=abc", "map=nan", "map=inf"] {
            assert!(
                matches!(bad.parse::<Gate>(), Err(GateError::Syntax(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn fails_below_bound_or_when_missing() {
        let gates: Vec<Gate> = ["map=0.3", "P_10=0.5", "recall=0.1"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let f = check(&gates, &report()).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].gate.metric, "map");
        assert_eq!(f[0].value, Some(0.25));
        assert_eq!(
            f[0].to_string(),
            "quality gate failed: map = 0.25 < 0.3 (--fail-under map=0.3)"
        );
        assert_eq!(f[1].gate.metric, "recall");
        assert_eq!(f[1].value, None);
        assert!(f[1].to_string().contains("not computed"));
    }

    #[test]
    fn equal_passes_and_unknown_is_an_error() {
        let ok: Vec<Gate> = vec!["P_10=0.5".parse().unwrap()];
        assert!(check(&ok, &report()).unwrap().is_empty());
        let typo: Vec<Gate> = vec!["mAP=0.1".parse().unwrap()];
        let e = check(&typo, &report()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--fail-under: unknown metric \"mAP\" (valid: map, P_10, recall)"
        );
    }
}
