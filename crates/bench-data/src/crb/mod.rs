//! CommonRouterBench's question bank (`specs/crb.md` §2–§5).
//!
//! * [`BankReader`]: streams `question_bank.jsonl` rows with their 1-based line numbers, by the
//!   reference's line rules (universal newlines; lines stripped of Python whitespace; empty lines
//!   skipped; every other line must be one JSON value).
//! * [`Manifest`]: `manifest.json` (`sources.<benchmark>.line_count`), and
//!   [`published_manifest`], the public bank's line counts kept as routeval's own data.
//! * [`manifest_proportional_quotas`]: largest-remainder quotas; [`proportional_reservoir_sample`]:
//!   one-pass per-benchmark reservoir sampling with Python's `random` ([`crate::pyrandom`]), so a
//!   given `n`/`seed` selects exactly the reference's rows in the reference's order.
//! * [`check_row`]: the eval's per-row validation, with file:line errors and quirk warnings.
//! * [`public`]: the public bank as data (`data/crb/sources.json`): fetch into the cache, locate, check.
//!
//! Filtering by a `--where` expression (query-dsl) plugs in as a row predicate: see
//! [`filter_rows`], which takes any `Fn(&Value) -> bool`.

pub mod public;
pub mod selection;

use crate::pyrandom::PyRandom;
use routeval_core::{Error, Location, Tier};
use serde_json::Value;
use std::collections::HashMap;
use std::io::BufRead;

/// One parsed bank row and the 1-based line it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct BankRow {
    /// 1-based physical line number (`\n`, `\r\n` and lone `\r` all end a line).
    pub line: u64,
    /// The row object (any JSON value; [`check_row`] insists on an object).
    pub value: Value,
}

impl BankRow {
    /// `row.get("benchmark")` if it is a string.
    pub fn benchmark(&self) -> Option<&str> {
        self.value.get("benchmark").and_then(Value::as_str)
    }
}

use routeval_core::py::is_space as is_py_space;

/// Streams the rows of a JSONL bank (see the module docs for the line rules).
#[derive(Debug)]
pub struct BankReader<R> {
    reader: R,
    source: String,
    line: u64,
    buf: Vec<u8>,
    pending: Vec<(u64, Vec<u8>)>,
}

