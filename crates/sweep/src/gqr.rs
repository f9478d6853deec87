//! GQR-Bench rejection-threshold sweep (`routeval gqr sweep`, `routeval.gqr.sweep`).
//!
//! Input: one `{"id", "probs": [p_law, p_finance, p_healthcare]}` per line ([`read_probs`]).
//! At threshold τ a text gets the argmax domain if its probability is ≥ τ, else 3 (out of
//! domain) (`routeval_frontier::threshold::argmax_or_ood`). Every point carries the keys
//! `gqr score --json` prints for those predictions (`routeval_routing_scores::gqr::report::
//! gqr_keys` / `unseen_keys`), computed by the same accumulators from running counts: the
//! texts are sorted once by their top probability and each threshold moves the texts below
//! it to "out of domain".
//!
//! [`CalibrateOn`] picks the τ maximising the GQR score on the dev split or the v2 background
//! class (its in-domain rows and its label-3 rows) and reports the test sets at that τ.

use crate::SweepError;
use routeval_bench_data::gqr::build::ExportRow;
use routeval_bench_data::gqr::data::GqrData;
use routeval_bench_data::gqr::{OOD_SETS, UNSEEN_SETS};
use routeval_frontier::threshold::{PickRule, argmax3, check_probs, pick_threshold, thin_grid};
use routeval_routing_scores::crb::scores::num;
use routeval_routing_scores::gqr::report::{gqr_keys, unseen_keys};
use routeval_routing_scores::gqr::{GqrAccumulator, GqrScore, UnseenAccumulator, UnseenScore};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::BufRead;

/// At most this many thresholds in the default grid.
pub const DEFAULT_MAX_THRESHOLDS: usize = 1000;

/// The split names of a GQR build (the first segment of an exported id).
const GQR_SPLITS: [&str; 9] = [
    "dev_train",
    "dev_eval",
    "train",
    "train_v2",
    "eval",
    "eval_v2",
    "id_test",
    "ood_test",
    "unseen_id",
];

/// Where to calibrate the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CalibrateOn {
    /// The v1 dev split (dev_train then dev_eval); needs label-3 rows to score OOD.
    Dev,
    /// The v1 eval split: refused (it has no out-of-domain rows).
    Eval,
    /// The v2 eval split: in-domain rows plus the background class (label 3).
    Background,
}

impl std::str::FromStr for CalibrateOn {
    type Err = SweepError;
    fn from_str(s: &str) -> Result<Self, SweepError> {
        match s {
            "dev" => Ok(CalibrateOn::Dev),
            "eval" => Ok(CalibrateOn::Eval),
            "background" => Ok(CalibrateOn::Background),
            o => Err(SweepError::input(format!(
                "calibrate_on: {o:?} is not one of dev, eval, background"
            ))),
        }
    }
}

/// What to sweep.
#[derive(Debug, Clone, Default)]
pub struct GqrSweepOptions {
    /// The thresholds (`routeval_frontier::threshold::parse_thresholds`); `None`: 0, 1 and
    /// every distinct top probability of the swept texts, thinned to at most
    /// [`DEFAULT_MAX_THRESHOLDS`].
    pub thresholds: Option<Vec<f64>>,
    /// Sweep GQR-unseen (the nine unseen ID sets with the OOD sets) instead of GQR.
    pub unseen: bool,
    /// Choose τ maximising the GQR score on this split and report the test sets at it.
    pub calibrate_on: Option<CalibrateOn>,
}

impl GqrSweepOptions {
    /// The build splits the calibration reads (`dev_train` + `dev_eval`, or `eval_v2`).
    /// Errors: `eval` is refused (the v1 eval split has no out-of-domain rows), with the
    /// message pointing to `background`.
    pub fn calibration_splits(&self) -> Result<Vec<&'static str>, SweepError> {
        Ok(match self.calibrate_on {
            None => Vec::new(),
            Some(CalibrateOn::Eval) => {
                return Err(SweepError::input(
                    "--calibrate-on eval: the v1 eval split has no out-of-domain rows (label 3), so the GQR score cannot be computed on it; use --calibrate-on background (the v2 eval split with its background class)",
                ));
            }
            Some(CalibrateOn::Dev) => vec!["dev_train", "dev_eval"],
            Some(CalibrateOn::Background) => vec!["eval_v2"],
        })
    }

    /// Every build split the sweep reads: the test splits, then the calibration splits.
    /// Errors also on a threshold outside `[0, 1]` ([`check_thresholds`](crate::check_thresholds)).
    pub fn wanted_splits(&self) -> Result<Vec<&'static str>, SweepError> {
        if let Some(t) = &self.thresholds {
            crate::check_thresholds(t)?;
        }
        let mut wanted = vec![self.id_split(), "ood_test"];
        wanted.extend(self.calibration_splits()?);
        Ok(wanted)
    }

    fn id_split(&self) -> &'static str {
        if self.unseen { "unseen_id" } else { "id_test" }
    }
}

