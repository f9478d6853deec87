//! Which question bank a `crb` command reads: `--bank PATH`, or else the public
//! CommonRouterBench bank installed in the cache by `routeval data fetch crb`
//! (`routeval_bench_data::crb::public`, directories by `routeval_bench_data::cache`).
//! Shared by `crb eval` and `crb sweep`.

use crate::common::Failure;
use routeval_bench_data::cache::CacheDirs;
use routeval_bench_data::crb::public::{Registry, locate};
use std::path::{Path, PathBuf};

/// The bank (and manifest) a command reads.
#[derive(Debug, Clone)]
pub(crate) struct BankChoice {
    /// The bank file (`-` = stdin).
    pub(crate) bank: PathBuf,
    /// The manifest for `--n` quotas: `--manifest`, else the cached bank's manifest, else
    /// `None` (the published line counts).
    pub(crate) manifest: Option<PathBuf>,
    /// For the cached public bank: one line for the table header (`public bank
    /// CommonstackAI/LLMRouterBench@df000711a56b (cached PATH)`); `None` for `--bank`.
    pub(crate) public: Option<String>,
}

/// `--bank` when given; else the cached public bank (an error naming `routeval data fetch crb`
/// when there is none). `--manifest` always wins over the cached manifest.
pub(crate) fn resolve_bank(
    bank: Option<&Path>,
    manifest: Option<&Path>,
) -> Result<BankChoice, Failure> {
    if let Some(b) = bank {
        return Ok(BankChoice {
            bank: b.to_path_buf(),
            manifest: manifest.map(Path::to_path_buf),
            public: None,
        });
    }
    let dirs = CacheDirs::from_process().map_err(Failure::bad_input)?;
    let registry = Registry::load().map_err(Failure::bad_input)?;
    let dir = registry.install_dir(&dirs.crb.path);
    match locate(&registry, &dir).map_err(Failure::bad_input)? {
        Some(p) => Ok(BankChoice {
            bank: p.bank.clone(),
            manifest: Some(manifest.map_or(p.manifest.clone(), Path::to_path_buf)),
            public: Some(p.describe()),
        }),
        None => Err(Failure::bad_input(format!(
            "no --bank given and no public CommonRouterBench bank in {}: run `routeval data fetch crb` (offline: `routeval data fetch crb --from DIR` with question_bank.jsonl and manifest.json)",
            dir.display()
        ))),
    }
}
