//! Building GQR-Bench from its sources: loading a registry dataset through a [`Fetch`]er,
//! the v1 splits, the OOD sets, the v2 background class and GQR-unseen, and the export rows.

use super::registry::{DatasetEntry, Registry, Role, SourceEntry};
use super::rows::{FilterStats, RowText};
use super::select::{
    BackgroundShortfall, Stats, UnseenSetStats, candidate_limit, select_background, select_unseen,
    smallest_eligible,
};
use super::text::{OverlapIndex, fingerprint};
use super::v1::{Frame, IdSource, V1Error, V1Splits, dev_subset, pandas_shuffle, v1_splits};
use crate::readers::{ReadError, for_each_row};
use routeval_core::Domain;
use serde::{Deserialize, Serialize};

/// The v2 background build id (`BUILD_ID`).
pub const BACKGROUND_BUILD_ID: &str = "v2-hashrank-dedup-detok";
/// The reference fingerprint of the default v2 background (`EXPECTED_SHA256`).
pub const BACKGROUND_EXPECTED_SHA256: &str =
    "f4f76f57fe34649e2ad97c9374bb04a4ae157eb2826bb14e5df381a570ad8102";
/// The GQR-unseen build id (`BUILD_ID`); this build has no reference fingerprint upstream.
pub const UNSEEN_BUILD_ID: &str = "unseen-id-audited-unescaped";

/// A build failure: one clear message.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Fetching a file failed (network, checksum, IO).
    #[error("{dataset}: {message}")]
    Fetch {
        /// The dataset.
        dataset: String,
        /// What failed.
        message: String,
    },
    /// A file could not be parsed.
    #[error("{dataset}: {source}")]
    Read {
        /// The dataset.
        dataset: String,
        /// The reader's error.
        #[source]
        source: ReadError,
    },
    /// A column the registry needs is absent.
    #[error("{dataset}: column {column:?} not found in {file} (columns: {found})")]
    MissingColumn {
        /// The dataset.
        dataset: String,
        /// The missing column.
        column: String,
        /// The file read.
        file: String,
        /// Columns present.
        found: String,
    },
    /// A source has no rows.
    #[error("{dataset}: source {file} has no rows")]
    EmptySource {
        /// The dataset.
        dataset: String,
        /// The file read.
        file: String,
    },
    /// The v1 procedure failed.
    #[error(transparent)]
    V1(#[from] V1Error),
    /// The background selection ran out of candidates.
    #[error(transparent)]
    Background(#[from] BackgroundShortfall),
    /// The registry does not list a dataset the procedure needs.
    #[error("registry has no dataset {0:?}")]
    NotInRegistry(String),
}

/// Where source files come from.
pub trait Fetch {
    /// The bytes of `file` of `source`, `Ok(None)` if this fetcher does not have it (then the
    /// next source alternative is tried), or an error.
    fn fetch(
        &mut self,
        registry: &Registry,
        dataset: &DatasetEntry,
        source: &SourceEntry,
        file: &str,
    ) -> Result<Option<Vec<u8>>, BuildError>;

    /// Why a gated source is unavailable (e.g. no token), or `None` if it can be fetched.
    fn gated_unavailable(&self, source: &SourceEntry) -> Option<String> {
        let _ = source;
        None
    }
}

/// A `--from DIR` local mirror: `DIR/<repo>/<file>` for hub files (also
/// `DIR/<repo>/<revision>/<file>`), `DIR/<file>` for release files.
#[derive(Debug, Clone)]
pub struct MirrorDir {
    /// The mirror root.
    pub root: std::path::PathBuf,
}

impl Fetch for MirrorDir {
    fn fetch(
        &mut self,
        registry: &Registry,
        dataset: &DatasetEntry,
        source: &SourceEntry,
        file: &str,
    ) -> Result<Option<Vec<u8>>, BuildError> {
        let mut candidates = vec![self.root.join(source.mirror_path(file))];
        if let Some(repo) = &source.repo {
            candidates.push(
                self.root
                    .join(repo)
                    .join(source.revision_or(&registry.default_revision))
                    .join(file),
            );
        }
        for p in candidates {
            if p.is_file() {
                return std::fs::read(&p).map(Some).map_err(|e| BuildError::Fetch {
                    dataset: dataset.name.clone(),
                    message: format!("{}: {e}", p.display()),
                });
            }
        }
        Ok(None)
    }
}

/// A dataset loaded from one of its sources: texts after filters, with statistics.
#[derive(Debug, Clone)]
pub struct LoadedSet {
    /// The dataset name.
    pub name: String,
    /// Its domain.
    pub domain: Domain,
    /// Texts after filters (missing values kept as `None`), rejected rows removed.
    pub texts: Vec<Option<String>>,
    /// Rows read (before filters).
    pub rows_read: u64,
    /// Filter statistics.
    pub stats: FilterStats,
    /// Rows the text builder rejected.
    pub rejected: u64,
    /// Which source was used (`repo@revision` or release file names).
    pub source: String,
}

impl LoadedSet {
    /// The texts with missing values as empty strings.
    pub fn texts_or_empty(&self) -> Vec<String> {
        self.texts
            .iter()
            .map(|t| t.clone().unwrap_or_default())
            .collect()
    }
}

/// Why a dataset could not be loaded without an error (no source available, gated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unavailable {
    /// The dataset.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// Rows streamed through a dataset's filters and text builder, one at a time.
struct RowPipeline<'a> {
    dataset: &'a DatasetEntry,
    needed: Vec<String>,
    seen: std::collections::HashSet<String>,
    first_columns: Vec<String>,
    rows_read: u64,
    reached: Vec<u64>,
    dropped: Vec<u64>,
    survivors: u64,
    texts: Vec<Option<String>>,
    rejected: u64,
}