/// Parsed probabilities: id → (probabilities, line); ids in file order with their lines;
/// how many vectors do not sum to 1 and the first such line.
#[derive(Debug, Clone, Default)]
pub struct GqrProbs {
    by_id: HashMap<String, ([f64; 3], u64)>,
    order: Vec<(String, u64)>,
    off_sum: usize,
    first_off: u64,
}

/// Read `{"id", "probs": [p_law, p_finance, p_healthcare]}` lines from `reader` (`name` in
/// messages). Errors name `name:LINE`: invalid JSON, no string `id`, no or bad `probs`
/// (`routeval_frontier::threshold::check_probs`), a repeated id. Blank lines are skipped.
pub fn read_probs<R: BufRead>(reader: R, name: &str) -> Result<GqrProbs, SweepError> {
    let mut out = GqrProbs::default();
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
            .and_then(Value::as_str)
            .ok_or_else(|| bad("missing string field \"id\"".into()))?;
        let probs = v
            .get("probs")
            .ok_or_else(|| bad(format!("row {id:?} has no \"probs\"")))?;
        let (p, o) = check_probs::<3>("probs", probs).map_err(|e| bad(e.to_string()))?;
        if o {
            out.off_sum += 1;
            if out.first_off == 0 {
                out.first_off = ln;
            }
        }
        if out.by_id.insert(id.to_string(), (p, ln)).is_some() {
            return Err(bad(format!("duplicate id {id:?}")));
        }
        out.order.push((id.to_string(), ln));
    }
    Ok(out)
}

/// One scored text: its group (ID or a named set), gold label, argmax and top probability.
#[derive(Debug, Clone, Copy)]
struct Text {
    group: usize,
    truth: i64,
    argmax: i64,
    top: f64,
}

/// Texts of one side (test or calibration), grouped into tables in first-appearance order,
/// sorted by top probability for the sweep.
struct Side {
    /// Group names; group 0 is the pooled ID set in GQR mode.
    groups: Vec<String>,
    /// Whether a group is an OOD set (label 3) rather than in-domain.
    is_ood: Vec<bool>,
    texts: Vec<Text>,
}

impl Side {
    fn new(id_rows: &[&ExportRow], ood_rows: &[&ExportRow], pooled_id: bool) -> Self {
        let mut s = Side {
            groups: Vec::new(),
            is_ood: Vec::new(),
            texts: Vec::new(),
        };
        if pooled_id && !id_rows.is_empty() {
            s.groups.push(String::new());
            s.is_ood.push(false);
        }
        let mut index: HashMap<(bool, String), usize> = HashMap::new();
        for (ood, rows) in [(false, id_rows), (true, ood_rows)] {
            for r in rows {
                if !ood && pooled_id {
                    continue;
                }
                let k = (ood, r.dataset.clone());
                if !index.contains_key(&k) {
                    index.insert(k.clone(), s.groups.len());
                    s.groups.push(r.dataset.clone());
                    s.is_ood.push(ood);
                }
            }
        }
        s
    }

    fn group_of(&self, r: &ExportRow, ood: bool, pooled_id: bool) -> usize {
        if !ood && pooled_id {
            return 0;
        }
        self.groups
            .iter()
            .zip(&self.is_ood)
            .position(|(g, o)| *o == ood && *g == r.dataset)
            .unwrap_or(0)
    }
}

/// Running confusion counts per group while τ rises: `cells[group][truth][pred]`.
fn sweep_counts(side: &Side, grid: &[f64], mut each: impl FnMut(usize, &[[[u64; 4]; 4]])) {
    let mut texts = side.texts.clone();
    texts.sort_by(|a, b| a.top.total_cmp(&b.top));
    let mut cells = vec![[[0u64; 4]; 4]; side.groups.len()];
    for t in &texts {
        cells[t.group][t.truth.clamp(0, 3) as usize][t.argmax as usize] += 1;
    }
    let mut next = 0;
    for (k, &tau) in grid.iter().enumerate() {
        // Texts whose top probability is below τ are now out of domain.
        while next < texts.len() && texts[next].top < tau {
            let t = texts[next];
            let tr = t.truth.clamp(0, 3) as usize;
            cells[t.group][tr][t.argmax as usize] -= 1;
            cells[t.group][tr][3] += 1;
            next += 1;
        }
        each(k, &cells);
    }
}

