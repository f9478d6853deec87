//! Compiling and evaluating a `where` query (`specs/query-dsl.md` §B1–B10, with the
//! corrections at its top; the user's description `seeds/flexeval_query_routed_metric.md`
//! decides where they differ).

use crate::doc::{Doc, DocRef, Items};
use crate::error::QueryError;
use crate::pyre::PyRegex;
use crate::pyvalue::{Num, as_num, cmp_num, py_eq, py_type_name};
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// What to do when a path used by a query is missing from an instance.
///
/// `Skip` (the default) makes every operator except `exists` false; `Error` raises
/// [`QueryError::MissingKey`]. Out-of-range list indexes and keys missing inside
/// `elem_match` items never raise (the user's description).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum OnMissingKey {
    /// Treat the instance as not matching.
    #[default]
    Skip,
    /// Raise [`QueryError::MissingKey`].
    Error,
}

impl FromStr for OnMissingKey {
    type Err = QueryError;

    /// Parse `"skip"` or `"error"`; anything else is [`QueryError::BadOption`].
    fn from_str(s: &str) -> Result<Self, QueryError> {
        match s {
            "skip" => Ok(OnMissingKey::Skip),
            "error" => Ok(OnMissingKey::Error),
            other => Err(QueryError::BadOption(format!(
                "on_missing_key must be one of ('skip', 'error'), got {other:?}"
            ))),
        }
    }
}

impl fmt::Display for OnMissingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OnMissingKey::Skip => "skip",
            OnMissingKey::Error => "error",
        })
    }
}

impl OnMissingKey {
    /// Parse an option value as it appears in JSON: a string `"skip"`/`"error"`, or null for
    /// the default. Anything else is [`QueryError::BadOption`].
    pub fn from_json(v: Option<&Value>) -> Result<Self, QueryError> {
        match v {
            None | Some(Value::Null) => Ok(OnMissingKey::Skip),
            Some(Value::String(s)) => s.parse(),
            Some(other) => Err(QueryError::BadOption(format!(
                "on_missing_key must be one of ('skip', 'error'), got {other}"
            ))),
        }
    }
}

/// One segment of a dotted path.
#[derive(Debug, Clone, PartialEq)]
struct Segment {
    text: String,
    /// Set when the text is an ASCII integer `-?[0-9]+` (saturated when out of `i64`).
    index: Option<i64>,
    wildcard: bool,
}

/// A dotted path into a JSON value (`"meta.lang"`, `"messages.-1.role"`, `"tags.*"`).
///
/// Segments are split on `.` (no escaping). On an object a segment is a literal key (digits
/// and `*` included); on an array `*` fans out over the items and an ASCII integer is an index
/// (negative from the end); scalars have no children.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    text: String,
    segments: Vec<Segment>,
}

impl Path {
    /// Parse a path.
    ///
    /// # Errors
    /// [`QueryError::BadPath`] for an empty path or an empty segment (`"a..b"`, `".a"`).
    pub fn parse(text: &str) -> Result<Path, QueryError> {
        if text.is_empty() {
            return Err(QueryError::BadPath("path must not be empty".into()));
        }
        let mut segments = Vec::new();
        for part in text.split('.') {
            if part.is_empty() {
                return Err(QueryError::BadPath(format!(
                    "empty segment in path {text:?}"
                )));
            }
            let digits = part.strip_prefix('-').unwrap_or(part);
            let index = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                Some(part.parse::<i64>().unwrap_or(if part.starts_with('-') {
                    i64::MIN
                } else {
                    i64::MAX
                }))
            } else {
                None
            };
            segments.push(Segment {
                text: part.to_string(),
                index,
                wildcard: part == "*",
            });
        }
        Ok(Path {
            text: text.to_string(),
            segments,
        })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether a segment is `*`.
    pub fn has_wildcard(&self) -> bool {
        self.segments.iter().any(|s| s.wildcard)
    }

    /// Resolve the path in `root`.
    pub fn resolve<'a>(&self, root: &'a Value) -> Resolved<'a> {
        match resolve(root, &self.segments) {
            Res::Missing => Resolved::Missing,
            Res::OutOfRange => Resolved::OutOfRange,
            Res::One(v) => Resolved::One(v),
            Res::Many(vs) => Resolved::Many(vs),
        }
    }
}

