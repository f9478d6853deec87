//! Built-in instance metrics for routes: `exact_match`, `char_f1`, `output_length_stats` and
//! `score:PATH` (issue 4; names as flexeval's `ExactMatch`, `CharF1`, `OutputLengthStats`).
//!
//! Each reads one data line `{"lm_output": str, "references": [str], ...}`:
//! * `exact_match`: `true` when `lm_output` equals some reference, both stripped of surrounding
//!   whitespace (Python `str.strip()`, i.e. `str.isspace()` characters). Detail: bool; summary:
//!   the mean (fraction, 0..1).
//! * `char_f1`: the maximum over references of the F1 of the character (code point) multisets:
//!   `P = |o ∩ r| / |o|`, `R = |o ∩ r| / |r|`, `F1 = 2PR / (P + R)`; 0 when nothing is shared,
//!   1 when both strings are empty, 0 with no references. Detail: float; summary: the mean.
//! * `output_length_stats`: `avg_output_length`, `min_output_length`, `max_output_length` of
//!   `lm_output` in characters (code points). Summary only (no instance details), as flexeval.
//! * `score:PATH`: the mean of a number already in the data line at the dotted PATH (e.g.
//!   `score:scores.f1`); the key is PATH. Detail: the value. A missing or non-numeric value is
//!   an error naming the instance.

use super::{InstanceValues, RouteError, RouteMetric, float_value, py_mean};
use crate::query::{Path, Resolved};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// One of the built-in metrics.
#[derive(Debug, Clone, PartialEq)]
pub enum BuiltinMetric {
    /// `exact_match` (flexeval `ExactMatch`).
    ExactMatch,
    /// `char_f1` (flexeval `CharF1`).
    CharF1,
    /// `output_length_stats` (flexeval `OutputLengthStats`).
    OutputLengthStats,
    /// `score:PATH`: mean of a numeric per-instance value at PATH.
    Score(Path),
}

impl BuiltinMetric {
    /// Parse a metric entry of a route: a name (`"exact_match"`, `"char_f1"`,
    /// `"output_length_stats"`, `"score:PATH"`) or a flexeval object
    /// (`{"class_path": "ExactMatch" | "CharF1" | "OutputLengthStats"}`, a module prefix such
    /// as `flexeval.ExactMatch` allowed; `{"class_path": "Score", "init_args": {"path": P}}`).
    ///
    /// # Errors
    /// [`RouteError::BadMetric`] for anything else.
    pub fn from_config(v: &Value) -> Result<BuiltinMetric, RouteError> {
        match v {
            Value::String(s) => match s.as_str() {
                "exact_match" => Ok(BuiltinMetric::ExactMatch),
                "char_f1" => Ok(BuiltinMetric::CharF1),
                "output_length_stats" => Ok(BuiltinMetric::OutputLengthStats),
                other => match other.strip_prefix("score:") {
                    Some(p) => {
                        Ok(BuiltinMetric::Score(Path::parse(p).map_err(|e| {
                            RouteError::BadMetric(format!("{other:?}: {e}"))
                        })?))
                    }
                    None => Err(RouteError::BadMetric(format!(
                        "unknown metric {other:?} (known: exact_match, char_f1, \
                         output_length_stats, score:PATH)"
                    ))),
                },
            },
            Value::Object(m) => {
                let Some(Value::String(cp)) = m.get("class_path") else {
                    return Err(RouteError::BadMetric(format!(
                        "metric object needs a string class_path: {v}"
                    )));
                };
                let class = cp.rsplit('.').next().unwrap_or(cp);
                match class {
                    "ExactMatch" => Ok(BuiltinMetric::ExactMatch),
                    "CharF1" => Ok(BuiltinMetric::CharF1),
                    "OutputLengthStats" => Ok(BuiltinMetric::OutputLengthStats),
                    "Score" => match m.get("init_args").and_then(|a| a.get("path")) {
                        Some(Value::String(p)) => {
                            Ok(BuiltinMetric::Score(Path::parse(p).map_err(|e| {
                                RouteError::BadMetric(format!("{p:?}: {e}"))
                            })?))
                        }
                        _ => Err(RouteError::BadMetric(
                            "Score needs init_args.path (a string)".into(),
                        )),
                    },
                    other => Err(RouteError::BadMetric(format!(
                        "unknown metric class {other:?} (known: ExactMatch, CharF1, \
                         OutputLengthStats, Score)"
                    ))),
                }
            }
            other => Err(RouteError::BadMetric(format!(
                "a metric is a name or an object with class_path, got {other}"
            ))),
        }
    }
}

