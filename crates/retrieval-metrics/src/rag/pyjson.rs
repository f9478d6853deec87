//! Case values with Python's JSON semantics.
//!
//! rag-quality-check reads its cases with CPython's `json` module and then applies Python
//! rules to them (`str()` coercion, numeric id equality `1 == 1.0 == True`, falsy queries).
//! [`PyValue`] is the decoded value and [`parse`] a decoder that behaves like
//! `json.loads` on CPython 3.11: it accepts `NaN`, `Infinity` and `-Infinity`, keeps integers
//! of any size, rejects a UTF-8 BOM, lets a later duplicate object key win (at the first key's
//! position) and reports errors with `json.JSONDecodeError`'s exact text
//! (`Expecting value: line 1 column 1 (char 0)`). `serde_json` cannot do the first three,
//! which is why this small decoder exists.

use super::pyfmt::{float_repr, repr_str};
use std::borrow::Cow;

/// A decoded JSON value, typed the way Python's `json` module types it.
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue<'a> {
    /// `null` → `None`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits `i64`.
    Int(i64),
    /// An integer outside `i64`, as its canonical decimal digits (optional leading `-`).
    BigInt(Cow<'a, str>),
    /// A float (`1.5`, `1e3`, `NaN`, `Infinity`).
    Float(f64),
    /// A string (borrowed from the input text when it had no escapes).
    Str(Cow<'a, str>),
    /// An array.
    List(Vec<PyValue<'a>>),
    /// An object: keys in first-seen order, each with the last value given for it.
    Dict(Vec<(Cow<'a, str>, PyValue<'a>)>),
}

impl<'a> PyValue<'a> {
    /// The value as a `serde_json::Value` (for `where` queries on cases): integers outside
    /// `i64` become `u64` when they fit, else the nearest `f64`; non-finite floats (`NaN`,
    /// `Infinity`, which JSON cannot hold) become `null`; object keys keep their order.
    pub fn to_json_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            PyValue::Null => Value::Null,
            PyValue::Bool(b) => Value::Bool(*b),
            PyValue::Int(i) => Value::from(*i),
            PyValue::BigInt(s) => match s.parse::<u64>() {
                Ok(u) => Value::from(u),
                Err(_) => s
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number),
            },
            PyValue::Float(f) => {
                serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
            }
            PyValue::Str(s) => Value::String(s.to_string()),
            PyValue::List(items) => {
                Value::Array(items.iter().map(PyValue::to_json_value).collect())
            }
            PyValue::Dict(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_json_value()))
                    .collect(),
            ),
        }
    }

    /// A copy that owns all its strings (no longer tied to the input text).
    pub fn into_owned(self) -> PyValue<'static> {
        match self {
            PyValue::Null => PyValue::Null,
            PyValue::Bool(b) => PyValue::Bool(b),
            PyValue::Int(i) => PyValue::Int(i),
            PyValue::BigInt(s) => PyValue::BigInt(Cow::Owned(s.into_owned())),
            PyValue::Float(f) => PyValue::Float(f),
            PyValue::Str(s) => PyValue::Str(Cow::Owned(s.into_owned())),
            PyValue::List(v) => PyValue::List(v.into_iter().map(PyValue::into_owned).collect()),
            PyValue::Dict(v) => PyValue::Dict(
                v.into_iter()
                    .map(|(k, x)| (Cow::Owned(k.into_owned()), x.into_owned()))
                    .collect(),
            ),
        }
    }

    /// Python's `type(value).__name__`: `NoneType`, `bool`, `int`, `float`, `str`, `list`, `dict`.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::Null => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) | PyValue::BigInt(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Str(_) => "str",
            PyValue::List(_) => "list",
            PyValue::Dict(_) => "dict",
        }
    }

    /// Python truthiness (`bool(value)`).
    pub fn truthy(&self) -> bool {
        match self {
            PyValue::Null => false,
            PyValue::Bool(b) => *b,
            PyValue::Int(i) => *i != 0,
            PyValue::BigInt(_) => true,
            PyValue::Float(f) => *f != 0.0,
            PyValue::Str(s) => !s.is_empty(),
            PyValue::List(l) => !l.is_empty(),
            PyValue::Dict(d) => !d.is_empty(),
        }
    }

    /// `dict.get(key)`.
    pub fn get(&self, key: &str) -> Option<&PyValue<'a>> {
        match self {
            PyValue::Dict(d) => d.iter().find(|(k, _)| k.as_ref() == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Python `str(value)`: strings as themselves, `None`, `True`, `42`, `2.5`, `['a', 1]`.
    pub fn py_str(&self) -> String {
        match self {
            PyValue::Str(s) => s.to_string(),
            other => other.py_repr(),
        }
    }

    /// Python `repr(value)`.
    pub fn py_repr(&self) -> String {
        let mut out = String::new();
        self.write_repr(&mut out);
        out
    }

    fn write_repr(&self, out: &mut String) {
        match self {
            PyValue::Null => out.push_str("None"),
            PyValue::Bool(true) => out.push_str("True"),
            PyValue::Bool(false) => out.push_str("False"),
            PyValue::Int(i) => out.push_str(&i.to_string()),
            PyValue::BigInt(s) => out.push_str(s),
            PyValue::Float(f) => out.push_str(&float_repr(*f)),
            PyValue::Str(s) => out.push_str(&repr_str(s)),
            PyValue::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_repr(out);
                }
                out.push(']');
            }
            PyValue::Dict(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&repr_str(k));
                    out.push_str(": ");
                    v.write_repr(out);
                }
                out.push('}');
            }
        }
    }
}

