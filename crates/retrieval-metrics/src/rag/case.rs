//! Reading one case: ids, texts, de-duplication and relevance labels (spec sections 3 and 2).

use super::RagError;
use super::pyjson::PyValue;
use super::text::{is_space, py_strip};
use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;

/// A retrieved or relevant id with Python's equality: `1`, `1.0` and `true` are one id, `"1"`
/// another; every NaN from JSON is the same id (CPython's decoder hands out one NaN object).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey<'a> {
    /// `None` (an explicit `"id": null`).
    None,
    /// An integer, a bool, or a float with an integral value that fits `i64`.
    Int(i64),
    /// A larger integer (or integral float), as exact decimal digits.
    Big(Cow<'a, str>),
    /// A non-integral float, by bit pattern.
    Float(u64),
    /// NaN.
    NaN,
    /// A string.
    Str(Cow<'a, str>),
}

impl<'a> IdKey<'a> {
    /// The id of a hashable scalar value.
    pub(crate) fn of(v: &'a PyValue<'_>) -> Option<IdKey<'a>> {
        Some(match v {
            PyValue::Null => IdKey::None,
            PyValue::Bool(b) => IdKey::Int(*b as i64),
            PyValue::Int(i) => IdKey::Int(*i),
            PyValue::BigInt(s) => IdKey::Big(Cow::Borrowed(s.as_ref())),
            PyValue::Float(f) => float_key(*f),
            PyValue::Str(s) => IdKey::Str(Cow::Borrowed(s.as_ref())),
            PyValue::List(_) | PyValue::Dict(_) => return None,
        })
    }
}

fn float_key(f: f64) -> IdKey<'static> {
    if f.is_nan() {
        IdKey::NaN
    } else if f.is_finite() && f.fract() == 0.0 {
        if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
            IdKey::Int(f as i64)
        } else {
            IdKey::Big(Cow::Owned(format!("{f:.0}")))
        }
    } else {
        IdKey::Float(f.to_bits())
    }
}

const TEXT_KEYS: [&str; 5] = ["text", "passage", "content", "chunk", "document"];

/// rag-quality-check's `_as_item`: one retrieved item (or `relevant` list entry) as
/// `(id, text)` (spec 3.1).
///
/// # Errors
/// A list item, or a mapping whose `id` is a list or an object.
// Inlined into the de-duplication loop: called, it returned its 80-byte result through memory,
// and the profile put a third of `evaluate_one`'s samples on reading that result back (100k id
// cases: 162 -> 150 ms wall once inlined).
#[inline(always)]
pub(crate) fn as_item<'b>(item: &'b PyValue<'_>) -> Result<(IdKey<'b>, Cow<'b, str>), RagError> {
    match item {
        PyValue::Str(s) => Ok((
            IdKey::Str(Cow::Borrowed(s.as_ref())),
            Cow::Borrowed(s.as_ref()),
        )),
        PyValue::Dict(_) => {
            let text = TEXT_KEYS.iter().find_map(|k| match item.get(k) {
                Some(PyValue::Str(s)) if !s.is_empty() => Some(s.as_ref()),
                _ => None,
            });
            let text = text.unwrap_or("");
            match item.get("id") {
                Some(idv) => {
                    let key = IdKey::of(idv).ok_or_else(|| RagError::IdUnhashable {
                        type_name: idv.type_name(),
                    })?;
                    let t = if text.is_empty() {
                        Cow::Owned(idv.py_str())
                    } else {
                        Cow::Borrowed(text)
                    };
                    Ok((key, t))
                }
                None => Ok((IdKey::Str(Cow::Borrowed(text)), Cow::Borrowed(text))),
            }
        }
        PyValue::List(_) => Err(RagError::ItemType {
            type_name: item.type_name(),
        }),
        other => {
            let key = IdKey::of(other).ok_or(RagError::ItemType {
                type_name: other.type_name(),
            })?;
            Ok((key, Cow::Owned(other.py_str())))
        }
    }
}

/// Python `float(s)` for a string: surrounding whitespace, `_` between digits, `nan`, `inf`,
/// `infinity` (any case, optional sign). `None` when Python would raise `ValueError`.
pub fn py_float_str(s: &str) -> Option<f64> {
    let t = s.trim_matches(is_space);
    if t.is_empty() || !t.is_ascii() {
        return None;
    }
    let body = t.trim_start_matches(['+', '-']);
    if t.len() - body.len() > 1 {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "nan" | "inf" | "infinity") {
        return t.parse::<f64>().ok();
    }
    let b = body.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-' => {}
            b'_' => {
                let ok = i > 0
                    && i + 1 < b.len()
                    && b[i - 1].is_ascii_digit()
                    && b[i + 1].is_ascii_digit();
                if !ok {
                    return None;
                }
            }
            _ => return None,
        }
    }
    if !b.iter().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let cleaned: String = t.chars().filter(|&c| c != '_').collect();
    cleaned.parse::<f64>().ok()
}