/// Build the GQR accumulator of one point from counts (ID group 0, OOD sets in order).
fn gqr_at(side: &Side, cells: &[[[u64; 4]; 4]]) -> GqrScore {
    let mut acc = GqrAccumulator::default();
    for (g, c) in cells.iter().enumerate() {
        if side.is_ood[g] {
            let id = acc.ood.set(&side.groups[g]);
            for (tr, row) in c.iter().enumerate() {
                for (p, n) in row.iter().enumerate() {
                    acc.ood.add_count_at(id, tr as i64, p as i64, *n);
                }
            }
        } else {
            for (tr, row) in c.iter().enumerate() {
                for (p, n) in row.iter().enumerate() {
                    acc.id.add_count(tr as i64, p as i64, *n);
                }
            }
        }
    }
    acc.finish()
}

fn unseen_at(side: &Side, cells: &[[[u64; 4]; 4]]) -> UnseenScore {
    let mut acc = UnseenAccumulator::default();
    for (g, c) in cells.iter().enumerate() {
        let set = if side.is_ood[g] {
            acc.ood.set(&side.groups[g])
        } else {
            acc.unseen_id.set(&side.groups[g])
        };
        let per = if side.is_ood[g] {
            &mut acc.ood
        } else {
            &mut acc.unseen_id
        };
        for (tr, row) in c.iter().enumerate() {
            for (p, n) in row.iter().enumerate() {
                per.add_count_at(set, tr as i64, p as i64, *n);
            }
        }
    }
    acc.finish()
}

/// Attach probabilities to rows; every row needs them.
fn attach(
    side: &mut Side,
    rows: &[(&ExportRow, bool)],
    probs: &HashMap<String, ([f64; 3], u64)>,
    pooled_id: bool,
    scores_name: &str,
    what: &str,
) -> Result<(), SweepError> {
    let mut absent = Vec::new();
    for (r, ood) in rows {
        match probs.get(&r.id) {
            Some((p, _)) => {
                let (a, top) = argmax3(p);
                side.texts.push(Text {
                    group: side.group_of(r, *ood, pooled_id),
                    truth: r.label as i64,
                    argmax: a as i64,
                    top,
                });
            }
            None => absent.push(r.id.as_str()),
        }
    }
    if let Some(first) = absent.first() {
        return Err(SweepError::input(format!(
            "{scores_name}: no \"probs\" for {} of {} {what} texts (first: {first})",
            absent.len(),
            rows.len()
        )));
    }
    Ok(())
}

/// The τ chosen on the calibration split.
#[derive(Debug, Clone, PartialEq)]
pub struct GqrChosen {
    /// `dev` or `background`.
    pub calibrate_on: &'static str,
    /// The build splits calibrated on.
    pub splits: Vec<&'static str>,
    /// Texts of the calibration split.
    pub calibration_texts: usize,
    /// The index of τ in [`GqrSweepReport::grid`].
    pub index: usize,
    /// The calibration split's `gqr score` keys at τ.
    pub calibration: Map<String, Value>,
}

/// The sweep's result: `routeval gqr sweep`'s report.
#[derive(Debug, Clone, PartialEq)]
pub struct GqrSweepReport {
    /// GQR-unseen rather than GQR.
    pub unseen: bool,
    /// The scores' name (a path, `<stdin>`, `<scores>` for in-memory records).
    pub scores: String,
    /// Where the data came from (`build DIR`, `mirror DIR`).
    pub data: String,
    /// Sets missing from the data (their display names); non-empty means a partial score.
    pub missing_sets: Vec<String>,
    /// The thresholds, in order.
    pub grid: Vec<f64>,
    /// One test-set point per threshold: `threshold` then the keys of `gqr score --json`.
    pub points: Vec<Map<String, Value>>,
    /// `(OOD accuracy, ID accuracy)` per threshold (unseen ID accuracy for GQR-unseen;
    /// fractions, NaN where undefined).
    pub curve: Vec<(f64, f64)>,
    /// The test GQR (or GQR-unseen) score per threshold (NaN without ID rows).
    pub test_scores: Vec<f64>,
    /// Texts scored on the test side.
    pub scored_texts: usize,
    /// The calibrated choice (`None` without calibration or when no τ qualifies).
    pub chosen: Option<GqrChosen>,
    /// The figures to quote ([`GqrSweepReport::headline_of`]): the number of thresholds, then
    /// with a calibrated τ the score and accuracies of the **held-out** test sets at it
    /// (labelled `held-out test sets (N texts)`), else the best test score and its τ,
    /// labelled as chosen on the test rows (optimistic).
    pub headline: Vec<crate::Figure>,
    /// What qualifies the headline (a best point picked on the rows it is reported on, a
    /// partial score); every face prints them.
    pub caveats: Vec<String>,
}

