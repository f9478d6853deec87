//! The GQR-Bench dataset registry, kept as data in `data/gqr/sources.json` and embedded here.

use super::rows::{Filter, TextSpec};
use routeval_core::Domain;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The registry JSON as committed (`data/gqr/sources.json`).
pub const SOURCES_JSON: &str = include_str!("../../../../data/gqr/sources.json");

/// The whole registry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Registry {
    /// Schema version (1).
    pub schema: u32,
    /// What the file is.
    pub about: String,
    /// The hub endpoint (`https://huggingface.co`).
    pub hub_endpoint: String,
    /// Download URL template (`{endpoint}/datasets/{repo}/resolve/{revision}/{file}`).
    pub url_template: String,
    /// Revision used where upstream pins none.
    pub default_revision: String,
    /// Every dataset.
    pub datasets: Vec<DatasetEntry>,
}

/// What a dataset is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// An in-domain training/test source (v1).
    Id,
    /// An OOD test set.
    Ood,
    /// A v2 background corpus.
    Background,
    /// A GQR-unseen in-domain test set.
    Unseen,
}

/// One dataset: how rows become texts, and where the rows come from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatasetEntry {
    /// The name upstream uses (OOD keys exactly, `"hate_speech_slovak "` included).
    pub name: String,
    /// Its role.
    pub role: Role,
    /// Its domain (`ood` for OOD and background).
    pub domain: Domain,
    /// The split read.
    pub split: String,
    /// How a row becomes a text.
    pub text: TextSpec,
    /// Row filters, in order.
    pub filters: Vec<Filter>,
    /// Notes on upstream quirks.
    #[serde(default)]
    pub note: Option<String>,
    /// Alternative sources, tried in order.
    pub sources: Vec<SourceEntry>,
}

/// The kind of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// Files of a Hugging Face hub dataset repo at a revision.
    Hub,
    /// Original release files (only read from a `--from` mirror).
    Release,
}

/// A file format with a reader in [`crate::readers`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// CSV (pandas `read_csv` defaults: header row, default NA strings).
    Csv,
    /// A JSON array of objects (or `{"data": [...]}`).
    Json,
    /// JSON lines.
    Jsonl,
    /// Parquet (record API; default feature `parquet`).
    Parquet,
}

/// One source alternative of a dataset.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceEntry {
    /// Hub files or original release files.
    pub kind: SourceKind,
    /// Hub repo id (`owner/name`).
    #[serde(default)]
    pub repo: Option<String>,
    /// Pinned revision (commit sha); `None` where upstream pins none.
    #[serde(default)]
    pub revision: Option<String>,
    /// Why no revision is pinned.
    #[serde(default)]
    pub revision_note: Option<String>,
    /// Hub config name.
    #[serde(default)]
    pub config: Option<String>,
    /// Files (paths inside the repo, or release file names), concatenated in order.
    pub files: Vec<String>,
    /// Their format.
    pub format: Format,
    /// Whether the file path was confirmed on the hub.
    #[serde(default)]
    pub file_verified: Option<bool>,
    /// Note on an unconfirmed path.
    #[serde(default)]
    pub file_note: Option<String>,
    /// blake3 per file, once a verified download recorded it.
    #[serde(default)]
    pub blake3: Option<Vec<String>>,
    /// How the hashes were obtained.
    #[serde(default)]
    pub blake3_status: Option<String>,
    /// Gated on the hub: needs a token.
    #[serde(default)]
    pub gated: bool,
    /// The environment variable holding the token.
    #[serde(default)]
    pub token_env: Option<String>,
    /// Where release files come from.
    #[serde(default)]
    pub origin: Option<String>,
    /// Column renames applied after reading (release name → hub name).
    #[serde(default)]
    pub rename: BTreeMap<String, String>,
    /// CSV without a header row.
    #[serde(default = "yes")]
    pub csv_header: bool,
    /// Column names for a headerless CSV.
    #[serde(default)]
    pub columns: Vec<String>,
}

fn yes() -> bool {
    true
}

impl SourceEntry {
    /// The revision to download (`main` where upstream pins none).
    pub fn revision_or<'a>(&'a self, default: &'a str) -> &'a str {
        self.revision.as_deref().unwrap_or(default)
    }

    /// The path of `file` inside a `--from` mirror: `<repo>/<file>` for hub sources, the
    /// bare file name for release files.
    pub fn mirror_path(&self, file: &str) -> String {
        match (&self.kind, &self.repo) {
            (SourceKind::Hub, Some(repo)) => format!("{repo}/{file}"),
            _ => file.to_string(),
        }
    }
}

/// A registry that does not parse (a bug in `data/gqr/sources.json`).
#[derive(Debug, thiserror::Error)]
#[error("data/gqr/sources.json: {0}")]
pub struct RegistryError(#[from] serde_json::Error);

impl Registry {
    /// The embedded registry.
    pub fn load() -> Result<Registry, RegistryError> {
        Ok(serde_json::from_str(SOURCES_JSON)?)
    }

    /// The dataset named `name`.
    pub fn dataset(&self, name: &str) -> Option<&DatasetEntry> {
        self.datasets.iter().find(|d| d.name == name)
    }

    /// Datasets of one role, in registry order.
    pub fn by_role(&self, role: Role) -> impl Iterator<Item = &DatasetEntry> {
        self.datasets.iter().filter(move |d| d.role == role)
    }

    /// The download URL of `file` of a hub source.
    pub fn url(&self, source: &SourceEntry, file: &str) -> Option<String> {
        let repo = source.repo.as_ref()?;
        Some(
            self.url_template
                .replace("{endpoint}", self.hub_endpoint.trim_end_matches('/'))
                .replace("{repo}", repo)
                .replace("{revision}", source.revision_or(&self.default_revision))
                .replace("{file}", file),
        )
    }
}
