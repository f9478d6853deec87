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
            Some(line) => write!(f, "{}:{}", printable(&self.source), line),
            None => f.write_str(&printable(&self.source)),
        }
    }
}

/// A problem with user input or reading it.
///
/// Display is a single line suitable for stderr: `FILE:LINE: problem`, with control
/// characters and bidirectional overrides in the name and the problem escaped ([`printable`]:
/// a problem quoting a field read from a hostile file cannot drive the terminal).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is malformed at `at` (missing column, non-numeric value, duplicate, ...).
    #[error("{at}: {}", printable(.problem))]
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
    #[error("{}", printable(.0))]
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

/// `text` safe to print on a terminal inside an error line: every control character (Unicode
/// category Cc: C0 controls such as ESC, DEL, C1 controls) and every bidirectional override or
/// isolate (U+202A–U+202E, U+2066–U+2069: they reorder what a reader sees) is replaced by an
/// escape, `\xHH` up to U+00FF and `\u{HHHH}` above, as Rust's `escape_debug` spells them;
/// `\n`, `\r` and `\t` as those two-character escapes. Text without such characters is
/// returned as it is (borrowed).
///
/// Used wherever a message quotes a value read from an input (a TREC field, a JSON string),
/// so that hostile bytes in a file cannot recolour the terminal, move the cursor or hide text.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    fn escaped(c: char) -> bool {
        c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !text.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if escaped(c) && (c as u32) <= 0xff => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if escaped(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// [`printable`] of bytes read from an input, decoded as UTF-8 with invalid sequences shown
/// as U+FFFD (as `String::from_utf8_lossy`).
pub fn printable_bytes(bytes: &[u8]) -> String {
    printable(&String::from_utf8_lossy(bytes)).into_owned()
}

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

    #[test]
    fn printable_escapes_what_a_terminal_would_obey() {
        assert!(matches!(
            printable("d1 plain é"),
            std::borrow::Cow::Borrowed("d1 plain é")
        ));
        assert_eq!(printable("\u{1b}[31mred\u{7}"), "\\x1b[31mred\\x07");
        assert_eq!(
            printable("a\tb\nc\rd\u{7f}\u{9b}"),
            "a\\tb\\nc\\rd\\x7f\\x9b"
        );
        assert_eq!(
            printable("abc\u{202e}fed\u{2069}"),
            "abc\\u{202e}fed\\u{2069}"
        );
        assert_eq!(printable_bytes(b"x\xff\x1b"), "x\u{fffd}\\x1b");
    }
}
