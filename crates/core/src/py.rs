//! Python text forms that several reference implementations bake into their numbers.
//!
//! The references (rag-quality-check, CommonRouterBench, flexeval, GQR-Bench) are Python, and
//! some of their outputs depend on how CPython 3.11 spells a value: token counts of
//! `json.dumps` texts, group labels made with `str()`, summary lines. This module holds the
//! spellings shared by more than one crate, so there is one definition to test, and numpy's
//! summation order ([`numpy_sum`]), which the GQR-Bench means depend on. The Unicode 14
//! character classes ([`is_printable`], [`is_py_word`]) are tables generated from CPython
//! 3.11.7's `unicodedata` 14.0.0 (`golden/rag/unicode14_tables.json`).

use crate::py_nonprintable::NONPRINTABLE_RANGES;
use crate::py_word::PY_WORD_RANGES;
use std::fmt::Write;

/// Whether `cp` lies in one of the sorted, disjoint, inclusive `ranges`.
fn in_ranges(ranges: &[(u32, u32)], cp: u32) -> bool {
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// CPython 3.11's `re` `\w` for `str` patterns (Unicode 14): `str.isalnum()` or `_`, i.e.
/// general category `L*` or `N*`, or `_`. Not Rust's `char::is_alphanumeric` (which adds
/// Other_Alphabetic marks) nor `regex`'s `\w` (marks, `Pc`, newer Unicode).
/// Source: CPython `_sre` `SRE_UNI_IS_WORD`; table checked exhaustively against CPython 3.11.7.
pub fn is_py_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    in_ranges(PY_WORD_RANGES, c as u32)
}

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
    // Shortest round-trip digits in scientific form: "d.ddde[-]E". Rust's shortest digits
    // may differ from CPython's in the last digit when two candidates of that length are
    // equally close (x = 642636967184855.25: Rust `...855.3`, CPython `...855.2`); CPython
    // takes the correctly rounded (half-even) value at that length, which is what Rust's exact
    // `{:.N$e}` formatting gives, and it round-trips whenever a string of that length does.
    let shortest = format!("{:e}", x.abs());
    let n_digits = shortest
        .split_once('e')
        .map_or(shortest.len(), |(m, _)| m.len())
        .saturating_sub(usize::from(shortest.contains('.')));
    let rounded = format!("{:.*e}", n_digits.saturating_sub(1), x.abs());
    let sci = if rounded.parse::<f64>() == Ok(x.abs()) {
        rounded
    } else {
        shortest
    };
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

/// numpy's float64 `add.reduce` over a contiguous array: pairwise summation with 8-way unrolled
/// blocks of up to 128 elements, the order `np.sum`, `np.average` and pandas' `Series.mean`
/// use. Sums in exactly that order, so means match numpy bit for bit; like numpy 2's
/// `np.sum`, the reduction starts from the identity `+0.0`, so an empty slice or one of
/// negative zeros sums to `0.0`. Source: numpy `pairwise_sum` (`loops_utils.h.src`).
pub fn numpy_sum(a: &[f64]) -> f64 {
    pairwise_sum(a) + 0.0
}

fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut s = -0.0;
        for &x in a {
            s += x;
        }
        s
    } else if n <= 128 {
        let mut r = [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]];
        let mut i = 8;
        while i < n - (n % 8) {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let n2 = (n / 2) - ((n / 2) % 8);
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// CPython 3.11's `str.isprintable()` for one character (Unicode 14 tables): false for the
/// categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs other than the ASCII space.
pub fn is_printable(c: char) -> bool {
    let cp = c as u32;
    if (0x20..0x7f).contains(&cp) {
        return true;
    }
    !in_ranges(NONPRINTABLE_RANGES, cp)
}

/// CPython's `repr(s)` of a string: single quotes unless the text contains `'` and no `"`;
/// `\\`, `\t`, `\n`, `\r` and the chosen quote escaped; characters that are not printable
/// ([`is_printable`]) as `\xNN`, `\uNNNN` or `\UNNNNNNNN`. Source: CPython
/// `unicode_repr` (`Objects/unicodeobject.c`).
pub fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_printable(c) => {
                let cp = c as u32;
                if cp <= 0xff {
                    let _ = write!(out, "\\x{cp:02x}");
                } else if cp <= 0xffff {
                    let _ = write!(out, "\\u{cp:04x}");
                } else {
                    let _ = write!(out, "\\U{cp:08x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// The first position at or after `i` holding `"`, `\\` or a control character (below
/// U+0020), else `s.len()`: where a JSON string's plain run ends, for readers (the closing
/// quote, an escape, an invalid character) and for writers (what must be escaped). Eight
/// bytes at a time (the classic has-zero-byte and
/// has-byte-less-than word tricks; a flag can be wrong only above a true one, so the lowest
/// flag is the first such byte), then byte by byte.
#[inline(always)]
pub fn json_plain_end(s: &[u8], mut i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = s.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let q = w ^ (LO * b'"' as u64);
        let b = w ^ (LO * b'\\' as u64);
        let flags = ((q.wrapping_sub(LO) & !q)
            | (b.wrapping_sub(LO) & !b)
            | (w.wrapping_sub(LO * 0x20) & !w))
            & HI;
        if flags != 0 {
            return i + (flags.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < s.len() && s[i] != b'"' && s[i] != b'\\' && s[i] >= 0x20 {
        i += 1;
    }
    i
}

/// Append `s` to `out` as CPython 3.11's `json.dumps` writes a string (its `py_encode_basestring`
/// / `py_encode_basestring_ascii`): `"` and `\\` escaped, `\n \r \t \b \f` by name, other
/// control characters as `\u00XX`; with `ensure_ascii` also every character outside
/// `' '..='~'` (DEL included) as `\uXXXX`, astral ones as a UTF-16 surrogate pair.
///
/// Used for token counts of `json.dumps` texts (tier-cost), content hashes (bench-data) and
/// `to_dict` output (rag), so all three escape exactly alike.
pub fn write_json_str(out: &mut String, s: &str, ensure_ascii: bool) {
    fn named(b: u8) -> Option<&'static str> {
        Some(match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            _ => return None,
        })
    }
    out.push('"');
    if ensure_ascii {
        for c in s.chars() {
            if let Some(e) = u8::try_from(c).ok().and_then(named) {
                out.push_str(e);
            } else if (' '..='~').contains(&c) {
                out.push(c);
            } else {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    } else {
        // Runs of bytes that need no escape are found a word at a time and copied at once
        // (the `to_dict` hot path).
        let bytes = s.as_bytes();
        let mut start = 0;
        loop {
            let i = json_plain_end(bytes, start);
            out.push_str(&s[start..i]);
            let Some(&b) = bytes.get(i) else { break };
            match named(b) {
                Some(e) => out.push_str(e),
                None => {
                    let _ = write!(out, "\\u{b:04x}");
                }
            }
            start = i + 1;
        }
    }
    out.push('"');
}

/// CPython 3.11's `str.isspace()` for one character: Unicode White_Space (bidirectional
/// classes WS, B, S) plus U+001C..U+001F, i.e. `\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f `, U+0085,
/// U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F and U+3000. It is also
/// what `str.split()`/`str.strip()` without arguments and `re`'s `\s` for `str` patterns treat
/// as whitespace. Source: CPython `Py_UNICODE_ISSPACE` (`Objects/unicodetype_db.h`, Unicode 14).
pub fn is_space(c: char) -> bool {
    matches!(c,
        '\u{9}'..='\u{d}' | '\u{1c}'..='\u{20}' | '\u{85}' | '\u{a0}' | '\u{1680}'
        | '\u{2000}'..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}')
}

/// CPython's `s.strip()` (no argument): trims [`is_space`] characters at both ends.
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// CPython's `s.rstrip()` (no argument): trims [`is_space`] characters at the end.
pub fn rstrip(s: &str) -> &str {
    s.trim_end_matches(is_space)
}

/// How CPython's `json.dumps` spells a float: [`float_repr`] for finite values, `NaN`,
/// `Infinity` and `-Infinity` otherwise (`allow_nan=True`, the default). Source: CPython
/// `Lib/json/encoder.py` `floatstr`.
pub fn json_float(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        float_repr(x)
    }
}

/// The text CPython's `json.dumps` (and `str()`/`repr()` of the `json.loads` value) writes for
/// a JSON number: integers exactly (also beyond 64 bits, when `serde_json`'s
/// `arbitrary_precision` keeps their text), floats as [`json_float`].
pub fn number_text(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let text = n.to_string();
    let integral = !text.is_empty()
        && text
            .bytes()
            .enumerate()
            .all(|(i, b)| b.is_ascii_digit() || (i == 0 && b == b'-'));
    if integral {
        // Only reachable with `arbitrary_precision`: a Python int beyond 64 bits.
        return text;
    }
    json_float(n.as_f64().unwrap_or(f64::NAN))
}

/// The prefix of the string that stands for a JSON integer beyond 64 bits (see
/// [`mark_big_ints`]): two NUL characters, then `routeval-big-int:`, then the integer's digits
/// (with its `-`). [`dumps`], [`str_value`] and [`repr_value`] write such a string as the bare
/// integer, as CPython writes the `int` that `json.loads` gives for it.
pub const BIG_INT_MARKER: &str = "\u{0}\u{0}routeval-big-int:";

/// The integer text of a [`BIG_INT_MARKER`] string, or `None` for any other string.
pub fn big_int_text(s: &str) -> Option<&str> {
    s.strip_prefix(BIG_INT_MARKER)
}

/// A JSON text cannot be marked by [`mark_big_ints`]: it already holds the marker's spelling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the text contains routeval's reserved big-integer marker (\\u0000\\u0000routeval-big-int:)"
)]
pub struct ReservedMarker;

/// Python's `json.loads` keeps an integer of any size (`100000000000000000000` stays an
/// `int`, printed with all its digits), while `serde_json` without `arbitrary_precision`
/// turns one beyond 64 bits into the nearest float (printed `1e+20`). For a JSON text that
/// holds such integers (outside strings; below `i64::MIN` or above `u64::MAX`), this returns
/// the text with each one replaced by a JSON string `BIG_INT_MARKER + digits`, which the
/// Python-text writers of this module print as the bare integer; `None` when there is none
/// (the text is then used as it is). Fractions and exponents (`1.0`, `1e20`) are floats in
/// Python too and are left alone.
///
/// # Errors
/// [`ReservedMarker`] when the text already spells the marker (`\u0000\u0000routeval-big-int:`
/// inside a string), so that a marker can only come from this function.
pub fn mark_big_ints(text: &str) -> Result<Option<String>, ReservedMarker> {
    // Refused with or without big integers: a spelled marker would otherwise come back out of
    // [`unmark_big_ints`] as a bare number (or, after an escaped quote, as broken JSON).
    if text.contains("\\u0000\\u0000routeval-big-int:") {
        return Err(ReservedMarker);
    }
    let b = text.as_bytes();
    // Fast path: no run of 19+ digits, no integer beyond 64 bits.
    let mut run = 0usize;
    let mut long_run = false;
    for &c in b {
        if c.is_ascii_digit() {
            run += 1;
            if run >= 19 {
                long_run = true;
                break;
            }
        } else {
            run = 0;
        }
    }
    if !long_run {
        return Ok(None);
    }
    let mut out: Option<String> = None;
    let mut copied = 0usize;
    let mut i = 0usize;
    while i < b.len() {
        match b[i] {
            b'"' => {
                // Skip the string literal (escapes included).
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            c if c == b'-' || c.is_ascii_digit() => {
                let start = i;
                let neg = c == b'-';
                if neg {
                    i += 1;
                }
                let digits_start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let digits = &text[digits_start..i];
                let mut float = false;
                while i < b.len() && matches!(b[i], b'.' | b'e' | b'E' | b'+' | b'-' | b'0'..=b'9')
                {
                    float = true;
                    i += 1;
                }
                let limit = if neg {
                    "9223372036854775808"
                } else {
                    "18446744073709551615"
                };
                let big = !float
                    && (digits.len() > limit.len()
                        || (digits.len() == limit.len() && digits > limit));
                if big {
                    let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 64));
                    o.push_str(&text[copied..start]);
                    o.push_str("\"\\u0000\\u0000routeval-big-int:");
                    o.push_str(&text[start..i]);
                    o.push('"');
                    copied = i;
                }
            }
            _ => i += 1,
        }
    }
    Ok(out.map(|mut o| {
        o.push_str(&text[copied..]);
        o
    }))
}

