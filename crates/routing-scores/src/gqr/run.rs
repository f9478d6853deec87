//! One `gqr score` run as a typed value ([`ScoreRun`]): the predictions file's parser
//! ([`read_predictions`], a `BufRead`er in), the match of predictions to the scored rows
//! ([`Predictions::labels_for`]), the label-type rules ([`apply_type_rules`]), the missing
//! sets ([`missing_sets`]) and the scoring with its optional bootstrap intervals and paired
//! baseline comparison ([`score`]). The text table, `--json`, `--format md` and `--html`
//! (`routeval_views::gqr::{run_text, run_json, run_document}`) all render one `ScoreRun`, so
//! a block cannot exist in one face and not another. Accuracies are fractions; latencies
//! milliseconds.

use super::report::{LatencySummary, ScoreReport, Scored, set_display_name};
use super::{AccuracyStrata, GqrAccumulator, GqrBaseline, LabelError, RawLabel, UnseenAccumulator};
use routeval_core::gate::NamedMetrics;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::BufRead;

/// One scored row of a GQR split, borrowed from the build's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row<'a> {
    /// The row id (`<split>/<dataset>/<index>`).
    pub id: &'a str,
    /// The text a router is asked to route.
    pub text: &'a str,
    /// The set (dataset) the row belongs to.
    pub set: &'a str,
    /// The gold label (domain 0..=2 for ID rows; OOD rows are scored against 3).
    pub label: i64,
}

/// A problem of a predictions file (one `{"id", "label"}` per line); [`PredictionsError::line`]
/// is the 1-based line, the `Display` text the problem without the file's name.
#[derive(Debug, thiserror::Error)]
pub enum PredictionsError {
    /// The reader failed.
    #[error("cannot read: {source}")]
    Read {
        /// 1-based line.
        line: u64,
        /// The reader's error.
        source: std::io::Error,
    },
    /// The line is not UTF-8 (`byte`: 1-based offset in the line of the first bad byte).
    #[error("invalid UTF-8 at byte {byte} of the line")]
    Utf8 {
        /// 1-based line.
        line: u64,
        /// 1-based byte of the line.
        byte: usize,
    },
    /// The line is not JSON (`message`: serde_json's).
    #[error("bad JSON: {message}")]
    Json {
        /// 1-based line.
        line: u64,
        /// The parser's message.
        message: String,
    },
    /// No string `"id"`.
    #[error("missing string field \"id\"")]
    NoId {
        /// 1-based line.
        line: u64,
    },
    /// No numeric (or string) `"label"`.
    #[error("missing or non-numeric field \"label\"")]
    NoLabel {
        /// 1-based line.
        line: u64,
    },
}

impl PredictionsError {
    /// The 1-based line of the problem.
    pub fn line(&self) -> u64 {
        match self {
            PredictionsError::Read { line, .. }
            | PredictionsError::Utf8 { line, .. }
            | PredictionsError::Json { line, .. }
            | PredictionsError::NoId { line }
            | PredictionsError::NoLabel { line } => *line,
        }
    }
}

/// Ids given more than once in a predictions file (the last line of an id wins). `Display`:
/// `N repeated id(s), first "ID" at line L; the last prediction of each id is used`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{count} repeated id(s), first {first:?} at line {line}; the last prediction of each id is used"
)]
pub struct Repeated {
    /// How many lines repeated an earlier id.
    pub count: usize,
    /// The first repeated id.
    pub first: String,
    /// Its (1-based) line.
    pub line: u64,
}

/// A parsed predictions file: id → (raw label, 1-based line).
#[derive(Debug, Clone, Default)]
pub struct Predictions {
    /// The last label of each id and the line it came from.
    pub by_id: HashMap<String, (RawLabel, u64)>,
    /// Repeated ids, when any (a warning for the front end).
    pub repeated: Option<Repeated>,
}

