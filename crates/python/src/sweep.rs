//! `routeval.crb.sweep` / `routeval.gqr.sweep` native part, and reading GQR splits from a
//! local mirror (`routeval.gqr` loaders' `mirror=`).
//!
//! The sweeps run `routeval_sweep::{crb, gqr}::sweep`, the code `routeval crb sweep` and
//! `routeval gqr sweep` run, on the same inputs (bank rows selected as the CLI selects them,
//! tokenizers loaded for the tiers the CLI loads, GQR data from a build or a mirror through
//! `routeval_bench_data::gqr::data::GqrData`). Each returns the `--json` text, the stderr
//! lines the CLI prints (notes, warnings) and the table, so nothing is computed here.

use crate::{CrbError, GqrError};
use pyo3::prelude::*;
use routeval_bench_data::crb::selection::{SelectOptions, select_bank_rows};
use routeval_bench_data::crb::{BankRow, SampleError};
use routeval_bench_data::gqr::data::GqrData;
use routeval_core::Tier;
use routeval_frontier::threshold::parse_thresholds;
use routeval_query_dsl::{OnMissingKey, Query, QueryError};
use routeval_sweep::SweepError;
use routeval_sweep::crb::{CrbRows, CrbSweepOptions, PassRate};
use routeval_sweep::gqr::{CalibrateOn, GqrSweepOptions};
use routeval_tier_cost::tokens::{
    EncoderKind, TierTokenizers, TokenizerFiles, TokenizerSetup, build_tier_tokenizers,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(crb_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(gqr_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(gqr_read_mirror, m)?)?;
    Ok(())
}

fn crb_err(e: impl std::fmt::Display) -> PyErr {
    CrbError::new_err(e.to_string())
}

fn gqr_err(e: impl std::fmt::Display) -> PyErr {
    GqrError::new_err(e.to_string())
}

/// `(report JSON, stderr lines, table)`.
type SweepOut = (String, Vec<String>, String);

/// The bank `crb sweep` reads: `bank` when given, else the cached public bank (with its
/// manifest unless `manifest` is given) and its one-line description; the CLI's messages.
fn resolve_bank(
    bank: Option<PathBuf>,
    manifest: Option<PathBuf>,
) -> PyResult<(PathBuf, Option<PathBuf>, Option<String>)> {
    use routeval_bench_data::crb::public::{Registry, locate};
    if let Some(b) = bank {
        return Ok((b, manifest, None));
    }
    let dirs = routeval_bench_data::cache::CacheDirs::from_process().map_err(crb_err)?;
    let registry = Registry::load().map_err(crb_err)?;
    let dir = registry.install_dir(&dirs.crb.path);
    match locate(&registry, &dir).map_err(crb_err)? {
        Some(p) => Ok((
            p.bank.clone(),
            Some(manifest.unwrap_or_else(|| p.manifest.clone())),
            Some(p.describe()),
        )),
        None => Err(crb_err(format!(
            "no bank given and no public CommonRouterBench bank in {}: run `routeval data fetch crb` (offline: `routeval data fetch crb --from DIR` with question_bank.jsonl and manifest.json)",
            dir.display()
        ))),
    }
}

fn open(path: &Path, name: &str) -> Result<std::io::BufReader<std::fs::File>, String> {
    std::fs::File::open(path)
        .map(|f| std::io::BufReader::with_capacity(1 << 20, f))
        .map_err(|e| format!("{name}: cannot read: {e}"))
}

/// Bank rows selected as `crb eval` / `crb sweep` select them
/// (`routeval_bench_data::crb::selection`, the CLI's code and messages); `notes` gets the
/// `--where` count line.
fn select_rows(
    bank: &Path,
    manifest: Option<&Path>,
    opts: SelectOptions<'_>,
    where_query: Option<&(Query, OnMissingKey)>,
    notes: &mut Vec<String>,
) -> PyResult<(Vec<BankRow>, &'static str)> {
    let bank_name = bank.display().to_string();
    if std::fs::metadata(bank).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Err(crb_err(SampleError::BankNotFound(bank_name)));
    }
    let mut keep = where_query.map(|(q, omk)| {
        move |v: &Value| -> Result<bool, String> { q.matches(v, *omk).map_err(|e| e.to_string()) }
    });
    let s = select_bank_rows(
        &bank_name,
        &mut || open(bank, &bank_name),
        &mut || {
            manifest
                .map(|p| {
                    let name = p.display().to_string();
                    std::fs::read(p)
                        .map(|b| (b, name.clone()))
                        .map_err(|e| format!("{name}: cannot read: {e}"))
                })
                .transpose()
        },
        opts,
        keep.as_mut()
            .map(|k| k as &mut dyn FnMut(&Value) -> Result<bool, String>),
        &mut |line| notes.push(line),
    )
    .map_err(crb_err)?;
    Ok((s.rows, s.sample_mode))
}