impl GqrSweepReport {
    /// Whether sets are missing (the scores are then partial scores).
    pub fn partial(&self) -> bool {
        !self.missing_sets.is_empty()
    }

    /// The chosen threshold, if any.
    pub fn chosen_threshold(&self) -> Option<f64> {
        self.chosen.as_ref().map(|c| self.grid[c.index])
    }

    /// `routeval gqr sweep --json`: `{"benchmark", "rule", "scores", "data", "complete",
    /// "missing_sets"?, "points", "curve", "chosen", "headline" ([`crate::figures_json`]),
    /// "caveats"}`.
    pub fn to_json(&self) -> Value {
        self.clone().into_json()
    }

    /// [`to_json`](Self::to_json) taking the report: the points (one JSON object per
    /// threshold, 10k of them for a fine grid) move into the value instead of being copied.
    pub fn into_json(mut self) -> Value {
        let points = std::mem::take(&mut self.points);
        let mut o = Map::new();
        o.insert(
            "benchmark".into(),
            json!(if self.unseen {
                "GQR-unseen"
            } else {
                "GQR-Bench"
            }),
        );
        o.insert(
            "rule".into(),
            json!("argmax of [p_law, p_finance, p_healthcare] if its probability >= threshold, else 3 (out of domain)"),
        );
        o.insert("scores".into(), json!(self.scores));
        o.insert("data".into(), json!(self.data));
        o.insert("complete".into(), json!(!self.partial()));
        if self.partial() {
            o.insert("missing_sets".into(), json!(self.missing_sets));
        }
        // The chosen threshold's point, copied before the points move.
        let chosen_test = self.chosen.as_ref().map(|c| points[c.index].clone());
        o.insert(
            "points".into(),
            Value::Array(points.into_iter().map(Value::Object).collect()),
        );
        o.insert(
            "curve".into(),
            json!({
                "x": "ood_accuracy",
                "y": if self.unseen { "unseen_id_accuracy" } else { "id_accuracy" },
                "points": self.curve.iter().map(|(x, y)| json!([num(*x), num(*y)])).collect::<Vec<_>>(),
            }),
        );
        let chosen = match &self.chosen {
            None => Value::Null,
            Some(c) => json!({
                "calibrate_on": c.calibrate_on,
                "splits": c.splits,
                "calibration_texts": c.calibration_texts,
                "threshold": num(self.grid[c.index]),
                "calibration": Value::Object(c.calibration.clone()),
                "test": Value::Object(chosen_test.clone().unwrap_or_default()),
            }),
        };
        o.insert("chosen".into(), chosen);
        o.insert("headline".into(), crate::figures_json(&self.headline));
        o.insert("caveats".into(), json!(self.caveats));
        Value::Object(o)
    }

