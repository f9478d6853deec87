//! Source readers: bytes in, rows ([`Record`]s) out. No paths, no IO beyond the bytes given.
//!
//! * CSV with pandas `read_csv` defaults: a header row (or given names), cells stay strings,
//!   and pandas' default NA strings (`""`, `NA`, `N/A`, `NaN`, `null`, `None`, …) become
//!   `null`, as pandas would read them.
//! * JSON: an array of objects, or an object whose `data` (or only) member is one.
//! * JSONL: one object per non-blank line.
//! * Parquet (feature `parquet`): the `parquet` crate's record API, no arrow.

use crate::gqr::registry::Format;
use crate::gqr::rows::Record;
use serde_json::Value;

/// A source that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A malformed CSV record.
    #[error("{name}: CSV record {record}: {message}")]
    Csv {
        /// The input name.
        name: String,
        /// 1-based record number.
        record: u64,
        /// What is wrong.
        message: String,
    },
    /// Malformed JSON / JSONL.
    #[error("{name}:{line}: {message}")]
    Json {
        /// The input name.
        name: String,
        /// 1-based line (JSONL) or the parser's line (JSON).
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A malformed or unsupported Parquet file.
    #[error("{name}: parquet: {message}")]
    Parquet {
        /// The input name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// The format is compiled out.
    #[error("{name}: {format:?} support is not compiled in (enable the `parquet` feature)")]
    Unsupported {
        /// The input name.
        name: String,
        /// The format.
        format: Format,
    },
}

/// pandas' default NA strings (`pandas._libs.parsers.STR_NA_VALUES`, pandas ≥ 2.0).
pub const PANDAS_NA: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// Read `bytes` (named `name` in errors) in `format`. `header` and `columns` apply to CSV.
pub fn read_rows(
    name: &str,
    bytes: &[u8],
    format: Format,
    header: bool,
    columns: &[String],
) -> Result<Vec<Record>, ReadError> {
    let mut out = Vec::new();
    for_each_row(name, bytes, format, header, columns, &mut |r| out.push(r))?;
    Ok(out)
}

/// Stream the rows of `bytes` to `f` one at a time (CSV, JSONL and Parquet never hold more
/// than one parsed row; a JSON array is parsed whole). Returns the number of rows.
pub fn for_each_row(
    name: &str,
    bytes: &[u8],
    format: Format,
    header: bool,
    columns: &[String],
    f: &mut dyn FnMut(Record),
) -> Result<u64, ReadError> {
    match format {
        Format::Csv => each_csv(name, bytes, header, columns, f),
        Format::Json => {
            let rows = read_json(name, bytes)?;
            let n = rows.len() as u64;
            rows.into_iter().for_each(&mut *f);
            Ok(n)
        }
        Format::Jsonl => each_jsonl(name, bytes, f),
        Format::Parquet => each_parquet(name, bytes, f),
    }
}

/// CSV with pandas defaults (see the module docs).
pub fn read_csv(
    name: &str,
    bytes: &[u8],
    header: bool,
    columns: &[String],
) -> Result<Vec<Record>, ReadError> {
    let mut out = Vec::new();
    each_csv(name, bytes, header, columns, &mut |r| out.push(r))?;
    Ok(out)
}

fn each_csv(
    name: &str,
    bytes: &[u8],
    header: bool,
    columns: &[String],
    f: &mut dyn FnMut(Record),
) -> Result<u64, ReadError> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(header)
        .flexible(false)
        .from_reader(bytes);
    let err = |record: u64, e: &dyn std::fmt::Display| ReadError::Csv {
        name: name.to_string(),
        record,
        message: e.to_string(),
    };
    let names: Vec<String> = if header {
        rdr.headers()
            .map_err(|e| err(1, &e))?
            .iter()
            .map(str::to_string)
            .collect()
    } else {
        columns.to_vec()
    };
    let mut n = 0u64;
    for (i, rec) in rdr.records().enumerate() {
        let rec = rec.map_err(|e| err(i as u64 + 1 + header as u64, &e))?;
        let mut row = Record::new();
        for (j, cell) in rec.iter().enumerate() {
            let key = names.get(j).cloned().unwrap_or_else(|| j.to_string());
            let v = if PANDAS_NA.contains(&cell) {
                Value::Null
            } else {
                Value::String(cell.to_string())
            };
            row.insert(key, v);
        }
        f(row);
        n += 1;
    }
    Ok(n)
}

