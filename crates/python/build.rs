//! PyO3's configuration cfgs (`Py_LIMITED_API`, `Py_3_10`, `PyPy`, ...) for this crate's own
//! code: `dictscan.rs` declares `PyUnicode_AsUTF8AndSize` itself only for a limited-API build
//! below 3.10 (this package's abi3-py39 wheel on CPython) and uses `pyo3::ffi`'s declaration
//! everywhere else (PyPy and GraalPy, where abi3 does not apply, link it under their names).

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