/// Why [`parse`] rejected a text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JsonError {
    /// `json.JSONDecodeError`: the message reads like CPython's
    /// (`Expecting ',' delimiter: line 1 column 9 (char 8)`).
    #[error("{0}")]
    Decode(String),
    /// CPython 3.11's integer-string limit (`int()` of more than 4300 digits), a plain
    /// `ValueError` rather than a decode error.
    #[error(
        "Exceeds the limit (4300 digits) for integer string conversion: value has {0} digits; use sys.set_int_max_str_digits() to increase the limit"
    )]
    IntTooLong(usize),
    /// Containers nested deeper than [`MAX_DEPTH`] (CPython raises `RecursionError`; here it
    /// is an error instead of a stack overflow).
    #[error("maximum recursion depth exceeded while decoding a JSON {0} from a unicode string")]
    TooDeep(&'static str),
}

impl JsonError {
    /// True for a `JSONDecodeError` (as opposed to the integer-limit `ValueError`).
    pub fn is_decode(&self) -> bool {
        matches!(self, JsonError::Decode(_))
    }
}

/// Deepest container nesting accepted, the outermost container counted (a streamed
/// top-level array too). CPython counts each container against its recursion limit (1000),
/// on top of the Python frames already on the stack when `json.loads` is called; under
/// rag-quality-check's command line that leaves 992: a case file nested 993 deep ends in
/// `RecursionError` there (measured on the array, object and JSON Lines forms), and here in
/// [`JsonError::TooDeep`].
pub const MAX_DEPTH: usize = 992;

/// Stack of a thread that decodes: [`parse`] recurses once per nesting level, up to
/// [`MAX_DEPTH`] (about 0.5 MB in a release build), and a caller's thread may have less
/// (512 KiB for threads other than the main one on macOS, or a small `RUST_MIN_STACK`).
/// Address space only: pages are touched as deep as a text nests.
pub const DECODER_STACK: usize = 16 << 20;

/// [`parse`] on a thread of its own with a [`DECODER_STACK`] stack (on the calling thread if
/// none can be started), for callers whose own stack is unknown.
///
/// # Errors
/// [`parse`]'s.
pub fn parse_on_decoder_thread(text: &str) -> Result<PyValue<'_>, JsonError> {
    let on_thread = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("rag-decoder".into())
            .stack_size(DECODER_STACK)
            .spawn_scoped(scope, || parse(text))
            .ok()
            .map(|h| h.join())
    });
    match on_thread {
        Some(Ok(parsed)) => parsed,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        None => parse(text),
    }
}