/// Read a predictions file: one `{"id": string, "label": number|string}` per line, blank
/// lines skipped; the last line of a repeated id wins ([`Predictions::repeated`]).
///
/// # Errors
/// The first unreadable, non-UTF-8 or malformed line ([`PredictionsError`]).
pub fn read_predictions(reader: impl BufRead) -> Result<Predictions, PredictionsError> {
    let mut out = Predictions::default();
    for (i, line) in reader.split(b'\n').enumerate() {
        let line_no = i as u64 + 1;
        let bytes = line.map_err(|source| PredictionsError::Read {
            line: line_no,
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| PredictionsError::Utf8 {
            line: line_no,
            byte: e.utf8_error().valid_up_to() + 1,
        })?;
        if text.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| PredictionsError::Json {
            line: line_no,
            message: e.to_string(),
        })?;
        let id = v
            .get("id")
            .and_then(Value::as_str)
            .ok_or(PredictionsError::NoId { line: line_no })?;
        let label = v
            .get("label")
            .and_then(RawLabel::from_json)
            .ok_or(PredictionsError::NoLabel { line: line_no })?;
        if out.by_id.insert(id.to_string(), (label, line_no)).is_some() {
            let r = out.repeated.get_or_insert_with(|| Repeated {
                count: 0,
                first: id.to_string(),
                line: line_no,
            });
            r.count += 1;
        }
    }
    Ok(out)
}

/// Scored rows without a prediction. `Display`: `no prediction for N of TOTAL rows (first:
/// a, b, c)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no prediction for {absent} of {total} rows (first: {})", first.join(", "))]
pub struct MissingPredictions {
    /// Rows without a prediction.
    pub absent: usize,
    /// Rows scored.
    pub total: usize,
    /// The first (at most 3) ids without one.
    pub first: Vec<String>,
}

/// Predictions whose ids are not among the scored rows (ignored). `Display`: `N predictions
/// have ids not in the scored sets and were ignored (first: line L "ID")`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{count} predictions have ids not in the scored sets and were ignored (first: line {line} {first:?})"
)]
pub struct UnusedPredictions {
    /// How many.
    pub count: usize,
    /// The first in file order.
    pub first: String,
    /// Its (1-based) line.
    pub line: u64,
}

/// The labels of the scored rows, in row order, with the line each came from.
#[derive(Debug, Clone, Default)]
pub struct MatchedLabels {
    /// One raw label per row.
    pub labels: Vec<RawLabel>,
    /// The predictions file's 1-based line of each label.
    pub lines: Vec<u64>,
    /// Predictions left over (a warning for the front end).
    pub unused: Option<UnusedPredictions>,
}

impl Predictions {
    /// The labels of `rows` (every row needs one), consuming the predictions.
    ///
    /// # Errors
    /// [`MissingPredictions`] when some row has none.
    pub fn labels_for<'a>(
        mut self,
        rows: impl Iterator<Item = &'a Row<'a>>,
    ) -> Result<MatchedLabels, MissingPredictions> {
        let mut out = MatchedLabels::default();
        let mut absent = Vec::new();
        for r in rows {
            match self.by_id.remove(r.id) {
                Some((l, ln)) => {
                    out.labels.push(l);
                    out.lines.push(ln);
                }
                None => absent.push(r.id.to_string()),
            }
        }
        if !absent.is_empty() {
            return Err(MissingPredictions {
                absent: absent.len(),
                total: out.labels.len() + absent.len(),
                first: absent.into_iter().take(3).collect(),
            });
        }
        let mut extra: Vec<(&String, u64)> = self.by_id.iter().map(|(k, v)| (k, v.1)).collect();
        extra.sort_by_key(|x| x.1);
        out.unused = extra.first().map(|(id, line)| UnusedPredictions {
            count: extra.len(),
            first: (*id).clone(),
            line: *line,
        });
        Ok(out)
    }
}

/// Every label under the path's type rules: GQR-unseen casts ([`RawLabel::cast`]), GQR is
/// strict ([`RawLabel::strict`]).
///
/// # Errors
/// The index of the first label that cannot be scored, and why.
pub fn apply_type_rules(
    labels: &[RawLabel],
    unseen: bool,
) -> Result<Vec<i64>, (usize, LabelError)> {
    labels
        .iter()
        .enumerate()
        .map(|(i, l)| if unseen { l.cast() } else { l.strict() }.map_err(|e| (i, e)))
        .collect()
}

