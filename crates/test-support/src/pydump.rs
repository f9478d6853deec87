//! CPython 3.11's `json.dumps` text of a parsed JSON value, written here independently of the
//! product's writers so a byte-for-byte check does not compare the product with itself.
//!
//! Rules (CPython `Lib/json/encoder.py`): separators `", "` / `": "` without indent, `","` +
//! newline with one (nested levels indented by `indent` spaces; empty containers stay `[]` and
//! `{}`); floats as `float.__repr__` (shortest round-trip digits, fixed notation for decimal
//! exponents -4..16, else `1e-05` / `1.5e+16`); ints as written; strings escape `"`, `\`,
//! `\n`, `\r`, `\t`, `\b`, `\f` and other controls as `\u00XX`, and with `ensure_ascii` every
//! character outside `' '..='~'` as `\uXXXX` (surrogate pairs above U+FFFF).

use serde_json::Value;
use std::fmt::Write;

/// `json.dumps(v, indent=indent, ensure_ascii=ensure_ascii)`.
pub fn dumps(v: &Value, indent: Option<usize>, ensure_ascii: bool) -> String {
    let mut out = String::new();
    write_value(&mut out, v, indent, 0, ensure_ascii);
    out
}

/// CPython's `repr(x)` of a finite float (`nan`/`inf` never reach here from parsed JSON).
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sci = format!("{:e}", x.abs());
    let (mant, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let sign = if x < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let body = if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                format!("{digits}{}.0", "0".repeat(int_len - digits.len()))
            } else {
                format!("{}.{}", &digits[..int_len], &digits[int_len..])
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        };
        format!("{sign}{body}")
    } else {
        let m = if digits.len() == 1 {
            digits.clone()
        } else {
            format!("{}.{}", &digits[..1], &digits[1..])
        };
        let es = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{es}{:02}", exp.abs())
    }
}

fn write_str(out: &mut String, s: &str, ensure_ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if ensure_ascii && !(' '..='~').contains(&c) => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn newline(out: &mut String, indent: usize, level: usize) {
    out.push('\n');
    out.push_str(&" ".repeat(indent * level));
}

fn write_value(out: &mut String, v: &Value, indent: Option<usize>, level: usize, ascii: bool) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if n.is_f64() => out.push_str(&float_repr(n.as_f64().unwrap_or(0.0))),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_str(out, s, ascii),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(m) if m.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                sep(out, i, indent, level + 1);
                write_value(out, x, indent, level + 1, ascii);
            }
            close(out, indent, level);
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                sep(out, i, indent, level + 1);
                write_str(out, k, ascii);
                out.push_str(": ");
                write_value(out, x, indent, level + 1, ascii);
            }
            close(out, indent, level);
            out.push('}');
        }
    }
}

fn sep(out: &mut String, i: usize, indent: Option<usize>, level: usize) {
    match indent {
        Some(n) => {
            if i > 0 {
                out.push(',');
            }
            newline(out, n, level);
        }
        None if i > 0 => out.push_str(", "),
        None => {}
    }
}

fn close(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(n) = indent {
        newline(out, n, level);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_cpython() {
        // Values and texts from CPython 3.11 `repr`.
        for (x, s) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (1.5e300, "1.5e+300"),
            (-2.5e-7, "-2.5e-07"),
            (0.333333, "0.333333"),
            (-0.0, "-0.0"),
            (123.456, "123.456"),
        ] {
            assert_eq!(float_repr(x), s, "{x}");
        }
    }

    #[test]
    fn dumps_matches_cpython() {
        let v: Value = serde_json::from_str(
            r#"{"a": [1, 2.0, "é\n\u0001"], "b": {}, "c": [], "d": {"e": null}}"#,
        )
        .unwrap();
        // json.dumps(v, indent=2, ensure_ascii=False)
        assert_eq!(
            dumps(&v, Some(2), false),
            "{\n  \"a\": [\n    1,\n    2.0,\n    \"é\\n\\u0001\"\n  ],\n  \"b\": {},\n  \"c\": [],\n  \"d\": {\n    \"e\": null\n  }\n}"
        );
        // json.dumps(v)
        assert_eq!(
            dumps(&v, None, true),
            r#"{"a": [1, 2.0, "\u00e9\n\u0001"], "b": {}, "c": [], "d": {"e": null}}"#
        );
        let emoji: Value = serde_json::from_str(r#""😀\u007f""#).unwrap();
        assert_eq!(dumps(&emoji, None, true), r#""\ud83d\ude00\u007f""#);
    }
}
