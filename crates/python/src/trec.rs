//! `routeval.trec` native part: trec_eval-exact evaluation of runs given as Python dicts
//! (pytrec_eval's shapes) or as files, over `routeval_retrieval_metrics::trec`.

use crate::TrecError;
use crate::dictscan::{JudgedTable, Scan, ScannedDoc, scan_judgments, scan_query};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString, PyTuple};
use routeval_io::map::{InputBytes, file_bytes};
use routeval_retrieval_metrics::trec::spec::{Aggregate, nickname};
use routeval_retrieval_metrics::trec::{
    self, EvalOptions, Evaluation, JudgedRanking, MeasureId, MeasureSet, Qrels, QueryQrels,
    RunReader, TrecAccumulator, TrecEvalVersion, compute_query, score_key_for, sort_by_key_desc,
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
pub(crate) fn text<'a>(
    obj: &'a Bound<'_, PyAny>,
    what: &str,
) -> PyResult<std::borrow::Cow<'a, str>> {
    match obj.cast::<PyString>() {
        Ok(s) => crate::dictscan::str_utf8(s).map(std::borrow::Cow::Borrowed),
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

/// Per query of a qrels dict, in its order: the caller's qid object and the borrowed scan's
/// table of its judgments.
type QidTables<'py> = Vec<(Bound<'py, PyAny>, JudgedTable)>;

/// One pass over `{qid: {docno: int}}`: the judgments as [`Qrels`] (the text copied once, into
/// one arena) and, per query in the dict's order, the caller's qid object with the hash table
/// of the borrowed scan ([`JudgedTable`], keyed by the caller's `str` objects). Queries without
/// judgments are in the list too (they have no qrels position; the caller skips them).
///
/// # Errors
/// `TypeError` for a non-`str` id, a non-dict value or a non-`int` relevance (in dict
/// order, as before); [`TrecError`] for a relevance out of range (after the pass).
fn judged_from_dict<'py>(qrels: &Bound<'py, PyDict>) -> PyResult<(Qrels, QidTables<'py>)> {
    // Byte ranges into `arena`: per query (qid range, its judgments' range in `docs`).
    let mut arena: Vec<u8> = Vec::new();
    let mut groups: Vec<((usize, usize), (usize, usize))> = Vec::with_capacity(qrels.len());
    let mut docs: Vec<((usize, usize), i64)> = Vec::new();
    let mut tables = Vec::with_capacity(qrels.len());
    let push = |arena: &mut Vec<u8>, t: &str| {
        let at = arena.len();
        arena.extend_from_slice(t.as_bytes());
        (at, arena.len())
    };
    for (qid_obj, qdocs) in qrels.iter() {
        let qid = text(&qid_obj, "query id")?;
        let qdocs = qdocs.cast::<PyDict>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "qrels of query '{qid}' must be a dict {{docno: relevance}}"
            ))
        })?;
        let q = push(&mut arena, &qid);
        let first = docs.len();
        let mut table = JudgedTable::with_capacity(qdocs.len());
        let scanned = scan_judgments(qdocs, &mut table, |d, r| {
            let at = arena.len();
            arena.extend_from_slice(d);
            docs.push(((at, arena.len()), r));
        });
        if let Scan::Done = scanned {
            groups.push((q, (first, docs.len())));
            drop(qid);
            tables.push((qid_obj, table));
            continue;
        }
        // A key or value the borrowed scan does not read: the query again, the safe way.
        arena.truncate(q.1);
        docs.truncate(first);
        let mut table = JudgedTable::with_capacity(qdocs.len());
        for (d, rel) in qdocs.iter() {
            let dt = text(&d, "document id")?;
            if rel.cast::<PyFloat>().is_ok() {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "relevance of document '{dt}' for query '{qid}' must be an int, got float"
                )));
            }
            let r: i64 = rel.extract().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "relevance of document '{dt}' for query '{qid}' must be an int"
                ))
            })?;
            // Out-of-range values are refused by `from_judgments` below; the table is dropped.
            table.insert(&d, i32::try_from(r).unwrap_or(0))?;
            let at = push(&mut arena, &dt);
            docs.push((at, r));
        }
        groups.push((q, (first, docs.len())));
        drop(qid);
        tables.push((qid_obj, table));
    }
    // In qid byte order, so that `from_judgments`' stable sort of the judgments finds them
    // sorted already (sorting 30k groups instead of 900k judgments).
    let bytes = |r: (usize, usize)| &arena[r.0..r.1];
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by(|&a, &b| bytes(groups[a].0).cmp(bytes(groups[b].0)));
    // Built without the GIL (only Rust data from here on; the queries are built on rayon's
    // pool), so other Python threads run meanwhile.
    let qrels = qrels
        .py()
        .detach(|| {
            Qrels::from_judgments(order.iter().map(|&g| {
                let (q, (from, to)) = groups[g];
                (
                    bytes(q),
                    docs[from..to].iter().map(move |&(d, r)| (bytes(d), r)),
                )
            }))
        })
        .map_err(err)?;
    Ok((qrels, tables))
}

