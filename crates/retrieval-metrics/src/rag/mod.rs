//! # RAG quality: rag-quality-check 0.1.0, bit for bit
//!
//! Scores retrieval-augmented generation cases the way PyPI `rag-quality-check==0.1.0` does
//! (spec: `shared/specs/rag.md`): the five retrieval metrics ([`metrics`]) with its exact
//! definitions, the four answer metrics (groundedness, citation coverage, answer relevance,
//! answer correctness), estimated relevance when a case has no labels, and the notes,
//! failures and exclusions that say what could not be measured.
//!
//! A case is a JSON object (`query`, `retrieved`, optional `relevant`, `answer`,
//! `ground_truth`), decoded with Python's JSON and coercion rules ([`PyValue`]):
//!
//! ```
//! use routeval_retrieval_metrics::rag::{evaluate, parse_cases, Options};
//! let cases = parse_cases(
//!     r#"[{"query": "reset my password", "retrieved": ["p_reset", "p_billing"], "relevant": ["p_reset"]}]"#,
//!     "example",
//! )?;
//! let report = evaluate(&cases, &Options { k: 2, threshold: 0.5 }, None)?;
//! assert_eq!(report.metric("mrr"), Some(1.0));
//! assert_eq!(report.metric("precision_at_k"), Some(0.5));
//! # Ok::<(), routeval_retrieval_metrics::rag::RagError>(())
//! ```
//!
//! Metric means are plain left-to-right sums in case order (the reference's order); the
//! per-case work runs in parallel with rayon on the lexical path. With an [`Embedder`] every
//! similarity is a cosine of embedding vectors, fetched in one batched call per run (plus
//! the reference's lazy top-up calls), so that path runs in case order.

pub mod metrics;
pub mod pyfmt;
pub mod pyjson;
pub mod text;

mod case;
pub mod compare;
mod lexical;
mod report;
mod stream;
mod trec_input;
mod unicode_tables;

pub use case::{IdKey, py_float_str, py_int_str};
pub use pyjson::{JsonError, PyValue};
pub use report::{CaseResult, FRAME_BASE_COLUMNS, NoteGroup, RagReport, RagTotals};
pub use stream::stream_evaluate;
pub use trec_input::cases_from_trec;

use case::{as_gains, as_item, non_blank, query_text};
use lexical::LEXICAL;
use ndarray::Array2;
use pyfmt::{fmt_g, pct0, repr_str, shorten};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use text::{TokenSet, looks_like_passage, py_strip, split_sentences, tokenize};

/// One of rag-quality-check's nine metrics, in canonical order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// Relevant items in the top k, divided by k ([`metrics::precision_at_k`]).
    PrecisionAtK,
    /// Relevant items found, divided by all relevant ones ([`metrics::recall_at_k`]).
    RecallAtK,
    /// Reciprocal rank of the first relevant item, cut at k ([`metrics::mrr`]).
    Mrr,
    /// Linear-gain nDCG@k ([`metrics::ndcg_at_k`]).
    NdcgAtK,
    /// 1 if a relevant item is in the top k ([`metrics::hit_rate`]).
    HitRate,
    /// Weighted share of answer sentences a checkable passage supports (spec 8.1).
    Groundedness,
    /// Share of checkable passages that support some answer sentence (spec 8.2).
    CitationCoverage,
    /// `similarity(query, answer)` (spec 8, step 4).
    AnswerRelevance,
    /// `similarity(ground_truth, answer)` (spec 8, step 5).
    AnswerCorrectness,
}

impl Metric {
    /// All nine, in canonical order (report means, summaries, frame columns).
    pub const ALL: [Metric; 9] = [
        Metric::PrecisionAtK,
        Metric::RecallAtK,
        Metric::Mrr,
        Metric::NdcgAtK,
        Metric::HitRate,
        Metric::Groundedness,
        Metric::CitationCoverage,
        Metric::AnswerRelevance,
        Metric::AnswerCorrectness,
    ];
    /// The five retrieval metrics.
    pub const RETRIEVAL: [Metric; 5] = [
        Metric::PrecisionAtK,
        Metric::RecallAtK,
        Metric::Mrr,
        Metric::NdcgAtK,
        Metric::HitRate,
    ];
    /// The four answer metrics.
    pub const ANSWER: [Metric; 4] = [
        Metric::Groundedness,
        Metric::CitationCoverage,
        Metric::AnswerRelevance,
        Metric::AnswerCorrectness,
    ];

    /// The reference's name (`precision_at_k`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Metric::PrecisionAtK => "precision_at_k",
            Metric::RecallAtK => "recall_at_k",
            Metric::Mrr => "mrr",
            Metric::NdcgAtK => "ndcg_at_k",
            Metric::HitRate => "hit_rate",
            Metric::Groundedness => "groundedness",
            Metric::CitationCoverage => "citation_coverage",
            Metric::AnswerRelevance => "answer_relevance",
            Metric::AnswerCorrectness => "answer_correctness",
        }
    }

    /// The reference's one-line definition (`METRIC_HELP`).
    pub fn help(self) -> &'static str {
        match self {
            Metric::PrecisionAtK => "relevant items in the top k, divided by k",
            Metric::RecallAtK => "relevant items found, divided by all relevant ones",
            Metric::Mrr => "1 / rank of the first relevant item, averaged over cases",
            Metric::NdcgAtK => "DCG@k / ideal DCG@k, linear gains, log2 discount",
            Metric::HitRate => "share of queries with a relevant item in the top k",
            Metric::Groundedness => "share of the answer's words a retrieved passage supports",
            Metric::CitationCoverage => "share of retrieved passages the answer actually uses",
            Metric::AnswerRelevance => "share of the query's content words the answer repeats",
            Metric::AnswerCorrectness => "share of the ground truth the answer covers",
        }
    }

    /// Position in [`Metric::ALL`].
    pub fn position(self) -> usize {
        self as usize
    }

    /// Look a metric up by its name.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Evaluation options: the cut-off `k` (≥ 1) and the similarity `threshold` (0..=1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Cut-off for the retrieval metrics; always the denominator of `precision_at_k`.
    pub k: i64,
    /// Similarity (fraction 0..1) at which two texts match; also the failure bar for
    /// groundedness, answer_correctness and (under embeddings) answer_relevance.
    pub threshold: f64,
}