/// A JSON node the evaluator can read: a `serde_json::Value` (the reference path) or a node
/// of a [`Doc`] tape. Both give identical results (`tests/props.rs`).
pub(crate) trait JsonNode<'a>: Copy + 'a {
    /// Iterator over an array's items.
    type Items: Iterator<Item = Self>;
    /// Member `key` of an object (None for a non-object or an absent key).
    fn get(self, key: &str) -> Option<Self>;
    /// Item count and items of an array.
    fn array(self) -> Option<(usize, Self::Items)>;
    fn as_str(self) -> Option<&'a str>;
    fn as_num(self) -> Option<Num>;
    /// Array or object (unhashable in Python).
    fn is_container(self) -> bool;
    fn type_name(self) -> &'static str;
    /// Python `self == x`.
    fn eq_value(self, x: &Value) -> bool;
}

impl<'a> JsonNode<'a> for &'a Value {
    type Items = std::slice::Iter<'a, Value>;
    #[inline]
    fn get(self, key: &str) -> Option<Self> {
        match self {
            Value::Object(m) => lookup(m, key),
            _ => None,
        }
    }
    #[inline]
    fn array(self) -> Option<(usize, Self::Items)> {
        match self {
            Value::Array(items) => Some((items.len(), items.iter())),
            _ => None,
        }
    }
    #[inline]
    fn as_str(self) -> Option<&'a str> {
        Value::as_str(self)
    }
    #[inline]
    fn as_num(self) -> Option<Num> {
        as_num(self)
    }
    #[inline]
    fn is_container(self) -> bool {
        matches!(self, Value::Array(_) | Value::Object(_))
    }
    fn type_name(self) -> &'static str {
        py_type_name(self)
    }
    #[inline]
    fn eq_value(self, x: &Value) -> bool {
        py_eq(self, x)
    }
}

impl<'a> JsonNode<'a> for DocRef<'a> {
    type Items = Items<'a>;
    #[inline]
    fn get(self, key: &str) -> Option<Self> {
        DocRef::get(self, key)
    }
    #[inline]
    fn array(self) -> Option<(usize, Self::Items)> {
        self.items().map(|it| (it.left as usize, it))
    }
    #[inline]
    fn as_str(self) -> Option<&'a str> {
        DocRef::as_str(self)
    }
    #[inline]
    fn as_num(self) -> Option<Num> {
        DocRef::as_num(self)
    }
    #[inline]
    fn is_container(self) -> bool {
        self.is_array() || self.is_object()
    }
    fn type_name(self) -> &'static str {
        DocRef::type_name(self)
    }
    #[inline]
    fn eq_value(self, x: &Value) -> bool {
        self.py_eq(x)
    }
}

/// [`Resolved`] over any [`JsonNode`].
enum Res<N> {
    Missing,
    OutOfRange,
    One(N),
    Many(Vec<N>),
}

/// The result of resolving a [`Path`].
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved<'a> {
    /// A key is absent, a scalar was descended into, or a segment is not an index of an array.
    Missing,
    /// A list index is out of range (never matches, never an error).
    OutOfRange,
    /// One value (`null` included).
    One(&'a Value),
    /// The values a `*` fanned out to, flattened, in document order (possibly empty).
    Many(Vec<&'a Value>),
}

/// Key lookup. Small objects are scanned in order comparing lengths first: the entries are
/// contiguous, so this touches fewer scattered cache lines than hashing and probing (most
/// instance metadata objects are small and are looked up several times per instance).
#[inline]
fn lookup<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if m.len() <= 16 {
        m.iter()
            .find(|(k, _)| k.len() == key.len() && k.as_str() == key)
            .map(|(_, v)| v)
    } else {
        m.get(key)
    }
}

