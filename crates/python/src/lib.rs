//! routeval's Python extension module `routeval._native`.
//!
//! A thin binding over routeval's library crates: it converts Python values to the crates'
//! inputs and their typed results back to Python values, and turns every library error into
//! a Python exception (subclasses of `ValueError`, messages as the CLI prints them). No metric
//! is computed here; the pure-Python package `routeval` (in `python/routeval/`) gives the
//! reference libraries' names and return shapes on top of it.
//!
//! Panics: the binding returns errors instead of panicking; should a panic happen anyway,
//! PyO3 turns it into `pyo3_runtime.PanicException` rather than aborting the interpreter.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod compare;
mod crb;
mod dictscan;
mod frontier;
mod gqr;
mod rag;
mod sweep;
mod trec;
mod where_;

/// mimalloc for the Rust side's allocations (Python objects stay with CPython's allocator), as
/// the CLI uses it: building the judgments of 30,000 queries (hundreds of thousands of small
/// allocations) took about a third less CPU with it than with glibc's malloc here
/// (`benches/python.md`). Built with local-dynamic TLS, since Python `dlopen`s the module.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(
    _native,
    RoutevalError,
    PyValueError,
    "Base class of routeval's errors (a ValueError): bad input, unknown measure, bad query."
);
create_exception!(
    _native,
    TrecError,
    RoutevalError,
    "A TREC evaluation error: unknown measure, bad qrels or run, unreadable file."
);
create_exception!(
    _native,
    RagError,
    RoutevalError,
    "A rag-quality-check error, with the reference's ValueError message."
);
create_exception!(
    _native,
    GqrError,
    RoutevalError,
    "A GQR-Bench error: no or changed build, bad prediction label, wrong batch length."
);
create_exception!(
    _native,
    CrbError,
    RoutevalError,
    "A CommonRouterBench error: bad bank row or manifest, sampling, out-of-range tier, metrics input."
);
create_exception!(
    _native,
    WhereError,
    RoutevalError,
    "A `where` query error, with the message `routeval filter` prints."
);

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("RoutevalError", py.get_type::<RoutevalError>())?;
    m.add("TrecError", py.get_type::<TrecError>())?;
    m.add("RagError", py.get_type::<RagError>())?;
    m.add("WhereError", py.get_type::<WhereError>())?;
    m.add("GqrError", py.get_type::<GqrError>())?;
    m.add("CrbError", py.get_type::<CrbError>())?;
    trec::register(m)?;
    rag::register(m)?;
    where_::register(m)?;
    compare::register(m)?;
    frontier::register(m)?;
    gqr::register(m)?;
    crb::register(m)?;
    sweep::register(m)?;

    Ok(())
}
