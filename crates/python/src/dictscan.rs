//! A borrowed, allocation-free scan of one query's run dict `{docno: score}` for
//! `RelevanceEvaluator.evaluate`: the one module of the package with `unsafe` code (CPython's
//! C API through `pyo3::ffi`).
//!
//! Why: the safe iteration (`PyDict::iter`) takes and drops a reference to every key and value
//! (four refcount writes per document, on 3M cold objects for a 30k x 100 run) and joins each
//! document with its judgment by a dict lookup. Here keys and values are borrowed, and a
//! document is joined with the query's judgments by its cached `str` hash against a small
//! sorted table built once per evaluator ([`JudgedTable`]), confirmed by identity or
//! `PyUnicode_Compare`.
//!
//! Soundness: only exact `str` keys and exact `float` values are read here. For those the C
//! calls used (`PyDict_Next`, `PyObject_Hash`, `PyFloat_AsDouble`, `PyUnicode_Compare`) run no
//! Python code, so with the GIL held nothing can change the dict while it is scanned. Any other
//! key or value type (a subclass, an `int` score, NaN, ...) makes the scan give up
//! ([`Scan::Slow`]) and the caller redoes that query with the safe path, which also raises the
//! errors. The borrowed key pointers returned are valid while the GIL stays held and the run
//! dict is unchanged: the caller uses them (for score ties) before releasing the GIL.

#![allow(unsafe_code)]

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// The judgments of one query, keyed by the `str` hash of the docno (hashes of `str` are
/// cached in the object and equal for equal strings within one process): an open-addressing
/// table at most half full, so the usual lookup (a document that is not judged) reads one
/// slot.
pub(crate) struct JudgedTable {
    /// `(hash, key index, relevance)`; `key index == EMPTY` marks a free slot. The length
    /// is a power of two.
    slots: Box<[(isize, u32, i32)]>,
    /// The judged docnos (strong references, so the pointers compared stay valid).
    keys: Vec<Py<PyString>>,
    /// Whether every judged docno is an exact `str` (else the table is not used).
    exact: bool,
}

const EMPTY: u32 = u32::MAX;

impl JudgedTable {
    /// The table of `{docno: rel}` (rels already checked to be ints within range).
    pub(crate) fn new(judgments: &Bound<'_, PyDict>) -> PyResult<JudgedTable> {
        let n = judgments.len();
        let size = (2 * n).next_power_of_two().max(8);
        let mut t = JudgedTable {
            slots: vec![(0, EMPTY, 0); size].into_boxed_slice(),
            keys: Vec::with_capacity(n),
            exact: n < EMPTY as usize,
        };
        for (d, rel) in judgments.iter() {
            let Ok(s) = d.cast_exact::<PyString>() else {
                t.exact = false;
                return Ok(t);
            };
            let hash = s.hash()?;
            let rel = rel.extract::<i32>()?;
            let mut i = hash as usize & (size - 1);
            while t.slots[i].1 != EMPTY {
                i = (i + 1) & (size - 1);
            }
            t.slots[i] = (hash, t.keys.len() as u32, rel);
            t.keys.push(s.clone().unbind());
        }
        Ok(t)
    }

    /// Whether the fast scan may use this table.
    pub(crate) fn usable(&self) -> bool {
        self.exact
    }

    /// The relevance of the exact `str` `key` (hash `hash`), if judged.
    #[inline]
    fn rel(&self, key: *mut ffi::PyObject, hash: isize) -> Option<i32> {
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let (h, idx, rel) = self.slots[i];
            if idx == EMPTY {
                return None;
            }
            if h == hash {
                let judged = self.keys[idx as usize].as_ptr();
                // SAFETY: both are live exact `str` objects (the run dict holds `key`;
                // `self.keys` holds `judged`) and the GIL is held; `PyUnicode_Compare` of two
                // `str` runs no Python code and cannot fail.
                if judged == key || unsafe { ffi::PyUnicode_Compare(judged, key) } == 0 {
                    return Some(rel);
                }
            }
            i = (i + 1) & mask;
        }
    }
}

