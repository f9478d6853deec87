//! Downloads of pinned files (Hugging Face hub `resolve/<revision>/<file>` URLs, package
//! registry tarballs) into a cache directory: resumable with HTTP `Range`, blake3-checked,
//! written atomically.
//!
//! Invariant: a file at its cache path is always complete (and, when a hash is known,
//! verified). Bytes in flight go to `<name>.part` next to it; a failed or interrupted transfer
//! leaves at most that `.part` file (resumed by the next run with `Range: bytes=N-`), and a
//! checksum mismatch deletes it. The final rename is atomic on one filesystem.
//!
//! Bounded (issue 24): every transfer has a connect timeout, a read (idle) timeout and an
//! overall deadline ([`crate::net::NetOptions`]), and a size cap: the pinned size when a
//! registry records one ([`Downloader::fetch_sized`]), else [`crate::net::UNPINNED_CAP`]. A
//! body (or an announced length) over the cap aborts the transfer and deletes its `.part`; a
//! `.part` already over the cap is deleted before resuming. TLS roots are the platform's
//! ([`crate::net::agent_config`]).

use crate::net::{NetKind, NetOptions, UNPINNED_CAP};
use routeval_core::SharedProgress;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
#[cfg(feature = "http")]
use std::time::{Duration, Instant};

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
    /// The connection failed, timed out, broke off, or its TLS handshake failed.
    #[error("{url}: {message}")]
    Network {
        /// The URL.
        url: String,
        /// What happened (a certificate failure names the roots and `SSL_CERT_FILE`).
        message: String,
        /// Unreachable, timeout, TLS or other.
        kind: NetKind,
    },
    /// The body (or its announced length) is larger than the cap: the pinned size, or
    /// [`UNPINNED_CAP`]. The `.part` file was deleted.
    #[error(
        "{url}: {what} is larger than the {cap_what} of {cap} bytes; aborted, the partial file was deleted"
    )]
    TooLarge {
        /// The URL.
        url: String,
        /// `the body` or `the announced length (N bytes)`.
        what: String,
        /// The cap in bytes.
        cap: u64,
        /// `pinned size` or `cap for files of unpinned size`.
        cap_what: &'static str,
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

/// A transfer that failed on the network (not an HTTP status, not a checksum): what the
/// offline hints of `routeval data fetch` are made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetFailure {
    /// The URL.
    pub url: String,
    /// Unreachable, timeout, TLS or other.
    pub kind: NetKind,
    /// What happened (one line).
    pub message: String,
}

impl DownloadError {
    /// The network failure this is, if it is one ([`DownloadError::Network`]).
    pub fn net_failure(&self) -> Option<NetFailure> {
        match self {
            DownloadError::Network { url, message, kind } => Some(NetFailure {
                url: url.clone(),
                kind: *kind,
                message: message.clone(),
            }),
            _ => None,
        }
    }
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

/// Refuse to put a file at `path` when something other than a regular file (or a symbolic
/// link, which a rename replaces without following) is there: a FIFO, a device, a socket or a
/// directory would be replaced by a rename, and a FIFO opened for writing blocks until a reader
/// comes. Nothing there is fine.
///
/// # Errors
/// `InvalidInput` naming the kind of file found; the error of `lstat` other than "not found".
pub fn check_replaceable(path: &Path) -> std::io::Result<()> {
    check_in_the_way(path, true)
}

/// Refuse to open `path` for writing unless nothing or a regular file is there. A symbolic
/// link is refused too: opening follows it (a `.part` linked to a FIFO would block, one linked
/// to another file would overwrite it).
///
/// # Errors
/// As [`check_replaceable`].
pub fn check_writable_in_place(path: &Path) -> std::io::Result<()> {
    check_in_the_way(path, false)
}

fn check_in_the_way(path: &Path, link_ok: bool) -> std::io::Result<()> {
    let kind = match fs::symlink_metadata(path) {
        Ok(m) => m.file_type(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if kind.is_file() || (link_ok && kind.is_symlink()) {
        return Ok(());
    }
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file (a FIFO, device or socket)"
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{what} is in the way; move it or choose another directory"),
    ))
}

/// Rename `from` over `to` after [`check_replaceable`] on `to`.
///
/// # Errors
/// [`DownloadError::Io`] naming `to`.
pub fn rename_into_place(from: &Path, to: &Path) -> Result<(), DownloadError> {
    check_replaceable(to).map_err(io_err(to))?;
    fs::rename(from, to).map_err(io_err(to))
}

/// Write `bytes` to `dest` atomically: a new temporary file in the same directory (created
/// exclusively, so an existing file or link of that name is never written through), synced,
/// then renamed over `dest`. `dest` must be absent, a regular file or a symbolic link
/// ([`check_replaceable`]); the temporary file is removed on any failure.
///
/// # Errors
/// [`DownloadError::Io`] naming `dest`.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> Result<(), DownloadError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    if let Some(dir) = dest.parent() {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    check_replaceable(dest).map_err(io_err(dest))?;
    let base = dest
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    let (tmp, mut f) = loop {
        let mut name = base.clone();
        name.push(format!(
            ".tmp{}.{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = dest.with_file_name(name);
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err(dest)(e)),
        }
    };
    let res = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(io_err(dest))
        .and_then(|()| rename_into_place(&tmp, dest));
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}

