//! Printing an [`Evaluation`] exactly as trec_eval prints it, or as JSON.
//!
//! Source: trec_eval 10.0-rc3 `meas_print_single.c`, `meas_print_final.c`, `m_runid.c`,
//! `m_relstring.c`: lines are `%-22s\t%s\t%6.4f` (counts `%ld`, relstring `'%s'`), per-query
//! blocks first (with `-q`) in qrels order, then the summary under qid `all`.

use super::eval::Evaluation;
use super::spec::{Aggregate, MeasureId};
use super::ties::{TieRange, TieSupport};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::io::{self, Write};

/// C's `printf("%6.4f", x)` on x86-64 glibc: 4 decimals, round-half-even on exact ties (Rust's
/// `{:.4}` rounds the exact binary value the same way), width 6; NaN prints as `-nan` (the
/// sign C's default NaN carries), infinities as `inf`/`-inf`.
pub fn c_fixed4(x: f64) -> String {
    if x.is_nan() {
        "  -nan".to_string()
    } else if x.is_infinite() {
        format!("{:>6}", if x > 0.0 { "inf" } else { "-inf" })
    } else {
        format!("{:6.4}", x)
    }
}

/// C's `(long) x` (truncation toward zero) for count measures.
fn c_long(x: f64) -> i64 {
    x as i64
}

/// [`c_fixed4`] appended to `out` without a `String`: values below 10^11 in magnitude are
/// rounded exactly from their binary value (the integer `m·10^4 / 2^s` and its remainder),
/// which is what `format!("{:6.4}")` computes; an exact tie between two outputs, the other
/// magnitudes and non-finite values go through [`c_fixed4`] itself. trec_eval's `-q` output
/// prints one of these per line (600,000 for 100k queries × 6 measures).
fn fixed4_into(out: &mut Vec<u8>, x: f64) {
    if let Some(n) = fixed4_units(x) {
        if x.is_sign_negative() {
            out.push(b'-');
        }
        let mut int = itoa::Buffer::new();
        out.extend_from_slice(int.format(n / 10_000).as_bytes());
        let frac = (n % 10_000) as u16;
        out.extend_from_slice(&[
            b'.',
            b'0' + (frac / 1000) as u8,
            b'0' + (frac / 100 % 10) as u8,
            b'0' + (frac / 10 % 10) as u8,
            b'0' + (frac % 10) as u8,
        ]);
    } else {
        out.extend_from_slice(c_fixed4(x).as_bytes());
    }
}

/// `|x|·10^4` rounded to the nearest integer, or `None` where [`fixed4_into`] defers to
/// `format!`: `x` not finite, `|x| ≥ 10^11`, or `|x|·10^4` exactly halfway between two
/// integers.
fn fixed4_units(x: f64) -> Option<u64> {
    let a = x.abs();
    if a.is_nan() || a >= 1e11 {
        return None; // NaN, infinities and large magnitudes
    }
    if a == 0.0 {
        return Some(0);
    }
    let bits = a.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    // a = m · 2^k exactly.
    let (m, k) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    let t = u128::from(m) * 10_000;
    if k >= 0 {
        // An integer below 10^11: a · 10^4 < 10^15.
        return u64::try_from(t << k).ok();
    }
    let s = (-k) as u32;
    // m · 10^4 < 2^67: at a shift of 69 or more the value is below 1/4 and rounds to 0.
    if s >= 69 {
        return Some(0);
    }
    let n = t >> s;
    let rem = t & ((1u128 << s) - 1);
    let half = 1u128 << (s - 1);
    let n = u64::try_from(n).ok()?;
    if rem > half {
        Some(n + 1)
    } else if rem < half {
        Some(n)
    } else {
        None // an exact tie: `format!`'s own rule decides
    }
}

/// One `name<TAB>qid<TAB>value` line: the name left-aligned in 22 columns (`%-22s`).
fn line_start(out: &mut Vec<u8>, name: &str, qid: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    let width = name.chars().count();
    if width < 22 {
        out.resize(out.len() + (22 - width), b' ');
    }
    out.push(b'\t');
    out.extend_from_slice(qid);
    out.push(b'\t');
}

