//! The `routeval gqr score` report as a typed value ([`ScoreReport`]): the score, its sets,
//! the missing sets and the router's latency, with the two renderings front ends print
//! ([`ScoreReport::render_text`], [`ScoreReport::to_json`]). The JSON keys of a score
//! ([`gqr_keys`], [`unseen_keys`]) are defined here once for `gqr score` and every sweep
//! point. Fractions throughout (the text shows percentages with 2 decimals).

use super::{GqrScore, UnseenScore};
use serde_json::{Map, Value, json};
use std::fmt::Write as _;

/// A finite number as JSON, else `null`.
fn num(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// A fraction as a percentage with 2 decimals and `%`, `n/a` when not finite.
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.2}%", 100.0 * x)
    } else {
        "n/a".into()
    }
}

/// A set name as shown in tables: as is, or quoted (Rust string syntax) when it has
/// surrounding whitespace or is empty, so that upstream's `"hate_speech_slovak "` (with its
/// trailing space) is visible as such.
pub fn set_display_name(name: &str) -> String {
    if name.is_empty() || name.trim() != name {
        format!("{name:?}")
    } else {
        name.to_string()
    }
}

/// One line of `gqr score`'s text tables: the label left-aligned in 32 columns, each value
/// right-aligned in 10, then an optional remark (the `--baseline` block uses it too).
pub fn row<S: AsRef<str>>(table: &mut String, label: &str, values: &[S], remark: &str) {
    let _ = write!(table, "  {label:<32}");
    for v in values {
        let _ = write!(table, " {:>10}", v.as_ref());
    }
    if !remark.is_empty() {
        let _ = write!(table, "  {remark}");
    }
    table.push('\n');
}

/// The keys `gqr score --json` prints for a GQR-Bench score (without `missing_sets`,
/// `latency_ms` and the front end's own keys), in order: `benchmark`, `complete`,
/// `partial: true` (only when `partial`), `id_accuracy`, `ood_accuracy`, `gqr_score`, `id`,
/// `ood_per_dataset`. Without ID rows the ID numbers and the score are `null`. A partial
/// score keeps the metric's name (`gqr_score`, so code reading the key and `--fail-under
/// gqr_score` work on any build) and is marked by `"complete": false, "partial": true` and
/// the report's `missing_sets`.
pub fn gqr_keys(s: &GqrScore, have_id: bool, partial: bool) -> Map<String, Value> {
    let mut report = Map::new();
    report.insert("benchmark".into(), json!("GQR-Bench"));
    report.insert("complete".into(), json!(!partial));
    if partial {
        report.insert("partial".into(), json!(true));
    }
    report.insert(
        "id_accuracy".into(),
        if have_id {
            num(s.id_accuracy)
        } else {
            Value::Null
        },
    );
    report.insert("ood_accuracy".into(), num(s.ood_accuracy));
    report.insert(
        "gqr_score".into(),
        if have_id {
            num(s.gqr_score)
        } else {
            Value::Null
        },
    );
    report.insert(
        "id".into(),
        if have_id {
            serde_json::to_value(s.id).unwrap_or_default()
        } else {
            Value::Null
        },
    );
    report.insert(
        "ood_per_dataset".into(),
        serde_json::to_value(&s.ood_per_dataset).unwrap_or_default(),
    );
    report
}

/// The keys `gqr score --unseen --json` prints (without `missing_sets`, `latency_ms` and the
/// front end's own keys): `benchmark`, `complete`, `unseen_id_accuracy`, `ood_accuracy`,
/// `gqr_unseen_score` (its name kept when partial, with `"partial": true` after
/// `complete`), `unseen_id_per_dataset`, `ood_per_dataset`.
pub fn unseen_keys(s: &UnseenScore, partial: bool) -> Map<String, Value> {
    let mut report = Map::new();
    report.insert("benchmark".into(), json!("GQR-unseen"));
    report.insert("complete".into(), json!(!partial));
    if partial {
        report.insert("partial".into(), json!(true));
    }
    report.insert("unseen_id_accuracy".into(), num(s.unseen_id_accuracy));
    report.insert("ood_accuracy".into(), num(s.ood_accuracy));
    report.insert("gqr_unseen_score".into(), num(s.gqr_unseen_score));
    let obj = |v: &[(String, f64)]| -> Value {
        Value::Object(v.iter().map(|(k, x)| (k.clone(), num(*x))).collect())
    };
    report.insert(
        "unseen_id_per_dataset".into(),
        obj(&s.unseen_id_per_dataset),
    );
    report.insert("ood_per_dataset".into(), obj(&s.ood_per_dataset));
    report
}

