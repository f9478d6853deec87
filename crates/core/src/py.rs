//! Python text forms that several reference implementations bake into their numbers.
//!
//! The references (rag-quality-check, CommonRouterBench, flexeval, GQR-Bench) are Python, and
//! some of their outputs depend on how CPython 3.11 spells a value: token counts of
//! `json.dumps` texts, group labels made with `str()`, summary lines. This module holds the
//! spellings shared by more than one crate, so there is one definition to test.

use std::fmt::Write;

/// CPython's `repr(x)` (and `str(x)`) of a float.
///
/// The shortest decimal digits that round-trip (the same digits as Rust's `{:e}`), written in
/// fixed notation when the decimal exponent is in -4..16 (`100.0`, `0.0001`,
/// `1234567890123456.0`) and in scientific notation otherwise, with a signed two-digit-minimum
/// exponent (`1e-05`, `1e+16`, `1.5e+300`). Special values: `nan`, `inf`, `-inf`, `-0.0`.
/// Source: CPython `float_repr` (`Objects/floatobject.c`, `PyOS_double_to_string` with
/// `'r'` mode).
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Shortest round-trip digits in scientific form: "d.ddde[-]E".
    let sci = format!("{:e}", x.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let mut out = String::with_capacity(digits.len() + 8);
    if x < 0.0 {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = (exp + 1) as usize;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::float_repr;

    #[test]
    fn matches_cpython_repr() {
        // Values printed by CPython 3.11 `repr(float(...))`.
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (100.0, "100.0"),
            (2.5, "2.5"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (5.5e-5, "5.5e-05"),
            (1234567890123456.0, "1234567890123456.0"),
            (1e16, "1e+16"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (1.5e300, "1.5e+300"),
            (5e-324, "5e-324"),
            (0.30000000000000004, "0.30000000000000004"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ];
        for (x, want) in cases {
            assert_eq!(float_repr(x), want, "repr({x:?})");
        }
    }

    #[test]
    fn round_trips() {
        for x in [
            0.1,
            1.0 / 3.0,
            2.0f64.powi(60),
            1e-7,
            123.456e-10,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(float_repr(x).parse::<f64>().unwrap(), x);
        }
    }
}
