//! `routeval.trec` native part: trec_eval-exact evaluation of runs given as Python dicts
//! (pytrec_eval's shapes) or as files, over `routeval_retrieval_metrics::trec`.

use crate::TrecError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString, PyTuple};
use routeval_retrieval_metrics::trec::parse::IdMap;
use routeval_retrieval_metrics::trec::spec::{Aggregate, nickname};
use routeval_retrieval_metrics::trec::{
    self, EvalOptions, Evaluation, MeasureId, MeasureSet, Qrels, Run, RunDoc, RunReader,
    TrecAccumulator, TrecEvalVersion,
};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TrecEvaluator>()?;
    m.add_function(wrap_pyfunction!(trec_supported_measures, m)?)?;
    m.add_function(wrap_pyfunction!(trec_supported_nicknames, m)?)?;
    m.add_function(wrap_pyfunction!(trec_evaluate_files, m)?)?;
    m.add_function(wrap_pyfunction!(trec_parse_qrel_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(trec_parse_run_bytes, m)?)?;
    Ok(())
}

fn err(e: impl std::fmt::Display) -> PyErr {
    TrecError::new_err(e.to_string())
}

/// The text of a Python `str` (a `TypeError` naming `what` for anything else).
fn text<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<std::borrow::Cow<'a, str>> {
    match obj.cast::<PyString>() {
        Ok(s) => s.to_cow(),
        Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{what} must be a str, got {}",
            obj.get_type().name()?
        ))),
    }
}

/// `"9.0.8"` (pytrec-eval-terrier's trec_eval, the default of the Python API) or `"10.0"`
/// (the `routeval trec` CLI's).
fn version(v: &str) -> PyResult<TrecEvalVersion> {
    match v {
        "9.0.8" | "9" => Ok(TrecEvalVersion::V9_0_8),
        "10.0" | "10" => Ok(TrecEvalVersion::V10),
        other => Err(err(format!(
            "trec_eval_version must be '9.0.8' or '10.0', got '{other}'"
        ))),
    }
}

fn options(
    measures: Vec<String>,
    relevance_level: i64,
    judged_only: bool,
    per_query: bool,
    trec_eval_version: &str,
) -> PyResult<EvalOptions> {
    if relevance_level < 1 {
        return Err(err(format!(
            "relevance_level must be at least 1, got {relevance_level}"
        )));
    }
    if measures.is_empty() {
        return Err(err("no measure given"));
    }
    let measures = MeasureSet::parse(&measures).map_err(err)?;
    Ok(EvalOptions {
        measures,
        relevance_level,
        judged_only,
        per_query,
        version: version(trec_eval_version)?,
        ..EvalOptions::default()
    })
}

/// `(printed name, slot)` of every numeric value a query gets, in trec_eval's print order
/// (`runid` and `relstring` have none).
fn query_slots(measures: &MeasureSet) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for meas in measures.measures() {
        for (k, name) in meas.names.iter().enumerate() {
            out.push((name.clone(), meas.offset + k));
        }
    }
    out
}

/// The text-valued measures requested (`runid`, `relstring`): pytrec_eval reports each as
/// the number `0.0` per query (it keeps only numbers), so the dict views do too.
fn text_measures(measures: &MeasureSet) -> Vec<&'static str> {
    measures
        .measures()
        .iter()
        .filter(|m| matches!(m.id, MeasureId::Runid | MeasureId::Relstring))
        .map(|m| m.id.name())
        .collect()
}

/// Qrels from `{qid: {docno: rel}}` (rel an `int`, as pytrec_eval requires).
fn qrels_from_dict(qrels: &Bound<'_, PyDict>) -> PyResult<Qrels> {
    let mut groups: Vec<(String, Vec<(String, i64)>)> = Vec::with_capacity(qrels.len());
    for (qid, docs) in qrels.iter() {
        let qid = text(&qid, "query id")?.into_owned();
        let docs = docs.cast::<PyDict>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "qrels of query '{qid}' must be a dict {{docno: relevance}}"
            ))
        })?;
        let mut js = Vec::with_capacity(docs.len());
        for (d, rel) in docs.iter() {
            let d = text(&d, "document id")?.into_owned();
            if rel.cast::<PyFloat>().is_ok() {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "relevance of document '{d}' for query '{qid}' must be an int, got float"
                )));
            }
            let r: i64 = rel.extract().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "relevance of document '{d}' for query '{qid}' must be an int"
                ))
            })?;
            js.push((d, r));
        }
        groups.push((qid, js));
    }
    Qrels::from_judgments(
        groups
            .iter()
            .map(|(q, js)| (q.as_bytes(), js.iter().map(|(d, r)| (d.as_bytes(), *r)))),
    )
    .map_err(err)
}