/// The qrels position of a run's `qid` (already checked to be a `str`) in the evaluator's
/// `{qid: position}` index, matched by the text (a `str` subclass is looked up as a plain
/// `str`, whatever its `__hash__`), or `None` for a query without judgments.
fn judged_position(index: &Bound<'_, PyDict>, qid: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    let found = if qid.is_exact_instance_of::<PyString>() {
        index.get_item(qid)?
    } else {
        index.get_item(PyString::new(qid.py(), &text(qid, "query id")?))?
    };
    found.map(|p| p.extract::<usize>()).transpose()
}

/// trec_eval over qrels held in memory: the engine behind `routeval.trec.RelevanceEvaluator`
/// and `routeval.trec.Accumulator`. Immutable, so it can be called any number of times (and
/// from several threads) with the same measures and cut-offs.
#[pyclass(module = "routeval._native", frozen)]
pub(crate) struct TrecEvaluator {
    qrels: Qrels,
    opts: EvalOptions,
    slots: Vec<(String, usize)>,
    /// `{qid: qrels position}` of the judged queries, with the caller's `str` objects as keys.
    index: Py<PyDict>,
    /// Per qrels position: the same judgments as a hash table for the borrowed scan
    /// ([`crate::dictscan`]), so no document id is copied out of Python unless its score ties.
    tables: Vec<JudgedTable>,
    /// The per-query value names as Python strings, created once (`slots` order).
    names: Vec<Py<PyString>>,
    /// The text-valued measures requested (reported as `0.0`).
    text_names: Vec<Py<PyString>>,
}

/// Judged run queries per batch of [`TrecEvaluator::evaluate_run`]'s pipeline: each batch is
/// scanned under the GIL, then ranked and evaluated on the ranking thread while the next one
/// is scanned.
const BATCH: usize = 512;

/// One batch of judged run queries joined with their judgments: the part that leaves the
/// thread holding the GIL (plain data, no Python object).
struct Batch {
    /// Every query's documents, one query after the other: in rank order where the safe path
    /// ranked them, else in dict order (ranked by [`rank_and_compute`]).
    docs: Vec<ScannedDoc>,
    /// `docs[bounds[k]..bounds[k + 1]]` are query `k`'s documents.
    bounds: Vec<usize>,
    /// Per query: its qrels position.
    positions: Vec<usize>,
    /// Per query: whether its documents are still in dict order.
    unranked: Vec<bool>,
}

impl Batch {
    fn new() -> Batch {
        Batch {
            docs: Vec::new(),
            bounds: vec![0],
            positions: Vec::new(),
            unranked: Vec::new(),
        }
    }
}

/// A batch after [`rank_and_compute`].
struct Evaluated {
    batch: Batch,
    /// `n_values` per query, one query after the other (zeros for the `tied` queries).
    values: Vec<f64>,
    /// The queries (batch indices) whose scores tie: their docnos are read again under the
    /// GIL, then they are ranked and evaluated.
    tied: Vec<usize>,
}

/// Rank every query of `batch` left in dict order and compute the values of every query
/// without a score tie (no Python object involved).
fn rank_and_compute(qrels: &Qrels, opts: &EvalOptions, mut batch: Batch) -> Evaluated {
    let n = opts.measures.n_values();
    let nq = batch.positions.len();
    let mut values = vec![0.0; n * nq];
    let mut tied = Vec::new();
    let mut judged = JudgedRanking::default();
    for k in 0..nq {
        let docs = &mut batch.docs[batch.bounds[k]..batch.bounds[k + 1]];
        if batch.unranked[k] && sort_desc(docs) {
            tied.push(k);
            continue;
        }
        let out = &mut values[k * n..(k + 1) * n];
        compute_one(qrels, opts, batch.positions[k], docs, &mut judged, out);
    }
    Evaluated {
        batch,
        values,
        tied,
    }
}

