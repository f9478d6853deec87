//! `routeval filter`: grep for JSONL by a `where` query.
//!
//! Each line is one instance's `extra_info` object. Matching lines are printed unchanged (or,
//! with `--count`, their number). Only the top-level keys the query reads are parsed into
//! values; the rest of each line is validated and skipped. Lines are evaluated in parallel
//! (rayon) and printed in input order. Exit 0 whether or not anything matched; exit 2 with
//! one stderr line (error kind, and `FILE:LINE` for data errors) on a malformed query, an
//! invalid JSON line or a query/data error (`missing_key`, `type_error`); nothing is printed
//! on stdout then. Members the query does not read are checked for structure only (strings
//! terminated, brackets balanced, scalars valid), not parsed.

use crate::common::{Failure, display_name, emit, open_input};
use rayon::prelude::*;
use routeval_query_dsl::{OnMissingKey, Query, QueryError};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::io::Read;
use std::path::PathBuf;

/// Arguments of `routeval filter`.
#[derive(Debug, clap::Args)]
pub(crate) struct FilterArgs {
    /// The query, a JSON object, e.g. '{"task": "qa", "meta.lang": {"in": ["en", "ja"]}}'.
    #[arg(long = "where", value_name = "JSON")]
    where_: String,
    /// What a path missing from a line does: `skip` (not a match) or `error` (exit 2).
    #[arg(long, value_name = "skip|error", default_value = "skip")]
    on_missing_key: String,
    /// Print the number of matching lines instead of the lines.
    #[arg(long)]
    count: bool,
    /// With --count: print `{"count": N, "total": M}` instead of the bare number.
    #[arg(long)]
    json: bool,
    /// Write what would be printed to PATH.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
    /// The JSONL file (`-` = stdin).
    file: PathBuf,
}

