//! Borrowed reads through CPython's C API (`pyo3::ffi`): the one module of the package with
//! `unsafe` code. Three of them:
//!
//! * [`scan_query`], an allocation-free scan of one query's run dict `{docno: score}` for
//!   `RelevanceEvaluator.evaluate`. The safe iteration (`PyDict::iter`) takes and drops a
//!   reference to every key and value (four refcount writes per document, on 3M cold objects
//!   for a 30k x 100 run) and joins each document with its judgment by a dict lookup. Here
//!   keys and values are borrowed, and a document is joined with the query's judgments by its
//!   cached `str` hash against a small table built once per evaluator ([`JudgedTable`]),
//!   confirmed by identity or `PyUnicode_Compare`.
//! * [`scan_judgments`], the same for one query's `{docno: relevance}` of the qrels dict when
//!   an evaluator is built: each docno's text and relevance, and its entry in the
//!   [`JudgedTable`].
//! * [`str_utf8`], the UTF-8 text of a `str` read in place: every text read of
//!   `routeval.trec` goes through it (see there for why PyO3's own is not used).
//!
//! Soundness: the scans read only exact `str` keys, exact `float` scores and exact `int`
//! relevances. For those the C calls used (`PyDict_Next`, `PyObject_Hash`,
//! `PyFloat_AsDouble`, `PyLong_AsLongAndOverflow`, `PyUnicode_AsUTF8AndSize`,
//! `PyUnicode_Compare`) run no Python code, so with the GIL held nothing can change the dict
//! while it is scanned. Any other key or value type (a subclass, an `int` score, NaN, a
//! relevance beyond a C `long`, a `str` that is not valid UTF-8) makes the scan give up
//! ([`Scan::Slow`]; an exception it raised is cleared) and the caller redoes that query with
//! the safe path, which also raises the errors. No borrowed pointer outlives a scan:
//! documents are returned as (score key, judgment, position in the dict), where scores tie
//! the caller reads the docnos again through the safe API, and the judgment table holds a
//! reference of its own to every key it keeps. [`str_utf8`] also reads `str` subclasses (the
//! text of a subclass is the `str`'s own).

#![allow(unsafe_code)]

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

#[cfg(any(Py_3_10, not(Py_LIMITED_API)))]
use ffi::PyUnicode_AsUTF8AndSize;

// SAFETY: the signature is CPython's (`const char *PyUnicode_AsUTF8AndSize(PyObject *unicode,
// Py_ssize_t *size)`, unchanged since 3.3), the one `pyo3::ffi` declares for newer builds.
#[cfg(not(any(Py_3_10, not(Py_LIMITED_API))))]
unsafe extern "C" {
    /// CPython's `PyUnicode_AsUTF8AndSize`: exported by every CPython 3 since 3.3 and in the
    /// stable ABI from 3.10. `pyo3::ffi` declares it only for builds whose limited API is 3.10
    /// or newer; this package's abi3 floor is 3.9, whose interpreter exports it too, with the
    /// same signature. (Builds for PyPy or GraalPy are not limited-API builds: they use
    /// `pyo3::ffi`'s declaration and its link names.)
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const std::ffi::c_char;
}

