//! `routeval filter`: grep for JSONL by a `where` query.
//!
//! Each line is one instance's `extra_info` object. Matching lines are printed unchanged (or,
//! with `--count`, their number). Each line is checked for UTF-8, then parsed by `serde_json`
//! straight into a reused query tape ([`Doc::parse_projected`]) keeping only the top-level
//! members the query reads; the other members are fully validated but not stored. A regular
//! file is memory-mapped and evaluated in pieces of ~128 KiB on rayon's pool; other inputs
//! are streamed by a reader thread in chunks of whole lines while the previous chunk is
//! evaluated. Matching lines are printed in input order once every line has been read and
//! checked: from a mapped file they are kept as byte ranges of the map (runs of consecutive
//! matching lines) and written from it, from a stream as copies (so a file changed by another
//! process before the output is written prints what it then holds, or, truncated, stops the
//! process with SIGBUS: see `routeval_io::map::map_regular`). Exit 0 whether or not
//! anything matched; exit 2 with one stderr line (error kind, and `FILE:LINE` for data errors)
//! on a malformed query, an invalid JSON line or a query/data error (`missing_key`,
//! `type_error`); nothing is printed on stdout then.

use crate::common::{Failure, display_name, emit, emit_with, open_input};
use crate::progress::Bar;
use rayon::prelude::*;
use routeval_core::Progress;
use routeval_core::progress::Unit;
use routeval_query_dsl::{Doc, OnMissingKey, Query, QueryError};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::mpsc;

/// Arguments of `routeval filter`.
#[derive(Debug, clap::Args)]
pub(crate) struct FilterArgs {
    /// The query, a JSON object, e.g. '{"task": "qa", "meta.lang": {"in": ["en", "ja"]}}'.
    #[arg(long = "where", value_name = "JSON")]
    where_: String,
    /// What a path missing from a line does: `skip` (not a match) or `error` (exit 2).
    #[arg(long, value_name = "skip|error", default_value = "skip")]
    on_missing_key: String,
    /// Print the number of matching lines instead of the lines.
    #[arg(long)]
    count: bool,
    /// With --count: print `{"count": N, "total": M}` instead of the bare number. Without
    /// --count it is refused (exit 2): matching lines are printed as they are, JSON already.
    #[arg(long)]
    json: bool,
    /// Write what would be printed to PATH.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
    /// The JSONL file (`-` = stdin).
    file: PathBuf,
}

/// A structural error in a line that the fast scanner found.
fn scan_error(what: &str, at: usize) -> serde_json::Error {
    <serde_json::Error as serde::de::Error>::custom(format!("{what} at byte {}", at + 1))
}

/// Evaluate `query` on one non-blank line: the line is parsed (and fully validated) into
/// `doc`, reused across lines, keeping only the top-level members the query reads
/// ([`Doc::parse_projected`]); UTF-8 is checked over the whole line first.
fn eval_line(
    line: &[u8],
    query: &Query,
    keys: &[&str],
    omk: OnMissingKey,
    doc: &mut Doc,
) -> Result<bool, LineError> {
    if line.starts_with(b"\xEF\xBB\xBF") {
        return Err(LineError::Json(scan_error(
            "a UTF-8 byte-order mark (U+FEFF) starts the line; save the file without it",
            0,
        )));
    }
    let text = match simdutf8::compat::from_utf8(line) {
        Ok(text) => text,
        Err(e) => {
            return Err(LineError::Json(scan_error(
                "invalid UTF-8",
                e.valid_up_to(),
            )));
        }
    };
    doc.parse_projected_str(text, keys)
        .map_err(LineError::Json)?;
    if !doc.is_object() {
        let v: Value = serde_json::from_slice(line).map_err(LineError::Json)?;
        return Err(LineError::NotObject(json_kind(&v)));
    }
    query.matches_doc(doc, omk).map_err(LineError::Query)
}

/// The JSON type name of a value, for error messages.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

enum LineError {
    Json(serde_json::Error),
    Query(QueryError),
    /// The line is valid JSON but not an object (each line is one instance's extra_info).
    NotObject(&'static str),
}

/// Bytes read per chunk: the input is streamed through one reused buffer.
const CHUNK: usize = 2 << 20;

/// Bytes per parallel piece of a chunk (cut at line ends): small enough to balance the
/// threads, large enough that each piece's set-up (a `Doc`, an output buffer) is amortised.
const PIECE: usize = 128 << 10;

/// What is kept of the matching lines while the input is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Nothing (`--count`).
    Count,
    /// Where they are in the piece (a memory-mapped input, which stays mapped until printed).
    Ranges,
    /// Copies (a streamed input, whose buffers are reused).
    Copies,
}

