//! Opening inputs: `-` means stdin, errors are one line naming the file and saying what it is
//! when it is not one ([`InputError`]), gzip/zstd content is decompressed
//! ([`crate::compressed`]), and every file opened is noted as an input
//! ([`crate::output::note_input_file`]) so that no output is written over it.

use crate::compressed;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// Why an input cannot be read. `Display` is the one-line message (`NAME: ...`), `NAME` as
/// [`display_name`] spells it.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The path is a directory or a socket.
    #[error("{name}: is {kind}, not a file")]
    NotAFile {
        /// The input's name.
        name: String,
        /// What it is (`a directory`, `a socket`).
        kind: &'static str,
    },
    /// `/dev/fd/N` names no open descriptor (a `<(cmd)` path used outside its command).
    #[error(
        "{name}: no file descriptor {fd} is open in this process (a `<(cmd)` path is only valid in the shell command that made it)"
    )]
    NoDescriptor {
        /// The input's name.
        name: String,
        /// The descriptor number, as written.
        fd: String,
    },
    /// Opening failed (missing file, permissions, ...).
    #[error("{name}: cannot open: {source}")]
    Open {
        /// The input's name.
        name: String,
        /// The OS error.
        source: io::Error,
    },
    /// Reading failed.
    #[error("{name}: cannot read: {source}")]
    Read {
        /// The input's name.
        name: String,
        /// The OS or decoder error.
        source: io::Error,
    },
    /// The content is compressed in a format routeval does not read (bzip2, xz, lz4, lzip).
    #[error("{name}: {source}")]
    UnsupportedCompression {
        /// The input's name.
        name: String,
        /// The format found.
        source: compressed::UnsupportedCompression,
    },
    /// The gzip/zstd content is corrupt or truncated.
    #[error("{name}: cannot decompress: {source}")]
    Decompress {
        /// The input's name.
        name: String,
        /// The decoder's error.
        source: io::Error,
    },
}

/// The name to use for `path` in messages: `<stdin>` for `-`.
pub fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// What `meta` describes when it is not a regular file (`a directory`, `a FIFO (named
/// pipe)`, ...), or `None` for a regular file.
pub fn file_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
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
/// `PATH: cannot open: OS ERROR`; `None` when it can be read (a regular file, or a stream such
/// as a FIFO, `/dev/fd/N` from `<(cmd)` process substitution, or `/dev/stdin`, which are read
/// as they come).
pub fn unreadable_input(path: &Path) -> Option<InputError> {
    let name = display_name(path);
    match std::fs::metadata(path) {
        Ok(meta) => match file_kind(&meta) {
            Some(kind @ ("a directory" | "a socket")) => Some(InputError::NotAFile { name, kind }),
            _ => None,
        },
        Err(e) => {
            if let Some(n) = path
                .to_str()
                .and_then(|p| p.strip_prefix("/dev/fd/"))
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            {
                return Some(InputError::NoDescriptor {
                    name,
                    fd: n.to_string(),
                });
            }
            Some(InputError::Open { name, source: e })
        }
    }
}

/// Open the input file `path` (not `-`) for reading and note it as an input
/// ([`crate::output::note_input_file`]); errors name the file and say what it is when it is
/// not one ([`unreadable_input`]).
pub fn open_file(path: &Path) -> Result<File, InputError> {
    if let Some(e) = unreadable_input(path) {
        return Err(e);
    }
    let f = File::open(path).map_err(|e| InputError::Open {
        name: path.display().to_string(),
        source: e,
    })?;
    crate::output::note_input_file(&f, path);
    Ok(f)
}

/// Open `path` for reading, `-` meaning stdin; errors name the file. gzip and zstd content
/// (by magic bytes) is decompressed on the fly ([`compressed::decoding_reader`]).
pub fn open_input(path: &Path) -> Result<Box<dyn BufRead + Send>, InputError> {
    let raw: Box<dyn BufRead + Send> = if path == Path::new("-") {
        Box::new(BufReader::with_capacity(1 << 20, io::stdin()))
    } else {
        let f = open_file(path)?;
        Box::new(BufReader::with_capacity(1 << 20, f))
    };
    let (reader, _) =
        compressed::decoding_reader(raw).map_err(
            |e| match compressed::UnsupportedCompression::of(&e) {
                Some(u) => InputError::UnsupportedCompression {
                    name: display_name(path),
                    source: u.clone(),
                },
                None => InputError::Read {
                    name: display_name(path),
                    source: e,
                },
            },
        )?;
    Ok(reader)
}

