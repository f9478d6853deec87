//! `routeval.gqr` native part: GQR-Bench builds (`routeval_bench_data::gqr::store`, verified
//! against `manifest.json` as `routeval gqr export` does) and the GQR / GQR-unseen scores
//! (`routeval_routing_scores::gqr`, mergeable count tables).

use crate::GqrError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString};
use routeval_bench_data::gqr::OOD_SETS;
use routeval_bench_data::gqr::store::{build_dir, read_split};
use routeval_core::Accumulator;
use routeval_routing_scores::gqr::{
    Confusion, Evaluation, GqrAccumulator, PerSet, RawLabel, UnseenAccumulator,
};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeGqrAccumulator>()?;
    m.add_function(wrap_pyfunction!(gqr_default_build_dir, m)?)?;
    m.add_function(wrap_pyfunction!(gqr_read_split, m)?)?;
    Ok(())
}

fn err(e: impl std::fmt::Display) -> PyErr {
    GqrError::new_err(e.to_string())
}

/// The default build directory, `<gqr cache>/build` (`$GQR_CACHE_DIR`, else
/// `$ROUTEVAL_CACHE_DIR/gqr`, else `~/.cache/gqr`), as `routeval gqr` resolves it.
#[pyfunction]
fn gqr_default_build_dir() -> PyResult<String> {
    let dirs = routeval_bench_data::cache::CacheDirs::from_process().map_err(err)?;
    Ok(build_dir(&dirs.gqr.path).to_string_lossy().into_owned())
}

/// The rows of split `name` of the build in `dir` as columns `(ids, texts, labels, domains,
/// datasets)`; the file is checked against `manifest.json` (row count, blake3).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn gqr_read_split(
    py: Python<'_>,
    dir: &str,
    name: &str,
) -> PyResult<(
    Vec<String>,
    Vec<String>,
    Vec<i64>,
    Vec<&'static str>,
    Vec<String>,
)> {
    let rows = py
        .detach(|| read_split(std::path::Path::new(dir), name))
        .map_err(err)?;
    let mut cols = (
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
    );
    for r in rows {
        cols.0.push(r.id);
        cols.1.push(r.text);
        cols.2.push(i64::from(r.label));
        cols.3.push(r.domain.name());
        cols.4.push(r.dataset);
    }
    Ok(cols)
}

/// A Python prediction as a [`RawLabel`]: `str` → string, `float` (and numpy floats) → float,
/// anything with `__index__` (int, bool, numpy ints) → integer.
fn raw_label(v: &Bound<'_, PyAny>) -> Option<RawLabel> {
    if v.is_instance_of::<PyString>() {
        return v.extract::<String>().ok().map(RawLabel::Str);
    }
    if v.is_instance_of::<PyFloat>() {
        return v.extract::<f64>().ok().map(RawLabel::Float);
    }
    if let Ok(i) = v.extract::<i64>() {
        return Some(RawLabel::Int(i));
    }
    v.extract::<f64>().ok().map(RawLabel::Float)
}

/// Which score an accumulator collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// GQR-Bench `score` / `score_batch`: pooled ID rows, OOD sets; strict label types.
    Gqr,
    /// GQR-unseen `unseen_scores`: unseen ID sets, OOD sets; labels cast as `astype(int)`.
    Unseen,
}

/// Mergeable GQR or GQR-unseen counts (`routeval.gqr.Accumulator`'s state): confusion
/// tables per set, so shards merge exactly and the floats are computed once, in the
/// reference's order, by [`result`](Self::result).
#[pyclass(module = "routeval._native")]
pub(crate) struct NativeGqrAccumulator {
    kind: Kind,
    gqr: GqrAccumulator,
    unseen: UnseenAccumulator,
}

fn per_set_cells(part: &str, s: &PerSet, out: &mut Vec<(String, String, i64, i64, u64)>) {
    for (name, c) in s.iter() {
        // A registered set with no rows still keeps its place in first-appearance order.
        out.push((part.into(), name.into(), 0, 0, 0));
        for ((t, p), n) in c.cells() {
            out.push((part.into(), name.into(), t, p, n));
        }
    }
}