fn line(out: &mut Vec<u8>, name: &str, qid: &[u8], value: &[u8]) {
    line_start(out, name, qid);
    out.extend_from_slice(value);
    out.push(b'\n');
}

/// A measure's value line: counts as C's `%ld` of `(long) v`, the rest as `%6.4f`.
fn value_line(out: &mut Vec<u8>, name: &str, qid: &[u8], count: bool, v: f64) {
    line_start(out, name, qid);
    if count {
        let mut b = itoa::Buffer::new();
        out.extend_from_slice(b.format(c_long(v)).as_bytes());
    } else {
        fixed4_into(out, v);
    }
    out.push(b'\n');
}

/// Render the evaluation as trec_eval's text output. `per_query` is `-q` (the evaluation must
/// have been run with per-query values kept), `summary` is the opposite of `-n`.
pub fn render_text(ev: &Evaluation, per_query: bool, summary: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if per_query {
        for q in &ev.queries {
            for meas in ev.measures.measures() {
                if !meas.id.printed_per_query() {
                    continue;
                }
                if meas.id == MeasureId::Relstring {
                    let name = meas.text_name.as_deref().unwrap_or("relstring");
                    let s = q.relstring.as_deref().unwrap_or("");
                    line(&mut out, name, &q.qid, format!("'{s}'").as_bytes());
                    continue;
                }
                for (k, name) in meas.names.iter().enumerate() {
                    let v = q.values[meas.offset + k];
                    value_line(&mut out, name, &q.qid, meas.id.is_count(), v);
                }
            }
        }
    }
    if summary {
        for meas in ev.measures.measures() {
            match meas.id.aggregate() {
                Aggregate::NoSummary => {}
                Aggregate::Runid => line(&mut out, "runid", b"all", &ev.runid),
                _ => {
                    for (k, name) in meas.names.iter().enumerate() {
                        let v = ev.summary[meas.offset + k];
                        value_line(&mut out, name, b"all", meas.id.is_count(), v);
                    }
                }
            }
        }
    }
    out
}

/// Write [`render_text`] to `w`.
pub fn write_text<W: Write>(
    w: &mut W,
    ev: &Evaluation,
    per_query: bool,
    summary: bool,
) -> io::Result<()> {
    w.write_all(&render_text(ev, per_query, summary))
}

/// A JSON number, or `null` for NaN/infinity (JSON has no non-finite numbers).
enum Num {
    Int(i64),
    Float(f64),
}

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Num::Int(i) => s.serialize_i64(i),
            Num::Float(f) if f.is_finite() => s.serialize_f64(f),
            Num::Float(_) => s.serialize_none(),
        }
    }
}

struct AllView<'a>(&'a Evaluation);
struct QueryView<'a>(&'a Evaluation, usize);
struct PerQueryView<'a>(&'a Evaluation);

/// The JSON form: `{"all": {name: value}, "per_query": {qid: {name: value}}}` with full
/// precision values, counts as integers, `runid`/`relstring` as strings, NaN as `null`;
/// `per_query` only when per-query values were kept (`-q`). Keys keep trec_eval's print order.
pub struct JsonView<'a> {
    ev: &'a Evaluation,
    per_query: bool,
    summary: bool,
    ties: bool,
    /// A caller's member written last ([`JsonView::with_member`]).
    extra: Option<(&'a str, &'a serde_json::Value)>,
}

impl<'a> JsonView<'a> {
    /// View `ev` as JSON; `per_query` adds the per-query object.
    pub fn new(ev: &'a Evaluation, per_query: bool) -> Self {
        JsonView {
            ev,
            per_query,
            summary: true,
            ties: false,
            extra: None,
        }
    }

