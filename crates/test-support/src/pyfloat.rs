//! The `{"repr": …, "hex": …}` spelling of a float used by the GQR goldens
//! (`../shared/golden/gqr/…`): CPython's `repr(x)` next to `x.hex()`, so a value can be
//! compared bit for bit as JSON. Written here from Python's documented formats, independently
//! of the product.

use serde_json::{Map, Value};

/// CPython's `float.hex(x)`: `0x1.<13 hex digits>p<exp>` for normal numbers,
/// `0x0.<13 hex digits>p-1022` for subnormals, `0x0.0p+0` for zero, `inf`/`-inf`/`nan`.
pub fn float_hex(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0x0.0p+0");
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let mant = bits & ((1u64 << 52) - 1);
    let (lead, e) = if exp == 0 {
        (0, -1022)
    } else {
        (1, exp - 1023)
    };
    let esign = if e < 0 { '-' } else { '+' };
    format!("{sign}0x{lead}.{mant:013x}p{esign}{}", e.unsigned_abs())
}

/// CPython's `repr(x)` of a float (`nan`, `inf`, `-inf` for the non-finite ones).
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        crate::pydump::float_repr(x)
    }
}

/// `{"repr": repr(x), "hex": x.hex()}`, in that key order (the goldens' spelling).
pub fn repr_hex(x: f64) -> Value {
    let mut m = Map::new();
    m.insert("repr".into(), Value::String(float_repr(x)));
    m.insert("hex".into(), Value::String(float_hex(x)));
    Value::Object(m)
}

/// `v` with every float number replaced by [`repr_hex`] (integers, strings, nulls and the
/// structure kept), for comparing a product's JSON output with a `repr`/`hex` golden.
pub fn floats_to_repr_hex(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => repr_hex(n.as_f64().unwrap_or(f64::NAN)),
        Value::Array(a) => Value::Array(a.iter().map(floats_to_repr_hex).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), floats_to_repr_hex(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected strings printed by CPython 3.11 (`x.hex()`, `repr(x)`).
    #[test]
    fn matches_cpython() {
        let cases: [(f64, &str, &str); 10] = [
            (1.0, "0x1.0000000000000p+0", "1.0"),
            (0.75, "0x1.8000000000000p-1", "0.75"),
            (0.1, "0x1.999999999999ap-4", "0.1"),
            (-2.5, "-0x1.4000000000000p+1", "-2.5"),
            (0.0, "0x0.0p+0", "0.0"),
            (-0.0, "-0x0.0p+0", "-0.0"),
            (5e-324, "0x0.0000000000001p-1022", "5e-324"),
            (
                f64::MAX,
                "0x1.fffffffffffffp+1023",
                "1.7976931348623157e+308",
            ),
            (1e16, "0x1.1c37937e08000p+53", "1e+16"),
            (f64::NAN, "nan", "nan"),
        ];
        for (x, hex, repr) in cases {
            assert_eq!(float_hex(x), hex, "{x:e}");
            assert_eq!(float_repr(x), repr, "{x:e}");
        }
        assert_eq!(float_hex(f64::NEG_INFINITY), "-inf");
        assert_eq!(
            repr_hex(0.5).to_string(),
            r#"{"repr":"0.5","hex":"0x1.0000000000000p-1"}"#
        );
    }
}
