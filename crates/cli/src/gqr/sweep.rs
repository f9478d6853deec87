//! `routeval gqr sweep`: sweep the rejection threshold of a GQR-Bench router that emits
//! probabilities.
//!
//! Input: `--scores FILE`, one `{"id", "probs": [p_law, p_finance, p_healthcare]}` per line.
//! At threshold τ a text gets the argmax domain if its probability is ≥ τ, else 3 (out of
//! domain) (`routeval_frontier::threshold::argmax_or_ood`). Every point carries the keys
//! `gqr score --json` prints for those predictions, computed by the same accumulators
//! (`routeval_routing_scores::gqr`) from running counts: the texts are sorted once by their
//! top probability and each threshold moves the texts below it to "out of domain".
//!
//! `--calibrate-on dev|eval|background` picks the τ maximising the GQR score on that split
//! (its in-domain rows and its label-3 rows) and reports the test sets at that τ.

use super::{Data, DataArgs, f};
use crate::common::{CmdResult, EXIT_OK, Failure, display_name, emit, open_input};
use routeval_bench_data::gqr::build::ExportRow;
use routeval_bench_data::gqr::{OOD_SETS, UNSEEN_SETS};
use routeval_frontier::threshold::{
    PickRule, argmax3, check_probs, parse_thresholds, pick_threshold, thin_grid,
};
use routeval_routing_scores::gqr::report::{gqr_keys, unseen_keys};
use routeval_routing_scores::gqr::{GqrAccumulator, GqrScore, UnseenAccumulator, UnseenScore};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::BufRead;
use std::path::{Path, PathBuf};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CalibrateOn {
    /// The v1 dev split (dev_train then dev_eval); needs label-3 rows to score OOD.
    Dev,
    /// The v1 eval split: refused (it has no out-of-domain rows).
    Eval,
    /// The v2 eval split: in-domain rows plus the background class (label 3).
    Background,
}

/// `routeval gqr sweep`.
#[derive(Debug, clap::Args)]
pub(crate) struct SweepArgs {
    /// Router probabilities, one `{"id", "probs": [p_law, p_finance, p_healthcare]}` per line
    /// (`-` = stdin), for every scored text (and every calibration text). Each probability must
    /// be a finite number in [0, 1]; vectors not summing to 1 are accepted (noted once).
    #[arg(long, value_name = "FILE")]
    scores: PathBuf,
    /// Thresholds: `A:B:STEP` (inclusive) or a comma list (default: 0, 1 and every distinct
    /// top probability, thinned to at most 1000).
    #[arg(long, value_name = "LIST|A:B:STEP")]
    thresholds: Option<String>,
    /// Sweep GQR-unseen (the nine unseen ID sets with the OOD sets) instead of GQR.
    #[arg(long)]
    unseen: bool,
    /// Choose τ maximising the GQR score on this split and report the test sets at it.
    #[arg(long, value_enum)]
    calibrate_on: Option<CalibrateOn>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write what would be printed to PATH.
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// stdout format: `text` (the table) or `md` (the report as Markdown).
    #[arg(long, value_enum, default_value = "text", conflicts_with = "json")]
    format: crate::report::TextFormat,
    #[command(flatten)]
    html: crate::report::HtmlArg,
    #[command(flatten)]
    data: DataArgs,
}

/// Parsed `--scores`: id → (probabilities, line); ids in file order with their lines; how many
/// vectors do not sum to 1 and the first such line.
type Probs = (
    HashMap<String, ([f64; 3], u64)>,
    Vec<(String, u64)>,
    usize,
    u64,
);

/// Read `--scores` (see [`Probs`]).
fn read_probs(path: &Path) -> Result<Probs, Failure> {
    let name = display_name(path);
    let reader = open_input(path)?;
    let mut map = HashMap::new();
    let mut order = Vec::new();
    let (mut off, mut first_off) = (0usize, 0u64);
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
            .and_then(Value::as_str)
            .ok_or_else(|| bad("missing string field \"id\"".into()))?;
        let probs = v
            .get("probs")
            .ok_or_else(|| bad(format!("row {id:?} has no \"probs\"")))?;
        let (p, o) = check_probs::<3>("probs", probs).map_err(|e| bad(e.to_string()))?;
        if o {
            off += 1;
            if first_off == 0 {
                first_off = ln;
            }
        }
        if map.insert(id.to_string(), (p, ln)).is_some() {
            return Err(bad(format!("duplicate id {id:?}")));
        }
        order.push((id.to_string(), ln));
    }
    Ok((map, order, off, first_off))
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
) -> Result<(), Failure> {
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
        return Err(Failure::bad_input(format!(
            "{scores_name}: no \"probs\" for {} of {} {what} texts (first: {first})",
            absent.len(),
            rows.len()
        )));
    }
    Ok(())
}

