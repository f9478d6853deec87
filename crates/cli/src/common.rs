//! Conventions shared by every subcommand: inputs (`-` = stdin), outputs (`-o/--output`),
//! errors (one stderr line) and exit statuses.
//!
//! Exit statuses: 0 ok; 2 bad input or usage; 3 a quality gate failed (`--fail-under`, see
//! [`crate::gate`], or `rag --strict`). (`rag`
//! keeps rag-quality-check's 1 for input errors; it maps its own errors.)

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
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
            // One line: collapse any newline the message may carry.
            let line = f.message.replace('\n', " ");
            let _ = writeln!(io::stderr(), "error: {line}");
            ExitCode::from(f.status)
        }
    }
}

/// The name to use for `path` in messages: `<stdin>` for `-`.
pub(crate) fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// What `meta` describes when it is not a regular file (`a directory`, `a FIFO (named
/// pipe)`, ...), or `None` for a regular file.
pub(crate) fn file_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_socket() {
            return Some("a socket");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
    }
    Some("not a regular file")
}

/// Why `path` cannot be read as an input file, said as what it is: `PATH: is a directory, not
/// a file`, `PATH: is a socket, ...`, `/dev/fd/N: no file descriptor N is open ...`, else
/// `PATH: cannot open: OS ERROR`; `None` when it can be read (a regular file, or a stream such as a FIFO,
/// `/dev/fd/N` from `<(cmd)` process substitution, or `/dev/stdin`, which are read as they
/// come).
pub(crate) fn unreadable_input(path: &Path) -> Option<String> {
    let name = display_name(path);
    match std::fs::metadata(path) {
        Ok(meta) => match file_kind(&meta) {
            Some(kind @ ("a directory" | "a socket")) => {
                Some(format!("{name}: is {kind}, not a file"))
            }
            _ => None,
        },
        Err(e) => {
            if let Some(n) = path
                .to_str()
                .and_then(|p| p.strip_prefix("/dev/fd/"))
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            {
                return Some(format!(
                    "{name}: no file descriptor {n} is open in this process (a `<(cmd)` path is only valid in the shell command that made it)"
                ));
            }
            Some(format!("{name}: cannot open: {e}"))
        }
    }
}

/// Open the input file `path` (not `-`) for reading; errors name the file and say what it is
/// when it is not one ([`unreadable_input`]).
pub(crate) fn open_file(path: &Path) -> Result<File, Failure> {
    if let Some(msg) = unreadable_input(path) {
        return Err(Failure::bad_input(msg));
    }
    let f = File::open(path)
        .map_err(|e| Failure::bad_input(format!("{}: cannot open: {e}", path.display())))?;
    // Noted as an input: no output may be written over it (crate::output).
    crate::output::note_input_file(&f, path);
    Ok(f)
}

/// Open `path` for reading, `-` meaning stdin; errors name the file. gzip and zstd content
/// (by magic bytes) is decompressed on the fly ([`crate::input`]).
pub(crate) fn open_input(path: &Path) -> Result<Box<dyn BufRead + Send>, Failure> {
    let raw: Box<dyn BufRead + Send> = if path == Path::new("-") {
        Box::new(BufReader::with_capacity(1 << 20, io::stdin()))
    } else {
        let f = open_file(path)?;
        Box::new(BufReader::with_capacity(1 << 20, f))
    };
    let (reader, _) = crate::input::decoding_reader(raw)
        .map_err(|e| Failure::bad_input(format!("{}: cannot read: {e}", display_name(path))))?;
    Ok(reader)
}

/// The bytes of a whole-file input: a read-only map of a regular file, or bytes in memory
/// (a decompressed gzip/zstd file, which cannot be used in place, or an input that was read:
/// stdin, a stream).
pub(crate) enum InputBytes {
    /// The file itself, mapped.
    Mapped(memmap2::Mmap),
    /// Decompressed content, or bytes read from a stream.
    Decoded(Vec<u8>),
}

impl std::ops::Deref for InputBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            InputBytes::Mapped(m) => m,
            InputBytes::Decoded(v) => v,
        }
    }
}

/// Map the regular file `file` read-only into memory, or `None` (it is not a regular file,
/// it is empty, or the OS refused): callers then read it instead.
///
/// Used by `filter`, `rag`, `trec` and `compare` for their whole-file inputs: on the benchmark machine reading
/// into a fresh buffer costs about 0.5 ms per MB in page faults and zero-filling alone,
/// more than parsing; a map of a file in the page cache costs a fraction of that.
///
/// A gzip or zstd file (by magic bytes) is decompressed into memory instead; if that fails,
/// `None` too, and the caller's read path reports the error.
pub(crate) fn map_file(file: &File) -> Option<InputBytes> {
    let map = map_raw(file)?;
    match crate::input::Compression::sniff(&map) {
        crate::input::Compression::None => Some(InputBytes::Mapped(map)),
        c => crate::input::decode_slice(&map, c)
            .ok()
            .map(InputBytes::Decoded),
    }
}

#[allow(unsafe_code)] // the one place we map files; see SAFETY
fn map_raw(file: &File) -> Option<memmap2::Mmap> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() == 0 {
        return None;
    }
    // SAFETY: the map is read-only and private to this process, and we only read its bytes.
    // What memory-mapping cannot rule out is another process changing the file while we
    // read it: a truncation can stop us with SIGBUS (as it would any mmap reader, e.g.
    // ripgrep), an in-place rewrite can change what we read. Evaluating a file while it is
    // rewritten gives no meaningful result either way.
    unsafe { memmap2::Mmap::map(file) }.ok()
}

/// Read the whole of `path` (`-` = stdin) into memory, decompressing gzip/zstd content;
/// errors name the file.
pub(crate) fn read_input(path: &Path) -> Result<Vec<u8>, Failure> {
    let raw = read_raw(path)?;
    crate::input::decode_bytes(raw)
        .map_err(|e| Failure::bad_input(format!("{}: cannot decompress: {e}", display_name(path))))
}

/// [`crate::input::decode_bytes`] with the conventions' error: `NAME: cannot decompress: ...`.
pub(crate) fn decode_input(bytes: Vec<u8>, path: &Path) -> Result<Vec<u8>, Failure> {
    crate::input::decode_bytes(bytes)
        .map_err(|e| Failure::bad_input(format!("{}: cannot decompress: {e}", display_name(path))))
}

fn read_raw(path: &Path) -> Result<Vec<u8>, Failure> {
    let mut buf = Vec::new();
    if path == Path::new("-") {
        io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| Failure::bad_input(format!("<stdin>: cannot read: {e}")))?;
    } else {
        open_file(path)?
            .read_to_end(&mut buf)
            .map_err(|e| Failure::bad_input(format!("{}: cannot read: {e}", path.display())))?;
    }
    Ok(buf)
}

/// Write what would be printed: to `output` when given (`-o/--output PATH`), else stdout.
/// Atomic, never over an input, write errors are one line and exit 2: see [`crate::output`].
pub(crate) fn emit(output: Option<&PathBuf>, bytes: &[u8]) -> Result<(), Failure> {
    crate::output::emit(output, bytes)
}