/// A structural error in a line that the fast scanner found.
fn scan_error(what: &str, at: usize) -> serde_json::Error {
    <serde_json::Error as serde::de::Error>::custom(format!("{what} at byte {}", at + 1))
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// End (exclusive) of the JSON string starting at `b[i] == b'"'`. Short strings (most keys
/// and values) are scanned bytewise; long ones with `memchr2`.
fn skip_string(b: &[u8], i: usize) -> Result<usize, serde_json::Error> {
    let mut j = i + 1;
    let short_end = (j + 24).min(b.len());
    while j < short_end {
        match b[j] {
            b'"' => return Ok(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
    while j < b.len() {
        match memchr::memchr2(b'"', b'\\', &b[j..]) {
            None => break,
            Some(k) => {
                if b[j + k] == b'\\' {
                    j += k + 2;
                } else {
                    return Ok(j + k + 1);
                }
            }
        }
    }
    Err(scan_error("unterminated string", i))
}

/// Whether `s` is a JSON number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
fn is_json_number(s: &[u8]) -> bool {
    let mut i = 0;
    let digits = |i: &mut usize| {
        let st = *i;
        while *i < s.len() && s[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > st
    };
    if s.first() == Some(&b'-') {
        i += 1;
    }
    if s.get(i) == Some(&b'0') {
        i += 1;
    } else if !digits(&mut i) {
        return false;
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == s.len()
}

/// End (exclusive) of the JSON value starting at `b[i]` (structure only: strings, brackets,
/// scalar tokens).
fn skip_value(b: &[u8], i: usize) -> Result<usize, serde_json::Error> {
    match b.get(i) {
        None => Err(scan_error("expected a value", i)),
        Some(b'"') => skip_string(b, i),
        Some(b'{' | b'[') => {
            // Open brackets as a bit stack (1 = object); deeper nesting spills to a Vec.
            let mut bits: u64 = u64::from(b[i] == b'{');
            let mut depth = 1usize;
            let mut spill: Vec<u64> = Vec::new();
            let mut j = i + 1;
            while let Some(&c) = b.get(j) {
                match c {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => {
                        if depth.is_multiple_of(64) {
                            spill.push(bits);
                            bits = 0;
                        }
                        bits = (bits << 1) | u64::from(c == b'{');
                        depth += 1;
                    }
                    b'}' | b']' => {
                        if (bits & 1 == 1) != (c == b'}') {
                            return Err(scan_error("mismatched bracket", j));
                        }
                        bits >>= 1;
                        depth -= 1;
                        if depth == 0 {
                            return Ok(j + 1);
                        }
                        if depth.is_multiple_of(64) {
                            bits = spill.pop().unwrap_or(0);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            Err(scan_error("unterminated array or object", i))
        }
        Some(_) => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            let tok = &b[i..j];
            if matches!(tok, b"true" | b"false" | b"null") || is_json_number(tok) {
                Ok(j)
            } else {
                Err(scan_error("invalid value", i))
            }
        }
    }
}

/// Parse one line into the value the query is evaluated on. For an object line, only the
/// members named in `keys` are parsed (fully, by serde_json); the others are checked for
/// structure (strings, brackets, scalars) and skipped. Any other line is parsed whole.
pub(crate) fn parse_line(line: &[u8], keys: &[&str]) -> Result<Value, serde_json::Error> {
    let b = line;
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return serde_json::from_slice(line);
    }
    let mut out = Map::new();
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            if b.get(i) != Some(&b'"') {
                return Err(scan_error("expected a string key", i));
            }
            let kend = skip_string(b, i)?;
            let raw = &b[i + 1..kend - 1];
            let key: Cow<'_, str> = if raw.contains(&b'\\') {
                Cow::Owned(serde_json::from_slice::<String>(&b[i..kend])?)
            } else {
                Cow::Borrowed(std::str::from_utf8(raw).map_err(|_| scan_error("invalid UTF-8", i))?)
            };
            i = skip_ws(b, kend);
            if b.get(i) != Some(&b':') {
                return Err(scan_error("expected ':'", i));
            }
            i = skip_ws(b, i + 1);
            let vend = skip_value(b, i)?;
            if keys.contains(&key.as_ref()) {
                let v: Value = serde_json::from_slice(&b[i..vend])?;
                out.insert(key.into_owned(), v);
            }
            i = skip_ws(b, vend);
            match b.get(i) {
                Some(b',') => i = skip_ws(b, i + 1),
                Some(b'}') => {
                    i += 1;
                    break;
                }
                _ => return Err(scan_error("expected ',' or '}'", i)),
            }
        }
    }
    if skip_ws(b, i) != b.len() {
        return Err(scan_error("trailing characters", i));
    }
    if std::str::from_utf8(line).is_err() {
        return Err(scan_error("invalid UTF-8", 0));
    }
    Ok(Value::Object(out))
}

/// The JSON type name of a value, for error messages.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

enum LineError {
    Json(serde_json::Error),
    Query(QueryError),
    /// The line is valid JSON but not an object (each line is one instance's extra_info).
    NotObject(&'static str),
}

/// Bytes read per chunk: the input is streamed through one reused buffer.
const CHUNK: usize = 8 << 20;

/// Evaluate the complete lines of `region` (1-based numbering from `first_line`), appending
/// matching lines to `out` (unless counting) and counting matches and non-blank lines.
#[allow(clippy::too_many_arguments)]
fn process_region(
    region: &[u8],
    first_line: usize,
    query: &Query,
    keys: &[&str],
    omk: OnMissingKey,
    name: &str,
    keep_lines: bool,
    out: &mut Vec<u8>,
    count: &mut u64,
    total: &mut u64,
) -> Result<usize, Failure> {
    let mut spans = Vec::new();
    let mut start = 0usize;
    for nl in memchr::memchr_iter(b'\n', region) {
        spans.push((start, nl));
        start = nl + 1;
    }
    if start < region.len() {
        spans.push((start, region.len()));
    }
    let results: Vec<Result<Option<bool>, LineError>> = spans
        .par_iter()
        .with_min_len(512)
        .map(|&(a, b)| {
            let line = &region[a..b];
            if line.iter().all(|c| c.is_ascii_whitespace()) {
                return Ok(None);
            }
            let v = parse_line(line, keys).map_err(LineError::Json)?;
            if !v.is_object() {
                return Err(LineError::NotObject(json_kind(&v)));
            }
            query.matches(&v, omk).map(Some).map_err(LineError::Query)
        })
        .collect();
    for (i, r) in results.into_iter().enumerate() {
        let line_no = first_line + i;
        match r {
            Ok(None) => {}
            Ok(Some(m)) => {
                *total += 1;
                if m {
                    *count += 1;
                    if keep_lines {
                        let (a, b) = spans[i];
                        out.extend_from_slice(&region[a..b]);
                        out.push(b'\n');
                    }
                }
            }
            Err(LineError::Json(e)) => {
                return Err(Failure::bad_input(format!(
                    "{name}:{line_no}: invalid JSON: {e}"
                )));
            }
            Err(LineError::Query(e)) => {
                return Err(Failure::bad_input(format!("{name}:{line_no}: {e}")));
            }
            Err(LineError::NotObject(kind)) => {
                return Err(Failure::bad_input(format!(
                    "{name}:{line_no}: bad_instance: each line must be a JSON object, got {kind}"
                )));
            }
        }
    }
    Ok(spans.len())
}

/// Run `routeval filter`.
pub(crate) fn run(args: FilterArgs) -> Result<u8, Failure> {
    let omk: OnMissingKey = args
        .on_missing_key
        .parse()
        .map_err(|e: QueryError| Failure::bad_input(format!("--on-missing-key: {e}")))?;
    let query =
        Query::parse_str(&args.where_).map_err(|e| Failure::bad_input(format!("--where: {e}")))?;
    let name = display_name(&args.file);
    let mut reader = open_input(&args.file)?;
    let keys = query.top_level_keys();

    let mut out = Vec::new();
    let mut count = 0u64;
    let mut total = 0u64;
    let mut next_line = 1usize;
    let mut buf: Vec<u8> = Vec::new();
    let mut eof = false;
    while !eof {
        let old = buf.len();
        buf.resize(old + CHUNK, 0);
        let mut filled = old;
        while filled < buf.len() {
            match reader.read(&mut buf[filled..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(k) => filled += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Failure::bad_input(format!("{name}: cannot read: {e}"))),
            }
        }
        buf.truncate(filled);
        // Split lines on \n only (the JSONL producers escape U+2028/U+2029).
        let end = if eof {
            buf.len()
        } else {
            match memchr::memrchr(b'\n', &buf) {
                Some(p) => p + 1,
                None => continue, // a line longer than the chunk: read more
            }
        };
        next_line += process_region(
            &buf[..end],
            next_line,
            &query,
            &keys,
            omk,
            &name,
            !args.count,
            &mut out,
            &mut count,
            &mut total,
        )?;
        buf.drain(..end);
    }
    if args.count {
        out = if args.json {
            format!("{{\"count\": {count}, \"total\": {total}}}\n").into_bytes()
        } else {
            format!("{count}\n").into_bytes()
        };
    }
    emit(args.output.as_ref(), &out)?;
    Ok(crate::common::EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::parse_line;
    use serde_json::{Value, json};

    #[test]
    fn partial_parse_keeps_needed_keys() {
        let line = br#" {"a": [1, {"x": "}"}], "b\u0041": "q\"", "c": {"d": null}, "a": 7 } "#;
        let v = parse_line(line, &["a", "bA", "zz"]).unwrap();
        assert_eq!(v, json!({"a": 7, "bA": "q\""}));
        assert_eq!(parse_line(b"[1, 2]", &["0"]).unwrap(), json!([1, 2]));
        assert_eq!(parse_line(b"{}", &["a"]).unwrap(), json!({}));
    }

    #[test]
    fn partial_parse_rejects_broken_lines() {
        for bad in [
            &b"{\"a\": 1"[..],
            b"{\"a\" 1}",
            b"{\"a\": [1, 2}",
            b"{\"a\": tru}",
            b"{\"a\": 1,}",
            b"{\"a\": 1} x",
            b"{\"a\": \"x}",
            b"{a: 1}",
        ] {
            assert!(
                parse_line(bad, &["b"]).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let _: Value = parse_line(b"{\"a\": 1}", &[]).unwrap();
    }
}