/// The values of one ranked query (qrels position `pos`) into `out`: the file path's
/// per-query code (`JudgedRanking::fill_rels` + `compute_query`), so the values are
/// bit-identical.
fn compute_one(
    qrels: &Qrels,
    opts: &EvalOptions,
    pos: usize,
    docs: &[ScannedDoc],
    judged: &mut JudgedRanking,
    out: &mut [f64],
) {
    if out.is_empty() {
        return;
    }
    judged.fill_rels(
        docs.iter().take(opts.max_docs_per_topic).map(|d| d.rel),
        &qrels.queries()[pos],
        opts.relevance_level,
        opts.judged_only,
    );
    compute_query(judged, opts, out);
}

fn type_err(msg: String) -> PyErr {
    pyo3::exceptions::PyTypeError::new_err(msg)
}

/// Put `(score key, relevance, id)` documents sorted by score key descending into trec_eval's
/// order: documents with equal keys by docno descending in byte order (as
/// `rank::rank_by_score`); `text_of(id)` gives a docno (read only for tied documents).
pub(crate) fn break_ties(
    docs: &mut [(u64, Option<i32>, usize)],
    mut text_of: impl FnMut(usize) -> PyResult<String>,
) -> PyResult<()> {
    let mut i = 0;
    while i < docs.len() {
        let mut j = i + 1;
        while j < docs.len() && docs[j].0 == docs[i].0 {
            j += 1;
        }
        if j - i > 1 {
            let mut tied = Vec::with_capacity(j - i);
            for d in &docs[i..j] {
                tied.push((text_of(d.2)?, *d));
            }
            tied.sort_unstable_by(|a, b| b.0.as_bytes().cmp(a.0.as_bytes()));
            for (slot, (_, d)) in docs[i..j].iter_mut().zip(tied) {
                *slot = d;
            }
        }
        i = j;
    }
    Ok(())
}