fn resolve<'a, N: JsonNode<'a>>(mut node: N, segs: &[Segment]) -> Res<N> {
    for (pos, seg) in segs.iter().enumerate() {
        if let Some((len, mut items)) = node.array() {
            if seg.wildcard {
                let mut out = Vec::new();
                for item in items {
                    match resolve(item, &segs[pos + 1..]) {
                        Res::One(v) => out.push(v),
                        Res::Many(vs) => out.extend(vs),
                        Res::Missing | Res::OutOfRange => {}
                    }
                }
                return Res::Many(out);
            }
            match seg.index {
                Some(i) => {
                    let len = len as i64;
                    let j = if i < 0 { i.saturating_add(len) } else { i };
                    if (0..len).contains(&j) {
                        match items.nth(j as usize) {
                            Some(v) => node = v,
                            None => return Res::OutOfRange,
                        }
                    } else {
                        return Res::OutOfRange;
                    }
                }
                None => return Res::Missing,
            }
        } else {
            match node.get(&seg.text) {
                Some(v) => node = v,
                None => return Res::Missing,
            }
        }
    }
    Res::One(node)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum CmpOp {
    Gt,
    Gte,
    Lt,
    Lte,
}

impl CmpOp {
    fn symbol(self) -> &'static str {
        match self {
            CmpOp::Gt => ">",
            CmpOp::Gte => ">=",
            CmpOp::Lt => "<",
            CmpOp::Lte => "<=",
        }
    }

    fn holds(self, o: Ordering) -> bool {
        match self {
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Gte => o != Ordering::Less,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Lte => o != Ordering::Greater,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum ElemForm {
    /// Operators applied to each item itself.
    Scalar(Vec<Cond>),
    /// A sub-where evaluated with each item as the root.
    Document(Query),
}

#[derive(Debug, Clone, PartialEq)]
enum Cond {
    Eq(Value),
    Ne(Value),
    In(Value),
    NotIn(Value),
    Regex(Box<PyRegex>),
    Exists(bool),
    Cmp(CmpOp, Value),
    ElemMatch(Box<ElemForm>),
}

impl Cond {
    fn negative(&self) -> bool {
        matches!(self, Cond::Ne(_) | Cond::NotIn(_))
    }
}

/// A compiled `where` query: clauses (path → operators) AND-ed in written order.
///
/// Compile once with [`Query::parse`], evaluate many times with [`Query::matches`]. A query is
/// immutable and `Send + Sync`; its result never depends on the evaluating thread.
///
/// ```
/// use routeval_query_dsl::{OnMissingKey, Query};
/// use serde_json::json;
/// let q = Query::parse(&json!({"task": "qa", "meta.lang": {"in": ["en", "ja"]}}))?;
/// let info = json!({"task": "qa", "meta": {"lang": "ja"}});
/// assert!(q.matches(&info, OnMissingKey::Skip)?);
/// # Ok::<(), routeval_query_dsl::QueryError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    clauses: Vec<(Path, Vec<Cond>)>,
}

const OPERATORS: [&str; 11] = [
    "eq",
    "ne",
    "in",
    "not_in",
    "regex",
    "exists",
    "gt",
    "gte",
    "lt",
    "lte",
    "elem_match",
];

/// The canonical operator for an operator name or alias.
fn canonical(op: &str) -> Option<&'static str> {
    Some(match op {
        "==" => "eq",
        "!=" => "ne",
        ">" => "gt",
        ">=" => "gte",
        "<" => "lt",
        "<=" => "lte",
        other => return OPERATORS.iter().copied().find(|o| *o == other),
    })
}

fn compile_condition(cond: &Value) -> Result<Vec<Cond>, QueryError> {
    match cond {
        Value::Object(ops) => {
            if ops.is_empty() {
                return Err(QueryError::EmptyCondition(String::new()));
            }
            let mut out = Vec::with_capacity(ops.len());
            for (written, operand) in ops {
                let op = canonical(written)
                    .ok_or_else(|| QueryError::UnknownOperator(written.clone()))?;
                out.push(compile_operand(op, operand)?);
            }
            Ok(out)
        }
        Value::Array(_) => Ok(vec![Cond::In(cond.clone())]),
        scalar => Ok(vec![Cond::Eq(scalar.clone())]),
    }
}

fn compile_operand(op: &str, operand: &Value) -> Result<Cond, QueryError> {
    Ok(match op {
        "eq" => Cond::Eq(operand.clone()),
        "ne" => Cond::Ne(operand.clone()),
        "in" => Cond::In(operand.clone()),
        "not_in" => Cond::NotIn(operand.clone()),
        "regex" => match operand {
            Value::String(p) => Cond::Regex(Box::new(PyRegex::new(p).map_err(|message| {
                QueryError::BadRegex {
                    pattern: p.clone(),
                    message,
                }
            })?)),
            other => {
                return Err(QueryError::BadOperand(format!(
                    "'regex' needs a string, got {}",
                    py_type_name(other)
                )));
            }
        },
        "exists" => match operand {
            Value::Bool(b) => Cond::Exists(*b),
            other => {
                return Err(QueryError::BadOperand(format!(
                    "'exists' needs true/false, got {other}"
                )));
            }
        },
        "gt" | "gte" | "lt" | "lte" => {
            let ok = matches!(operand, Value::Number(_) | Value::String(_));
            if !ok {
                return Err(QueryError::BadOperand(format!(
                    "'{op}' needs a number or a string, got {}",
                    py_type_name(operand)
                )));
            }
            let c = match op {
                "gt" => CmpOp::Gt,
                "gte" => CmpOp::Gte,
                "lt" => CmpOp::Lt,
                _ => CmpOp::Lte,
            };
            Cond::Cmp(c, operand.clone())
        }
        _ => {
            let obj = match operand {
                Value::Object(m) if !m.is_empty() => m,
                _ => {
                    return Err(QueryError::BadOperand(
                        "'elem_match' needs a non-empty object".into(),
                    ));
                }
            };
            let n_ops = obj.keys().filter(|k| canonical(k).is_some()).count();
            let form = if n_ops == obj.len() {
                ElemForm::Scalar(compile_condition(operand)?)
            } else if n_ops == 0 {
                ElemForm::Document(Query::compile_object(obj)?)
            } else {
                return Err(QueryError::MixedElemMatch);
            };
            Cond::ElemMatch(Box::new(form))
        }
    })
}

impl Query {
    /// Compile a `where`: a JSON object mapping paths to conditions, or `null` (matches all).
    ///
    /// A condition is an operator object (`{"gte": 1, "<": 5}`), an array (membership, as
    /// `{"in": [...]}`) or a scalar (equality, as `{"eq": v}`). Every check runs here, on the
    /// whole query, before any data is seen.
    ///
    /// # Errors
    /// `bad_where`, `bad_path`, `empty_condition`, `unknown_operator`, `bad_operand`,
    /// `bad_regex`, `mixed_elem_match` ([`QueryError`]).
    pub fn parse(where_: &Value) -> Result<Query, QueryError> {
        match where_ {
            Value::Null => Ok(Query::default()),
            Value::Object(m) => Query::compile_object(m),
            other => Err(QueryError::BadWhere(format!(
                "where must be an object or null, got {}",
                py_type_name(other)
            ))),
        }
    }

    /// Compile a `where` given as JSON text (see [`Query::parse`]).
    ///
    /// # Errors
    /// `bad_where` when the text is not JSON, otherwise as [`Query::parse`].
    pub fn parse_str(text: &str) -> Result<Query, QueryError> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| QueryError::BadWhere(format!("where is not valid JSON: {e}")))?;
        Query::parse(&v)
    }

    fn compile_object(m: &Map<String, Value>) -> Result<Query, QueryError> {
        let mut clauses = Vec::with_capacity(m.len());
        for (path, cond) in m {
            let p = Path::parse(path)?;
            let conds = compile_condition(cond).map_err(|e| match e {
                QueryError::EmptyCondition(_) => QueryError::EmptyCondition(path.clone()),
                e => e,
            })?;
            clauses.push((p, conds));
        }
        Ok(Query { clauses })
    }

    /// The top-level keys the query reads (the first segment of each clause path), in written
    /// order. Evaluating on an object that holds only these keys gives the same result as on
    /// the whole object, which lets callers skip parsing the rest of a record.
    pub fn top_level_keys(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (p, _) in &self.clauses {
            let k = p.segments[0].text.as_str();
            if !out.contains(&k) {
                out.push(k);
            }
        }
        out
    }

    /// Whether the query matches everything (`null` or `{}`).
    pub fn is_match_all(&self) -> bool {
        self.clauses.is_empty()
    }

    /// Evaluate the query on `root` (an instance's `extra_info`).
    ///
    /// Clauses and operators are evaluated in written order and stop at the first false one,
    /// so data errors depend on the order (as in the Python reference).
    ///
    /// # Errors
    /// [`QueryError::MissingKey`] (only with [`OnMissingKey::Error`]), [`QueryError::TypeError`]
    /// where Python raises `TypeError`, [`QueryError::RegexLimit`] when the regex engine gives
    /// up.
    pub fn matches(&self, root: &Value, on_missing_key: OnMissingKey) -> Result<bool, QueryError> {
        self.matches_node(root, on_missing_key)
    }

    /// Does `doc` (a compact [`Doc`] tape) match? Same result and errors as
    /// [`Query::matches`] on the `Value` the `Doc` was built from, but faster over many
    /// documents (fewer, contiguous allocations to walk).
    ///
    /// # Errors
    /// As [`Query::matches`].
    pub fn matches_doc(&self, doc: &Doc, on_missing_key: OnMissingKey) -> Result<bool, QueryError> {
        self.matches_node(doc.root(), on_missing_key)
    }

    fn matches_node<'a, N: JsonNode<'a>>(
        &self,
        root: N,
        on_missing_key: OnMissingKey,
    ) -> Result<bool, QueryError> {
        for (path, conds) in &self.clauses {
            let value = resolve(root, &path.segments);
            for cond in conds {
                if !eval(cond, &value, path, on_missing_key)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

fn eval<'a, N: JsonNode<'a>>(
    cond: &Cond,
    value: &Res<N>,
    path: &Path,
    omk: OnMissingKey,
) -> Result<bool, QueryError> {
    if let Cond::Exists(want) = cond {
        let present = match value {
            Res::Missing | Res::OutOfRange => false,
            Res::Many(vs) => !vs.is_empty(),
            Res::One(_) => true,
        };
        return Ok(present == *want);
    }
    match value {
        Res::OutOfRange => Ok(false),
        Res::Missing => match omk {
            OnMissingKey::Error => Err(QueryError::MissingKey(path.text.clone())),
            OnMissingKey::Skip => Ok(false),
        },
        Res::One(v) => apply(cond, *v),
        Res::Many(vs) => {
            if cond.negative() {
                for v in vs {
                    if !apply(cond, *v)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            } else {
                for v in vs {
                    if apply(cond, *v)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }
}

/// Python's `v in x` (`v` from the instance, `x` the query's operand).
fn py_in<'a, N: JsonNode<'a>>(v: N, x: &Value) -> Result<bool, QueryError> {
    match x {
        Value::Array(items) => Ok(items.iter().any(|it| v.eq_value(it))),
        Value::String(s) => match v.as_str() {
            Some(needle) => Ok(s.contains(needle)),
            None => Err(QueryError::TypeError(format!(
                "'in <string>' requires string as left operand, not {}",
                v.type_name()
            ))),
        },
        Value::Object(m) => {
            if v.is_container() {
                Err(QueryError::TypeError(format!(
                    "unhashable type: '{}'",
                    v.type_name()
                )))
            } else {
                // Keys of a JSON object are strings; no other hashable value equals a string.
                Ok(v.as_str().is_some_and(|k| m.contains_key(k)))
            }
        }
        other => Err(QueryError::TypeError(format!(
            "argument of type '{}' is not iterable",
            py_type_name(other)
        ))),
    }
}

fn apply<'a, N: JsonNode<'a>>(cond: &Cond, v: N) -> Result<bool, QueryError> {
    match cond {
        Cond::Eq(x) => Ok(v.eq_value(x)),
        Cond::Ne(x) => Ok(!v.eq_value(x)),
        Cond::In(x) => py_in(v, x),
        Cond::NotIn(x) => Ok(!py_in(v, x)?),
        Cond::Regex(re) => match v.as_str() {
            Some(s) => re.search(s).map_err(|message| QueryError::RegexLimit {
                pattern: re.as_str().to_string(),
                message,
            }),
            None => Ok(false),
        },
        Cond::Exists(_) => Ok(true),
        Cond::Cmp(op, x) => {
            let ord = match (v.as_str(), x) {
                (Some(a), Value::String(b)) => Some(a.cmp(b.as_str())),
                _ => match (v.as_num(), as_num(x)) {
                    (Some(a), Some(b)) => {
                        // A NaN compares false both ways (no error), as in Python.
                        match cmp_num(a, b) {
                            Some(o) => Some(o),
                            None => return Ok(false),
                        }
                    }
                    _ => None,
                },
            };
            match ord {
                Some(o) => Ok(op.holds(o)),
                None => Err(QueryError::TypeError(format!(
                    "'{}' not supported between instances of '{}' and '{}'",
                    op.symbol(),
                    v.type_name(),
                    py_type_name(x)
                ))),
            }
        }
        Cond::ElemMatch(form) => {
            let Some((_, items)) = v.array() else {
                return Ok(false);
            };
            // Keys missing in an item make it not match, even under on_missing_key=error.
            match form.as_ref() {
                ElemForm::Scalar(conds) => {
                    let elem = Path {
                        text: "<elem>".into(),
                        segments: Vec::new(),
                    };
                    for item in items {
                        let r = Res::One(item);
                        let mut all = true;
                        for c in conds {
                            if !eval(c, &r, &elem, OnMissingKey::Skip)? {
                                all = false;
                                break;
                            }
                        }
                        if all {
                            return Ok(true);
                        }
                    }
                    Ok(false)
                }
                ElemForm::Document(q) => {
                    for item in items {
                        if q.matches_node(item, OnMissingKey::Skip)? {
                            return Ok(true);
                        }
                    }
                    Ok(false)
                }
            }
        }
    }
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Query>();
    let _ = Num::Int(0);
}
