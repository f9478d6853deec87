//! `routeval.where` native part: flexeval's `where` language over
//! `routeval_query_dsl::Query`. Queries and records arrive as JSON text (`json.dumps`).

use crate::WhereError;
use pyo3::prelude::*;
use routeval_query_dsl::serde_json::{self, Value};
use routeval_query_dsl::{OnMissingKey, Query};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CompiledWhere>()?;
    Ok(())
}

fn err(e: impl std::fmt::Display) -> PyErr {
    WhereError::new_err(e.to_string())
}

fn on_missing(s: &str) -> PyResult<OnMissingKey> {
    s.parse::<OnMissingKey>().map_err(err)
}

fn value(json: &str) -> PyResult<Value> {
    serde_json::from_str(json).map_err(|e| err(format!("not valid JSON: {e}")))
}

/// A compiled `where` query (`Query::parse`).
#[pyclass(module = "routeval._native", frozen)]
pub(crate) struct CompiledWhere {
    query: Query,
}

#[pymethods]
impl CompiledWhere {
    /// Compile the JSON text of a `where` (an object or `null`).
    #[new]
    fn new(where_json: &str) -> PyResult<Self> {
        Ok(CompiledWhere {
            query: Query::parse(&value(where_json)?).map_err(err)?,
        })
    }

    /// Does the record (JSON text) match? `on_missing_key`: `"skip"` or `"error"`.
    fn matches(&self, record_json: &str, on_missing_key: &str) -> PyResult<bool> {
        self.query
            .matches(&value(record_json)?, on_missing(on_missing_key)?)
            .map_err(err)
    }

    /// Positions of the matching records among `records_json` (each a JSON text).
    fn filter_positions(
        &self,
        records_json: Vec<String>,
        on_missing_key: &str,
    ) -> PyResult<Vec<usize>> {
        let mode = on_missing(on_missing_key)?;
        let mut out = Vec::new();
        for (i, r) in records_json.iter().enumerate() {
            if self.query.matches(&value(r)?, mode).map_err(err)? {
                out.push(i);
            }
        }
        Ok(out)
    }
}