impl<'a> RowPipeline<'a> {
    fn new(dataset: &'a DatasetEntry, needed: Vec<String>) -> Self {
        let k = dataset.filters.len();
        RowPipeline {
            dataset,
            needed,
            seen: Default::default(),
            first_columns: Vec::new(),
            rows_read: 0,
            reached: vec![0; k],
            dropped: vec![0; k],
            survivors: 0,
            texts: Vec::new(),
            rejected: 0,
        }
    }

    /// One row: note its columns, apply the filters in order (a `head` filter counts the rows
    /// reaching it), build the text.
    fn push(&mut self, row: super::rows::Record) {
        if self.rows_read == 0 {
            let mut cols: Vec<String> = row.keys().cloned().collect();
            cols.sort();
            self.first_columns = cols;
        }
        self.rows_read += 1;
        for c in &self.needed {
            if !self.seen.contains(c) && row.contains_key(c) {
                self.seen.insert(c.clone());
            }
        }
        for (k, f) in self.dataset.filters.iter().enumerate() {
            let pass = match f {
                super::rows::Filter::Head { n } => self.reached[k] < *n as u64,
                f => f.keep(&row),
            };
            self.reached[k] += 1;
            if !pass {
                self.dropped[k] += 1;
                return;
            }
        }
        self.survivors += 1;
        match self.dataset.text.text(&row) {
            RowText::Text(t) => self.texts.push(Some(t)),
            RowText::Missing => self.texts.push(None),
            RowText::Rejected => self.rejected += 1,
        }
    }
}

