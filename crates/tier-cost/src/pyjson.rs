//! Python's text forms of JSON values, as CommonRouterBench produces them (`specs/crb.md` §9.3).
//!
//! The reference counts tokens of, and compares, texts made by Python's `json.dumps` and `str()`.
//! Token counts are only identical if those texts are byte-identical, so this module writes:
//! * [`dumps`]: `json.dumps(x, ensure_ascii=…, sort_keys=…, indent=…)` (separators `", "`/`": "`,
//!   or `","`/`": "` with an indent; floats as Python `repr`; `NaN`/`Infinity`);
//! * [`py_str`]: `str(x)` (strings as is, containers as Python `repr`: `{'a': 1, 'b': [1, None, True]}`);
//! * [`float_repr`]: Python's `repr(float)` (shortest round-trip digits, `1e-05`, `1e+16`, `100.0`).
//!
//! Key order is the map's order: use `serde_json` with `preserve_order` so it is the file's.

use serde_json::Value;

/// Python's `repr(x)` for a finite or non-finite `f64` (defined once in `routeval_core::py`).
pub use routeval_core::py::float_repr;

/// The JSON number text Python writes (ints exact, floats as [`float_repr`] with
/// `NaN`/`Infinity`/`-Infinity`); defined once in `routeval_core::py`.
pub use routeval_core::py::number_text;

/// `json.dumps(value, ...)` as CPython writes it, and its options; defined once in
/// `routeval_core::py`.
pub use routeval_core::py::{DumpOptions, dumps, dumps_into};

/// Append `s` as a JSON string literal (Python's escaping rules) to `out`: the one
/// definition in `routeval-core`.
pub use routeval_core::py::write_json_str;

/// Python's `str(x)` / `repr(x)` for a JSON value (`routeval_core::py::str_value` /
/// `repr_value`).
pub use routeval_core::py::{repr_value as py_repr, str_value as py_str};

/// Python's `repr(s)` for a string (one definition, in `routeval_core::py`, exact for CPython
/// 3.11's Unicode 14 printable table).
pub use routeval_core::py::repr_str as py_repr_str;

/// Python's `str.isspace()`, `s.strip()` and `s.rstrip()` (one definition each, in
/// `routeval_core::py`).
pub use routeval_core::py::{is_space as is_py_space, rstrip as py_rstrip, strip as py_strip};

/// Python truthiness of a JSON value (`null`, `false`, `0`, `0.0`, `""`, `[]`, `{}` are false).
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn float_repr_matches_python() {
        for (x, s) in [
            (100.0, "100.0"),
            (0.0001, "0.0001"),
            (1e-05, "1e-05"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.5e300, "1.5e+300"),
            (-0.0, "-0.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (123456.789, "123456.789"),
            (0.00012345, "0.00012345"),
            (2.5e-7, "2.5e-07"),
            (-12.0, "-12.0"),
            (0.33999999999999997, "0.33999999999999997"),
        ] {
            assert_eq!(float_repr(x), s, "{x}");
        }
    }

    #[test]
    fn dumps_like_python() {
        let v: Value = serde_json::from_str(r#"{"q": "缓存 TTL", "n": 3, "flag": true, "x": null, "f": 1.5, "e": 1e5, "c": "a\u0001\"\n"}"#).unwrap();
        assert_eq!(
            dumps(&v, DumpOptions::default()),
            "{\"q\": \"缓存 TTL\", \"n\": 3, \"flag\": true, \"x\": null, \"f\": 1.5, \"e\": 100000.0, \"c\": \"a\\u0001\\\"\\n\"}"
        );
        let v = json!({"b": [1, {}], "a": []});
        assert_eq!(
            dumps(
                &v,
                DumpOptions {
                    indent: Some(2),
                    ..Default::default()
                }
            ),
            "{\n  \"b\": [\n    1,\n    {}\n  ],\n  \"a\": []\n}"
        );
        assert_eq!(
            dumps(
                &json!("é"),
                DumpOptions {
                    ensure_ascii: true,
                    ..Default::default()
                }
            ),
            "\"\\u00e9\""
        );
    }

    #[test]
    fn str_like_python() {
        assert_eq!(py_str(&json!(["p", 1, null, true])), "['p', 1, None, True]");
        assert_eq!(
            py_str(&json!({"a": 1, "b": [1, 2]})),
            "{'a': 1, 'b': [1, 2]}"
        );
        assert_eq!(py_str(&json!(1.5)), "1.5");
        assert_eq!(py_repr_str("it's"), "\"it's\"");
        assert_eq!(py_repr_str("a\u{a0}b\u{7}"), "'a\\xa0b\\x07'");
        assert_eq!(py_strip("\u{1c} x \u{3000}"), "x");
    }
}