impl<R: BufRead> BankReader<R> {
    /// Read from `reader`; `source` names the input in errors (a path or `<stdin>`).
    pub fn new(reader: R, source: impl Into<String>) -> Self {
        BankReader {
            reader,
            source: source.into(),
            line: 0,
            buf: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn parse(&self, line: u64, bytes: &[u8]) -> Result<Option<BankRow>, Error> {
        let at = || Location::at_line(self.source.clone(), line);
        let text = std::str::from_utf8(bytes)
            .map_err(|e| Error::input(at(), format!("not valid UTF-8 ({e})")))?;
        let text = text.trim_matches(is_py_space);
        if text.is_empty() {
            return Ok(None);
        }
        if text.starts_with('\u{feff}') {
            return Err(Error::input(
                at(),
                "starts with a UTF-8 byte-order mark (not accepted)",
            ));
        }
        // Integers beyond 64 bits keep their digits, as Python's json.loads keeps them
        // (message texts, and so token counts and costs, depend on them).
        let marked = routeval_core::py::mark_big_ints(text)
            .map_err(|e| Error::input(at(), e.to_string()))?;
        let value: Value = serde_json::from_str(marked.as_deref().unwrap_or(text))
            .map_err(|e| Error::input(at(), format!("invalid JSON: {e}")))?;
        Ok(Some(BankRow { line, value }))
    }
}

impl<R: BufRead> Iterator for BankReader<R> {
    type Item = Result<BankRow, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if !self.pending.is_empty() {
                let (line, bytes) = self.pending.remove(0);
                match self.parse(line, &bytes) {
                    Ok(Some(row)) => return Some(Ok(row)),
                    Ok(None) => continue,
                    Err(e) => return Some(Err(e)),
                }
            }
            self.buf.clear();
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(Error::io(Location::new(self.source.clone()), e))),
            }
            let mut end = self.buf.len();
            if end > 0 && self.buf[end - 1] == b'\n' {
                end -= 1;
            }
            if end > 0 && self.buf[end - 1] == b'\r' {
                end -= 1;
            }
            // Lone `\r`s inside are line ends too (Python universal newlines).
            if self.buf[..end].contains(&b'\r') {
                let pieces: Vec<Vec<u8>> = self.buf[..end]
                    .split(|b| *b == b'\r')
                    .map(<[u8]>::to_vec)
                    .collect();
                for piece in pieces {
                    self.line += 1;
                    self.pending.push((self.line, piece));
                }
                continue;
            }
            self.line += 1;
            let line = self.line;
            let bytes = std::mem::take(&mut self.buf);
            let r = self.parse(line, &bytes[..end]);
            self.buf = bytes;
            match r {
                Ok(Some(row)) => return Some(Ok(row)),
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// All rows of a bank; zero rows is an error (`No non-empty rows in <source>`).
pub fn read_bank<R: BufRead>(reader: R, source: &str) -> Result<Vec<BankRow>, Error> {
    let rows = BankReader::new(reader, source).collect::<Result<Vec<_>, _>>()?;
    if rows.is_empty() {
        return Err(Error::input(
            Location::new(source),
            format!("No non-empty rows in {source} (empty question bank)"),
        ));
    }
    Ok(rows)
}

/// Keep the rows for which `keep` holds (e.g. a benchmark filter, or a `--where` predicate).
pub fn filter_rows(rows: Vec<BankRow>, keep: impl Fn(&Value) -> bool) -> Vec<BankRow> {
    rows.into_iter().filter(|r| keep(&r.value)).collect()
}

// ----------------------------------------------------------------------------------- manifest

/// A bank manifest: per-benchmark `line_count`s in file order (only `sources` is read).
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The whole JSON document.
    pub value: Value,
}

/// The public bank's published line counts (CommonRouterBench `data/manifest.json`, 970 rows):
/// swebench 336, bfcl 248, mtrag 193, qmsum 145, pinchbench 48. routeval's own data.
pub const PUBLISHED_LINE_COUNTS: [(&str, i64); 5] = [
    ("pinchbench", 48),
    ("swebench", 336),
    ("mtrag", 193),
    ("qmsum", 145),
    ("bfcl", 248),
];

/// A manifest holding [`PUBLISHED_LINE_COUNTS`], used for `--n` without `--manifest` (as the
/// reference always uses its shipped manifest).
pub fn published_manifest() -> Manifest {
    let mut sources = serde_json::Map::new();
    for (name, n) in PUBLISHED_LINE_COUNTS {
        sources.insert(name.to_string(), serde_json::json!({ "line_count": n }));
    }
    Manifest {
        value: serde_json::json!({ "sources": sources }),
    }
}

impl Manifest {
    /// Parse manifest JSON bytes; `source` names it in errors.
    pub fn from_slice(bytes: &[u8], source: &str) -> Result<Self, Error> {
        let value = serde_json::from_slice(bytes)
            .map_err(|e| Error::input(Location::new(source), format!("invalid JSON: {e}")))?;
        Ok(Manifest { value })
    }
}

/// Python `int(x)` for a manifest `line_count`: ints, bools, floats (truncated), integer strings.
fn py_int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(*b as i64),
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.trunc() as i64)
        }),
        Value::String(s) => s.trim_matches(is_py_space).replace('_', "").parse().ok(),
        _ => None,
    }
}

/// Per-benchmark quotas in sorted-name order (zeros kept, negatives possible as in the reference).
pub type Quotas = Vec<(String, i64)>;

/// A sampling failure (messages are the reference's `ValueError` texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SampleError {
    /// `sources` missing, not an object, or empty.
    #[error("manifest.json: missing or invalid sources")]
    InvalidSources,
    /// A source entry is not an object.
    #[error("manifest sources[{0}] must be an object")]
    SourceNotObject(String),
    /// A source has no usable `line_count`.
    #[error("manifest sources[{0}] missing line_count")]
    MissingLineCount(String),
    /// A `line_count` Python's `int()` would reject.
    #[error("manifest sources[{0}] line_count is not an integer")]
    BadLineCount(String),
    /// The weights sum to zero or less.
    #[error("sum of line_count must be positive")]
    NonPositiveSum,
    /// `n <= 0` (checked by [`check_sample_size`] and [`select_sample`]).
    #[error("n must be positive when set")]
    NonPositiveN,
    /// The question bank file does not exist (the reference's `FileNotFoundError`, raised
    /// before anything else is checked); holds the path as given.
    #[error("Question bank not found: {0}")]
    BankNotFound(String),
    /// A reservoir could not be filled.
    #[error(
        "Not enough rows for benchmark {benchmark}: sampled {got}, quota {quota} (check question_bank vs manifest line_count)"
    )]
    NotEnoughRows {
        /// Python repr of the benchmark name.
        benchmark: String,
        /// Rows seen.
        got: usize,
        /// Rows wanted.
        quota: i64,
    },
}