/// Python `int(s)` for a string (as argparse's `type=int` uses it): whitespace, sign, ASCII
/// digits with single `_` between digits.
pub fn py_int_str(s: &str) -> Option<i64> {
    let t = s.trim_matches(is_space);
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let b = body.as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() || !b[b.len() - 1].is_ascii_digit() {
        return None;
    }
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            if !b[i - 1].is_ascii_digit() || !b[i + 1].is_ascii_digit() {
                return None;
            }
        } else if !c.is_ascii_digit() {
            return None;
        }
    }
    let cleaned: String = t.chars().filter(|&c| c != '_').collect();
    cleaned.trim().parse::<i64>().ok()
}

/// Python `float(value)` for a relevance gain.
fn gain_value(v: &PyValue<'_>) -> Result<f64, String> {
    match v {
        PyValue::Bool(b) => Ok(if *b { 1.0 } else { 0.0 }),
        PyValue::Int(i) => Ok(*i as f64),
        // Beyond the float range Python raises OverflowError (the error carries the digits).
        PyValue::BigInt(s) => match s.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(f),
            _ => Err(s.to_string()),
        },
        PyValue::Float(f) => Ok(*f),
        PyValue::Str(s) => py_float_str(s).ok_or_default(),
        _ => Err(String::new()),
    }
}

trait OkOrDefault {
    fn ok_or_default(self) -> Result<f64, String>;
}
impl OkOrDefault for Option<f64> {
    fn ok_or_default(self) -> Result<f64, String> {
        self.ok_or_else(String::new)
    }
}

/// rag-quality-check's `_as_gains`: `relevant` as `[(id, gain)]` in first-seen order, later
/// duplicates overwriting earlier gains; NaN → 0, negatives clipped to 0 (spec 3.4).
///
/// # Errors
/// `relevant` a string or scalar; an entry that is a list; a gain that `float()` rejects; an
/// integer gain beyond the float range ([`RagError::GainTooLarge`], naming case `case_index`).
pub(crate) fn as_gains<'b>(
    relevant: &'b PyValue<'_>,
    case_index: usize,
) -> Result<Vec<(IdKey<'b>, f64)>, RagError> {
    let mut out: Vec<(IdKey<'_>, f64)> = Vec::new();
    let mut index: HashMap<IdKey<'_>, usize> = HashMap::default();
    match relevant {
        PyValue::Dict(items) => {
            for (k, v) in items {
                let g = gain_value(v).map_err(|msg| {
                    if msg.is_empty() {
                        RagError::GainNotNumber {
                            id: super::pyfmt::repr_str(k),
                            gain: v.py_repr(),
                        }
                    } else {
                        RagError::GainTooLarge {
                            index: case_index,
                            id: super::pyfmt::repr_str(k),
                            digits: msg.trim_start_matches('-').len(),
                        }
                    }
                })?;
                insert_gain(&mut out, &mut index, IdKey::Str(Cow::Borrowed(k)), g);
            }
        }
        PyValue::Str(_) => return Err(RagError::RelevantString),
        PyValue::List(entries) => {
            for e in entries {
                let (id, _) = as_item(e)?;
                insert_gain(&mut out, &mut index, id, 1.0);
            }
        }
        other => {
            return Err(RagError::RelevantType {
                type_name: other.type_name(),
            });
        }
    }
    Ok(out)
}

fn insert_gain<'a>(
    out: &mut Vec<(IdKey<'a>, f64)>,
    index: &mut HashMap<IdKey<'a>, usize>,
    id: IdKey<'a>,
    g: f64,
) {
    let g = if g > 0.0 { g } else { 0.0 }; // NaN and negatives → 0
    // Small label sets (the usual case) are searched linearly; larger ones get an index.
    if out.len() < 16 {
        if let Some(slot) = out.iter_mut().find(|(k, _)| *k == id) {
            slot.1 = g;
        } else {
            out.push((id, g));
            if out.len() == 16 {
                for (i, (k, _)) in out.iter().enumerate() {
                    index.insert(k.clone(), i);
                }
            }
        }
        return;
    }
    match index.get(&id) {
        Some(&i) => out[i].1 = g,
        None => {
            index.insert(id.clone(), out.len());
            out.push((id, g));
        }
    }
}

/// Python truthiness-based query coercion: falsy → `""`, else `str(value)`.
pub(crate) fn query_text(case: &PyValue<'_>) -> String {
    match case.get("query") {
        Some(v) if v.truthy() => v.py_str(),
        _ => String::new(),
    }
}

/// `str(value).strip()` is non-empty.
pub(crate) fn non_blank(v: &PyValue<'_>) -> bool {
    match v {
        PyValue::Str(s) => !py_strip(s).is_empty(),
        other => !py_strip(&other.py_str()).is_empty(),
    }
}
