//! `routeval crb sweep`: sweep the threshold of a tier router that emits probabilities.
//!
//! Input: `--scores FILE` with one `{"id", "tier_probs": [p_low, p_mid, p_mid_high, p_high]}`
//! per line. At threshold τ a row goes to the cheapest tier whose cumulative probability
//! reaches τ (`routeval_frontier::threshold::cumulative_tier`). Each point carries the blocks
//! `crb eval` prints for those predictions (`routeval_routing_scores::crb::sweep`), computed
//! on one walk context, so every token count is computed once.
//!
//! Choosing τ: `--target-pass-rate P` (the cheapest point whose pass rate reaches P percent)
//! or `--max-cost-usd C` (the best pass rate within C). With `--calibrate-on WHERE` or
//! `--calibrate-fraction F` the curve is traced and τ chosen on the calibration trajectories
//! only, and the other rows are reported at that τ (never the same rows).

use super::{duplicate_step_warnings, seed_value, warn_all};
use crate::common::{self, CmdResult, Failure, display_name, emit, open_input};
use clap::Args;
use routeval_bench_data::crb::{check_row, id_repr};
use routeval_core::Tier;
use routeval_frontier::ndch::{aiq, ndch_hull, pareto};
use routeval_frontier::threshold::{
    PickRule, check_probs, cumulative, cumulative_tier, parse_thresholds, pick_threshold, thin_grid,
};
use routeval_query_dsl::{OnMissingKey, Query, QueryError};
use routeval_routing_scores::crb::records::{EvalRecord, TierPrediction, id_key, make_record};
use routeval_routing_scores::crb::scores::num;
use routeval_routing_scores::crb::sweep::{SweepPoint, evaluate_tiers};
use routeval_routing_scores::crb::walk::{WalkContext, WalkError};
use routeval_tier_cost::tokens::TierTokenizers;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// At most this many thresholds in the default grid.
const DEFAULT_MAX_THRESHOLDS: usize = 1000;

/// Which pass rate is the quality axis (and what `--target-pass-rate` means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PassRate {
    /// `scores_v2.trajectory_pass_rate_percent` (row-weighted; a trajectory passes when no
    /// step is under-routed).
    Trajectory,
    /// `scores_v2.case_pass_rate_percent` (rows with predicted tier ≥ gold).
    Case,
}

impl PassRate {
    fn key(self) -> &'static str {
        match self {
            PassRate::Trajectory => "trajectory_pass_rate_percent",
            PassRate::Case => "case_pass_rate_percent",
        }
    }
    fn of(self, p: &SweepPoint) -> f64 {
        match self {
            PassRate::Trajectory => p.scores_v2.trajectory_pass_rate_percent(),
            PassRate::Case => p.scores_v2.case_pass_rate_percent(),
        }
    }
}

/// `routeval crb sweep`.
#[derive(Debug, Args)]
pub(crate) struct SweepArgs {
    /// The question bank (JSONL; `-` = stdin), selected as `crb eval` does (default: the
    /// public bank installed by `routeval data fetch crb`, with its manifest).
    #[arg(long)]
    bank: Option<PathBuf>,
    /// Tier probabilities, one `{"id", "tier_probs": [p_low, p_mid, p_mid_high, p_high]}` per
    /// line (`-` = stdin). Each probability must be a finite number in [0, 1]; vectors not
    /// summing to 1 are accepted (noted once).
    #[arg(long)]
    scores: PathBuf,
    /// Thresholds: `A:B:STEP` (inclusive) or a comma list (default: 0, 1 and every distinct
    /// cumulative probability, thinned to at most 1000).
    #[arg(long, value_name = "LIST|A:B:STEP")]
    thresholds: Option<String>,
    /// Choose τ: the cheapest point whose pass rate (percent, see `--pass-rate`) reaches P.
    #[arg(long, value_name = "P", conflicts_with = "max_cost_usd")]
    target_pass_rate: Option<f64>,
    /// Choose τ: the best pass rate whose predicted-path cost is at most C USD.
    #[arg(long, value_name = "C")]
    max_cost_usd: Option<f64>,
    /// The quality axis: `trajectory` (scores_v2 trajectory pass rate, default) or `case`.
    #[arg(long, value_enum, default_value = "trajectory")]
    pass_rate: PassRate,
    /// Calibrate on the trajectories whose first row this `where` query selects (e.g.
    /// '{"benchmark": "swebench"}'); report the other rows at the chosen τ.
    #[arg(long, value_name = "JSON", conflicts_with = "calibrate_fraction")]
    calibrate_on: Option<String>,
    /// Calibrate on this fraction (0 < F < 1) of the trajectories, drawn with `--seed`;
    /// report the others at the chosen τ.
    #[arg(long, value_name = "F")]
    calibrate_fraction: Option<f64>,
    #[command(flatten)]
    select: SelectArgs,
}

