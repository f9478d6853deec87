//! The public CommonRouterBench bank as data: the registry `data/crb/sources.json`
//! (`question_bank.jsonl` and `manifest.json` of CommonstackAI/LLMRouterBench at a pinned
//! commit), fetching it into the cache (resumable, atomic, checked downloads through
//! [`crate::download::Downloader`], or a copy from a local directory), and locating the cached
//! copy for `routeval crb eval` without `--bank`.
//!
//! Cache layout: `<crb cache>/<registry dir>/{question_bank.jsonl, manifest.json, source.json}`;
//! `source.json` (written last, atomically) records where each file came from, its size and
//! hashes, and whether it matched the registry. Downloads are staged in `.download/` (the
//! downloader's `.part` files live there, so an interrupted transfer resumes) and moved into
//! place only after their checks passed.

use crate::download::{DownloadError, Downloader, NetFailure, blake3_file, write_atomic};
use serde::{Deserialize, Serialize};
use sha1::Digest as _;
use std::path::{Path, PathBuf};

/// The registry text (`data/crb/sources.json`), embedded.
pub const SOURCES_JSON: &str = include_str!("../../../../data/crb/sources.json");

/// The record file written beside an installed bank.
pub const RECORD: &str = "source.json";

/// What a registry file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileRole {
    /// The question bank (JSONL).
    Bank,
    /// The manifest (`sources.<benchmark>.line_count`).
    Manifest,
}

/// One file of the registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistryFile {
    /// Bank or manifest.
    pub role: FileRole,
    /// File name in the cache and in a `--from` directory.
    pub name: String,
    /// Path inside the upstream repository.
    pub path: String,
    /// Download URLs, tried in order (the raw file URL first, then mirrors).
    pub urls: Vec<String>,
    /// The git object id (SHA-1 of `blob <len>\0<bytes>`) in the upstream tree, if known.
    #[serde(default)]
    pub git_blob_sha1: Option<String>,
    /// sha256 (hex) of a verified copy, or `"unverified"`.
    pub sha256: String,
    /// blake3 (hex) of a verified copy, or `"unverified"`.
    pub blake3: String,
    /// Size in bytes of a verified copy, if known.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// Provenance of the hashes.
    #[serde(default)]
    pub note: String,
}

/// `data/crb/sources.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registry {
    /// Schema version (1).
    pub schema: u32,
    /// What the registry is.
    #[serde(default)]
    pub about: String,
    /// Short name (`commonrouterbench`).
    pub name: String,
    /// Upstream repository (`owner/name` on GitHub).
    pub repo: String,
    /// Upstream commit (40 hex digits).
    pub commit: String,
    /// Licence of the files.
    pub license: String,
    /// Directory name inside the CRB cache.
    pub dir: String,
    /// The bank and the manifest.
    pub files: Vec<RegistryFile>,
}

