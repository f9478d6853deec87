//! Conventions shared by every subcommand: inputs (`-` = stdin), outputs (`-o/--output`),
//! errors (one stderr line) and exit statuses. The machinery (opening, decompressing, mapping,
//! writing) is `routeval_io`'s; this module turns its typed errors into [`Failure`]s.
//!
//! Exit statuses: 0 ok; 2 bad input or usage; 3 a quality gate failed (`--fail-under`, see
//! [`crate::gate`], or `rag --strict`). (`rag`
//! keeps rag-quality-check's 1 for input errors; it maps its own errors.)

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status: success.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit status: bad input or usage.
pub(crate) const EXIT_BAD_INPUT: u8 = 2;
/// Exit status: a quality gate failed (`--fail-under`, `rag --strict`).
pub(crate) const EXIT_STRICT: u8 = 3;

/// A failed subcommand: what to print on stderr (one line) and the exit status.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) status: u8,
}

impl Failure {
    /// Bad input or usage (exit 2).
    pub(crate) fn bad_input(message: impl std::fmt::Display) -> Self {
        Failure {
            message: message.to_string(),
            status: EXIT_BAD_INPUT,
        }
    }
}

impl From<routeval_core::Error> for Failure {
    fn from(e: routeval_core::Error) -> Self {
        Failure::bad_input(e)
    }
}

/// The result of a subcommand: `Ok(status)` or a [`Failure`].
pub(crate) type CmdResult = Result<u8, Failure>;

/// Turn a subcommand result into the process exit code, printing a failure's one line.
pub(crate) fn finish(result: CmdResult) -> ExitCode {
    match result {
        Ok(status) => ExitCode::from(status),
        Err(f) => {
            // Stopped by a signal: the handler reports it and sets the exit status.
            routeval_io::signals::wait_if_stopping();
            // One line: collapse any newline the message may carry, and escape control
            // characters (a message may quote bytes from a hostile input).
            let line = f.message.replace('\n', " ");
            let line = routeval_core::printable(&line);
            let _ = writeln!(io::stderr(), "error: {line}");
            ExitCode::from(f.status)
        }
    }
}

impl From<routeval_io::input::InputError> for Failure {
    fn from(e: routeval_io::input::InputError) -> Self {
        Failure::bad_input(e)
    }
}

impl From<routeval_io::output::OutputError> for Failure {
    fn from(e: routeval_io::output::OutputError) -> Self {
        Failure::bad_input(e)
    }
}

// The input functions are `routeval_io::input`'s (errors as `Failure`s, exit 2) and
// `routeval_io::map`'s.
pub(crate) use routeval_io::input::{display_name, file_kind};
pub(crate) use routeval_io::map::{InputBytes, map_file};

/// Why `path` cannot be read as an input file, as one line ([`routeval_io::input::unreadable_input`]);
/// `None` when it can be read.
pub(crate) fn unreadable_input(path: &Path) -> Option<String> {
    routeval_io::input::unreadable_input(path).map(|e| e.to_string())
}

/// Open the input file `path` (not `-`) for reading, noted as an input
/// ([`routeval_io::input::open_file`]).
pub(crate) fn open_file(path: &Path) -> Result<File, Failure> {
    Ok(routeval_io::input::open_file(path)?)
}

/// Open `path` for reading, `-` meaning stdin, gzip/zstd decompressed on the fly
/// ([`routeval_io::input::open_input`]).
pub(crate) fn open_input(path: &Path) -> Result<Box<dyn BufRead + Send>, Failure> {
    Ok(routeval_io::input::open_input(path)?)
}

/// Read the whole of `path` (`-` = stdin) into memory, decompressing gzip/zstd content
/// ([`routeval_io::input::read_input`]).
pub(crate) fn read_input(path: &Path) -> Result<Vec<u8>, Failure> {
    Ok(routeval_io::input::read_input(path)?)
}

/// Decompress the content of `path` when it is gzip/zstd: `NAME: cannot decompress: ...`
/// ([`routeval_io::input::decode_input`]).
pub(crate) fn decode_input(bytes: Vec<u8>, path: &Path) -> Result<Vec<u8>, Failure> {
    Ok(routeval_io::input::decode_input(bytes, path)?)
}

/// Write an output piece by piece ([`routeval_io::output::emit_with`]): to `output` when
/// given (atomically), else stdout; errors as [`emit`]'s.
pub(crate) fn emit_with(
    output: Option<&PathBuf>,
    write: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    Ok(routeval_io::output::emit_with(output, write)?)
}

/// Write what would be printed: to `output` when given (`-o/--output PATH`), else stdout.
/// Atomic, never over an input, write errors are one line and exit 2: see
/// [`routeval_io::output`].
pub(crate) fn emit(output: Option<&PathBuf>, bytes: &[u8]) -> Result<(), Failure> {
    Ok(routeval_io::output::emit(output, bytes)?)
}
