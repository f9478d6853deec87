//! `routeval.crb` native part: CommonRouterBench question-bank selection
//! (`routeval_bench_data::crb`), records, the eval summary (`routeval_routing_scores::crb`,
//! tokens and prices from `routeval_tier_cost`) and `aggregate_routerbench_metrics`. Rows and
//! records cross as JSON text; banks are read with routeval's Python-compatible line rules.

use crate::CrbError;
use pyo3::prelude::*;
use routeval_bench_data::crb::{
    BankReader, BankRow, Manifest, check_row, published_manifest, read_bank, select_sample,
};
use routeval_core::Tier;
use routeval_core::py::{mark_big_ints, unmark_big_ints_owned};
use routeval_routing_scores::crb::metrics::{
    aggregate_routerbench_metrics, case_metrics_from_value,
};
use routeval_routing_scores::crb::records::{EvalRecord, Outcome, TierPrediction, make_record};
use routeval_routing_scores::crb::scores::{
    CrbMetrics, Selection, benchmark_counts, build_summary,
};
use routeval_routing_scores::crb::walk::WalkContext;
use routeval_tier_cost::tokens::{
    EncoderKind, TierTokenizers, TokenizerFiles, TokenizerSetup, build_tier_tokenizers,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CrbTokenizers>()?;
    m.add_function(wrap_pyfunction!(crb_select_rows, m)?)?;
    m.add_function(wrap_pyfunction!(crb_check_rows, m)?)?;
    m.add_function(wrap_pyfunction!(crb_make_records, m)?)?;
    m.add_function(wrap_pyfunction!(crb_build_summary, m)?)?;
    m.add_function(wrap_pyfunction!(crb_aggregate_metrics, m)?)?;
    m.add_function(wrap_pyfunction!(crb_default_bank, m)?)?;
    Ok(())
}

fn err(e: impl std::fmt::Display) -> PyErr {
    CrbError::new_err(e.to_string())
}

/// JSON text from Python (`json.dumps`); integers beyond 64 bits keep their digits
/// (`routeval_core::py::mark_big_ints`, as the bank reader does).
fn parse(json: &str, what: &str) -> PyResult<Value> {
    let marked = mark_big_ints(json).map_err(|e| err(format!("{what}: {e}")))?;
    serde_json::from_str(marked.as_deref().unwrap_or(json))
        .map_err(|e| err(format!("{what}: not valid JSON: {e}")))
}

/// JSON text for Python: marked big integers written back as bare integers.
fn text(v: &Value) -> String {
    unmark_big_ints_owned(v.to_string())
}

/// Rows given as JSONL text (Python's `json.dumps` of each row, so `NaN` literals are read as
/// Python reads them).
fn rows_of(jsonl: &str, source: &str) -> PyResult<Vec<BankRow>> {
    read_bank(jsonl.as_bytes(), source).map_err(err)
}

fn to_text(rows: Vec<BankRow>) -> Vec<String> {
    rows.into_iter().map(|r| text(&r.value)).collect()
}

/// The cached public bank and its manifest (`routeval data fetch crb`), or `None`.
#[pyfunction]
fn crb_default_bank() -> PyResult<Option<(String, String)>> {
    use routeval_bench_data::crb::public::{Registry, locate};
    let dirs = routeval_bench_data::cache::CacheDirs::from_process().map_err(err)?;
    let registry = Registry::load().map_err(err)?;
    let dir = registry.install_dir(&dirs.crb.path);
    Ok(locate(&registry, &dir).map_err(err)?.map(|p| {
        (
            p.bank.to_string_lossy().into_owned(),
            p.manifest.to_string_lossy().into_owned(),
        )
    }))
}

/// `select_question_bank_rows(n, seed, shard, manifest)`: `(rows as JSON texts,
/// sample_mode, quotas or None)`. `manifest_json`: the manifest's JSON text, or `None` for the
/// published line counts (the reference's shipped manifest).
#[pyfunction]
#[pyo3(signature = (shard, n, seed, manifest_json=None))]
#[allow(clippy::type_complexity)]
fn crb_select_rows(
    py: Python<'_>,
    shard: &str,
    n: Option<i64>,
    seed: i128,
    manifest_json: Option<&str>,
) -> PyResult<(Vec<String>, &'static str, Option<Vec<(String, i64)>>)> {
    let path = Path::new(shard);
    if !path.is_file() {
        return Err(err(format!("Question bank not found: {shard}")));
    }
    let open = || {
        std::fs::File::open(path)
            .map(std::io::BufReader::new)
            .map_err(|e| err(format!("{shard}: cannot read: {e}")))
    };
    match n {
        None => {
            let rows = py.detach(|| read_bank(open()?, shard).map_err(err))?;
            if rows.is_empty() {
                return Err(err(format!("No non-empty rows in {shard}")));
            }
            Ok((to_text(rows), "full_bank", None))
        }
        Some(n) => {
            let manifest = match manifest_json {
                Some(t) => Manifest::from_slice(t.as_bytes(), "manifest").map_err(err)?,
                None => published_manifest(),
            };
            let reader = BankReader::new(open()?, shard);
            let (quotas, rows) = py
                .detach(|| select_sample(reader, &manifest, n, seed))
                .map_err(err)?
                .map_err(err)?;
            Ok((to_text(rows), "proportional_sample", Some(quotas)))
        }
    }
}