/// Read the whole of `path` (`-` = stdin) into memory, decompressing gzip/zstd content;
/// errors name the file.
pub fn read_input(path: &Path) -> Result<Vec<u8>, InputError> {
    let raw = read_raw(path)?;
    decode_input(raw, path)
}

/// [`compressed::decode_bytes`] of the content of `path`, with its error:
/// `NAME: cannot decompress: ...`.
pub fn decode_input(bytes: Vec<u8>, path: &Path) -> Result<Vec<u8>, InputError> {
    compressed::decode_bytes(bytes).map_err(|e| match compressed::UnsupportedCompression::of(&e) {
        Some(u) => InputError::UnsupportedCompression {
            name: display_name(path),
            source: u.clone(),
        },
        None => InputError::Decompress {
            name: display_name(path),
            source: e,
        },
    })
}

fn read_raw(path: &Path) -> Result<Vec<u8>, InputError> {
    let mut buf = Vec::new();
    if path == Path::new("-") {
        io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| InputError::Read {
                name: "<stdin>".to_string(),
                source: e,
            })?;
    } else {
        open_file(path)?
            .read_to_end(&mut buf)
            .map_err(|e| InputError::Read {
                name: path.display().to_string(),
                source: e,
            })?;
    }
    Ok(buf)
}

/// Read `reader` in chunks of about `chunk` bytes, each cut after its last `\n` (the rest
/// is carried into the next; a line longer than a chunk makes that chunk longer), sending
/// them to `full`; emptied buffers come back on `free` and are reused. Runs on its own
/// thread so that reading overlaps evaluation. Stops early, without error, when the
/// receiving side has gone (it stopped at a bad line). Lines end at `\n` only.
///
/// # Errors
/// The reader's error.
pub fn read_line_chunks(
    reader: &mut dyn Read,
    chunk: usize,
    full: &std::sync::mpsc::SyncSender<Vec<u8>>,
    free: &std::sync::mpsc::Receiver<Vec<u8>>,
) -> io::Result<()> {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        // At most three buffers exist (one being read, one queued, one evaluated), each
        // allocated once at its full size: fresh memory is expensive (page faults).
        let mut buf = free
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(chunk + carry.len()));
        buf.clear();
        buf.append(&mut carry);
        // Read on into the same buffer until a line ends in the new bytes (a line longer
        // than a chunk grows this buffer, amortised; it is never copied again).
        let eof = loop {
            let start = buf.len();
            // Capacity for a whole chunk, so `read_to_end` does not zero-fill or probe.
            buf.reserve(chunk);
            let got = reader.take(chunk as u64).read_to_end(&mut buf)?;
            if got < chunk {
                break true;
            }
            // Split lines on \n only (the JSONL producers escape U+2028/U+2029).
            if let Some(p) = buf[start..].iter().rposition(|&b| b == b'\n') {
                carry.extend_from_slice(&buf[start + p + 1..]);
                buf.truncate(start + p + 1);
                break false;
            }
        };
        if full.send(buf).is_err() || eof {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_xz_or_bzip2_input_says_so_in_every_read_path() {
        let dir = std::env::temp_dir().join(format!("routeval-io-unsup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("run.xz");
        std::fs::write(&p, [0xfd, b'7', b'z', b'X', b'Z', 0x00, 0x00, 0x04, 0xe6]).unwrap();
        let want = format!(
            "{}: xz-compressed input is not supported (routeval reads gzip and zstd): decompress it first (e.g. `xz -dc FILE | routeval ... -`)",
            p.display()
        );
        assert_eq!(
            open_input(&p).err().map(|e| e.to_string()),
            Some(want.clone())
        );
        assert_eq!(read_input(&p).err().map(|e| e.to_string()), Some(want));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn messages_say_what_a_path_is() {
        let dir = std::env::temp_dir();
        assert_eq!(
            unreadable_input(&dir).map(|e| e.to_string()),
            Some(format!("{}: is a directory, not a file", dir.display()))
        );
        let e = unreadable_input(Path::new("/dev/fd/987654")).unwrap();
        assert!(
            e.to_string()
                .starts_with("/dev/fd/987654: no file descriptor 987654 is open")
        );
        let e = open_file(Path::new("/nonexistent/x"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/nonexistent/x: cannot open: "), "{e}");
        assert_eq!(display_name(Path::new("-")), "<stdin>");
        let e = decode_input(vec![0x1f, 0x8b, 0, 0], Path::new("-")).unwrap_err();
        assert!(
            e.to_string().starts_with("<stdin>: cannot decompress: "),
            "{e}"
        );
    }
}