/// The tokenizers of the `needed` tiers from `dir` (default: routeval's tokenizer cache), as
/// `routeval crb sweep` loads them; each fallback is a warning line naming the directory.
fn load_tokenizers(
    setup: TokenizerSetup,
    dir: Option<&Path>,
    needed: [bool; 4],
    notes: &mut Vec<String>,
) -> Result<TierTokenizers, SweepError> {
    let dir = dir.map(Path::to_path_buf).or_else(|| {
        routeval_bench_data::cache::CacheDirs::from_process()
            .ok()
            .map(|d| d.tokenizers.path)
    });
    let mut files = TokenizerFiles::default();
    for t in Tier::ALL.iter().filter(|t| needed[**t as usize]) {
        let k = setup.encoder_for(*t);
        let read = || {
            dir.as_ref()
                .and_then(|d| std::fs::read(d.join(k.dir_name()).join("tokenizer.json")).ok())
        };
        match k {
            EncoderKind::Anthropic if files.anthropic.is_none() => files.anthropic = read(),
            EncoderKind::MiniMaxText01 if files.minimax.is_none() => files.minimax = read(),
            EncoderKind::DeepSeekV3 if files.deepseek.is_none() => files.deepseek = read(),
            _ => {}
        }
    }
    let toks = build_tier_tokenizers(setup, &files, needed)
        .map_err(|e| SweepError::Data(e.to_string()))?;
    for f in &toks.fallbacks {
        notes.push(format!(
            "warning: tokenizers{}: {f} (get the native files with `routeval data fetch tokenizers`)",
            dir.as_deref()
                .map(|d| format!(" ({})", d.display()))
                .unwrap_or_default()
        ));
    }
    Ok(toks)
}

fn thresholds(spec: Option<&str>) -> Result<Option<Vec<f64>>, String> {
    spec.map(parse_thresholds)
        .transpose()
        .map_err(|e| e.to_string())
}

/// `routeval crb sweep --json` on `scores` (JSON Lines bytes; `scores_name` in messages):
/// `(report JSON, stderr lines, table)`. Arguments are the CLI's options.
#[pyfunction]
#[pyo3(signature = (scores, scores_name, *, bank=None, manifest=None, n=None, seed=42,
    benchmarks=Vec::new(), where_=None, on_missing_key=None, tokenizers=None,
    tokenizer_setup="native", thresholds_spec=None, target_pass_rate=None, max_cost_usd=None,
    pass_rate="trajectory", calibrate_on=None, calibrate_fraction=None))]
#[allow(clippy::too_many_arguments)]
fn crb_sweep(
    py: Python<'_>,
    scores: Vec<u8>,
    scores_name: &str,
    bank: Option<PathBuf>,
    manifest: Option<PathBuf>,
    n: Option<i64>,
    seed: i128,
    benchmarks: Vec<String>,
    where_: Option<String>,
    on_missing_key: Option<String>,
    tokenizers: Option<PathBuf>,
    tokenizer_setup: &str,
    thresholds_spec: Option<String>,
    target_pass_rate: Option<f64>,
    max_cost_usd: Option<f64>,
    pass_rate: &str,
    calibrate_on: Option<String>,
    calibrate_fraction: Option<f64>,
) -> PyResult<SweepOut> {
    let setup = TokenizerSetup::parse(tokenizer_setup).ok_or_else(|| {
        crb_err(format!(
            "--tokenizer-setup: unknown setup {tokenizer_setup:?} (expected native, hf_offline or all_cl100k)"
        ))
    })?;
    if let Some(d) = &tokenizers
        && !d.is_dir()
    {
        return Err(crb_err(format!(
            "--tokenizers {}: no such directory",
            d.display()
        )));
    }
    let omk: OnMissingKey = on_missing_key
        .as_deref()
        .unwrap_or("skip")
        .parse()
        .map_err(|e: QueryError| crb_err(format!("--on-missing-key: {e}")))?;
    let pass_rate: PassRate = pass_rate.parse().map_err(crb_err)?;
    let mut opts = CrbSweepOptions {
        thresholds: None,
        target_pass_rate,
        max_cost_usd,
        pass_rate,
        calibrate_on,
        calibrate_fraction,
        on_missing_key: omk,
        seed,
    };
    let calib_query = opts.validate().map_err(crb_err)?;
    let (bank, manifest, bank_source) = resolve_bank(bank, manifest)?;
    let where_query = where_
        .as_deref()
        .map(|t| {
            Query::parse_str(t)
                .map(|q| (q, omk))
                .map_err(|e| crb_err(format!("--where: {e}")))
        })
        .transpose()?;
    opts.thresholds = thresholds(thresholds_spec.as_deref()).map_err(crb_err)?;
    let subselected = n.is_some() || !benchmarks.is_empty() || where_.is_some();
    py.detach(move || {
        let mut notes = Vec::new();
        let (rows, sample_mode) = select_rows(
            &bank,
            manifest.as_deref(),
            SelectOptions {
                n,
                seed,
                benchmarks: &benchmarks,
            },
            where_query.as_ref(),
            &mut notes,
        )?;
        let mut tok_notes = Vec::new();
        let mut msgs = Vec::new();
        let report = routeval_sweep::crb::sweep(
            CrbRows {
                rows,
                sample_mode,
                subselected,
                bank: bank.display().to_string(),
                bank_source,
            },
            scores.as_slice(),
            scores_name,
            &opts,
            calib_query.as_ref(),
            &mut |needed| load_tokenizers(setup, tokenizers.as_deref(), needed, &mut tok_notes),
            setup.name(),
            &mut |line| msgs.push(line),
        )
        .map_err(crb_err)?;
        // The CLI prints the sweep's notes and warnings before loading the tokenizers, except
        // the "no threshold satisfies" note, which comes after.
        let (late, early): (Vec<String>, Vec<String>) = msgs
            .into_iter()
            .partition(|l| l.starts_with("note: no threshold satisfies"));
        notes.extend(early);
        notes.extend(tok_notes);
        notes.extend(late);
        let json = serde_json::to_string(&report.to_json()).map_err(crb_err)?;
        Ok((json, notes, report.render_text()))
    })
}

