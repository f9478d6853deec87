//! Read-only memory maps of whole-file inputs: the one module of the workspace (outside the
//! Python package's CPython scans) with `unsafe` code, each block (the map itself,
//! [`InputBytes::release`] and [`InputBytes::text_released`]) under its SAFETY note.
//!
//! On the benchmark VM reading a file into a fresh buffer costs about 0.5 ms per MB in page
//! faults and zero-filling alone, more than parsing it; a map of a file in the page cache
//! costs a fraction of that (a 136 MB run: 0.2 s of CPU to copy, 0.02 s to map). Used by the
//! CLI's `rag` and `filter` ([`map_file`]) and by the Python package's `evaluate_files`
//! ([`file_bytes`]).

#![allow(unsafe_code)] // `map_regular` (the one place files are mapped), `release`, `text_released`; see their SAFETY notes

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

/// The granularity of [`InputBytes::release`]: a multiple of every page size Linux uses
/// (4 KiB, 16 KiB, 64 KiB), so the ranges advised are always whole pages.
const RELEASE_GRAIN: usize = 64 << 10;

/// The piece [`InputBytes::text_released`] checks (and then releases) at a time.
const UTF8_PIECE: usize = 4 << 20;

impl InputBytes {
    /// Tell the OS that this process will not read `range` (byte offsets into the input)
    /// again soon: for a mapped file, the whole 64 KiB blocks inside `range` leave the
    /// process's resident set (its peak RSS then stays near the part being read, not the
    /// whole file). The bytes stay readable and unchanged: the page cache keeps the file,
    /// and a later read faults the pages back in. A no-op for bytes in memory, outside Unix,
    /// and for a range holding no whole block; an OS refusal is ignored (it is only advice).
    ///
    /// Returns where the release of the bytes that follow should start: the end of the last
    /// whole block released, else `range.start`. Passing it as the next call's start (with
    /// offsets growing) leaves no block behind between two calls.
    pub fn release(&self, range: std::ops::Range<usize>) -> usize {
        #[cfg(unix)]
        if let InputBytes::Mapped(m) = self {
            let start = range.start.next_multiple_of(RELEASE_GRAIN);
            let end = range.end.min(m.len()) / RELEASE_GRAIN * RELEASE_GRAIN;
            if start < end {
                // SAFETY: `m` is a read-only shared map of a file (`Mmap::map`: PROT_READ,
                // MAP_SHARED). MADV_DONTNEED on such a map only drops this process's page
                // table entries; the next read of those bytes maps the file's page-cache
                // pages again, with the same contents, so every reference into the map stays
                // valid and reads what it read before (it is a private or anonymous map whose
                // pages DONTNEED would zero, which is why memmap2 marks it unchecked). The
                // one hazard, another process rewriting the file meanwhile, is the map's own
                // (see `map_regular`).
                let _ = unsafe {
                    m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
                };
                return end;
            }
        }
        range.start
    }