/// A run from `{qid: {docno: score}}` (score an int or float, not NaN); also the qids in
/// dict order.
fn run_from_dict(run: &Bound<'_, PyDict>) -> PyResult<(Run, Vec<Box<[u8]>>)> {
    let mut queries: IdMap<Box<[u8]>, Vec<RunDoc>> = IdMap::default();
    queries.reserve(run.len());
    let mut order = Vec::with_capacity(run.len());
    for (qid, docs) in run.iter() {
        let qid: Box<[u8]> = text(&qid, "query id")?.as_bytes().into();
        let docs = docs.cast::<PyDict>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "run of query '{}' must be a dict {{docno: score}}",
                String::from_utf8_lossy(&qid)
            ))
        })?;
        let mut v = Vec::with_capacity(docs.len());
        for (d, s) in docs.iter() {
            let score: f64 = s.extract().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "score of document '{}' for query '{}' must be an int or float",
                    d.str().map(|s| s.to_string()).unwrap_or_default(),
                    String::from_utf8_lossy(&qid)
                ))
            })?;
            let docno: Box<[u8]> = text(&d, "document id")?.as_bytes().into();
            if score.is_nan() {
                return Err(err(format!(
                    "score of document '{}' for query '{}' is NaN",
                    String::from_utf8_lossy(&docno),
                    String::from_utf8_lossy(&qid)
                )));
            }
            v.push(RunDoc {
                docno,
                score,
                line: 0,
            });
        }
        order.push(qid.clone());
        queries.insert(qid, v);
    }
    Ok((
        Run {
            queries,
            runid: b"routeval".as_slice().into(),
            source: "<run dict>".into(),
        },
        order,
    ))
}

/// trec_eval over qrels held in memory: the engine behind `routeval.trec.RelevanceEvaluator`
/// and `routeval.trec.Accumulator`. Immutable, so it can be called any number of times (and
/// from several threads) with the same measures and cut-offs.
#[pyclass(module = "routeval._native", frozen)]
pub(crate) struct TrecEvaluator {
    qrels: Qrels,
    opts: EvalOptions,
    slots: Vec<(String, usize)>,
}

impl TrecEvaluator {
    /// Per-query results of `run` as `(qrels position, values)`, in qrels order; `None`
    /// when no run query is judged (pytrec_eval then returns `{}`).
    fn results(&self, py: Python<'_>, run: &Run) -> PyResult<Option<Evaluation>> {
        if !run.queries.keys().any(|q| self.qrels.position(q).is_some()) {
            return Ok(None);
        }
        py.detach(|| trec::evaluate_run(&self.qrels, run, &self.opts, "<qrels dict>"))
            .map(Some)
            .map_err(err)
    }
}

#[pymethods]
impl TrecEvaluator {
    /// `TrecEvaluator(qrels, measures, relevance_level=1, judged_only=False)`: `qrels` is
    /// `{qid: {docno: int}}` (queries without judgments are ignored), `measures` trec_eval
    /// `-m` arguments (`"map"`, `"P.5,10"`, `"official"`).
    #[new]
    #[pyo3(signature = (qrels, measures, relevance_level=1, judged_only=false, trec_eval_version="9.0.8"))]
    fn new(
        qrels: &Bound<'_, PyDict>,
        measures: Vec<String>,
        relevance_level: i64,
        judged_only: bool,
        trec_eval_version: &str,
    ) -> PyResult<Self> {
        let opts = options(
            measures,
            relevance_level,
            judged_only,
            true,
            trec_eval_version,
        )?;
        let qrels = qrels_from_dict(qrels)?;
        let slots = query_slots(&opts.measures);
        Ok(TrecEvaluator { qrels, opts, slots })
    }