/// The GQR data for a sweep or a loader: the mirror `mirror` (built in memory, as `routeval
/// gqr export --from DIR`) or the build `build_dir` (default `<gqr cache>/build`), reading
/// `wanted` from a build.
fn gqr_data(
    build_dir: Option<PathBuf>,
    mirror: Option<PathBuf>,
    wanted: &[&str],
) -> PyResult<GqrData> {
    match (build_dir, mirror) {
        (Some(_), Some(_)) => Err(gqr_err(
            "give the data once: build_dir= (a build) or mirror= (a mirror of the sources)",
        )),
        (_, Some(m)) => GqrData::from_mirror(&m).map_err(|e| gqr_err(format!("mirror {e}"))),
        (b, None) => {
            let dir = match b {
                Some(d) => d,
                None => routeval_bench_data::gqr::store::build_dir(
                    &routeval_bench_data::cache::CacheDirs::from_process()
                        .map_err(gqr_err)?
                        .gqr
                        .path,
                ),
            };
            GqrData::from_build(&dir, wanted).map_err(gqr_err)
        }
    }
}

/// `routeval gqr sweep --json` on `scores` (JSON Lines bytes; `scores_name` in messages):
/// `(report JSON, stderr lines, table)`.
#[pyfunction]
#[pyo3(signature = (scores, scores_name, *, build_dir=None, mirror=None, unseen=false,
    thresholds_spec=None, calibrate_on=None))]
#[allow(clippy::too_many_arguments)]
fn gqr_sweep(
    py: Python<'_>,
    scores: Vec<u8>,
    scores_name: &str,
    build_dir: Option<PathBuf>,
    mirror: Option<PathBuf>,
    unseen: bool,
    thresholds_spec: Option<String>,
    calibrate_on: Option<String>,
) -> PyResult<SweepOut> {
    let opts = GqrSweepOptions {
        thresholds: thresholds(thresholds_spec.as_deref()).map_err(gqr_err)?,
        unseen,
        calibrate_on: calibrate_on
            .as_deref()
            .map(str::parse::<CalibrateOn>)
            .transpose()
            .map_err(gqr_err)?,
    };
    let wanted = opts.wanted_splits().map_err(gqr_err)?;
    py.detach(move || {
        let data = gqr_data(build_dir, mirror, &wanted)?;
        let mut notes = Vec::new();
        let report =
            routeval_sweep::gqr::sweep(&data, scores.as_slice(), scores_name, &opts, &mut |l| {
                notes.push(l)
            })
            .map_err(gqr_err)?;
        let json = serde_json::to_string(&report.to_json()).map_err(gqr_err)?;
        Ok((json, notes, report.render_text()))
    })
}

/// Columns `(ids, texts, labels, domains, datasets)` of a split.
type Columns = (
    Vec<String>,
    Vec<String>,
    Vec<i64>,
    Vec<&'static str>,
    Vec<String>,
);

/// Split columns in the order asked, and the missing sources `(name, reason)`.
type MirrorSplits = (Vec<Columns>, Vec<(String, String)>);

/// The splits `names` built in memory from the local mirror `dir` (as `routeval gqr export
/// --from DIR`: the same build, the same rows), each as columns `(ids, texts, labels,
/// domains, datasets)`, and the missing sources `(name, reason)`. A split the mirror cannot
/// build is a `GqrError` naming the missing sources it needs.
#[pyfunction]
fn gqr_read_mirror(py: Python<'_>, dir: PathBuf, names: Vec<String>) -> PyResult<MirrorSplits> {
    let data = py.detach(|| gqr_data(None, Some(dir), &[]))?;
    let mut out = Vec::with_capacity(names.len());
    for name in &names {
        let rows = data.split(name).map_err(gqr_err)?;
        let mut cols: Columns = (
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
        );
        for r in rows {
            cols.0.push(r.id.clone());
            cols.1.push(r.text.clone());
            cols.2.push(i64::from(r.label));
            cols.3.push(r.domain.name());
            cols.4.push(r.dataset.clone());
        }
        out.push(cols);
    }
    Ok((out, data.missing.clone()))
}
