//! `routeval.where` native part: flexeval's `where` language over
//! `routeval_query_dsl::Query`. Queries and records arrive as JSON text (`json.dumps`).

use crate::WhereError;
use pyo3::prelude::*;
use routeval_query_dsl::route::metrics::BuiltinMetric;
use routeval_query_dsl::route::{
    InstanceValues, QueryRoutedMetric, RouteError, RouteMetric, float_value, py_mean,
};
use routeval_query_dsl::serde_json::{self, Map, Value};
use routeval_query_dsl::{OnMissingKey, Query};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CompiledWhere>()?;
    m.add_class::<NativeQueryRoutedMetric>()?;
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

/// A route metric from Python: a built-in (`exact_match`, `char_f1`, `output_length_stats`,
/// `score:PATH`, flexeval `class_path` objects) or a callable `fn(record) -> dict` whose
/// per-instance values are reported as details and averaged per key for the summary
/// (Python `sum(values) / len(values)` over the numeric values, instance order).
enum PyRouteMetric {
    Builtin(BuiltinMetric),
    Callable(Py<PyAny>),
}

impl RouteMetric for PyRouteMetric {
    fn instance(&self, instance: &Value) -> Result<Map<String, Value>, String> {
        match self {
            PyRouteMetric::Builtin(b) => b.instance(instance),
            PyRouteMetric::Callable(f) => Python::attach(|py| -> Result<_, String> {
                let json = py.import("json").map_err(|e| e.to_string())?;
                let rec = json
                    .call_method1("loads", (instance.to_string(),))
                    .map_err(|e| e.to_string())?;
                let out = f.bind(py).call1((rec,)).map_err(|e| e.to_string())?;
                let text: String = json
                    .call_method1("dumps", (out,))
                    .and_then(|t| t.extract())
                    .map_err(|e| format!("the metric's result is not JSON-serialisable: {e}"))?;
                match serde_json::from_str(&text) {
                    Ok(Value::Object(m)) => Ok(m),
                    _ => Err(format!("a metric callable must return a dict, got {text}")),
                }
            }),
        }
    }

    fn has_details(&self) -> bool {
        match self {
            PyRouteMetric::Builtin(b) => b.has_details(),
            PyRouteMetric::Callable(_) => true,
        }
    }

    fn summarize(&self, rows: &[&InstanceValues]) -> Map<String, Value> {
        match self {
            PyRouteMetric::Builtin(b) => b.summarize(rows),
            PyRouteMetric::Callable(_) => {
                let mut keys: Vec<&String> = Vec::new();
                for r in rows {
                    for k in r.keys() {
                        if !keys.contains(&k) {
                            keys.push(k);
                        }
                    }
                }
                let mut out = Map::new();
                for k in keys {
                    let vals = rows
                        .iter()
                        .filter_map(|r| r.get(k))
                        .filter(|v| matches!(v, Value::Number(_) | Value::Bool(_)));
                    if let Some(m) = py_mean(vals) {
                        out.insert(k.clone(), float_value(m));
                    }
                }
                out
            }
        }
    }
}

/// flexeval's `QueryRoutedMetric` over Python records (`routeval_query_dsl::route`).
#[pyclass(module = "routeval._native", frozen)]
pub(crate) struct NativeQueryRoutedMetric {
    qr: QueryRoutedMetric<PyRouteMetric>,
}

#[pymethods]
impl NativeQueryRoutedMetric {
    /// Build from the JSON text of `{"routes", "on_unmatched", "on_missing_key"}`; a metric
    /// entry `{"__routeval_callable__": i}` is `callables[i]`. Errors: `WhereError` with the
    /// message `routeval route` prints (`bad_route: ...`, `bad_metric: ...`, ...).
    #[new]
    fn new(config_json: &str, callables: Vec<Py<PyAny>>) -> PyResult<Self> {
        let config = value(config_json)?;
        let qr = QueryRoutedMetric::from_config(&config, |m| {
            if let Some(i) = m.get("__routeval_callable__").and_then(Value::as_u64) {
                return callables
                    .get(i as usize)
                    .map(|f| Python::attach(|py| PyRouteMetric::Callable(f.clone_ref(py))))
                    .ok_or_else(|| RouteError::BadMetric("bad callable reference".into()));
            }
            BuiltinMetric::from_config(m).map(PyRouteMetric::Builtin)
        })
        .map_err(err)?;
        Ok(NativeQueryRoutedMetric { qr })
    }

    /// Evaluate records (JSON texts; `extra_info` is each record's `"extra_info"`, `{}` when
    /// absent): the JSON text of `{"summary", "instance_details"}`.
    fn evaluate(&self, records_json: Vec<String>) -> PyResult<String> {
        let records = records_json
            .iter()
            .map(|r| value(r))
            .collect::<PyResult<Vec<_>>>()?;
        let r = self.qr.evaluate(&records).map_err(err)?;
        let out = serde_json::json!({
            "summary": Value::Object(r.summary),
            "instance_details": r.instance_details.into_iter().map(Value::Object).collect::<Vec<_>>(),
        });
        Ok(out.to_string())
    }
}