/// Load `dataset`: try each source alternative in order; read, rename, check columns, filter,
/// build texts.
pub fn load_dataset(
    registry: &Registry,
    dataset: &DatasetEntry,
    fetch: &mut dyn Fetch,
) -> Result<Result<LoadedSet, Unavailable>, BuildError> {
    let mut reasons = Vec::new();
    'sources: for source in &dataset.sources {
        if let Some(why) = source
            .gated
            .then(|| fetch.gated_unavailable(source))
            .flatten()
        {
            reasons.push(why);
            continue;
        }
        let mut needed: Vec<String> = dataset
            .text
            .columns()
            .iter()
            .map(|c| c.to_string())
            .collect();
        for f in &dataset.filters {
            let v = serde_json::to_value(f).unwrap_or_default();
            if let Some(c) = v.get("column").and_then(|c| c.as_str()) {
                needed.push(c.to_string());
            }
        }
        let mut pipe = RowPipeline::new(dataset, needed);
        let mut file_names = Vec::new();
        for file in &source.files {
            // A file that cannot be fetched (absent, network, checksum) makes this source
            // unavailable: the next alternative is tried and the reason is reported.
            let bytes = match fetch.fetch(registry, dataset, source, file) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => {
                    reasons.push(format!("{} not available", source.mirror_path(file)));
                    continue 'sources;
                }
                Err(BuildError::Fetch { message, .. }) => {
                    reasons.push(message);
                    continue 'sources;
                }
                Err(e) => return Err(e),
            };
            for_each_row(
                file,
                &bytes,
                source.format,
                source.csv_header,
                &source.columns,
                &mut |mut r| {
                    for (from, to) in &source.rename {
                        if let Some(v) = r.remove(from) {
                            r.insert(to.clone(), v);
                        }
                    }
                    pipe.push(r);
                },
            )
            .map_err(|e| BuildError::Read {
                dataset: dataset.name.clone(),
                source: e,
            })?;
            file_names.push(file.clone());
        }
        let file = file_names.join(", ");
        if pipe.rows_read == 0 {
            return Err(BuildError::EmptySource {
                dataset: dataset.name.clone(),
                file,
            });
        }
        if let Some(c) = pipe.needed.iter().find(|c| !pipe.seen.contains(*c)) {
            return Err(BuildError::MissingColumn {
                dataset: dataset.name.clone(),
                column: c.clone(),
                file,
                found: pipe.first_columns.join(", "),
            });
        }
        let RowPipeline {
            rows_read,
            texts,
            rejected,
            dropped,
            survivors,
            ..
        } = pipe;
        let stats = FilterStats {
            rows_in: rows_read,
            dropped: dataset
                .filters
                .iter()
                .map(|f| f.describe())
                .zip(dropped)
                .collect(),
            rows_out: survivors,
        };
        let used = match (&source.repo, &source.revision) {
            (Some(repo), Some(rev)) => format!("{repo}@{rev}"),
            (Some(repo), None) => format!("{repo}@{} (unpinned)", registry.default_revision),
            _ => format!("release {file}"),
        };
        return Ok(Ok(LoadedSet {
            name: dataset.name.clone(),
            domain: dataset.domain,
            texts,
            rows_read,
            stats,
            rejected,
            source: used,
        }));
    }
    Ok(Err(Unavailable {
        name: dataset.name.clone(),
        reason: if reasons.is_empty() {
            "no source listed".into()
        } else {
            reasons.join("; ")
        },
    }))
}

/// One exported row (`routeval gqr export`): `{"id", "text", "label", "domain", "dataset"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportRow {
    /// Stable id `<split>/<dataset>/<index>`.
    pub id: String,
    /// The text.
    pub text: String,
    /// The label (0..=3).
    pub label: u8,
    /// The domain name.
    pub domain: Domain,
    /// The dataset (ID domain name, OOD key, background source or unseen set).
    pub dataset: String,
}

/// Rows of a v1 frame; ids use the frame's pandas index labels.
pub fn frame_rows(split: &str, frame: &Frame) -> Vec<ExportRow> {
    frame
        .rows
        .iter()
        .zip(&frame.index)
        .map(|(r, i)| ExportRow {
            id: format!("{split}/{}/{i}", r.domain.name()),
            text: r.text.clone(),
            label: r.domain.label(),
            domain: r.domain,
            dataset: r.domain.name().to_string(),
        })
        .collect()
}

/// Python's `round()` (half to even) of `a / b`.
pub fn round_half_even_div(a: usize, b: usize) -> usize {
    let q = a / b;
    let r = a % b;
    match (2 * r).cmp(&b) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q % 2),
    }
}

/// The v2 background class built from candidate pools (`_build_or_load`, build path).
#[derive(Debug, Clone, PartialEq)]
pub struct Background {
    /// `(text, source)` of the train part (the first `n_train` in hash order).
    pub train: Vec<(String, String)>,
    /// `(text, source)` of the eval part.
    pub eval: Vec<(String, String)>,
    /// Statistics, with `sha256` appended when nothing was missing.
    pub stats: Stats,
    /// `fingerprint(texts)` (train then eval).
    pub fingerprint: String,
    /// Warnings upstream would print.
    pub warnings: Vec<String>,
    /// Whether upstream would cache this build (nothing missing).
    pub cacheable: bool,
    /// Cache file names (`…parquet`, `…stats.json`).
    pub cache_names: [String; 2],
}

