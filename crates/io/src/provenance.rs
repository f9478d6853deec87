//! The IO half of a report's provenance block (the front ends' shared edge): the size and
//! blake3 digest of each input file, and the report date (`$SOURCE_DATE_EPOCH` or the clock).
//! The CLI's `--html`/`--format md` and the Python package's `to_html()`/`to_markdown()` both
//! use it, so a report written from either names its inputs the same way.

use std::path::Path;

/// Size and digest of one input file, as a report's provenance table shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDescription {
    /// Size in bytes, `None` when the file cannot be stat'ed.
    pub bytes: Option<u64>,
    /// blake3 of the content (64 lowercase hex digits), `None` when it cannot be read.
    pub blake3: Option<String>,
}

/// Describe the file at `path`: its size and the blake3 of its content, streamed (the file is
/// not held in memory). Both `None` when it cannot be opened or read (a report is still
/// written; the table shows `-`).
pub fn describe_file(path: &Path) -> FileDescription {
    let hashed = std::fs::File::open(path).and_then(|f| {
        let mut h = blake3::Hasher::new();
        h.update_reader(f)?;
        Ok(h)
    });
    match hashed {
        Ok(h) => FileDescription {
            bytes: std::fs::metadata(path).ok().map(|m| m.len()),
            blake3: Some(h.finalize().to_hex().to_string()),
        },
        Err(_) => FileDescription {
            bytes: None,
            blake3: None,
        },
    }
}

/// The report date in seconds since the Unix epoch: `$SOURCE_DATE_EPOCH` when it is set to an
/// integer (reproducible reports, reproducible-builds.org's convention), else the system
/// clock (0 if the clock is before 1970).
pub fn report_epoch_seconds() -> i64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_described_by_size_and_blake3() {
        let p = std::env::temp_dir().join(format!("routeval-prov-{}", std::process::id()));
        std::fs::write(&p, b"abc").unwrap();
        let d = describe_file(&p);
        assert_eq!(d.bytes, Some(3));
        assert_eq!(
            d.blake3.as_deref(),
            Some("6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85")
        );
        std::fs::remove_file(&p).unwrap();
        assert_eq!(
            describe_file(&p),
            FileDescription {
                bytes: None,
                blake3: None
            }
        );
    }
}