/// JSON text written by `serde_json` from values that went through [`mark_big_ints`], with
/// each marker string (`"\u0000\u0000routeval-big-int:DIGITS"`) turned back into the bare
/// integer `DIGITS`, as Python's `json.dumps` writes the `int`. Text without markers is
/// returned as it is (borrowed).
pub fn unmark_big_ints(json_text: &str) -> std::borrow::Cow<'_, str> {
    const SPELLED: &str = "\"\\u0000\\u0000routeval-big-int:";
    if !json_text.contains(SPELLED) {
        return std::borrow::Cow::Borrowed(json_text);
    }
    let mut out = String::with_capacity(json_text.len());
    let mut rest = json_text;
    while let Some(at) = rest.find(SPELLED) {
        out.push_str(&rest[..at]);
        let after = &rest[at + SPELLED.len()..];
        let end = after
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(after.len());
        if after[end..].starts_with('"') {
            out.push_str(&after[..end]);
            rest = &after[end + 1..];
        } else {
            // Not a marker after all (cannot happen for serde_json output): keep it.
            out.push_str(SPELLED);
            rest = after;
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Whether `value` holds [`BIG_INT_MARKER`] anywhere in a string value or an object key, at
/// any depth: when it holds none, [`unmark_big_ints`] leaves its `serde_json` text as it is, so
/// the text can be streamed to its destination as it is written. (Anywhere, not only at the
/// start: [`unmark_big_ints`] works on the text and also rewrites a marker that follows an
/// escaped quote inside a longer string.)
pub fn holds_big_int_marker(value: &serde_json::Value) -> bool {
    marker_below(vec![value])
}

/// [`holds_big_int_marker`] for an object given as its map (a report's top level).
pub fn map_holds_big_int_marker(map: &serde_json::Map<String, serde_json::Value>) -> bool {
    map.keys().any(|k| k.contains(BIG_INT_MARKER)) || marker_below(map.values().collect())
}

/// The walk behind [`holds_big_int_marker`]: `todo` and everything below them.
fn marker_below(mut todo: Vec<&serde_json::Value>) -> bool {
    use serde_json::Value;
    while let Some(v) = todo.pop() {
        match v {
            Value::String(s) if s.contains(BIG_INT_MARKER) => return true,
            Value::Array(a) => todo.extend(a.iter()),
            Value::Object(m) => {
                if m.keys().any(|k| k.contains(BIG_INT_MARKER)) {
                    return true;
                }
                todo.extend(m.values());
            }
            _ => {}
        }
    }
    false
}

/// [`unmark_big_ints`] on an owned text: the same `String` back (no copy) when it holds no
/// marker, as nearly every text does (a copy of an 80 MB `crb eval --json` summary cost more
/// than writing it).
pub fn unmark_big_ints_owned(json_text: String) -> String {
    match unmark_big_ints(&json_text) {
        std::borrow::Cow::Borrowed(_) => json_text,
        std::borrow::Cow::Owned(o) => o,
    }
}

/// Options of [`dumps`], named after `json.dumps`'s keyword arguments (defaults:
/// `ensure_ascii=False` here, unlike Python; `sort_keys=False`; `indent=None`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DumpOptions {
    /// Escape every non-ASCII character as `\uXXXX` (surrogate pairs above U+FFFF).
    pub ensure_ascii: bool,
    /// Sort object keys (by code point) at every level.
    pub sort_keys: bool,
    /// Pretty-print with this many spaces per level (item separator `,` then a newline).
    pub indent: Option<usize>,
}

/// CPython 3.11's `json.dumps(value, ensure_ascii=…, sort_keys=…, indent=…)` with the default
/// separators (`", "` and `": "`; `","` before a newline when indenting), floats as
/// [`json_float`], strings as [`write_json_str`]. Key order is the map's order (use
/// `serde_json`'s `preserve_order` to keep the file's). Source: CPython `Lib/json/encoder.py`.
pub fn dumps(value: &serde_json::Value, opts: DumpOptions) -> String {
    let mut out = String::new();
    write_dumps(&mut out, value, opts, 0);
    out
}

/// [`dumps`] appended to `out` (no text of its own: for callers that write one JSON text out
/// of several parts).
pub fn dumps_into(out: &mut String, value: &serde_json::Value, opts: DumpOptions) {
    write_dumps(out, value, opts, 0);
}

fn newline_indent(out: &mut String, indent: usize, level: usize) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', indent * level));
}

