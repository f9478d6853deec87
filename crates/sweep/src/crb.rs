//! CommonRouterBench tier-threshold sweep (`routeval crb sweep`, `routeval.crb.sweep`).
//!
//! Input: one `{"id", "tier_probs": [p_low, p_mid, p_mid_high, p_high]}` per bank row
//! ([`read_tier_scores`]). At threshold τ a row goes to the cheapest tier whose cumulative
//! probability reaches τ (`routeval_frontier::threshold::cumulative_tier`). Each point carries
//! the blocks `crb eval` prints for those predictions (`routeval_routing_scores::crb::sweep::
//! evaluate_tiers`), computed on one walk context, so every token count is computed once.
//!
//! Choosing τ: a target pass rate (the cheapest point whose pass rate reaches P percent) or a
//! budget (the best pass rate within C USD). With a calibration (`calibrate_on`, a `where`
//! query on bank rows, or `calibrate_fraction`, a seeded share of the trajectories) the curve
//! is traced and τ chosen on the calibration trajectories only, and the other rows are
//! reported at that τ (never the same rows).

use crate::SweepError;
use routeval_bench_data::crb::{BankRow, check_row, id_repr};
use routeval_core::Tier;
use routeval_frontier::ndch::{aiq, ndch_hull, pareto};
use routeval_frontier::threshold::{
    PickRule, check_probs, cumulative, cumulative_tier, pick_threshold, thin_grid,
};
use routeval_query_dsl::{OnMissingKey, Query};
use routeval_routing_scores::crb::records::{EvalRecord, TierPrediction, id_key, make_record};
use routeval_routing_scores::crb::scores::num;
use routeval_routing_scores::crb::sweep::{SweepPoint, evaluate_tiers};
use routeval_routing_scores::crb::walk::{WalkContext, WalkError};
use routeval_tier_cost::tokens::TierTokenizers;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::BufRead;

/// At most this many thresholds in the default grid.
pub const DEFAULT_MAX_THRESHOLDS: usize = 1000;

/// Which pass rate is the quality axis (and what a target pass rate means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PassRate {
    /// `scores_v2.trajectory_pass_rate_percent` (row-weighted; a trajectory passes when no
    /// step is under-routed).
    #[default]
    Trajectory,
    /// `scores_v2.case_pass_rate_percent` (rows with predicted tier ≥ gold).
    Case,
}

impl std::str::FromStr for PassRate {
    type Err = SweepError;
    fn from_str(s: &str) -> Result<Self, SweepError> {
        match s {
            "trajectory" => Ok(PassRate::Trajectory),
            "case" => Ok(PassRate::Case),
            o => Err(SweepError::input(format!(
                "pass_rate: {o:?} is not one of trajectory, case"
            ))),
        }
    }
}

impl PassRate {
    /// The `scores_v2` key: `trajectory_pass_rate_percent` or `case_pass_rate_percent`.
    pub fn key(self) -> &'static str {
        match self {
            PassRate::Trajectory => "trajectory_pass_rate_percent",
            PassRate::Case => "case_pass_rate_percent",
        }
    }

    /// This pass rate of a point (percent).
    pub fn of(self, p: &SweepPoint) -> f64 {
        match self {
            PassRate::Trajectory => p.scores_v2.trajectory_pass_rate_percent(),
            PassRate::Case => p.scores_v2.case_pass_rate_percent(),
        }
    }
}

/// What to sweep and how to choose τ (the options of `crb sweep` after the row selection).
#[derive(Debug, Clone, Default)]
pub struct CrbSweepOptions {
    /// The thresholds (`routeval_frontier::threshold::parse_thresholds`); `None`: 0, 1 and
    /// every distinct cumulative probability of the swept rows, thinned to at most
    /// [`DEFAULT_MAX_THRESHOLDS`].
    pub thresholds: Option<Vec<f64>>,
    /// Choose τ: the cheapest point whose pass rate (percent) reaches this.
    pub target_pass_rate: Option<f64>,
    /// Choose τ: the best pass rate whose predicted-path cost is at most this (USD).
    pub max_cost_usd: Option<f64>,
    /// The quality axis.
    pub pass_rate: PassRate,
    /// Calibrate on the trajectories whose first row this `where` query (JSON text) selects.
    pub calibrate_on: Option<String>,
    /// Calibrate on this fraction (0 < F < 1) of the trajectories, drawn with `seed`.
    pub calibrate_fraction: Option<f64>,
    /// A missing path in `calibrate_on`: skip the row or fail.
    pub on_missing_key: OnMissingKey,
    /// The seed of `calibrate_fraction` (also the sample's seed, reported with it).
    pub seed: i128,
}

