//! `routeval.frontier` native part: cost–quality frontiers (RouterBench's NDCH, AIQ, Pareto
//! sets) and RouteLLM's strong-share metrics (AUC, APGR, CPT), over `routeval_frontier`.
//!
//! Reports are built from JSON Lines with the same reader `routeval frontier` uses (so the
//! same checks and messages) and returned as the JSON text `routeval frontier --json` prints.

use crate::RoutevalError;
use pyo3::create_exception;
use pyo3::prelude::*;
use routeval_frontier::ndch::{self, CostQuality};
use routeval_frontier::points::{
    NdchMethod, frontier_report, read_points, read_strong_share_points, strong_share_report,
};

create_exception!(
    _native,
    FrontierError,
    RoutevalError,
    "A `routeval frontier` error: a bad point (names the input and line), a bad option."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FrontierError", m.py().get_type::<FrontierError>())?;
    m.add_function(wrap_pyfunction!(frontier_report_jsonl, m)?)?;
    m.add_function(wrap_pyfunction!(strong_share_report_jsonl, m)?)?;
    m.add_function(wrap_pyfunction!(frontier_ndch, m)?)?;
    m.add_function(wrap_pyfunction!(frontier_aiq, m)?)?;
    m.add_function(wrap_pyfunction!(frontier_pareto, m)?)?;
    Ok(())
}

fn err(e: impl std::fmt::Display) -> PyErr {
    FrontierError::new_err(e.to_string())
}

fn method(name: &str) -> PyResult<NdchMethod> {
    match name {
        "hull" => Ok(NdchMethod::Hull),
        "routerbench" => Ok(NdchMethod::RouterBench),
        other => Err(err(format!(
            "method must be 'hull' or 'routerbench', got '{other}'"
        ))),
    }
}

/// `routeval frontier POINTS --method M --json` on the JSON Lines `data` (`source` names it
/// in errors): `(report JSON, notes)`.
#[pyfunction]
#[pyo3(signature = (data, source, method_name="hull"))]
fn frontier_report_jsonl(
    data: &[u8],
    source: &str,
    method_name: &str,
) -> PyResult<(String, Vec<String>)> {
    let m = method(method_name)?;
    let pts = read_points(data, source).map_err(err)?;
    let r = frontier_report(&pts, m);
    Ok((r.to_json().to_string(), r.notes))
}

/// `routeval frontier POINTS --strong-share --weak-quality W --strong-quality S --json` on
/// the JSON Lines `data`: `(report JSON, notes)`.
#[pyfunction]
fn strong_share_report_jsonl(
    data: &[u8],
    source: &str,
    weak_quality: f64,
    strong_quality: f64,
) -> PyResult<(String, Vec<String>)> {
    if !weak_quality.is_finite() || !strong_quality.is_finite() {
        return Err(err(
            "weak_quality and strong_quality must be finite numbers",
        ));
    }
    let pts = read_strong_share_points(data, source).map_err(err)?;
    let r = strong_share_report(&pts, weak_quality, strong_quality);
    Ok((r.to_json().to_string(), r.notes))
}

fn check_points(points: &[CostQuality]) -> PyResult<()> {
    for (i, &(c, q)) in points.iter().enumerate() {
        if !c.is_finite() || !q.is_finite() {
            return Err(err(format!(
                "point {i}: cost and quality must be finite numbers, got ({c}, {q})"
            )));
        }
        if c < 0.0 {
            return Err(err(format!("point {i}: cost {c} is negative")));
        }
    }
    Ok(())
}

/// One system's NDCH (`[(cost, quality)]` in increasing cost) with `method`; `None` with
/// `"routerbench"` where RouterBench's algorithm crashes (no interior cost).
#[pyfunction]
#[pyo3(signature = (points, method_name="hull"))]
fn frontier_ndch(
    points: Vec<CostQuality>,
    method_name: &str,
) -> PyResult<Option<Vec<CostQuality>>> {
    check_points(&points)?;
    Ok(match method(method_name)? {
        NdchMethod::Hull => Some(ndch::ndch_hull(&points)),
        NdchMethod::RouterBench => ndch::ndch_routerbench(&points),
    })
}

/// RouterBench's AIQ of several NDCHs: `(max_cost, [aiq per NDCH])` (NaN for an empty NDCH,
/// or for all when `max_cost` is not positive).
#[pyfunction]
fn frontier_aiq(ndchs: Vec<Vec<CostQuality>>) -> PyResult<(f64, Vec<f64>)> {
    for h in &ndchs {
        check_points(h)?;
    }
    Ok(ndch::aiq(&ndchs))
}

/// Indices of the Pareto-optimal points, in increasing cost.
#[pyfunction]
fn frontier_pareto(points: Vec<CostQuality>) -> PyResult<Vec<usize>> {
    check_points(&points)?;
    Ok(ndch::pareto(&points))
}