/// A registry, fetch or install failure.
#[derive(Debug, thiserror::Error)]
pub enum CrbDataError {
    /// The registry JSON is malformed.
    #[error("data/crb/sources.json: {0}")]
    Registry(String),
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A download failed.
    #[error(transparent)]
    Download(#[from] DownloadError),
    /// Every URL of a file failed: each with its failure, in the order tried.
    #[error("{name}: all {} URLs failed: {}", .errors.len(), list_failures(.errors))]
    AllUrlsFailed {
        /// The registry file.
        name: String,
        /// One failure per URL tried (each names its URL).
        errors: Vec<DownloadError>,
    },
    /// A file's bytes are not the pinned ones (the download was deleted).
    #[error("{what}: {hash} mismatch: expected {expected}, got {got}")]
    HashMismatch {
        /// The URL or path.
        what: String,
        /// Which hash (`blake3`, `sha256`, `git blob sha1`).
        hash: &'static str,
        /// The registry's value.
        expected: String,
        /// What the bytes give.
        got: String,
    },
    /// A `--from` directory lacks a file.
    #[error("{0}: not found (a --from directory must hold question_bank.jsonl and manifest.json)")]
    NotInDir(PathBuf),
    /// The install record is malformed.
    #[error("{path}: {message}")]
    Record {
        /// The record file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// `1) e1; 2) e2; ...` (each error names its URL).
fn list_failures(errors: &[DownloadError]) -> String {
    errors
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{}) {e}", i + 1))
        .collect::<Vec<_>>()
        .join("; ")
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CrbDataError + '_ {
    move |source| CrbDataError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A hash string of the registry: hex, or `"unverified"` (= `None`).
fn verified(h: &str) -> Option<&str> {
    (!h.is_empty() && h != "unverified").then_some(h)
}

impl Registry {
    /// The embedded registry.
    pub fn load() -> Result<Registry, CrbDataError> {
        Registry::from_json(SOURCES_JSON)
    }

    /// Parse a registry (tests build their own).
    pub fn from_json(text: &str) -> Result<Registry, CrbDataError> {
        let r: Registry =
            serde_json::from_str(text).map_err(|e| CrbDataError::Registry(e.to_string()))?;
        for role in [FileRole::Bank, FileRole::Manifest] {
            if r.files.iter().filter(|f| f.role == role).count() != 1 {
                return Err(CrbDataError::Registry(format!(
                    "needs exactly one {role:?} file"
                )));
            }
        }
        Ok(r)
    }

    /// The file of `role`.
    pub fn file(&self, role: FileRole) -> &RegistryFile {
        // `from_json` checked there is exactly one of each.
        self.files
            .iter()
            .find(|f| f.role == role)
            .unwrap_or(&self.files[0])
    }

    /// `owner/name@<12 hex digits>`, for headers and messages.
    pub fn label(&self) -> String {
        format!(
            "{}@{}",
            self.repo,
            &self.commit[..self.commit.len().min(12)]
        )
    }

    /// The install directory inside the CRB cache directory.
    pub fn install_dir(&self, crb_cache: &Path) -> PathBuf {
        crb_cache.join(&self.dir)
    }
}

/// Size and hashes of a file's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileHashes {
    /// Size in bytes.
    pub bytes: u64,
    /// blake3 (hex).
    pub blake3: String,
    /// sha256 (hex).
    pub sha256: String,
    /// git blob id (hex SHA-1 of `blob <len>\0<bytes>`).
    pub git_blob_sha1: String,
}

impl FileHashes {
    /// Hash `bytes`.
    pub fn of(bytes: &[u8]) -> FileHashes {
        let mut g = sha1::Sha1::new();
        g.update(format!("blob {}\0", bytes.len()).as_bytes());
        g.update(bytes);
        FileHashes {
            bytes: bytes.len() as u64,
            blake3: blake3::hash(bytes).to_hex().to_string(),
            sha256: hex(&sha2::Sha256::digest(bytes)),
            git_blob_sha1: hex(&g.finalize()),
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// How a file compares with its registry entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every recorded hash matches (at least one was recorded).
    Verified,
    /// The registry records no hash for this file.
    Unverified,
    /// A recorded hash differs: `(hash name, expected, got)`.
    Mismatch(&'static str, String, String),
}

impl RegistryFile {
    /// Compare `h` with the recorded hashes (blake3, sha256, git blob id, size).
    pub fn verify(&self, h: &FileHashes) -> Verdict {
        let mut any = false;
        for (name, want, got) in [
            ("blake3", verified(&self.blake3), &h.blake3),
            ("sha256", verified(&self.sha256), &h.sha256),
            (
                "git blob sha1",
                self.git_blob_sha1.as_deref().and_then(verified),
                &h.git_blob_sha1,
            ),
        ] {
            if let Some(want) = want {
                any = true;
                if !want.eq_ignore_ascii_case(got) {
                    return Verdict::Mismatch(name, want.to_string(), got.clone());
                }
            }
        }
        if let Some(n) = self.bytes.filter(|&n| n != h.bytes) {
            return Verdict::Mismatch("size", n.to_string(), h.bytes.to_string());
        }
        if any {
            Verdict::Verified
        } else {
            Verdict::Unverified
        }
    }
}

/// One installed file, as `source.json` records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledFile {
    /// Bank or manifest.
    pub role: FileRole,
    /// File name in the install directory.
    pub name: String,
    /// Where it came from (URL or local path).
    pub origin: String,
    /// Whether it matched the registry's recorded hashes (`false`: the registry records none,
    /// or a `--from` copy differs from the pinned file).
    pub verified: bool,
    /// Why it is not verified (empty when verified).
    #[serde(default)]
    pub remark: String,
    /// Size and hashes.
    #[serde(flatten)]
    pub hashes: FileHashes,
}

/// `source.json`: what is installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallRecord {
    /// `owner/name@commit` of the registry.
    pub registry: String,
    /// The files.
    pub files: Vec<InstalledFile>,
}

/// Where to get the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The registry's URLs in order; with `Some(base)`, `{base}/{upstream path}` instead (a
    /// mirror of the repository's tree, or a test server).
    Urls(Option<String>),
    /// A local directory holding `question_bank.jsonl` and `manifest.json` (also accepted:
    /// `DIR/data/<file>`, a checkout of the repository).
    Dir(PathBuf),
}

/// The outcome of fetching one file.
#[derive(Debug)]
pub struct FileOutcome {
    /// The registry file.
    pub name: String,
    /// Installed (with its record) or why not.
    pub result: Result<InstalledFile, CrbDataError>,
    /// Whether the network failed for every URL (the offline routes then help).
    pub network_failed: bool,
    /// The network failures of the URLs tried (empty when the file was installed).
    pub net_failures: Vec<NetFailure>,
    /// Whether it was already installed and unchanged (no transfer).
    pub cached: bool,
}

/// The outcome of [`fetch`].
#[derive(Debug)]
pub struct FetchOutcome {
    /// The install directory.
    pub dir: PathBuf,
    /// One per registry file, in registry order.
    pub files: Vec<FileOutcome>,
    /// The installed bank, when every file is in place.
    pub installed: Option<PublicBank>,
}

/// Fetch the registry's files into `install_dir` from `source` and write `source.json`.
///
/// Downloads: each URL in order until one gives bytes that pass the checks (a hash mismatch
/// deletes the download and is reported, not retried from the next URL); resumable, atomic.
/// A `--from` copy whose hashes differ from a recorded one is installed *unverified*, with the
/// difference in its remark (the user chose it), never silently.
pub fn fetch(
    registry: &Registry,
    install_dir: &Path,
    source: &Source,
    downloader: &Downloader,
) -> Result<FetchOutcome, CrbDataError> {
    std::fs::create_dir_all(install_dir).map_err(io_err(install_dir))?;
    let previous = read_record(install_dir).ok().flatten();
    let mut files = Vec::new();
    for f in &registry.files {
        let dest = install_dir.join(&f.name);
        let mut out = FileOutcome {
            name: f.name.clone(),
            result: Err(CrbDataError::NotInDir(dest.clone())),
            network_failed: false,
            net_failures: Vec::new(),
            cached: false,
        };
        // Already installed from the same kind of source and unchanged: keep it.
        if let (Source::Urls(_), Some(prev)) = (source, &previous)
            && let Some(p) = prev.files.iter().find(|p| p.name == f.name && p.verified)
            && blake3_file(&dest).is_ok_and(|h| h == p.hashes.blake3)
        {
            out.result = Ok(p.clone());
            out.cached = true;
            files.push(out);
            continue;
        }
        out.result = match source {
            Source::Dir(dir) => install_from_dir(f, dir, &dest),
            Source::Urls(base) => {
                let urls: Vec<String> = match base {
                    Some(b) => vec![format!("{}/{}", b.trim_end_matches('/'), f.path)],
                    None => f.urls.clone(),
                };
                let (r, net, failures) = download(f, &urls, install_dir, &dest, downloader);
                out.network_failed = net;
                out.net_failures = failures;
                r
            }
        };
        files.push(out);
    }
    let installed_files: Vec<InstalledFile> = files
        .iter()
        .filter_map(|o| o.result.as_ref().ok().cloned())
        .collect();
    let installed = if installed_files.len() == registry.files.len() {
        let record = InstallRecord {
            registry: format!("{}@{}", registry.repo, registry.commit),
            files: installed_files,
        };
        let mut text = serde_json::to_string_pretty(&record).unwrap_or_default();
        text.push('\n');
        write_atomic(&install_dir.join(RECORD), text.as_bytes())?;
        locate(registry, install_dir)?
    } else {
        None
    };
    Ok(FetchOutcome {
        dir: install_dir.to_path_buf(),
        files,
        installed,
    })
}

fn install_from_dir(
    f: &RegistryFile,
    dir: &Path,
    dest: &Path,
) -> Result<InstalledFile, CrbDataError> {
    let candidates = [dir.join(&f.name), dir.join(&f.path)];
    let Some(src) = candidates.iter().find(|p| p.is_file()) else {
        return Err(CrbDataError::NotInDir(candidates[0].clone()));
    };
    let bytes = std::fs::read(src).map_err(io_err(src))?;
    let hashes = FileHashes::of(&bytes);
    let (verified, remark) = match f.verify(&hashes) {
        Verdict::Verified => (true, String::new()),
        Verdict::Unverified => (
            false,
            "the registry records no hash for this file yet".to_string(),
        ),
        Verdict::Mismatch(h, want, got) => (
            false,
            format!(
                "not the pinned upstream file ({h} {got}, pinned {want}); installed as a local copy"
            ),
        ),
    };
    write_atomic(dest, &bytes)?;
    Ok(InstalledFile {
        role: f.role,
        name: f.name.clone(),
        origin: src.display().to_string(),
        verified,
        remark,
        hashes,
    })
}

/// Try `urls` in order; `(result, every failure was a network failure, the network
/// failures)`. When every URL fails, the error lists each URL with its failure.
fn download(
    f: &RegistryFile,
    urls: &[String],
    install_dir: &Path,
    dest: &Path,
    downloader: &Downloader,
) -> (Result<InstalledFile, CrbDataError>, bool, Vec<NetFailure>) {
    // What is in the way of the installed file is refused before any transfer.
    if let Err(e) = crate::download::check_replaceable(dest) {
        return (Err(io_err(dest)(e)), false, Vec::new());
    }
    let staging = install_dir.join(".download").join(&f.name);
    let mut errors: Vec<DownloadError> = Vec::new();
    let mut all_network = !urls.is_empty();
    for url in urls {
        // The pinned size (when recorded) is the download's cap.
        let got = match downloader.fetch_sized(url, &staging, verified(&f.blake3), f.bytes) {
            Ok(d) => d,
            Err(e) => {
                all_network &= e.net_failure().is_some();
                let stop = matches!(e, DownloadError::ChecksumMismatch { .. });
                errors.push(e);
                if stop {
                    break;
                }
                continue;
            }
        };
        let bytes = match std::fs::read(&got.path) {
            Ok(b) => b,
            Err(e) => return (Err(io_err(&got.path)(e)), false, Vec::new()),
        };
        let hashes = FileHashes::of(&bytes);
        let verdict = f.verify(&hashes);
        if let Verdict::Mismatch(hash, expected, got_h) = verdict {
            let _ = std::fs::remove_file(&staging);
            return (
                Err(CrbDataError::HashMismatch {
                    what: url.clone(),
                    hash,
                    expected,
                    got: got_h,
                }),
                false,
                Vec::new(),
            );
        }
        if let Err(e) = crate::download::rename_into_place(&staging, dest) {
            return (Err(e.into()), false, Vec::new());
        }
        let verified = verdict == Verdict::Verified;
        return (
            Ok(InstalledFile {
                role: f.role,
                name: f.name.clone(),
                origin: url.clone(),
                verified,
                remark: if verified {
                    String::new()
                } else {
                    "the registry records no hash for this file yet".into()
                },
                hashes,
            }),
            false,
            Vec::new(),
        );
    }
    let failures: Vec<NetFailure> = errors.iter().filter_map(|e| e.net_failure()).collect();
    let err = match errors.len() {
        0 => CrbDataError::Registry(format!("{}: no URL", f.name)),
        1 => CrbDataError::Download(errors.remove(0)),
        _ => CrbDataError::AllUrlsFailed {
            name: f.name.clone(),
            errors,
        },
    };
    (Err(err), all_network, failures)
}

/// An installed public bank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicBank {
    /// The install directory.
    pub dir: PathBuf,
    /// `question_bank.jsonl`.
    pub bank: PathBuf,
    /// `manifest.json`.
    pub manifest: PathBuf,
    /// `source.json`.
    pub record: InstallRecord,
    /// `owner/name@<12 hex>` of the registry.
    pub label: String,
}

impl PublicBank {
    /// Whether every file matched the registry's recorded hashes.
    pub fn verified(&self) -> bool {
        self.record.files.iter().all(|f| f.verified)
    }