impl CrbSweepOptions {
    /// Check the options before any row is read: finite target and budget, not both, not
    /// both calibrations, a fraction strictly between 0 and 1, a `calibrate_on` query that
    /// parses (returned). Messages name the CLI's flags.
    pub fn validate(&self) -> Result<Option<Query>, SweepError> {
        if self.target_pass_rate.is_some() && self.max_cost_usd.is_some() {
            return Err(SweepError::input(
                "give one way to choose the threshold: --target-pass-rate or --max-cost-usd",
            ));
        }
        if self.calibrate_on.is_some() && self.calibrate_fraction.is_some() {
            return Err(SweepError::input(
                "give one calibration: --calibrate-on or --calibrate-fraction",
            ));
        }
        for (name, v) in [
            ("--target-pass-rate", self.target_pass_rate),
            ("--max-cost-usd", self.max_cost_usd),
        ] {
            if let Some(x) = v
                && !x.is_finite()
            {
                return Err(SweepError::input(format!(
                    "{name}: {x} is not a finite number"
                )));
            }
        }
        // A negative target is met by every point (the cheapest wins silently): refused. A
        // target above 100 is kept on purpose: no point reaches it and the report says so.
        if let Some(p) = self.target_pass_rate
            && p < 0.0
        {
            return Err(SweepError::input(format!(
                "--target-pass-rate {p}: a pass rate in percent cannot be negative (every threshold would meet it)"
            )));
        }
        if let Some(c) = self.max_cost_usd
            && c < 0.0
        {
            return Err(SweepError::input(format!(
                "--max-cost-usd {c}: a cost in USD cannot be negative"
            )));
        }
        if let Some(t) = &self.thresholds {
            crate::check_thresholds(t)?;
        }
        if let Some(f) = self.calibrate_fraction
            && !(f > 0.0 && f < 1.0)
        {
            return Err(SweepError::input(format!(
                "--calibrate-fraction {f}: must be strictly between 0 and 1"
            )));
        }
        self.calibrate_on
            .as_deref()
            .map(|t| {
                Query::parse_str(t).map_err(|e| SweepError::input(format!("--calibrate-on: {e}")))
            })
            .transpose()
    }
}

/// The selected bank rows and where they came from (names for messages and the report).
#[derive(Debug, Clone)]
pub struct CrbRows {
    /// The rows, selected as `crb eval` selects them.
    pub rows: Vec<BankRow>,
    /// `full_bank` or `proportional_sample`.
    pub sample_mode: &'static str,
    /// Whether rows were sub-selected (`n`, benchmarks, `where`): score lines for other ids
    /// are then ignored with a warning instead of being an error.
    pub subselected: bool,
    /// The bank's name in messages (its path, `<stdin>`).
    pub bank: String,
    /// For the cached public bank: its one-line description (the report's `bank_source`).
    pub bank_source: Option<String>,
}

/// Parsed scores: id → (probabilities, line), ids in file order, vectors not summing to 1.
#[derive(Debug, Clone, Default)]
pub struct TierScores {
    by_id: HashMap<String, ([f64; 4], u64)>,
    order: Vec<(String, u64)>,
    off_sum: usize,
    first_off_sum: Option<u64>,
}

