//! Python's equality, ordering and `str()` for JSON values.
//!
//! JSON values are Python values as `json.loads` would make them: `true`/`false` are `bool`
//! (a subclass of `int`), integers are `int` (exact; serde_json holds them as `i64`/`u64`),
//! numbers with a fraction or exponent are `float`, `null` is `None`. Integers beyond the `u64`
//! range are read as floats by serde_json (Python keeps them exact): documented deviation.

use serde_json::{Number, Value};
use std::cmp::Ordering;

/// A Python number: `bool` and `int` as an exact integer, or a `float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

pub(crate) fn num_of(n: &Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i as i128)
    } else if let Some(u) = n.as_u64() {
        Num::Int(u as i128)
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// The value as a Python number (`bool`, `int` or `float`), if it is one.
pub(crate) fn as_num(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::Int(i128::from(*b))),
        Value::Number(n) => Some(num_of(n)),
        _ => None,
    }
}

/// Exact comparison of an integer with a float (Python compares them exactly).
fn cmp_int_float(a: i128, b: f64) -> Option<Ordering> {
    if b.is_nan() {
        return None;
    }
    // 2^127 as f64 is exact; anything at or beyond it is larger than every i128.
    const LIM: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if b >= LIM {
        return Some(Ordering::Less);
    }
    if b < -LIM {
        return Some(Ordering::Greater);
    }
    let t = b.trunc();
    let bi = t as i128;
    match a.cmp(&bi) {
        Ordering::Equal => {
            let f = b - t;
            if f > 0.0 {
                Some(Ordering::Less)
            } else if f < 0.0 {
                Some(Ordering::Greater)
            } else {
                Some(Ordering::Equal)
            }
        }
        o => Some(o),
    }
}

/// Python's ordering of two numbers (`None` when a NaN is involved).
pub(crate) fn cmp_num(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
        (Num::Int(x), Num::Float(y)) => cmp_int_float(x, y),
        (Num::Float(x), Num::Int(y)) => cmp_int_float(y, x).map(Ordering::reverse),
    }
}

/// Python's `a == b` for JSON values (deep, `True == 1 == 1.0`, dicts as unordered maps).
pub fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Null, Value::Null) => true,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => match (as_num(a), as_num(b)) {
            (Some(x), Some(y)) => cmp_num(x, y) == Some(Ordering::Equal),
            _ => false,
        },
    }
}

/// Python's type name of a JSON value (`int`, `float`, `bool`, `str`, `NoneType`, `list`,
/// `dict`), for error messages.
pub fn py_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) => match num_of(n) {
            Num::Int(_) => "int",
            Num::Float(_) => "float",
        },
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Python's `repr()` of a float (`1e-05`, `1e+16`, `-0.0`, `inf`, `nan`); one definition for the
/// workspace, in `routeval_core::py`.
pub use routeval_core::py::float_repr as py_float_repr;

/// Python's `str()` of a JSON value (`True`, `None`, `1.0`, `1e+16`, `[1, 'a']`, ...): one
/// definition, `routeval_core::py::str_value`. Group labels only see scalars (`group_by`
/// rejects lists and dicts).
pub use routeval_core::py::str_value as py_str;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn float_repr_like_python() {
        for (x, s) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e-05, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (-0.0, "-0.0"),
            (123456789012345.6, "123456789012345.6"),
            (1e15, "1000000000000000.0"),
            (2.5e-7, "2.5e-07"),
            (1.5e300, "1.5e+300"),
        ] {
            assert_eq!(py_float_repr(x), s);
        }
    }

    #[test]
    fn exact_int_float() {
        let a = json!(9007199254740993i64);
        let b = json!(9007199254740992.0);
        assert!(!py_eq(&a, &b));
        assert_eq!(
            cmp_num(as_num(&a).unwrap(), as_num(&b).unwrap()),
            Some(Ordering::Greater)
        );
        assert!(py_eq(&json!(true), &json!(1.0)));
        assert!(py_eq(&json!({"a": 1}), &json!({"a": true})));
        assert!(!py_eq(&json!("7"), &json!(7)));
        assert!(!py_eq(&json!(u64::MAX), &json!(18446744073709551615.0)));
    }
}

/// Serialize like Python's `json.dumps(v, ensure_ascii=False)` (`indent = None`: separators
/// `", "` and `": "`) or `json.dump(v, f, indent=N, ensure_ascii=False)`: floats use Python's
/// `repr` (`1e-05`, `1e+16`), NaN/infinities are written as `NaN`/`Infinity` as Python does.
/// A thin wrapper over the one writer, `routeval_core::py::dumps`.
pub fn to_python_json(v: &Value, indent: Option<usize>) -> String {
    routeval_core::py::dumps(
        v,
        routeval_core::py::DumpOptions {
            ensure_ascii: false,
            sort_keys: false,
            indent,
        },
    )
}

#[cfg(test)]
mod json_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_json_layout() {
        let v = json!({"a": 1e-5, "b": [1, 2.0], "c": {}, "d": "é\n"});
        assert_eq!(
            to_python_json(&v, None),
            r#"{"a": 1e-05, "b": [1, 2.0], "c": {}, "d": "é\n"}"#
        );
        assert_eq!(
            to_python_json(&json!({"x": [1], "y": 1e16}), Some(4)),
            "{\n    \"x\": [\n        1\n    ],\n    \"y\": 1e+16\n}"
        );
    }
}