/// Validate rows (JSONL text) as `evaluate_question_bank_rows` does before predicting, plus
/// routeval's range check of the gold tier; errors name the row (1-based position).
#[pyfunction]
fn crb_check_rows(rows_jsonl: &str) -> PyResult<()> {
    for r in rows_of(rows_jsonl, "rows")? {
        check_row(&r, "rows").map_err(err)?;
    }
    Ok(())
}

/// Records (JSON texts, the reference's keys) of rows (JSONL text) and their predictions:
/// each `(tier_id, usage JSON or None)` or an error message string.
#[pyfunction]
fn crb_make_records(rows_jsonl: &str, predictions: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let rows = rows_of(rows_jsonl, "rows")?;
    if rows.len() != predictions.len() {
        return Err(err(format!(
            "expected {} predictions, got {}",
            rows.len(),
            predictions.len()
        )));
    }
    let mut out = Vec::with_capacity(rows.len());
    for (r, p) in rows.into_iter().zip(predictions) {
        let c = check_row(&r, "rows").map_err(err)?;
        let gold = Tier::from_id(c.gold).ok_or_else(|| err("gold tier out of range"))?;
        let result = if let Ok(msg) = p.extract::<String>() {
            Err(msg)
        } else {
            let (tier_id, usage): (i64, Option<String>) = p.extract()?;
            let usage = usage.map(|u| parse(&u, "usage")).transpose()?;
            Ok(TierPrediction { tier_id, usage })
        };
        let mut rec = make_record(r.value, c.id, c.benchmark, gold, result).map_err(err)?;
        out.push(text(&rec.to_json()));
    }
    Ok(out)
}

/// A record dict (the reference's `rows` entry) back into an [`EvalRecord`].
fn record_of(v: Value) -> PyResult<EvalRecord> {
    let Value::Object(mut m) = v else {
        return Err(err("a record must be an object"));
    };
    let id = m
        .get("id")
        .cloned()
        .ok_or_else(|| err("record has no id"))?;
    let benchmark = m
        .get("benchmark")
        .and_then(Value::as_str)
        .ok_or_else(|| err(format!("record {id}: missing string benchmark")))?
        .to_string();
    let gold_raw = m.get("gold_tier_id").cloned().unwrap_or(Value::Null);
    let gold = match &gold_raw {
        Value::Bool(b) => Some(*b as i64),
        v => v.as_i64(),
    }
    .and_then(Tier::from_id)
    .ok_or_else(|| err(format!("record {id}: gold_tier_id must be an int 0..3")))?;
    let outcome = match (m.get("error"), m.get("pred_tier_id")) {
        (Some(e), _) => Outcome::Error(e.as_str().map_or_else(|| e.to_string(), str::to_string)),
        (None, Some(p)) => Outcome::Predicted {
            pred: p.as_i64().and_then(Tier::from_id).ok_or_else(|| {
                err(format!(
                    "record {id}: pred_tier_id {p} is out of range (expected 0..3: low, mid, mid_high, high; the reference raises KeyError: {p})"
                ))
            })?,
            usage: m.get("usage").cloned(),
        },
        (None, None) => return Err(err(format!("record {id}: neither pred_tier_id nor error"))),
    };
    let instance_id = m.get("instance_id").cloned().unwrap_or_else(|| id.clone());
    let step_index = m.get("step_index").cloned().unwrap_or(Value::from(1));
    let total_steps = m.get("total_steps").cloned().unwrap_or(Value::from(1));
    let messages = m.remove("messages").unwrap_or(Value::Array(Vec::new()));
    Ok(EvalRecord {
        id,
        benchmark,
        gold,
        gold_raw,
        outcome,
        instance_id,
        step_index,
        total_steps,
        messages,
    })
}

/// Loaded per-tier tokenizers (`routeval.crb.Tokenizers`): load once, reuse for many evals.
#[pyclass(module = "routeval._native", frozen)]
pub(crate) struct CrbTokenizers {
    toks: TierTokenizers,
    dir: Option<PathBuf>,
}

