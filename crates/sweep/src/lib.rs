//! Router threshold sweeps: the engines behind `routeval crb sweep`, `routeval gqr sweep` and
//! the Python package's `routeval.crb.sweep` / `routeval.gqr.sweep`, so the CLI and the
//! bindings compute the same reports from the same code.
//!
//! * [`crb`]: a tier router's probabilities `[p_low, p_mid, p_mid_high, p_high]` per bank row;
//!   per threshold τ the blocks `crb eval --json` prints (`routeval_routing_scores::crb::
//!   sweep::evaluate_tiers`), the cost–pass-rate frontier (RouterBench NDCH/AIQ, Pareto set)
//!   and a τ chosen by a target pass rate or a budget, optionally on calibration trajectories.
//! * [`gqr`]: a guarded router's probabilities `[p_law, p_finance, p_healthcare]` per text;
//!   per τ the keys `gqr score --json` prints (`routeval_routing_scores::gqr`), the OOD-vs-ID
//!   accuracy curve and a τ calibrated on the dev split or the v2 background class.
//!
//! Pure logic: the score files arrive as readers, bank rows and GQR splits already loaded
//! (`routeval_bench_data`), tokenizers through a loader the caller hands in; stderr notes and
//! warnings go to a caller's sink, in the order the CLI prints them. Reports are typed values
//! with `to_json` (the `--json` output) and `render_text` (the table).

pub mod crb;
pub mod gqr;

use serde_json::{Value, json};

/// One headline figure of a sweep report: the number a reader quotes, with what it was
/// measured on in its label. The text table, `--json` (`"headline"`), `--format md`, `--html`
/// and the Python object all print these same values, so no face shows a figure another
/// one lacks.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// What the number is, with its unit and the rows it was measured on, e.g.
    /// `"case_pass_rate_percent (%), held-out (4 rows)"`.
    pub label: String,
    /// The value in the label's unit (percent, USD, a threshold); NaN when undefined.
    pub value: f64,
    /// The value as every face prints it (e.g. `"100.00"`, `"0.015199"`, `"n/a"`).
    pub text: String,
}

impl Figure {
    /// A figure from a label, a value and its printed form.
    pub fn new(label: impl Into<String>, value: f64, text: impl Into<String>) -> Self {
        Figure {
            label: label.into(),
            value,
            text: text.into(),
        }
    }
}

/// `[{"label", "value", "text"}]` (a non-finite value as `null`): the `"headline"` member of a
/// sweep's `--json`.
pub fn figures_json(figures: &[Figure]) -> Value {
    Value::Array(
        figures
            .iter()
            .map(|f| {
                json!({
                    "label": f.label,
                    "value": if f.value.is_finite() { json!(f.value) } else { Value::Null },
                    "text": f.text,
                })
            })
            .collect(),
    )
}

/// The closing lines of a sweep's text table: `headline: LABEL = TEXT; ...` (when there is a
/// headline) and one `caveat: ...` line per caveat.
pub fn headline_text(figures: &[Figure], caveats: &[String]) -> String {
    let mut t = String::new();
    if !figures.is_empty() {
        let parts: Vec<String> = figures
            .iter()
            .map(|f| format!("{} = {}", f.label, f.text))
            .collect();
        t.push_str(&format!("headline: {}\n", parts.join("; ")));
    }
    for c in caveats {
        t.push_str(&format!("caveat: {c}\n"));
    }
    t
}

/// A percentage as the sweeps' tables print it (2 decimals, `n/a` when not finite).
pub(crate) fn p2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "n/a".into()
    }
}

/// A sweep that cannot run: bad input (a message naming file and line where there is one),
/// an option out of range, data that cannot be scored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    /// A bad scores line, a missing score, an id not in the data, an option out of range.
    #[error("{0}")]
    Input(String),
    /// The rows or the data: a bad bank row, a split that is not available, tokenizers that
    /// cannot be built.
    #[error("{0}")]
    Data(String),
}

/// Check a threshold grid: every threshold is a probability, so a value outside `[0, 1]` (a
/// percent, a typo) would sweep nothing meaningful and is refused, naming it.
///
/// # Errors
/// [`SweepError::Input`] `--thresholds: 75 is outside [0, 1] (thresholds are probabilities)`.
pub fn check_thresholds(thresholds: &[f64]) -> Result<(), SweepError> {
    match thresholds
        .iter()
        .find(|t| !(t.is_finite() && (0.0..=1.0).contains(*t)))
    {
        Some(t) => Err(SweepError::input(format!(
            "--thresholds: {t} is outside [0, 1] (thresholds are probabilities)"
        ))),
        None => Ok(()),
    }
}

impl SweepError {
    fn input(m: impl std::fmt::Display) -> Self {
        SweepError::Input(m.to_string())
    }
    fn data(m: impl std::fmt::Display) -> Self {
        SweepError::Data(m.to_string())
    }
}

#[cfg(test)]
mod edge_tests {
    use super::*;

    #[test]
    fn thresholds_outside_the_unit_interval_are_refused() {
        assert!(check_thresholds(&[0.0, 0.5, 1.0]).is_ok());
        for bad in [-0.01, 1.5, 75.0, f64::NAN] {
            let e = check_thresholds(&[0.2, bad]).unwrap_err().to_string();
            assert!(e.contains("is outside [0, 1]"), "{e}");
        }
        let g = gqr::GqrSweepOptions {
            thresholds: Some(vec![0.1, 2.0]),
            ..Default::default()
        };
        assert!(g.wanted_splits().is_err());
    }
}
