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
    /// The unit and range of `name`, when the report knows it: a bound outside it (or a
    /// fraction for a percent metric, a percent for a fraction) is refused
    /// ([`GateError::OutOfRange`]). Default: unknown, any finite bound.
    fn metric_range(&self, _name: &str) -> Option<MetricRange> {
        None
    }
    /// A caveat a gate on `name` must carry (e.g. `a PARTIAL score, missing sets: dkhate`):
    /// printed with a failing gate and as a note when it passes. Default: none.
    fn metric_note(&self, _name: &str) -> Option<String> {
        None
    }
}

/// The unit of a gate-able metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A fraction (`0.8` = 80%): trec, rag and gqr metrics.
    Fraction,
    /// Percent (`80` = 80%): CommonRouterBench's `*_percent` metrics.
    Percent,
    /// A count (`num_ret`, `num_rel`): non-negative.
    Count,
}

impl Unit {
    /// `a fraction`, `percent`, `a count`.
    pub fn describe(self) -> &'static str {
        match self {
            Unit::Fraction => "a fraction",
            Unit::Percent => "in percent",
            Unit::Count => "a count",
        }
    }
}

/// The unit and the closed range `[min, max]` of a metric's values (a bound outside it can
/// never be met, or always is).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricRange {
    /// The unit.
    pub unit: Unit,
    /// Smallest possible value.
    pub min: f64,
    /// Largest possible value (`inf` = unbounded).
    pub max: f64,
}

impl MetricRange {
    /// A fraction in `[0, 1]`.
    pub const FRACTION: MetricRange = MetricRange {
        unit: Unit::Fraction,
        min: 0.0,
        max: 1.0,
    };
    /// A percent in `[0, 100]`.
    pub const PERCENT: MetricRange = MetricRange {
        unit: Unit::Percent,
        min: 0.0,
        max: 100.0,
    };
    /// A count in `[0, inf)`.
    pub const COUNT: MetricRange = MetricRange {
        unit: Unit::Count,
        min: 0.0,
        max: f64::INFINITY,
    };

    /// Check a gate's bound against this range.
    ///
    /// # Errors
    /// [`GateError::OutOfRange`] when the bound is outside `[min, max]`, or is a fraction
    /// strictly between −1 and 1 (not 0) for a percent metric.
    pub fn check(&self, gate: &Gate) -> Result<(), GateError> {
        let b = gate.bound;
        let unit = self.unit.describe();
        let range = match (self.min.is_finite(), self.max.is_finite()) {
            (true, true) => format!("{unit} in [{}, {}]", self.min, self.max),
            (true, false) => format!("{unit} >= {}", self.min),
            (false, true) => format!("{unit} <= {}", self.max),
            (false, false) => unit.to_string(),
        };
        let problem = if self.unit == Unit::Percent && b != 0.0 && b.abs() < 1.0 {
            Some(format!(
                "{b} looks like a fraction: write {} for {}%",
                b * 100.0,
                b * 100.0
            ))
        } else if b < self.min || b > self.max {
            Some(if self.unit == Unit::Fraction && b > 1.0 && b <= 100.0 {
                format!("{b} looks like a percent: write {} for {b}%", b / 100.0)
            } else {
                format!("{b} is outside it")
            })
        } else {
            None
        };
        match problem {
            None => Ok(()),
            Some(problem) => Err(GateError::OutOfRange {
                gate: gate.to_string(),
                message: format!("{} is {range}; {problem}", gate.metric),
            }),
        }
    }
}

/// A report with caveats attached to some of its metrics ([`NamedMetrics::metric_note`]),
/// e.g. a partial GQR score.
pub struct Annotated<'a> {
    /// The report.
    pub inner: &'a dyn NamedMetrics,
    /// `(metric, note)` pairs.
    pub notes: Vec<(String, String)>,
}

impl NamedMetrics for Annotated<'_> {
    fn metric_names(&self) -> Vec<String> {
        self.inner.metric_names()
    }
    fn metric_value(&self, name: &str) -> Option<f64> {
        self.inner.metric_value(name)
    }
    fn metric_range(&self, name: &str) -> Option<MetricRange> {
        self.inner.metric_range(name)
    }
    fn metric_note(&self, name: &str) -> Option<String> {
        self.notes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
            .or_else(|| self.inner.metric_note(name))
    }
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
    /// The bound is outside the metric's range or in the wrong unit (exit 2).
    #[error("--fail-under {gate}: {message}")]
    OutOfRange {
        /// The gate as given (`METRIC=VALUE`).
        gate: String,
        /// What is wrong, naming the unit.
        message: String,
    },
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
    /// The metric's caveat ([`NamedMetrics::metric_note`]), printed with the failure.
    pub note: Option<String>,
}