impl TrecEvaluator {
    /// Evaluate a run dict `{qid: {docno: score}}` (every query is checked, judged or not:
    /// str ids, int or float scores, no NaN): `(qid, qrels position)` per judged run query in
    /// run order, and their values (`n_values` per query, one query after the other).
    ///
    /// A pipeline on two threads: the caller's thread (holding the GIL) scans the queries in
    /// batches ([`scan_one`](Self::scan_one)) and hands each batch to a ranking thread,
    /// which ranks and evaluates it ([`rank_and_compute`], no Python object involved) while
    /// the next batch is scanned. Queries whose scores tie are finished afterwards under the
    /// GIL.
    #[allow(clippy::type_complexity)]
    fn evaluate_run<'py>(
        &self,
        run: &Bound<'py, PyDict>,
    ) -> PyResult<(Vec<(Bound<'py, PyAny>, usize)>, Vec<f64>)> {
        let py = run.py();
        let index = self.index.bind(py);
        let version = self.opts.version;
        let key_of = |s: f64| score_key_for(version, s);
        let n = self.opts.measures.n_values();
        let (qrels, opts) = (&self.qrels, &self.opts);
        // Per judged query in run order: (qid as given, qrels position, its dict while its
        // documents are in dict order).
        let mut queries: Vec<(Bound<'py, PyAny>, usize, Option<Bound<'py, PyDict>>)> = Vec::new();
        // One ranking thread fed through a channel (it blocks while it waits; the pool's
        // threads would spin for work and take time from the scanning thread on a small
        // machine).
        let mut done: Vec<Evaluated> = std::thread::scope(|sc| -> PyResult<Vec<Evaluated>> {
            let (tx, rx) = std::sync::mpsc::channel::<Batch>();
            let worker = std::thread::Builder::new()
                .name("routeval-rank".into())
                .spawn_scoped(sc, move || {
                    rx.iter()
                        .map(|batch| rank_and_compute(qrels, opts, batch))
                        .collect::<Vec<_>>()
                })
                .map_err(|e| err(format!("cannot start the ranking thread: {e}")))?;
            let mut scan = || -> PyResult<()> {
                let mut batch = Batch::new();
                for (qid, qdocs) in run.iter() {
                    let Some((pos, unranked)) =
                        self.scan_one(&qid, qdocs, index, key_of, &mut batch.docs)?
                    else {
                        continue;
                    };
                    batch.bounds.push(batch.docs.len());
                    batch.positions.push(pos);
                    batch.unranked.push(unranked.is_some());
                    queries.push((qid, pos, unranked));
                    if batch.positions.len() == BATCH {
                        // The next batch starts with room for as many documents as this one.
                        let mut next = Batch::new();
                        next.docs.reserve(batch.docs.len());
                        let full = std::mem::replace(&mut batch, next);
                        // A send fails only if the thread has ended (it panicked): its
                        // join below reports that.
                        let _ = tx.send(full);
                    }
                }
                if !batch.positions.is_empty() {
                    let _ = tx.send(batch);
                }
                Ok(())
            };
            let scanned = scan();
            drop(tx);
            let done = worker
                .join()
                .map_err(|_| err("internal error: the ranking thread stopped"))?;
            scanned.map(|()| done)
        })?;
        let mut values = Vec::with_capacity(n * queries.len());
        let mut judged = JudgedRanking::default();
        let mut first = 0;
        for e in done.iter_mut() {
            for &k in &e.tied {
                let (qid, pos, qdocs) = &queries[first + k];
                let docs = &mut e.batch.docs[e.batch.bounds[k]..e.batch.bounds[k + 1]];
                if let Some(qdocs) = qdocs {
                    self.order_ties(qid, qdocs, docs)?;
                }
                let out = &mut e.values[k * n..(k + 1) * n];
                compute_one(qrels, opts, *pos, docs, &mut judged, out);
            }
            values.extend_from_slice(&e.values);
            first += e.batch.positions.len();
        }
        let queries = queries.into_iter().map(|(q, p, _)| (q, p)).collect();
        Ok((queries, values))
    }

    /// Check one run query and, when it is judged, append its documents to `docs`: its qrels
    /// position and, when the borrowed scan read it (documents in dict order, ranking
    /// pending), its dict; `None` for a query without judgments (checked only). Exact
    /// `str`/`float` queries go through the borrowed scan; anything else through the safe
    /// path, which also raises the errors.
    #[allow(clippy::type_complexity)]
    fn scan_one<'py>(
        &self,
        qid: &Bound<'py, PyAny>,
        qdocs: Bound<'py, PyAny>,
        index: &Bound<'py, PyDict>,
        key_of: impl Fn(f64) -> u64,
        docs: &mut Vec<ScannedDoc>,
    ) -> PyResult<Option<(usize, Option<Bound<'py, PyDict>>)>> {
        if !qid.is_instance_of::<PyString>() {
            text(qid, "query id")?;
        }
        let qdocs = qdocs.cast_into::<PyDict>().map_err(|_| {
            type_err(format!(
                "run of query '{}' must be a dict {{docno: score}}",
                qid.str().map(|s| s.to_string()).unwrap_or_default()
            ))
        })?;
        let pos = judged_position(index, qid)?;
        let table = pos.map(|p| &self.tables[p]).filter(|t| t.usable());
        let fast = match (pos, table) {
            (Some(_), None) => Scan::Slow,
            _ => scan_query(&qdocs, table, key_of, docs),
        };
        let unranked = match fast {
            Scan::Done => Some(qdocs),
            Scan::Slow => {
                let judgments = pos.map(|p| &self.qrels.queries()[p]);
                self.scan_safe(qid, &qdocs, judgments, docs)?;
                None
            }
        };
        Ok(pos.map(|p| (p, unranked)))
    }

    /// The safe path of [`scan_one`](Self::scan_one): checks every document
    /// (raising the errors) and, for a judged query (`judgments`), appends its ranking.
    fn scan_safe<'py>(
        &self,
        qid: &Bound<'py, PyAny>,
        qdocs: &Bound<'py, PyDict>,
        judgments: Option<&QueryQrels>,
        out: &mut Vec<ScannedDoc>,
    ) -> PyResult<()> {
        let mut docs: Vec<(u64, Option<i32>, usize)> = Vec::with_capacity(qdocs.len());
        let mut objs: Vec<Bound<'py, PyAny>> = Vec::with_capacity(qdocs.len());
        // A snapshot of the items: converting a score may run Python code (`__float__`), which
        // could change the dict under a live iterator.
        for item in qdocs.items().iter() {
            let (d, s) = item.extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()?;
            let score: f64 = s.extract().map_err(|_| {
                type_err(format!(
                    "score of document '{}' for query '{}' must be an int or float",
                    d.str().map(|s| s.to_string()).unwrap_or_default(),
                    qid.str().map(|s| s.to_string()).unwrap_or_default()
                ))
            })?;
            if !d.is_instance_of::<PyString>() {
                text(&d, "document id")?;
            }
            if score.is_nan() {
                return Err(err(format!(
                    "score of document '{}' for query '{}' is NaN",
                    d.str().map(|s| s.to_string()).unwrap_or_default(),
                    qid.str().map(|s| s.to_string()).unwrap_or_default()
                )));
            }
            let Some(judgments) = judgments else {
                continue;
            };
            // The judgments as read when the evaluator was built (by the docno's text, as
            // pytrec_eval's C++ maps compare).
            let rel = judgments.rel(text(&d, "document id")?.as_bytes());
            docs.push((score_key_for(self.opts.version, score), rel, objs.len()));
            objs.push(d);
        }
        if !docs.windows(2).all(|w| w[0].0 > w[1].0) {
            docs.sort_unstable_by_key(|d| std::cmp::Reverse(d.0));
            if docs.windows(2).any(|w| w[0].0 == w[1].0) {
                break_ties(&mut docs, |i| {
                    text(&objs[i], "document id").map(|t| t.into_owned())
                })?;
            }
        }
        out.extend(docs.iter().map(|d| ScannedDoc {
            key: d.0,
            rel: d.1,
            at: 0,
        }));
        Ok(())
    }

    /// Put one query's documents, sorted by score key with ties (`docs`, scanned from
    /// `qdocs` in dict order), into trec_eval's order: the tied docnos are read again from the
    /// dict (under the GIL, each checked against the score scanned) and ordered docno
    /// descending in byte order. Raises if the dict changed since it was scanned.
    fn order_ties(
        &self,
        qid: &Bound<'_, PyAny>,
        qdocs: &Bound<'_, PyDict>,
        docs: &mut [ScannedDoc],
    ) -> PyResult<()> {
        // The docnos by dict position, each checked against the score scanned.
        let changed = || {
            err(format!(
                "the run of query '{}' changed while it was evaluated",
                qid.str().map(|s| s.to_string()).unwrap_or_default()
            ))
        };
        if qdocs.len() != docs.len() {
            return Err(changed());
        }
        let mut texts: Vec<Option<String>> = vec![None; docs.len()];
        let mut needed = vec![false; docs.len()];
        for w in docs.windows(2) {
            if w[0].key == w[1].key {
                needed[w[0].at as usize] = true;
                needed[w[1].at as usize] = true;
            }
        }
        let keys: Vec<u64> = {
            let mut keys = vec![0u64; docs.len()];
            for d in docs.iter() {
                keys[d.at as usize] = d.key;
            }
            keys
        };
        for (i, item) in qdocs.items().iter().enumerate() {
            let (d, s) = item.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
            if i >= docs.len() {
                return Err(changed());
            }
            if !needed[i] {
                continue;
            }
            let score: f64 = s.extract().map_err(|_| changed())?;
            if score_key_for(self.opts.version, score) != keys[i] {
                return Err(changed());
            }
            texts[i] = Some(text(&d, "document id")?.into_owned());
        }
        let mut ranked: Vec<(u64, Option<i32>, usize)> =
            docs.iter().map(|d| (d.key, d.rel, d.at as usize)).collect();
        break_ties(&mut ranked, |i| texts[i].clone().ok_or_else(changed))?;
        for (slot, (key, rel, at)) in docs.iter_mut().zip(ranked) {
            *slot = ScannedDoc {
                key,
                rel,
                at: at as u32,
            };
        }
        Ok(())
    }
}