/// What was scored.
#[derive(Debug, Clone, PartialEq)]
pub enum Scored {
    /// GQR-Bench: the pooled ID test set (`have_id` = it had rows) and the OOD sets.
    Gqr {
        /// The score and its breakdown.
        score: GqrScore,
        /// Whether the ID test set had rows (else the ID numbers and the score are n/a).
        have_id: bool,
    },
    /// GQR-unseen: each unseen ID set and each OOD set.
    Unseen(UnseenScore),
}

/// A set the score lacks, and why (from the data build's manifest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingSet {
    /// The set's name.
    pub set: String,
    /// Why it is missing (`"not in the build"` when the build does not say).
    pub reason: String,
}

/// Percentiles of the router's per-text latency (milliseconds; numpy's linear percentile).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencySummary {
    /// Median (ms).
    pub p50: f64,
    /// 95th percentile (ms).
    pub p95: f64,
    /// 99th percentile (ms).
    pub p99: f64,
    /// Texts timed.
    pub texts: usize,
}

/// The `gqr score` report.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreReport {
    /// The score.
    pub scored: Scored,
    /// ID test rows (GQR-Bench) or unseen ID rows (GQR-unseen).
    pub id_rows: usize,
    /// OOD rows.
    pub ood_rows: usize,
    /// Some set was missing: the score is partial.
    pub partial: bool,
    /// The missing sets, in the order the front end found them.
    pub missing: Vec<MissingSet>,
    /// Why the gated `dkhate` set was skipped, when it was (a note under the table).
    pub dkhate_gated: Option<String>,
    /// The router's latency, when a router process was timed (`--cmd`).
    pub latency_ms: Option<LatencySummary>,
}

impl ScoreReport {
    /// A report of `scored` over `id_rows` + `ood_rows` rows; `missing` are the sets the
    /// score lacks and `reasons` the build's `(set, reason)` list for missing sets.
    pub fn new(
        scored: Scored,
        id_rows: usize,
        ood_rows: usize,
        missing: &[String],
        reasons: &[(String, String)],
    ) -> Self {
        let reason = |m: &str| {
            reasons
                .iter()
                .rev()
                .find(|(n, _)| n == m)
                .map(|(_, r)| r.as_str())
        };
        let partial = !missing.is_empty();
        ScoreReport {
            scored,
            id_rows,
            ood_rows,
            partial,
            missing: missing
                .iter()
                .map(|m| MissingSet {
                    set: m.clone(),
                    reason: reason(m).unwrap_or("not in the build").to_string(),
                })
                .collect(),
            dkhate_gated: if partial {
                reason("dkhate")
                    .filter(|r| r.contains("gated"))
                    .map(str::to_string)
            } else {
                None
            },
            latency_ms: None,
        }
    }

