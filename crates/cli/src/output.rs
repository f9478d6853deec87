//! The CLI's face of [`routeval_io::output`] (every write: never over an input, atomic,
//! devices and pipes in place, one file per output): the same functions, their errors as
//! [`Failure`]s (one line, exit 2).

use crate::common::Failure;
use std::path::Path;

pub(crate) use routeval_io::output::{AtomicFile, note_input, note_input_file, noted_inputs};

/// Refuse (exit 2) when `path` is the same file as one of the inputs.
pub(crate) fn check_not_input(path: &Path) -> Result<(), Failure> {
    Ok(routeval_io::output::check_not_input(path)?)
}

/// Note each `(flag, path)` that is given as an output, in order; refuses (exit 2) an output
/// that is the same file as another ([`routeval_io::output::note_output`]).
pub(crate) fn check_outputs(outputs: &[(&str, Option<&Path>)]) -> Result<(), Failure> {
    Ok(routeval_io::output::check_outputs(outputs)?)
}

/// Write `bytes` to `path` atomically; refuses an input (exit 2).
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    Ok(routeval_io::output::write_file(path, bytes)?)
}

/// Refuse stdout when it was redirected to one of the inputs (`routeval filter x >> x`).
pub(crate) fn check_stdout_not_input() -> Result<(), Failure> {
    Ok(routeval_io::output::check_stdout_not_input()?)
}

/// Write `bytes` to stdout and flush; any error (EPIPE included) is one line, exit 2.
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    Ok(routeval_io::output::write_stdout(bytes)?)
}

/// Map a stdout write error (for writers that stream to stdout themselves).
pub(crate) fn stdout_failure(e: &std::io::Error) -> Failure {
    routeval_io::output::stdout_failure(e).into()
}