fn confusion_cells(part: &str, c: &Confusion, out: &mut Vec<(String, String, i64, i64, u64)>) {
    for ((t, p), n) in c.cells() {
        out.push((part.into(), String::new(), t, p, n));
    }
}

fn evaluation_dict<'py>(py: Python<'py>, e: &Evaluation) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("accuracy", e.accuracy)?;
    d.set_item("precision", e.precision)?;
    d.set_item("recall", e.recall)?;
    d.set_item("f1", e.f1)?;
    Ok(d)
}

#[pymethods]
impl NativeGqrAccumulator {
    /// An empty accumulator; `unseen` selects GQR-unseen.
    ///
    /// The seven OOD sets are registered up front in the reference's order, so the OOD mean
    /// is summed in the reference's order however the rows were sharded and merged (a set
    /// without rows is left out of the mean, as upstream does).
    #[new]
    fn new(unseen: bool) -> Self {
        let mut gqr = GqrAccumulator::default();
        for s in OOD_SETS {
            gqr.ood.set(s);
        }
        NativeGqrAccumulator {
            kind: if unseen { Kind::Unseen } else { Kind::Gqr },
            gqr,
            unseen: UnseenAccumulator::default(),
        }
    }

    /// Whether this accumulator scores GQR-unseen.
    #[getter]
    fn unseen(&self) -> bool {
        self.kind == Kind::Unseen
    }