    /// One line for table headers: `public bank CommonstackAI/LLMRouterBench@df000711a56b
    /// (cached: DIR)`, with `, local copy from PATH` when the bank did not come from the
    /// pinned URLs or did not match.
    pub fn describe(&self) -> String {
        let bank = self.record.files.iter().find(|f| f.role == FileRole::Bank);
        let how = match bank {
            Some(b) if b.verified => String::new(),
            Some(b) => format!(", not verified: local copy from {}", b.origin),
            None => String::new(),
        };
        format!(
            "public bank {} (cached {}{how})",
            self.label,
            self.bank.display()
        )
    }
}

fn read_record(dir: &Path) -> Result<Option<InstallRecord>, CrbDataError> {
    let p = dir.join(RECORD);
    if !p.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&p).map_err(io_err(&p))?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| CrbDataError::Record {
            path: p,
            message: e.to_string(),
        })
}

/// The installed bank in `install_dir`, `Ok(None)` when nothing (or not everything) is
/// installed there.
pub fn locate(registry: &Registry, install_dir: &Path) -> Result<Option<PublicBank>, CrbDataError> {
    let Some(record) = read_record(install_dir)? else {
        return Ok(None);
    };
    let bank = install_dir.join(&registry.file(FileRole::Bank).name);
    let manifest = install_dir.join(&registry.file(FileRole::Manifest).name);
    if !bank.is_file() || !manifest.is_file() {
        return Ok(None);
    }
    Ok(Some(PublicBank {
        dir: install_dir.to_path_buf(),
        bank,
        manifest,
        record,
        label: registry.label(),
    }))
}