    /// Printed names of the per-query values, in order (`["map", "P_5", "P_10"]`).
    fn value_names(&self) -> Vec<String> {
        self.slots.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Number of judged queries.
    fn num_qrels_queries(&self) -> usize {
        self.qrels.len()
    }

    /// `{qid: {measure: value}}` for every run query that has judgments, in run order.
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (run, order) = run_from_dict(run)?;
        let out = PyDict::new(py);
        let Some(ev) = self.results(py, &run)? else {
            return Ok(out);
        };
        let names: Vec<Bound<'py, PyString>> = self
            .slots
            .iter()
            .map(|(n, _)| PyString::new(py, n))
            .collect();
        let mut by_qid: IdMap<&[u8], &[f64]> = IdMap::default();
        for q in &ev.queries {
            by_qid.insert(&q.qid, &q.values);
        }
        for qid in &order {
            if let Some(values) = by_qid.get(&qid[..]) {
                let d = PyDict::new(py);
                for (name, (_, slot)) in names.iter().zip(&self.slots) {
                    d.set_item(name, values[*slot])?;
                }
                for name in text_measures(&self.opts.measures) {
                    d.set_item(name, 0.0)?;
                }
                out.set_item(String::from_utf8_lossy(qid), d)?;
            }
        }
        Ok(out)
    }

    /// `[(qrels position, qid, values)]` of the judged run queries, in qrels order: the
    /// per-query values an accumulator keeps (layout of [`value_names`](Self::value_names)).
    fn evaluate_values<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyList>> {
        let (run, _) = run_from_dict(run)?;
        let out = PyList::empty(py);
        let Some(ev) = self.results(py, &run)? else {
            return Ok(out);
        };
        for q in &ev.queries {
            let pos = self.qrels.position(&q.qid).unwrap_or(usize::MAX);
            let values = PyTuple::new(py, q.values.iter().copied())?;
            out.append((pos, String::from_utf8_lossy(&q.qid), values))?;
        }
        Ok(out)
    }

    /// trec_eval's summary (`all`) of per-query value vectors given in qrels order: each
    /// vector is added in the order given (trec_eval's order when sorted by qrels
    /// position), then means, sums (`num_*`) and geometric means (`gm_*`) are taken as
    /// `meas_avg.c` does. `{name: value}` in print order, `num_q` included.
    fn summarize<'py>(
        &self,
        py: Python<'py>,
        values: Vec<Vec<f64>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut acc = TrecAccumulator::default();
        for v in &values {
            if v.len() != self.opts.measures.n_values() {
                return Err(err(format!(
                    "a value vector has {} values, the measures have {}",
                    v.len(),
                    self.opts.measures.n_values()
                )));
            }
            acc.add(v);
        }
        let (_, summary) = acc.finish(&self.opts.measures, false, self.qrels.len());
        summary_dict(py, &self.opts.measures, &summary)
    }
}

fn summary_dict<'py>(
    py: Python<'py>,
    measures: &MeasureSet,
    summary: &[f64],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for meas in measures.measures() {
        if matches!(meas.id.aggregate(), Aggregate::NoSummary | Aggregate::Runid) {
            continue;
        }
        for (k, name) in meas.names.iter().enumerate() {
            d.set_item(name, summary[meas.offset + k])?;
        }
    }
    Ok(d)
}

/// Measures of trec_eval 10.0's nicknames that trec_eval 9.0.8 does not have.
const NOT_IN_9_0_8: [MeasureId; 3] = [MeasureId::Unj, MeasureId::Rbp, MeasureId::RbpResid];

/// The measures of nickname `name` in trec_eval release `version`, as names.
fn nickname_names(name: &str, version: TrecEvalVersion) -> Vec<&'static str> {
    nickname(name)
        .unwrap_or(&[])
        .iter()
        .filter(|m| version == TrecEvalVersion::V10 || !NOT_IN_9_0_8.contains(m))
        .map(|m: &MeasureId| m.name())
        .collect()
}

/// The measure names of trec_eval's `all_trec` set (pytrec_eval's `supported_measures` for
/// `"9.0.8"`).
#[pyfunction]
#[pyo3(signature = (trec_eval_version="9.0.8"))]
fn trec_supported_measures(trec_eval_version: &str) -> PyResult<Vec<&'static str>> {
    Ok(nickname_names("all_trec", version(trec_eval_version)?))
}

/// `{nickname: [measure names]}` (pytrec_eval's `supported_nicknames` for `"9.0.8"`).
#[pyfunction]
#[pyo3(signature = (trec_eval_version="9.0.8"))]
fn trec_supported_nicknames(
    trec_eval_version: &str,
) -> PyResult<Vec<(&'static str, Vec<&'static str>)>> {
    let v = version(trec_eval_version)?;
    Ok(["all_trec", "official", "set"]
        .into_iter()
        .map(|n| (n, nickname_names(n, v)))
        .collect())
}

