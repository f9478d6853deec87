//! Downloads of pinned files (Hugging Face hub `resolve/<revision>/<file>` URLs, package
//! registry tarballs) into a cache directory: resumable with HTTP `Range`, blake3-checked,
//! written atomically.
//!
//! Invariant: a file at its cache path is always complete (and, when a hash is known,
//! verified). Bytes in flight go to `<name>.part` next to it; a failed or interrupted transfer
//! leaves at most that `.part` file (resumed by the next run with `Range: bytes=N-`), and a
//! checksum mismatch deletes it. The final rename is atomic on one filesystem.

use routeval_core::SharedProgress;
#[cfg(feature = "http")]
use std::fs::OpenOptions;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
#[cfg(feature = "http")]
use std::time::Duration;

/// A download failure.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    /// The server has no such file (HTTP 404).
    #[error("{url}: not found (HTTP 404)")]
    NotFound {
        /// The URL.
        url: String,
    },
    /// The server refused access (HTTP 401/403), e.g. a gated dataset without a token.
    #[error("{url}: access denied (HTTP {status}); gated files need a token (set HF_TOKEN)")]
    Unauthorized {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// Any other HTTP status.
    #[error("{url}: HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The connection failed or broke off.
    #[error("{url}: {message}")]
    Network {
        /// The URL.
        url: String,
        /// What happened.
        message: String,
    },
    /// The body ended before `Content-Length` bytes (the `.part` file is kept for a resume).
    #[error("{url}: truncated body: got {got} of {expected} bytes (kept for resume)")]
    Truncated {
        /// The URL.
        url: String,
        /// Bytes received in total.
        got: u64,
        /// Bytes announced.
        expected: u64,
    },
    /// The file's blake3 is not the pinned one (the partial file was deleted).
    #[error("{url}: blake3 mismatch: expected {expected}, got {got}")]
    ChecksumMismatch {
        /// The URL.
        url: String,
        /// The pinned hash.
        expected: String,
        /// The downloaded file's hash.
        got: String,
    },
    /// A local file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DownloadError + '_ {
    move |source| DownloadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What a download did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    /// The complete file.
    pub path: PathBuf,
    /// Its blake3 (hex).
    pub blake3: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Whether it was already in the cache (no request made).
    pub cached: bool,
    /// Bytes resumed from an earlier `.part` file.
    pub resumed_from: u64,
}

/// The blake3 (hex) of a file.
pub fn blake3_file(path: &Path) -> Result<String, DownloadError> {
    let mut f = File::open(path).map_err(io_err(path))?;
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(io_err(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().to_hex().to_string())
}

/// The `.part` path used while downloading `dest`.
pub fn part_path(dest: &Path) -> PathBuf {
    let mut name = dest
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".part");
    dest.with_file_name(name)
}

/// Write `bytes` to `dest` atomically (temp file in the same directory, then rename).
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> Result<(), DownloadError> {
    if let Some(dir) = dest.parent() {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let mut name = dest
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".tmp{}", std::process::id()));
    let tmp = dest.with_file_name(name);
    let res = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, dest)
    })();
    if let Err(e) = res {
        let _ = fs::remove_file(&tmp);
        return Err(DownloadError::Io {
            path: dest.to_path_buf(),
            source: e,
        });
    }
    Ok(())
}

/// A blocking downloader (`ureq`, feature `http`, on by default; without it only cached files
/// are served and every transfer fails with [`DownloadError::Network`]).
#[derive(Debug, Clone)]
pub struct Downloader {
    #[cfg(feature = "http")]
    agent: ureq::Agent,
    token: Option<String>,
    progress: SharedProgress,
}

impl Default for Downloader {
    fn default() -> Self {
        Self::new(None)
    }
}

