//! Source rows, the registry's row filters and text builders, with pandas/Python semantics.
//!
//! A row is a JSON object ([`Record`]); readers produce them from CSV, JSON, JSONL and
//! Parquet. Every filter counts what it drops ([`FilterStats`]), so no row disappears
//! silently.

use super::text::{is_finance_question, legal_qa_question, py_strip, reddit_post};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One source row: column name → value (`null` for missing/NaN).
pub type Record = serde_json::Map<String, Value>;

/// Python's `str(x)` for a JSON value (`None`, `True`, ints, float `repr` such as `1e-05`,
/// strings as is): `routeval_core::py::str_value`, the one definition.
pub use routeval_core::py::str_value as py_str;

/// Is the value missing (`None`/NaN)?
pub fn is_null(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// pandas `==` between a cell and a constant, with CSV cells (strings) compared by their
/// numeric value when the constant is a number.
pub fn loose_eq(cell: Option<&Value>, want: &Value) -> bool {
    match (cell, want) {
        (None | Some(Value::Null), _) => false,
        (Some(Value::Number(a)), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Some(Value::String(s)), Value::Number(b)) => s.trim().parse::<f64>().ok() == b.as_f64(),
        (Some(Value::Bool(a)), Value::Number(b)) => Some(if *a { 1.0 } else { 0.0 }) == b.as_f64(),
        (Some(a), b) => a == b,
    }
}

/// A row filter from the registry, applied in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Filter {
    /// `x is not None and x.strip() != ""` (with `cast_str`: `len(str(x).strip()) > 0`).
    NotBlank {
        /// The column.
        column: String,
        /// Apply Python `str()` first (non-strings allowed).
        #[serde(default)]
        cast_str: bool,
    },
    /// Every column of the row is not None.
    AllNotNull,
    /// Any of `columns` equals `value` (pandas `==`).
    AnyEquals {
        /// The columns.
        columns: Vec<String>,
        /// The value.
        value: Value,
    },
    /// `column == value`.
    Equals {
        /// The column.
        column: String,
        /// The value.
        value: Value,
    },
    /// `column` is one of `values`.
    InSet {
        /// The column.
        column: String,
        /// Accepted values.
        values: Vec<Value>,
    },
    /// `dropna(subset=[column])`.
    DropNull {
        /// The column.
        column: String,
    },
    /// Drop rows whose `column.strip() == ""`.
    DropBlank {
        /// The column.
        column: String,
    },
    /// The finance keyword pattern matches the raw value (`is_finance_question`).
    FinanceKeyword {
        /// The column.
        column: String,
    },
    /// Keep only the first `n` rows (before any other filter that follows).
    Head {
        /// Rows kept.
        n: usize,
    },
    /// Wikitext: `len(text.strip()) >= min_chars` and `text.strip()` does not start with `=`.
    WikitextParagraph {
        /// The column.
        column: String,
        /// Minimum stripped length in code points.
        min_chars: usize,
    },
    /// `len(str(x).strip()) >= min_chars`.
    MinChars {
        /// The column.
        column: String,
        /// Minimum stripped length in code points.
        min_chars: usize,
    },
    /// `f"{a} {b}"` has at least `min_words` whitespace-separated words.
    MinWordsJoined {
        /// The columns joined with one space.
        columns: Vec<String>,
        /// Minimum words.
        min_words: usize,
    },
}

impl Filter {
    /// Does `row` pass? (`Head` is positional and handled by [`apply_filters`].)
    pub fn keep(&self, row: &Record) -> bool {
        match self {
            Filter::NotBlank { column, cast_str } => match row.get(column) {
                None | Some(Value::Null) => false,
                Some(Value::String(s)) => !py_strip(s).is_empty(),
                Some(v) => *cast_str && !py_strip(&py_str(v)).is_empty(),
            },
            Filter::AllNotNull => row.values().all(|v| !v.is_null()),
            Filter::AnyEquals { columns, value } => {
                columns.iter().any(|c| loose_eq(row.get(c), value))
            }
            Filter::Equals { column, value } => loose_eq(row.get(column), value),
            Filter::InSet { column, values } => values.iter().any(|v| loose_eq(row.get(column), v)),
            Filter::DropNull { column } => !is_null(row.get(column)),
            Filter::DropBlank { column } => match row.get(column) {
                Some(Value::String(s)) => !py_strip(s).is_empty(),
                _ => true,
            },
            Filter::FinanceKeyword { column } => match row.get(column) {
                None | Some(Value::Null) => false,
                Some(v) => is_finance_question(&py_str(v)),
            },
            Filter::Head { .. } => true,
            Filter::WikitextParagraph { column, min_chars } => match row.get(column) {
                Some(Value::String(s)) => {
                    let t = py_strip(s);
                    t.chars().count() >= *min_chars && !t.starts_with('=')
                }
                _ => false,
            },
            Filter::MinChars { column, min_chars } => match row.get(column) {
                None | Some(Value::Null) => false,
                Some(v) => py_strip(&py_str(v)).chars().count() >= *min_chars,
            },
            Filter::MinWordsJoined { columns, min_words } => {
                let joined: Vec<String> = columns
                    .iter()
                    .map(|c| row.get(c).map(py_str).unwrap_or_else(|| "None".into()))
                    .collect();
                joined
                    .join(" ")
                    .split(super::text::is_py_space)
                    .filter(|w| !w.is_empty())
                    .count()
                    >= *min_words
            }
        }
    }