    /// The input as UTF-8 text, or `None` when it is not valid UTF-8 (`simdutf8`'s check).
    /// A mapped file is checked in 4 MiB pieces on rayon's pool, each [released](Self::release)
    /// once checked, so checking a large file does not make all of it resident at once; the
    /// caller's reads fault the pages back in as it goes.
    pub fn text_released(&self) -> Option<&str> {
        use rayon::prelude::*;
        let bytes: &[u8] = self;
        if !matches!(self, InputBytes::Mapped(_)) {
            return simdutf8::basic::from_utf8(bytes).ok();
        }
        // Piece boundaries, each cut before a character's first byte, never inside a
        // character: back over at most three continuation bytes (more cannot follow a first
        // byte, and the next piece's check then fails, as the whole text's would).
        let mut cuts = vec![0];
        let mut start = 0;
        while start < bytes.len() {
            let mut end = (start + UTF8_PIECE).min(bytes.len());
            for _ in 0..3 {
                if end < bytes.len() && bytes[end] & 0xC0 == 0x80 {
                    end -= 1;
                }
            }
            cuts.push(end);
            start = end;
        }
        let valid = cuts.par_windows(2).all(|w| {
            let ok = simdutf8::basic::from_utf8(&bytes[w[0]..w[1]]).is_ok();
            self.release(w[0]..w[1]);
            ok
        });
        if !valid {
            return None;
        }
        // The blocks that straddle two pieces were released by neither.
        self.release(0..bytes.len());
        // SAFETY: every byte of `bytes` was checked above, in consecutive pieces cut at
        // character boundaries (a sequence of valid UTF-8 pieces is valid UTF-8). Releasing
        // checked pieces does not change them: a later read faults the same file pages back
        // in (see `release`); another process rewriting the file meanwhile is the map's own
        // hazard (see `map_regular`), as it was before this check existed.
        Some(unsafe { std::str::from_utf8_unchecked(bytes) })
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
    // while it is rewritten gives no meaningful result either way. (`filter` prints its
    // matching lines from the map after checking them, so for it "while it is read" lasts
    // until the output is written.)
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
        // Released bytes stay readable and unchanged.
        let big = dir.join("big.txt");
        let content: Vec<u8> = (0..(300u32 << 10)).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(&big, &content).unwrap();
        let m = file_bytes(&big).unwrap();
        assert!(matches!(m, InputBytes::Mapped(_)));
        assert_eq!(&m[..], &content[..]);
        assert_eq!(m.text_released().map(str::as_bytes), Some(&content[..]));
        assert_eq!(m.release(5..5), 5);
        assert_eq!(m.release(1000..100_000), 1000); // no whole 64 KiB block inside
        assert_eq!(m.release(1000..200_000), 196_608); // [65536, 196608) released
        assert_eq!(m.release(196_608..m.len()), 262_144); // up to the last whole block
        m.release(0..m.len());
        assert_eq!(&m[..], &content[..]);
        // Pieces are cut at character boundaries: a text of 3- and 4-byte characters (none
        // aligned to the 4 MiB piece) checks as the whole text does, and a bad byte past the
        // first piece is found.
        let wide = "日本語😀".repeat(500_000);
        let w = dir.join("wide.txt");
        std::fs::write(&w, &wide).unwrap();
        let m = file_bytes(&w).unwrap();
        assert!(matches!(m, InputBytes::Mapped(_)));
        assert_eq!(m.text_released(), Some(wide.as_str()));
        drop(m); // before the file is rewritten under the map
        let mut bad = wide.clone().into_bytes();
        bad[5 << 20] = 0xFF;
        std::fs::write(&w, &bad).unwrap();
        assert_eq!(file_bytes(&w).unwrap().text_released(), None);
        // The pieces are checked in parallel: a bad byte in the first or the last piece is
        // found as well.
        for at in [10, wide.len() - 1] {
            let mut bad = wide.clone().into_bytes();
            bad[at] = 0xFF;
            std::fs::write(&w, &bad).unwrap();
            assert_eq!(
                file_bytes(&w).unwrap().text_released(),
                None,
                "bad byte at {at}"
            );
        }
        bad.truncate((4 << 20) + 1); // ends inside a character just past the first piece
        std::fs::write(&w, &bad).unwrap();
        assert_eq!(file_bytes(&w).unwrap().text_released(), None);
        let d = InputBytes::Decoded(content.clone());
        assert_eq!(d.text_released().map(str::as_bytes), Some(&content[..]));
        assert_eq!(d.release(0..d.len()), 0);
        assert_eq!(&d[..], &content[..]);
        let e = dir.join("empty");
        std::fs::File::create(&e).unwrap();
        assert!(map_file(&File::open(&e).unwrap()).is_none());
        assert!(matches!(file_bytes(&e).unwrap(), InputBytes::Decoded(ref v) if v.is_empty()));
        assert!(file_bytes(&dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