fn write_dumps(out: &mut String, v: &serde_json::Value, opts: DumpOptions, level: usize) {
    use serde_json::Value;
    let sep = if opts.indent.is_some() { "," } else { ", " };
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(n)),
        Value::String(s) => match big_int_text(s) {
            Some(digits) => out.push_str(digits),
            None => write_json_str(out, s, opts.ensure_ascii),
        },
        Value::Array(a) => {
            if a.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                if let Some(ind) = opts.indent {
                    newline_indent(out, ind, level + 1);
                }
                write_dumps(out, x, opts, level + 1);
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
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            if opts.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (i, (k, x)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                if let Some(ind) = opts.indent {
                    newline_indent(out, ind, level + 1);
                }
                write_json_str(out, k, opts.ensure_ascii);
                out.push_str(": ");
                write_dumps(out, x, opts, level + 1);
            }
            if let Some(ind) = opts.indent {
                newline_indent(out, ind, level);
            }
            out.push('}');
        }
    }
}

/// CPython's `str(x)` of the value `json.loads` gives for a JSON value: strings as they are,
/// everything else as [`repr_value`] (`None`, `True`, `1e-05`, `[1, 'a']`, `{'k': None}`).
pub fn str_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => big_int_text(s).unwrap_or(s).to_string(),
        other => repr_value(other),
    }
}