fn repr(s: &str) -> String {
    // Python repr of a plain string (quotes chosen as Python does).
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// `manifest_proportional_quotas(manifest, total)`: largest-remainder quotas (§5.1).
pub fn manifest_proportional_quotas(
    manifest: &Manifest,
    total: i64,
) -> Result<Quotas, SampleError> {
    let sources = manifest
        .value
        .get("sources")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
        .ok_or(SampleError::InvalidSources)?;
    let mut names: Vec<&String> = sources.keys().collect();
    names.sort();
    let mut weights = Vec::with_capacity(names.len());
    for name in &names {
        let obj = sources[name.as_str()]
            .as_object()
            .ok_or_else(|| SampleError::SourceNotObject(repr(name)))?;
        let lc = obj
            .get("line_count")
            .filter(|v| !v.is_null())
            .ok_or_else(|| SampleError::MissingLineCount(repr(name)))?;
        weights.push(py_int(lc).ok_or_else(|| SampleError::BadLineCount(repr(name)))?);
    }
    let wsum: i64 = weights.iter().sum();
    if wsum <= 0 {
        return Err(SampleError::NonPositiveSum);
    }
    let mut quotas: Vec<(String, i64)> = Vec::with_capacity(names.len());
    let mut fracs: Vec<(f64, usize)> = Vec::with_capacity(names.len());
    for (i, (name, w)) in names.iter().zip(&weights).enumerate() {
        let exact = (total as i128 * *w as i128) as f64 / wsum as f64;
        let q = exact.trunc();
        quotas.push(((*name).clone(), q as i64));
        fracs.push((exact - q, i));
    }
    let deficit = total - quotas.iter().map(|(_, q)| q).sum::<i64>();
    // Stable sort by descending fraction: ties keep alphabetical order.
    fracs.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    for (_, i) in fracs.iter().take(deficit.max(0) as usize) {
        quotas[*i].1 += 1;
    }
    Ok(quotas)
}

/// `proportional_reservoir_sample(shard, rng, quotas)` (§5.2): one pass over `rows`, one
/// reservoir per benchmark with a positive quota, one RNG stream shared in file order; then
/// the reservoirs concatenated in sorted-name order and shuffled. Row errors (bad JSON) abort.
pub fn proportional_reservoir_sample<I>(
    rows: I,
    rng: &mut PyRandom,
    quotas: &Quotas,
) -> Result<Result<Vec<BankRow>, SampleError>, Error>
where
    I: IntoIterator<Item = Result<BankRow, Error>>,
{
    let active: Vec<(&str, i64)> = quotas
        .iter()
        .filter(|(_, k)| *k > 0)
        .map(|(n, k)| (n.as_str(), *k))
        .collect();
    let index: HashMap<&str, usize> = active
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (*n, i))
        .collect();
    let mut reservoirs: Vec<Vec<BankRow>> = vec![Vec::new(); active.len()];
    let mut seen = vec![0i64; active.len()];
    for row in rows {
        let row = row?;
        let Some(&i) = row.benchmark().and_then(|b| index.get(b)) else {
            continue;
        };
        seen[i] += 1;
        let k = active[i].1;
        if (reservoirs[i].len() as i64) < k {
            reservoirs[i].push(row);
            continue;
        }
        let j = rng.randint(1, seen[i]);
        if j <= k {
            reservoirs[i][(j - 1) as usize] = row;
        }
    }
    for (i, (name, k)) in active.iter().enumerate() {
        if reservoirs[i].len() as i64 != *k {
            return Ok(Err(SampleError::NotEnoughRows {
                benchmark: repr(name),
                got: reservoirs[i].len(),
                quota: *k,
            }));
        }
    }
    let mut out: Vec<BankRow> = reservoirs.into_iter().flatten().collect();
    rng.shuffle(&mut out);
    Ok(Ok(out))
}

