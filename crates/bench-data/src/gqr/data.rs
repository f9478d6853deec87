//! The GQR-Bench splits a command or binding reads: a verified build on disk
//! ([`store::read_split`], checked against `manifest.json`) or a build made in memory from a
//! local mirror of the sources ([`build_all`] over [`MirrorDir`], as `routeval data
//! fetch gqr --from DIR` builds it, nothing written).
//!
//! Shared by `routeval gqr export|score|sweep` (`--build-dir DIR` / `--from DIR`) and the
//! Python package (`routeval.gqr`'s loaders, `build_dir=` / `mirror=`), so both read the same
//! rows and say the same thing about unavailable splits.

use super::build::{BuildError, BuildOptions, ExportRow, MirrorDir, build_all};
use super::registry::{Registry, RegistryError, Role};
use super::store::{self, StoreError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Why the splits could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The mirror directory does not exist or is not a directory.
    #[error(
        "{dir}: {what} (give the mirror of the sources, as for `routeval data fetch gqr --from DIR`)"
    )]
    Mirror {
        /// The directory given.
        dir: PathBuf,
        /// `no such directory`, `not a directory` or `cannot read: ...`.
        what: String,
    },
    /// The embedded registry is unreadable (a broken build of routeval).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// Building from the mirror failed (an unreadable or malformed source file).
    #[error(transparent)]
    Build(#[from] BuildError),
    /// Reading the build failed (no build, a changed file, a malformed line).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The split is not in the build or could not be built from the mirror.
    #[error("split {split} is not available in {origin}{why}")]
    NoSplit {
        /// The split file's name without `.jsonl`.
        split: String,
        /// [`GqrData::origin`].
        origin: String,
        /// ` (missing sources: a, b)` when sources the split needs are missing, else empty.
        why: String,
    },
}

/// The splits of a build, read from disk or built from a mirror.
#[derive(Debug, Clone, Default)]
pub struct GqrData {
    /// Split name (`id_test`, `ood_test`, `train_v2`, ...) → rows. From a build only the
    /// splits asked for are read; from a mirror every split the sources allow is built.
    pub splits: HashMap<String, Vec<ExportRow>>,
    /// Sources that could not be loaded: `(dataset, reason)`.
    pub missing: Vec<(String, String)>,
    /// `build DIR` or `mirror DIR`, for messages and reports.
    pub origin: String,
    /// The files read from a build (`manifest.json` and every file it lists); empty for a
    /// mirror. The CLI notes them so that no output overwrites an input.
    pub inputs: Vec<PathBuf>,
}

impl GqrData {
    /// Build every split in memory from the local mirror `dir` (`DIR/<hub repo>/<file>`, or
    /// release file names), as `routeval data fetch gqr --from DIR` does, writing nothing.
    /// Sources absent from the mirror are listed in [`missing`](Self::missing); the splits
    /// they feed are left out (the OOD and unseen splits are built from the sets present).
    ///
    /// Errors: [`DataError::Mirror`] when `dir` is not a directory, [`DataError::Build`] for
    /// an unreadable or malformed source file.
    pub fn from_mirror(dir: &Path) -> Result<GqrData, DataError> {
        let bad = |what: String| DataError::Mirror {
            dir: dir.to_path_buf(),
            what,
        };
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(bad("not a directory".into())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(bad("no such directory".into()));
            }
            Err(e) => return Err(bad(format!("cannot read: {e}"))),
        }
        let reg = Registry::load()?;
        let mut m = MirrorDir {
            root: dir.to_path_buf(),
        };
        let b = build_all(&reg, &mut m, &BuildOptions::default())?;
        Ok(GqrData {
            splits: b.splits.into_iter().collect(),
            missing: b.missing.into_iter().map(|u| (u.name, u.reason)).collect(),
            origin: format!("mirror {}", dir.display()),
            inputs: Vec::new(),
        })
    }

    /// Read the splits `wanted` (those the build has) from the build in `dir`, each checked
    /// against `manifest.json` (rows, blake3) as it is read.
    ///
    /// Errors: [`DataError::Store`] (no build in `dir`, a changed or malformed file).
    pub fn from_build(dir: &Path, wanted: &[&str]) -> Result<GqrData, DataError> {
        let manifest = store::read_manifest(dir)?;
        let mut inputs = vec![dir.join(store::MANIFEST)];
        inputs.extend(manifest.files.iter().map(|f| dir.join(&f.path)));
        let mut splits = HashMap::new();
        for w in wanted {
            if manifest
                .files
                .iter()
                .any(|f| f.path == format!("{w}.jsonl"))
            {
                splits.insert(w.to_string(), store::read_split(dir, w)?);
            }
        }
        Ok(GqrData {
            splits,
            missing: manifest
                .missing
                .into_iter()
                .map(|u| (u.name, u.reason))
                .collect(),
            origin: format!("build {}", dir.display()),
            inputs,
        })
    }

    /// The rows of split `name`, or [`DataError::NoSplit`] naming the missing sources it is
    /// built from (only those: [`split_sources`]).
    pub fn split(&self, name: &str) -> Result<&Vec<ExportRow>, DataError> {
        self.splits.get(name).ok_or_else(|| {
            let needed = split_sources(name);
            let missing: Vec<&str> = self
                .missing
                .iter()
                .map(|m| m.0.as_str())
                .filter(|m| needed.iter().any(|n| n == m))
                .map(str::trim)
                .collect();
            let why = if missing.is_empty() {
                String::new()
            } else {
                format!(" (missing sources: {})", missing.join(", "))
            };
            DataError::NoSplit {
                split: name.to_string(),
                origin: self.origin.clone(),
                why,
            }
        })
    }
}

/// The registry datasets split `name` is built from (`id_test`, `train`, ... need the three ID
/// sources; the v2 and background splits also the three background corpora; `ood_test` the
/// seven OOD sets; `unseen_id` the nine unseen sets).
pub fn split_sources(name: &str) -> Vec<String> {
    let roles: &[Role] = match name {
        "ood_test" => &[Role::Ood],
        "unseen_id" => &[Role::Unseen],
        "train_v2" | "eval_v2" | "background_train" | "background_eval" => {
            &[Role::Id, Role::Background]
        }
        _ => &[Role::Id],
    };
    Registry::load()
        .map(|r| {
            r.datasets
                .iter()
                .filter(|d| roles.contains(&d.role))
                .map(|d| d.name.clone())
                .collect()
        })
        .unwrap_or_default()
}
