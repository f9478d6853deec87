//! One `crb eval` run as a typed value ([`EvalReport`]): the scores, the reference's summary
//! with routeval's own keys (bank, tokenizers, `--ci` intervals, `--baseline-predictor`
//! comparison), the text table and the records. The table, `--json`, `--format md` and
//! `--html` (`routeval_views::crb::{eval_text, eval_json, eval_report_document}`) all render
//! one `EvalReport`, so a block cannot exist in one face and not another. Scores are the
//! reference's percentages; costs USD; token counts from the tier tokenizers.

use super::records::EvalRecord;
use super::resample::{BaselineComparison, ScoresV2Units, case_pass_mcnemar};
use super::scores::{CrbMetrics, Selection, build_summary};
use super::table::EvalTable;
use routeval_core::Tier;
use serde_json::{Map, Value, json};

/// The public bank a run read (without `--bank`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicBank {
    /// The public bank's name.
    pub public: String,
    /// The bank file as shown.
    pub bank: String,
    /// The manifest as shown, when one was read.
    pub manifest: Option<String>,
}

/// The tokenizers a run priced with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenizerInfo {
    /// The setup's name (`native`, `hf_offline`, `all_cl100k`).
    pub setup: String,
    /// The encoder of each tier, in tier order (low..high).
    pub encoders: [String; 4],
    /// One line per tier counted with another encoder than the setup's.
    pub fallbacks: Vec<String>,
}

/// `--baseline-predictor`: the baseline's spec, records and scores on the same rows.
#[derive(Debug, Clone, Copy)]
pub struct BaselineRun<'a> {
    /// The spec as given.
    pub spec: &'a str,
    /// Its records.
    pub records: &'a [EvalRecord],
    /// Its scores.
    pub metrics: &'a CrbMetrics,
}

/// What [`assemble`] reports on.
#[derive(Debug)]
pub struct EvalInput<'a> {
    /// The predictor's spec as given.
    pub predictor: &'a str,
    /// The bank as shown.
    pub bank: String,
    /// The row selection.
    pub selection: Selection,
    /// `sample` or `full` (the table's header).
    pub sample_mode: &'a str,
    /// The evaluated records (their messages move into the summary's `rows`).
    pub records: Vec<EvalRecord>,
    /// The scores of `records`.
    pub metrics: CrbMetrics,
    /// Put every row into the summary (`--json`).
    pub include_rows: bool,
    /// The public bank, when one was used.
    pub public: Option<PublicBank>,
    /// The tokenizers.
    pub tokenizers: TokenizerInfo,
    /// `--ci`: the level (a fraction in (0, 1)); `None` = no intervals.
    pub ci_level: Option<f64>,
    /// Bootstrap replicates (`--ci`, baseline).
    pub replicates: u64,
    /// Bootstrap seed.
    pub seed: u64,
    /// `--baseline-predictor`.
    pub baseline: Option<BaselineRun<'a>>,
}

/// Why [`assemble`] failed: the baseline is not on the run's rows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// The baseline's trajectories differ from the run's.
    #[error("the trajectories differ")]
    TrajectoriesDiffer,
    /// The baseline's rows differ from the run's.
    #[error("the rows differ")]
    RowsDiffer,
}

/// One `crb eval` run.
#[derive(Debug, Clone)]
pub struct EvalReport {
    /// The predictor's spec as given.
    pub predictor: String,
    /// The bank as shown.
    pub bank: String,
    /// The scores.
    pub metrics: CrbMetrics,
    /// The records (messages moved into `summary`).
    pub records: Vec<EvalRecord>,
    /// The reference's summary (`--json`'s keys), then `routeval_bank` (public bank only),
    /// `routeval_tokenizers`, `ci` (`--ci`), `baseline` (`--baseline-predictor`).
    pub summary: Map<String, Value>,
    /// The text table.
    pub table: EvalTable,
    /// The tokenizers' fallback lines (the report's notes).
    pub fallbacks: Vec<String>,
    /// `--ci`: whole trajectories resampled within each benchmark.
    pub intervals: Option<routeval_stats::Intervals>,
    /// `--baseline-predictor`: paired trajectory bootstrap of the deltas, McNemar on case pass.
    pub comparison: Option<BaselineComparison>,
}