/// One problem found by [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckProblem {
    /// The file.
    pub path: PathBuf,
    /// What differs.
    pub problem: String,
}

/// Verify an installed bank against its `source.json` (present, same size and blake3).
pub fn check(bank: &PublicBank) -> Vec<CheckProblem> {
    let mut out = Vec::new();
    for f in &bank.record.files {
        let p = bank.dir.join(&f.name);
        match blake3_file(&p) {
            Ok(h) if h == f.hashes.blake3 => {}
            Ok(h) => out.push(CheckProblem {
                path: p,
                problem: format!("blake3 {h} != recorded {}", f.hashes.blake3),
            }),
            Err(e) => out.push(CheckProblem {
                path: p,
                problem: e.to_string(),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_registry_parses_and_pins_the_commit() {
        let r = Registry::load().unwrap();
        assert_eq!(r.commit.len(), 40);
        assert_eq!(r.label(), "CommonstackAI/LLMRouterBench@df000711a56b");
        let bank = r.file(FileRole::Bank);
        assert!(bank.urls[0].starts_with("https://raw.githubusercontent.com/"));
        assert!(bank.urls.iter().all(|u| u.contains(&r.commit)));
        assert_eq!(bank.blake3, "unverified");
    }

    #[test]
    fn git_blob_id_matches_git() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            FileHashes::of(b"hello\n").git_blob_sha1,
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn verify_uses_every_recorded_hash() {
        let r = Registry::load().unwrap();
        let m = r.file(FileRole::Manifest);
        let h = FileHashes::of(b"{}");
        assert!(matches!(m.verify(&h), Verdict::Mismatch(..)));
        let mut unpinned = m.clone();
        unpinned.blake3 = "unverified".into();
        unpinned.sha256 = "unverified".into();
        unpinned.git_blob_sha1 = None;
        unpinned.bytes = None;
        assert_eq!(unpinned.verify(&h), Verdict::Unverified);
    }
}