/// The UTF-8 text of `s` (a `str` or a subclass), borrowed from the object: CPython keeps the
/// encoded form with the string (for an ASCII string it is the string's own data), so no copy
/// is made. PyO3's `to_cow` under an abi3-py39 build encodes every string into a new `bytes`
/// object and copies that into a `String`: two allocations per docno, which were about a
/// fifth of `RelevanceEvaluator(qrels)`'s time (benches/python.md, 2026-12-06 17:30).
///
/// # Errors
/// The interpreter's `UnicodeEncodeError` for a string holding a lone surrogate (what
/// `str.encode("utf-8")` raises).
pub(crate) fn str_utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `s` is a live `str` (or subclass) and the GIL is held (`Bound`). The call runs
    // no Python code; it returns either NULL with an exception set, or a pointer to `size`
    // bytes of valid UTF-8 owned by the string object, which is immutable and outlives `'a`
    // (the borrow of `s`).
    unsafe {
        let data = PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size);
        if data.is_null() {
            return Err(PyErr::fetch(s.py()));
        }
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
        Ok(std::str::from_utf8_unchecked(bytes))
    }
}

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

    /// [`insert`](Self::insert) for a key known to be an exact `str` with hash `hash` (the
    /// borrowed scan of [`scan_judgments`]); the table takes its own reference.
    fn insert_str(&mut self, key: Py<PyString>, hash: isize, rel: i32) {
        if !self.exact {
            return;
        }
        let size = self.tags.len();
        if self.keys.len() * 2 >= size {
            self.exact = false; // more keys than announced: never probe a full table
            return;
        }
        let mut i = hash as usize & (size - 1);
        while self.tags[i] != 0 {
            i = (i + 1) & (size - 1);
        }
        self.tags[i] = tag(hash);
        self.slots[i] = (hash, self.keys.len() as u32, rel);
        self.keys.push(key);
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
    /// A key or value the scan does not read (for [`scan_query`]: not an exact `str` key, not
    /// a non-NaN exact `float` score, or a dict too large for a 31-bit position; for
    /// [`scan_judgments`]: not an exact `str` docno of valid UTF-8, not an exact `int` in a C
    /// `long`): redo the query with the safe path. [`scan_query`] has appended nothing then;
    /// what [`scan_judgments`] passed on is the caller's to discard.
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

/// Read one query's judgments `{docno: relevance}` of a qrels dict (`RelevanceEvaluator`'s
/// construction) with borrowed references: each docno's UTF-8 text and its relevance go to
/// `push` and into `table`, in dict order. Only exact `str` keys and exact `int` values that
/// fit a C `long` are read; anything else gives [`Scan::Slow`] (the caller then discards what
/// was pushed and reads the query with the safe path, which raises the errors). The safe
/// iteration takes and drops a reference to every key and value, four refcount writes per
/// judgment on 900k objects for 30k queries of 30.
pub(crate) fn scan_judgments(
    qdocs: &Bound<'_, PyDict>,
    table: &mut JudgedTable,
    mut push: impl FnMut(&[u8], i64),
) -> Scan {
    let py = qdocs.py();
    let dict = qdocs.as_ptr();
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: `dict` is a live dict (borrowed from `qdocs`) and the GIL is held (`Bound`).
    // `PyDict_Next` hands out borrowed references. The calls below on an exact `str` key
    // (`PyUnicode_AsUTF8AndSize`, `PyObject_Hash`) and an exact `int` value
    // (`PyLong_AsLongAndOverflow`) run no Python code, so the dict cannot change while it is
    // scanned; the text is read before the next call and copied by `push`; the table keeps a
    // reference of its own to every key it holds.
    unsafe {
        let str_type = std::ptr::addr_of_mut!(ffi::PyUnicode_Type);
        let int_type = std::ptr::addr_of_mut!(ffi::PyLong_Type);
        while ffi::PyDict_Next(dict, &mut pos, &mut key, &mut value) != 0 {
            if ffi::Py_TYPE(key) != str_type || ffi::Py_TYPE(value) != int_type {
                return Scan::Slow;
            }
            let mut overflow: std::ffi::c_int = 0;
            let rel = ffi::PyLong_AsLongAndOverflow(value, &mut overflow);
            if overflow != 0 {
                return Scan::Slow;
            }
            let mut size: ffi::Py_ssize_t = 0;
            let data = PyUnicode_AsUTF8AndSize(key, &mut size);
            if data.is_null() {
                // A lone surrogate: the safe path raises this error again, in its order.
                drop(PyErr::fetch(py));
                return Scan::Slow;
            }
            let text = std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
            let hash = ffi::PyObject_Hash(key);
            // A C `long` is 32 bits on Windows.
            #[allow(clippy::useless_conversion)]
            let rel = i64::from(rel);
            // Out-of-range values are refused by the caller's `Qrels` build (the table is
            // then dropped), as on the safe path.
            table.insert_str(
                Py::from_borrowed_ptr(py, key),
                hash,
                i32::try_from(rel).unwrap_or(0),
            );
            push(text, rel);
        }
    }
    Scan::Done
}
