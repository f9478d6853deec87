//! Fetching registry files from the Hugging Face hub into the cache
//! (`<cache>/hub/<repo>/<revision>/<file>`), through [`crate::download::Downloader`].

use super::build::{BuildError, Fetch};
use super::registry::{DatasetEntry, Registry, SourceEntry, SourceKind};
use crate::download::{Downloader, NetFailure};
use crate::net::NetOptions;
use std::path::PathBuf;

/// A [`Fetch`] that downloads hub files (pinned revision, blake3-checked once recorded) into
/// `cache`. Release files are not on the hub (`Ok(None)`: the next alternative is tried).
#[derive(Debug, Clone)]
pub struct HubFetch {
    /// The cache root (`$GQR_CACHE_DIR` or `~/.cache/gqr`).
    pub cache: PathBuf,
    /// The hub endpoint (the registry's unless overridden, e.g. by a mirror or a test server).
    pub endpoint: Option<String>,
    /// The token for gated sets (`HF_TOKEN`).
    pub token: Option<String>,
    /// Files downloaded or found: `(path in cache, blake3)`.
    pub fetched: Vec<(PathBuf, String)>,
    /// Downloads that failed on the network (unreachable, timeout, TLS; the offline routes,
    /// `--from DIR` and `--hub-endpoint URL`, would help).
    pub network_failures: u64,
    /// Those failures, each with its URL and what happened.
    pub net_failures: Vec<NetFailure>,
    /// Timeouts of each download.
    pub net: NetOptions,
    /// Where downloads report their bytes ([`Default`]: nowhere).
    pub progress: routeval_core::SharedProgress,
}

impl HubFetch {
    /// A fetcher for `cache`, reading the token from `HF_TOKEN`.
    pub fn new(cache: PathBuf) -> Self {
        HubFetch {
            cache,
            endpoint: std::env::var("GQR_HUB_ENDPOINT")
                .ok()
                .filter(|s| !s.is_empty()),
            token: std::env::var("HF_TOKEN").ok().filter(|s| !s.is_empty()),
            fetched: Vec::new(),
            network_failures: 0,
            net_failures: Vec::new(),
            net: NetOptions::default(),
            progress: routeval_core::SharedProgress::default(),
        }
    }
}

impl Fetch for HubFetch {
    fn fetch(
        &mut self,
        registry: &Registry,
        dataset: &DatasetEntry,
        source: &SourceEntry,
        file: &str,
    ) -> Result<Option<Vec<u8>>, BuildError> {
        if source.kind != SourceKind::Hub {
            return Ok(None);
        }
        let Some(repo) = &source.repo else {
            return Ok(None);
        };
        let rev = source.revision_or(&registry.default_revision);
        let mut reg = registry.clone();
        if let Some(e) = &self.endpoint {
            reg.hub_endpoint = e.clone();
        }
        let url = reg.url(source, file).unwrap_or_default();
        let dest = self.cache.join("hub").join(repo).join(rev).join(file);
        let idx = source.files.iter().position(|f| f == file).unwrap_or(0);
        let expected = source
            .blake3
            .as_ref()
            .and_then(|v| v.get(idx))
            .map(String::as_str);
        let dl = Downloader::new(if source.gated {
            self.token.clone()
        } else {
            None
        })
        .with_progress(self.progress.clone())
        .with_net(self.net);
        // Hub files have no pinned size: the downloader's cap for unpinned files applies.
        let got = dl.fetch(&url, &dest, expected).map_err(|e| {
            if let Some(f) = e.net_failure() {
                self.network_failures += 1;
                self.net_failures.push(f);
            }
            BuildError::Fetch {
                dataset: dataset.name.clone(),
                message: e.to_string(),
            }
        })?;
        let bytes = std::fs::read(&got.path).map_err(|e| BuildError::Fetch {
            dataset: dataset.name.clone(),
            message: format!("{}: {e}", got.path.display()),
        })?;
        self.fetched.push((got.path, got.blake3));
        Ok(Some(bytes))
    }

    fn gated_unavailable(&self, source: &SourceEntry) -> Option<String> {
        if source.gated && self.token.is_none() {
            Some(format!(
                "{} is gated: set {} to a Hugging Face token with access (skipped; the OOD mean is over 6 sets)",
                source.repo.as_deref().unwrap_or("?"),
                source.token_env.as_deref().unwrap_or("HF_TOKEN")
            ))
        } else {
            None
        }
    }
}