impl fmt::Display for GateFailure {
    /// `quality gate failed: map = 0.2345 < 0.3 (--fail-under map=0.3)`, or
    /// `quality gate failed: recall_at_k not computed (--fail-under recall_at_k=0.5)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let note = self
            .note
            .as_ref()
            .map_or(String::new(), |n| format!(" [{n}]"));
        match self.value {
            Some(v) => write!(
                f,
                "quality gate failed: {} = {v} < {} (--fail-under {}){note}",
                self.gate.metric, self.gate.bound, self.gate
            ),
            None => write!(
                f,
                "quality gate failed: {} was not computed (--fail-under {}){note}",
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
    for g in gates {
        if let Some(r) = report.metric_range(&g.metric) {
            r.check(g)?;
        }
    }
    Ok(gates
        .iter()
        .filter_map(|g| {
            let value = report.metric_value(&g.metric).filter(|v| !v.is_nan());
            match value {
                Some(v) if v >= g.bound => None,
                _ => Some(GateFailure {
                    gate: g.clone(),
                    value,
                    note: report.metric_note(&g.metric),
                }),
            }
        })
        .collect())
}

/// The notes of the gates that carry one ([`NamedMetrics::metric_note`]), pass or fail:
/// `--fail-under gqr_score=0.5 checked a PARTIAL score, missing sets: dkhate`.
pub fn notes<R: NamedMetrics + ?Sized>(gates: &[Gate], report: &R) -> Vec<String> {
    gates
        .iter()
        .filter_map(|g| {
            report
                .metric_note(&g.metric)
                .map(|n| format!("--fail-under {g} checked {n}"))
        })
        .collect()
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

    struct Ranged;
    impl NamedMetrics for Ranged {
        fn metric_names(&self) -> Vec<String> {
            vec![
                "map".into(),
                "case_pass_rate_percent".into(),
                "num_ret".into(),
            ]
        }
        fn metric_value(&self, name: &str) -> Option<f64> {
            Some(if name == "map" { 0.3 } else { 75.0 })
        }
        fn metric_range(&self, name: &str) -> Option<MetricRange> {
            Some(match name {
                "map" => MetricRange::FRACTION,
                "num_ret" => MetricRange::COUNT,
                _ => MetricRange::PERCENT,
            })
        }
    }

    #[test]
    fn bounds_in_the_wrong_unit_or_out_of_range_are_refused() {
        let gate = |s: &str| -> Vec<Gate> { vec![s.parse().unwrap()] };
        // 75 >= 0.8 used to pass silently.
        let e = check(&gate("case_pass_rate_percent=0.8"), &Ranged).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--fail-under case_pass_rate_percent=0.8: case_pass_rate_percent is in percent in \
             [0, 100]; 0.8 looks like a fraction: write 80 for 80%"
        );
        let e = check(&gate("map=30"), &Ranged).unwrap_err();
        assert!(
            e.to_string().contains(
                "map is a fraction in [0, 1]; 30 looks like a percent: write 0.3 for 30%"
            ),
            "{e}"
        );
        for bad in [
            "map=-0.1",
            "map=1.5e3",
            "case_pass_rate_percent=101",
            "case_pass_rate_percent=-5",
            "num_ret=-1",
        ] {
            assert!(
                matches!(
                    check(&gate(bad), &Ranged),
                    Err(GateError::OutOfRange { .. })
                ),
                "{bad}"
            );
        }
        for ok in [
            "map=0",
            "map=1",
            "case_pass_rate_percent=0",
            "case_pass_rate_percent=80",
            "case_pass_rate_percent=100",
            "num_ret=1000000",
        ] {
            assert!(check(&gate(ok), &Ranged).is_ok(), "{ok}");
        }
    }

    #[test]
    fn annotated_metrics_carry_their_note() {
        let a = Annotated {
            inner: &Ranged,
            notes: vec![("map".into(), "a PARTIAL score, missing sets: x".into())],
        };
        let g: Vec<Gate> = vec!["map=0.5".parse().unwrap()];
        let f = check(&g, &a).unwrap();
        assert!(
            f[0].to_string()
                .ends_with("[a PARTIAL score, missing sets: x]"),
            "{}",
            f[0]
        );
        assert_eq!(
            notes(&g, &a),
            vec!["--fail-under map=0.5 checked a PARTIAL score, missing sets: x".to_string()]
        );
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