/// The sets a score lacks: with `unseen`, each of `expected_unseen` without rows; else
/// `id_test (law, finance, healthcare)` when there are no ID rows; then each of `ood_sets`
/// without rows.
pub fn missing_sets(
    unseen: bool,
    expected_unseen: &[&str],
    ood_sets: &[&str],
    id_rows: &[Row<'_>],
    ood_rows: &[Row<'_>],
) -> Vec<String> {
    let mut missing: Vec<String> = Vec::new();
    if unseen {
        for s in expected_unseen {
            if !id_rows.iter().any(|r| r.set == *s) {
                missing.push(s.to_string());
            }
        }
    } else if id_rows.is_empty() {
        missing.push("id_test (law, finance, healthcare)".into());
    }
    for s in ood_sets {
        if !ood_rows.iter().any(|r| r.set == *s) {
            missing.push(s.to_string());
        }
    }
    missing
}

/// `--rows`: one JSON line per scored text, in scoring order: `{"id", "set", "label",
/// "prediction", "correct", "latency_ms"}`; `prediction` is the label under the path's type
/// rules, `latency_ms` (milliseconds) null when not timed or not finite.
pub fn rows_jsonl<'a>(
    rows: impl Iterator<Item = &'a Row<'a>>,
    preds: &[i64],
    latency_ms: &[f64],
) -> String {
    let mut out = String::new();
    for (i, (r, p)) in rows.zip(preds).enumerate() {
        let lat = latency_ms
            .get(i)
            .filter(|x| x.is_finite())
            .map_or(Value::Null, |x| json!(x));
        let line = json!({
            "id": r.id,
            "set": r.set,
            "label": r.label,
            "prediction": p,
            "correct": *p == r.label,
            "latency_ms": lat,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// `--save-predictions`: one `{"id", "label"}` per line (the predictions format), each label
/// exactly as the router answered it.
pub fn predictions_jsonl<'a>(
    rows: impl Iterator<Item = &'a Row<'a>>,
    labels: &[RawLabel],
) -> String {
    let mut out = String::new();
    for (r, l) in rows.zip(labels) {
        let label = match l {
            RawLabel::Int(i) => json!(i),
            RawLabel::Float(x) => json!(x),
            RawLabel::Str(s) => json!(s),
        };
        out.push_str(&json!({"id": r.id, "label": label}).to_string());
        out.push('\n');
    }
    out
}

/// numpy's default ('linear') percentile of `v`, `q` in 0..=100; `None` when empty.
pub fn percentile(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q / 100.0 * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    Some(v[lo] + (v[hi] - v[lo]) * (pos - lo as f64))
}

/// One scored set of a GQR run (a row of the report's accuracy bars).
#[derive(Debug, Clone, PartialEq)]
pub struct SetAccuracy {
    /// Display name (e.g. `ID test (pooled)`, `jigsaw`).
    pub name: String,
    /// `ID`, `unseen ID` or `OOD`.
    pub kind: &'static str,
    /// Rows scored.
    pub rows: usize,
    /// Accuracy (fraction).
    pub accuracy: f64,
    /// `--ci`: the accuracy's bootstrap interval (fractions; NaN bounds = n/a).
    pub ci: Option<(f64, f64)>,
}

/// The bootstrap settings of `--ci` and `--baseline`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resampling {
    /// `--ci`: the confidence level (a fraction in (0, 1)); `None` = no intervals.
    pub level: Option<f64>,
    /// Bootstrap replicates.
    pub replicates: u64,
    /// The bootstrap's seed.
    pub seed: u64,
}

/// What [`score`] scores.
#[derive(Debug, Clone)]
pub struct ScoreInput<'a> {
    /// ID rows (the ID test set, or the unseen ID sets with `unseen`).
    pub id_rows: &'a [Row<'a>],
    /// OOD rows.
    pub ood_rows: &'a [Row<'a>],
    /// One prediction per row (ID rows, then OOD rows), under the type rules.
    pub preds: &'a [i64],
    /// GQR-unseen instead of GQR.
    pub unseen: bool,
    /// The missing sets ([`missing_sets`]).
    pub missing: &'a [String],
    /// The build's `(set, reason)` list for missing sets.
    pub reasons: &'a [(String, String)],
    /// Per-text router latency (ms); empty when not timed.
    pub latency_ms: Vec<f64>,
    /// Where the data came from (the build or the mirror).
    pub data: String,
    /// `--ci` / `--baseline` bootstrap settings.
    pub resampling: Resampling,
    /// `--baseline`: the baseline's name (as shown) and its predictions on the same rows.
    pub baseline: Option<(String, &'a [i64])>,
}

/// Why [`score`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoreRunError {
    /// The baseline's rows are not the run's.
    #[error("the rows differ")]
    RowsDiffer,
}