impl Downloader {
    /// A downloader sending `Authorization: Bearer <token>` when a token is given.
    pub fn new(token: Option<String>) -> Self {
        #[cfg(feature = "http")]
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(30)))
            .build()
            .into();
        Downloader {
            #[cfg(feature = "http")]
            agent,
            token,
            progress: SharedProgress::default(),
        }
    }

    /// This downloader reporting each transfer to `progress`: a stage
    /// `"downloading <file name>"` in bytes (total from `Content-Length` when the server sends
    /// one), advanced as the body arrives.
    #[must_use]
    pub fn with_progress(mut self, progress: SharedProgress) -> Self {
        self.progress = progress;
        self
    }

    /// Download `url` to `dest` unless a complete copy is there. With `expected` (blake3 hex),
    /// a cached file or a fresh download must match it. A `.part` file from an interrupted
    /// run is resumed with `Range`.
    pub fn fetch(
        &self,
        url: &str,
        dest: &Path,
        expected: Option<&str>,
    ) -> Result<Downloaded, DownloadError> {
        if dest.is_file() {
            let got = blake3_file(dest)?;
            match expected {
                Some(want) if want != got => {
                    // A stale or corrupt cache entry: fetch again.
                    fs::remove_file(dest).map_err(io_err(dest))?;
                }
                _ => {
                    let bytes = fs::metadata(dest).map_err(io_err(dest))?.len();
                    return Ok(Downloaded {
                        path: dest.to_path_buf(),
                        blake3: got,
                        bytes,
                        cached: true,
                        resumed_from: 0,
                    });
                }
            }
        }
        if let Some(dir) = dest.parent() {
            fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        let part = part_path(dest);
        let have = fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        let resumed_from = self.transfer(url, &part, have)?;
        let hash = blake3_file(&part)?;
        if let Some(want) = expected.filter(|&want| want != hash) {
            let _ = fs::remove_file(&part);
            return Err(DownloadError::ChecksumMismatch {
                url: url.to_string(),
                expected: want.to_string(),
                got: hash,
            });
        }
        fs::rename(&part, dest).map_err(io_err(dest))?;
        let bytes = fs::metadata(dest).map_err(io_err(dest))?.len();
        Ok(Downloaded {
            path: dest.to_path_buf(),
            blake3: hash,
            bytes,
            cached: false,
            resumed_from,
        })
    }

    /// GET `url` into `part` (appending from byte `have` when the server honours `Range`);
    /// returns the offset the transfer resumed from.
    #[cfg(feature = "http")]
    fn transfer(&self, url: &str, part: &Path, have: u64) -> Result<u64, DownloadError> {
        let mut req = self.agent.get(url);
        if have > 0 {
            req = req.header("Range", format!("bytes={have}-"));
        }
        if let Some(t) = &self.token {
            req = req.header("Authorization", format!("Bearer {t}"));
        }
        let net = |e: &dyn std::fmt::Display| DownloadError::Network {
            url: url.to_string(),
            message: e.to_string(),
        };
        let resp = req.call().map_err(|e| net(&e))?;
        let status = resp.status().as_u16();
        let (append, resumed_from) = match status {
            200 => (false, 0),
            206 => (true, have),
            416 if have > 0 => (true, have),
            404 => {
                return Err(DownloadError::NotFound {
                    url: url.to_string(),
                });
            }
            401 | 403 => {
                return Err(DownloadError::Unauthorized {
                    url: url.to_string(),
                    status,
                });
            }
            s => {
                return Err(DownloadError::Status {
                    url: url.to_string(),
                    status: s,
                });
            }
        };
        let length: Option<u64> = resp
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        if status != 416 {
            let mut f = OpenOptions::new()
                .create(true)
                .write(true)
                .append(append)
                .truncate(!append)
                .open(part)
                .map_err(io_err(part))?;
            let mut body = resp.into_body().into_reader();
            let mut buf = vec![0u8; 1 << 16];
            let mut got = 0u64;
            let file_name = url.rsplit('/').next().unwrap_or(url);
            routeval_core::Progress::stage(
                &self.progress,
                &format!("downloading {file_name}"),
                length,
                routeval_core::progress::Unit::Bytes,
            );
            let read_result: Result<(), std::io::Error> = loop {
                match body.read(&mut buf) {
                    Ok(0) => break Ok(()),
                    Ok(n) => {
                        f.write_all(&buf[..n]).map_err(io_err(part))?;
                        got += n as u64;
                        routeval_core::Progress::advance(&self.progress, n as u64);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => break Err(e),
                }
            };
            f.sync_all().map_err(io_err(part))?;
            let total = resumed_from + got;
            if let Some(len) = length.filter(|&len| got < len) {
                return Err(DownloadError::Truncated {
                    url: url.to_string(),
                    got: total,
                    expected: resumed_from + len,
                });
            }
            read_result.map_err(|e| net(&e))?;
        }
        Ok(resumed_from)
    }

    /// Without the `http` feature there is no HTTP client: every transfer fails with a
    /// [`DownloadError::Network`] saying so (cached files are still served).
    #[cfg(not(feature = "http"))]
    fn transfer(&self, url: &str, _part: &Path, _have: u64) -> Result<u64, DownloadError> {
        let _ = &self.token;
        Err(DownloadError::Network {
            url: url.to_string(),
            message: "HTTP support is not compiled in (routeval-bench-data feature `http`)".into(),
        })
    }
}