    /// One more member after the others (`routeval trec --json --ci` adds `"ci"`), so the
    /// whole object is written in one streamed pass. `key` must differ from the view's own
    /// keys (`all`, `per_query`, `ties`).
    pub fn with_member(mut self, key: &'a str, value: &'a serde_json::Value) -> Self {
        self.extra = Some((key, value));
        self
    }

    /// Whether a `"ties"` object ([`TiesView`]) follows the other keys (default false; only
    /// for an evaluation run with [`super::eval::EvalOptions::ties`]).
    pub fn with_ties(mut self, ties: bool) -> Self {
        self.ties = ties;
        self
    }

    /// Whether the `all` object is included (default true); false for trec_eval's `-n`
    /// (no summary), as the text output then omits the `all` lines.
    pub fn with_summary(mut self, summary: bool) -> Self {
        self.summary = summary;
        self
    }
}

/// Two query ids of `ev` that are one key in the JSON forms (and in the Python package's
/// dicts), which spell a qid as its text with each invalid UTF-8 sequence replaced by U+FFFD:
/// `q\xff` and `q\xfe` both become `"q\u{fffd}"`, so one query's values would hide the
/// other's. `None` when every qid is valid UTF-8 (checked first; the usual case costs one
/// pass) or the replaced texts are distinct. The raw bytes of the first two found.
pub fn qid_key_collision(ev: &Evaluation) -> Option<(&[u8], &[u8])> {
    if ev
        .queries
        .iter()
        .all(|q| std::str::from_utf8(&q.qid).is_ok())
    {
        return None;
    }
    let mut seen: std::collections::HashMap<std::borrow::Cow<'_, str>, &[u8]> =
        std::collections::HashMap::with_capacity(ev.queries.len());
    for q in &ev.queries {
        if let Some(first) = seen.insert(String::from_utf8_lossy(&q.qid), &q.qid) {
            return Some((first, &q.qid));
        }
    }
    None
}

fn num(id: MeasureId, v: f64) -> Num {
    if id.is_count() {
        Num::Int(c_long(v))
    } else {
        Num::Float(v)
    }
}

impl Serialize for AllView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ev = self.0;
        let mut map = s.serialize_map(None)?;
        for meas in ev.measures.measures() {
            match meas.id.aggregate() {
                Aggregate::NoSummary => {}
                Aggregate::Runid => {
                    map.serialize_entry("runid", &String::from_utf8_lossy(&ev.runid))?
                }
                _ => {
                    for (k, name) in meas.names.iter().enumerate() {
                        map.serialize_entry(name, &num(meas.id, ev.summary[meas.offset + k]))?;
                    }
                }
            }
        }
        map.end()
    }
}

impl Serialize for QueryView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ev = self.0;
        let q = &ev.queries[self.1];
        let mut map = s.serialize_map(None)?;
        for meas in ev.measures.measures() {
            if !meas.id.printed_per_query() {
                continue;
            }
            if meas.id == MeasureId::Relstring {
                let name = meas.text_name.as_deref().unwrap_or("relstring");
                map.serialize_entry(name, q.relstring.as_deref().unwrap_or(""))?;
                continue;
            }
            for (k, name) in meas.names.iter().enumerate() {
                map.serialize_entry(name, &num(meas.id, q.values[meas.offset + k]))?;
            }
        }
        map.end()
    }
}

impl Serialize for PerQueryView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ev = self.0;
        let mut map = s.serialize_map(Some(ev.queries.len()))?;
        for (i, q) in ev.queries.iter().enumerate() {
            map.serialize_entry(&String::from_utf8_lossy(&q.qid), &QueryView(ev, i))?;
        }
        map.end()
    }
}

impl Serialize for JsonView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        if self.summary {
            map.serialize_entry("all", &AllView(self.ev))?;
        }
        if self.per_query {
            map.serialize_entry("per_query", &PerQueryView(self.ev))?;
        }
        if self.ties && self.ev.ties.is_some() {
            map.serialize_entry(
                "ties",
                &TiesView::new(self.ev, self.per_query).with_summary(self.summary),
            )?;
        }
        if let Some((key, value)) = self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// The `--ties` JSON object: `{"all": {name: {"min", "max", "expected"}},
