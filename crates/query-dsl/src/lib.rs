//! # routeval-query-dsl
//!
//! The `where` query language over instance metadata (flexeval's `QueryRoutedMetric`, as the
//! user describes it in `seeds/flexeval_query_routed_metric.md`; details in
//! `specs/query-dsl.md` Part B): compile a `where` JSON object once into a [`Query`], evaluate
//! it on many `serde_json::Value`s. Routing (`QueryRoutedMetric`, per-route metrics and group
//! means) is in [`route`].
//!
//! Semantics in one breath: clauses are AND-ed in written order; a scalar means equality, an
//! array membership, an object a set of operators (`eq ne in not_in regex exists gt gte lt lte
//! elem_match`, aliases `== != > >= < <=`); paths are dotted, with list indexes (negative from
//! the end; out of range never matches) and `*` (ANY for positive operators, ALL for
//! `ne`/`not_in`); values compare as in Python (`True == 1 == 1.0`, exact int/float,
//! incomparable ordering is a `type_error`); `regex` is Python `re.search` ([`PyRegex`]).
//!
//! **Architecture invariant:** pure. No IO; inputs are `serde_json::Value`s.
//!
//! ```
//! use routeval_query_dsl::{OnMissingKey, Query};
//! use serde_json::json;
//! let q = Query::parse(&json!({"messages.-1.content": {"regex": "^Translate"}}))?;
//! let info = json!({"messages": [{"role": "user", "content": "Translate this"}]});
//! assert!(q.matches(&info, OnMissingKey::Skip)?);
//! # Ok::<(), routeval_query_dsl::QueryError>(())
//! ```

mod doc;
mod error;
mod pyre;
mod pyvalue;
mod query;
pub mod route;

pub use doc::{Doc, DocTooLarge};
pub use error::QueryError;
pub use pyre::{ATOMIC_HAYSTACK_LIMIT, BACKTRACK_LIMIT, PyRegex};
pub use pyvalue::{py_eq, py_float_repr, py_str, py_type_name, to_python_json};
pub use query::{OnMissingKey, Path, Query, Resolved};
/// The `serde_json` this crate evaluates on (with `preserve_order`), for callers' convenience.
pub use serde_json;
