//! Read-only memory maps of whole-file inputs: the one module of the workspace (outside the
//! Python package's CPython scans) with `unsafe` code, a single block under its SAFETY note.
//!
//! On the benchmark VM reading a file into a fresh buffer costs about 0.5 ms per MB in page
//! faults and zero-filling alone, more than parsing it; a map of a file in the page cache
//! costs a fraction of that (a 136 MB run: 0.2 s of CPU to copy, 0.02 s to map). Used by the
//! CLI's `rag` and `filter` ([`map_file`]) and by the Python package's `evaluate_files`
//! ([`file_bytes`]).

#![allow(unsafe_code)] // `map_regular`, the one place files are mapped; see its SAFETY note

use crate::compressed::{self, Compression};
use std::fs::File;
use std::path::Path;

/// The bytes of a whole-file input: a read-only map of a regular file, or bytes in memory.
pub enum InputBytes {
    /// The file itself, mapped.
    Mapped(memmap2::Mmap),
    /// Bytes in memory: decompressed content (gzip/zstd cannot be used in place), or a file
    /// that was read rather than mapped ([`file_bytes`]).
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

/// Map the regular file `file` read-only, or `None`: it is not a regular file, it is empty,
/// or the OS refused (callers then read it instead). No decompression.
pub fn map_regular(file: &File) -> Option<memmap2::Mmap> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() == 0 {
        return None;
    }
    // SAFETY: the map is read-only and private to this process, and only its bytes are
    // read. What memory-mapping cannot rule out is another process changing the file while
    // it is read: a truncation can stop the process with SIGBUS (as it would any mmap
    // reader, e.g. ripgrep), an in-place rewrite can change what is read. Evaluating a file
    // while it is rewritten gives no meaningful result either way.
    unsafe { memmap2::Mmap::map(file) }.ok()
}

/// Map the regular file `file` read-only into memory, or `None` (it is not a regular file,
/// it is empty, or the OS refused): callers then read it instead.
///
/// A gzip or zstd file (by magic bytes, [`Compression::sniff`]) is decompressed into memory
/// instead; if that fails, `None` too, and the caller's read path reports the error.
pub fn map_file(file: &File) -> Option<InputBytes> {
    let map = map_regular(file)?;
    match Compression::sniff(&map) {
        Compression::None => Some(InputBytes::Mapped(map)),
        c => compressed::decode_slice(&map, c)
            .ok()
            .map(InputBytes::Decoded),
    }
}

/// Open `path` and map it when it is a non-empty regular file, else read it whole (stdin-like
/// and special files, empty files, or a map the OS refused). No decompression. Errors are
/// the OS's (opening or reading).
pub fn file_bytes(path: &Path) -> std::io::Result<InputBytes> {
    let file = File::open(path)?;
    if let Some(m) = map_regular(&file) {
        return Ok(InputBytes::Mapped(m));
    }
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut &file, &mut buf)?;
    Ok(InputBytes::Decoded(buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn maps_regular_files_and_reads_the_rest() {
        let dir = std::env::temp_dir().join(format!("routeval-io-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.txt");
        std::fs::File::create(&p)
            .unwrap()
            .write_all(b"q1 0 d1 1\n")
            .unwrap();
        let f = File::open(&p).unwrap();
        assert!(
            matches!(map_file(&f), Some(InputBytes::Mapped(ref m)) if &m[..] == b"q1 0 d1 1\n")
        );
        assert!(matches!(file_bytes(&p).unwrap(), InputBytes::Mapped(_)));
        let e = dir.join("empty");
        std::fs::File::create(&e).unwrap();
        assert!(map_file(&File::open(&e).unwrap()).is_none());
        assert!(matches!(file_bytes(&e).unwrap(), InputBytes::Decoded(ref v) if v.is_empty()));
        assert!(file_bytes(&dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