/// CPython's `repr(x)` of the value `json.loads` gives for a JSON value: `None`, `True`/`False`,
/// ints exactly, floats as [`float_repr`] (`nan`, `inf`), strings as [`repr_str`], lists as
/// `[a, b]`, dicts as `{'k': v}` in the map's order.
pub fn repr_value(v: &serde_json::Value) -> String {
    let mut out = String::new();
    write_repr_value(&mut out, v);
    out
}

fn write_repr_value(out: &mut String, v: &serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::Number(n) => {
            let t = number_text(n);
            // json_float's spellings are JSON's; repr's are Python's.
            match t.as_str() {
                "NaN" => out.push_str("nan"),
                "Infinity" => out.push_str("inf"),
                "-Infinity" => out.push_str("-inf"),
                _ => out.push_str(&t),
            }
        }
        Value::String(s) => match big_int_text(s) {
            Some(digits) => out.push_str(digits),
            None => out.push_str(&repr_str(s)),
        },
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr_value(out, x);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&repr_str(k));
                out.push_str(": ");
                write_repr_value(out, x);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The word-at-a-time scan stops where the byte loop does, from any start, on
        /// bytes dense in quotes, backslashes, control characters and high bytes.
        #[test]
        fn plain_end_is_the_byte_loop(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(vec![b'"', b'\\', 0x00, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xa0, 0xff]),
                    proptest::num::u8::ANY,
                    b'a'..=b'z',
                ],
                0..64,
            ),
            start in 0usize..64,
        ) {
            let start = start.min(bytes.len());
            let mut want = start;
            while want < bytes.len() && bytes[want] != b'"' && bytes[want] != b'\\' && bytes[want] >= 0x20 {
                want += 1;
            }
            proptest::prop_assert_eq!(json_plain_end(&bytes, start), want);
        }
    }

    #[test]
    fn big_int_markers_are_found_at_any_depth_and_only_there() {
        let marked = mark_big_ints(r#"{"a": [1, {"b": 100000000000000000000}]}"#)
            .unwrap()
            .expect("has a big int");
        let v: serde_json::Value = serde_json::from_str(&marked).unwrap();
        assert!(holds_big_int_marker(&v));
        let key = serde_json::json!({"x": [{"\u{0}\u{0}routeval-big-int:7": 1}]});
        assert!(holds_big_int_marker(&key));
        // Inside a longer string (after a quote, which the text escapes): the text-level
        // unmarking rewrites it, so it counts.
        let inner = serde_json::json!(["say \"\u{0}\u{0}routeval-big-int:12"]);
        assert!(holds_big_int_marker(&inner));
        let t = serde_json::to_string(&inner).unwrap();
        assert_ne!(unmark_big_ints_owned(t.clone()), t);
        for plain in [
            serde_json::json!({"a": [1, "routeval-big-int:5", {"b": "\u{0}x"}]}),
            serde_json::json!("100000000000000000000"),
            serde_json::json!(null),
        ] {
            assert!(!holds_big_int_marker(&plain), "{plain}");
            // Nothing to unmark in its text either: streaming it writes the same bytes.
            let t = serde_json::to_string(&plain).unwrap();
            assert_eq!(unmark_big_ints_owned(t.clone()), t);
        }
        assert_eq!(
            unmark_big_ints_owned(serde_json::to_string(&v).unwrap()),
            r#"{"a":[1,{"b":100000000000000000000}]}"#
        );
    }
    /// CPython 3.11: `json.dumps(json.loads(T))`, `str(json.loads(T))` for texts with
    /// integers beyond 64 bits (and the 64-bit edges, which need no marking).
    #[test]
    fn big_ints_keep_their_digits() {
        use super::{DumpOptions, dumps, mark_big_ints, repr_value, str_value};
        for (text, dumped, str_form) in [
            (
                r#"{"n": 100000000000000000000, "s": "12345678901234567890123"}"#,
                r#"{"n": 100000000000000000000, "s": "12345678901234567890123"}"#,
                "{'n': 100000000000000000000, 's': '12345678901234567890123'}",
            ),
            (
                "[-9223372036854775809, 18446744073709551616, 1.5e20, 123456789012345678901.5]",
                "[-9223372036854775809, 18446744073709551616, 1.5e+20, 1.2345678901234568e+20]",
                "[-9223372036854775809, 18446744073709551616, 1.5e+20, 1.2345678901234568e+20]",
            ),
            (
                r#"{"a\"b": [99999999999999999999999999999999]}"#,
                r#"{"a\"b": [99999999999999999999999999999999]}"#,
                "{'a\"b': [99999999999999999999999999999999]}",
            ),
        ] {
            let marked = mark_big_ints(text).unwrap().expect("has big ints");
            let v: serde_json::Value = serde_json::from_str(&marked).unwrap();
            assert_eq!(dumps(&v, DumpOptions::default()), dumped, "{text}");
            assert_eq!(str_value(&v), str_form, "{text}");
            assert_eq!(repr_value(&v), str_form, "{text}");
        }
        // At the edges of 64 bits serde_json keeps integers itself: nothing to mark.
        for text in [
            "[-9223372036854775808, 18446744073709551615, 0, -0]",
            r#"{"s": "100000000000000000000"}"#,
            "[1.00000000000000000000001, 100000000000000000000e0]",
        ] {
            assert_eq!(mark_big_ints(text).unwrap(), None, "{text}");
        }
        // serde_json's text of a marked value, turned back: the bare integers.
        let marked = mark_big_ints(r#"{"n": [100000000000000000000, "x"]}"#)
            .unwrap()
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&marked).unwrap();
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(
            super::unmark_big_ints(&text),
            r#"{"n":[100000000000000000000,"x"]}"#
        );
        // The marker's own spelling cannot come from input.
        assert!(
            mark_big_ints(r#"["\u0000\u0000routeval-big-int:1", 100000000000000000000]"#).is_err()
        );
        // Without any big integer too (the fast path once let it through), and after a quote.
        for text in [
            r#"["\u0000\u0000routeval-big-int:1"]"#,
            r#"{"m": "say \"\u0000\u0000routeval-big-int:12"}"#,
        ] {
            assert!(mark_big_ints(text).is_err(), "{text}");
        }
        assert_eq!(
            mark_big_ints(r#"{"m": "routeval-big-int:12"}"#).unwrap(),
            None
        );
    }

    #[test]
    fn json_dumps_strings() {
        // CPython 3.11: json.dumps(S, ensure_ascii=True / False).
        let s = "a\"\\\n\r\t\u{8}\u{c}\u{1}\u{7f}é😀";
        let mut out = String::new();
        super::write_json_str(&mut out, s, true);
        assert_eq!(out, r#""a\"\\\n\r\t\b\f\u0001\u007f\u00e9\ud83d\ude00""#);
        out.clear();
        super::write_json_str(&mut out, s, false);
        assert_eq!(out, "\"a\\\"\\\\\\n\\r\\t\\b\\f\\u0001\u{7f}é😀\"");
        // Escapes past the first eight bytes and at the very end (the plain runs are found
        // a word at a time).
        out.clear();
        let s = "plain text longer than a word \"quoted\" back\\slash\nnew\u{1} é and a tail\u{1f}";
        super::write_json_str(&mut out, s, false);
        assert_eq!(
            out,
            r#""plain text longer than a word \"quoted\" back\\slash\nnew\u0001 é and a tail\u001f""#
        );
    }

    use super::float_repr;

    #[test]
    fn py_word_is_cpython_311_re_w() {
        // CPython 3.11.7 `bool(re.match(r"\w", chr(cp)))`.
        for (cp, want) in [
            (0x5F, true),
            (0x2D, false),
            (0xB2, true),     // No (superscript two)
            (0x301, false),   // Mn
            (0xE31, false),   // Mn (Thai)
            (0x203F, false),  // Pc other than `_`
            (0x663, true),    // Nd (Arabic-Indic)
            (0x2160, true),   // Nl
            (0x4E00, true),   // Lo
            (0x1E030, false), // assigned in Unicode 15: not `\w` in 3.11
            (0x11F04, false), // Kawi (Unicode 15)
            (0x31350, false), // CJK extension H (Unicode 15)
        ] {
            let c = char::from_u32(cp).unwrap();
            assert_eq!(super::is_py_word(c), want, "U+{cp:04X}");
        }
    }

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
    fn repr_str_matches_cpython() {
        use super::repr_str;
        assert_eq!(repr_str("abc"), "'abc'");
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(repr_str("t\tn\nr\r\\"), "'t\\tn\\nr\\r\\\\'");
        assert_eq!(
            repr_str("\u{7}\u{a0}\u{200b}\u{10ffff}é日"),
            "'\\x07\\xa0\\u200b\\U0010ffff\u{e9}\u{65e5}'"
        );
        // Unassigned in Unicode 14 (category Cn): escaped.
        assert_eq!(repr_str("\u{378}"), "'\\u0378'");
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