/// Evaluate a run file against a qrels file without building Python dicts (trec_eval's
/// parallel byte path). Returns `{qid: {measure: value}}` (qrels order) when `per_query`,
/// plus `"all": {measure: value}` (trec_eval's summary, `num_q` included) when `summary`.
/// Errors name the file and line, as `routeval trec` prints them.
#[pyfunction]
#[pyo3(signature = (qrels_path, run_path, measures, relevance_level=1, judged_only=false, complete=false, per_query=true, summary=false, trec_eval_version="9.0.8"))]
#[allow(clippy::too_many_arguments)]
fn trec_evaluate_files<'py>(
    py: Python<'py>,
    qrels_path: std::path::PathBuf,
    run_path: std::path::PathBuf,
    measures: Vec<String>,
    relevance_level: i64,
    judged_only: bool,
    complete: bool,
    per_query: bool,
    summary: bool,
    trec_eval_version: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let mut opts = options(
        measures,
        relevance_level,
        judged_only,
        per_query,
        trec_eval_version,
    )?;
    opts.complete = complete;
    let qsrc = qrels_path.display().to_string();
    let rsrc = run_path.display().to_string();
    let ev = py.detach(|| -> Result<Evaluation, String> {
        let qb = std::fs::read(&qrels_path).map_err(|e| format!("{qsrc}: {e}"))?;
        let rb = std::fs::read(&run_path).map_err(|e| format!("{rsrc}: {e}"))?;
        let qrels = Qrels::from_bytes(&qb, &qsrc).map_err(|e| e.to_string())?;
        trec::evaluate_bytes(&qrels, &rb, &rsrc, &opts, &qsrc).map_err(|e| e.to_string())
    });
    let ev = ev.map_err(err)?;
    let out = PyDict::new(py);
    let slots = query_slots(&ev.measures);
    let names: Vec<Bound<'py, PyString>> =
        slots.iter().map(|(n, _)| PyString::new(py, n)).collect();
    for q in &ev.queries {
        let d = PyDict::new(py);
        for (name, (_, slot)) in names.iter().zip(&slots) {
            d.set_item(name, q.values[*slot])?;
        }
        for name in text_measures(&ev.measures) {
            d.set_item(name, 0.0)?;
        }
        out.set_item(String::from_utf8_lossy(&q.qid), d)?;
    }
    if summary {
        out.set_item("all", summary_dict(py, &ev.measures, &ev.summary)?)?;
    }
    Ok(out)
}

/// Qrels text → `{qid: {docno: rel}}` with routeval's qrels reader (4 columns, integer
/// relevance; a duplicated judgment is an error, as in pytrec_eval).
#[pyfunction]
fn trec_parse_qrel_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    source: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let qrels = Qrels::from_bytes(data, source).map_err(err)?;
    let out = PyDict::new(py);
    for q in qrels.queries() {
        if let Some((d, line)) = q.duplicate() {
            return Err(err(format!(
                "{source}:{line}: duplicate judgment of document '{}' for query '{}'",
                String::from_utf8_lossy(d),
                String::from_utf8_lossy(q.qid())
            )));
        }
        let d = PyDict::new(py);
        for i in 0..q.len() {
            d.set_item(String::from_utf8_lossy(q.docno(i)), q.rel_at(i))?;
        }
        out.set_item(String::from_utf8_lossy(q.qid()), d)?;
    }
    Ok(out)
}

/// Run text → `{qid: {docno: score}}` with routeval's run reader (6 columns, numeric
/// non-NaN score; a duplicated document is an error, as in pytrec_eval).
#[pyfunction]
fn trec_parse_run_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    source: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let mut reader = RunReader::new(data, source);
    let out = PyDict::new(py);
    while let Some(rec) = reader.next_record().map_err(err)? {
        let qid = String::from_utf8_lossy(rec.qid);
        let docno = String::from_utf8_lossy(rec.docno);
        let d = match out.get_item(qid.as_ref())? {
            Some(d) => d.cast_into::<PyDict>()?,
            None => {
                let d = PyDict::new(py);
                out.set_item(qid.as_ref(), &d)?;
                d
            }
        };
        if d.contains(docno.as_ref())? {
            return Err(err(format!(
                "{source}:{}: duplicate document '{docno}' for query '{qid}'",
                rec.line
            )));
        }
        d.set_item(docno.as_ref(), rec.score)?;
    }
    Ok(out)
}