    /// The score's name in labels: `GQR score` or `GQR-unseen score`.
    pub fn score_name(&self) -> &'static str {
        if self.unseen {
            "GQR-unseen score"
        } else {
            "GQR score"
        }
    }

    /// The headline figures and caveats of this report (what [`headline`](Self::headline)
    /// and [`caveats`](Self::caveats) hold), from its points and choice.
    pub fn headline_of(&self) -> (Vec<crate::Figure>, Vec<String>) {
        let pct = |x: f64| {
            if x.is_finite() {
                format!("{:.2}", 100.0 * x)
            } else {
                "n/a".into()
            }
        };
        let score = self.score_name();
        let id_name = if self.unseen {
            "unseen ID accuracy"
        } else {
            "ID accuracy"
        };
        let mut h = vec![crate::Figure::new(
            "thresholds",
            self.grid.len() as f64,
            self.grid.len().to_string(),
        )];
        let mut caveats = Vec::new();
        match &self.chosen {
            Some(c) => {
                let i = c.index;
                let tau = self.grid[i];
                let held = format!("held-out test sets ({} texts)", self.scored_texts);
                let (ood, id) = self.curve[i];
                h.push(crate::Figure::new(
                    format!("chosen τ (on {})", c.calibrate_on),
                    tau,
                    format!("{tau}"),
                ));
                h.push(crate::Figure::new(
                    format!("{score} (%), {held}"),
                    100.0 * self.test_scores[i],
                    pct(self.test_scores[i]),
                ));
                h.push(crate::Figure::new(
                    format!("{id_name} (%), {held}"),
                    100.0 * id,
                    pct(id),
                ));
                h.push(crate::Figure::new(
                    format!("OOD accuracy (%), {held}"),
                    100.0 * ood,
                    pct(ood),
                ));
            }
            None => {
                let best = self
                    .test_scores
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.is_finite())
                    .max_by(|a, b| a.1.total_cmp(b.1));
                if let Some((i, sc)) = best {
                    h.push(crate::Figure::new(
                        format!("max {score} (%), chosen on the test rows: optimistic"),
                        100.0 * sc,
                        pct(*sc),
                    ));
                    h.push(crate::Figure::new(
                        "at τ",
                        self.grid[i],
                        format!("{}", self.grid[i]),
                    ));
                    caveats.push(format!(
                        "no --calibrate-on: the max {score} and its τ are picked on the test rows they are reported on, an optimistic estimate; calibrate on dev or background for a figure to quote"
                    ));
                }
            }
        }
        if self.partial() {
            caveats.push(format!(
                "PARTIAL: {} sets missing ({}); the score is not the benchmark's",
                self.missing_sets.len(),
                self.missing_sets.join(", ")
            ));
        }
        (h, caveats)
    }

    /// The table `routeval gqr sweep` prints.
    pub fn render_text(&self) -> String {
        let mut t = String::new();
        let pct = |x: f64| {
            if x.is_finite() {
                format!("{:.2}%", 100.0 * x)
            } else {
                "n/a".into()
            }
        };
        let _ = writeln!(
            t,
            "{} threshold sweep: {} thresholds, {} scored texts{}",
            if self.unseen {
                "GQR-unseen"
            } else {
                "GQR-Bench"
            },
            self.grid.len(),
            self.scored_texts,
            if self.partial() {
                " (PARTIAL: sets missing)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            t,
            "  {:>10} {:>12} {:>12} {:>12}",
            "threshold",
            if self.unseen { "unseen ID" } else { "ID acc" },
            "OOD acc",
            if self.unseen { "GQR-unseen" } else { "GQR" }
        );
        for ((tau, (ood, id)), sc) in self.grid.iter().zip(&self.curve).zip(&self.test_scores) {
            let _ = writeln!(
                t,
                "  {:>10.6} {:>12} {:>12} {:>12}",
                tau,
                pct(*id),
                pct(*ood),
                pct(*sc)
            );
        }
        if self.partial() {
            let _ = writeln!(
                t,
                "  missing sets ({}): {}",
                self.missing_sets.len(),
                self.missing_sets.join(", ")
            );
        }
        if let Some(c) = &self.chosen {
            let i = c.index;
            let cal = c
                .calibration
                .get("gqr_score")
                .and_then(Value::as_f64)
                .unwrap_or(f64::NAN);
            let _ = writeln!(
                t,
                "chosen τ = {} (max GQR score on {}: {:.2}%); test {}: {}",
                self.grid[i],
                c.calibrate_on,
                100.0 * cal,
                if self.unseen {
                    "GQR-unseen score"
                } else {
                    "GQR score"
                },
                if self.test_scores[i].is_finite() {
                    format!("{:.2}%", 100.0 * self.test_scores[i])
                } else {
                    "n/a".into()
                }
            );
        }
        t.push_str(&crate::headline_text(&self.headline, &self.caveats));
        t
    }
}

