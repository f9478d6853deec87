//! `routeval filter`: grep for JSONL by a `where` query.
//!
//! Each line is one instance's `extra_info` object. Matching lines are printed unchanged (or,
//! with `--count`, their number). Only the top-level keys the query reads are parsed into
//! values; the rest of each line is validated and skipped. Lines are evaluated in parallel
//! (rayon) and printed in input order. Exit 0 whether or not anything matched; exit 2 with
//! one stderr line (error kind, and `FILE:LINE` for data errors) on a malformed query, an
//! invalid JSON line or a query/data error (`missing_key`, `type_error`); nothing is printed
//! on stdout then.

use crate::common::{Failure, display_name, emit, read_input};
use rayon::prelude::*;
use routeval_query_dsl::{OnMissingKey, Query, QueryError};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
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

/// Parses a JSON object keeping only `keys` (other members are syntax-checked and skipped).
struct Partial<'k> {
    keys: &'k [&'k str],
}

struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> DeserializeSeed<'de> for Partial<'_> {
    type Value = Map<String, Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Partial<'_> {
    type Value = Map<String, Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            if self.keys.contains(&k.as_ref()) {
                let v: Value = map.next_value()?;
                out.insert(k.into_owned(), v);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

/// Parse one line into the value the query is evaluated on: an object with only the needed
/// keys when the line is an object, otherwise the whole value.
pub(crate) fn parse_line(line: &[u8], keys: &[&str]) -> Result<Value, serde_json::Error> {
    let first = line.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'{') {
        let mut de = serde_json::Deserializer::from_slice(line);
        let m = Partial { keys }.deserialize(&mut de)?;
        de.end()?;
        Ok(Value::Object(m))
    } else {
        serde_json::from_slice(line)
    }
}

enum LineError {
    Json(serde_json::Error),
    Query(QueryError),
}

/// Run `routeval filter`.
pub(crate) fn run(args: FilterArgs) -> Result<u8, Failure> {
    let omk: OnMissingKey = args
        .on_missing_key
        .parse()
        .map_err(|e: QueryError| Failure::bad_input(format!("--on-missing-key: {e}")))?;
    let query = Query::parse_str(&args.where_)
        .map_err(|e| Failure::bad_input(format!("--where: {e}")))?;
    let name = display_name(&args.file);
    let bytes = read_input(&args.file)?;
    let keys = query.top_level_keys();

    // Line spans (split on \n only, as the JSONL producers escape U+2028/U+2029).
    let mut spans = Vec::new();
    let mut start = 0usize;
    for nl in memchr::memchr_iter(b'\n', &bytes) {
        spans.push((start, nl));
        start = nl + 1;
    }
    if start < bytes.len() {
        spans.push((start, bytes.len()));
    }

    let results: Vec<Result<Option<bool>, LineError>> = spans
        .par_iter()
        .with_min_len(512)
        .map(|&(a, b)| {
            let line = &bytes[a..b];
            if line.iter().all(|c| c.is_ascii_whitespace()) {
                return Ok(None);
            }
            let v = parse_line(line, &keys).map_err(LineError::Json)?;
            query.matches(&v, omk).map(Some).map_err(LineError::Query)
        })
        .collect();

    let mut out = Vec::new();
    let mut count = 0u64;
    let mut total = 0u64;
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(None) => {}
            Ok(Some(m)) => {
                total += 1;
                if m {
                    count += 1;
                    if !args.count {
                        let (a, b) = spans[i];
                        out.extend_from_slice(&bytes[a..b]);
                        out.push(b'\n');
                    }
                }
            }
            Err(LineError::Json(e)) => {
                return Err(Failure::bad_input(format!(
                    "{name}:{}: invalid JSON: {e}",
                    i + 1
                )));
            }
            Err(LineError::Query(e)) => {
                return Err(Failure::bad_input(format!("{name}:{}: {e}", i + 1)));
            }
        }
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