/// Python's `str.isspace()` and `s.strip()` (no argument): one definition each, in
/// `routeval_core::py`.
pub use routeval_core::py::{is_space as py_isspace, strip as py_strip};

/// F1 of the character multisets of `a` and `b` (see the module docs).
pub fn char_f1(a: &str, b: &str) -> f64 {
    let (la, lb) = (a.chars().count(), b.chars().count());
    if la == 0 && lb == 0 {
        return 1.0;
    }
    let mut counts: HashMap<char, usize> = HashMap::new();
    for c in a.chars() {
        *counts.entry(c).or_default() += 1;
    }
    let mut common = 0usize;
    for c in b.chars() {
        if let Some(n) = counts.get_mut(&c)
            && *n > 0
        {
            *n -= 1;
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let p = common as f64 / la as f64;
    let r = common as f64 / lb as f64;
    2.0 * p * r / (p + r)
}

fn output(instance: &Value) -> Result<&str, String> {
    match instance.get("lm_output") {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("lm_output must be a string, got {other}")),
        None => Err("missing lm_output".into()),
    }
}

fn references(instance: &Value) -> Result<Vec<&str>, String> {
    match instance.get("references") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|r| {
                r.as_str()
                    .ok_or_else(|| format!("references must be strings, got {r}"))
            })
            .collect(),
        Some(Value::String(s)) => Ok(vec![s.as_str()]),
        Some(other) => Err(format!("references must be a list of strings, got {other}")),
        None => Err("missing references".into()),
    }
}

fn one(key: &str, v: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(key.to_string(), v);
    m
}

impl RouteMetric for BuiltinMetric {
    fn instance(&self, instance: &Value) -> Result<Map<String, Value>, String> {
        Ok(match self {
            BuiltinMetric::ExactMatch => {
                let out = py_strip(output(instance)?);
                let hit = references(instance)?.iter().any(|r| py_strip(r) == out);
                one("exact_match", Value::Bool(hit))
            }
            BuiltinMetric::CharF1 => {
                let out = output(instance)?;
                let best = references(instance)?
                    .iter()
                    .map(|r| char_f1(out, r))
                    .fold(0.0f64, f64::max);
                one("char_f1", float_value(best))
            }
            BuiltinMetric::OutputLengthStats => one(
                "output_length",
                Value::from(output(instance)?.chars().count() as u64),
            ),
            BuiltinMetric::Score(p) => match p.resolve(instance) {
                Resolved::One(v @ (Value::Number(_) | Value::Bool(_))) => {
                    one(p.as_str(), v.clone())
                }
                Resolved::One(v) => {
                    return Err(format!("score {:?} is not a number: {v}", p.as_str()));
                }
                _ => return Err(format!("score {:?} is missing", p.as_str())),
            },
        })
    }

    fn has_details(&self) -> bool {
        !matches!(self, BuiltinMetric::OutputLengthStats)
    }

    fn summarize(&self, rows: &[&InstanceValues]) -> Map<String, Value> {
        let mut out = Map::new();
        let key = match self {
            BuiltinMetric::ExactMatch => "exact_match",
            BuiltinMetric::CharF1 => "char_f1",
            BuiltinMetric::Score(p) => p.as_str(),
            BuiltinMetric::OutputLengthStats => {
                let lens: Vec<&Value> =
                    rows.iter().filter_map(|r| r.get("output_length")).collect();
                let nums = lens.iter().filter_map(|v| v.as_u64());
                let (min, max) = nums.fold((u64::MAX, 0), |(lo, hi), x| (lo.min(x), hi.max(x)));
                if let Some(avg) = py_mean(lens.iter().copied()) {
                    out.insert("avg_output_length".into(), float_value(avg));
                    out.insert("min_output_length".into(), Value::from(min));
                    out.insert("max_output_length".into(), Value::from(max));
                }
                return out;
            }
        };
        if let Some(m) = py_mean(rows.iter().filter_map(|r| r.get(key))) {
            out.insert(key.to_string(), float_value(m));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_f1_multisets() {
        assert_eq!(char_f1("abc", "abc"), 1.0);
        assert_eq!(char_f1("abc", "xyz"), 0.0);
        // common 2 (a, b): P = 2/3, R = 2/2 -> 0.8
        assert!((char_f1("abb", "ab") - 0.8).abs() < 1e-15);
        assert_eq!(char_f1("", ""), 1.0);
        assert_eq!(py_strip("\u{1c} x \n"), "x");
    }
}