/// The result of [`scan_query`].
pub(crate) enum Scan {
    /// Every document was read (and, for a judged query, ranked and appended).
    Done,
    /// A key or value this scan does not read (not an exact `str` key, not a non-NaN exact
    /// `float` score): redo the query with the safe path. Nothing was appended.
    Slow,
}

/// Scan `qdocs` (`{docno: score}`). With `table` (a judged query), append the query's
/// ranking to `out` as `(score key, relevance)` in trec_eval's order: score key descending
/// (`key_of`), ties by docno descending in UTF-8 byte order, like the file readers. Without
/// `table`, only check the documents.
///
/// Errors: those of reading a tied docno's text (none for an exact `str`).
pub(crate) fn scan_query(
    qdocs: &Bound<'_, PyDict>,
    table: Option<&JudgedTable>,
    key_of: impl Fn(f64) -> u64,
    scratch: &mut Vec<(u64, Option<i32>, *mut ffi::PyObject)>,
    out: &mut Vec<(u64, Option<i32>)>,
) -> PyResult<Scan> {
    let py = qdocs.py();
    scratch.clear();
    let dict = qdocs.as_ptr();
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: `dict` is a live dict (borrowed from `qdocs`) and the GIL is held (`Bound`).
    // `PyDict_Next` hands out borrowed references; nothing in this loop runs Python code or
    // allocates a Python object (see the module notes), so the dict cannot change meanwhile.
    unsafe {
        let str_type = std::ptr::addr_of_mut!(ffi::PyUnicode_Type);
        let float_type = std::ptr::addr_of_mut!(ffi::PyFloat_Type);
        while ffi::PyDict_Next(dict, &mut pos, &mut key, &mut value) != 0 {
            if ffi::Py_TYPE(key) != str_type || ffi::Py_TYPE(value) != float_type {
                return Ok(Scan::Slow);
            }
            let score = ffi::PyFloat_AsDouble(value);
            if score.is_nan() {
                return Ok(Scan::Slow);
            }
            let Some(t) = table else {
                continue;
            };
            let hash = ffi::PyObject_Hash(key);
            scratch.push((key_of(score), t.rel(key, hash), key));
        }
    }
    if table.is_none() {
        return Ok(Scan::Done);
    }
    let tied = sort_desc(scratch);
    if tied {
        // Take a reference to every tied docno before anything that could run Python code
        // (reading a text allocates): from then on they stay alive whatever happens to the
        // dict.
        let mut owned: Vec<(usize, Bound<'_, PyAny>)> = Vec::new();
        for (i, w) in scratch.windows(2).enumerate() {
            if w[0].0 == w[1].0 {
                for k in [i, i + 1] {
                    if owned.last().is_none_or(|(j, _)| *j < k) {
                        // SAFETY: `scratch[k].2` was borrowed from the dict in the loop
                        // above and no Python code has run since.
                        owned.push((k, unsafe { Bound::from_borrowed_ptr(py, scratch[k].2) }));
                    }
                }
            }
        }
        let mut docs: Vec<(u64, Option<i32>, usize)> = scratch
            .iter()
            .enumerate()
            .map(|(i, d)| (d.0, d.1, i))
            .collect();
        crate::trec::break_ties(&mut docs, |i| {
            let at = owned.partition_point(|(j, _)| *j < i);
            crate::trec::text(&owned[at].1, "document id").map(|t| t.into_owned())
        })?;
        out.extend(docs.iter().map(|d| (d.0, d.1)));
    } else {
        out.extend(scratch.iter().map(|d| (d.0, d.1)));
    }
    Ok(Scan::Done)
}

/// Sort by score key descending (unless already strictly descending); whether two keys tie.
fn sort_desc(docs: &mut [(u64, Option<i32>, *mut ffi::PyObject)]) -> bool {
    if docs.windows(2).all(|w| w[0].0 > w[1].0) {
        return false;
    }
    docs.sort_unstable_by_key(|d| std::cmp::Reverse(d.0));
    docs.windows(2).any(|w| w[0].0 == w[1].0)
}
