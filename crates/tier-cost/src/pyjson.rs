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

use serde_json::{Map, Number, Value};

/// Python's `repr(x)` for a finite or non-finite `f64` (defined once in `routeval_core::py`).
pub use routeval_core::py::float_repr;

/// The JSON number text Python writes for `n` (ints exact, floats as [`float_repr`] with
/// `NaN`/`Infinity`/`-Infinity` for non-finite values).
pub fn number_text(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    json_float(f)
}

fn json_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else {
        float_repr(f)
    }
}

/// Options of [`dumps`], named after `json.dumps`'s keyword arguments.
#[derive(Debug, Clone, Copy, Default)]
pub struct DumpOptions {
    /// Escape every non-ASCII character as `\uXXXX` (surrogate pairs above U+FFFF).
    pub ensure_ascii: bool,
    /// Sort object keys (by code point) at every level.
    pub sort_keys: bool,
    /// Pretty-print with this many spaces per level (item separator `,` then newline).
    pub indent: Option<usize>,
}

/// `json.dumps(value, ...)` as CPython writes it.
pub fn dumps(value: &Value, opts: DumpOptions) -> String {
    let mut out = String::new();
    write_value(&mut out, value, opts, 0);
    out
}

/// Append `s` as a JSON string literal (Python's escaping rules) to `out`: the one
/// definition in `routeval-core`.
pub use routeval_core::py::write_json_str;

fn newline_indent(out: &mut String, indent: usize, level: usize) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', indent * level));
}

fn write_value(out: &mut String, v: &Value, opts: DumpOptions, level: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(n)),
        Value::String(s) => write_json_str(out, s, opts.ensure_ascii),
        Value::Array(a) => {
            if a.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(if opts.indent.is_some() { "," } else { ", " });
                }
                if let Some(ind) = opts.indent {
                    newline_indent(out, ind, level + 1);
                }
                write_value(out, x, opts, level + 1);
            }
            if let Some(ind) = opts.indent {
                newline_indent(out, ind, level);
            }
            out.push(']');
        }
        Value::Object(m) => {
            if m.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            let write_entry = |i: usize, k: &str, x: &Value, out: &mut String| {
                if i > 0 {
                    out.push_str(if opts.indent.is_some() { "," } else { ", " });
                }
                if let Some(ind) = opts.indent {
                    newline_indent(out, ind, level + 1);
                }
                write_json_str(out, k, opts.ensure_ascii);
                out.push_str(": ");
                write_value(out, x, opts, level + 1);
            };
            if opts.sort_keys {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                for (i, (k, x)) in entries.into_iter().enumerate() {
                    write_entry(i, k, x, out);
                }
            } else {
                for (i, (k, x)) in m.iter().enumerate() {
                    write_entry(i, k, x, out);
                }
            }
            if let Some(ind) = opts.indent {
                newline_indent(out, ind, level);
            }
            out.push('}');
        }
    }
}

/// Python's `str(x)` for a JSON value: strings as they are, everything else as `repr`.
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python's `repr(x)` for a JSON value (`None`, `True`, `'text'`, `[1, 2.5]`, `{'k': 'v'}`).
pub fn py_repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

fn write_repr(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::Number(n) => {
            if n.is_f64() {
                out.push_str(&float_repr(n.as_f64().unwrap_or(f64::NAN)));
            } else {
                out.push_str(&number_text(n));
            }
        }
        Value::String(s) => out.push_str(&py_repr_str(s)),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, x);
            }
            out.push(']');
        }
        Value::Object(m) => write_repr_map(out, m),
    }
}

fn write_repr_map(out: &mut String, m: &Map<String, Value>) {
    out.push('{');
    for (i, (k, x)) in m.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&py_repr_str(k));
        out.push_str(": ");
        write_repr(out, x);
    }
    out.push('}');
}

/// Python's `repr(s)` for a string (one definition, in `routeval_core::py`, exact for CPython
/// 3.11's Unicode 14 printable table).
pub use routeval_core::py::repr_str as py_repr_str;

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

/// Python's `str.isspace()` for one character (Unicode White_Space plus U+001C..U+001F).
pub fn is_py_space(c: char) -> bool {
    matches!(c as u32,
        0x09..=0x0d | 0x1c..=0x20 | 0x85 | 0xa0 | 0x1680 | 0x2000..=0x200a
        | 0x2028 | 0x2029 | 0x202f | 0x205f | 0x3000)
}

/// Python's `s.strip()` (no arguments): trims [`is_py_space`] characters at both ends.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// Python's `s.rstrip()` (no arguments).
pub fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(is_py_space)
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
