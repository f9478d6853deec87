//! Python formatting rules rag-quality-check's output depends on (spec section 13):
//! `repr(float)`, `repr(str)`, `{:g}`, `{:.0%}`, `round(x, 6)`, `textwrap`-free `shorten`, and
//! `json.dumps` string/float spelling.

use super::text::is_space;

/// Python `repr(float)` (also `str(float)` and `json.dumps` for finite floats); one definition
/// for the workspace, in `routeval_core::py`.
pub use routeval_core::py::float_repr;

/// `json.dumps(round(x, 6))`: the shortest repr of a value with at most 6 decimals, written
/// straight from its integer millionths when it is in [1e-4, 1e9) (or zero), else via
/// [`float_repr`].
pub fn json_round6(x: f64) -> String {
    let mut out = String::with_capacity(16);
    json_round6_into(&mut out, x);
    out
}

/// [`json_round6`] appended to `out` (no allocation on the common path: zero and values in
/// [1e-4, 1e9)).
pub fn json_round6_into(out: &mut String, x: f64) {
    let r = round6(x);
    let a = r.abs();
    if r == 0.0 {
        // repr(0.0) / repr(-0.0).
        out.push_str(if r.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    if !(1e-4..1e9).contains(&a) {
        out.push_str(&json_float(r));
        return;
    }
    // r is the double nearest to n / 10^6; that decimal (trailing zeros dropped) is its
    // shortest round-trip spelling, since no shorter decimal lies as close.
    let n = (a * 1e6).round() as u64;
    let (int, frac) = (n / 1_000_000, n % 1_000_000);
    if r < 0.0 {
        out.push('-');
    }
    out.push_str(itoa::Buffer::new().format(int));
    out.push('.');
    if frac == 0 {
        out.push('0');
    } else {
        let mut digits = [b'0'; 6];
        let mut f = frac;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (f % 10) as u8;
            f /= 10;
        }
        let end = digits.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1);
        out.extend(digits[..end].iter().map(|&d| d as char));
    }
}

/// `json.dumps` spelling of a float: `repr`, with `NaN`, `Infinity`, `-Infinity` (one
/// definition, `routeval_core::py::json_float`).
pub use routeval_core::py::json_float;

/// Python `format(x, "g")`: 6 significant digits, trailing zeros removed, exponent form
/// below 1e-4 or from 1e6 (`1e-05`, `1e+06`).
pub fn fmt_g(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{:.5e}", x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        let fixed = format!("{:.*}", (5 - exp) as usize, x);
        strip_zeros(&fixed)
    } else {
        let m = strip_zeros(mant);
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{esign}{:02}", exp.abs())
    }
}

fn strip_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// Python `format(x, ".0%")`: `x * 100` in f64, then 0 decimals (ties to even), then `%`.
pub fn pct0(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Python `round(x, 6)`: correctly rounded to 6 decimals, ties to even on the exact binary
/// value (`0.0078125` → `0.007812`).
pub fn round6(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    // Fast path: when x·1e6 is not near a rounding boundary, rounding it to an integer n
    // decides the same digit as exact decimal rounding, and n / 1e6 (both exact) is the
    // correctly rounded f64 of the 6-decimal result. Near a tie, format exactly.
    let y = x * 1e6;
    if y.abs() < 1e9 {
        let frac = y - y.floor();
        if (frac - 0.5).abs() > 1e-6 {
            return y.round() / 1e6;
        }
    }
    format!("{:.6}", x).parse().unwrap_or(x)
}

/// Python `repr(str)` (one definition, in `routeval_core::py`, on CPython 3.11's Unicode 14
/// printable table).
pub use routeval_core::py::repr_str;

/// rag-quality-check's `_shorten(text, width)`: whitespace runs collapsed to one space (ends
/// trimmed), then cut to `width - 3` code points plus `...` when longer than `width`.
pub fn shorten(text: &str, width: usize) -> String {
    let mut joined = String::with_capacity(text.len());
    for word in text.split(is_space).filter(|w| !w.is_empty()) {
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(word);
    }
    if joined.chars().count() <= width {
        return joined;
    }
    let mut cut: String = joined.chars().take(width.saturating_sub(3)).collect();
    cut.push_str("...");
    cut
}

/// Append `s` as a JSON string the way `json.dumps(..., ensure_ascii=False)` writes it
/// ([`routeval_core::py::write_json_str`]).
#[inline]
pub fn json_str_into(out: &mut String, s: &str) {
    routeval_core::py::write_json_str(out, s, false);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_spellings() {
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(1234567890123456.0), "1234567890123456.0");
        assert_eq!(float_repr(0.0001), "0.0001");
        assert_eq!(float_repr(0.00001), "1e-05");
        assert_eq!(float_repr(5.5e-5), "5.5e-05");
        assert_eq!(float_repr(2.5), "2.5");
        assert_eq!(float_repr(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(fmt_g(0.5), "0.5");
        assert_eq!(fmt_g(1.0), "1");
        assert_eq!(fmt_g(0.123456789), "0.123457");
        assert_eq!(fmt_g(1e-5), "1e-05");
        assert_eq!(fmt_g(0.0001), "0.0001");
        assert_eq!(pct0(0.125), "12%");
        assert_eq!(pct0(0.015), "2%");
        assert_eq!(round6(0.0078125), 0.007812);
        assert_eq!(round6(3.0 / 128.0), 0.023438);
        for i in 0..20000 {
            let x = (i as f64) / 7919.0 + 1e-3 / ((i % 13 + 1) as f64);
            assert_eq!(json_round6(x), json_float(round6(x)), "{x}");
            assert_eq!(
                json_round6(x / 3000.0),
                json_float(round6(x / 3000.0)),
                "{x}"
            );
            assert_eq!(round6(x), format!("{x:.6}").parse::<f64>().unwrap(), "{x}");
        }
        let mut s = String::new();
        json_str_into(&mut s, "a\"b\\c\n\u{1}é");
        assert_eq!(s, "\"a\\\"b\\\\c\\n\\u0001é\"");
        assert_eq!(repr_str("what's up"), "\"what's up\"");
        assert_eq!(
            repr_str("say \"hi\" and 'bye'"),
            "'say \"hi\" and \\'bye\\''"
        );
        assert_eq!(
            repr_str("soft\u{ad}hyphen zero\u{200b}width"),
            "'soft\\xadhyphen zero\\u200bwidth'"
        );
        assert_eq!(shorten("  a \t b\n", 60), "a b");
        assert_eq!(shorten("abcdefgh", 6), "abc...");
    }
}
