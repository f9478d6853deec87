//! A built GQR-Bench on disk: one JSONL file per split (`<split>.jsonl`, rows as
//! [`ExportRow`]), side files (background/unseen stats) and `manifest.json` with row counts
//! and blake3 per file. Deterministic: the same sources give byte-identical files.

use super::build::{Build, DatasetReport, ExportRow, Unavailable};
use crate::download::{DownloadError, blake3_file, write_atomic};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";

/// One file of a build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// File name inside the build directory.
    pub path: String,
    /// Rows (JSONL lines; 0 for side files).
    pub rows: u64,
    /// blake3 (hex).
    pub blake3: String,
}

/// `manifest.json` of a build.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// `gqr`.
    pub build: String,
    /// blake3 of the registry the build used.
    pub registry_blake3: String,
    /// The split files, then the side files.
    pub files: Vec<ManifestFile>,
    /// Datasets that could not be loaded.
    pub missing: Vec<Unavailable>,
    /// How each dataset was loaded.
    pub datasets: Vec<DatasetReport>,
    /// Warnings of the build.
    pub warnings: Vec<String>,
}

/// A store failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// File IO.
    #[error(transparent)]
    Io(#[from] DownloadError),
    /// A malformed manifest or split file.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// No build in this directory.
    #[error("{0}: no GQR-Bench build here (run `cargo xtask build-data gqr`)")]
    NoBuild(PathBuf),
    /// The split was not built.
    #[error("split {split:?} was not built in {dir}{why}")]
    NoSplit {
        /// The split.
        split: String,
        /// The build directory.
        dir: PathBuf,
        /// Which sources were missing.
        why: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| {
        StoreError::Io(DownloadError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// Write `build` into `dir` (split files and side files first, the manifest last, each
/// atomically) and return the manifest.
pub fn write_build(build: &Build, dir: &Path) -> Result<Manifest, StoreError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut files = Vec::new();
    for (name, rows) in &build.splits {
        let mut text = String::new();
        for r in rows {
            text.push_str(&serde_json::to_string(r).unwrap_or_default());
            text.push('\n');
        }
        let file = format!("{name}.jsonl");
        write_atomic(&dir.join(&file), text.as_bytes())?;
        files.push(ManifestFile {
            path: file,
            rows: rows.len() as u64,
            blake3: blake3::hash(text.as_bytes()).to_hex().to_string(),
        });
    }
    for (name, text) in &build.side_files {
        write_atomic(&dir.join(name), text.as_bytes())?;
        files.push(ManifestFile {
            path: name.clone(),
            rows: 0,
            blake3: blake3::hash(text.as_bytes()).to_hex().to_string(),
        });
    }
    let manifest = Manifest {
        build: "gqr".into(),
        registry_blake3: blake3::hash(super::registry::SOURCES_JSON.as_bytes())
            .to_hex()
            .to_string(),
        files,
        missing: build.missing.clone(),
        datasets: build.datasets.clone(),
        warnings: build.warnings.clone(),
    };
    let mut text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    text.push('\n');
    write_atomic(&dir.join(MANIFEST), text.as_bytes())?;
    Ok(manifest)
}

/// Read `dir/manifest.json`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, StoreError> {
    let p = dir.join(MANIFEST);
    if !p.is_file() {
        return Err(StoreError::NoBuild(dir.to_path_buf()));
    }
    let text = std::fs::read_to_string(&p).map_err(io(&p))?;
    serde_json::from_str(&text).map_err(|e| StoreError::Parse {
        path: p,
        line: e.line() as u64,
        message: e.to_string(),
    })
}

/// One problem found by [`check_build`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckProblem {
    /// The file.
    pub path: String,
    /// What differs.
    pub problem: String,
}

/// Verify every file of the manifest in `dir`: present, same blake3, same row count.
pub fn check_build(dir: &Path) -> Result<Vec<CheckProblem>, StoreError> {
    let m = read_manifest(dir)?;
    let mut problems = Vec::new();
    for f in &m.files {
        let p = dir.join(&f.path);
        if !p.is_file() {
            problems.push(CheckProblem {
                path: f.path.clone(),
                problem: "missing".into(),
            });
            continue;
        }
        let h = blake3_file(&p)?;
        if h != f.blake3 {
            problems.push(CheckProblem {
                path: f.path.clone(),
                problem: format!("blake3 {h} != manifest {}", f.blake3),
            });
        }
        if f.path.ends_with(".jsonl") {
            let bytes = std::fs::read(&p).map_err(io(&p))?;
            let rows = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
            if rows != f.rows {
                problems.push(CheckProblem {
                    path: f.path.clone(),
                    problem: format!("{rows} rows != manifest {}", f.rows),
                });
            }
        }
    }
    Ok(problems)
}

/// The rows of split `name` of the build in `dir`.
pub fn read_split(dir: &Path, name: &str) -> Result<Vec<ExportRow>, StoreError> {
    let m = read_manifest(dir)?;
    let file = format!("{name}.jsonl");
    if !m.files.iter().any(|f| f.path == file) {
        let why = if m.missing.is_empty() {
            String::new()
        } else {
            format!(
                " (missing sources: {})",
                m.missing
                    .iter()
                    .map(|u| u.name.trim())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(StoreError::NoSplit {
            split: name.into(),
            dir: dir.to_path_buf(),
            why,
        });
    }
    let p = dir.join(&file);
    let bytes = std::fs::read(&p).map_err(io(&p))?;
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    if body.is_empty() {
        return Ok(Vec::new());
    }
    body.split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| {
            let parse_error = |message: String| StoreError::Parse {
                path: p.clone(),
                line: i as u64 + 1,
                message,
            };
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            let text = std::str::from_utf8(l).map_err(|e| {
                parse_error(format!(
                    "invalid UTF-8 at byte {} of the line",
                    e.valid_up_to() + 1
                ))
            })?;
            serde_json::from_str(text).map_err(|e| parse_error(e.to_string()))
        })
        .collect()
}

/// The build directory inside a GQR cache: `<cache>/build`.
pub fn build_dir(cache: &Path) -> PathBuf {
    cache.join("build")
}