/// The paired comparison of a run with its baseline at `level`.
fn compare(
    units: &ScoresV2Units,
    records: &[EvalRecord],
    b: &BaselineRun<'_>,
    level: f64,
    replicates: u64,
    seed: u64,
) -> Result<BaselineComparison, EvalError> {
    let bunits = ScoresV2Units::from_walk(b.records, &b.metrics.steps);
    let deltas = units
        .compare(&bunits, level, replicates, seed)
        .ok_or(EvalError::TrajectoriesDiffer)?;
    let mcnemar = case_pass_mcnemar(records, b.records).ok_or(EvalError::RowsDiffer)?;
    Ok(BaselineComparison {
        predictor: b.spec.to_string(),
        level,
        replicates,
        seed,
        deltas,
        mcnemar,
        rows: records.len() as u64,
    })
}

/// Assemble the report of a run: intervals, the baseline comparison (at the `--ci` level,
/// default 0.95), the summary and the table.
///
/// # Errors
/// [`EvalError`] when the baseline is not on the run's rows.
pub fn assemble(input: EvalInput<'_>) -> Result<EvalReport, EvalError> {
    let EvalInput {
        predictor,
        bank,
        selection,
        sample_mode,
        mut records,
        metrics: m,
        ..
    } = input;
    let units = ScoresV2Units::from_walk(&records, &m.steps);
    let intervals = input
        .ci_level
        .map(|level| units.intervals(level, input.replicates, input.seed));
    let comparison = match &input.baseline {
        None => None,
        Some(b) => {
            let level = input.ci_level.unwrap_or(0.95);
            Some(compare(
                &units,
                &records,
                b,
                level,
                input.replicates,
                input.seed,
            )?)
        }
    };
    let mut summary = build_summary(
        predictor,
        &selection,
        &mut records,
        &m,
        None,
        input.include_rows,
    );
    let tk = &input.tokenizers;
    let mut enc = Map::new();
    for t in Tier::ALL {
        enc.insert(
            t.name().into(),
            Value::String(tk.encoders[t as usize].clone()),
        );
    }
    if let Some(p) = &input.public {
        summary.insert(
            "routeval_bank".into(),
            json!({"public": p.public, "bank": p.bank, "manifest": p.manifest}),
        );
    }
    summary.insert(
        "routeval_tokenizers".into(),
        json!({"setup": tk.setup, "encoders": enc, "fallbacks": tk.fallbacks}),
    );
    if let Some(iv) = &intervals {
        summary.insert("ci".into(), serde_json::to_value(iv).unwrap_or(Value::Null));
    }
    if let Some(c) = &comparison {
        summary.insert(
            "baseline".into(),
            serde_json::to_value(c).unwrap_or_default(),
        );
    }
    let table = EvalTable::new(
        predictor,
        sample_mode,
        records.len() as u64,
        records.iter().filter(|r| r.is_error()).count() as u64,
        &m,
    )
    .with_tokenizers(&tk.setup, &tk.fallbacks)
    .with_public_bank(input.public.as_ref().map(|p| p.public.as_str()));
    Ok(EvalReport {
        predictor: predictor.to_string(),
        bank,
        metrics: m,
        records,
        summary,
        table,
        fallbacks: tk.fallbacks.clone(),
        intervals,
        comparison,
    })
}

/// The tiers whose tokenizers a run needs: `high` always (the baseline path), then every gold
/// and predicted tier of `records`.
pub fn needed_tiers<'a>(records: impl IntoIterator<Item = &'a EvalRecord>) -> [bool; 4] {
    let mut needed = [false; 4];
    needed[Tier::High as usize] = true;
    for r in records {
        needed[r.gold as usize] = true;
        if let Some(p) = r.pred() {
            needed[p as usize] = true;
        }
    }
    needed
}