/// `select_question_bank_rows` step 3 (spec §5): a sample size must be positive.
///
/// # Errors
/// [`SampleError::NonPositiveN`] when `n <= 0`.
pub fn check_sample_size(n: i64) -> Result<(), SampleError> {
    if n <= 0 {
        return Err(SampleError::NonPositiveN);
    }
    Ok(())
}

/// `select_question_bank_rows(n=n, seed=seed, manifest=manifest)` with `n` set (spec §5 steps
/// 3-5): [`check_sample_size`] (before any row is read), [`manifest_proportional_quotas`],
/// then [`proportional_reservoir_sample`] over `rows` with `random.Random(seed)`. Returns the
/// quotas and the selected rows in the reference's returned (shuffled) order. The bank's
/// existence (step 1, [`SampleError::BankNotFound`]) is the caller's to check, since this
/// takes rows, not a path.
///
/// # Errors
/// The outer `Err` is a row that could not be read (bad JSON, IO); the inner one a
/// [`SampleError`] with the reference's message.
pub fn select_sample<I>(
    rows: I,
    manifest: &Manifest,
    n: i64,
    seed: i128,
) -> Result<Result<(Quotas, Vec<BankRow>), SampleError>, Error>
where
    I: IntoIterator<Item = Result<BankRow, Error>>,
{
    if let Err(e) = check_sample_size(n) {
        return Ok(Err(e));
    }
    let quotas = match manifest_proportional_quotas(manifest, n) {
        Ok(q) => q,
        Err(e) => return Ok(Err(e)),
    };
    let mut rng = PyRandom::new(seed);
    Ok(proportional_reservoir_sample(rows, &mut rng, &quotas)?.map(|rows| (quotas, rows)))
}

// ------------------------------------------------------------------------------- validation

/// The fields the eval reads from a row, validated (§2.1).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedRow {
    /// `row["id"]` (any JSON value; usually a string).
    pub id: Value,
    /// `row["benchmark"]`.
    pub benchmark: String,
    /// `row["target_tier_id"]` as an integer (a JSON bool counts as 0/1, as in Python).
    pub gold: i64,
    /// Warnings for quirks the reference accepts silently (unknown or inconsistent `target_tier`).
    pub warnings: Vec<String>,
}

/// Python `repr` of a JSON id for messages (`'abc'` for strings, JSON text otherwise).
pub fn id_repr(id: &Value) -> String {
    match id {
        Value::String(s) => repr(s),
        other => other.to_string(),
    }
}

