//! routeval's IO edge: the machinery the `routeval` binary (`routeval-cli`), `cargo xtask`
//! and the Python package share, so that none of them keeps its own copy.
//!
//! | module | what | feature |
//! |---|---|---|
//! | [`compressed`] | gzip and zstd inputs recognised by their magic bytes and decompressed (streaming or whole) | always |
//! | [`map`] | read-only memory maps of whole-file inputs: the crate's one `unsafe` | always |
//! | [`provenance`] | a report's inputs (size, blake3) and date (`$SOURCE_DATE_EPOCH` or the clock) | always |
//! | [`input`] | opening inputs (`-` = stdin) with one-line errors that say what a path is; inputs are noted for [`output`] | `process` |
//! | [`output`] | every write: never over an input, atomic (temporary file + rename), devices and pipes in place, one file per output | `process` |
//! | [`memory`] | transparent huge pages off for the rest of the process (`rag`: its heap is large and touched once) | `process` |
//! | [`signals`] | cleanup on SIGINT/SIGTERM/SIGHUP: registered process groups killed, temporary files removed | `process` |
//! | [`child`] | [`child::LineChild`], `sh -c COMMAND` in its own process group spoken to one line at a time | `process` |
//! | [`progress`] | indicatif bars on stderr (only on a terminal, or `ROUTEVAL_PROGRESS=always`) implementing [`routeval_core::Progress`] | `progress` |
//! | [`http`] | one blocking JSON POST client: URL checks, retries, redirects, reply limits, API-key redaction | `http` |
//! | [`jsonnet`] | Jsonnet programs to JSON text (imports read relative to a directory, noted as inputs); one-line located errors | `jsonnet` |
//!
//! Module dependencies point one way: `input` → `output` → `signals` ← `child`, `input` →
//! `compressed` ← `map`, `http` → `progress`, `jsonnet` → `output`. Errors are typed ([`input::InputError`],
//! [`output::OutputError`], [`child::AskError`], [`http::HttpError`], `jsonnet::JsonnetError`); their `Display` is the
//! one-line message the CLI prints after `error: `.

pub mod compressed;
pub mod map;
pub mod provenance;

#[cfg(feature = "process")]
pub mod child;
#[cfg(feature = "process")]
pub mod input;
#[cfg(feature = "process")]
pub mod memory;
#[cfg(feature = "process")]
pub mod output;
#[cfg(feature = "process")]
pub mod signals;

#[cfg(feature = "progress")]
pub mod progress;

#[cfg(feature = "http")]
pub mod http;

#[cfg(feature = "jsonnet")]
pub mod jsonnet;

use std::time::Duration;

/// Longest timeout or backoff honoured, in seconds (one day).
pub const MAX_SECONDS: f64 = 86_400.0;

/// A duration from a number of seconds, clamped into `0..=MAX_SECONDS`: NaN and values `<= 0`
/// give zero, larger values (infinity too) [`MAX_SECONDS`]; never panics (unlike
/// `Duration::from_secs_f64`).
pub fn duration(secs: f64) -> Duration {
    if secs.is_nan() || secs <= 0.0 {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(secs.min(MAX_SECONDS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_clamped() {
        assert_eq!(duration(f64::NAN), Duration::ZERO);
        assert_eq!(duration(-1.0), Duration::ZERO);
        assert_eq!(duration(1.5), Duration::from_millis(1500));
        assert_eq!(duration(f64::INFINITY), Duration::from_secs(86_400));
    }
}
