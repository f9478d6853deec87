//! Printing an [`Evaluation`] exactly as trec_eval prints it, or as JSON.
//!
//! Source: trec_eval 10.0-rc3 `meas_print_single.c`, `meas_print_final.c`, `m_runid.c`,
//! `m_relstring.c`: lines are `%-22s\t%s\t%6.4f` (counts `%ld`, relstring `'%s'`), per-query
//! blocks first (with `-q`) in qrels order, then the summary under qid `all`.

use super::eval::Evaluation;
use super::spec::{Aggregate, MeasureId};
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

fn line(out: &mut Vec<u8>, name: &str, qid: &[u8], value: &[u8]) {
    let _ = write!(out, "{name:<22}\t");
    out.extend_from_slice(qid);
    out.push(b'\t');
    out.extend_from_slice(value);
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
                    let text = if meas.id.is_count() {
                        c_long(v).to_string()
                    } else {
                        c_fixed4(v)
                    };
                    line(&mut out, name, &q.qid, text.as_bytes());
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
                        let text = if meas.id.is_count() {
                            c_long(v).to_string()
                        } else {
                            c_fixed4(v)
                        };
                        line(&mut out, name, b"all", text.as_bytes());
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
}

impl<'a> JsonView<'a> {
    /// View `ev` as JSON; `per_query` adds the per-query object.
    pub fn new(ev: &'a Evaluation, per_query: bool) -> Self {
        JsonView {
            ev,
            per_query,
            summary: true,
        }
    }

    /// Whether the `all` object is included (default true); false for trec_eval's `-n`
    /// (no summary), as the text output then omits the `all` lines.
    pub fn with_summary(mut self, summary: bool) -> Self {
        self.summary = summary;
        self
    }
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
        map.end()
    }
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
}