/// Validate one row as the eval does, plus routeval's range check on the gold tier.
///
/// Errors (one line, `SOURCE:LINE: problem`): not an object; missing `id`; missing or non-string
/// `benchmark`; missing or non-integer `target_tier_id`; `target_tier_id` outside 0..=3 (the
/// reference crashes later with `KeyError`). Warnings: a `target_tier` string that is not a tier
/// label, or that disagrees with `target_tier_id` (the eval ignores `target_tier`).
pub fn check_row(row: &BankRow, source: &str) -> Result<CheckedRow, Error> {
    let at = || Location::at_line(source.to_string(), row.line);
    let obj = row
        .value
        .as_object()
        .ok_or_else(|| Error::input(at(), "row is not a JSON object"))?;
    let id = obj.get("id").cloned().ok_or_else(|| {
        Error::input(
            at(),
            "row has no \"id\" (the reference raises KeyError: 'id')",
        )
    })?;
    let benchmark = match obj.get("benchmark") {
        None => {
            return Err(Error::input(
                at(),
                format!(
                    "row {} has no \"benchmark\" (the reference raises KeyError: 'benchmark')",
                    id_repr(&id)
                ),
            ));
        }
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(Error::input(
                at(),
                format!("row {} missing string benchmark", id_repr(&id)),
            ));
        }
    };
    let gold = match obj.get("target_tier_id") {
        None => {
            return Err(Error::input(
                at(),
                format!(
                    "row {} has no \"target_tier_id\" (the reference raises KeyError)",
                    id_repr(&id)
                ),
            ));
        }
        Some(Value::Bool(b)) => *b as i64,
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.as_i64().unwrap_or(i64::MAX),
        Some(_) => {
            return Err(Error::input(
                at(),
                format!("row {} target_tier_id must be int", id_repr(&id)),
            ));
        }
    };
    if Tier::from_id(gold).is_none() {
        return Err(Error::input(
            at(),
            format!(
                "row {} target_tier_id {gold} is out of range (expected 0..3: low, mid, mid_high, high)",
                id_repr(&id)
            ),
        ));
    }
    let mut warnings = Vec::new();
    if let Some(label) = obj.get("target_tier") {
        match label.as_str().and_then(Tier::from_name) {
            None => warnings.push(format!(
                "{}: row {} has target_tier {} which is not a tier label; ignored (only target_tier_id is used, as in the reference)",
                at(),
                id_repr(&id),
                label
            )),
            Some(t) if t.id() as i64 != gold => warnings.push(format!(
                "{}: row {} has target_tier {:?} inconsistent with target_tier_id {gold}; ignored (only target_tier_id is used, as in the reference)",
                at(),
                id_repr(&id),
                t.name()
            )),
            Some(_) => {}
        }
    }
    Ok(CheckedRow {
        id,
        benchmark,
        gold,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_follows_python_line_rules() {
        let text = b"{\"a\":1}\r\n\n  \t\r{\"a\":2}\r{\"a\":3}\n\x1c\n";
        let rows: Vec<BankRow> = BankReader::new(&text[..], "b.jsonl")
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(
            rows.iter().map(|r| r.line).collect::<Vec<_>>(),
            vec![1, 4, 5]
        );
        let err = BankReader::new(&b"{\"a\":1}\n{oops\n"[..], "b.jsonl")
            .collect::<Result<Vec<_>, _>>()
            .unwrap_err();
        assert!(
            err.to_string().starts_with("b.jsonl:2: invalid JSON"),
            "{err}"
        );
        assert!(read_bank(&b"\n \n"[..], "e.jsonl").is_err());
    }

    #[test]
    fn quotas_of_published_manifest() {
        let q = manifest_proportional_quotas(&published_manifest(), 20).unwrap();
        let names: Vec<&str> = q.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["bfcl", "mtrag", "pinchbench", "qmsum", "swebench"]);
        assert_eq!(q.iter().map(|(_, k)| *k).sum::<i64>(), 20);
    }

    #[test]
    fn row_checks() {
        let row = |v: Value| BankRow { line: 3, value: v };
        let ok = check_row(&row(serde_json::json!({"id":"a","benchmark":"b","target_tier_id":2,"target_tier":"ultra"})), "f").unwrap();
        assert_eq!(ok.gold, 2);
        assert_eq!(ok.warnings.len(), 1);
        let e = check_row(
            &row(serde_json::json!({"id":"a","benchmark":"b","target_tier_id":"2"})),
            "f",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "f:3: row 'a' target_tier_id must be int");
        assert!(
            check_row(
                &row(serde_json::json!({"id":"a","benchmark":"b","target_tier_id":4})),
                "f"
            )
            .is_err()
        );
        assert!(check_row(&row(serde_json::json!({"id":"a","target_tier_id":1})), "f").is_err());
    }

    proptest::proptest! {
        #[test]
        fn reader_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            for r in BankReader::new(&bytes[..], "fuzz.jsonl") {
                let _ = r;
            }
        }

        #[test]
        fn quotas_sum_to_n_and_samples_fill_them(
            weights in proptest::collection::vec(1i64..60, 1..6),
            n in 1i64..80,
            seed in proptest::prelude::any::<i64>(),
        ) {
            let mut sources = serde_json::Map::new();
            let mut bank = String::new();
            for (i, w) in weights.iter().enumerate() {
                sources.insert(format!("b{i}"), serde_json::json!({"line_count": w}));
                for k in 0..*w {
                    bank.push_str(&format!("{{\"id\": \"b{i}_{k}\", \"benchmark\": \"b{i}\"}}\n"));
                }
            }
            let m = Manifest { value: serde_json::json!({"sources": sources}) };
            let q = manifest_proportional_quotas(&m, n).unwrap();
            proptest::prop_assert_eq!(q.iter().map(|(_, k)| k).sum::<i64>(), n);
            let total: i64 = weights.iter().sum();
            let mut rng = PyRandom::new(seed as i128);
            let got = proportional_reservoir_sample(BankReader::new(bank.as_bytes(), "b"), &mut rng, &q).unwrap();
            if n <= total && q.iter().all(|(name, k)| *k <= weights[name[1..].parse::<usize>().unwrap()]) {
                proptest::prop_assert_eq!(got.unwrap().len() as i64, n);
            } else {
                proptest::prop_assert!(got.is_err());
            }
        }
    }
}
