//! `routeval.rag` native part: rag-quality-check 0.1.0 evaluation over
//! `routeval_retrieval_metrics::rag`. Cases arrive as the JSON text of the Python value
//! (`json.dumps`), decoded with routeval's Python-compatible JSON reader.

use crate::RagError;
use ndarray::Array2;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use routeval_retrieval_metrics::rag::{self, EmbedError, Embedder, Options, RagReport, pyjson};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeRagReport>()?;
    m.add_class::<NativeRagPartial>()?;
    m.add_function(wrap_pyfunction!(rag_evaluate, m)?)?;
    Ok(())
}

fn err(e: impl std::fmt::Display) -> PyErr {
    RagError::new_err(e.to_string())
}

/// An `embed=` callable as a routeval [`Embedder`]: called with a `list[str]`, its result
/// goes through `numpy.asarray(..., dtype=float)` as rag-quality-check does. A Python
/// exception raised by the callable is kept and re-raised as is.
struct PyEmbedder<'py> {
    f: Bound<'py, PyAny>,
    error: Option<PyErr>,
}

impl PyEmbedder<'_> {
    fn call(&mut self, texts: &[String]) -> PyResult<Result<Array2<f64>, EmbedError>> {
        let py = self.f.py();
        let np = py.import("numpy")?;
        let out = self.f.call1((PyList::new(py, texts)?,))?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("dtype", py.get_type::<pyo3::types::PyFloat>())?;
        let mut m = np.call_method("asarray", (out,), Some(&kwargs))?;
        let ndim: usize = m.getattr("ndim")?.extract()?;
        if ndim == 1 && texts.len() == 1 {
            m = m.call_method1("reshape", (1, -1))?;
        }
        let shape = m.getattr("shape")?;
        let dims: Vec<usize> = shape.extract()?;
        if dims.len() != 2 || dims[0] != texts.len() {
            return Ok(Err(EmbedError::Shape {
                shape: shape.repr()?.to_string(),
                n: texts.len(),
            }));
        }
        let rows: Vec<Vec<f64>> = m.call_method0("tolist")?.extract()?;
        let flat: Vec<f64> = rows.into_iter().flatten().collect();
        Ok(Array2::from_shape_vec((dims[0], dims[1]), flat)
            .map_err(|e| EmbedError::Failed(e.to_string())))
    }
}

impl Embedder for PyEmbedder<'_> {
    fn embed(&mut self, texts: &[String]) -> Result<Array2<f64>, EmbedError> {
        match self.call(texts) {
            Ok(r) => r,
            Err(e) => {
                let msg = e.to_string();
                self.error = Some(e);
                Err(EmbedError::Failed(msg))
            }
        }
    }
}

/// Evaluate `cases_json` (the JSON text of the Python cases) with `options_json` = the JSON
/// of `[k, threshold]`; `embed` is the optional callable. Errors: `RagError` with the
/// reference's message, or the callable's own exception.
#[pyfunction]
#[pyo3(signature = (cases_json, options_json, embed=None))]
fn rag_evaluate(
    py: Python<'_>,
    cases_json: &str,
    options_json: &str,
    embed: Option<Bound<'_, PyAny>>,
) -> PyResult<NativeRagReport> {
    let options = pyjson::parse(options_json).map_err(err)?;
    let opts = match &options {
        rag::PyValue::List(v) if v.len() == 2 => Options::from_py(&v[0], &v[1]).map_err(err)?,
        _ => return Err(err("options must be [k, threshold]")),
    };
    let cases = pyjson::parse_on_decoder_thread(cases_json).map_err(err)?;
    let rep = match embed {
        None => py.detach(|| rag::evaluate_value(&cases, &opts, None)),
        Some(f) => {
            if !f.is_callable() {
                return Err(err(
                    "embed must be a callable(list[str]) -> vectors, or None",
                ));
            }
            let mut e = PyEmbedder { f, error: None };
            let r = rag::evaluate_value(&cases, &opts, Some(&mut e));
            if let Some(pyerr) = e.error.take() {
                return Err(pyerr);
            }
            r
        }
    };
    Ok(NativeRagReport {
        rep: rep.map_err(err)?,
    })
}

/// A finished rag report (routeval's `RagReport`); the Python `routeval.rag.RagReport` reads
/// it.
#[pyclass(module = "routeval._native", frozen)]
pub(crate) struct NativeRagReport {
    rep: RagReport,
}