fn as_record(name: &str, line: u64, v: Value) -> Result<Record, ReadError> {
    match v {
        Value::Object(m) => Ok(m),
        other => Err(ReadError::Json {
            name: name.to_string(),
            line,
            message: format!("expected an object, got {}", short(&other)),
        }),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

/// A JSON array of objects, or an object holding one under `data` (or as its only member).
pub fn read_json(name: &str, bytes: &[u8]) -> Result<Vec<Record>, ReadError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| ReadError::Json {
        name: name.to_string(),
        line: e.line() as u64,
        message: e.to_string(),
    })?;
    let arr = match v {
        Value::Array(a) => a,
        Value::Object(mut m) => match m.remove("data") {
            Some(Value::Array(a)) => a,
            _ if m.len() == 1 => match m.into_iter().next() {
                Some((_, Value::Array(a))) => a,
                _ => Vec::new(),
            },
            _ => {
                return Err(ReadError::Json {
                    name: name.to_string(),
                    line: 1,
                    message: "expected an array of objects".into(),
                });
            }
        },
        other => {
            return Err(ReadError::Json {
                name: name.to_string(),
                line: 1,
                message: format!("expected an array of objects, got {}", short(&other)),
            });
        }
    };
    arr.into_iter().map(|v| as_record(name, 1, v)).collect()
}

/// JSON lines: one object per non-blank line.
pub fn read_jsonl(name: &str, bytes: &[u8]) -> Result<Vec<Record>, ReadError> {
    let mut out = Vec::new();
    each_jsonl(name, bytes, &mut |r| out.push(r))?;
    Ok(out)
}

fn each_jsonl(name: &str, bytes: &[u8], f: &mut dyn FnMut(Record)) -> Result<u64, ReadError> {
    let mut n = 0u64;
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = i as u64 + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let v: Value = serde_json::from_slice(line).map_err(|e| ReadError::Json {
            name: name.to_string(),
            line: line_no,
            message: e.to_string(),
        })?;
        f(as_record(name, line_no, v)?);
        n += 1;
    }
    Ok(n)
}

/// Parquet through the record API (each row as a JSON object).
pub fn read_parquet(name: &str, bytes: &[u8]) -> Result<Vec<Record>, ReadError> {
    let mut out = Vec::new();
    each_parquet(name, bytes, &mut |r| out.push(r))?;
    Ok(out)
}

#[cfg(feature = "parquet")]
fn each_parquet(name: &str, bytes: &[u8], f: &mut dyn FnMut(Record)) -> Result<u64, ReadError> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let perr = |e: &dyn std::fmt::Display| ReadError::Parquet {
        name: name.to_string(),
        message: e.to_string(),
    };
    let data = bytes::Bytes::copy_from_slice(bytes);
    let reader = contained(|| SerializedFileReader::new(data))
        .map_err(|m| perr(&m))?
        .map_err(|e| perr(&e))?;
    let mut iter = contained(|| reader.get_row_iter(None))
        .map_err(|m| perr(&m))?
        .map_err(|e| perr(&e))?;
    let mut n = 0u64;
    loop {
        let Some(row) = contained(|| iter.next()).map_err(|m| perr(&m))? else {
            break;
        };
        let row = row.map_err(|e| perr(&e))?;
        f(as_record(name, n + 1, row.to_json_value())?);
        n += 1;
    }
    Ok(n)
}

/// Run a step of the `parquet` crate, turning a panic inside it into an error message.
///
/// `parquet` asserts on some malformed metadata instead of returning an error (found by
/// fuzzing: a negative column chunk offset panics with "column start and length should not
/// be negative"). routeval never panics on input, so such a file is a `ReadError::Parquet`
/// ([`routeval_core::contain::contained`]: the panic's default message is suppressed).
#[cfg(feature = "parquet")]
fn contained<T>(step: impl FnOnce() -> T) -> Result<T, String> {
    routeval_core::contain::contained(step)
        .map_err(|what| format!("malformed file (the parquet reader failed: {what})"))
}

/// Parquet support is compiled out.
#[cfg(not(feature = "parquet"))]
fn each_parquet(name: &str, _bytes: &[u8], _f: &mut dyn FnMut(Record)) -> Result<u64, ReadError> {
    Err(ReadError::Unsupported {
        name: name.to_string(),
        format: Format::Parquet,
    })
}