#[pymethods]
impl CrbTokenizers {
    /// Load the encoders of `setup` (`native`, `hf_offline`, `all_cl100k`) from `dir`
    /// (`<name>/tokenizer.json`; default: routeval's tokenizer cache, as `routeval crb eval`).
    /// A tier whose file is absent falls back as the reference does offline (listed in
    /// `fallbacks`).
    #[new]
    #[pyo3(signature = (dir=None, setup="native"))]
    fn new(py: Python<'_>, dir: Option<PathBuf>, setup: &str) -> PyResult<Self> {
        let s = TokenizerSetup::parse(setup).ok_or_else(|| {
            err(format!(
                "unknown tokenizer setup {setup:?} (expected native, hf_offline or all_cl100k)"
            ))
        })?;
        if let Some(d) = &dir
            && !d.is_dir()
        {
            return Err(err(format!(
                "tokenizers {}: no such directory",
                d.display()
            )));
        }
        let dir = dir.or_else(|| {
            routeval_bench_data::cache::CacheDirs::from_process()
                .ok()
                .map(|d| d.tokenizers.path)
        });
        let needed = [true; 4];
        let mut files = TokenizerFiles::default();
        for t in Tier::ALL {
            let k = s.encoder_for(t);
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
        let toks = py
            .detach(|| build_tier_tokenizers(s, &files, needed))
            .map_err(err)?;
        Ok(CrbTokenizers { toks, dir })
    }

    /// The encoder used per tier, `{tier: name}`.
    fn encoders(&self) -> Vec<(&'static str, String)> {
        let names = self.toks.encoder_names();
        Tier::ALL
            .iter()
            .map(|t| (t.name(), names[*t as usize].clone()))
            .collect()
    }

    /// Fallbacks taken (a tier's file missing).
    #[getter]
    fn fallbacks(&self) -> Vec<String> {
        self.toks.fallbacks.clone()
    }

    /// The directory read, if any.
    #[getter]
    fn dir(&self) -> Option<String> {
        self.dir.as_ref().map(|d| d.to_string_lossy().into_owned())
    }
}

/// `build_eval_summary`: records (JSON texts) → the summary's JSON text (non-finite floats as
/// `null`; the Python side restores NaN). `selection_json` = `{"shard", "sample_mode", "seed",
/// "proportional_quotas", "benchmark_counts"}` (counts `null` = from the records).
#[pyfunction]
#[pyo3(signature = (records_json, label, selection_json, tokenizers, extra_json=None))]
fn crb_build_summary(
    py: Python<'_>,
    records_json: Vec<String>,
    label: &str,
    selection_json: &str,
    tokenizers: &CrbTokenizers,
    extra_json: Option<&str>,
) -> PyResult<String> {
    let mut records = records_json
        .iter()
        .map(|t| parse(t, "record").and_then(record_of))
        .collect::<PyResult<Vec<_>>>()?;
    let sel = parse(selection_json, "selection")?;
    let quotas = match sel.get("proportional_quotas") {
        Some(Value::Object(q)) => Some(
            q.iter()
                .map(|(k, v)| (k.clone(), v.as_i64().unwrap_or(0)))
                .collect(),
        ),
        _ => None,
    };
    let counts = match sel.get("benchmark_counts") {
        Some(Value::Object(c)) => c
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
            .collect(),
        _ => benchmark_counts(records.iter().map(|r| r.benchmark.as_str())),
    };
    let selection = Selection {
        shard: sel
            .get("shard")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .into(),
        sample_mode: sel
            .get("sample_mode")
            .and_then(Value::as_str)
            .unwrap_or("full_bank")
            .into(),
        seed: sel.get("seed").cloned().unwrap_or(Value::Null),
        quotas,
        benchmark_counts: counts,
    };
    let extra = match extra_json {
        None => None,
        Some(t) => match parse(t, "extra_summary")? {
            Value::Object(m) => Some(m),
            _ => return Err(err("extra_summary must be a dict")),
        },
    };
    let summary = py.detach(|| -> Result<String, String> {
        let mut ctx = WalkContext::new(&records, &tokenizers.toks);
        let m = CrbMetrics::compute(&records, &mut ctx).map_err(|e| {
            let rec = &records[e.record()];
            format!(
                "row {}: {}",
                routeval_bench_data::crb::id_repr(&rec.id),
                e.problem()
            )
        })?;
        let s = build_summary(label, &selection, &mut records, &m, extra.as_ref(), true);
        Ok(text(&Value::Object(s)))
    });
    summary.map_err(err)
}

/// `aggregate_routerbench_metrics(cases, cap_cost_score_at_100)` on the JSON text of the case
/// dicts; the result's JSON text (non-finite as `null`).
#[pyfunction]
fn crb_aggregate_metrics(cases_json: &str, cap_cost_score_at_100: bool) -> PyResult<String> {
    let cases = match parse(cases_json, "cases")? {
        Value::Array(v) => v,
        _ => return Err(err("cases must be a list")),
    };
    let cases = cases
        .iter()
        .map(case_metrics_from_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    Ok(text(
        &aggregate_routerbench_metrics(&cases, cap_cost_score_at_100).map_err(err)?,
    ))
}