    /// A short description for statistics.
    pub fn describe(&self) -> String {
        match self {
            Filter::NotBlank { column, .. } => format!("not_blank({column})"),
            Filter::AllNotNull => "all_not_null".into(),
            Filter::AnyEquals { columns, value } => {
                format!("any_equals({}=={value})", columns.join("|"))
            }
            Filter::Equals { column, value } => format!("equals({column}=={value})"),
            Filter::InSet { column, .. } => format!("in_set({column})"),
            Filter::DropNull { column } => format!("drop_null({column})"),
            Filter::DropBlank { column } => format!("drop_blank({column})"),
            Filter::FinanceKeyword { column } => format!("finance_keyword({column})"),
            Filter::Head { n } => format!("head({n})"),
            Filter::WikitextParagraph { column, .. } => format!("wikitext_paragraph({column})"),
            Filter::MinChars { column, min_chars } => format!("min_chars({column}>={min_chars})"),
            Filter::MinWordsJoined { min_words, .. } => format!("min_words_joined(>={min_words})"),
        }
    }
}

/// Rows dropped by each filter, in filter order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FilterStats {
    /// Rows read.
    pub rows_in: u64,
    /// `(filter, rows dropped)`.
    pub dropped: Vec<(String, u64)>,
    /// Rows kept.
    pub rows_out: u64,
}

/// Apply `filters` in order (each one to the survivors of the previous), counting drops.
pub fn apply_filters(rows: Vec<Record>, filters: &[Filter]) -> (Vec<Record>, FilterStats) {
    let mut stats = FilterStats {
        rows_in: rows.len() as u64,
        ..Default::default()
    };
    let mut rows = rows;
    for f in filters {
        let before = rows.len();
        if let Filter::Head { n } = f {
            rows.truncate(*n);
        } else {
            rows.retain(|r| f.keep(r));
        }
        stats
            .dropped
            .push((f.describe(), (before - rows.len()) as u64));
    }
    stats.rows_out = rows.len() as u64;
    (rows, stats)
}

/// How a row becomes a text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TextSpec {
    /// A column (`str()` of non-strings; `None` stays missing).
    Column {
        /// The column.
        column: String,
    },
    /// `reddit_post(title, body)` (bot threads give no text).
    RedditPost {
        /// Title column.
        title: String,
        /// Body column.
        body: String,
    },
    /// `legal_qa_question(q)` (rows without a `Q:` give no text).
    LegalQaQuestion {
        /// The column.
        column: String,
    },
    /// `f"{a} {b}".strip()`.
    JoinedStripped {
        /// The columns.
        columns: Vec<String>,
    },
    /// `detokenize_wikitext(text)`.
    Wikitext {
        /// The column.
        column: String,
    },
}

/// What a [`TextSpec`] makes of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowText {
    /// A text.
    Text(String),
    /// The value is missing (`None`); kept as a missing text where upstream keeps it.
    Missing,
    /// The builder rejects the row (a bot thread, a question without `Q:`).
    Rejected,
}

impl TextSpec {
    /// The text of `row`.
    pub fn text(&self, row: &Record) -> RowText {
        let col = |c: &str| match row.get(c) {
            None | Some(Value::Null) => None,
            Some(v) => Some(py_str(v)),
        };
        let opt = |t: Option<String>| match t {
            Some(t) => RowText::Text(t),
            None => RowText::Rejected,
        };
        match self {
            TextSpec::Column { column } => match col(column) {
                Some(t) => RowText::Text(t),
                None => RowText::Missing,
            },
            TextSpec::RedditPost { title, body } => {
                opt(reddit_post(col(title).as_deref(), col(body).as_deref()))
            }
            TextSpec::LegalQaQuestion { column } => opt(legal_qa_question(col(column).as_deref())),
            TextSpec::JoinedStripped { columns } => {
                let parts: Vec<String> = columns
                    .iter()
                    .map(|c| row.get(c).map(py_str).unwrap_or_else(|| "None".into()))
                    .collect();
                RowText::Text(py_strip(&parts.join(" ")).to_string())
            }
            TextSpec::Wikitext { column } => match col(column) {
                Some(t) => RowText::Text(super::text::detokenize_wikitext(&t)),
                None => RowText::Missing,
            },
        }
    }

    /// The columns the builder reads (checked against the source before building).
    pub fn columns(&self) -> Vec<&str> {
        match self {
            TextSpec::Column { column }
            | TextSpec::LegalQaQuestion { column }
            | TextSpec::Wikitext { column } => vec![column],
            TextSpec::RedditPost { title, body } => vec![title, body],
            TextSpec::JoinedStripped { columns } => columns.iter().map(String::as_str).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(v: Value) -> Record {
        Record::from_iter([("q".to_string(), v)])
    }

    /// `len(str(x).strip()) >= n` counts the characters of Python's `str()`: CPython 3.11
    /// gives `str(1e-05) == '1e-05'` (5 characters; an earlier copy wrote `0.00001`, 7) and
    /// `str(1e16) == '1e+16'`.
    #[test]
    fn min_chars_counts_python_str_of_floats() {
        let f = |n| Filter::MinChars {
            column: "q".into(),
            min_chars: n,
        };
        assert_eq!(py_str(&json!(1e-05)), "1e-05");
        assert!(f(5).keep(&row(json!(1e-05))));
        assert!(!f(6).keep(&row(json!(1e-05))));
        assert_eq!(py_str(&json!(1e16)), "1e+16");
        assert!(!f(6).keep(&row(json!(1e16))));
        assert_eq!(py_str(&json!(0.0001)), "0.0001");
        assert!(f(6).keep(&row(json!(0.0001))));
        assert_eq!(py_str(&json!(2.0)), "2.0");
        assert_eq!(py_str(&json!(true)), "True");
        assert_eq!(py_str(&json!([1, "a"])), "[1, 'a']");
    }
}