/// The row selection and tokenizer options shared with `crb eval`.
#[derive(Debug, Args)]
pub(crate) struct SelectArgs {
    /// Manifest whose `sources.*.line_count` set the sampling quotas (with `--n`).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Sample N rows proportionally to the manifest's line counts (default: the whole bank;
    /// 1..=10^12).
    #[arg(long, value_parser = crate::numarg::sample_size, allow_negative_numbers = true)]
    n: Option<i64>,
    /// Keep only rows of this benchmark (repeat for several).
    #[arg(long = "benchmark")]
    benchmarks: Vec<String>,
    /// Keep only the bank rows this `where` query selects (as `crb eval --where`).
    #[arg(long = "where", value_name = "JSON")]
    where_: Option<String>,
    /// With `--where`/`--calibrate-on`: a missing path `skip`s the row or is an `error`.
    #[arg(long, value_name = "skip|error")]
    on_missing_key: Option<String>,
    /// Seed of the sample (Python `random.Random(seed)`) and of `--calibrate-fraction`.
    #[arg(long, default_value_t = 42, allow_negative_numbers = true)]
    seed: i128,
    /// Tokenizer directory (as `crb eval --tokenizers`).
    #[arg(long)]
    tokenizers: Option<PathBuf>,
    /// Tokenizer setup: `native`, `hf_offline`, `all_cl100k`.
    #[arg(long, default_value = "native")]
    tokenizer_setup: String,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write the output to PATH instead of stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// stdout format: `text` (the table) or `md` (the report as Markdown).
    #[arg(long, value_enum, default_value = "text", conflicts_with = "json")]
    format: crate::report::TextFormat,
    #[command(flatten)]
    html: crate::report::HtmlArg,
}

/// Parsed `--scores`: id → (probabilities, line), and how many vectors do not sum to 1.
struct TierScores {
    by_id: HashMap<String, ([f64; 4], u64)>,
    order: Vec<(String, u64)>,
    off_sum: usize,
    first_off_sum: Option<u64>,
}