/// What one piece of a chunk produced.
#[derive(Default)]
struct PieceResult {
    /// Lines in the piece (blank ones included), for numbering.
    lines: usize,
    /// Matching lines.
    count: u64,
    /// Non-blank lines.
    total: u64,
    /// [`Keep::Copies`]: the matching lines, each with its `\n`.
    out: Vec<u8>,
    /// [`Keep::Ranges`]: runs of consecutive matching lines as byte ranges of the piece, each
    /// from the first line's start to the last line's end (its `\n` excluded).
    runs: Vec<(usize, usize)>,
    /// The first failing line: its 0-based index in the piece, and the error.
    error: Option<(usize, LineError)>,
}

/// The matching lines, held until the whole input has been read and checked (a bad line
/// anywhere prints nothing), then written in input order.
enum Matches<'a> {
    /// Runs of consecutive matching lines of a mapped input (each printed with a `\n` after
    /// it): a few bytes per run instead of a copy of the output.
    Slices(Vec<&'a [u8]>),
    /// The copied matching lines of a streamed input, one buffer per piece.
    Buffers(Vec<Vec<u8>>),
}

impl Matches<'_> {
    /// Write the lines to `w`, each ending in `\n`.
    fn write(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match self {
            Matches::Slices(runs) => {
                for run in runs {
                    w.write_all(run)?;
                    w.write_all(b"\n")?;
                }
            }
            Matches::Buffers(bufs) => {
                for b in bufs {
                    w.write_all(b)?;
                }
            }
        }
        Ok(())
    }
}

/// Evaluate every line of `piece` (complete lines; the last may lack its `\n`), stopping at
/// the first error.
fn process_piece(
    piece: &[u8],
    query: &Query,
    keys: &[&str],
    omk: OnMissingKey,
    keep: Keep,
) -> PieceResult {
    let mut r = PieceResult::default();
    if keep == Keep::Copies {
        // Room for every line (pages never written are never touched), then the exact size:
        // a buffer grown by doubling held up to twice the output.
        r.out.reserve_exact(piece.len() + 1);
    }
    DOC.with_borrow_mut(|doc| process_lines(piece, query, keys, omk, keep, doc, &mut r));
    r.out.shrink_to_fit();
    r
}

thread_local! {
    /// Each worker thread's reused query tape.
    static DOC: std::cell::RefCell<Doc> = std::cell::RefCell::new(Doc::default());
}

/// The loop of [`process_piece`].
fn process_lines(
    piece: &[u8],
    query: &Query,
    keys: &[&str],
    omk: OnMissingKey,
    keep: Keep,
    doc: &mut Doc,
    r: &mut PieceResult,
) {
    let mut start = 0usize;
    while start < piece.len() {
        let end = memchr::memchr(b'\n', &piece[start..]).map_or(piece.len(), |k| start + k);
        let line = &piece[start..end];
        let index = r.lines;
        r.lines += 1;
        start = end + 1;
        // Blank: JSON whitespace only (a form feed is not JSON whitespace, as in `json.loads`).
        if line.iter().all(|c| matches!(c, b' ' | b'\t' | b'\r')) {
            continue;
        }
        match eval_line(line, query, keys, omk, doc) {
            Ok(m) => {
                r.total += 1;
                if m {
                    r.count += 1;
                    let line_start = end - line.len();
                    match keep {
                        Keep::Count => {}
                        // The line right after the last run's: that run grows over it.
                        Keep::Ranges => match r.runs.last_mut() {
                            Some(run) if run.1 + 1 == line_start => run.1 = end,
                            _ => r.runs.push((line_start, end)),
                        },
                        Keep::Copies => {
                            r.out.extend_from_slice(line);
                            r.out.push(b'\n');
                        }
                    }
                }
            }
            Err(e) => {
                r.error = Some((index, e));
                return;
            }
        }
    }
}

/// Evaluate the complete lines of `region` (1-based numbering from `first_line`) in parallel
/// pieces, counting matches and non-blank lines and keeping the matching lines in input order
/// as `keep` says: slices of `region` appended to `slices` ([`Keep::Ranges`]) or copies
/// appended to `bufs` ([`Keep::Copies`]). Returns the number of lines in the region.
#[allow(clippy::too_many_arguments)]
fn process_region<'r>(
    region: &'r [u8],
    first_line: usize,
    query: &Query,
    keys: &[&str],
    omk: OnMissingKey,
    name: &str,
    keep: Keep,
    slices: &mut Vec<&'r [u8]>,
    bufs: &mut Vec<Vec<u8>>,
    count: &mut u64,
    total: &mut u64,
    progress: &dyn Progress,
) -> Result<usize, Failure> {
    let mut pieces = Vec::with_capacity(region.len() / PIECE + 1);
    let mut start = 0usize;
    while start < region.len() {
        let cut = (start + PIECE).min(region.len());
        let end = if cut == region.len() {
            cut
        } else {
            memchr::memchr(b'\n', &region[cut..]).map_or(region.len(), |k| cut + k + 1)
        };
        pieces.push(&region[start..end]);
        start = end;
    }
    let results: Vec<PieceResult> = pieces
        .par_iter()
        .map(|piece| {
            let r = process_piece(piece, query, keys, omk, keep);
            progress.advance(piece.len() as u64);
            r
        })
        .collect();
    let mut line_no = first_line;
    for (piece, r) in pieces.iter().zip(results) {
        if let Some((i, e)) = r.error {
            let at = line_no + i;
            return Err(Failure::bad_input(match e {
                LineError::Json(e) => format!("{name}:{at}: invalid JSON: {e}"),
                LineError::Query(e) => format!("{name}:{at}: {e}"),
                LineError::NotObject(kind) => format!(
                    "{name}:{at}: bad_instance: each line must be a JSON object, got {kind}"
                ),
            }));
        }
        line_no += r.lines;
        *count += r.count;
        *total += r.total;
        slices.extend(r.runs.iter().map(|&(a, b)| &piece[a..b]));
        if !r.out.is_empty() {
            bufs.push(r.out);
        }
    }
    Ok(line_no - first_line)
}