/// "queries_affected": N, "queries_affected_per_measure": {name: n}, "unsupported": [measure],
/// "per_query": {qid: {name: {"min", "max", "expected"}}}}`. Values of every measure
/// [`TieSupport::Exact`] or [`TieSupport::OrderFree`], in trec_eval's print order (counts as
/// integers, NaN as `null`); `all` aggregated as trec_eval aggregates (see
/// [`super::ties::TieSummary::all`]); `queries_affected` counts queries where some value's
/// range is not a point, `queries_affected_per_measure` the same per value (exact measures
/// only); `unsupported` names the measures given no range; `per_query` only with per-query
/// values (`-q`), `all` and the counts per value not under `-n`.
pub struct TiesView<'a> {
    ev: &'a Evaluation,
    per_query: bool,
    summary: bool,
}

impl<'a> TiesView<'a> {
    /// View `ev`'s ranges (`ev` must come from an evaluation with `ties` set, else the view
    /// is an empty object); `per_query` adds the per-query object.
    pub fn new(ev: &'a Evaluation, per_query: bool) -> Self {
        TiesView {
            ev,
            per_query,
            summary: true,
        }
    }

    /// Whether `all` and `queries_affected_per_measure` are included (default true).
    pub fn with_summary(mut self, summary: bool) -> Self {
        self.summary = summary;
        self
    }
}

/// `(measure, printed name, slot)` of every value `--ties` reports, in print order.
pub fn tie_slots(ev: &Evaluation) -> Vec<(MeasureId, &str, usize)> {
    let mut out = Vec::new();
    for meas in ev.measures.measures() {
        if matches!(
            super::ties::support(meas),
            TieSupport::Exact | TieSupport::OrderFree
        ) {
            for (k, name) in meas.names.iter().enumerate() {
                out.push((meas.id, name.as_str(), meas.offset + k));
            }
        }
    }
    out
}

/// The measures `--ties` gives no range ([`TieSupport::Unsupported`]), by trec_eval name.
pub fn tie_unsupported(ev: &Evaluation) -> Vec<&'static str> {
    ev.measures
        .measures()
        .iter()
        .filter(|m| super::ties::support(m) == TieSupport::Unsupported)
        .map(|m| m.id.name())
        .collect()
}

struct RangeView(MeasureId, TieRange);

impl Serialize for RangeView {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("min", &num(self.0, self.1.min))?;
        map.serialize_entry("max", &num(self.0, self.1.max))?;
        map.serialize_entry("expected", &num(self.0, self.1.expected))?;
        map.end()
    }
}

struct SlotsView<'a, F: Fn(usize) -> TieRange>(&'a [(MeasureId, &'a str, usize)], F);

impl<F: Fn(usize) -> TieRange> Serialize for SlotsView<'_, F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for &(id, name, slot) in self.0 {
            map.serialize_entry(name, &RangeView(id, (self.1)(slot)))?;
        }
        map.end()
    }
}

struct TieQueriesView<'a>(&'a Evaluation, &'a [(MeasureId, &'a str, usize)]);

impl Serialize for TieQueriesView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ev = self.0;
        let mut map = s.serialize_map(Some(ev.queries.len()))?;
        for q in &ev.queries {
            let range = |slot: usize| match &q.ties {
                Some(r) => r[slot],
                None => TieRange::point(q.values[slot]),
            };
            map.serialize_entry(&String::from_utf8_lossy(&q.qid), &SlotsView(self.1, range))?;
        }
        map.end()
    }
}