/// One `gqr score` run: the report and every block the faces show.
#[derive(Debug, Clone)]
pub struct ScoreRun {
    /// The score, sets, missing sets and latency.
    pub report: ScoreReport,
    /// Per set, in table order.
    pub sets: Vec<SetAccuracy>,
    /// `--ci`: intervals of `[ID accuracy, OOD accuracy, score]`.
    pub intervals: Option<routeval_stats::Intervals>,
    /// `--ci`: each set's accuracy interval (same replicates), by stratum name.
    pub set_intervals: Option<Vec<(String, routeval_stats::BootstrapCi)>>,
    /// `--baseline`: the paired comparison.
    pub baseline: Option<GqrBaseline>,
    /// `(gold, predicted)` per row: domain labels 0..=2, 3 = OOD.
    pub gold_pred: Vec<(i64, i64)>,
    /// Router latency per text (ms), empty when not timed.
    pub latency_ms: Vec<f64>,
    /// Where the data came from.
    pub data: String,
}

impl ScoreRun {
    /// `GQR-Bench` or `GQR-unseen`.
    pub fn benchmark(&self) -> &'static str {
        match self.report.scored {
            Scored::Gqr { .. } => "GQR-Bench",
            Scored::Unseen(_) => "GQR-unseen",
        }
    }

    /// The metrics a `--fail-under`/`--fail-over` gate reads (the score's).
    pub fn gate_metrics(&self) -> &dyn NamedMetrics {
        match &self.report.scored {
            Scored::Gqr { score, .. } => score,
            Scored::Unseen(s) => s,
        }
    }

    /// `(metric, note)`: a gate on a partial score (or on the OOD accuracy of a partial
    /// build) says so.
    pub fn gate_notes(&self) -> Vec<(String, String)> {
        self.report
            .partial_note()
            .map(|n| {
                [self.report.score_key(), "ood_accuracy"]
                    .iter()
                    .map(|k| (k.to_string(), n.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `--ci`: the interval of set `key` (a stratum name), when computed.
    pub fn set_ci(&self, key: &str) -> Option<(f64, f64)> {
        self.set_intervals
            .as_ref()
            .and_then(|v| v.iter().find(|(n, _)| n == key))
            .map(|(_, c)| (c.low, c.high))
    }
}

/// Resampling strata: the pooled ID set (GQR) or each unseen set, then each OOD set.
fn strata(input: &ScoreInput<'_>, preds: &[i64]) -> AccuracyStrata {
    AccuracyStrata::new(
        input
            .id_rows
            .iter()
            .map(|r| (r.set, true))
            .chain(input.ood_rows.iter().map(|r| (r.set, false)))
            .zip(input.id_rows.iter().chain(input.ood_rows).zip(preds))
            .map(|((set, is_id), (r, p))| (set, is_id, *p == r.label)),
        input.unseen,
    )
}

/// Score a run: the accumulators, the per-set rows, `--ci` intervals and the `--baseline`
/// comparison (its bootstrap at the `--ci` level, default 0.95).
///
/// # Errors
/// [`ScoreRunError::RowsDiffer`] when the baseline's rows are not the run's.
pub fn score(input: ScoreInput<'_>) -> Result<ScoreRun, ScoreRunError> {
    let rs = input.resampling;
    let run_strata = strata(&input, input.preds);
    let intervals = rs
        .level
        .map(|level| run_strata.intervals(level, rs.replicates, rs.seed));
    let set_intervals = rs
        .level
        .map(|level| run_strata.set_intervals(level, rs.replicates, rs.seed));
    let baseline = match &input.baseline {
        None => None,
        Some((name, bpreds)) => {
            let level = rs.level.unwrap_or(0.95);
            let comparison = run_strata
                .compare(&strata(&input, bpreds), level, rs.replicates, rs.seed)
                .ok_or(ScoreRunError::RowsDiffer)?;
            Some(GqrBaseline {
                predictions: name.clone(),
                level,
                replicates: rs.replicates,
                seed: rs.seed,
                comparison,
            })
        }
    };
    let set_ci = |key: &str| {
        set_intervals
            .as_ref()
            .and_then(|v| v.iter().find(|(n, _)| n == key))
            .map(|(_, c)| (c.low, c.high))
    };
    let (scored, sets) = accumulate(&input, &set_ci);
    let mut report = ScoreReport::new(
        scored,
        input.id_rows.len(),
        input.ood_rows.len(),
        input.missing,
        input.reasons,
    );
    report.latency_ms = (!input.latency_ms.is_empty()).then(|| {
        let p = |q| percentile(&input.latency_ms, q).unwrap_or(f64::NAN);
        LatencySummary {
            p50: p(50.0),
            p95: p(95.0),
            p99: p(99.0),
            texts: input.latency_ms.len(),
        }
    });
    let gold_pred = input
        .id_rows
        .iter()
        .map(|r| r.label)
        .chain(input.ood_rows.iter().map(|_| 3))
        .zip(input.preds.iter().copied())
        .collect();
    Ok(ScoreRun {
        report,
        sets,
        intervals,
        set_intervals,
        baseline,
        gold_pred,
        latency_ms: input.latency_ms,
        data: input.data,
    })
}

/// The accumulated score and the per-set rows (`set_ci`: a set's `--ci` interval).
fn accumulate(
    input: &ScoreInput<'_>,
    set_ci: &dyn Fn(&str) -> Option<(f64, f64)>,
) -> (Scored, Vec<SetAccuracy>) {
    let (id_preds, ood_preds) = input.preds.split_at(input.id_rows.len());
    let rows_in = |rows: &[Row<'_>], set: &str| rows.iter().filter(|r| r.set == set).count();
    let mut sets = Vec::new();
    let mut push = |name: String, kind, rows, accuracy, key: &str| {
        sets.push(SetAccuracy {
            name,
            kind,
            rows,
            accuracy,
            ci: set_ci(key),
        });
    };
    if input.unseen {
        let mut acc = UnseenAccumulator::default();
        for (r, p) in input.id_rows.iter().zip(id_preds) {
            acc.add_unseen(r.set, r.label, *p);
        }
        for (r, p) in input.ood_rows.iter().zip(ood_preds) {
            acc.add_ood(r.set, *p);
        }
        let s = acc.finish();
        for (k, v) in &s.unseen_id_per_dataset {
            push(
                set_display_name(k),
                "unseen ID",
                rows_in(input.id_rows, k),
                *v,
                k,
            );
        }
        for (k, v) in &s.ood_per_dataset {
            push(
                set_display_name(k),
                "OOD",
                rows_in(input.ood_rows, k),
                *v,
                k,
            );
        }
        (Scored::Unseen(s), sets)
    } else {
        let mut acc = GqrAccumulator::default();
        for (r, p) in input.id_rows.iter().zip(id_preds) {
            acc.add_id(r.label, *p);
        }
        for (r, p) in input.ood_rows.iter().zip(ood_preds) {
            acc.add_ood(r.set, *p);
        }
        let s = acc.finish();
        let have_id = !input.id_rows.is_empty();
        if have_id {
            let n = input.id_rows.len();
            push("ID test (pooled)".into(), "ID", n, s.id.accuracy, "id_test");
        }
        for d in &s.ood_per_dataset {
            let n = rows_in(input.ood_rows, &d.dataset);
            push(
                set_display_name(&d.dataset),
                "OOD",
                n,
                d.eval.accuracy,
                &d.dataset,
            );
        }
        (Scored::Gqr { score: s, have_id }, sets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Row<'static>> {
        vec![
            Row {
                id: "a",
                text: "",
                set: "law",
                label: 0,
            },
            Row {
                id: "b",
                text: "",
                set: "law",
                label: 1,
            },
            Row {
                id: "c",
                text: "",
                set: "jigsaw",
                label: 3,
            },
            Row {
                id: "d",
                text: "",
                set: "olid",
                label: 3,
            },
        ]
    }

    #[test]
    fn predictions_parse_match_and_warn() {
        let text = "{\"id\": \"a\", \"label\": 0}\n\n{\"id\": \"b\", \"label\": 2}\n{\"id\": \"c\", \"label\": 3}\n{\"id\": \"d\", \"label\": 0}\n{\"id\": \"a\", \"label\": 0}\n{\"id\": \"z\", \"label\": 1}\n";
        let p = read_predictions(text.as_bytes()).unwrap();
        assert_eq!(
            p.repeated.as_ref().unwrap().to_string(),
            "1 repeated id(s), first \"a\" at line 6; the last prediction of each id is used"
        );
        let rows = rows();
        let m = p.labels_for(rows.iter()).unwrap();
        assert_eq!(m.lines, vec![6, 3, 4, 5]);
        assert_eq!(
            m.unused.unwrap().to_string(),
            "1 predictions have ids not in the scored sets and were ignored (first: line 7 \"z\")"
        );
        let missing = read_predictions("{\"id\": \"a\", \"label\": 0}\n".as_bytes())
            .unwrap()
            .labels_for(rows.iter())
            .unwrap_err();
        assert_eq!(
            missing.to_string(),
            "no prediction for 3 of 4 rows (first: b, c, d)"
        );
        let e = read_predictions("{\"id\": 1}\n".as_bytes()).unwrap_err();
        assert_eq!(
            (e.line(), e.to_string()),
            (1, "missing string field \"id\"".into())
        );
    }

    #[test]
    fn a_run_scores_sets_and_compares() {
        let rows = rows();
        let (id, ood) = rows.split_at(2);
        let missing = missing_sets(false, &[], &["jigsaw", "olid", "x"], id, ood);
        assert_eq!(missing, vec!["x".to_string()]);
        let preds = [0, 2, 3, 0];
        let base = [0, 1, 3, 3];
        let run = score(ScoreInput {
            id_rows: id,
            ood_rows: ood,
            preds: &preds,
            unseen: false,
            missing: &missing,
            reasons: &[],
            latency_ms: vec![1.0, 3.0],
            data: "test".into(),
            resampling: Resampling {
                level: Some(0.9),
                replicates: 50,
                seed: 1,
            },
            baseline: Some(("base".into(), &base)),
        })
        .unwrap();
        assert_eq!(run.benchmark(), "GQR-Bench");
        assert_eq!(run.sets.len(), 3);
        assert_eq!(run.sets[0].accuracy, 0.5);
        assert!(run.sets[0].ci.is_some());
        assert_eq!(run.gold_pred[3], (3, 0));
        assert_eq!(run.report.latency_ms.unwrap().p50, 2.0);
        assert_eq!(run.gate_notes().len(), 2);
        assert!(run.baseline.is_some());
        assert_eq!(run.gate_metrics().metric_value("ood_accuracy"), Some(0.5));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(
            apply_type_rules(&[RawLabel::Float(1.5)], false)
                .unwrap_err()
                .0,
            0
        );
    }
}
