//! Whole-file inputs of `evaluate_files`, memory-mapped: the package's second module with
//! `unsafe` code (the same choice and the same caveat as the CLI's `common::map_file`).

#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;

/// The bytes of a file: mapped when it is a non-empty regular file, else read.
pub(crate) enum FileBytes {
    /// A read-only private map.
    Mapped(memmap2::Mmap),
    /// Read into memory (stdin-like and special files, empty files, or a failed map).
    Read(Vec<u8>),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Read(v) => v,
        }
    }
}

/// Open `path` and map it (or read it, see [`FileBytes`]). A map of a file in the page
/// cache costs a fraction of copying it out: on a small VM the copy of a 136 MB run took
/// 0.2 s of CPU (0.7 GB/s), the map 0.02 s.
pub(crate) fn file_bytes(path: &Path) -> std::io::Result<FileBytes> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > 0 {
        // SAFETY: the map is read-only and private to this process, and only its bytes are
        // read. What mapping cannot rule out is another process changing the file while it
        // is read: a truncation can stop the process with SIGBUS (as it would any mmap
        // reader, e.g. ripgrep), an in-place rewrite can change what is read. Evaluating a
        // file while it is rewritten gives no meaningful result either way.
        if let Ok(m) = unsafe { memmap2::Mmap::map(&file) } {
            return Ok(FileBytes::Mapped(m));
        }
    }
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut &file, &mut buf)?;
    Ok(FileBytes::Read(buf))
}