pub(crate) fn sweep(a: SweepArgs) -> CmdResult {
    crate::report::check_target(&a.html)?;
    let grid_given = match &a.thresholds {
        Some(t) => Some(parse_thresholds(t).map_err(Failure::bad_input)?),
        None => None,
    };
    let calib_splits: Vec<&str> = match a.calibrate_on {
        None => Vec::new(),
        Some(CalibrateOn::Eval) => {
            return Err(Failure::bad_input(
                "--calibrate-on eval: the v1 eval split has no out-of-domain rows (label 3), so the GQR score cannot be computed on it; use --calibrate-on background (the v2 eval split with its background class)",
            ));
        }
        Some(CalibrateOn::Dev) => vec!["dev_train", "dev_eval"],
        Some(CalibrateOn::Background) => vec!["eval_v2"],
    };
    let id_split = if a.unseen { "unseen_id" } else { "id_test" };
    let mut wanted = vec![id_split, "ood_test"];
    wanted.extend(&calib_splits);
    let data = Data::load(&a.data, &wanted)?;
    let empty = Vec::new();
    let id_rows = data.splits.get(id_split).unwrap_or(&empty);
    let ood_rows = data.splits.get("ood_test").unwrap_or(&empty);
    if id_rows.is_empty() && ood_rows.is_empty() {
        return Err(data
            .split(id_split)
            .err()
            .unwrap_or_else(|| Failure::bad_input("no rows to score")));
    }
    // Missing sets, as `gqr score` lists them.
    let mut missing: Vec<String> = Vec::new();
    if a.unseen {
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
    let scores_name = display_name(&a.scores);
    let (probs, order, off_sum, first_off) = read_probs(&a.scores)?;
    let pooled = !a.unseen;
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
        &probs,
        pooled,
        &scores_name,
        "scored",
    )?;
    let mut calib: Option<Side> = None;
    let mut calib_rows: Vec<&ExportRow> = Vec::new();
    if !calib_splits.is_empty() {
        for s in &calib_splits {
            calib_rows.extend(data.split(s)?.iter());
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
            return Err(Failure::bad_input(format!(
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
        attach(&mut side, &rows, &probs, true, &scores_name, "calibration")?;
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
    for (id, ln) in &order {
        if known.contains(id.as_str()) {
            continue;
        }
        let split = id.split('/').next().unwrap_or_default();
        if GQR_SPLITS.contains(&split) && !wanted.contains(&split) {
            other_splits += 1;
            continue;
        }
        return Err(Failure::bad_input(format!(
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
        eprintln!(
            "note: {scores_name}: {other_splits} line(s) score texts of splits this sweep does not use; ignored"
        );
    }
    if off_sum > 0 {
        eprintln!(
            "note: {scores_name}: {off_sum} probs vector(s) do not sum to 1 (first: line {first_off}); used as given"
        );
    }
    let sweep_side = calib.as_ref().unwrap_or(&test);
    let grid = match grid_given {
        Some(g) => g,
        None => thin_grid(sweep_side.texts.iter().map(|t| t.top), 1000),
    };
    // Test-set points.
    let mut points: Vec<Value> = Vec::with_capacity(grid.len());
    let mut curve: Vec<(f64, f64)> = Vec::with_capacity(grid.len());
    let mut test_scores: Vec<f64> = Vec::with_capacity(grid.len());
    sweep_counts(&test, &grid, |k, cells| {
        let mut m = Map::new();
        m.insert("threshold".into(), f(grid[k]));
        if a.unseen {
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
        points.push(Value::Object(m));
    });
    // Choice of τ.
    let mut tail = String::new();
    let mut chosen_tau: Option<f64> = None;
    let chosen = match &calib {
        Some(side) => {
            let mut cal_scores: Vec<(f64, f64, f64)> = Vec::with_capacity(grid.len());
            let mut cal_keys: Vec<Map<String, Value>> = Vec::with_capacity(grid.len());
            sweep_counts(side, &grid, |k, cells| {
                let s = gqr_at(side, cells);
                cal_scores.push((grid[k], s.gqr_score, 0.0));
                cal_keys.push(gqr_keys(&s, true, false));
            });
            match pick_threshold(&cal_scores, PickRule::MaxQuality) {
                None => Value::Null,
                Some(i) => {
                    chosen_tau = Some(grid[i]);
                    let name = match a.calibrate_on {
                        Some(CalibrateOn::Dev) => "dev",
                        _ => "background",
                    };
                    let _ = writeln!(
                        tail,
                        "chosen τ = {} (max GQR score on {name}: {:.2}%); test {}: {}",
                        grid[i],
                        100.0 * cal_scores[i].1,
                        if a.unseen {
                            "GQR-unseen score"
                        } else {
                            "GQR score"
                        },
                        if test_scores[i].is_finite() {
                            format!("{:.2}%", 100.0 * test_scores[i])
                        } else {
                            "n/a".into()
                        }
                    );
                    json!({
                        "calibrate_on": name,
                        "splits": calib_splits,
                        "calibration_texts": side.texts.len(),
                        "threshold": f(grid[i]),
                        "calibration": Value::Object(cal_keys.swap_remove(i)),
                        "test": points[i].clone(),
                    })
                }
            }
        }
        None => Value::Null,
    };
    let md = a.format == crate::report::TextFormat::Md;
    let doc = (md || a.html.html.is_some()).then(|| {
        let rows: Vec<crate::report::gqr::SweepRow> = grid
            .iter()
            .zip(&curve)
            .zip(&test_scores)
            .map(|((tau, (ood, id)), sc)| crate::report::gqr::SweepRow {
                tau: *tau,
                id: *id,
                ood: *ood,
                score: *sc,
            })
            .collect();
        crate::report::gqr::sweep_document(
            &rows,
            chosen_tau,
            if a.unseen {
                "GQR-unseen score"
            } else {
                "GQR score"
            },
            format!(
                "{}: {} thresholds, {} scored texts of {scores_name}; data {}{}{}",
                if a.unseen { "GQR-unseen" } else { "GQR-Bench" },
                grid.len(),
                test.texts.len(),
                data.origin,
                if partial {
                    " (PARTIAL: sets missing)"
                } else {
                    ""
                },
                if chosen_tau.is_some() {
                    "; τ chosen on the calibration split, reported on the test split"
                } else {
                    ""
                }
            ),
        )
    });
    let stdin_used = crate::report::uses_stdin([a.scores.as_path()]);
    if let Some(doc) = &doc {
        crate::report::write_html(&a.html, doc, stdin_used)?;
    }
    let out = if let (true, Some(doc)) = (md, &doc) {
        crate::report::markdown(doc, stdin_used)
    } else if a.json {
        let mut o = Map::new();
        o.insert(
            "benchmark".into(),
            json!(if a.unseen { "GQR-unseen" } else { "GQR-Bench" }),
        );
        o.insert(
            "rule".into(),
            json!("argmax of [p_law, p_finance, p_healthcare] if its probability >= threshold, else 3 (out of domain)"),
        );
        o.insert("scores".into(), json!(scores_name));
        o.insert("data".into(), json!(data.origin));
        o.insert("complete".into(), json!(!partial));
        if partial {
            o.insert("missing_sets".into(), json!(missing));
        }
        o.insert("points".into(), Value::Array(points));
        o.insert(
            "curve".into(),
            json!({
                "x": "ood_accuracy",
                "y": if a.unseen { "unseen_id_accuracy" } else { "id_accuracy" },
                "points": curve.iter().map(|(x, y)| json!([f(*x), f(*y)])).collect::<Vec<_>>(),
            }),
        );
        o.insert("chosen".into(), chosen);
        let mut s = serde_json::to_string(&Value::Object(o)).unwrap_or_default();
        s.push('\n');
        s
    } else {
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
            if a.unseen { "GQR-unseen" } else { "GQR-Bench" },
            grid.len(),
            test.texts.len(),
            if partial {
                " (PARTIAL: sets missing)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            t,
            "  {:>10} {:>12} {:>12} {:>12}",
            "threshold",
            if a.unseen { "unseen ID" } else { "ID acc" },
            "OOD acc",
            if a.unseen { "GQR-unseen" } else { "GQR" }
        );
        for ((tau, (ood, id)), sc) in grid.iter().zip(&curve).zip(&test_scores) {
            let _ = writeln!(
                t,
                "  {:>10.6} {:>12} {:>12} {:>12}",
                tau,
                pct(*id),
                pct(*ood),
                pct(*sc)
            );
        }
        if partial {
            let _ = writeln!(
                t,
                "  missing sets ({}): {}",
                missing.len(),
                missing.join(", ")
            );
        }
        t.push_str(&tail);
        t
    };
    emit(a.output.as_ref(), out.as_bytes())?;
    Ok(EXIT_OK)
}