/// Sort by score key descending (unless already strictly descending; `sort_by_key_desc`, the
/// file path's ranking sort); whether two keys tie.
fn sort_desc(docs: &mut [ScannedDoc]) -> bool {
    if docs.windows(2).all(|w| w[0].key > w[1].key) {
        return false;
    }
    sort_by_key_desc(docs, |d| d.key, |_, _| std::cmp::Ordering::Equal);
    docs.windows(2).any(|w| w[0].key == w[1].key)
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
        let py = qrels.py();
        let (qrels, by_dict_order) = judged_from_dict(qrels)?;
        let index = PyDict::new(py);
        let mut by_pos: Vec<Option<JudgedTable>> = (0..qrels.len()).map(|_| None).collect();
        for (qid, table) in by_dict_order {
            // The qid's text was read by `judged_from_dict` (a `str`).
            let t = text(&qid, "query id")?;
            let Some(pos) = qrels.position(t.as_bytes()) else {
                continue; // a query without judgments
            };
            // Keyed by a plain `str` of the text: run qids are matched by their text, as
            // pytrec_eval's C++ maps do, whatever a `str` subclass's `__hash__` says.
            let key = if qid.is_exact_instance_of::<PyString>() {
                qid.clone()
            } else {
                PyString::new(py, &t).into_any()
            };
            index.set_item(key, pos)?;
            by_pos[pos] = Some(table);
        }
        // Every judged query has a table (qrels positions come from these dicts).
        let tables = by_pos
            .into_iter()
            .map(|t| t.ok_or_else(|| err("internal: a judged query without its judgments")))
            .collect::<PyResult<Vec<_>>>()?;
        let slots = query_slots(&opts.measures);
        let names = slots
            .iter()
            .map(|(n, _)| PyString::intern(py, n).unbind())
            .collect();
        let text_names = text_measures(&opts.measures)
            .into_iter()
            .map(|n| PyString::intern(py, n).unbind())
            .collect();
        Ok(TrecEvaluator {
            qrels,
            opts,
            slots,
            index: index.unbind(),
            tables,
            names,
            text_names,
        })
    }

    /// Printed names of the per-query values, in order (`["map", "P_5", "P_10"]`).
    fn value_names(&self) -> Vec<String> {
        self.slots.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Number of judged queries.
    fn num_qrels_queries(&self) -> usize {
        self.qrels.len()
    }

    /// Tie sensitivity (`routeval trec --ties`): `{qid: {measure: (min, max, expected)}}` for
    /// every run query that has judgments, in run order: each value's smallest and largest
    /// value and its mean over every order of the documents that share a score
    /// (`routeval_retrieval_metrics::trec::ties`). Values of measures without an exact range
    /// ([`tie_unsupported`](Self::tie_unsupported)) are left out. Checks the run as
    /// [`evaluate`](Self::evaluate) does.
    fn evaluate_ties<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let opts = EvalOptions {
            ties: true,
            ..self.opts.clone()
        };
        let mut slots: Vec<(Bound<'py, PyString>, usize)> = Vec::new();
        for meas in opts.measures.measures() {
            if matches!(
                trec::ties::support(meas),
                trec::ties::TieSupport::Exact | trec::ties::TieSupport::OrderFree
            ) {
                for (k, name) in meas.names.iter().enumerate() {
                    slots.push((PyString::intern(py, name), meas.offset + k));
                }
            }
        }
        let index = self.index.bind(py);
        let out = PyDict::new(py);
        let mut docs = Vec::new();
        let mut judged = JudgedRanking::default();
        let mut ends = Vec::new();
        let mut values = vec![0.0; opts.measures.n_values()];
        for (qid, qdocs) in run.iter() {
            if !qid.is_instance_of::<PyString>() {
                text(&qid, "query id")?;
            }
            let qdocs = qdocs.cast_into::<PyDict>().map_err(|_| {
                type_err(format!(
                    "run of query '{}' must be a dict {{docno: score}}",
                    qid.str().map(|s| s.to_string()).unwrap_or_default()
                ))
            })?;
            let pos = judged_position(index, &qid)?;
            docs.clear();
            let judgments = pos.map(|p| &self.qrels.queries()[p]);
            self.scan_safe(&qid, &qdocs, judgments, &mut docs)?;
            let Some(pos) = pos else {
                continue;
            };
            values.iter_mut().for_each(|v| *v = 0.0);
            compute_one(&self.qrels, &opts, pos, &docs, &mut judged, &mut values);
            trec::ties::group_ends(
                docs.iter()
                    .take(opts.max_docs_per_topic)
                    .map(|d| (d.key, d.rel)),
                opts.judged_only,
                &mut ends,
            );
            let ranges = if values.is_empty() {
                None
            } else {
                trec::ties::query_ranges(&judged, &ends, &opts, &values)
            };
            let d = PyDict::new(py);
            for (name, slot) in &slots {
                let r = ranges
                    .as_ref()
                    .map_or(trec::ties::TieRange::point(values[*slot]), |r| r[*slot]);
                d.set_item(name, (r.min, r.max, r.expected))?;
            }
            out.set_item(qid, d)?;
        }
        Ok(out)
    }

    /// The measures [`evaluate_ties`](Self::evaluate_ties) gives no range (trec_eval names).
    fn tie_unsupported(&self) -> Vec<&'static str> {
        self.opts
            .measures
            .measures()
            .iter()
            .filter(|m| trec::ties::support(m) == trec::ties::TieSupport::Unsupported)
            .map(|m| m.id.name())
            .collect()
    }

    /// `{qid: {measure: value}}` for every run query that has judgments, in run order.
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (queries, values) = self.evaluate_run(run)?;
        let n = self.opts.measures.n_values();
        let out = PyDict::new(py);
        // Each query's dict is a copy of one template holding every key (CPython copies a
        // small dict's key table in one piece); its values are then replaced in place.
        let template = PyDict::new(py);
        for name in self.names.iter().chain(&self.text_names) {
            template.set_item(name.bind(py), 0.0)?;
        }
        for (k, (qid, _)) in queries.iter().enumerate() {
            let d = template.copy()?;
            for (name, (_, slot)) in self.names.iter().zip(&self.slots) {
                d.set_item(name.bind(py), values[k * n + slot])?;
            }
            out.set_item(qid, d)?;
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
        let (queries, values) = self.evaluate_run(run)?;
        let n = self.opts.measures.n_values();
        let mut order: Vec<usize> = (0..queries.len()).collect();
        order.sort_unstable_by_key(|&k| queries[k].1);
        let out = PyList::empty(py);
        for k in order {
            let (qid, pos) = &queries[k];
            let v = PyTuple::new(py, values[k * n..(k + 1) * n].iter().copied())?;
            out.append((*pos, qid, v))?;
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
    type Inputs = (Qrels, InputBytes, InputBytes);
    let done = py.detach(|| -> Result<(Evaluation, Inputs), String> {
        let qb = file_bytes(&qrels_path).map_err(|e| format!("{qsrc}: {e}"))?;
        let rb = file_bytes(&run_path).map_err(|e| format!("{rsrc}: {e}"))?;
        let qrels = Qrels::from_bytes(&qb, &qsrc).map_err(|e| e.to_string())?;
        match trec::evaluate_bytes(&qrels, &rb, &rsrc, &opts, &qsrc) {
            Ok(ev) => Ok((ev, (qrels, qb, rb))),
            Err(e) => {
                rayon::spawn(move || drop((qrels, qb, rb)));
                Err(e.to_string())
            }
        }
    });
    let (ev, inputs) = done.map_err(err)?;
    // Freeing the judgments (a few allocations per query) and unmapping the files take about
    // 30 ms here: done on a pool thread once the result dicts are built (unmapping while they
    // are built slowed the building, whose page faults wait for the unmap).
    let out = build_result(py, &ev, summary);
    rayon::spawn(move || drop((ev, inputs)));
    out
}

/// `{qid: {measure: value}}` (plus `"all"` when `summary`) of an evaluation.
fn build_result<'py>(
    py: Python<'py>,
    ev: &Evaluation,
    summary: bool,
) -> PyResult<Bound<'py, PyDict>> {
    if let Some((a, b)) = trec::format::qid_key_collision(ev) {
        return Err(err(format!(
            "query ids '{}' and '{}' are one key in the result (invalid UTF-8 is replaced by \
             U+FFFD), so one query's values would hide the other's",
            a.escape_ascii(),
            b.escape_ascii()
        )));
    }
    let out = PyDict::new(py);
    let slots = query_slots(&ev.measures);
    let names: Vec<Bound<'py, PyString>> =
        slots.iter().map(|(n, _)| PyString::new(py, n)).collect();
    // Text measures (`runid`, `relstring`) read 0.0, as pytrec_eval gives them; one list for
    // every query.
    // Each query's dict is a copy of one template holding every key (CPython copies a small
    // dict's key table in one piece); its values are then replaced in place.
    let template = PyDict::new(py);
    for name in &names {
        template.set_item(name, 0.0)?;
    }
    for name in text_measures(&ev.measures) {
        template.set_item(name, 0.0)?;
    }
    for q in &ev.queries {
        let d = template.copy()?;
        for (name, (_, slot)) in names.iter().zip(&slots) {
            d.set_item(name, q.values[*slot])?;
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