/// A blocking downloader (`ureq`, feature `http`, on by default; without it only cached files
/// are served and every transfer fails with [`DownloadError::Network`]).
#[derive(Debug, Clone)]
pub struct Downloader {
    token: Option<String>,
    progress: SharedProgress,
    net: NetOptions,
}

impl Default for Downloader {
    fn default() -> Self {
        Self::new(None)
    }
}

impl Downloader {
    /// A downloader sending `Authorization: Bearer <token>` when a token is given.
    pub fn new(token: Option<String>) -> Self {
        Downloader {
            token,
            progress: SharedProgress::default(),
            net: NetOptions::default(),
        }
    }

    /// This downloader with these timeouts (connect, read, overall deadline).
    #[must_use]
    pub fn with_net(mut self, net: NetOptions) -> Self {
        self.net = net;
        self
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
    /// run is resumed with `Range`. The size cap is [`UNPINNED_CAP`]; use
    /// [`Downloader::fetch_sized`] when the size is pinned.
    pub fn fetch(
        &self,
        url: &str,
        dest: &Path,
        expected: Option<&str>,
    ) -> Result<Downloaded, DownloadError> {
        self.fetch_sized(url, dest, expected, None)
    }

    /// [`Downloader::fetch`] of a file whose size a registry pins (`size`, bytes): the size is
    /// the cap (a longer body aborts and its `.part` is deleted) and scales the default
    /// deadline. `None`: [`UNPINNED_CAP`].
    pub fn fetch_sized(
        &self,
        url: &str,
        dest: &Path,
        expected: Option<&str>,
        size: Option<u64>,
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
        // Before any transfer: what is in the way of the result or of its `.part`.
        check_replaceable(dest).map_err(io_err(dest))?;
        let part = part_path(dest);
        check_writable_in_place(&part).map_err(io_err(&part))?;
        let cap = size.unwrap_or(UNPINNED_CAP);
        let mut have = fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        if have > cap {
            // Left by an endless body or another file: never resumed.
            fs::remove_file(&part).map_err(io_err(&part))?;
            have = 0;
        }
        let resumed_from = self.transfer(url, &part, have, size)?;
        let hash = blake3_file(&part)?;
        if let Some(want) = expected.filter(|&want| want != hash) {
            let _ = fs::remove_file(&part);
            return Err(DownloadError::ChecksumMismatch {
                url: url.to_string(),
                expected: want.to_string(),
                got: hash,
            });
        }
        rename_into_place(&part, dest)?;
        let bytes = fs::metadata(dest).map_err(io_err(dest))?.len();
        Ok(Downloaded {
            path: dest.to_path_buf(),
            blake3: hash,
            bytes,
            cached: false,
            resumed_from,
        })
    }

    /// GET `url` into `part` (appending from byte `have` when the server honours `Range`),
    /// within the timeouts, the deadline and the cap (`size`, else [`UNPINNED_CAP`]); returns
    /// the offset the transfer resumed from.
    #[cfg(feature = "http")]
    fn transfer(
        &self,
        url: &str,
        part: &Path,
        have: u64,
        size: Option<u64>,
    ) -> Result<u64, DownloadError> {
        let cap = size.unwrap_or(UNPINNED_CAP);
        let cap_what = if size.is_some() {
            "pinned size"
        } else {
            "cap for files of unpinned size"
        };
        let too_large = |what: String| {
            let _ = fs::remove_file(part);
            DownloadError::TooLarge {
                url: url.to_string(),
                what,
                cap,
                cap_what,
            }
        };
        let start = Instant::now();
        // ureq's own overall bound: the deadline of the largest body allowed.
        let backstop = self.net.deadline_for(cap);
        let agent: ureq::Agent = crate::net::agent_config()
            .timeout_connect(Some(self.net.connect))
            .timeout_per_read(Some(self.net.read))
            .timeout_global(Some(backstop))
            .build()
            .into();
        let mut req = agent.get(url);
        if have > 0 {
            req = req.header("Range", format!("bytes={have}-"));
        }
        if let Some(t) = &self.token {
            req = req.header("Authorization", format!("Bearer {t}"));
        }
        let net = &self.net;
        let network = |kind: NetKind, message: String| DownloadError::Network {
            url: url.to_string(),
            message,
            kind,
        };
        let resp = match req.call() {
            Ok(r) => r,
            Err(e) => {
                let (kind, text) = explain(&e, net, backstop);
                return Err(network(kind, text));
            }
        };
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
        if status == 416 {
            return Ok(resumed_from);
        }
        let announced = length.map(|l| resumed_from.saturating_add(l));
        if let Some(total) = announced.filter(|&t| t > cap) {
            return Err(too_large(format!("the announced length ({total} bytes)")));
        }
        // The deadline of this body: scaled to the pinned size, else the announced one.
        let deadline = net.deadline_for(size.or(announced).unwrap_or(cap));
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
        let read_result: Result<(), (NetKind, String)> = loop {
            match body.read(&mut buf) {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    if resumed_from + got + n as u64 > cap {
                        drop(f);
                        return Err(too_large("the body".into()));
                    }
                    f.write_all(&buf[..n]).map_err(io_err(part))?;
                    got += n as u64;
                    routeval_core::Progress::advance(&self.progress, n as u64);
                    if start.elapsed() > deadline {
                        break Err((
                            NetKind::Timeout,
                            format!(
                                "overall deadline of {} s exceeded after {} bytes (raise it with --deadline SECS; the partial file is kept for resume)",
                                secs(deadline),
                                resumed_from + got
                            ),
                        ));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let (kind, text) = match crate::net::inner_ureq(&e) {
                        Some(u) => explain(u, net, backstop),
                        None => crate::net::classify_io(&e),
                    };
                    break Err((kind, text));
                }
            }
        };
        f.sync_all().map_err(io_err(part))?;
        let total = resumed_from + got;
        let timed_out = matches!(read_result, Err((NetKind::Timeout, _)));
        if let Some(len) = length.filter(|&len| got < len && !timed_out) {
            return Err(DownloadError::Truncated {
                url: url.to_string(),
                got: total,
                expected: resumed_from + len,
            });
        }
        read_result.map_err(|(kind, text)| network(kind, text))?;
        Ok(resumed_from)
    }

    /// Without the `http` feature there is no HTTP client: every transfer fails with a
    /// [`DownloadError::Network`] saying so (cached files are still served).
    #[cfg(not(feature = "http"))]
    fn transfer(
        &self,
        url: &str,
        _part: &Path,
        _have: u64,
        _size: Option<u64>,
    ) -> Result<u64, DownloadError> {
        let _ = (&self.token, &self.net);
        Err(DownloadError::Network {
            url: url.to_string(),
            message: "HTTP support is not compiled in (routeval-bench-data feature `http`)".into(),
            kind: NetKind::Other,
        })
    }
}

/// Seconds for messages (`2.5`, `30`).
#[cfg(feature = "http")]
fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

/// A `ureq` error as a kind and one line; a timeout says which one, its value and the flag that
/// sets it.
#[cfg(feature = "http")]
fn explain(e: &ureq::Error, net: &NetOptions, backstop: Duration) -> (NetKind, String) {
    use ureq::Timeout as T;
    if let ureq::Error::Timeout(t) = e {
        let text = match t {
            T::Connect | T::Resolve => format!(
                "no connection within {} s (connect timeout; --connect-timeout SECS)",
                secs(net.connect)
            ),
            T::PerRead | T::RecvResponse | T::RecvBody => format!(
                "no bytes from the server for {} s (read timeout; --read-timeout SECS)",
                secs(net.read)
            ),
            _ => format!(
                "overall deadline of {} s exceeded (--deadline SECS)",
                secs(backstop)
            ),
        };
        return (NetKind::Timeout, text);
    }
    crate::net::classify(e)
}