fn read_tier_scores(path: &Path) -> Result<TierScores, Failure> {
    let name = display_name(path);
    let reader = open_input(path)?;
    let mut s = TierScores {
        by_id: HashMap::new(),
        order: Vec::new(),
        off_sum: 0,
        first_off_sum: None,
    };
    for (i, line) in reader.lines().enumerate() {
        let ln = i as u64 + 1;
        let bad = |m: String| Failure::bad_input(format!("{name}:{ln}: {m}"));
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

fn on_missing_key(a: &SelectArgs) -> Result<OnMissingKey, Failure> {
    a.on_missing_key
        .as_deref()
        .unwrap_or("skip")
        .parse()
        .map_err(|e: QueryError| Failure::bad_input(format!("--on-missing-key: {e}")))
}

/// The trajectory key of a bank row (`instance_id`, default its id), as text.
fn trajectory_key(v: &Value) -> String {
    v.get("instance_id")
        .or_else(|| v.get("id"))
        .map(|k| k.to_string())
        .unwrap_or_default()
}

/// One side of the sweep: records (predictions replaced per threshold), their cumulative
/// probabilities, bank lines.
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

fn walk_failure(bank_name: &str, side: &Side, e: WalkError) -> Failure {
    let i = e.record();
    let what = match &e {
        WalkError::Count { source, .. } => source
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
        WalkError::MessagesNotList(..) => "messages must be a list".to_string(),
        WalkError::StepIndex(..) => "step_index must be a number".to_string(),
        other => other.to_string(),
    };
    Failure::bad_input(format!(
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
) -> Result<Vec<SweepPoint>, Failure> {
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

fn point_json(tau: f64, p: &SweepPoint) -> Value {
    let mut m = Map::new();
    m.insert("threshold".into(), num(tau));
    m.extend(p.to_json());
    Value::Object(m)
}

pub(crate) fn sweep(a: SweepArgs) -> CmdResult {
    let s = &a.select;
    let setup = super::check_tokenizer_args(&s.tokenizer_setup, s.tokenizers.as_deref())?;
    for (name, v) in [
        ("--target-pass-rate", a.target_pass_rate),
        ("--max-cost-usd", a.max_cost_usd),
    ] {
        if let Some(x) = v
            && !x.is_finite()
        {
            return Err(Failure::bad_input(format!(
                "{name}: {x} is not a finite number"
            )));
        }
    }
    if let Some(f) = a.calibrate_fraction
        && !(f > 0.0 && f < 1.0)
    {
        return Err(Failure::bad_input(format!(
            "--calibrate-fraction {f}: must be strictly between 0 and 1"
        )));
    }
    let choice = crate::crb::resolve_bank(a.bank.as_deref(), s.manifest.as_deref())?;
    let bank_name = display_name(&choice.bank);
    let omk = on_missing_key(s)?;
    let where_query = match &s.where_ {
        None => None,
        Some(t) => Some((
            Query::parse_str(t).map_err(|e| Failure::bad_input(format!("--where: {e}")))?,
            omk,
        )),
    };
    let calib_query = match &a.calibrate_on {
        None => None,
        Some(t) => Some(
            Query::parse_str(t).map_err(|e| Failure::bad_input(format!("--calibrate-on: {e}")))?,
        ),
    };
    let grid_given = match &a.thresholds {
        Some(t) => Some(parse_thresholds(t).map_err(Failure::bad_input)?),
        None => None,
    };
    // 1. Rows, as `crb eval` selects and validates them.
    let (rows, sample_mode, _quotas) = crate::crb::select_bank_rows(
        &choice.bank,
        choice.manifest.as_deref(),
        s.n,
        s.seed,
        &s.benchmarks,
        where_query.as_ref(),
    )?;
    let mut warnings = Vec::new();
    let mut checked = Vec::with_capacity(rows.len());
    for r in &rows {
        let c = check_row(r, &bank_name)?;
        warnings.extend(c.warnings.iter().cloned());
        checked.push(c);
    }
    warnings.extend(duplicate_step_warnings(&rows, &bank_name));
    // 2. Scores: every selected row needs one; ids outside the bank are errors (ignored with a
    //    warning when rows were sub-selected).
    let scores_name = display_name(&a.scores);
    let scores = read_tier_scores(&a.scores)?;
    let row_ids: Vec<String> = checked.iter().map(|c| id_key(&c.id)).collect();
    let absent: Vec<&String> = row_ids
        .iter()
        .filter(|id| !scores.by_id.contains_key(*id))
        .collect();
    if let Some(first) = absent.first() {
        return Err(Failure::bad_input(format!(
            "{scores_name}: no \"tier_probs\" for {} of {} bank rows (first: {first:?})",
            absent.len(),
            row_ids.len()
        )));
    }
    let known: std::collections::HashSet<&str> = row_ids.iter().map(String::as_str).collect();
    let unknown: Vec<&(String, u64)> = scores
        .order
        .iter()
        .filter(|(id, _)| !known.contains(id.as_str()))
        .collect();
    if let Some((id, ln)) = unknown.first() {
        let subselected = s.n.is_some() || !s.benchmarks.is_empty() || s.where_.is_some();
        if subselected {
            warnings.push(format!(
                "{scores_name}: {} score line(s) have ids not among the {} selected rows and were ignored (first: line {ln}, {id:?})",
                unknown.len(),
                row_ids.len()
            ));
        } else {
            return Err(Failure::bad_input(format!(
                "{scores_name}:{ln}: id {id:?} is not in {bank_name}"
            )));
        }
    }
    if scores.off_sum > 0 {
        eprintln!(
            "note: {scores_name}: {} tier_probs vector(s) do not sum to 1 (first: line {}); used as given",
            scores.off_sum,
            scores.first_off_sum.unwrap_or(0)
        );
    }
    warn_all(&warnings);
    // 3. Calibration split by trajectory.
    let keys: Vec<String> = rows.iter().map(|r| trajectory_key(&r.value)).collect();
    let mut calib_traj: Option<std::collections::HashSet<String>> = None;
    let mut calib_desc = Value::Null;
    if let Some(q) = &calib_query {
        let mut first_seen: HashMap<&str, bool> = HashMap::new();
        let mut split = 0usize;
        for (r, k) in rows.iter().zip(&keys) {
            let m = q.matches(&r.value, omk).map_err(|e| {
                Failure::bad_input(format!("{bank_name}:{}: --calibrate-on: {e}", r.line))
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
            eprintln!(
                "note: --calibrate-on splits {split} row(s) from their trajectory's first row; whole trajectories follow their first row"
            );
        }
        calib_traj = Some(
            first_seen
                .into_iter()
                .filter(|(_, m)| *m)
                .map(|(k, _)| k.to_string())
                .collect(),
        );
        calib_desc = json!({"where": a.calibrate_on});
    } else if let Some(f) = a.calibrate_fraction {
        let mut uniq: Vec<&String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for k in &keys {
            if seen.insert(k) {
                uniq.push(k);
            }
        }
        let mut ranked: Vec<([u8; 32], &String)> = uniq
            .iter()
            .map(|k| {
                let mut h = blake3::Hasher::new();
                h.update(&s.seed.to_le_bytes());
                h.update(k.as_bytes());
                (*h.finalize().as_bytes(), *k)
            })
            .collect();
        ranked.sort();
        let n = ranked.len();
        let take = ((f * n as f64).round() as usize).clamp(1, n.saturating_sub(1).max(1));
        calib_traj = Some(ranked[..take].iter().map(|(_, k)| (*k).clone()).collect());
        calib_desc =
            json!({"fraction": f, "seed": seed_value(s.seed), "by": "trajectory (instance_id)"});
    }
    // 4. Records (one placeholder prediction; replaced per threshold).
    let mut cal = Side {
        records: Vec::new(),
        probs: Vec::new(),
        lines: Vec::new(),
    };
    let mut rep = Side {
        records: Vec::new(),
        probs: Vec::new(),
        lines: Vec::new(),
    };
    for (((row, c), id), k) in rows.into_iter().zip(checked).zip(&row_ids).zip(&keys) {
        let line = row.line;
        let gold = Tier::from_id(c.gold).expect("checked range");
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
        .map_err(|e| Failure::bad_input(format!("{bank_name}:{line}: {e}")))?;
        let side = match &calib_traj {
            Some(set) if !set.contains(k) => &mut rep,
            _ => &mut cal,
        };
        side.records.push(rec);
        side.probs.push(scores.by_id[id].0);
        side.lines.push(line);
    }
    if calib_traj.is_some() && (cal.records.is_empty() || rep.records.is_empty()) {
        return Err(Failure::bad_input(format!(
            "calibration split leaves {} calibration and {} report rows: both must be non-empty",
            cal.records.len(),
            rep.records.len()
        )));
    }
    // 5. Thresholds.
    let grid = match grid_given {
        Some(g) => g,
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
    let toks = super::load_tier_tokenizers(setup, s.tokenizers.as_deref(), needed)?;
    // 7. Sweep (on the calibration rows when calibrating).
    let points = sweep_side(&mut cal, &grid, &toks, &needed_tiers, &bank_name)?;
    // 8. Frontier of (cost, pass rate).
    let cq: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.cost_usd, a.pass_rate.of(p)))
        .collect();
    let finite: Vec<(f64, f64)> = cq
        .iter()
        .copied()
        .filter(|(c, q)| c.is_finite() && q.is_finite())
        .collect();
    let hull = ndch_hull(&finite);
    let (max_cost, aiqs) = aiq(std::slice::from_ref(&hull));
    let par = pareto(&finite);
    let frontier = json!({
        "x": "cost_usd",
        "y": a.pass_rate.key(),
        "aiq": num(aiqs.first().copied().unwrap_or(f64::NAN)),
        "max_cost": num(max_cost),
        "ndch": hull.iter().map(|(c, q)| json!([num(*c), num(*q)])).collect::<Vec<_>>(),
        "pareto": par.iter().map(|&i| json!([num(finite[i].0), num(finite[i].1)])).collect::<Vec<_>>(),
    });
    // 9. Choose τ.
    let rule = match (a.target_pass_rate, a.max_cost_usd) {
        (Some(p), _) => Some(("target_pass_rate", p, PickRule::TargetQuality(p))),
        (None, Some(c)) => Some(("max_cost_usd", c, PickRule::MaxCost(c))),
        _ => None,
    };
    let mut table_tail = String::new();
    let mut chosen_tau: Option<f64> = None;
    let chosen = match rule {
        None => Value::Null,
        Some((name, value, pick)) => {
            let curve: Vec<(f64, f64, f64)> = grid
                .iter()
                .zip(&cq)
                .map(|(t, (c, q))| (*t, *q, *c))
                .collect();
            match pick_threshold(&curve, pick) {
                None => {
                    eprintln!(
                        "note: no threshold satisfies --{} {value}",
                        name.replace('_', "-")
                    );
                    let _ = writeln!(table_tail, "chosen: no threshold satisfies {name} {value}");
                    json!({"rule": name, "value": value, "threshold": null})
                }
                Some(i) => {
                    let tau = grid[i];
                    chosen_tau = Some(tau);
                    let mut c = Map::new();
                    c.insert("rule".into(), json!(name));
                    c.insert("value".into(), json!(value));
                    c.insert("threshold".into(), num(tau));
                    c.insert("pass_rate_key".into(), json!(a.pass_rate.key()));
                    if calib_traj.is_some() {
                        c.insert("calibration".into(), calib_desc.clone());
                        c.insert("calibration_rows".into(), json!(cal.records.len()));
                        c.insert("calibration_point".into(), point_json(tau, &points[i]));
                        let rp = sweep_side(&mut rep, &[tau], &toks, &needed_tiers, &bank_name)?
                            .pop()
                            .ok_or_else(|| Failure::bad_input("empty report sweep"))?;
                        c.insert("report_rows".into(), json!(rep.records.len()));
                        c.insert("report".into(), point_json(tau, &rp));
                        let _ = writeln!(
                            table_tail,
                            "chosen τ = {tau} on {} calibration rows ({}: {:.2}%, cost {:.6} USD); on the {} other rows: {}: {:.2}%, cost {:.6} USD",
                            cal.records.len(),
                            a.pass_rate.key(),
                            a.pass_rate.of(&points[i]),
                            points[i].cost_usd,
                            rep.records.len(),
                            a.pass_rate.key(),
                            a.pass_rate.of(&rp),
                            rp.cost_usd
                        );
                    } else {
                        c.insert("calibration".into(), Value::Null);
                        c.insert(
                            "note".into(),
                            json!("chosen on the same rows it is reported on (no --calibrate-on/--calibrate-fraction): an optimistic estimate"),
                        );
                        c.insert("point".into(), point_json(tau, &points[i]));
                        let _ = writeln!(
                            table_tail,
                            "chosen τ = {tau} ({}: {:.2}%, cost {:.6} USD; chosen on the same rows, optimistic)",
                            a.pass_rate.key(),
                            a.pass_rate.of(&points[i]),
                            points[i].cost_usd
                        );
                    }
                    Value::Object(c)
                }
            }
        }
    };
    // 10. Output.
    let md = s.format == crate::report::TextFormat::Md;
    let report = (md || s.html.html.is_some()).then(|| {
        crate::report::crb::sweep_document(
            &grid,
            &points,
            a.pass_rate.key(),
            |p| a.pass_rate.of(p),
            &hull,
            aiqs.first().copied().unwrap_or(f64::NAN),
            chosen_tau,
            &bank_name,
            &scores_name,
        )
    });
    let stdin_used = crate::report::uses_stdin(
        a.bank
            .iter()
            .map(PathBuf::as_path)
            .chain([a.scores.as_path()]),
    );
    if let Some(doc) = &report {
        crate::report::write_html(&s.html, doc, stdin_used)?;
    }
    let out = if let (true, Some(doc)) = (md, &report) {
        crate::report::markdown(doc, stdin_used)
    } else if s.json {
        let mut o = Map::new();
        o.insert("bank".into(), json!(bank_name));
        if let Some(p) = &choice.public {
            o.insert("bank_source".into(), json!(p));
        }
        o.insert("scores".into(), json!(scores_name));
        o.insert("sample_mode".into(), json!(sample_mode));
        o.insert(
            "rule".into(),
            json!("cheapest tier t with p_low + ... + p_t >= threshold (high if none)"),
        );
        o.insert(
            "swept_rows".into(),
            json!(if calib_traj.is_some() {
                "calibration"
            } else {
                "all"
            }),
        );
        o.insert("rows".into(), json!(cal.records.len()));
        o.insert(
            "points".into(),
            Value::Array(
                grid.iter()
                    .zip(&points)
                    .map(|(t, p)| point_json(*t, p))
                    .collect(),
            ),
        );
        o.insert("frontier".into(), frontier);
        o.insert("chosen".into(), chosen);
        let names = toks.encoder_names();
        let mut enc = Map::new();
        for t in Tier::ALL {
            enc.insert(t.name().into(), Value::String(names[t as usize].clone()));
        }
        o.insert(
            "routeval_tokenizers".into(),
            json!({"setup": setup.name(), "encoders": enc, "fallbacks": toks.fallbacks}),
        );
        let mut text = serde_json::to_string(&Value::Object(o))
            .map_err(|e| Failure::bad_input(e.to_string()))?;
        text.push('\n');
        text
    } else {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "CommonRouterBench threshold sweep: {} thresholds on {} rows ({})",
            grid.len(),
            cal.records.len(),
            if calib_traj.is_some() {
                "calibration rows"
            } else {
                "all selected rows"
            }
        );
        if let Some(p) = &choice.public {
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
        for (tau, p) in grid.iter().zip(&points) {
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
            a.pass_rate.key(),
            pctf(aiqs.first().copied().unwrap_or(f64::NAN)),
            hull.len(),
            par.len()
        );
        t.push_str(&table_tail);
        t
    };
    emit(s.output.as_ref(), out.as_bytes())?;
    Ok(common::EXIT_OK)
}