/// Read `{"id", "tier_probs": [p_low, p_mid, p_mid_high, p_high]}` lines from `reader`
/// (`name` in messages). Ids are compared as `crb eval` compares them (`id_key`: a number
/// and its string are the same id). Errors name `name:LINE`: invalid JSON, no `id`, no or
/// bad `tier_probs`, a repeated id. Blank lines are skipped.
pub fn read_tier_scores<R: BufRead>(reader: R, name: &str) -> Result<TierScores, SweepError> {
    let mut s = TierScores::default();
    for (i, line) in reader.lines().enumerate() {
        let ln = i as u64 + 1;
        let bad = |m: String| SweepError::input(format!("{name}:{ln}: {m}"));
        let line = line.map_err(|e| bad(format!("cannot read: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line.trim()).map_err(|e| bad(format!("invalid JSON: {e}")))?;
        let id = v
            .get("id")
            .map(id_key)
            .ok_or_else(|| bad("line has no \"id\"".into()))?;
        let probs = v
            .get("tier_probs")
            .ok_or_else(|| bad(format!("row {id:?} has no \"tier_probs\"")))?;
        let (p, off) = check_probs::<4>("tier_probs", probs).map_err(|e| bad(e.to_string()))?;
        if off {
            s.off_sum += 1;
            s.first_off_sum.get_or_insert(ln);
        }
        if s.by_id.insert(id.clone(), (p, ln)).is_some() {
            return Err(bad(format!("duplicate id {id:?}")));
        }
        s.order.push((id, ln));
    }
    Ok(s)
}

/// Warnings about rows sharing `(instance_id, step_index)` (the reference costs the earlier
/// one at the later one's position). Shared with `crb eval`.
pub fn duplicate_step_warnings(rows: &[BankRow], source: &str) -> Vec<String> {
    let mut seen: HashMap<(String, String), u64> = HashMap::new();
    let mut out = Vec::new();
    for r in rows {
        let iid = r
            .value
            .get("instance_id")
            .or_else(|| r.value.get("id"))
            .map(|v| v.to_string())
            .unwrap_or_default();
        let step = r
            .value
            .get("step_index")
            .map(|v| v.to_string())
            .unwrap_or_else(|| "1".into());
        if let Some(first) = seen.insert((iid.clone(), step.clone()), r.line) {
            out.push(format!(
                "{source}:{}: step_index {step} repeats line {first} in trajectory {iid}; the reference costs the earlier row at the later row's position (reproduced)",
                r.line
            ));
        }
    }
    out
}

/// The warning lines the CLI prints for `warnings` (`warning: ...`, at most 20, then a count).
pub fn warning_lines(warnings: &[String]) -> Vec<String> {
    let mut out: Vec<String> = warnings
        .iter()
        .take(20)
        .map(|w| format!("warning: {w}"))
        .collect();
    if warnings.len() > 20 {
        out.push(format!(
            "warning: ... and {} more warnings",
            warnings.len() - 20
        ));
    }
    out
}

/// A seed as JSON (an integer beyond 64 bits kept exact).
pub fn seed_value(seed: i128) -> Value {
    i64::try_from(seed).map(Value::from).unwrap_or_else(|_| {
        serde_json::Number::from_u128(seed as u128).map_or(Value::Null, Value::Number)
    })
}

/// The trajectory key of a bank row (`instance_id`, default its id), as text.
fn trajectory_key(v: &Value) -> String {
    v.get("instance_id")
        .or_else(|| v.get("id"))
        .map(|k| k.to_string())
        .unwrap_or_default()
}

/// One side of the sweep: records (predictions replaced per threshold), their probabilities,
/// bank lines.
#[derive(Default)]
struct Side {
    records: Vec<EvalRecord>,
    probs: Vec<[f64; 4]>,
    lines: Vec<u64>,
}

impl Side {
    fn tiers_at(&self, tau: f64) -> Vec<Tier> {
        self.probs.iter().map(|p| cumulative_tier(p, tau)).collect()
    }
}

fn walk_failure(bank_name: &str, side: &Side, e: WalkError) -> SweepError {
    let i = e.record();
    let what = e.problem();
    SweepError::data(format!(
        "{bank_name}:{}: row {}: {what}",
        side.lines.get(i).copied().unwrap_or(0),
        side.records
            .get(i)
            .map(|r| id_repr(&r.id))
            .unwrap_or_default()
    ))
}

/// Sweep `side` over `grid`: one point per threshold (a threshold giving the same tiers as the
/// previous one reuses its point).
fn sweep_side(
    side: &mut Side,
    grid: &[f64],
    toks: &TierTokenizers,
    needed: &[Tier],
    bank_name: &str,
) -> Result<Vec<SweepPoint>, SweepError> {
    let mut points: Vec<SweepPoint> = Vec::with_capacity(grid.len());
    let mut ctx = WalkContext::new(&side.records, toks);
    ctx.prefill_tiers(needed);
    let mut prev: Option<Vec<Tier>> = None;
    for &tau in grid {
        let tiers = side.tiers_at(tau);
        if prev.as_ref() == Some(&tiers)
            && let Some(last) = points.last()
        {
            points.push(last.clone());
            continue;
        }
        let p = evaluate_tiers(&mut side.records, &tiers, &mut ctx)
            .map_err(|e| walk_failure(bank_name, side, e))?;
        points.push(p);
        prev = Some(tiers);
    }
    Ok(points)
}

/// One point as JSON: `threshold` then the point's `crb eval` blocks.
pub fn point_json(tau: f64, p: &SweepPoint) -> Value {
    let mut m = Map::new();
    m.insert("threshold".into(), num(tau));
    m.extend(p.to_json());
    Value::Object(m)
}

/// The sweep's result: `routeval crb sweep`'s report.
#[derive(Debug, Clone)]
pub struct CrbSweepReport {
    /// The bank's name.
    pub bank: String,
    /// The cached public bank's description, when it was used.
    pub bank_source: Option<String>,
    /// The scores' name.
    pub scores: String,
    /// `full_bank` or `proportional_sample`.
    pub sample_mode: &'static str,
    /// Whether the curve was traced on calibration rows only.
    pub calibrated: bool,
    /// Rows swept (the calibration rows when calibrating).
    pub rows: usize,
    /// The quality axis.
    pub pass_rate: PassRate,
    /// The thresholds, in order.
    pub grid: Vec<f64>,
    /// One point per threshold.
    pub points: Vec<SweepPoint>,
    /// The NDCH of (`cost_usd`, pass rate) over the points with finite values.
    pub ndch: Vec<(f64, f64)>,
    /// RouterBench's AIQ of [`ndch`](Self::ndch) (pass-rate units; NaN when undefined).
    pub aiq: f64,
    /// The largest cost of the NDCH (AIQ's normaliser).
    pub max_cost: f64,
    /// The Pareto set of the finite (`cost_usd`, pass rate) points.
    pub pareto: Vec<(f64, f64)>,
    /// The chosen threshold, if a rule was given and a threshold satisfies it.
    pub chosen_threshold: Option<f64>,
    /// `--json`'s `chosen` block (`null` without a rule).
    pub chosen: Value,
    /// The table's closing line(s) about the choice.
    pub chosen_text: String,
    /// `--json`'s `routeval_tokenizers` block (`{"setup", "encoders", "fallbacks"}`).
    pub tokenizers: Value,
    /// The figures to quote, in order: with a chosen τ, τ and the pass rate and cost at it on
    /// the **held-out** rows when calibrating (labelled `held-out (N rows)`), else on the same
    /// rows (labelled `same rows: optimistic`); then the AIQ of the swept rows.
    pub headline: Vec<crate::Figure>,
    /// What qualifies the headline (a choice that saw the rows it is reported on, a curve
    /// traced on calibration rows only, no threshold satisfying the rule); every face prints
    /// them.
    pub caveats: Vec<String>,
}

impl CrbSweepReport {
    /// `routeval crb sweep --json`: `{"bank", "bank_source"?, "scores", "sample_mode",
    /// "rule", "swept_rows", "rows", "points", "frontier", "chosen", "headline" ([`crate::
    /// figures_json`] of [`headline`](Self::headline)), "caveats", "routeval_tokenizers"}`.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("bank".into(), json!(self.bank));
        if let Some(p) = &self.bank_source {
            o.insert("bank_source".into(), json!(p));
        }
        o.insert("scores".into(), json!(self.scores));
        o.insert("sample_mode".into(), json!(self.sample_mode));
        o.insert(
            "rule".into(),
            json!("cheapest tier t with p_low + ... + p_t >= threshold (high if none)"),
        );
        o.insert(
            "swept_rows".into(),
            json!(if self.calibrated {
                "calibration"
            } else {
                "all"
            }),
        );
        o.insert("rows".into(), json!(self.rows));
        o.insert(
            "points".into(),
            Value::Array(
                self.grid
                    .iter()
                    .zip(&self.points)
                    .map(|(t, p)| point_json(*t, p))
                    .collect(),
            ),
        );
        o.insert(
            "frontier".into(),
            json!({
                "x": "cost_usd",
                "y": self.pass_rate.key(),
                "aiq": num(self.aiq),
                "max_cost": num(self.max_cost),
                "ndch": self.ndch.iter().map(|(c, q)| json!([num(*c), num(*q)])).collect::<Vec<_>>(),
                "pareto": self.pareto.iter().map(|(c, q)| json!([num(*c), num(*q)])).collect::<Vec<_>>(),
            }),
        );
        o.insert("chosen".into(), self.chosen.clone());
        o.insert("headline".into(), crate::figures_json(&self.headline));
        o.insert("caveats".into(), json!(self.caveats));
        o.insert("routeval_tokenizers".into(), self.tokenizers.clone());
        Value::Object(o)
    }

    /// The table `routeval crb sweep` prints.
    pub fn render_text(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "CommonRouterBench threshold sweep: {} thresholds on {} rows ({})",
            self.grid.len(),
            self.rows,
            if self.calibrated {
                "calibration rows"
            } else {
                "all selected rows"
            }
        );
        if let Some(p) = &self.bank_source {
            let _ = writeln!(t, "{p}");
        }
        let _ = writeln!(
            t,
            "{:>10} {:>9} {:>9} {:>9} {:>9} {:>12}  {:>5} {:>5} {:>5} {:>5}",
            "threshold",
            "case%",
            "traj%",
            "savings%",
            "combined",
            "cost_usd",
            "low",
            "mid",
            "m_hi",
            "high"
        );
        let pctf = |x: f64| {
            if x.is_finite() {
                format!("{x:.2}")
            } else {
                "n/a".into()
            }
        };
        for (tau, p) in self.grid.iter().zip(&self.points) {
            let n = p.tier_counts.iter().sum::<u64>().max(1) as f64;
            let sh: Vec<String> = p
                .tier_counts
                .iter()
                .map(|c| format!("{:.2}", *c as f64 / n))
                .collect();
            let _ = writeln!(
                t,
                "{:>10.6} {:>9} {:>9} {:>9} {:>9} {:>12.6}  {:>5} {:>5} {:>5} {:>5}",
                tau,
                pctf(p.scores_v2.case_pass_rate_percent()),
                pctf(p.scores_v2.trajectory_pass_rate_percent()),
                pctf(p.scores_v2.cost_savings_score_percent),
                pctf(p.scores_v2.combined_score_percent()),
                p.cost_usd,
                sh[0],
                sh[1],
                sh[2],
                sh[3]
            );
        }
        let _ = writeln!(
            t,
            "frontier ({} vs cost_usd): AIQ {}, {} NDCH points, {} Pareto points",
            self.pass_rate.key(),
            pctf(self.aiq),
            self.ndch.len(),
            self.pareto.len()
        );
        t.push_str(&self.chosen_text);
        t.push_str(&crate::headline_text(&self.headline, &self.caveats));
        t
    }
}

/// Sweep the tier threshold over `rows` with the probabilities read from `scores`
/// (`scores_name` in messages).
///
/// * `calibrate_on`: [`CrbSweepOptions::validate`]'s query (validate first).
/// * `load_tokenizers(needed)`: the tier tokenizers of the tiers marked `true` (every tier a
///   swept row can be routed to, and every gold tier); called once, after the scores are read.
/// * `setup_name`: the tokenizer setup's name for the report.
/// * `message`: the stderr lines the CLI prints, in order (`warning: ...`, `note: ...`).
///
/// Errors ([`SweepError`]): a bad bank row, a bad or missing score line, an id not in the
/// bank (when rows were not sub-selected), a calibration leaving one side empty, a row that
/// cannot be costed, tokenizers that cannot be built.
#[allow(clippy::too_many_arguments)]
pub fn sweep<R: BufRead>(
    input: CrbRows,
    scores: R,
    scores_name: &str,
    opts: &CrbSweepOptions,
    calibrate_on: Option<&Query>,
    load_tokenizers: &mut dyn FnMut([bool; 4]) -> Result<TierTokenizers, SweepError>,
    setup_name: &str,
    message: &mut dyn FnMut(String),
) -> Result<CrbSweepReport, SweepError> {
    opts.validate()?;
    let CrbRows {
        rows,
        sample_mode,
        subselected,
        bank: bank_name,
        bank_source,
    } = input;
    let omk = opts.on_missing_key;
    // 1. Rows, checked as `crb eval` checks them.
    let mut warnings = Vec::new();
    let mut checked = Vec::with_capacity(rows.len());
    for r in &rows {
        let c = check_row(r, &bank_name).map_err(SweepError::data)?;
        warnings.extend(c.warnings.iter().cloned());
        checked.push(c);
    }
    warnings.extend(duplicate_step_warnings(&rows, &bank_name));
    // 2. Scores: every selected row needs one; ids outside the bank are errors (ignored with a
    //    warning when rows were sub-selected).
    let scores = read_tier_scores(scores, scores_name)?;
    let row_ids: Vec<String> = checked.iter().map(|c| id_key(&c.id)).collect();
    let absent: Vec<&String> = row_ids
        .iter()
        .filter(|id| !scores.by_id.contains_key(*id))
        .collect();
    if let Some(first) = absent.first() {
        return Err(SweepError::input(format!(
            "{scores_name}: no \"tier_probs\" for {} of {} bank rows (first: {first:?})",
            absent.len(),
            row_ids.len()
        )));
    }
    let known: HashSet<&str> = row_ids.iter().map(String::as_str).collect();
    let unknown: Vec<&(String, u64)> = scores
        .order
        .iter()
        .filter(|(id, _)| !known.contains(id.as_str()))
        .collect();
    if let Some((id, ln)) = unknown.first() {
        if subselected {
            warnings.push(format!(
                "{scores_name}: {} score line(s) have ids not among the {} selected rows and were ignored (first: line {ln}, {id:?})",
                unknown.len(),
                row_ids.len()
            ));
        } else {
            return Err(SweepError::input(format!(
                "{scores_name}:{ln}: id {id:?} is not in {bank_name}"
            )));
        }
    }
    if scores.off_sum > 0 {
        message(format!(
            "note: {scores_name}: {} tier_probs vector(s) do not sum to 1 (first: line {}); used as given",
            scores.off_sum,
            scores.first_off_sum.unwrap_or(0)
        ));
    }
    for w in warning_lines(&warnings) {
        message(w);
    }
    // 3. Calibration split by trajectory.
    let keys: Vec<String> = rows.iter().map(|r| trajectory_key(&r.value)).collect();
    let mut calib_traj: Option<HashSet<String>> = None;
    let mut calib_desc = Value::Null;
    if let Some(q) = calibrate_on {
        let mut first_seen: HashMap<&str, bool> = HashMap::new();
        let mut split = 0usize;
        for (r, k) in rows.iter().zip(&keys) {
            let m = q.matches(&r.value, omk).map_err(|e| {
                SweepError::input(format!("{bank_name}:{}: --calibrate-on: {e}", r.line))
            })?;
            match first_seen.get(k.as_str()) {
                None => {
                    first_seen.insert(k, m);
                }
                Some(&f) if f != m => split += 1,
                _ => {}
            }
        }
        if split > 0 {
            message(format!(
                "note: --calibrate-on splits {split} row(s) from their trajectory's first row; whole trajectories follow their first row"
            ));
        }
        calib_traj = Some(
            first_seen
                .into_iter()
                .filter(|(_, m)| *m)
                .map(|(k, _)| k.to_string())
                .collect(),
        );
        calib_desc = json!({"where": opts.calibrate_on});
    } else if let Some(f) = opts.calibrate_fraction {
        let mut uniq: Vec<&String> = Vec::new();
        let mut seen = HashSet::new();
        for k in &keys {
            if seen.insert(k) {
                uniq.push(k);
            }
        }
        let mut ranked: Vec<([u8; 32], &String)> = uniq
            .iter()
            .map(|k| {
                let mut h = blake3::Hasher::new();
                h.update(&opts.seed.to_le_bytes());
                h.update(k.as_bytes());
                (*h.finalize().as_bytes(), *k)
            })
            .collect();
        ranked.sort();
        let n = ranked.len();
        let take = ((f * n as f64).round() as usize).clamp(1, n.saturating_sub(1).max(1));
        calib_traj = Some(ranked[..take].iter().map(|(_, k)| (*k).clone()).collect());
        calib_desc =
            json!({"fraction": f, "seed": seed_value(opts.seed), "by": "trajectory (instance_id)"});
    }
    // 4. Records (one placeholder prediction; replaced per threshold).
    let mut cal = Side::default();
    let mut rep = Side::default();
    for (((row, c), id), k) in rows.into_iter().zip(checked).zip(&row_ids).zip(&keys) {
        let line = row.line;
        let gold = Tier::from_id(c.gold).ok_or_else(|| {
            SweepError::data(format!("{bank_name}:{line}: gold tier out of range"))
        })?;
        let rec = make_record(
            row.value,
            c.id,
            c.benchmark,
            gold,
            Ok(TierPrediction {
                tier_id: Tier::High.id() as i64,
                usage: None,
            }),
        )
        .map_err(|e| SweepError::data(format!("{bank_name}:{line}: {e}")))?;
        let side = match &calib_traj {
            Some(set) if !set.contains(k) => &mut rep,
            _ => &mut cal,
        };
        side.records.push(rec);
        side.probs.push(scores.by_id[id].0);
        side.lines.push(line);
    }
    if calib_traj.is_some() && (cal.records.is_empty() || rep.records.is_empty()) {
        return Err(SweepError::input(format!(
            "calibration split leaves {} calibration and {} report rows: both must be non-empty",
            cal.records.len(),
            rep.records.len()
        )));
    }
    // 5. Thresholds.
    let grid = match &opts.thresholds {
        Some(g) => g.clone(),
        None => thin_grid(
            cal.probs.iter().flat_map(cumulative),
            DEFAULT_MAX_THRESHOLDS,
        ),
    };
    // 6. Tokenizers for every tier any threshold can route to.
    let mut needed = [false; 4];
    needed[Tier::High as usize] = true;
    let (lo, hi) = (
        grid.first().copied().unwrap_or(0.0),
        grid.last().copied().unwrap_or(1.0),
    );
    for side in [&cal, &rep] {
        for (r, p) in side.records.iter().zip(&side.probs) {
            needed[r.gold as usize] = true;
            let (a_, b_) = (
                cumulative_tier(p, lo) as usize,
                cumulative_tier(p, hi) as usize,
            );
            for t in needed.iter_mut().take(b_ + 1).skip(a_) {
                *t = true;
            }
        }
    }
    let needed_tiers: Vec<Tier> = Tier::ALL
        .iter()
        .copied()
        .filter(|t| needed[*t as usize])
        .collect();
    let toks = load_tokenizers(needed)?;
    // 7. Sweep (on the calibration rows when calibrating).
    let points = sweep_side(&mut cal, &grid, &toks, &needed_tiers, &bank_name)?;
    // 8. Frontier of (cost, pass rate).
    let pass_rate = opts.pass_rate;
    let cq: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.cost_usd, pass_rate.of(p)))
        .collect();
    let finite: Vec<(f64, f64)> = cq
        .iter()
        .copied()
        .filter(|(c, q)| c.is_finite() && q.is_finite())
        .collect();
    let hull = ndch_hull(&finite);
    let (max_cost, aiqs) = aiq(std::slice::from_ref(&hull));
    let par: Vec<(f64, f64)> = pareto(&finite).iter().map(|&i| finite[i]).collect();
    // 9. Choose τ.
    let rule = match (opts.target_pass_rate, opts.max_cost_usd) {
        (Some(p), _) => Some(("target_pass_rate", p, PickRule::TargetQuality(p))),
        (None, Some(c)) => Some(("max_cost_usd", c, PickRule::MaxCost(c))),
        _ => None,
    };
    let mut chosen_text = String::new();
    let mut chosen_tau: Option<f64> = None;
    let mut headline: Vec<crate::Figure> = Vec::new();
    let mut caveats: Vec<String> = Vec::new();
    let pct_label = format!("{} (%)", pass_rate.key());
    let chosen = match rule {
        None => {
            if calib_traj.is_some() {
                caveats.push(format!(
                    "the curve and the AIQ are the {} calibration rows; give --target-pass-rate or --max-cost-usd to report the held-out rows at a chosen τ",
                    cal.records.len()
                ));
            }
            Value::Null
        }
        Some((name, value, pick)) => {
            let curve: Vec<(f64, f64, f64)> = grid
                .iter()
                .zip(&cq)
                .map(|(t, (c, q))| (*t, *q, *c))
                .collect();
            match pick_threshold(&curve, pick) {
                None => {
                    message(format!(
                        "note: no threshold satisfies --{} {value}",
                        name.replace('_', "-")
                    ));
                    let _ = writeln!(chosen_text, "chosen: no threshold satisfies {name} {value}");
                    caveats.push(format!(
                        "no threshold satisfies {name} {value}: nothing was chosen"
                    ));
                    json!({"rule": name, "value": value, "threshold": null})
                }
                Some(i) => {
                    let tau = grid[i];
                    chosen_tau = Some(tau);
                    let mut c = Map::new();
                    c.insert("rule".into(), json!(name));
                    c.insert("value".into(), json!(value));
                    c.insert("threshold".into(), num(tau));
                    c.insert("pass_rate_key".into(), json!(pass_rate.key()));
                    if calib_traj.is_some() {
                        c.insert("calibration".into(), calib_desc.clone());
                        c.insert("calibration_rows".into(), json!(cal.records.len()));
                        c.insert("calibration_point".into(), point_json(tau, &points[i]));
                        let rp = sweep_side(&mut rep, &[tau], &toks, &needed_tiers, &bank_name)?
                            .pop()
                            .ok_or_else(|| SweepError::data("empty report sweep"))?;
                        c.insert("report_rows".into(), json!(rep.records.len()));
                        c.insert("report".into(), point_json(tau, &rp));
                        headline.push(crate::Figure::new("chosen τ", tau, format!("{tau}")));
                        let held = format!("held-out ({} rows)", rep.records.len());
                        let q = pass_rate.of(&rp);
                        headline.push(crate::Figure::new(
                            format!("{pct_label}, {held}"),
                            q,
                            crate::p2(q),
                        ));
                        headline.push(crate::Figure::new(
                            format!("cost (USD), {held}"),
                            rp.cost_usd,
                            format!("{:.6}", rp.cost_usd),
                        ));
                        caveats.push(format!(
                            "τ was chosen on {} calibration rows; the curve, the AIQ and the table of thresholds are those rows, the headline pass rate and cost are the {} held-out rows at τ (the figure to quote)",
                            cal.records.len(),
                            rep.records.len()
                        ));
                        let _ = writeln!(
                            chosen_text,
                            "chosen τ = {tau} on {} calibration rows ({}: {:.2}%, cost {:.6} USD); on the {} other rows: {}: {:.2}%, cost {:.6} USD",
                            cal.records.len(),
                            pass_rate.key(),
                            pass_rate.of(&points[i]),
                            points[i].cost_usd,
                            rep.records.len(),
                            pass_rate.key(),
                            pass_rate.of(&rp),
                            rp.cost_usd
                        );
                    } else {
                        c.insert("calibration".into(), Value::Null);
                        c.insert(
                            "note".into(),
                            json!("chosen on the same rows it is reported on (no --calibrate-on/--calibrate-fraction): an optimistic estimate"),
                        );
                        c.insert("point".into(), point_json(tau, &points[i]));
                        headline.push(crate::Figure::new("chosen τ", tau, format!("{tau}")));
                        let q = pass_rate.of(&points[i]);
                        headline.push(crate::Figure::new(
                            format!("{pct_label}, same rows: optimistic"),
                            q,
                            crate::p2(q),
                        ));
                        headline.push(crate::Figure::new(
                            "cost (USD), same rows: optimistic",
                            points[i].cost_usd,
                            format!("{:.6}", points[i].cost_usd),
                        ));
                        caveats.push(
                            "τ was chosen on the same rows it is reported on (no --calibrate-on/--calibrate-fraction): the pass rate and cost at τ are optimistic".into(),
                        );
                        let _ = writeln!(
                            chosen_text,
                            "chosen τ = {tau} ({}: {:.2}%, cost {:.6} USD; chosen on the same rows, optimistic)",
                            pass_rate.key(),
                            pass_rate.of(&points[i]),
                            points[i].cost_usd
                        );
                    }
                    Value::Object(c)
                }
            }
        }
    };
    let aiq_value = aiqs.first().copied().unwrap_or(f64::NAN);
    headline.push(crate::Figure::new(
        if calib_traj.is_some() {
            format!("AIQ (%), calibration ({} rows)", cal.records.len())
        } else {
            "AIQ (%)".to_string()
        },
        aiq_value,
        crate::p2(aiq_value),
    ));
    let names = toks.encoder_names();
    let mut enc = Map::new();
    for t in Tier::ALL {
        enc.insert(t.name().into(), Value::String(names[t as usize].clone()));
    }
    let tokenizers = json!({"setup": setup_name, "encoders": enc, "fallbacks": toks.fallbacks});
    Ok(CrbSweepReport {
        bank: bank_name,
        bank_source,
        scores: scores_name.to_string(),
        sample_mode,
        calibrated: calib_traj.is_some(),
        rows: cal.records.len(),
        pass_rate,
        grid,
        points,
        ndch: hull,
        aiq: aiq_value,
        max_cost,
        pareto: par,
        chosen_threshold: chosen_tau,
        chosen,
        chosen_text,
        tokenizers,
        headline,
        caveats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_checked_per_line() {
        let ok = "{\"id\": 1, \"tier_probs\": [0.5, 0.5, 0, 0]}\n\n{\"id\": \"b\", \"tier_probs\": [1, 1, 0, 0]}\n";
        let s = read_tier_scores(ok.as_bytes(), "s").unwrap();
        assert_eq!(s.order.len(), 2);
        assert_eq!((s.off_sum, s.first_off_sum), (1, Some(3)));
        for (text, want) in [
            ("{\"tier_probs\": [1, 0, 0, 0]}", "s:1: line has no \"id\""),
            ("{\"id\": 1}", "s:1: row \"1\" has no \"tier_probs\""),
            (
                "{\"id\": 1, \"tier_probs\": [1, 0, 0]}",
                "s:1: tier_probs must have 4 probabilities, got 3",
            ),
            (
                "{\"id\": 1, \"tier_probs\": [1, 0, 0, 0]}\n{\"id\": \"1\", \"tier_probs\": [1, 0, 0, 0]}",
                "s:2: duplicate id \"1\"",
            ),
        ] {
            assert_eq!(
                read_tier_scores(text.as_bytes(), "s")
                    .unwrap_err()
                    .to_string(),
                want
            );
        }
    }

    #[test]
    fn options_are_validated_before_rows() {
        let bad = |o: CrbSweepOptions| o.validate().unwrap_err().to_string();
        assert!(
            bad(CrbSweepOptions {
                calibrate_fraction: Some(1.0),
                ..Default::default()
            })
            .contains("strictly between 0 and 1")
        );
        assert!(
            bad(CrbSweepOptions {
                max_cost_usd: Some(f64::NAN),
                ..Default::default()
            })
            .contains("--max-cost-usd: NaN is not a finite number")
        );
        assert!(
            bad(CrbSweepOptions {
                target_pass_rate: Some(1.0),
                max_cost_usd: Some(1.0),
                ..Default::default()
            })
            .contains("one way to choose")
        );
        assert!(
            bad(CrbSweepOptions {
                calibrate_on: Some("{".into()),
                ..Default::default()
            })
            .starts_with("--calibrate-on: ")
        );
        // Issue 24: out-of-range targets, budgets and thresholds were accepted.
        for (o, want) in [
            (
                CrbSweepOptions {
                    target_pass_rate: Some(-5.0),
                    ..Default::default()
                },
                "--target-pass-rate -5: a pass rate in percent cannot be negative",
            ),
            (
                CrbSweepOptions {
                    max_cost_usd: Some(-0.5),
                    ..Default::default()
                },
                "--max-cost-usd -0.5: a cost in USD cannot be negative",
            ),
            (
                CrbSweepOptions {
                    thresholds: Some(vec![0.2, 75.0]),
                    ..Default::default()
                },
                "--thresholds: 75 is outside [0, 1]",
            ),
            (
                CrbSweepOptions {
                    thresholds: Some(vec![-0.1]),
                    ..Default::default()
                },
                "--thresholds: -0.1 is outside [0, 1]",
            ),
        ] {
            assert!(bad(o).starts_with(want), "{want}");
        }
        let q = CrbSweepOptions {
            calibrate_on: Some(r#"{"benchmark": "swebench"}"#.into()),
            ..Default::default()
        };
        assert!(q.validate().unwrap().is_some());
        assert_eq!("case".parse::<PassRate>().unwrap(), PassRate::Case);
        assert!("steps".parse::<PassRate>().is_err());
    }

    #[test]
    fn warnings_are_capped_at_twenty() {
        let w: Vec<String> = (0..25).map(|i| format!("w{i}")).collect();
        let lines = warning_lines(&w);
        assert_eq!(lines.len(), 21);
        assert_eq!(lines[0], "warning: w0");
        assert_eq!(lines[20], "warning: ... and 5 more warnings");
        assert_eq!(seed_value(7), json!(7));
        assert_eq!(
            seed_value(i128::from(u64::MAX)).to_string(),
            u64::MAX.to_string()
        );
    }
}
