//! Errors with input context.
//!
//! Library crates define their own `thiserror` enums for their own failure modes and use
//! [`Error`] for problems found in user input, so that every front end reports them the same
//! way: one line naming the input, the line and the problem.

use std::fmt;

/// Where in the input a problem was found.
///
/// `source` is the name the user gave for the input (a path, or `<stdin>` for `-`), and
/// `line` is the 1-based line number when the input is line-oriented. Displays as
/// `source:line` or, without a line, `source`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    /// The input's name as the user gave it (a path, `<stdin>`, or a description).
    pub source: String,
    /// The 1-based line number, when the input is line-oriented.
    pub line: Option<u64>,
}

impl Location {
    /// A location in `source` with no line number.
    pub fn new(source: impl Into<String>) -> Self {
        Location {
            source: source.into(),
            line: None,
        }
    }

    /// A location at 1-based `line` of `source`.
    pub fn at_line(source: impl Into<String>, line: u64) -> Self {
        Location {
            source: source.into(),
            line: Some(line),
        }
    }

    /// The same input at another 1-based `line`.
    pub fn with_line(&self, line: u64) -> Self {
        Location {
            source: self.source.clone(),
            line: Some(line),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}", self.source, line),
            None => f.write_str(&self.source),
        }
    }
}

/// A problem with user input or reading it.
///
/// Display is a single line suitable for stderr: `FILE:LINE: problem`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is malformed at `at` (missing column, non-numeric value, duplicate, ...).
    #[error("{at}: {problem}")]
    Input {
        /// Where the problem is.
        at: Location,
        /// What is wrong, as a short lower-case phrase.
        problem: String,
    },
    /// Reading the input failed.
    #[error("{at}: {source}")]
    Io {
        /// The input being read.
        at: Location,
        /// The underlying IO error.
        #[source]
        source: std::io::Error,
    },
    /// A request is invalid independently of any input file (bad option value, ...).
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// An [`Error::Input`] at `at` with `problem`.
    pub fn input(at: Location, problem: impl Into<String>) -> Self {
        Error::Input {
            at,
            problem: problem.into(),
        }
    }

    /// An [`Error::Io`] while reading `at`.
    pub fn io(at: Location, source: std::io::Error) -> Self {
        Error::Io { at, source }
    }

    /// The location of the problem, if the error has one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Error::Input { at, .. } | Error::Io { at, .. } => Some(at),
            Error::Invalid(_) => None,
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_one_line_with_file_and_line() {
        let e = Error::input(Location::at_line("run.txt", 7), "missing column 5 (score)");
        assert_eq!(e.to_string(), "run.txt:7: missing column 5 (score)");
        assert_eq!(e.location().unwrap().line, Some(7));
        let e = Error::input(Location::new("<stdin>"), "empty run");
        assert_eq!(e.to_string(), "<stdin>: empty run");
    }
}
