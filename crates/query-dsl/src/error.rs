//! The errors of the where language.

/// A malformed query (raised when it is compiled) or a query/data error (raised while it is
/// evaluated on an instance).
///
/// The variant names follow the error kinds of `specs/query-dsl.md` §B4; [`QueryError::kind`]
/// returns the kind string (`"bad_where"`, `"missing_key"`, ...) the corpus compares. Messages
/// follow Python's wording where the reference raises a Python error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The `where` is neither an object nor null.
    #[error("bad_where: {0}")]
    BadWhere(String),
    /// A path is not a string, is empty or has an empty segment.
    #[error("bad_path: {0}")]
    BadPath(String),
    /// An operator object is `{}`.
    #[error("empty_condition: operator object must not be empty (path {0:?})")]
    EmptyCondition(String),
    /// A key of an operator object is not an operator or an alias.
    #[error("unknown_operator: unknown operator {0:?}")]
    UnknownOperator(String),
    /// An operand has the wrong type for its operator (`regex` needs a string, `exists` a bool,
    /// `gt`..`lte` a number or a string, `elem_match` a non-empty object).
    #[error("bad_operand: {0}")]
    BadOperand(String),
    /// A `regex` operand is not a valid Python `re` pattern, or cannot be honoured.
    #[error("bad_regex: invalid regular expression {pattern:?}: {message}")]
    BadRegex {
        /// The pattern as written.
        pattern: String,
        /// Python's message, or why the pattern cannot be honoured.
        message: String,
    },
    /// An `elem_match` object mixes operators and field paths.
    #[error("mixed_elem_match: 'elem_match' object mixes operators and field paths")]
    MixedElemMatch,
    /// An option (`on_missing_key`, `on_unmatched`) has an unknown value.
    #[error("bad_option: {0}")]
    BadOption(String),
    /// A path used by the query is missing and `on_missing_key` is `error`.
    #[error("missing_key: {0:?}")]
    MissingKey(String),
    /// Python would raise `TypeError` (ordering incomparable values, `in` on a non-container).
    #[error("type_error: {0}")]
    TypeError(String),
    /// The regex engine gave up on a pattern at match time (its backtracking limit); Python
    /// would keep searching. An extension of the spec's kinds.
    #[error("regex_limit: pattern {pattern:?}: {message}")]
    RegexLimit {
        /// The pattern as written.
        pattern: String,
        /// The engine's message.
        message: String,
    },
}

impl QueryError {
    /// The error kind as in `specs/query-dsl.md` §B4 (`"bad_where"`, `"missing_key"`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            QueryError::BadWhere(_) => "bad_where",
            QueryError::BadPath(_) => "bad_path",
            QueryError::EmptyCondition(_) => "empty_condition",
            QueryError::UnknownOperator(_) => "unknown_operator",
            QueryError::BadOperand(_) => "bad_operand",
            QueryError::BadRegex { .. } => "bad_regex",
            QueryError::MixedElemMatch => "mixed_elem_match",
            QueryError::BadOption(_) => "bad_option",
            QueryError::MissingKey(_) => "missing_key",
            QueryError::TypeError(_) => "type_error",
            QueryError::RegexLimit { .. } => "regex_limit",
        }
    }

    /// Whether the error is raised while evaluating (data-dependent), not while compiling.
    pub fn is_evaluation_error(&self) -> bool {
        matches!(
            self,
            QueryError::MissingKey(_) | QueryError::TypeError(_) | QueryError::RegexLimit { .. }
        )
    }
}