#[pymethods]
impl NativeRagReport {
    /// `[(metric, mean)]` in canonical order.
    fn metrics(&self) -> Vec<(&'static str, f64)> {
        self.rep
            .metrics
            .iter()
            .map(|(m, v)| (m.name(), *v))
            .collect()
    }
    /// `[(metric, cases)]`.
    fn support(&self) -> Vec<(&'static str, usize)> {
        self.rep
            .support
            .iter()
            .map(|(m, c)| (m.name(), *c))
            .collect()
    }
    /// Every note (cases' then run-level).
    fn notes(&self) -> Vec<&str> {
        self.rep.notes().collect()
    }
    /// Every failure.
    fn failures(&self) -> Vec<&str> {
        self.rep.failures().collect()
    }
    /// `(k, threshold, similarity, n_cases, n_estimated)`.
    fn header(&self) -> (usize, f64, &'static str, usize, usize) {
        (
            self.rep.k,
            self.rep.threshold,
            self.rep.similarity.as_str(),
            self.rep.n_cases,
            self.rep.n_estimated,
        )
    }
    /// The reference's `summary()` text.
    fn summary(&self) -> String {
        self.rep.summary()
    }
    /// Case `i`'s `summary()` text.
    fn case_summary(&self, i: usize) -> PyResult<String> {
        self.rep
            .per_case
            .get(i)
            .map(|c| c.summary())
            .ok_or_else(|| err(format!("no case {i}")))
    }
    /// Per-case fields: `(query, index, k, threshold, n_retrieved, n_unique, n_relevant,
    /// estimated, [(metric, value)], [excluded], [notes], [failures], score)`.
    fn cases<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for c in &self.rep.per_case {
            let metrics: Vec<(&str, f64)> = c.metrics.iter().map(|(m, v)| (m.name(), *v)).collect();
            let excluded: Vec<&str> = c.excluded.iter().map(|m| m.name()).collect();
            let t = PyTuple::new(
                py,
                [
                    c.query.clone().into_pyobject(py)?.into_any(),
                    c.index.into_pyobject(py)?.into_any(),
                    c.k.into_pyobject(py)?.into_any(),
                    c.threshold.into_pyobject(py)?.into_any(),
                    c.n_retrieved.into_pyobject(py)?.into_any(),
                    c.n_unique.into_pyobject(py)?.into_any(),
                    c.n_relevant.into_pyobject(py)?.into_any(),
                    pyo3::types::PyBool::new(py, c.estimated)
                        .to_owned()
                        .into_any(),
                    metrics.into_pyobject(py)?.into_any(),
                    excluded.into_pyobject(py)?.into_any(),
                    c.notes.clone().into_pyobject(py)?.into_any(),
                    c.failures.clone().into_pyobject(py)?.into_any(),
                    c.score().into_pyobject(py)?.into_any(),
                ],
            )?;
            out.append(t)?;
        }
        Ok(out)
    }
}

/// A shard of a lexical rag evaluation (`routeval.rag.Accumulator`'s state):
/// `routeval_retrieval_metrics::rag::RagPartial`, per-case results keyed by position.
#[pyclass(module = "routeval._native")]
pub(crate) struct NativeRagPartial {
    opts: Options,
    part: rag::RagPartial,
}

#[pymethods]
impl NativeRagPartial {
    /// An empty shard; `options_json` = the JSON of `[k, threshold]` (checked as `evaluate`
    /// checks them).
    #[new]
    fn new(options_json: &str) -> PyResult<Self> {
        let options = pyjson::parse(options_json).map_err(err)?;
        let opts = match &options {
            rag::PyValue::List(v) if v.len() == 2 => Options::from_py(&v[0], &v[1]).map_err(err)?,
            _ => return Err(err("options must be [k, threshold]")),
        };
        rag::RagRun::new(&opts).map_err(err)?;
        Ok(NativeRagPartial {
            opts,
            part: rag::RagPartial::default(),
        })
    }

    /// Score `cases_json` (the JSON text of a list of cases) whose positions in the whole
    /// input are `indices`, and keep the results. Errors (`RagError`, the reference's
    /// messages with the cases' positions) leave the shard unchanged.
    fn add(&mut self, py: Python<'_>, cases_json: &str, indices: Vec<usize>) -> PyResult<()> {
        let cases = pyjson::parse_on_decoder_thread(cases_json).map_err(err)?;
        let rag::PyValue::List(items) = &cases else {
            return Err(err("cases must be a list of case dicts"));
        };
        if items.len() != indices.len() {
            return Err(err(format!(
                "{} indices for {} cases",
                indices.len(),
                items.len()
            )));
        }
        let opts = &self.opts;
        let part = py.detach(|| -> Result<rag::RagPartial, rag::RagError> {
            let mut run = rag::RagRun::new(opts)?;
            run.push_indexed(items, Some(&indices));
            run.into_partial()
        });
        self.part.try_merge(part.map_err(err)?).map_err(err)
    }

    /// Add `other`'s cases (same options, disjoint positions).
    fn merge(&mut self, other: &NativeRagPartial) -> PyResult<()> {
        self.part.try_merge(other.part.clone()).map_err(err)
    }

    /// Cases held.
    fn __len__(&self) -> usize {
        self.part.len()
    }

    /// The report over every case held (position order), as `evaluate` gives it.
    fn report(&self) -> NativeRagReport {
        NativeRagReport {
            rep: self.part.clone().finish(),
        }
    }

    /// The state as JSON text (exact floats): what pickling stores.
    fn state(&self) -> String {
        self.part.to_json().to_string()
    }

    /// Restore [`state`](Self::state) into this (fresh) shard.
    fn set_state(&mut self, state: &str) -> PyResult<()> {
        let v: serde_json::Value = serde_json::from_str(state).map_err(err)?;
        self.part = rag::RagPartial::from_json(&v).map_err(err)?;
        Ok(())
    }
}