/// Run `routeval filter`.
pub(crate) fn run(args: FilterArgs) -> Result<u8, Failure> {
    if args.json && !args.count {
        return Err(Failure::bad_input(
            "--json goes with --count (prints {\"count\": N, \"total\": M}); without --count \
             the matching lines are printed unchanged, already JSON",
        ));
    }
    let omk: OnMissingKey = args
        .on_missing_key
        .parse()
        .map_err(|e: QueryError| Failure::bad_input(format!("--on-missing-key: {e}")))?;
    let query =
        Query::parse_str(&args.where_).map_err(|e| Failure::bad_input(format!("--where: {e}")))?;
    let name = display_name(&args.file);
    let keys = query.top_level_keys();
    if args.file.as_path() != std::path::Path::new("-") {
        let file = crate::common::open_file(&args.file)?;
        if let Some(map) = crate::common::map_file(&file) {
            // A regular file: evaluated in place, all pieces in parallel; the matching lines
            // are printed from the map.
            let mut slices = Vec::new();
            let (mut count, mut total) = (0u64, 0u64);
            let bar = Bar::with_stage(
                &format!("filtering {name}"),
                Some(map.len() as u64),
                Unit::Bytes,
            );
            process_region(
                &map,
                1,
                &query,
                &keys,
                omk,
                &name,
                if args.count {
                    Keep::Count
                } else {
                    Keep::Ranges
                },
                &mut slices,
                &mut Vec::new(),
                &mut count,
                &mut total,
                &bar,
            )?;
            drop(bar);
            return finish(&args, Matches::Slices(slices), count, total);
        }
    }
    let (out, count, total) = filter_streamed(&args, &query, &keys, omk, &name)?;
    finish(&args, out, count, total)
}

/// A streamed input (stdin, compressed): a reader thread fills chunks of whole lines while
/// this thread evaluates them; the matching lines (unless `--count`), the count and the total.
fn filter_streamed(
    args: &FilterArgs,
    query: &Query,
    keys: &[&str],
    omk: OnMissingKey,
    name: &str,
) -> Result<(Matches<'static>, u64, u64), Failure> {
    let mut reader = open_input(&args.file)?;

    let mut bufs = Vec::new();
    let mut count = 0u64;
    let mut total = 0u64;
    let mut next_line = 1usize;
    // Streamed (stdin, compressed): the total is unknown; the bar counts bytes evaluated.
    let bar = Bar::with_stage(&format!("filtering {name}"), None, Unit::Bytes);
    let (full_tx, full_rx) = mpsc::sync_channel::<Vec<u8>>(1);
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|scope| -> Result<(), Failure> {
        let reader = &mut reader;
        let reading = scope.spawn(move || {
            routeval_io::input::read_line_chunks(&mut **reader, CHUNK, &full_tx, &free_rx)
                .map_err(|e| Failure::bad_input(format!("{name}: cannot read: {e}")))
        });
        let evaluated = (|| {
            for chunk in &full_rx {
                next_line += process_region(
                    &chunk,
                    next_line,
                    query,
                    keys,
                    omk,
                    name,
                    if args.count {
                        Keep::Count
                    } else {
                        Keep::Copies
                    },
                    &mut Vec::new(),
                    &mut bufs,
                    &mut count,
                    &mut total,
                    &bar,
                )?;
                let _ = free_tx.send(chunk);
            }
            Ok(())
        })();
        drop(full_rx); // unblocks the reader if evaluation stopped early
        let read = reading
            .join()
            .unwrap_or_else(|_| Err(Failure::bad_input(format!("{name}: reader thread failed"))));
        evaluated.and(read)
    })?;
    drop(bar);
    Ok((Matches::Buffers(bufs), count, total))
}

/// Print the matching lines, or their count.
fn finish(args: &FilterArgs, out: Matches<'_>, count: u64, total: u64) -> Result<u8, Failure> {
    if args.count {
        let text = if args.json {
            format!("{{\"count\": {count}, \"total\": {total}}}\n")
        } else {
            format!("{count}\n")
        };
        emit(args.output.as_ref(), text.as_bytes())?;
    } else {
        emit_with(args.output.as_ref(), &mut |w| out.write(w))?;
    }
    Ok(crate::common::EXIT_OK)
}