    /// Count rows: `labels[i]` (true label; 3 = an OOD row), `datasets[i]` (its set; the ID
    /// test rows of GQR are pooled whatever their set), `predictions[i]` (the router's
    /// label: int, integral float or, for GQR-unseen, anything `astype(int)` casts), `ids[i]`
    /// (for messages). All rows are checked before any is counted, so a failed call leaves
    /// the accumulator unchanged. Errors: `GqrError` naming the first bad row.
    fn add(
        &mut self,
        labels: Vec<i64>,
        datasets: Vec<String>,
        predictions: &Bound<'_, PyAny>,
        ids: Vec<String>,
    ) -> PyResult<()> {
        let preds: Vec<Bound<'_, PyAny>> = predictions.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        let n = labels.len();
        if datasets.len() != n || ids.len() != n {
            return Err(err("labels, datasets and ids differ in length"));
        }
        if preds.len() != n {
            return Err(err(format!(
                "expected {n} predictions, got {}",
                preds.len()
            )));
        }
        let mut cast = Vec::with_capacity(n);
        for (i, p) in preds.iter().enumerate() {
            let raw = raw_label(p).ok_or_else(|| {
                err(format!(
                    "prediction for {}: {} is not a label (give an int 0..3)",
                    ids[i],
                    p.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?;
            let v = match self.kind {
                Kind::Gqr => raw.strict(),
                Kind::Unseen => raw.cast(),
            };
            cast.push(v.map_err(|e| err(format!("{e} (prediction for {})", ids[i])))?);
        }
        for ((t, d), p) in labels.iter().zip(&datasets).zip(cast) {
            match (self.kind, *t == 3) {
                (Kind::Gqr, false) => self.gqr.add_id(*t, p),
                (Kind::Gqr, true) => self.gqr.add_ood(d, p),
                (Kind::Unseen, false) => self.unseen.add_unseen(d, *t, p),
                (Kind::Unseen, true) => self.unseen.add_ood(d, p),
            }
        }
        Ok(())
    }

    /// Add `other`'s counts (same kind); sets new to `self` come after its own.
    fn merge(&mut self, other: &NativeGqrAccumulator) -> PyResult<()> {
        if other.kind != self.kind {
            return Err(err(
                "cannot merge a GQR accumulator with a GQR-unseen accumulator",
            ));
        }
        self.gqr.merge(other.gqr.clone());
        self.unseen.merge(other.unseen.clone());
        Ok(())
    }

    /// Rows counted.
    fn __len__(&self) -> usize {
        let n = self.gqr.id.n()
            + self.gqr.ood.iter().map(|(_, c)| c.n()).sum::<u64>()
            + self
                .unseen
                .unseen_id
                .iter()
                .map(|(_, c)| c.n())
                .sum::<u64>()
            + self.unseen.ood.iter().map(|(_, c)| c.n()).sum::<u64>();
        n as usize
    }

    /// The state as `[(part, set, true label, predicted label, count)]` (parts `id`, `ood`,
    /// `unseen_id`; a zero count registers a set in order): what pickling stores.
    fn cells(&self) -> Vec<(String, String, i64, i64, u64)> {
        let mut out = Vec::new();
        match self.kind {
            Kind::Gqr => {
                confusion_cells("id", &self.gqr.id, &mut out);
                per_set_cells("ood", &self.gqr.ood, &mut out);
            }
            Kind::Unseen => {
                per_set_cells("unseen_id", &self.unseen.unseen_id, &mut out);
                per_set_cells("ood", &self.unseen.ood, &mut out);
            }
        }
        out
    }

    /// Rebuild from [`cells`](Self::cells).
    #[staticmethod]
    fn from_cells(unseen: bool, cells: Vec<(String, String, i64, i64, u64)>) -> PyResult<Self> {
        let mut acc = NativeGqrAccumulator::new(unseen);
        for (part, set, t, p, n) in cells {
            match (acc.kind, part.as_str()) {
                (Kind::Gqr, "id") => acc.gqr.id.add_count(t, p, n),
                (Kind::Gqr, "ood") => {
                    let id = acc.gqr.ood.set(&set);
                    acc.gqr.ood.add_count_at(id, t, p, n);
                }
                (Kind::Unseen, "unseen_id") => {
                    let id = acc.unseen.unseen_id.set(&set);
                    acc.unseen.unseen_id.add_count_at(id, t, p, n);
                }
                (Kind::Unseen, "ood") => {
                    let id = acc.unseen.ood.set(&set);
                    acc.unseen.ood.add_count_at(id, t, p, n);
                }
                _ => return Err(err(format!("bad accumulator state: part {part:?}"))),
            }
        }
        Ok(acc)
    }

    /// The reference's dict: GQR `{"id_accuracy", "ood_accuracy", "gqr_score"}`; GQR-unseen
    /// `{"unseen_id_accuracy", "ood_accuracy", "gqr_unseen_score", "unseen_id_per_dataset",
    /// "ood_per_dataset"}` (per-set dicts in sorted name order). Fractions; NaN where a side
    /// has no rows.
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        match self.kind {
            Kind::Gqr => {
                let s = self.gqr.finish();
                d.set_item("id_accuracy", s.id_accuracy)?;
                d.set_item("ood_accuracy", s.ood_accuracy)?;
                d.set_item("gqr_score", s.gqr_score)?;
            }
            Kind::Unseen => {
                let s = self.unseen.finish();
                d.set_item("unseen_id_accuracy", s.unseen_id_accuracy)?;
                d.set_item("ood_accuracy", s.ood_accuracy)?;
                d.set_item("gqr_unseen_score", s.gqr_unseen_score)?;
                let per = |v: &[(String, f64)]| -> PyResult<Bound<'py, PyDict>> {
                    let o = PyDict::new(py);
                    for (k, x) in v {
                        o.set_item(k, x)?;
                    }
                    Ok(o)
                };
                d.set_item("unseen_id_per_dataset", per(&s.unseen_id_per_dataset)?)?;
                d.set_item("ood_per_dataset", per(&s.ood_per_dataset)?)?;
            }
        }
        Ok(d)
    }

    /// GQR only: the reference's `evaluate` on the ID rows (`{"accuracy", "precision",
    /// "recall", "f1"}`, scikit-learn weighted, `zero_division=0`) and `evaluate_by_dataset`
    /// on the OOD sets (`[{"dataset", "accuracy", "precision", "recall", "f1"}]`,
    /// first-appearance order).
    fn evaluations<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyList>)> {
        if self.kind != Kind::Gqr {
            return Err(err("evaluations() is for GQR accumulators"));
        }
        let s = self.gqr.finish();
        let list = PyList::empty(py);
        for e in &s.ood_per_dataset {
            let d = evaluation_dict(py, &e.eval)?;
            d.set_item("dataset", &e.dataset)?;
            list.append(d)?;
        }
        Ok((evaluation_dict(py, &s.id)?, list))
    }
}