impl Options {
    /// Options from Python-typed values (as the corpus records `evaluate(k=..., threshold=...)`),
    /// with the reference's checks 1–3 of spec section 2: `k` must be an `int` and not a `bool`;
    /// the threshold goes through Python `float()` (numeric strings and bools accepted). The
    /// range check of the threshold happens in [`evaluate`].
    ///
    /// # Errors
    /// [`RagError::KType`], [`RagError::KTooSmall`], [`RagError::ThresholdType`].
    pub fn from_py(k: &PyValue<'_>, threshold: &PyValue<'_>) -> Result<Options, RagError> {
        let k = match k {
            PyValue::Int(i) => *i,
            PyValue::BigInt(s) if s.starts_with('-') => {
                return Err(RagError::Other(format!("k must be at least 1, got {s}")));
            }
            PyValue::BigInt(_) => i64::MAX,
            other => return Err(RagError::KType(other.type_name())),
        };
        if k < 1 {
            return Err(RagError::KTooSmall(k));
        }
        let threshold = match threshold {
            PyValue::Int(i) => *i as f64,
            PyValue::Bool(b) => f64::from(u8::from(*b)),
            PyValue::Float(f) => *f,
            PyValue::BigInt(s) => match s.parse::<f64>() {
                Ok(f) if f.is_finite() => f,
                _ => return Err(RagError::Other("int too large to convert to float".into())),
            },
            PyValue::Str(s) => {
                py_float_str(s).ok_or_else(|| RagError::ThresholdType(threshold.py_repr()))?
            }
            other => return Err(RagError::ThresholdType(other.py_repr())),
        };
        Ok(Options { k, threshold })
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            k: 5,
            threshold: 0.5,
        }
    }
}

/// Why an embedding backend failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmbedError {
    /// The backend failed (HTTP status, timeout, process exit, unparsable reply).
    #[error("embedding failed: {0}")]
    Failed(String),
    /// The backend's reply has the wrong shape (the reference's numpy shape message).
    #[error("embed must return one vector per input text: got shape {shape} for {n} texts")]
    Shape {
        /// numpy-style shape tuple, e.g. `(64,)`.
        shape: String,
        /// Number of texts sent.
        n: usize,
    },
    /// A vector's length differs from the first one seen in this run.
    #[error("embedding dimension changed: expected {expected}, got {got}")]
    Dimension {
        /// The run's dimension (first call).
        expected: usize,
        /// The offending length.
        got: usize,
    },
}

/// The toy embeddings of routeval's rag golden corpus (`golden/rag/cases/README.md`), for tests
/// and demos without a model: `"tri64"` hashes the character trigrams of `^text$` (32-bit
/// FNV-1a) into 64 buckets, counting +1 each; `"tri64s"` the same with -1 where the hash's top
/// bit is set; `"const"` is `[1, 0]` and `"zero"` `[0, 0]` for every text. Any other `kind` is
/// `"tri64"`. Shape: one vector of 64 (or 2) `f64`s per text.
pub fn toy_embedding(kind: &str, text: &str) -> Vec<f64> {
    fn fnv1a32(bytes: &[u8]) -> u32 {
        let mut h: u32 = 0x811C_9DC5;
        for &b in bytes {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        h
    }
    match kind {
        "const" => vec![1.0, 0.0],
        "zero" => vec![0.0, 0.0],
        _ => {
            let mut v = vec![0.0; 64];
            let padded: Vec<char> = std::iter::once('^')
                .chain(text.chars())
                .chain(std::iter::once('$'))
                .collect();
            let mut tri = String::new();
            for w in padded.windows(3) {
                tri.clear();
                tri.extend(w);
                let h = fnv1a32(tri.as_bytes());
                let negative = kind == "tri64s" && h & 0x8000_0000 != 0;
                v[(h % 64) as usize] += if negative { -1.0 } else { 1.0 };
            }
            v
        }
    }
}

/// A batch embedding backend: texts in, one vector (row) per text out.
///
/// [`evaluate`] calls it once with every distinct text of the run (spec 9), then only for
/// texts first needed later (non-string queries/answers coerced with `str()`). Rows must be in
/// input order; a wrong row count is the reference's shape error.
pub trait Embedder {
    /// Embed `texts` (non-empty, distinct) into a `texts.len() × dim` matrix.
    ///
    /// # Errors
    /// [`EmbedError`] when the backend fails.
    fn embed(&mut self, texts: &[String]) -> Result<Array2<f64>, EmbedError>;
}

/// Errors raised while reading or evaluating cases. `Display` is rag-quality-check's exact
/// message (its CLI prints it after `error: `); `case` indices are 0-based.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RagError {
    /// `k` is not an integer (or is a bool), as passed from Python-typed input.
    #[error("k must be an int, got {0}")]
    KType(&'static str),
    /// `k < 1`.
    #[error("k must be at least 1, got {0}")]
    KTooSmall(i64),
    /// The threshold is not something Python's `float()` accepts (`repr` of the value).
    #[error("threshold must be a number in 0..1, got {0}")]
    ThresholdType(String),
    /// Threshold outside 0..1 (or NaN), printed with Python `str(float)`.
    #[error("threshold must be in 0..1, got {}", pyfmt::float_repr(*.0))]
    Threshold(f64),
    /// A case that is not an object.
    #[error("case {index} must be a dict with 'query' and 'retrieved', got {type_name}")]
    CaseNotDict {
        /// Case index.
        index: usize,
        /// Python type name of the value.
        type_name: &'static str,
    },
    /// `retrieved` is a single string.
    #[error("case {0}: 'retrieved' must be a list of passages or ids, not a single string")]
    RetrievedString(usize),
    /// `retrieved` is neither a list nor null.
    #[error("case {index}: 'retrieved' must be a list, got {type_name}")]
    RetrievedType {
        /// Case index.
        index: usize,
        /// Python type name.
        type_name: &'static str,
    },
    /// A retrieved item (or `relevant` entry) that is a list.
    #[error("retrieved items must be strings, mappings or ids, got {type_name}")]
    ItemType {
        /// Python type name.
        type_name: &'static str,
    },
    /// A mapping item whose `id` is a list or an object.
    #[error("retrieved id must be hashable, got {type_name}")]
    IdUnhashable {
        /// Python type name.
        type_name: &'static str,
    },
    /// `relevant` is a single string.
    #[error("'relevant' must be a list of ids or a {{id: gain}} mapping, not a single string")]
    RelevantString,
    /// `relevant` is a number or bool.
    #[error("'relevant' must be a list of ids or a {{id: gain}} mapping, got {type_name}")]
    RelevantType {
        /// Python type name.
        type_name: &'static str,
    },
    /// A graded gain that Python's `float()` rejects.
    #[error("relevance gain for {id} is not a number: {gain}")]
    GainNotNumber {
        /// `repr(id)`.
        id: String,
        /// `repr(gain)`.
        gain: String,
    },
    /// An integer gain beyond the float range. rag-quality-check crashes there (Python's
    /// `float()` raises `OverflowError`, which its CLI does not catch); routeval names the case.
    #[error(
        "case {index}: relevance gain for {id} is an integer too large for a float ({digits} digits)"
    )]
    GainTooLarge {
        /// Case index.
        index: usize,
        /// `repr(id)`.
        id: String,
        /// Number of digits of the integer.
        digits: usize,
    },
    /// The embedder returned the wrong number of rows.
    #[error("embed must return one vector per input text: got shape {shape} for {n} texts")]
    EmbedShape {
        /// numpy-style shape tuple, e.g. `(2, 64)`.
        shape: String,
        /// Number of texts sent.
        n: usize,
    },
    /// The embedding backend failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// Input text problems (the CLI reader's messages, e.g.
    /// `standard input line 3 is not valid JSON (...)`).
    #[error("{0}")]
    Input(String),
    /// Any other reference `ValueError`.
    #[error("{0}")]
    Other(String),
}