impl Serialize for TiesView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let Some(t) = &self.ev.ties else {
            return map.end();
        };
        let slots = tie_slots(self.ev);
        if self.summary {
            map.serialize_entry("all", &SlotsView(&slots, |slot| t.all[slot]))?;
        }
        map.serialize_entry("queries_affected", &t.queries_affected)?;
        if self.summary {
            let per: Vec<(&str, u64)> = slots
                .iter()
                .filter(|(id, _, _)| !id.is_count())
                .map(|&(_, name, slot)| (name, t.affected[slot]))
                .collect();
            map.serialize_entry("queries_affected_per_measure", &PerMeasure(&per))?;
        }
        map.serialize_entry("unsupported", &tie_unsupported(self.ev))?;
        if self.per_query {
            map.serialize_entry("per_query", &TieQueriesView(self.ev, &slots))?;
        }
        map.end()
    }
}

struct PerMeasure<'a>(&'a [(&'a str, u64)]);

impl Serialize for PerMeasure<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, n) in self.0 {
            map.serialize_entry(name, n)?;
        }
        map.end()
    }
}

/// The `--ties` text lines, one per summary value whose range is not a point (print order):
/// `P_10  0.3100  [0.2900, 0.3400]  expected 0.3150  (12 queries have ties that matter)`:
/// trec_eval's value, then the range and expected value of the summary (`%.4f`, C rounding).
/// Empty when the evaluation has no ranges or no tie changes any value.
pub fn render_ties_text(ev: &Evaluation) -> Vec<u8> {
    let mut out = Vec::new();
    let Some(t) = &ev.ties else {
        return out;
    };
    for (_, name, slot) in tie_slots(ev) {
        let r = t.all[slot];
        if r.is_point() || t.affected[slot] == 0 {
            continue;
        }
        let f = |x: f64| c_fixed4(x).trim_start().to_string();
        let n = t.affected[slot];
        let _ = writeln!(
            out,
            "{name}  {}  [{}, {}]  expected {}  ({n} {} ties that matter)",
            f(ev.summary[slot]),
            f(r.min),
            f(r.max),
            f(r.expected),
            if n == 1 { "query has" } else { "queries have" }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_formatting() {
        assert_eq!(c_fixed4(0.03125), "0.0312");
        assert_eq!(c_fixed4(-412.666666), "-412.6667");
        assert_eq!(c_fixed4(f64::NAN), "  -nan");
        assert_eq!(c_fixed4(f64::INFINITY), "   inf");
        assert_eq!(c_fixed4(1.0), "1.0000");
    }

    fn fast(x: f64) -> String {
        let mut out = Vec::new();
        fixed4_into(&mut out, x);
        String::from_utf8(out).unwrap()
    }

    /// The fast `%6.4f` against `format!`'s (the tested `c_fixed4`) where rounding is
    /// decided: halfway points between 4-decimal outputs and their neighbouring doubles, ties
    /// that are exact in binary (deferred to `format!`), signs, zeros, subnormals, the
    /// magnitude cut-off and non-finite values.
    #[test]
    fn fixed4_agrees_with_format_at_the_edges() {
        let mut xs = vec![
            0.0,
            -0.0,
            5e-324,
            -5e-324,
            0.00005,
            -0.00005,
            0.03125,
            0.00015,
            1.00005,
            12.34565,
            99_999_999_999.999_95,
            1e11,
            -1e11,
            1e300,
            f64::MAX,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.5,
            2.5e-5,
            7.5e-5,
        ];
        for k in 0..20_000u32 {
            let mid = (f64::from(k) + 0.5) / 10_000.0;
            for x in [mid, mid.next_up(), mid.next_down(), f64::from(k) / 10_000.0] {
                xs.push(x);
                xs.push(-x);
                xs.push(x * 1000.0 + 0.123);
            }
        }
        for x in xs {
            assert_eq!(fast(x), c_fixed4(x), "{x:e}");
        }
    }

    proptest::proptest! {
        #[test]
        fn fixed4_agrees_with_format(bits in proptest::num::u64::ANY, small in -1e6f64..1e6) {
            for x in [f64::from_bits(bits), small, small / 1e7] {
                proptest::prop_assert_eq!(fast(x), c_fixed4(x), "{:e}", x);
            }
        }
    }
}