/// Build the background: `smallest_eligible` per source, the overlap index from the ID test
/// texts and the OOD frames, `select_background`, the train/eval cut, stats and fingerprint.
/// `pools` are the per-source candidate texts after the registry filters, any order of
/// sources; `missing` names OOD sets that were empty.
pub fn build_background(
    pools: &[(String, Vec<String>)],
    id_test_texts: &[String],
    ood_texts: &[String],
    missing: &[String],
    (n_train, n_eval): (usize, usize),
    check: bool,
    seed: u64,
) -> Result<Background, BackgroundShortfall> {
    let n_total = n_train + n_eval;
    let limit = candidate_limit(n_total, pools.len());
    let cands: Vec<(String, Vec<String>)> = pools
        .iter()
        .map(|(name, texts)| (name.clone(), smallest_eligible(texts, limit, seed, name)))
        .collect();
    let ix = OverlapIndex::from_texts(id_test_texts.iter().chain(ood_texts));
    let sel = select_background(&cands, &ix, n_total, seed)?;
    let fp = fingerprint(&sel.texts);
    let mut stats = sel.stats.clone();
    let mut warnings = Vec::new();
    let cacheable = missing.is_empty();
    let stem = format!("background_{BACKGROUND_BUILD_ID}_seed{seed}_train{n_train}_eval{n_eval}");
    if cacheable {
        stats.push_str("sha256", fp.clone());
    } else {
        warnings.push(format!(
            "GQR-Bench v2 background built without {}; the corpus is used for this call but not cached.",
            missing.iter().map(|m| m.trim()).collect::<Vec<_>>().join(", ")
        ));
    }
    if check && cacheable && fp != BACKGROUND_EXPECTED_SHA256 {
        warnings.push(format!(
            "GQR-Bench v2 background fingerprint {} differs from the reference {}; an upstream corpus has changed.",
            &fp[..12],
            &BACKGROUND_EXPECTED_SHA256[..12]
        ));
    }
    let pairs: Vec<(String, String)> = sel.texts.into_iter().zip(sel.sources).collect();
    let (train, eval) = {
        let mut p = pairs;
        let eval = p.split_off(n_train.min(p.len()));
        (p, eval)
    };
    Ok(Background {
        train,
        eval,
        stats,
        fingerprint: fp,
        warnings,
        cacheable,
        cache_names: [format!("{stem}.parquet"), format!("{stem}.stats.json")],
    })
}

/// One v2 training row (`load_train_dataset(version="v2")`): text, domain, label, source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Row {
    /// The text.
    pub text: String,
    /// The domain (`ood` for background rows).
    pub domain: Domain,
    /// `gqr` for v1 rows, else the background source.
    pub source: String,
    /// The v1 index label, for v1 rows.
    pub v1_index: Option<usize>,
}

/// `concat([v1.assign(source="gqr"), bg], ignore_index=True).sample(frac=1, random_state=seed)`.
pub fn v2_frame(v1: &Frame, bg: &[(String, String)], seed: u64) -> Vec<V2Row> {
    let mut rows: Vec<V2Row> = v1
        .rows
        .iter()
        .zip(&v1.index)
        .map(|(r, i)| V2Row {
            text: r.text.clone(),
            domain: r.domain,
            source: "gqr".into(),
            v1_index: Some(*i),
        })
        .collect();
    rows.extend(bg.iter().map(|(t, s)| V2Row {
        text: t.clone(),
        domain: Domain::Ood,
        source: s.clone(),
        v1_index: None,
    }));
    pandas_shuffle(&rows, seed)
}

/// The result of a whole build.
#[derive(Debug, Clone, Default)]
pub struct Build {
    /// Export files: `(split name, rows)`, in a fixed order.
    pub splits: Vec<(String, Vec<ExportRow>)>,
    /// Datasets that could not be loaded, with reasons.
    pub missing: Vec<Unavailable>,
    /// Per-dataset load statistics.
    pub datasets: Vec<DatasetReport>,
    /// Side files (name, text): background and unseen stats.
    pub side_files: Vec<(String, String)>,
    /// Warnings to show the user.
    pub warnings: Vec<String>,
}

/// How one dataset was loaded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatasetReport {
    /// The dataset.
    pub name: String,
    /// The source used.
    pub source: String,
    /// Rows read.
    pub rows_read: u64,
    /// Rows after filters (and builder rejections).
    pub rows: u64,
    /// Rows dropped per filter.
    pub dropped: Vec<(String, u64)>,
    /// Rows the text builder rejected.
    pub rejected: u64,
    /// Missing texts kept (as empty strings).
    pub missing_texts: u64,
}

/// Build parameters.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The seed (42).
    pub seed: u64,
    /// Rows per ID domain (15,000).
    pub dataset_size: usize,
    /// Dev subset size (1,000).
    pub dev_size: usize,
    /// Unseen texts per set (1,000).
    pub per_set: usize,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            seed: super::SEED,
            dataset_size: super::DATASET_SIZE,
            dev_size: super::DEV_SIZE,
            per_set: super::select::UNSEEN_PER_SET,
        }
    }
}