/// What produced the similarities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimilarityKind {
    /// Token coverage (the default).
    Lexical,
    /// Cosine of embedding vectors.
    Embeddings,
}

impl SimilarityKind {
    /// `"lexical overlap"` or `"embeddings"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SimilarityKind::Lexical => "lexical overlap",
            SimilarityKind::Embeddings => "embeddings",
        }
    }
}

/// Read cases the way `rag-quality-check`'s CLI does (spec 16): a JSON list of objects, one
/// JSON object, or JSON Lines (one object per non-blank line). `origin` names the source in
/// messages (`standard input` or the path).
///
/// # Errors
/// [`RagError::Input`] with the reference's message, naming the case index or line.
pub fn parse_cases<'a>(raw: &'a str, origin: &str) -> Result<Vec<PyValue<'a>>, RagError> {
    let text = py_strip(raw);
    if text.is_empty() {
        return Err(RagError::Input(format!(
            "{origin} is empty; expected JSON cases"
        )));
    }
    let whole = match pyjson::parse(text) {
        Ok(PyValue::Null) => None,
        Ok(v) => Some(v),
        Err(e) if e.is_decode() => None,
        Err(e) => return Err(RagError::Other(e.to_string())),
    };
    match whole {
        Some(PyValue::Dict(d)) => Ok(vec![PyValue::Dict(d)]),
        Some(PyValue::List(items)) => {
            for (i, item) in items.iter().enumerate() {
                if !matches!(item, PyValue::Dict(_)) {
                    return Err(RagError::Input(format!(
                        "{origin}: case {i} is not a JSON object"
                    )));
                }
            }
            Ok(items)
        }
        Some(other) => Err(RagError::Input(format!(
            "{origin} must hold a list of case objects, got {}",
            other.type_name()
        ))),
        None => {
            let mut cases = Vec::new();
            for (n, line) in pyjson::split_lines(text).into_iter().enumerate() {
                let stripped = py_strip(line);
                if stripped.is_empty() {
                    continue;
                }
                match pyjson::parse(stripped) {
                    Ok(v @ PyValue::Dict(_)) => cases.push(v),
                    Ok(_) => {
                        return Err(RagError::Input(format!(
                            "{origin} line {} is not a JSON object",
                            n + 1
                        )));
                    }
                    Err(e) if e.is_decode() => {
                        return Err(RagError::Input(format!(
                            "{origin} line {} is not valid JSON ({e})",
                            n + 1
                        )));
                    }
                    Err(e) => return Err(RagError::Other(e.to_string())),
                }
            }
            if cases.is_empty() {
                return Err(RagError::Input(format!("{origin} held no cases")));
            }
            Ok(cases)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Similarity backends.

/// A similarity backend for one case. `prepare` registers a text and returns a handle;
/// `score_h` compares two handles exactly as `score` compares the texts (same call order, so
/// the embedding backend's lazy calls are the reference's).
trait Scorer {
    fn embeddings(&self) -> bool;
    fn score(&mut self, left: &str, right: &str) -> Result<f64, RagError>;
    fn weight(&mut self, sentence: &str) -> usize;
    /// [`Scorer::weight`] of each of `sentences`, the sentences of `text`
    /// (`split_sentences(text)`), in order.
    fn weights(&mut self, _text: &str, sentences: &[&str]) -> Vec<usize> {
        sentences.iter().map(|s| self.weight(s)).collect()
    }
    fn prepare(&mut self, text: &str) -> usize;
    /// [`Scorer::prepare`] for a retrieved passage (texts that recur across cases; cached).
    fn prepare_passage(&mut self, text: &str) -> usize {
        self.prepare(text)
    }
    /// [`Scorer::prepare_passage`] of each of `texts`, in order: their handles.
    fn prepare_passages(&mut self, texts: &[&str]) -> Vec<usize> {
        texts.iter().map(|t| self.prepare_passage(t)).collect()
    }
    fn score_h(&mut self, left: usize, right: usize) -> Result<f64, RagError>;
}

/// String token sets (the embedding path's sentence weights).
#[derive(Default)]
struct TokenCache(HashMap<String, TokenSet>);

impl TokenCache {
    fn ensure(&mut self, s: &str) {
        if !self.0.contains_key(s) {
            self.0.insert(s.to_string(), tokenize(s));
        }
    }
    fn get(&self, s: &str) -> &TokenSet {
        &self.0[s]
    }
}

/// A 64-bit fingerprint of an id (FxHash): equal ids have equal fingerprints, so comparing
/// fingerprints first skips most full comparisons.
fn id_fingerprint(id: &IdKey<'_>) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(id)
}

struct EmbedCache<'e> {
    embedder: &'e mut dyn Embedder,
    vectors: HashMap<String, Vec<f64>>,
    dim: Option<usize>,
}

impl EmbedCache<'_> {
    /// `Similarity.warm`: embed every non-empty text not yet cached, de-duplicated, in one call.
    fn warm<'t>(&mut self, texts: impl IntoIterator<Item = &'t str>) -> Result<(), RagError> {
        let mut seen = HashSet::new();
        let mut wanted: Vec<String> = Vec::new();
        for t in texts {
            if !t.is_empty() && !self.vectors.contains_key(t) && seen.insert(t) {
                wanted.push(t.to_string());
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let m = self.embedder.embed(&wanted)?;
        let (rows, cols) = m.dim();
        if rows != wanted.len() {
            return Err(RagError::EmbedShape {
                shape: format!("({rows}, {cols})"),
                n: wanted.len(),
            });
        }
        match self.dim {
            Some(d) if d != cols => {
                return Err(EmbedError::Dimension {
                    expected: d,
                    got: cols,
                }
                .into());
            }
            _ => self.dim = Some(cols),
        }
        for (text, row) in wanted.into_iter().zip(m.rows()) {
            self.vectors.insert(text, row.to_vec());
        }
        Ok(())
    }
}

struct Embedded<'c, 'e> {
    cache: &'c mut EmbedCache<'e>,
    tokens: TokenCache,
    texts: Vec<String>,
}

impl Scorer for Embedded<'_, '_> {
    fn embeddings(&self) -> bool {
        true
    }
    fn score(&mut self, left: &str, right: &str) -> Result<f64, RagError> {
        if left.is_empty() || right.is_empty() {
            return Ok(0.0);
        }
        self.cache.warm([left, right])?;
        Ok(text::cosine(
            &self.cache.vectors[left],
            &self.cache.vectors[right],
        ))
    }
    fn weight(&mut self, sentence: &str) -> usize {
        self.tokens.ensure(sentence);
        self.tokens.get(sentence).len()
    }
    fn prepare(&mut self, text: &str) -> usize {
        self.texts.push(text.to_string());
        self.texts.len() - 1
    }
    fn score_h(&mut self, left: usize, right: usize) -> Result<f64, RagError> {
        let (l, r) = (
            std::mem::take(&mut self.texts[left]),
            std::mem::take(&mut self.texts[right]),
        );
        let s = self.score(&l, &r);
        // `left == right` took the text once; put back whichever is non-empty.
        if left == right {
            self.texts[left] = if l.is_empty() { r } else { l };
        } else {
            self.texts[left] = l;
            self.texts[right] = r;
        }
        s
    }
}

/// `_texts_of(case)`: every string a similarity may later be asked about (spec 9).
fn texts_of(case: &PyValue<'_>, out: &mut Vec<String>) {
    if let Some(PyValue::Str(q)) = case.get("query")
        && !q.is_empty()
    {
        out.push(q.to_string());
    }
    if let Some(PyValue::List(items)) = case.get("retrieved") {
        for item in items {
            if let Ok((_, t)) = as_item(item)
                && !t.is_empty()
            {
                out.push(t.into_owned());
            }
        }
    }
    for key in ["answer", "ground_truth"] {
        if let Some(PyValue::Str(v)) = case.get(key)
            && !py_strip(v).is_empty()
        {
            out.push(v.to_string());
            out.extend(split_sentences(v).into_iter().map(str::to_string));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Evaluation.

/// Per-case bookkeeping for the run-level notes.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    labelled: bool,
    id_matched: bool,
    answer_without_text: bool,
}

/// [`evaluate`] on a Python-typed `cases` value, with the reference's checks 5–6 of spec
/// section 2: a single object is refused (`wrap it: evaluate([case])`), and anything but a
/// list is `cases must be a list of case dicts, got <type>`.
///
/// # Errors
/// Those two, then everything [`evaluate`] raises.
pub fn evaluate_value(
    cases: &PyValue<'_>,
    opts: &Options,
    embedder: Option<&mut dyn Embedder>,
) -> Result<RagReport, RagError> {
    // `evaluate` checks k and the threshold before the cases, as the reference does.
    if opts.k < 1 {
        return Err(RagError::KTooSmall(opts.k));
    }
    if !(0.0..=1.0).contains(&opts.threshold) {
        return Err(RagError::Threshold(opts.threshold));
    }
    match cases {
        PyValue::List(items) => evaluate(items, opts, embedder),
        PyValue::Dict(_) => Err(RagError::Other(
            "cases must be a list of case dicts, not a single dict - wrap it: evaluate([case])"
                .into(),
        )),
        other => Err(RagError::Other(format!(
            "cases must be a list of case dicts, got {}",
            other.type_name()
        ))),
    }
}

/// Score `cases` (each a JSON object) with rag-quality-check 0.1.0's rules.
///
/// `embedder`: `None` for lexical overlap (parallel over cases), or an [`Embedder`] for
/// cosine similarity (sequential, reference call order).
///
/// # Errors
/// The reference's `ValueError`s (spec section 2), first failing case first; nothing is
/// returned for the other cases.
pub fn evaluate(
    cases: &[PyValue<'_>],
    opts: &Options,
    embedder: Option<&mut dyn Embedder>,
) -> Result<RagReport, RagError> {
    evaluate_indexed(cases, None, opts, embedder)
}

/// [`evaluate`] on a selection of a larger case list (e.g. the cases a `where` query
/// matched): `indices[i]` is case `i`'s position in the original list, used in the report's
/// `index` fields, notes, failures and errors. With `None`, positions are `0..cases.len()`.
///
/// # Errors
/// As [`evaluate`]; [`RagError::Other`] when `indices` has the wrong length.
pub fn evaluate_indexed(
    cases: &[PyValue<'_>],
    indices: Option<&[usize]>,
    opts: &Options,
    embedder: Option<&mut dyn Embedder>,
) -> Result<RagReport, RagError> {
    if let Some(ix) = indices
        && ix.len() != cases.len()
    {
        return Err(RagError::Other(format!(
            "{} indices for {} cases",
            ix.len(),
            cases.len()
        )));
    }
    let index_of = |i: usize| indices.map_or(i, |ix| ix[i]);
    if opts.k < 1 {
        return Err(RagError::KTooSmall(opts.k));
    }
    let t = opts.threshold;
    if !(0.0..=1.0).contains(&t) {
        return Err(RagError::Threshold(t));
    }
    for (i, c) in cases.iter().enumerate() {
        if !matches!(c, PyValue::Dict(_)) {
            return Err(RagError::CaseNotDict {
                index: index_of(i),
                type_name: c.type_name(),
            });
        }
    }
    let k = opts.k as usize;
    match embedder {
        None => {
            let mut run = RagRun::new(opts)?;
            run.push_indexed(cases, indices);
            run.finish()
        }
        Some(embedder) => {
            let mut cache = EmbedCache {
                embedder,
                vectors: HashMap::new(),
                dim: None,
            };
            let mut everything = Vec::new();
            for c in cases {
                texts_of(c, &mut everything);
            }
            cache.warm(everything.iter().map(String::as_str))?;
            let mut ok = Vec::with_capacity(cases.len());
            for (i, c) in cases.iter().enumerate() {
                let mut scorer = Embedded {
                    cache: &mut cache,
                    tokens: TokenCache::default(),
                    texts: Vec::new(),
                };
                ok.push(evaluate_one(c, index_of(i), k, t, &mut scorer)?);
            }
            Ok(report::assemble(k, t, SimilarityKind::Embeddings, ok))
        }
    }
}

/// Streaming lexical evaluation: push cases in order (in batches of any size; each batch is
/// scored in parallel), then [`finish`](RagRun::finish). Memory holds only the per-case
/// results, so a caller can drop each batch's input after pushing it. Gives exactly
/// [`evaluate`]'s report and errors (the first non-object case wins over the first scoring
/// error, as the reference checks every case's type before scoring any).
pub struct RagRun {
    k: usize,
    threshold: f64,
    results: Vec<(CaseResult, Tally)>,
    not_dict: Option<RagError>,
    error: Option<RagError>,
    seen: usize,
}

impl RagRun {
    /// Validate the options and start an empty run.
    ///
    /// # Errors
    /// `k < 1` or a threshold outside 0..1.
    pub fn new(opts: &Options) -> Result<RagRun, RagError> {
        if opts.k < 1 {
            return Err(RagError::KTooSmall(opts.k));
        }
        if !(0.0..=1.0).contains(&opts.threshold) {
            return Err(RagError::Threshold(opts.threshold));
        }
        Ok(RagRun {
            k: opts.k as usize,
            threshold: opts.threshold,
            results: Vec::new(),
            not_dict: None,
            error: None,
            seen: 0,
        })
    }

    /// Make room for `additional` more cases' results at once (a capacity hint, as
    /// `Vec::reserve_exact`): results then never move while the run grows, and on a system
    /// that commits pages as they are first written (Linux) an overestimate costs address
    /// space, not resident memory. A run that grows past it grows as without the hint; a
    /// hint the allocator refuses (more address space than the system grants) is ignored.
    pub fn reserve(&mut self, additional: usize) {
        let _ = self.results.try_reserve_exact(additional);
    }

    /// Score the next cases (indices continue from the previous batch).
    pub fn push(&mut self, cases: &[PyValue<'_>]) {
        self.push_indexed(cases, None);
    }

    /// [`RagRun::push`] with each case's position in the original input given by
    /// `indices` (same length as `cases`; `None`: positions continue from the previous
    /// batch).
    pub fn push_indexed(&mut self, cases: &[PyValue<'_>], indices: Option<&[usize]>) {
        let base = self.seen;
        let index_of = |i: usize| indices.map_or(base + i, |ix| ix[i]);
        self.seen += cases.len();
        if self.not_dict.is_none()
            && let Some((i, c)) = cases
                .iter()
                .enumerate()
                .find(|(_, c)| !matches!(c, PyValue::Dict(_)))
        {
            self.not_dict = Some(RagError::CaseNotDict {
                index: index_of(i),
                type_name: c.type_name(),
            });
        }
        if self.not_dict.is_some() || self.error.is_some() {
            return;
        }
        let (k, t) = (self.k, self.threshold);
        // The results are written by the workers straight into `results`' spare capacity
        // (rayon's indexed `par_extend`), not collected into a batch vector and copied over
        // on this thread: that copy was serial, and its first touch of the results' fresh
        // pages (kernel page zeroing, ~20 MB at 100k cases) held up the next batch. A case
        // that fails leaves a placeholder and its error here; the first one in input order
        // wins, as in a sequential pass, and the run's results are dropped. Pieces of at most
        // 16 cases: with a few large ones, one worker was left idle at the end of each batch
        // while the other finished its piece (the batch is a barrier).
        let first_error: std::sync::Mutex<Option<(usize, RagError)>> = std::sync::Mutex::new(None);
        self.results
            .par_extend(cases.par_iter().enumerate().with_max_len(16).map(|(i, c)| {
                let scored = LEXICAL.with(|lex| {
                    let mut lex = lex.borrow_mut();
                    lex.reset();
                    evaluate_one(c, index_of(i), k, t, &mut *lex)
                });
                scored.unwrap_or_else(|e| {
                    // A poisoned lock only means another worker panicked mid-update;
                    // the slot is still a valid `Option`.
                    let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
                    if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                        *slot = Some((i, e));
                    }
                    (CaseResult::new(String::new(), 0, k, t), Tally::default())
                })
            }));
        let first_error = first_error.into_inner().unwrap_or_else(|p| p.into_inner());
        if let Some((_, e)) = first_error {
            self.error = Some(e);
            self.results = Vec::new();
        }
    }

    /// The report (or the run's first error).
    ///
    /// # Errors
    /// The first non-object case, else the first case that failed to score.
    pub fn finish(self) -> Result<RagReport, RagError> {
        if let Some(e) = self.not_dict.or(self.error) {
            return Err(e);
        }
        Ok(report::assemble(
            self.k,
            self.threshold,
            SimilarityKind::Lexical,
            self.results,
        ))
    }
}

impl RagRun {
    /// The scored cases so far as a mergeable [`RagPartial`] (a shard of a run whose cases
    /// were pushed with their positions in the whole input, [`RagRun::push_indexed`]).
    ///
    /// # Errors
    /// As [`RagRun::finish`]: the first non-object case, else the first case that failed.
    pub fn into_partial(self) -> Result<RagPartial, RagError> {
        if let Some(e) = self.not_dict.or(self.error) {
            return Err(e);
        }
        Ok(RagPartial {
            k: self.k,
            threshold: self.threshold,
            results: self.results,
        })
    }
}

/// A shard of a lexical rag evaluation: per-case results keyed by each case's position in
/// the whole input. Shards merge by concatenation ([`RagPartial::try_merge`]) and
/// [`RagPartial::finish`] assembles them in position order, so any sharding gives exactly the
/// one-pass report (means summed left to right in case order, bit for bit).
#[derive(Debug, Clone, Default)]
pub struct RagPartial {
    k: usize,
    threshold: f64,
    results: Vec<(CaseResult, Tally)>,
}

impl routeval_core::Accumulator for RagPartial {
    /// Concatenate (options and positions are not checked: see [`RagPartial::try_merge`]).
    fn merge(&mut self, other: Self) {
        if self.results.is_empty() {
            self.k = other.k;
            self.threshold = other.threshold;
        }
        self.results.extend(other.results);
    }
}

impl RagPartial {
    /// Cases held.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    /// Whether no case is held.
    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    /// Merge `other` (same `k` and threshold, disjoint case positions).
    ///
    /// # Errors
    /// [`RagError::Other`] when the options differ or a case position is in both.
    pub fn try_merge(&mut self, other: RagPartial) -> Result<(), RagError> {
        if !self.results.is_empty()
            && !other.results.is_empty()
            && (self.k != other.k || self.threshold.to_bits() != other.threshold.to_bits())
        {
            return Err(RagError::Other(
                "cannot merge rag accumulators with different k or threshold".into(),
            ));
        }
        let mine: HashSet<usize> = self.results.iter().map(|(r, _)| r.index).collect();
        if let Some((r, _)) = other.results.iter().find(|(r, _)| mine.contains(&r.index)) {
            return Err(RagError::Other(format!(
                "case {} is in both accumulators (each case must be added once)",
                r.index
            )));
        }
        routeval_core::Accumulator::merge(self, other);
        Ok(())
    }

    /// The report over every case held, in position order (as [`evaluate`] gives it).
    pub fn finish(mut self) -> RagReport {
        self.results.sort_by_key(|(r, _)| r.index);
        report::assemble(
            self.k,
            self.threshold,
            SimilarityKind::Lexical,
            self.results,
        )
    }

    /// The state as JSON (floats as their IEEE-754 bits, so a round trip is exact): what a
    /// Python accumulator pickles.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let cases: Vec<serde_json::Value> = self
            .results
            .iter()
            .map(|(r, t)| {
                json!([
                    r.query,
                    r.index,
                    r.k,
                    r.threshold.to_bits(),
                    r.n_retrieved,
                    r.n_unique,
                    r.n_relevant,
                    r.estimated,
                    r.metrics
                        .iter()
                        .map(|(m, v)| json!([m.name(), v.to_bits()]))
                        .collect::<Vec<_>>(),
                    r.excluded.iter().map(|m| m.name()).collect::<Vec<_>>(),
                    r.notes,
                    r.failures,
                    // `[value]` when present (so a present `null` survives), else null.
                    r.id.as_ref().map(|v| [v]),
                    r.meta.as_ref().map(|v| [v]),
                    [t.labelled, t.id_matched, t.answer_without_text],
                ])
            })
            .collect();
        json!({"k": self.k, "threshold": self.threshold.to_bits(), "cases": cases})
    }

    /// Rebuild from [`RagPartial::to_json`].
    ///
    /// # Errors
    /// [`RagError::Other`] for a malformed state.
    pub fn from_json(v: &serde_json::Value) -> Result<RagPartial, RagError> {
        use serde_json::Value;
        let bad = || RagError::Other("malformed rag accumulator state".into());
        let u = |v: &Value| v.as_u64().ok_or_else(bad);
        let strs = |v: &Value| -> Result<Vec<String>, RagError> {
            v.as_array()
                .ok_or_else(bad)?
                .iter()
                .map(|s| s.as_str().map(str::to_string).ok_or_else(bad))
                .collect()
        };
        let metric = |v: &Value| v.as_str().and_then(Metric::from_name).ok_or_else(bad);
        let mut results = Vec::new();
        for c in v["cases"].as_array().ok_or_else(bad)? {
            let f = c.as_array().filter(|f| f.len() == 15).ok_or_else(bad)?;
            let flags = f[14].as_array().filter(|x| x.len() == 3).ok_or_else(bad)?;
            let flag = |i: usize| flags[i].as_bool().ok_or_else(bad);
            let r = CaseResult {
                query: f[0].as_str().ok_or_else(bad)?.to_string(),
                index: u(&f[1])? as usize,
                k: u(&f[2])? as usize,
                threshold: f64::from_bits(u(&f[3])?),
                n_retrieved: u(&f[4])? as usize,
                n_unique: u(&f[5])? as usize,
                n_relevant: u(&f[6])? as usize,
                estimated: f[7].as_bool().ok_or_else(bad)?,
                metrics: f[8]
                    .as_array()
                    .ok_or_else(bad)?
                    .iter()
                    .map(|p| Ok((metric(&p[0])?, f64::from_bits(u(&p[1])?))))
                    .collect::<Result<_, RagError>>()?,
                excluded: f[9]
                    .as_array()
                    .ok_or_else(bad)?
                    .iter()
                    .map(metric)
                    .collect::<Result<_, _>>()?,
                notes: strs(&f[10])?,
                failures: strs(&f[11])?,
                id: f[12]
                    .as_array()
                    .and_then(|a| a.first())
                    .cloned()
                    .map(Box::new),
                meta: f[13]
                    .as_array()
                    .and_then(|a| a.first())
                    .cloned()
                    .map(Box::new),
            };
            let t = Tally {
                labelled: flag(0)?,
                id_matched: flag(1)?,
                answer_without_text: flag(2)?,
            };
            results.push((r, t));
        }
        Ok(RagPartial {
            k: u(&v["k"])? as usize,
            threshold: f64::from_bits(u(&v["threshold"])?),
            results,
        })
    }
}

fn evaluate_one<S: Scorer>(
    case: &PyValue<'_>,
    index: usize,
    k: usize,
    t: f64,
    sim: &mut S,
) -> Result<(CaseResult, Tally), RagError> {
    let mut tally = Tally::default();
    let query = query_text(case);
    let raw: &[PyValue] = match case.get("retrieved") {
        None | Some(PyValue::Null) => &[],
        Some(PyValue::Str(_)) => return Err(RagError::RetrievedString(index)),
        Some(PyValue::List(items)) => items,
        Some(other) => {
            return Err(RagError::RetrievedType {
                index,
                type_name: other.type_name(),
            });
        }
    };
    let q = {
        let query = query.clone();
        move || repr_str(&shorten(&query, 60))
    };
    let mut r = CaseResult::new(query, index, k, t);
    r.id = case.get("id").map(|v| Box::new(v.to_json_value()));
    r.meta = case.get("meta").map(|v| Box::new(v.to_json_value()));
    r.n_retrieved = raw.len();
    let mut ids: Vec<IdKey<'_>> = Vec::with_capacity(raw.len());
    let mut texts: Vec<Cow<'_, str>> = Vec::with_capacity(raw.len());
    let mut duplicates = 0usize;
    let mut fps: Vec<u64> = Vec::with_capacity(raw.len());
    if raw.len() <= 24 {
        // Short lists: a linear scan of 64-bit fingerprints beats a hash set (ids are
        // compared in full only when their fingerprints agree).
        for item in raw {
            let (id, text) = as_item(item)?;
            let fp = id_fingerprint(&id);
            if fps
                .iter()
                .zip(&ids)
                .any(|(f, other)| *f == fp && *other == id)
            {
                duplicates += 1;
                continue;
            }
            fps.push(fp);
            ids.push(id);
            texts.push(text);
        }
    } else {
        let mut seen: FxHashSet<IdKey<'_>> = FxHashSet::default();
        for item in raw {
            let (id, text) = as_item(item)?;
            if seen.contains(&id) {
                duplicates += 1;
                continue;
            }
            seen.insert(id.clone());
            ids.push(id);
            texts.push(text);
        }
    }
    r.n_unique = ids.len();
    // Which texts carry passage prose (decided lazily: only answers and estimates need it).
    let embeddings = sim.embeddings();
    let checkable_of = |texts: &[Cow<'_, str>]| -> Vec<usize> {
        (0..texts.len())
            .filter(|&i| embeddings || looks_like_passage(&texts[i]))
            .collect()
    };
    let mut checkable_cache: Option<Vec<usize>> = None;
    if duplicates > 0 {
        r.notes.push(format!(
            "case {index}: {duplicates} duplicate passage(s) in 'retrieved' counted once"
        ));
    }
    if py_strip(&r.query).is_empty() {
        r.notes.push(format!(
            "case {index}: the query is empty, so query-based metrics will be 0"
        ));
    }
    let relevant = match case.get("relevant") {
        None | Some(PyValue::Null) => None,
        Some(v) => Some(v),
    };
    let gain_by_id = match relevant {
        Some(v) => as_gains(v, index)?,
        None => Vec::new(),
    };
    r.n_relevant = gain_by_id.iter().filter(|(_, g)| *g > 0.0).count();
    let has_relevant = relevant.is_some();
    let unanswerable = has_relevant && r.n_relevant == 0;
    if r.n_unique == 0 {
        if unanswerable {
            r.notes.push(format!("case {index}: nothing came back, which for a query labelled as having no right answer is the wanted outcome, not a failure"));
        } else {
            r.failures
                .push(format!("case {index} {}: retrieved nothing", q()));
        }
    } else if r.n_unique < k {
        r.notes.push(format!(
            "case {index}: asked for top-{k} but only {} passage(s) came back; precision_at_k still divides by {k}",
            r.n_unique
        ));
    }
    if unanswerable {
        r.excluded.extend(Metric::RETRIEVAL);
        r.notes.push(format!("case {index}: 'relevant' lists no relevant ids at all, so this query is treated as having no right answer; every retrieval metric is excluded (retrieving nothing relevant is the wanted result here, not a failure)"));
        score_answer(
            case,
            &mut r,
            index,
            &texts,
            checkable_of,
            sim,
            t,
            &mut tally,
        )?;
        return Ok((r, tally));
    }
    let (gains, ideal): (Vec<f64>, Vec<f64>) = if has_relevant {
        let gains: Vec<f64> = if gain_by_id.len() <= 16 {
            let gain_fps: Vec<u64> = gain_by_id.iter().map(|(k, _)| id_fingerprint(k)).collect();
            // The ids' fingerprints from de-duplication when it computed them (short lists).
            let fp_of = |i: usize| {
                fps.get(i)
                    .copied()
                    .unwrap_or_else(|| id_fingerprint(&ids[i]))
            };
            ids.iter()
                .enumerate()
                .map(|(i, id)| {
                    let fp = fp_of(i);
                    gain_by_id
                        .iter()
                        .zip(&gain_fps)
                        .find(|((k, _), f)| **f == fp && k == id)
                        .map_or(0.0, |((_, g), _)| *g)
                })
                .collect()
        } else {
            let lookup: FxHashMap<&IdKey<'_>, f64> =
                gain_by_id.iter().map(|(k, g)| (k, *g)).collect();
            ids.iter()
                .map(|id| lookup.get(id).copied().unwrap_or(0.0))
                .collect()
        };
        let ideal: Vec<f64> = gain_by_id
            .iter()
            .map(|(_, g)| *g)
            .filter(|g| *g > 0.0)
            .collect();
        tally.labelled = true;
        tally.id_matched = gains.iter().any(|g| *g > 0.0);
        (gains, ideal)
    } else {
        r.estimated = true;
        let mut gains = Vec::with_capacity(texts.len());
        let qh = sim.prepare(&r.query);
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        for th in sim.prepare_passages(&refs) {
            let s = sim.score_h(qh, th)?;
            gains.push(if s >= t { 1.0 } else { 0.0 });
        }
        let ideal: Vec<f64> = gains.iter().copied().filter(|g| *g > 0.0).collect();
        r.n_relevant = ideal.len();
        let kind = if sim.embeddings() {
            SimilarityKind::Embeddings
        } else {
            SimilarityKind::Lexical
        };
        r.notes.push(format!(
            "case {index}: no 'relevant' ids, so relevance was estimated from {} against the query at threshold {}",
            kind.as_str(),
            fmt_g(t)
        ));
        let checkable = checkable_cache.get_or_insert_with(|| checkable_of(&texts));
        if r.n_unique > 0 && checkable.is_empty() {
            r.notes.push(format!("case {index}: 'retrieved' holds ids, not passage text, so there is nothing for the query to overlap with and the estimate can only come out 0; pass 'relevant' ids, or the passage text, to measure this case"));
        }
        (gains, ideal)
    };
    r.metrics
        .push((Metric::PrecisionAtK, metrics::precision_at_k(&gains, k)));
    r.metrics.push((Metric::Mrr, metrics::mrr(&gains, k)));
    let hit = metrics::hit_rate(&gains, k);
    r.metrics.push((Metric::HitRate, hit));
    if r.estimated {
        r.excluded.push(Metric::RecallAtK);
        r.notes.push(format!("case {index}: recall_at_k excluded - without 'relevant' ids there is no way to know what was missed"));
    } else {
        match metrics::recall_at_k(&gains, &ideal, k) {
            Some(v) => r.metrics.push((Metric::RecallAtK, v)),
            None => r.excluded.push(Metric::RecallAtK),
        }
    }
    match metrics::ndcg_at_k(&gains, &ideal, k) {
        Some(v) => r.metrics.push((Metric::NdcgAtK, v)),
        None => {
            r.excluded.push(Metric::NdcgAtK);
            r.notes.push(format!(
                "case {index}: nothing relevant is known for this query, so ndcg_at_k is excluded"
            ));
        }
    }
    if r.n_unique > 0 && hit == 0.0 {
        let tail = if r.estimated { " (estimated)" } else { "" };
        r.failures.push(format!(
            "case {index} {}: nothing relevant in the top {k}{tail}",
            q()
        ));
    }
    let cached = checkable_cache.take();
    let checkable_of = |texts: &[Cow<'_, str>]| cached.unwrap_or_else(|| checkable_of(texts));
    score_answer(
        case,
        &mut r,
        index,
        &texts,
        checkable_of,
        sim,
        t,
        &mut tally,
    )?;
    Ok((r, tally))
}

#[allow(clippy::too_many_arguments)]
fn score_answer<'t, S: Scorer>(
    case: &PyValue<'_>,
    r: &mut CaseResult,
    index: usize,
    texts: &[Cow<'t, str>],
    checkable_of: impl FnOnce(&[Cow<'t, str>]) -> Vec<usize>,
    sim: &mut S,
    t: f64,
    tally: &mut Tally,
) -> Result<(), RagError> {
    let answer_v = match case.get("answer") {
        None | Some(PyValue::Null) => None,
        Some(v) => Some(v),
    };
    let Some(answer_v) = answer_v.filter(|v| non_blank(v)) else {
        r.excluded.extend(Metric::ANSWER);
        if answer_v.is_some() {
            r.notes.push(format!(
                "case {index}: 'answer' is blank, so the answer metrics are excluded"
            ));
        }
        return Ok(());
    };
    let answer = answer_v.py_str();
    let checkable: Vec<&str> = checkable_of(texts)
        .into_iter()
        .map(|i| texts[i].as_ref())
        .collect();
    let checkable = &checkable[..];
    let n_texts = texts.len();
    let q = repr_str(&shorten(&r.query, 60));
    let dropped = n_texts - checkable.len();
    if !checkable.is_empty() || n_texts == 0 {
        let (g, used) = groundedness(&answer, checkable, sim, t)?;
        r.metrics.push((Metric::Groundedness, g));
        let cc = if checkable.is_empty() {
            0.0
        } else {
            let v = used as f64 / checkable.len() as f64;
            if v < 1.0 { v } else { 1.0 }
        };
        r.metrics.push((Metric::CitationCoverage, cc));
        if dropped > 0 {
            r.notes.push(format!(
                "case {index}: {dropped} of {n_texts} retrieved item(s) carry an id but no passage text; groundedness and citation_coverage cover the other {}",
                checkable.len()
            ));
        }
        if g < t {
            r.failures.push(format!(
                "case {index} {q}: answer not grounded - only {} of it is supported by the retrieved passages",
                pct0(g)
            ));
        }
    } else {
        r.excluded
            .extend([Metric::Groundedness, Metric::CitationCoverage]);
        tally.answer_without_text = true;
        r.notes.push(format!("case {index}: 'retrieved' holds ids, not passage text, so groundedness and citation_coverage are excluded - an id carries no words for the answer to be supported by, and scoring against one would report a hallucination that did not happen; pass the passage text, or {{'id': ..., 'text': ...}}, to measure them"));
    }
    let query = r.query.clone();
    let relevance = sim.score(&query, &answer)?;
    r.metrics.push((Metric::AnswerRelevance, relevance));
    if relevance < t {
        if sim.embeddings() {
            r.failures.push(format!(
                "case {index} {q}: answer does not address the query (answer_relevance {relevance:.2})"
            ));
        } else {
            r.notes.push(format!("case {index}: answer_relevance is {relevance:.2} because the answer repeats few of the query's own words, which a correct answer often does not do; it is reported, never counted as a failure - pass embed= for a semantic answer_relevance"));
        }
    }
    if let Some(truth) = case.get("ground_truth")
        && !matches!(truth, PyValue::Null)
        && non_blank(truth)
    {
        let truth = truth.py_str();
        let c = sim.score(&truth, &answer)?;
        r.metrics.push((Metric::AnswerCorrectness, c));
        if c < t {
            r.failures.push(format!(
                "case {index} {q}: answer differs from ground_truth (answer_correctness {c:.2})"
            ));
        }
    }
    Ok(())
}

/// Groundedness (spec 8.1) and the number of distinct passages used (spec 8.2).
fn groundedness<S: Scorer>(
    answer: &str,
    passages: &[&str],
    sim: &mut S,
    t: f64,
) -> Result<(f64, usize), RagError> {
    let sentences = split_sentences(answer);
    if sentences.is_empty() || passages.is_empty() {
        return Ok((0.0, 0));
    }
    let mut weights: Vec<f64> = sim
        .weights(answer, &sentences)
        .into_iter()
        .map(|w| w as f64)
        .collect();
    let mut total: f64 = 0.0;
    for w in &weights {
        total += w;
    }
    if total <= 0.0 {
        weights = vec![1.0; sentences.len()];
        total = sentences.len() as f64;
    }
    let mut supported = 0.0;
    let mut used: Vec<usize> = Vec::new();
    let handles: Vec<usize> = sim.prepare_passages(passages);
    for (si, sentence) in sentences.iter().enumerate() {
        let mut best: Option<usize> = None;
        let mut best_score = 0.0;
        let sh = sim.prepare(sentence);
        for (pi, &ph) in handles.iter().enumerate() {
            let s = sim.score_h(sh, ph)?;
            if s > best_score {
                best_score = s;
                best = Some(pi);
            }
        }
        if let Some(b) = best
            && best_score >= t
        {
            supported += weights[si];
            if !used.contains(&b) {
                used.push(b);
            }
        }
    }
    let g = supported / total;
    Ok((if g < 1.0 { g } else { 1.0 }, used.len()))
}

#[cfg(test)]
mod tests;