/// Members an object may have before its repeated keys are found through a hash map
/// instead of a scan of the members so far.
const LINEAR_KEYS: usize = 32;

/// Decode `text` like CPython 3.11's `json.loads(text)`.
///
/// Errors carry `json.JSONDecodeError`'s message, with line, column and character offset
/// counted in code points as Python does.
pub fn parse(text: &str) -> Result<PyValue<'_>, JsonError> {
    let mut p = Parser::new(text);
    if text.starts_with('\u{feff}') {
        return Err(p.err("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0));
    }
    let start = p.ws(0);
    let (value, end) = p.scan_once(start)?;
    let end = p.ws(end);
    if end != p.s.len() {
        return Err(p.err("Extra data", end));
    }
    Ok(value)
}

/// Stream the elements of a top-level JSON array to `f`, one at a time, so a large case file
/// never exists twice in memory; with each element `f` gets the byte offset in `text` just
/// past it (the parser reads nothing before that offset again, unless the text turns out not
/// to be a valid array). Returns `Ok(false)` (calling nothing) when `text` (already
/// stripped) does not start with `[`; an `Err` means `json.loads(text)` would fail (the
/// caller then falls back to JSON Lines, as the reference does).
///
/// # Errors
/// The `json.loads` error for the whole text.
pub fn stream_array<'a>(
    text: &'a str,
    mut f: impl FnMut(PyValue<'a>, usize),
) -> Result<bool, JsonError> {
    let mut p = Parser::new(text);
    if text.starts_with('\u{feff}') {
        return Err(p.err("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0));
    }
    let s = p.s;
    let mut i = p.ws(0);
    if i >= s.len() || s[i] != b'[' {
        return Ok(false);
    }
    // The top-level array counts against the nesting limit, as in `parse`.
    p.depth = 1;
    i = p.ws(i + 1);
    if i < s.len() && s[i] == b']' {
        i += 1;
    } else {
        loop {
            let (value, next) = p.scan_once(i)?;
            f(value, next);
            p.trim_stacks();
            i = p.ws(next);
            if i < s.len() && s[i] == b']' {
                i += 1;
                break;
            }
            if i >= s.len() || s[i] != b',' {
                return Err(p.err("Expecting ',' delimiter", i));
            }
            i = p.ws(i + 1);
        }
    }
    let end = p.ws(i);
    if end != s.len() {
        return Err(p.err("Extra data", end));
    }
    Ok(true)
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    depth: usize,
    /// The elements of the arrays being read, innermost last: an array's elements are
    /// gathered here and moved into a vector of their exact number when it closes (one
    /// allocation per array, no growth copies; the stack's room is reused).
    list_stack: Vec<PyValue<'a>>,
    /// The same for the members of the objects being read.
    dict_stack: Vec<(Cow<'a, str>, PyValue<'a>)>,
}

enum Scan {
    Stop(usize),
    Err(JsonError),
}

impl From<JsonError> for Scan {
    fn from(e: JsonError) -> Self {
        Scan::Err(e)
    }
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            s: text.as_bytes(),
            text,
            depth: 0,
            list_stack: Vec::new(),
            dict_stack: Vec::new(),
        }
    }

    /// Between top-level elements (both stacks empty): give back the room one huge array or
    /// object made the stacks take, so it is not held for the rest of a stream.
    fn trim_stacks(&mut self) {
        const KEEP: usize = 1 << 12;
        if self.list_stack.capacity() > KEEP {
            self.list_stack.shrink_to(KEEP);
        }
        if self.dict_stack.capacity() > KEEP {
            self.dict_stack.shrink_to(KEEP);
        }
    }

    fn err(&self, msg: &str, pos: usize) -> JsonError {
        // Python counts in code points.
        let prefix = &self.text[..pos.min(self.text.len())];
        let char_pos = prefix.chars().count();
        let lineno = prefix.bytes().filter(|&b| b == b'\n').count() + 1;
        let colno = match prefix.rfind('\n') {
            Some(nl) => prefix[nl + 1..].chars().count() + 1,
            None => char_pos + 1,
        };
        JsonError::Decode(format!(
            "{msg}: line {lineno} column {colno} (char {char_pos})"
        ))
    }

    fn ws(&self, mut i: usize) -> usize {
        while i < self.s.len() && matches!(self.s[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        i
    }

    fn scan_once(&mut self, idx: usize) -> Result<(PyValue<'a>, usize), JsonError> {
        match self.scan(idx) {
            Ok(v) => Ok(v),
            Err(Scan::Stop(pos)) => Err(self.err("Expecting value", pos)),
            Err(Scan::Err(e)) => Err(e),
        }
    }

    fn scan(&mut self, idx: usize) -> Result<(PyValue<'a>, usize), Scan> {
        let s = self.s;
        if idx >= s.len() {
            return Err(Scan::Stop(idx));
        }
        let rest = &s[idx..];
        match s[idx] {
            b'"' => {
                let (st, end) = self.string(idx + 1)?;
                Ok((PyValue::Str(st), end))
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    self.depth -= 1;
                    let kind = if s[idx] == b'{' { "object" } else { "array" };
                    return Err(Scan::Err(JsonError::TooDeep(kind)));
                }
                let r = if s[idx] == b'{' {
                    self.object(idx + 1)
                } else {
                    self.array(idx + 1)
                };
                self.depth -= 1;
                r
            }
            b'n' if rest.starts_with(b"null") => Ok((PyValue::Null, idx + 4)),
            b't' if rest.starts_with(b"true") => Ok((PyValue::Bool(true), idx + 4)),
            b'f' if rest.starts_with(b"false") => Ok((PyValue::Bool(false), idx + 5)),
            b'N' if rest.starts_with(b"NaN") => Ok((PyValue::Float(f64::NAN), idx + 3)),
            b'I' if rest.starts_with(b"Infinity") => Ok((PyValue::Float(f64::INFINITY), idx + 8)),
            b'-' if rest.starts_with(b"-Infinity") => {
                Ok((PyValue::Float(f64::NEG_INFINITY), idx + 9))
            }
            b'-' | b'0'..=b'9' => self.number(idx),
            _ => Err(Scan::Stop(idx)),
        }
    }

    fn number(&self, start: usize) -> Result<(PyValue<'a>, usize), Scan> {
        let s = self.s;
        let mut i = start;
        if s[i] == b'-' {
            i += 1;
        }
        if i < s.len() && (b'1'..=b'9').contains(&s[i]) {
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
        } else if i < s.len() && s[i] == b'0' {
            i += 1;
        } else {
            return Err(Scan::Stop(start));
        }
        let int_end = i;
        let mut is_float = false;
        if i + 1 < s.len() && s[i] == b'.' && s[i + 1].is_ascii_digit() {
            i += 2;
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
            is_float = true;
        }
        if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
            let mut j = i + 1;
            if j < s.len() && (s[j] == b'+' || s[j] == b'-') {
                j += 1;
            }
            let digits = j;
            while j < s.len() && s[j].is_ascii_digit() {
                j += 1;
            }
            if j > digits {
                i = j;
                is_float = true;
            }
        }
        let lit: &'a str = &self.text[start..i];
        if is_float {
            // Rust's parse is correctly rounded like CPython's float(); overflow gives inf.
            let f: f64 = lit.parse().map_err(|_| Scan::Stop(start))?;
            return Ok((PyValue::Float(f), i));
        }
        debug_assert_eq!(int_end, i);
        let digits = lit.trim_start_matches('-').len();
        if digits > 4300 {
            return Err(Scan::Err(JsonError::IntTooLong(digits)));
        }
        Ok((
            match lit.parse::<i64>() {
                Ok(v) => PyValue::Int(v),
                Err(_) => PyValue::BigInt(Cow::Borrowed(lit)),
            },
            i,
        ))
    }

    /// Scan a string body starting right after the opening quote at `begin - 1`.
    ///
    /// Inlined into its callers: most strings have no escape and are borrowed; called, it
    /// returned them through memory, and the profile put a third of the parser's samples on
    /// reading that result back.
    #[inline(always)]
    fn string(&self, begin: usize) -> Result<(Cow<'a, str>, usize), Scan> {
        // Fast path: no escape before the closing quote → borrow from the input.
        let i = routeval_core::py::json_plain_end(self.s, begin);
        if i < self.s.len() && self.s[i] == b'"' {
            return Ok((Cow::Borrowed(&self.text[begin..i]), i + 1));
        }
        self.string_escaped(begin)
    }

    /// [`Parser::string`] for a string with an escape (or a control character, or no end).
    #[inline(never)]
    fn string_escaped(&self, begin: usize) -> Result<(Cow<'a, str>, usize), Scan> {
        let s = self.s;
        let quote = begin - 1;
        let mut out = String::new();
        let mut i = begin;
        loop {
            let chunk_start = i;
            while i < s.len() && s[i] != b'"' && s[i] != b'\\' && s[i] >= 0x20 {
                i += 1;
            }
            out.push_str(&self.text[chunk_start..i]);
            if i >= s.len() {
                return Err(self.err("Unterminated string starting at", quote).into());
            }
            match s[i] {
                b'"' => return Ok((Cow::Owned(out), i + 1)),
                b'\\' => {
                    i += 1;
                    if i >= s.len() {
                        return Err(self.err("Unterminated string starting at", quote).into());
                    }
                    let c = s[i];
                    if c != b'u' {
                        let ch = match c {
                            b'"' => '"',
                            b'\\' => '\\',
                            b'/' => '/',
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'n' => '\n',
                            b'r' => '\r',
                            b't' => '\t',
                            _ => return Err(self.err("Invalid \\escape", i - 1).into()),
                        };
                        out.push(ch);
                        i += 1;
                    } else {
                        let (u, next) = self.hex4(i + 1)?;
                        i = next;
                        let mut cp = u;
                        if (0xD800..0xDC00).contains(&u)
                            && i + 1 < s.len()
                            && s[i] == b'\\'
                            && s[i + 1] == b'u'
                        {
                            let (lo, next2) = self.hex4(i + 2)?;
                            if (0xDC00..0xE000).contains(&lo) {
                                cp = 0x10000 + (((u - 0xD800) << 10) | (lo - 0xDC00));
                                i = next2;
                            }
                        }
                        // A lone surrogate cannot live in a Rust string: U+FFFD stands in.
                        out.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
                    }
                }
                _ => return Err(self.err("Invalid control character at", i).into()),
            }
        }
    }

    fn hex4(&self, at: usize) -> Result<(u32, usize), Scan> {
        let s = self.s;
        // CPython wants a character after the four digits (`end >= len` is an error there),
        // so an escape that ends the input is invalid, not an unterminated string.
        if at + 4 >= s.len() {
            return Err(self.err("Invalid \\uXXXX escape", at - 1).into());
        }
        let mut v = 0u32;
        for &b in &s[at..at + 4] {
            let d = (b as char).to_digit(16);
            match d {
                Some(d) => v = v * 16 + d,
                None => return Err(self.err("Invalid \\uXXXX escape", at - 1).into()),
            }
        }
        Ok((v, at + 4))
    }

    fn object(&mut self, start: usize) -> Result<(PyValue<'a>, usize), Scan> {
        let base = self.dict_stack.len();
        match self.members(start, base) {
            Ok(end) => Ok((PyValue::Dict(self.dict_stack.drain(base..).collect()), end)),
            Err(e) => {
                // The stack is cut back to where this object began (what it read is dropped).
                self.dict_stack.truncate(base);
                Err(e)
            }
        }
    }

    /// The members of an object (after its `{`) pushed on `dict_stack` above `base`; returns
    /// the offset past its `}`.
    fn members(&mut self, start: usize, base: usize) -> Result<usize, Scan> {
        let s = self.s;
        let mut i = self.ws(start);
        if i < s.len() && s[i] == b'}' {
            return Ok(i + 1);
        }
        // Where each key sits on the stack, built once the object outgrows a linear scan
        // (`LINEAR_KEYS`): 100,000 distinct keys took 17 s scanned, and std's hasher keeps
        // crafted keys from colliding on purpose.
        let mut index: Option<std::collections::HashMap<String, usize>> = None;
        loop {
            if i >= s.len() || s[i] != b'"' {
                return Err(self
                    .err("Expecting property name enclosed in double quotes", i)
                    .into());
            }
            let (key, next) = self.string(i + 1)?;
            i = self.ws(next);
            if i >= s.len() || s[i] != b':' {
                return Err(self.err("Expecting ':' delimiter", i).into());
            }
            i = self.ws(i + 1);
            let (value, next) = match self.scan(i) {
                Ok(v) => v,
                Err(Scan::Stop(pos)) => return Err(self.err("Expecting value", pos).into()),
                Err(e) => return Err(e),
            };
            // A repeated key keeps its first position and takes the last value, as in
            // `json.loads`. Objects are mostly small (case dicts, relevance maps), where a
            // linear scan beats hashing.
            let found = match &index {
                Some(at) => at.get(key.as_ref()).copied(),
                None => self.dict_stack[base..]
                    .iter()
                    .position(|(k, _)| *k == key)
                    .map(|p| base + p),
            };
            match found {
                Some(at) => self.dict_stack[at].1 = value,
                None => {
                    if let Some(at) = index.as_mut() {
                        at.insert(key.to_string(), self.dict_stack.len());
                    }
                    self.dict_stack.push((key, value));
                    if index.is_none() && self.dict_stack.len() - base > LINEAR_KEYS {
                        index = Some(
                            self.dict_stack[base..]
                                .iter()
                                .enumerate()
                                .map(|(p, (k, _))| (k.to_string(), base + p))
                                .collect(),
                        );
                    }
                }
            }
            i = self.ws(next);
            if i < s.len() && s[i] == b'}' {
                return Ok(i + 1);
            }
            if i >= s.len() || s[i] != b',' {
                return Err(self.err("Expecting ',' delimiter", i).into());
            }
            i = self.ws(i + 1);
        }
    }

    fn array(&mut self, start: usize) -> Result<(PyValue<'a>, usize), Scan> {
        let base = self.list_stack.len();
        match self.elements(start) {
            Ok(end) => Ok((PyValue::List(self.list_stack.drain(base..).collect()), end)),
            Err(e) => {
                self.list_stack.truncate(base);
                Err(e)
            }
        }
    }

    /// The elements of an array (after its `[`) pushed on `list_stack`; returns the offset
    /// past its `]`.
    fn elements(&mut self, start: usize) -> Result<usize, Scan> {
        let s = self.s;
        let mut i = self.ws(start);
        if i < s.len() && s[i] == b']' {
            return Ok(i + 1);
        }
        loop {
            let (value, next) = match self.scan(i) {
                Ok(v) => v,
                Err(Scan::Stop(pos)) => return Err(self.err("Expecting value", pos).into()),
                Err(e) => return Err(e),
            };
            self.list_stack.push(value);
            i = self.ws(next);
            if i < s.len() && s[i] == b']' {
                return Ok(i + 1);
            }
            if i >= s.len() || s[i] != b',' {
                return Err(self.err("Expecting ',' delimiter", i).into());
            }
            i = self.ws(i + 1);
        }
    }
}

/// Split `text` into lines like Python's `str.splitlines()` (on `\n`, `\r`, `\r\n`, `\v`,
/// `\f`, U+001C–U+001E, U+0085, U+2028, U+2029), without the line breaks.
pub fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = text.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let brk = matches!(
            c,
            '\n' | '\r'
                | '\u{b}'
                | '\u{c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if brk {
            out.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r'
                && let Some(&(_, '\n')) = it.peek()
            {
                it.next();
                end += 1;
            }
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_messages() {
        let e = |t: &str| parse(t).unwrap_err().to_string();
        assert_eq!(e(""), "Expecting value: line 1 column 1 (char 0)");
        assert_eq!(e("[1,]"), "Expecting value: line 1 column 4 (char 3)");
        assert_eq!(
            e("{\"a\":1,}"),
            "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)"
        );
        assert_eq!(
            e("[1 2]"),
            "Expecting ',' delimiter: line 1 column 4 (char 3)"
        );
        assert_eq!(e("{} x"), "Extra data: line 1 column 4 (char 3)");
        assert_eq!(
            e("\"abc"),
            "Unterminated string starting at: line 1 column 1 (char 0)"
        );
        // Past the first eight bytes, where the scan goes a word at a time.
        assert_eq!(
            e("\"a\u{1}b\""),
            "Invalid control character at: line 1 column 3 (char 2)"
        );
        assert_eq!(
            e("\"abcdefghijklm\u{1}\""),
            "Invalid control character at: line 1 column 15 (char 14)"
        );
        assert_eq!(
            e("\"abcdefghijklmnop"),
            "Unterminated string starting at: line 1 column 1 (char 0)"
        );
        assert_eq!(
            parse(r#"["abcdefghij\u00e9klmnopq", "x\\y"]"#)
                .unwrap()
                .py_str(),
            "['abcdefghijéklmnopq', 'x\\\\y']"
        );
        assert_eq!(
            e("{\"a\" 1}"),
            "Expecting ':' delimiter: line 1 column 6 (char 5)"
        );
        assert_eq!(
            e("\u{feff}[]"),
            "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"
        );
    }

    #[test]
    fn python_values() {
        let v = parse("[NaN, -Infinity, 1.0, 12345678901234567890123, {\"a\":1,\"a\":2}]").unwrap();
        assert_eq!(
            v.py_str(),
            "[nan, -inf, 1.0, 12345678901234567890123, {'a': 2}]"
        );
        assert_eq!(split_lines("a\r\nb\rc\n"), vec!["a", "b", "c"]);
        let deep = "[".repeat(100_000);
        assert!(matches!(parse(&deep), Err(JsonError::TooDeep("array"))));
    }

    /// The nesting limit is rag-quality-check's (992 containers, the outermost counted) for
    /// a parsed value and for a streamed top-level array alike, and the container that
    /// crosses it is named.
    #[test]
    fn nesting_limit_counts_the_outermost_container() {
        // A debug build's frames are large: room for 992 levels of objects.
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(nesting_limit_checks)
            .expect("a test thread")
            .join()
            .expect("no failed check");
    }

    fn nesting_limit_checks() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&nested(MAX_DEPTH)).is_ok());
        assert!(matches!(
            parse(&nested(MAX_DEPTH + 1)),
            Err(JsonError::TooDeep("array"))
        ));
        let objects = |n: usize| format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        assert!(parse(&objects(MAX_DEPTH)).is_ok());
        assert!(matches!(
            parse(&objects(MAX_DEPTH + 1)),
            Err(JsonError::TooDeep("object"))
        ));
        let mut seen = 0;
        assert!(matches!(
            stream_array(&nested(MAX_DEPTH), |_, _| seen += 1),
            Ok(true)
        ));
        assert_eq!(seen, 1);
        assert!(matches!(
            stream_array(&nested(MAX_DEPTH + 1), |_, _| {}),
            Err(JsonError::TooDeep("array"))
        ));
    }

    /// An object past the linear scan's size keeps `json.loads`'s rule for repeated keys
    /// (first position, last value), the repeats on both sides of the switch.
    #[test]
    fn large_objects_keep_the_repeated_key_rule() {
        for n in [LINEAR_KEYS, LINEAR_KEYS + 1, LINEAR_KEYS + 2, 300] {
            // Repeats before the switch to the index (at member 10) and after it.
            let mut members: Vec<(String, Tree)> = Vec::new();
            for k in 0..n {
                members.push((format!("k{k}"), Tree::Int(k as i32)));
                if k == 10 {
                    members.push(("k3".into(), Tree::Str("early".into())));
                }
            }
            for (j, k) in [0, n / 2, n - 1, 3, 0].into_iter().enumerate() {
                members.push((format!("k{k}"), Tree::Str(format!("again {j}"))));
            }
            let wide = Tree::Dict(members);
            // At the top, and nested (the object's members start higher on the stack).
            let nested = Tree::List(vec![
                Tree::Dict(vec![("x".into(), Tree::Int(1))]),
                Tree::Dict(vec![("a".into(), Tree::Int(1)), ("b".into(), wide.clone())]),
            ]);
            for t in [wide, nested] {
                let mut s = String::new();
                text(&t, &mut s);
                assert_eq!(parse(&s).expect("valid").into_owned(), model(&t), "{n}");
            }
        }
    }

    /// The decoder thread's stack holds the deepest text accepted (objects, whose frames are
    /// the largest, in a debug build, which overflowed the test thread's own stack), and
    /// the limit's error comes back through it.
    #[test]
    fn the_decoder_thread_holds_the_deepest_text() {
        let objects = |n: usize| format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        assert!(parse_on_decoder_thread(&objects(MAX_DEPTH)).is_ok());
        assert!(matches!(
            parse_on_decoder_thread(&objects(MAX_DEPTH + 1)),
            Err(JsonError::TooDeep("object"))
        ));
    }

    /// A `\uXXXX` escape needs a character after it, as in CPython: at the end of the
    /// input it is an invalid escape (at its `u`), not an unterminated string.
    #[test]
    fn unicode_escape_at_the_end_is_invalid() {
        let e = |t: &str| parse(t).unwrap_err().to_string();
        assert_eq!(
            e(r#"["\u00e9"#),
            r"Invalid \uXXXX escape: line 1 column 4 (char 3)"
        );
        assert_eq!(
            e(r#""\ud83d\ude00"#),
            r"Invalid \uXXXX escape: line 1 column 9 (char 8)"
        );
        assert_eq!(
            e(r#""\u00e9x"#),
            "Unterminated string starting at: line 1 column 1 (char 0)"
        );
    }

    /// A JSON tree whose objects may repeat a key (keys from a three-letter alphabet).
    #[derive(Debug, Clone)]
    enum Tree {
        Int(i32),
        Str(String),
        List(Vec<Tree>),
        Dict(Vec<(String, Tree)>),
    }

    fn tree() -> impl proptest::strategy::Strategy<Value = Tree> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            any::<i32>().prop_map(Tree::Int),
            "[a-z é\\\\\"]{0,6}".prop_map(Tree::Str),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Tree::List),
                proptest::collection::vec(("[abc]", inner), 0..6).prop_map(Tree::Dict),
            ]
        })
    }

    fn text(t: &Tree, out: &mut String) {
        match t {
            Tree::Int(v) => out.push_str(&v.to_string()),
            Tree::Str(v) => out.push_str(&serde_json::to_string(v).expect("a string")),
            Tree::List(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    text(v, out);
                }
                out.push(']');
            }
            Tree::Dict(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&format!("\"{k}\": "));
                    text(v, out);
                }
                out.push('}');
            }
        }
    }

    /// What `json.loads` makes of a tree: a repeated key keeps its first position and takes
    /// its last value.
    fn model(t: &Tree) -> PyValue<'static> {
        match t {
            Tree::Int(v) => PyValue::Int(i64::from(*v)),
            Tree::Str(v) => PyValue::Str(Cow::Owned(v.clone())),
            Tree::List(items) => PyValue::List(items.iter().map(model).collect()),
            Tree::Dict(items) => {
                let mut out: Vec<(Cow<'static, str>, PyValue<'static>)> = Vec::new();
                for (k, v) in items {
                    match out.iter_mut().find(|(o, _)| o == k) {
                        Some(slot) => slot.1 = model(v),
                        None => out.push((Cow::Owned(k.clone()), model(v))),
                    }
                }
                PyValue::Dict(out)
            }
        }
    }

    proptest::proptest! {
        /// Nested arrays and objects (read through the parser's element stacks) decode to
        /// `json.loads`'s values, members in order, repeated keys once (the model above);
        /// and every cut of the text short of its end is refused, as `serde_json` refuses it.
        #[test]
        fn nested_values_decode_like_json_loads(t in tree()) {
            let mut s = String::new();
            text(&t, &mut s);
            proptest::prop_assert_eq!(parse(&s).expect("valid JSON").into_owned(), model(&t));
            for (cut, _) in s.char_indices().skip(1) {
                let head = &s[..cut];
                let serde_ok = serde_json::from_str::<serde_json::Value>(head).is_ok();
                proptest::prop_assert_eq!(parse(head).is_ok(), serde_ok, "{}", head);
            }
        }
    }
}