fn load_role(
    registry: &Registry,
    role: Role,
    fetch: &mut dyn Fetch,
    build: &mut Build,
) -> Result<Vec<LoadedSet>, BuildError> {
    let mut out = Vec::new();
    for ds in registry.by_role(role) {
        match load_dataset(registry, ds, fetch)? {
            Ok(set) => {
                build.datasets.push(DatasetReport {
                    name: set.name.clone(),
                    source: set.source.clone(),
                    rows_read: set.rows_read,
                    rows: set.texts.len() as u64,
                    dropped: set.stats.dropped.clone(),
                    rejected: set.rejected,
                    missing_texts: set.texts.iter().filter(|t| t.is_none()).count() as u64,
                });
                out.push(set);
            }
            Err(u) => build.missing.push(u),
        }
    }
    Ok(out)
}

/// Build every split that the available sources allow: v1 (id_test, train, eval, dev_train,
/// dev_eval), ood_test, v2 (background_train/eval, train_v2, eval_v2) and unseen_id.
/// Missing datasets are listed in [`Build::missing`]; splits that need them are left out or,
/// for the OOD and unseen sets, built from what is present (and marked in the warnings).
pub fn build_all(
    registry: &Registry,
    fetch: &mut dyn Fetch,
    opts: &BuildOptions,
) -> Result<Build, BuildError> {
    let mut build = Build::default();
    let seed = opts.seed;
    // v1.
    let id_sets = load_role(registry, Role::Id, fetch, &mut build)?;
    let v1: Option<V1Splits> = if id_sets.len() == 3 {
        let sources: Vec<IdSource> = id_sets
            .iter()
            .map(|s| IdSource {
                domain: s.domain,
                filtered_texts: s.texts_or_empty(),
                unfiltered_rows: s.rows_read as usize,
            })
            .collect();
        Some(v1_splits(&sources, opts.dataset_size, seed)?)
    } else {
        build
            .warnings
            .push("v1 splits not built: an ID source is missing".into());
        None
    };
    if let Some(v1) = &v1 {
        build
            .splits
            .push(("id_test".into(), frame_rows("id_test", &v1.id_test)));
        build
            .splits
            .push(("train".into(), frame_rows("train", &v1.train)));
        build
            .splits
            .push(("eval".into(), frame_rows("eval", &v1.eval)));
        if v1.train.len() >= opts.dev_size && v1.eval.len() >= opts.dev_size {
            let dt = dev_subset(&v1.train, opts.dev_size, seed).map_err(V1Error::from)?;
            let de = dev_subset(&v1.eval, opts.dev_size, seed).map_err(V1Error::from)?;
            build
                .splits
                .push(("dev_train".into(), frame_rows("dev_train", &dt)));
            build
                .splits
                .push(("dev_eval".into(), frame_rows("dev_eval", &de)));
        }
    }
    // OOD.
    let ood_sets = load_role(registry, Role::Ood, fetch, &mut build)?;
    let mut ood_rows = Vec::new();
    let mut ood_texts = Vec::new();
    for s in &ood_sets {
        for (i, t) in s.texts_or_empty().into_iter().enumerate() {
            ood_texts.push(t.clone());
            ood_rows.push(ExportRow {
                id: format!("ood_test/{}/{i}", s.name.trim_end()),
                text: t,
                label: 3,
                domain: Domain::Ood,
                dataset: s.name.clone(),
            });
        }
    }
    let ood_missing: Vec<String> = registry
        .by_role(Role::Ood)
        .filter(|d| {
            !ood_sets
                .iter()
                .any(|s| s.name == d.name && !s.texts.is_empty())
        })
        .map(|d| d.name.clone())
        .collect();
    if !ood_rows.is_empty() {
        build.splits.push(("ood_test".into(), ood_rows));
    }
    // v2 background.
    let bg_sets = load_role(registry, Role::Background, fetch, &mut build)?;
    let mut background: Option<Background> = None;
    if let (Some(v1), 3) = (&v1, bg_sets.len()) {
        let n_train = round_half_even_div(v1.train.len(), 3);
        let n_eval = round_half_even_div(v1.eval.len(), 3);
        let pools: Vec<(String, Vec<String>)> = bg_sets
            .iter()
            .map(|s| (s.name.clone(), s.texts.iter().flatten().cloned().collect()))
            .collect();
        let id_texts: Vec<String> = v1.id_test.rows.iter().map(|r| r.text.clone()).collect();
        let bg = build_background(
            &pools,
            &id_texts,
            &ood_texts,
            &ood_missing,
            (n_train, n_eval),
            true,
            seed,
        )?;
        let rows = |split: &str, part: &[(String, String)]| -> Vec<ExportRow> {
            part.iter()
                .enumerate()
                .map(|(i, (t, s))| ExportRow {
                    id: format!("{split}/{s}/{i}"),
                    text: t.clone(),
                    label: 3,
                    domain: Domain::Ood,
                    dataset: s.clone(),
                })
                .collect()
        };
        build.splits.push((
            "background_train".into(),
            rows("background_train", &bg.train),
        ));
        build
            .splits
            .push(("background_eval".into(), rows("background_eval", &bg.eval)));
        for (name, frame, part) in [
            ("train_v2", &v1.train, &bg.train),
            ("eval_v2", &v1.eval, &bg.eval),
        ] {
            let v2 = v2_frame(frame, part, seed);
            let rows: Vec<ExportRow> = v2
                .iter()
                .enumerate()
                .map(|(i, r)| ExportRow {
                    id: format!("{name}/{}/{i}", r.source),
                    text: r.text.clone(),
                    label: r.domain.label(),
                    domain: r.domain,
                    dataset: if r.source == "gqr" {
                        r.domain.name().into()
                    } else {
                        r.source.clone()
                    },
                })
                .collect();
            build.splits.push((name.into(), rows));
        }
        build
            .side_files
            .push((bg.cache_names[1].clone(), bg.stats.to_json_indent2()));
        build.warnings.extend(bg.warnings.iter().cloned());
        background = Some(bg);
    } else {
        build.warnings.push(
            "v2 background not built: needs the v1 sources and all three background corpora".into(),
        );
    }
    // GQR-unseen.
    let unseen_sets = load_role(registry, Role::Unseen, fetch, &mut build)?;
    if !unseen_sets.is_empty() {
        let mut seen = OverlapIndex::new();
        if let Some(v1) = &v1 {
            for f in [&v1.train, &v1.eval, &v1.id_test] {
                for r in &f.rows {
                    seen.add(&r.text);
                }
            }
        }
        if let Some(bg) = &background {
            for (t, _) in bg.train.iter().chain(&bg.eval) {
                seen.add(t);
            }
        }
        for t in &ood_texts {
            seen.add(t);
        }
        let screen_complete = v1.is_some() && background.is_some() && ood_missing.is_empty();
        if !screen_complete {
            build.warnings.push(
                "GQR-unseen leakage screen is partial: v1, the v2 background or an OOD set is missing".into(),
            );
        }
        let raw: Vec<(String, Domain, Vec<Option<String>>)> = unseen_sets
            .iter()
            .map(|s| (s.name.clone(), s.domain, s.texts.clone()))
            .collect();
        let (rows, stats) = select_unseen(&raw, &seen, opts.per_set, seed);
        let mut idx: std::collections::HashMap<String, usize> = Default::default();
        let rows: Vec<ExportRow> = rows
            .into_iter()
            .map(|r| {
                let i = idx.entry(r.dataset.clone()).or_insert(0);
                let id = format!("unseen_id/{}/{i}", r.dataset);
                *i += 1;
                ExportRow {
                    id,
                    text: r.text,
                    label: r.domain.label(),
                    domain: r.domain,
                    dataset: r.dataset,
                }
            })
            .collect();
        let texts: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
        build.side_files.push((
            format!(
                "{UNSEEN_BUILD_ID}_seed{seed}_per{}.stats.json",
                opts.per_set
            ),
            unseen_stats_json(&fingerprint(&texts), rows.len(), &stats),
        ));
        build.splits.push(("unseen_id".into(), rows));
    }
    Ok(build)
}

/// `json.dumps({"sha256", "rows", "sets"}, indent=2)` of the unseen build.
pub fn unseen_stats_json(sha: &str, rows: usize, sets: &[(String, UnseenSetStats)]) -> String {
    let mut s = format!("{{\n  \"sha256\": \"{sha}\",\n  \"rows\": {rows},\n  \"sets\": {{");
    for (i, (name, st)) in sets.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        s.push_str(&format!(
            "    {}: {{\n      \"raw\": {},\n      \"too_short\": {},\n      \"duplicate\": {},\n      \"gqr_overlap\": {},\n      \"used\": {}\n    }}",
            super::select::py_json_str(name),
            st.raw,
            st.too_short,
            st.duplicate,
            st.gqr_overlap,
            st.used
        ));
    }
    s.push_str(if sets.is_empty() { "}\n}" } else { "\n  }\n}" });
    s
}