    /// The JSON key of the score: `gqr_score` or `gqr_unseen_score`, partial or not (a
    /// partial score is flagged by `"partial": true`, not renamed).
    pub fn score_key(&self) -> &'static str {
        match &self.scored {
            Scored::Gqr { .. } => "gqr_score",
            Scored::Unseen(_) => "gqr_unseen_score",
        }
    }

    /// The note a gate on a partial score carries: `partial score: missing sets a, b`.
    pub fn partial_note(&self) -> Option<String> {
        self.partial.then(|| {
            let sets: Vec<&str> = self.missing.iter().map(|m| m.set.as_str()).collect();
            format!("a PARTIAL score, missing sets: {}", sets.join(", "))
        })
    }

    /// `(label, JSON key, fraction)` of the three headline numbers: ID (or unseen ID)
    /// accuracy, OOD accuracy and the score (NaN = n/a).
    pub fn headline(&self) -> [(String, &'static str, f64); 3] {
        let key = self.score_key();
        match &self.scored {
            Scored::Gqr { score: s, have_id } => {
                let na = |x: f64| if *have_id { x } else { f64::NAN };
                [
                    ("ID accuracy".into(), "id_accuracy", na(s.id_accuracy)),
                    ("OOD accuracy".into(), "ood_accuracy", s.ood_accuracy),
                    (
                        if self.partial {
                            "PARTIAL GQR score"
                        } else {
                            "GQR score"
                        }
                        .into(),
                        key,
                        na(s.gqr_score),
                    ),
                ]
            }
            Scored::Unseen(s) => [
                (
                    "unseen ID accuracy".into(),
                    "unseen_id_accuracy",
                    s.unseen_id_accuracy,
                ),
                ("OOD accuracy".into(), "ood_accuracy", s.ood_accuracy),
                (
                    if self.partial {
                        "PARTIAL GQR-unseen score"
                    } else {
                        "GQR-unseen score"
                    }
                    .into(),
                    key,
                    s.gqr_unseen_score,
                ),
            ],
        }
    }

    /// The `--json` object: the score's keys ([`gqr_keys`] / [`unseen_keys`]), then
    /// `missing_sets` (`[{"set", "reason"}]`, when partial) and `latency_ms`
    /// (`{"p50", "p95", "p99", "texts"}`, when timed). Front ends append their own keys.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut report = match &self.scored {
            Scored::Gqr { score, have_id } => gqr_keys(score, *have_id, self.partial),
            Scored::Unseen(s) => unseen_keys(s, self.partial),
        };
        if self.partial {
            let list: Vec<Value> = self
                .missing
                .iter()
                .map(|m| json!({"set": m.set, "reason": m.reason}))
                .collect();
            report.insert("missing_sets".into(), Value::Array(list));
        }
        if let Some(l) = &self.latency_ms {
            report.insert(
                "latency_ms".into(),
                json!({"p50": num(l.p50), "p95": num(l.p95), "p99": num(l.p99), "texts": l.texts}),
            );
        }
        report
    }

    /// The plain-text table: a title line, one line per set, the headline numbers, the
    /// missing sets and the latency (each line ends in a newline).
    pub fn render_text(&self) -> String {
        let mut table = String::new();
        match &self.scored {
            Scored::Unseen(s) => {
                let _ = writeln!(
                    table,
                    "GQR-unseen ({} unseen ID rows, {} OOD rows)",
                    self.id_rows, self.ood_rows
                );
                row(&mut table, "unseen ID set", &["accuracy"], "");
                for (k, v) in &s.unseen_id_per_dataset {
                    row(&mut table, &set_display_name(k), &[pct(*v)], "");
                }
                row(&mut table, "OOD set", &["accuracy"], "");
                for (k, v) in &s.ood_per_dataset {
                    row(&mut table, &set_display_name(k), &[pct(*v)], "");
                }
                row(
                    &mut table,
                    "unseen ID accuracy (macro)",
                    &[pct(s.unseen_id_accuracy)],
                    "",
                );
                row(
                    &mut table,
                    &format!("OOD accuracy (mean of {} sets)", s.ood_per_dataset.len()),
                    &[pct(s.ood_accuracy)],
                    "",
                );
                if self.partial {
                    row(
                        &mut table,
                        "PARTIAL GQR-unseen score",
                        &[pct(s.gqr_unseen_score)],
                        "(not the GQR-unseen score: sets missing)",
                    );
                } else {
                    row(
                        &mut table,
                        "GQR-unseen score",
                        &[pct(s.gqr_unseen_score)],
                        "",
                    );
                }
            }
            Scored::Gqr { score: s, have_id } => {
                let _ = writeln!(
                    table,
                    "GQR-Bench ({} ID test rows, {} OOD rows)",
                    self.id_rows, self.ood_rows
                );
                row(
                    &mut table,
                    "set",
                    &["accuracy", "precision", "recall", "f1"],
                    "(sklearn weighted)",
                );
                if *have_id {
                    row(
                        &mut table,
                        "ID test (pooled)",
                        &[
                            pct(s.id.accuracy),
                            pct(s.id.precision),
                            pct(s.id.recall),
                            pct(s.id.f1),
                        ],
                        "",
                    );
                }
                for d in &s.ood_per_dataset {
                    row(
                        &mut table,
                        &set_display_name(&d.dataset),
                        &[
                            pct(d.eval.accuracy),
                            pct(d.eval.precision),
                            pct(d.eval.recall),
                            pct(d.eval.f1),
                        ],
                        "",
                    );
                }
                if *have_id {
                    row(&mut table, "ID accuracy", &[pct(s.id_accuracy)], "");
                } else {
                    row(&mut table, "ID accuracy", &["n/a"], "(ID test set missing)");
                }
                row(
                    &mut table,
                    &format!("OOD accuracy (mean of {} sets)", s.ood_per_dataset.len()),
                    &[pct(s.ood_accuracy)],
                    "",
                );
                if !*have_id {
                    row(
                        &mut table,
                        "PARTIAL GQR score",
                        &["n/a"],
                        "(no ID test set)",
                    );
                } else if self.partial {
                    row(
                        &mut table,
                        "PARTIAL GQR score",
                        &[pct(s.gqr_score)],
                        "(not the GQR score: sets missing)",
                    );
                } else {
                    row(&mut table, "GQR score", &[pct(s.gqr_score)], "");
                }
            }
        }
        if self.partial {
            let _ = writeln!(
                table,
                "  missing sets ({}): {}",
                self.missing.len(),
                self.missing
                    .iter()
                    .map(|m| set_display_name(&m.set))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if let Some(r) = &self.dkhate_gated {
                let _ = writeln!(table, "  note: dkhate skipped: {r}");
            }
        }
        if let Some(l) = &self.latency_ms {
            let _ = writeln!(
                table,
                "  {:<32} p50 {:.3} ms  p95 {:.3} ms  p99 {:.3} ms  ({} texts)",
                "router latency per text", l.p50, l.p95, l.p99, l.texts
            );
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gqr::GqrAccumulator;

    fn scored(with_id: bool) -> Scored {
        let mut acc = GqrAccumulator::default();
        if with_id {
            acc.add_id(0, 0);
            acc.add_id(1, 2);
        }
        acc.add_ood("jigsaw", 3);
        acc.add_ood("olid", 0);
        Scored::Gqr {
            score: acc.finish(),
            have_id: with_id,
        }
    }

    #[test]
    fn partial_report_names_its_missing_sets_in_text_and_json() {
        let reasons = vec![
            ("dkhate".to_string(), "gated: needs HF_TOKEN".to_string()),
            ("x".to_string(), "other".to_string()),
        ];
        let r = ScoreReport::new(
            scored(true),
            2,
            2,
            &["dkhate".into(), "hate ".into()],
            &reasons,
        );
        assert!(r.partial);
        // The metric keeps its name; the report says it is partial.
        assert_eq!(r.score_key(), "gqr_score");
        assert_eq!(
            r.partial_note().as_deref(),
            Some("a PARTIAL score, missing sets: dkhate, hate ")
        );
        let h = r.headline();
        assert_eq!((h[0].2, h[1].2), (0.5, 0.5));
        assert_eq!(h[2].0, "PARTIAL GQR score");
        let text = r.render_text();
        assert!(text.starts_with("GQR-Bench (2 ID test rows, 2 OOD rows)\n"));
        assert!(text.contains("  missing sets (2): dkhate, \"hate \"\n"));
        assert!(text.ends_with("  note: dkhate skipped: gated: needs HF_TOKEN\n"));
        let j = r.to_json();
        assert_eq!(j["complete"], json!(false));
        assert_eq!(j["partial"], json!(true));
        assert_eq!(j["gqr_score"], json!(0.5));
        assert!(j.get("partial_gqr_score").is_none());
        assert_eq!(
            j["missing_sets"],
            json!([{"set": "dkhate", "reason": "gated: needs HF_TOKEN"},
                   {"set": "hate ", "reason": "not in the build"}])
        );
    }

    #[test]
    fn no_id_rows_make_the_id_numbers_and_score_na() {
        let mut r = ScoreReport::new(scored(false), 0, 2, &[], &[]);
        r.latency_ms = Some(LatencySummary {
            p50: 1.0,
            p95: 2.0,
            p99: f64::NAN,
            texts: 2,
        });
        let h = r.headline();
        assert!(h[0].2.is_nan() && h[2].2.is_nan());
        let j = r.to_json();
        assert_eq!(j["id_accuracy"], Value::Null);
        assert_eq!(j["gqr_score"], Value::Null);
        assert_eq!(
            j["latency_ms"],
            json!({"p50": 1.0, "p95": 2.0, "p99": null, "texts": 2})
        );
        let text = r.render_text();
        assert!(
            text.contains("  ID accuracy                             n/a  (ID test set missing)\n")
        );
        // An undefined percentile prints as Rust formats NaN (unchanged from before the move).
        assert!(
            text.ends_with("p50 1.000 ms  p95 2.000 ms  p99 NaN ms  (2 texts)\n"),
            "{text}"
        );
    }
}