/// Sweep the rejection threshold over the test sets of `data` (and calibrate, see
/// [`GqrSweepOptions`]), with the probabilities read from `scores` (`scores_name` in
/// messages; parsed after the data is checked, as the CLI reports errors).
///
/// `note` receives the stderr lines the CLI prints (`note: ...`: score lines of other splits
/// ignored, vectors not summing to 1).
///
/// Errors ([`SweepError`]): no rows to score, a bad scores line, a text without
/// probabilities, an id not in the scored (or calibration) sets, a calibration split that
/// lacks in-domain or label-3 rows.
pub fn sweep<R: BufRead>(
    data: &GqrData,
    scores: R,
    scores_name: &str,
    opts: &GqrSweepOptions,
    note: &mut dyn FnMut(String),
) -> Result<GqrSweepReport, SweepError> {
    let calib_splits = opts.calibration_splits()?;
    let wanted = opts.wanted_splits()?;
    let id_split = opts.id_split();
    let empty = Vec::new();
    let id_rows = data.splits.get(id_split).unwrap_or(&empty);
    let ood_rows = data.splits.get("ood_test").unwrap_or(&empty);
    if id_rows.is_empty() && ood_rows.is_empty() {
        return Err(data
            .split(id_split)
            .err()
            .map(SweepError::data)
            .unwrap_or_else(|| SweepError::data("no rows to score")));
    }
    // Missing sets, as `gqr score` lists them.
    let mut missing: Vec<String> = Vec::new();
    if opts.unseen {
        for (s, _) in UNSEEN_SETS {
            if !id_rows.iter().any(|r| r.dataset == s) {
                missing.push(s.to_string());
            }
        }
    } else if id_rows.is_empty() {
        missing.push("id_test (law, finance, healthcare)".into());
    }
    for s in OOD_SETS {
        if !ood_rows.iter().any(|r| r.dataset == s) {
            missing.push(s.to_string());
        }
    }
    let partial = !missing.is_empty();
    let have_id = !id_rows.is_empty();
    // Scores.
    let probs = read_probs(scores, scores_name)?;
    let pooled = !opts.unseen;
    let id_refs: Vec<&ExportRow> = id_rows.iter().collect();
    let ood_refs: Vec<&ExportRow> = ood_rows.iter().collect();
    let mut test = Side::new(&id_refs, &ood_refs, pooled);
    let test_rows: Vec<(&ExportRow, bool)> = id_refs
        .iter()
        .map(|r| (*r, false))
        .chain(ood_refs.iter().map(|r| (*r, true)))
        .collect();
    attach(
        &mut test,
        &test_rows,
        &probs.by_id,
        pooled,
        scores_name,
        "scored",
    )?;
    let mut calib: Option<Side> = None;
    let mut calib_rows: Vec<&ExportRow> = Vec::new();
    if !calib_splits.is_empty() {
        for s in &calib_splits {
            calib_rows.extend(data.split(s).map_err(SweepError::data)?.iter());
        }
        let cid: Vec<&ExportRow> = calib_rows
            .iter()
            .copied()
            .filter(|r| r.label != 3)
            .collect();
        let cood: Vec<&ExportRow> = calib_rows
            .iter()
            .copied()
            .filter(|r| r.label == 3)
            .collect();
        if cood.is_empty() || cid.is_empty() {
            return Err(SweepError::input(format!(
                "--calibrate-on {}: the split has {} in-domain and {} out-of-domain (label 3) rows; the GQR score needs both (use --calibrate-on background: the v2 eval split with its background class)",
                calib_splits.join("+"),
                cid.len(),
                cood.len()
            )));
        }
        let mut side = Side::new(&cid, &cood, true);
        let rows: Vec<(&ExportRow, bool)> = cid
            .iter()
            .map(|r| (*r, false))
            .chain(cood.iter().map(|r| (*r, true)))
            .collect();
        attach(
            &mut side,
            &rows,
            &probs.by_id,
            true,
            scores_name,
            "calibration",
        )?;
        calib = Some(side);
    }
    // Ids not among the swept texts: an error naming the line, unless they belong to another
    // split of the build (`<split>/<dataset>/<index>`) that this run does not use.
    let known: std::collections::HashSet<&str> = id_rows
        .iter()
        .chain(ood_rows)
        .chain(calib_rows.iter().copied())
        .map(|r| r.id.as_str())
        .collect();
    let mut other_splits = 0usize;
    for (id, ln) in &probs.order {
        if known.contains(id.as_str()) {
            continue;
        }
        let split = id.split('/').next().unwrap_or_default();
        if GQR_SPLITS.contains(&split) && !wanted.contains(&split) {
            other_splits += 1;
            continue;
        }
        return Err(SweepError::input(format!(
            "{scores_name}:{ln}: id {id:?} is not in the scored{} sets ({})",
            if calib.is_some() {
                " or calibration"
            } else {
                ""
            },
            data.origin
        )));
    }
    if other_splits > 0 {
        note(format!(
            "note: {scores_name}: {other_splits} line(s) score texts of splits this sweep does not use; ignored"
        ));
    }
    if probs.off_sum > 0 {
        note(format!(
            "note: {scores_name}: {} probs vector(s) do not sum to 1 (first: line {}); used as given",
            probs.off_sum, probs.first_off
        ));
    }
    let sweep_side = calib.as_ref().unwrap_or(&test);
    let grid = match &opts.thresholds {
        Some(g) => g.clone(),
        None => thin_grid(
            sweep_side.texts.iter().map(|t| t.top),
            DEFAULT_MAX_THRESHOLDS,
        ),
    };
    // Test-set points.
    let mut points: Vec<Map<String, Value>> = Vec::with_capacity(grid.len());
    let mut curve: Vec<(f64, f64)> = Vec::with_capacity(grid.len());
    let mut test_scores: Vec<f64> = Vec::with_capacity(grid.len());
    sweep_counts(&test, &grid, |k, cells| {
        let mut m = Map::new();
        m.insert("threshold".into(), num(grid[k]));
        if opts.unseen {
            let s = unseen_at(&test, cells);
            curve.push((s.ood_accuracy, s.unseen_id_accuracy));
            test_scores.push(s.gqr_unseen_score);
            m.extend(unseen_keys(&s, partial));
        } else {
            let s = gqr_at(&test, cells);
            curve.push((
                s.ood_accuracy,
                if have_id { s.id_accuracy } else { f64::NAN },
            ));
            test_scores.push(if have_id { s.gqr_score } else { f64::NAN });
            m.extend(gqr_keys(&s, have_id, partial));
        }
        points.push(m);
    });
    // Choice of τ.
    let chosen = match &calib {
        Some(side) => {
            let mut cal_scores: Vec<(f64, f64, f64)> = Vec::with_capacity(grid.len());
            let mut cal_keys: Vec<Map<String, Value>> = Vec::with_capacity(grid.len());
            sweep_counts(side, &grid, |k, cells| {
                let s = gqr_at(side, cells);
                cal_scores.push((grid[k], s.gqr_score, 0.0));
                cal_keys.push(gqr_keys(&s, true, false));
            });
            pick_threshold(&cal_scores, PickRule::MaxQuality).map(|i| GqrChosen {
                calibrate_on: match opts.calibrate_on {
                    Some(CalibrateOn::Dev) => "dev",
                    _ => "background",
                },
                splits: calib_splits.clone(),
                calibration_texts: side.texts.len(),
                index: i,
                calibration: cal_keys.swap_remove(i),
            })
        }
        None => None,
    };
    let mut report = GqrSweepReport {
        unseen: opts.unseen,
        scores: scores_name.to_string(),
        data: data.origin.clone(),
        missing_sets: missing,
        grid,
        points,
        curve,
        test_scores,
        scored_texts: test.texts.len(),
        chosen,
        headline: Vec::new(),
        caveats: Vec::new(),
    };
    (report.headline, report.caveats) = report.headline_of();
    if calib.is_some() && report.chosen.is_none() {
        report.caveats.push(
            "no threshold has a finite score on the calibration split: nothing was chosen".into(),
        );
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use routeval_core::Domain;

    fn row(split: &str, dataset: &str, i: usize, label: u8) -> ExportRow {
        let domain = [
            Domain::Law,
            Domain::Finance,
            Domain::Healthcare,
            Domain::Ood,
        ][label as usize];
        ExportRow {
            id: format!("{split}/{dataset}/{i}"),
            text: format!("t{i}"),
            label,
            domain,
            dataset: dataset.into(),
        }
    }

    /// Four ID texts (two right with high confidence, one right with low, one wrong) and two
    /// OOD texts of one set (one confident in-domain, one unsure); a background split.
    fn data() -> (GqrData, String) {
        let mut d = GqrData {
            origin: "build test".into(),
            ..Default::default()
        };
        d.splits.insert(
            "id_test".into(),
            vec![
                row("id_test", "law", 0, 0),
                row("id_test", "finance", 1, 1),
                row("id_test", "healthcare", 2, 2),
                row("id_test", "law", 3, 0),
            ],
        );
        d.splits.insert(
            "ood_test".into(),
            vec![
                row("ood_test", "jigsaw", 0, 3),
                row("ood_test", "jigsaw", 1, 3),
            ],
        );
        d.splits.insert(
            "eval_v2".into(),
            vec![
                row("eval_v2", "law", 0, 0),
                row("eval_v2", "wikitext", 1, 3),
            ],
        );
        let probs = [
            ("id_test/law/0", [0.9, 0.05, 0.05]),
            ("id_test/finance/1", [0.1, 0.8, 0.1]),
            ("id_test/healthcare/2", [0.3, 0.3, 0.4]),
            ("id_test/law/3", [0.2, 0.7, 0.1]),
            ("ood_test/jigsaw/0", [0.6, 0.2, 0.2]),
            ("ood_test/jigsaw/1", [0.34, 0.33, 0.33]),
            ("eval_v2/law/0", [0.7, 0.2, 0.1]),
            ("eval_v2/wikitext/1", [0.5, 0.25, 0.25]),
        ];
        let text = probs
            .iter()
            .map(|(id, p)| json!({"id": id, "probs": p}).to_string() + "\n")
            .collect();
        (d, text)
    }

    fn run(opts: &GqrSweepOptions, text: &str) -> Result<GqrSweepReport, SweepError> {
        let (d, _) = data();
        sweep(&d, text.as_bytes(), "p.jsonl", opts, &mut |_| {})
    }

    #[test]
    fn thresholds_move_texts_to_out_of_domain() {
        let (_, text) = data();
        let opts = GqrSweepOptions {
            thresholds: Some(vec![0.0, 0.5, 0.95]),
            ..Default::default()
        };
        let r = run(&opts, &text).unwrap();
        assert_eq!(r.grid, vec![0.0, 0.5, 0.95]);
        // τ = 0: argmax everywhere: 3 of 4 ID right, no OOD text rejected.
        assert_eq!(r.curve[0], (0.0, 0.75));
        // τ = 0.5: the unsure texts (0.4, 0.34) become 3.
        assert_eq!(r.curve[1], (0.5, 0.5));
        // τ = 0.95: everything is rejected.
        assert_eq!(r.curve[2], (1.0, 0.0));
        assert!(r.partial() && r.missing_sets.contains(&"olid".to_string()));
        let j = r.to_json();
        assert_eq!(j["points"][1]["threshold"], json!(0.5));
        assert_eq!(j["curve"]["points"][2], json!([1.0, 0.0]));
        assert!(
            r.render_text()
                .contains("3 thresholds, 6 scored texts (PARTIAL")
        );
    }

    #[test]
    fn calibration_on_background_picks_the_best_gqr_score() {
        let (_, text) = data();
        let opts = GqrSweepOptions {
            thresholds: Some(vec![0.0, 0.6, 0.8]),
            calibrate_on: Some(CalibrateOn::Background),
            ..Default::default()
        };
        let r = run(&opts, &text).unwrap();
        // Background: the law text (0.7) and the wikitext text (0.5): τ = 0.6 gets both right.
        assert_eq!(r.chosen_threshold(), Some(0.6));
        let c = r.chosen.as_ref().unwrap();
        assert_eq!(c.calibration_texts, 2);
        assert_eq!(c.calibration["gqr_score"], json!(1.0));
        assert_eq!(
            r.to_json()["chosen"]["test"],
            Value::Object(r.points[1].clone())
        );
        // The v1 eval split is refused, dev without label-3 rows too.
        let eval = GqrSweepOptions {
            calibrate_on: Some(CalibrateOn::Eval),
            ..Default::default()
        };
        assert!(
            run(&eval, &text)
                .unwrap_err()
                .to_string()
                .contains("no out-of-domain rows")
        );
    }

    #[test]
    fn bad_scores_name_file_and_line() {
        let (_, text) = data();
        let opts = GqrSweepOptions::default();
        let mut lines: Vec<&str> = text.lines().collect();
        lines[1] = r#"{"id": "id_test/finance/1", "probs": [0.5, 0.5]}"#;
        let e = run(&opts, &lines.join("\n")).unwrap_err().to_string();
        assert_eq!(e, "p.jsonl:2: probs must have 3 probabilities, got 2");
        let mut lines: Vec<&str> = text.lines().collect();
        lines.push(r#"{"id": "id_test/law/99", "probs": [1, 0, 0]}"#);
        let e = run(&opts, &lines.join("\n")).unwrap_err().to_string();
        assert!(e.starts_with("p.jsonl:9: id \"id_test/law/99\" is not in the scored sets"));
        let lines: Vec<&str> = text.lines().skip(1).collect();
        let e = run(&opts, &lines.join("\n")).unwrap_err().to_string();
        assert_eq!(
            e,
            "p.jsonl: no \"probs\" for 1 of 6 scored texts (first: id_test/law/0)"
        );
        assert!("sideways".parse::<CalibrateOn>().is_err());
    }
}
