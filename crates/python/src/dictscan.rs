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
//! errors. No borrowed pointer outlives a scan: documents are returned as (score key,
//! judgment, position in the dict), and where scores tie the caller reads the docnos again
//! through the safe API.

#![allow(unsafe_code)]

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// The judgments of one query, keyed by the `str` hash of the docno (hashes of `str` are
/// cached in the object and equal for equal strings within one process): an open-addressing
/// table at most half full, probed through 16-bit tags (128 bytes for 30 judgments, so a
/// query's probes stay in a few cache lines); the usual lookup, a document that is not
/// judged, reads one tag.
pub(crate) struct JudgedTable {
    /// Per slot: `0` for a free slot, else a non-zero tag from the hash's high bits. The
    /// length is a power of two.
    tags: Box<[u16]>,
    /// Per slot: `(hash, key index, relevance)` (read only when the tag matches).
    slots: Box<[(isize, u32, i32)]>,
    /// The judged docnos (strong references, so the pointers compared stay valid).
    keys: Vec<Py<PyString>>,
    /// Whether every judged docno is an exact `str` (else the table is not used).
    exact: bool,
}

/// The non-zero tag of a hash.
#[inline]
fn tag(hash: isize) -> u16 {
    ((hash as u64 >> 48) as u16) | 1
}

impl JudgedTable {
    /// An empty table for `n` judgments ([`insert`](Self::insert) them one by one).
    pub(crate) fn with_capacity(n: usize) -> JudgedTable {
        let size = (2 * n).next_power_of_two().max(8);
        JudgedTable {
            tags: vec![0; size].into_boxed_slice(),
            slots: vec![(0, 0, 0); size].into_boxed_slice(),
            keys: Vec::with_capacity(n),
            exact: u32::try_from(n).is_ok(),
        }
    }

    /// Adds the judged docno `key` with relevance `rel` (at most the `n` of
    /// [`with_capacity`](Self::with_capacity) keys, each docno once, as a dict's keys are).
    /// A key that is not an exact `str` makes the table unusable (the safe path is taken).
    pub(crate) fn insert(&mut self, key: &Bound<'_, PyAny>, rel: i32) -> PyResult<()> {
        if !self.exact {
            return Ok(());
        }
        let Ok(s) = key.cast_exact::<PyString>() else {
            self.exact = false;
            return Ok(());
        };
        let size = self.tags.len();
        if self.keys.len() * 2 >= size {
            self.exact = false; // more keys than announced: never probe a full table
            return Ok(());
        }
        let hash = s.hash()?;
        let mut i = hash as usize & (size - 1);
        while self.tags[i] != 0 {
            i = (i + 1) & (size - 1);
        }
        self.tags[i] = tag(hash);
        self.slots[i] = (hash, self.keys.len() as u32, rel);
        self.keys.push(s.clone().unbind());
        Ok(())
    }

    /// Whether the fast scan may use this table.
    pub(crate) fn usable(&self) -> bool {
        self.exact
    }

    /// The relevance of the exact `str` `key` (hash `hash`), if judged.
    #[inline]
    fn rel(&self, key: *mut ffi::PyObject, hash: isize) -> Option<i32> {
        let mask = self.tags.len() - 1;
        let want = tag(hash);
        let mut i = hash as usize & mask;
        loop {
            let t = self.tags[i];
            if t == 0 {
                return None;
            }
            if t == want {
                let (h, idx, rel) = self.slots[i];
                if h == hash {
                    let judged = self.keys[idx as usize].as_ptr();
                    // SAFETY: both are live exact `str` objects (the run dict holds `key`;
                    // `self.keys` holds `judged`) and the GIL is held; `PyUnicode_Compare` of
                    // two `str` runs no Python code and cannot fail.
                    if judged == key || unsafe { ffi::PyUnicode_Compare(judged, key) } == 0 {
                        return Some(rel);
                    }
                }
            }
            i = (i + 1) & mask;
        }
    }
}

/// The result of [`scan_query`].
pub(crate) enum Scan {
    /// Every document was read (and, for a judged query, appended).
    Done,
    /// A key or value this scan does not read (not an exact `str` key, not a non-NaN exact
    /// `float` score), or a dict too large for a 31-bit position: redo the query with the safe
    /// path. Nothing was appended.
    Slow,
}

/// One document of a judged query as scanned: its score key, its judgment and its position
/// in the query's dict (to fetch its docno again should its score tie another's).
#[derive(Clone, Copy)]
pub(crate) struct ScannedDoc {
    /// The score key (`score_key_for`), higher ranks first.
    pub(crate) key: u64,
    /// The qrels value, if judged.
    pub(crate) rel: Option<i32>,
    /// The position in the dict's iteration order.
    pub(crate) at: u32,
}

/// Scan `qdocs` (`{docno: score}`). With `table` (a judged query), append one
/// [`ScannedDoc`] per document to `out`, in dict order (the caller ranks them); without
/// `table`, only check the documents. No pointer into the dict outlives this call.
pub(crate) fn scan_query(
    qdocs: &Bound<'_, PyDict>,
    table: Option<&JudgedTable>,
    key_of: impl Fn(f64) -> u64,
    out: &mut Vec<ScannedDoc>,
) -> Scan {
    let start = out.len();
    if u32::try_from(qdocs.len()).is_err() {
        return Scan::Slow;
    }
    let dict = qdocs.as_ptr();
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    let mut at = 0u32;
    // SAFETY: `dict` is a live dict (borrowed from `qdocs`) and the GIL is held (`Bound`).
    // `PyDict_Next` hands out borrowed references; nothing in this loop runs Python code or
    // allocates a Python object (see the module notes), so the dict cannot change meanwhile,
    // and no borrowed pointer is kept past the loop.
    unsafe {
        let str_type = std::ptr::addr_of_mut!(ffi::PyUnicode_Type);
        let float_type = std::ptr::addr_of_mut!(ffi::PyFloat_Type);
        while ffi::PyDict_Next(dict, &mut pos, &mut key, &mut value) != 0 {
            if ffi::Py_TYPE(key) != str_type || ffi::Py_TYPE(value) != float_type {
                out.truncate(start);
                return Scan::Slow;
            }
            let score = ffi::PyFloat_AsDouble(value);
            if score.is_nan() {
                out.truncate(start);
                return Scan::Slow;
            }
            let Some(t) = table else {
                continue;
            };
            let hash = ffi::PyObject_Hash(key);
            out.push(ScannedDoc {
                key: key_of(score),
                rel: t.rel(key, hash),
                at,
            });
            at += 1;
        }
    }
    Scan::Done
}
