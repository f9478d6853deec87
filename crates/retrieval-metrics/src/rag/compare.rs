//! `rag CASES --baseline CASES2`: a paired comparison of two RAG systems scored on the same
//! cases (issue 11 item 3), built on `routeval_stats::compare_systems` (the tests of
//! `routeval compare`).
//!
//! * **Pairing.** When every case of both reports has an `id` field, cases pair by id (ids
//!   compared as JSON values, so `"1"` and `1` differ); an id repeated within a report, or an
//!   id of one report missing from the other, is an error. Otherwise cases pair by position,
//!   and both reports must have the same number of cases (and, after a `where` selection, the
//!   same input indices).
//! * **Units per metric.** A metric is compared on the paired cases where *both* systems
//!   produced it (a case excluded from a metric on either side is left out of that metric's
//!   test, and counted); `value`, `baseline` and `delta` are means over those cases, so the
//!   delta is the mean of the per-case differences the test and the CI are about. When both
//!   systems produced a metric on every paired case, `value` and `baseline` are the reports'
//!   own means (up to summation order).
//! * **Family.** The p-values of every compared metric are corrected together (`Correction`,
//!   default Holm) at `alpha`; a metric no paired case supports is listed with no test.

use super::{Metric, RagReport};
use routeval_stats::{
    CompareOptions, Comparison, Correction, PairedTest, SystemScores, adjust, compare_systems,
};
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};
use std::collections::HashMap;

/// How the cases of the two reports were paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pairing {
    /// By each case's own `id` field.
    Id,
    /// By position (the same number of cases in both).
    Index,
}

/// Why two reports cannot be paired.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PairingError {
    /// Pairing by position needs the same number of cases.
    #[error(
        "{run} case(s) vs {baseline} in the baseline: without an \"id\" on every case, cases pair by position and the counts must match"
    )]
    CountMismatch {
        /// Cases in the run's report.
        run: usize,
        /// Cases in the baseline's report.
        baseline: usize,
    },
    /// Pairing by position after a selection that kept different input indices.
    #[error(
        "case {position} of the selection is input case {run} here but {baseline} in the baseline"
    )]
    IndexMismatch {
        /// Position in the selection.
        position: usize,
        /// The run's input index there.
        run: usize,
        /// The baseline's input index there.
        baseline: usize,
    },
    /// An id appears twice in one report.
    #[error("{side}: id {id} appears more than once (cases pair by id)")]
    DuplicateId {
        /// `"cases"` or `"baseline"`.
        side: &'static str,
        /// The id (compact JSON).
        id: String,
    },
    /// Ids of one report without a counterpart in the other.
    #[error(
        "{count} case id(s) of the {side} have no counterpart in the other file (first: {first}); cases pair by id"
    )]
    Unpaired {
        /// `"cases"` or `"baseline"`.
        side: &'static str,
        /// How many.
        count: usize,
        /// The first, in file order (compact JSON).
        first: String,
    },
}

/// Options of [`compare_reports`]: the test, correction, level and resampling of
/// `routeval compare` (see [`CompareOptions`]; `all_pairs` is ignored).
pub type RagCompareOptions = CompareOptions;

/// One metric of a paired RAG comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricComparison {
    /// The metric.
    pub metric: Metric,
    /// Paired cases where both systems produced it.
    pub cases: usize,
    /// The run's mean over those cases (fraction).
    pub value: f64,
    /// The baseline's mean over those cases (fraction).
    pub baseline: f64,
    /// The test, CI, effect size and win/tie/loss counts (`None` without paired cases).
    pub comparison: Option<Comparison>,
}

/// The paired comparison of a RAG run with a baseline (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct RagComparison {
    /// How cases were paired.
    pub pairing: Pairing,
    /// Paired cases.
    pub cases: usize,
    /// The test.
    pub test: PairedTest,
    /// The correction over the compared metrics.
    pub correction: Correction,
    /// Family-wise significance level.
    pub alpha: f64,
    /// Level of the paired bootstrap CIs, if any.
    pub ci_level: Option<f64>,
    /// Seed of every resampling step.
    pub seed: u64,
    /// One entry per metric either report has, in [`Metric::ALL`] order.
    pub metrics: Vec<MetricComparison>,
}

/// `rag CASES --baseline CASES2`: the paired comparison with the baseline's cases file named.
/// Its serde form is the `"baseline"` member of `rag --json`: `{"cases_file", "pairing",
/// "cases", "test", ...}`, i.e. `cases_file` then [`RagComparison`]'s members.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RagBaseline {
    /// The baseline's cases as given on the command line (a path or `-`).
    pub cases_file: String,
    /// The paired comparison ([`compare_reports`]).
    #[serde(flatten)]
    pub comparison: RagComparison,
}

/// Compact JSON of a case id (the pairing key).
fn id_key(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Pair the cases of `run` and `baseline`: `(run case position, baseline case position)`.
pub fn pair_cases(
    run: &RagReport,
    baseline: &RagReport,
) -> Result<(Pairing, Vec<(usize, usize)>), PairingError> {
    let all_ids = |r: &RagReport| r.per_case.iter().all(|c| c.id.is_some());
    if !run.per_case.is_empty() && all_ids(run) && all_ids(baseline) {
        let index = |r: &RagReport, side: &'static str| {
            let mut m: HashMap<String, usize> = HashMap::with_capacity(r.per_case.len());
            for (i, c) in r.per_case.iter().enumerate() {
                let k = id_key(c.id.as_deref().unwrap_or(&serde_json::Value::Null));
                if m.insert(k.clone(), i).is_some() {
                    return Err(PairingError::DuplicateId { side, id: k });
                }
            }
            Ok(m)
        };
        let b = index(baseline, "baseline")?;
        let r = index(run, "cases")?;
        let unpaired = |rep: &RagReport, other: &HashMap<String, usize>, side: &'static str| {
            let missing: Vec<String> = rep
                .per_case
                .iter()
                .map(|c| id_key(c.id.as_deref().unwrap_or(&serde_json::Value::Null)))
                .filter(|k| !other.contains_key(k))
                .collect();
            match missing.first() {
                None => Ok(()),
                Some(first) => Err(PairingError::Unpaired {
                    side,
                    count: missing.len(),
                    first: first.clone(),
                }),
            }
        };
        unpaired(run, &b, "cases")?;
        unpaired(baseline, &r, "baseline")?;
        let pairs = run
            .per_case
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    i,
                    b[&id_key(c.id.as_deref().unwrap_or(&serde_json::Value::Null))],
                )
            })
            .collect();
        return Ok((Pairing::Id, pairs));
    }
    if run.per_case.len() != baseline.per_case.len() {
        return Err(PairingError::CountMismatch {
            run: run.per_case.len(),
            baseline: baseline.per_case.len(),
        });
    }
    for (p, (a, b)) in run.per_case.iter().zip(&baseline.per_case).enumerate() {
        if a.index != b.index {
            return Err(PairingError::IndexMismatch {
                position: p,
                run: a.index,
                baseline: b.index,
            });
        }
    }
    Ok((
        Pairing::Index,
        (0..run.per_case.len()).map(|i| (i, i)).collect(),
    ))
}

fn metric_value(r: &RagReport, case: usize, m: Metric) -> Option<f64> {
    r.per_case[case]
        .metrics
        .iter()
        .find(|(cm, _)| *cm == m)
        .map(|(_, v)| *v)
}

/// Compare `run` with `baseline` metric by metric on paired cases (see the module docs).
/// Errors when the cases cannot be paired; options out of range are reported by
/// `routeval_stats` as a [`PairingError`]-free `Err(String)`.
pub fn compare_reports(
    run: &RagReport,
    baseline: &RagReport,
    opts: &RagCompareOptions,
) -> Result<RagComparison, CompareError> {
    let (pairing, pairs) = pair_cases(run, baseline)?;
    let has = |r: &RagReport, m: Metric| r.metrics.iter().any(|(x, _)| *x == m);
    let mut metrics = Vec::new();
    let mut raw_p = Vec::new();
    let mut compared = Vec::new();
    for m in Metric::ALL {
        if !has(run, m) && !has(baseline, m) {
            continue;
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for &(i, j) in &pairs {
            if let (Some(x), Some(y)) = (metric_value(run, i, m), metric_value(baseline, j, m)) {
                a.push(x);
                b.push(y);
            }
        }
        let n = a.len();
        let mean = |v: &[f64]| {
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let (va, vb) = (mean(&a), mean(&b));
        let comparison = if n == 0 {
            None
        } else {
            let name = vec![m.name().to_string()];
            let sys = |name: &str, s: Vec<f64>| SystemScores {
                name: name.into(),
                path: String::new(),
                scores: vec![s],
                means: None,
            };
            let one = CompareOptions {
                correction: Correction::None,
                all_pairs: false,
                ..opts.clone()
            };
            let rep = compare_systems(&name, &[sys("baseline", b), sys("run", a)], &one)
                .map_err(|e| CompareError::Options(e.to_string()))?;
            let c = rep.runs[1]
                .vs_baseline
                .as_ref()
                .and_then(|v| v.first().copied());
            if let Some(c) = &c {
                raw_p.push(c.p_value);
                compared.push(metrics.len());
            }
            c
        };
        metrics.push(MetricComparison {
            metric: m,
            cases: n,
            value: va,
            baseline: vb,
            comparison,
        });
    }
    let adj = adjust(&raw_p, opts.alpha, opts.correction);
    for (k, &at) in compared.iter().enumerate() {
        if let Some(c) = metrics[at].comparison.as_mut() {
            c.p_adjusted = adj.p_adjusted[k];
            c.significant = adj.reject[k];
        }
    }
    Ok(RagComparison {
        pairing,
        cases: pairs.len(),
        test: opts.test,
        correction: opts.correction,
        alpha: opts.alpha,
        ci_level: opts.ci_level,
        seed: opts.seed,
        metrics,
    })
}

/// Errors of [`compare_reports`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// The cases cannot be paired.
    #[error(transparent)]
    Pairing(#[from] PairingError),
    /// An option out of range (alpha, level, iterations).
    #[error("{0}")]
    Options(String),
}

fn num(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

struct MetricJson<'a>(&'a MetricComparison);

impl Serialize for MetricJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let mut st = s.serialize_struct("MetricComparison", 12)?;
        st.serialize_field("cases", &m.cases)?;
        st.serialize_field("value", &num(m.value))?;
        st.serialize_field("baseline", &num(m.baseline))?;
        let c = m.comparison.as_ref();
        st.serialize_field("delta", &c.and_then(|c| num(c.delta)))?;
        st.serialize_field("p_value", &c.and_then(|c| num(c.p_value)))?;
        st.serialize_field("p_adjusted", &c.and_then(|c| num(c.p_adjusted)))?;
        st.serialize_field("significant", &c.map(|c| c.significant))?;
        st.serialize_field("effect_size", &c.and_then(|c| c.effect_size))?;
        st.serialize_field(
            "ci",
            &c.and_then(|c| c.ci)
                .filter(|ci| ci[0].is_finite() && ci[1].is_finite()),
        )?;
        st.serialize_field("wins", &c.map(|c| c.wins))?;
        st.serialize_field("ties", &c.map(|c| c.ties))?;
        st.serialize_field("losses", &c.map(|c| c.losses))?;
        // Why the test or the interval has no evidence behind it (routeval_stats), if so.
        if let Some(note) = c.and_then(|c| c.note) {
            st.serialize_field("note", note)?;
        }
        if let Some(d) = c.and_then(|c| c.ci_degenerate) {
            st.serialize_field("ci_degenerate", &d)?;
        }
        st.end()
    }
}

struct Metrics<'a>(&'a [MetricComparison]);

impl Serialize for Metrics<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for x in self.0 {
            m.serialize_entry(x.metric.name(), &MetricJson(x))?;
        }
        m.end()
    }
}

impl Serialize for RagComparison {
    /// `{"pairing": "id"|"index", "cases": N, "test", "correction", "alpha", "ci_level",
    /// "seed", "metrics": {name: {"cases", "value", "baseline", "delta", "p_value",
    /// "p_adjusted", "significant", "effect_size", "ci", "wins", "ties", "losses"}}}`
    /// (fractions; `null` where a metric has no paired case or a number is not finite).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("RagComparison", 8)?;
        st.serialize_field("pairing", &self.pairing)?;
        st.serialize_field("cases", &self.cases)?;
        st.serialize_field("test", &self.test)?;
        st.serialize_field("correction", &self.correction)?;
        st.serialize_field("alpha", &self.alpha)?;
        st.serialize_field("ci_level", &self.ci_level)?;
        st.serialize_field("seed", &self.seed)?;
        st.serialize_field("metrics", &Metrics(&self.metrics))?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rag::{Options, evaluate, parse_cases};

    fn report(json: &str) -> RagReport {
        let cases = parse_cases(json, "t").unwrap();
        evaluate(&cases, &Options::default(), None).unwrap()
    }

    const A: &str = r#"[{"id": 1, "query": "a", "retrieved": ["x", "y"], "relevant": ["x"]},
                        {"id": 2, "query": "b", "retrieved": ["x", "y"], "relevant": ["y"]},
                        {"id": 3, "query": "c", "retrieved": ["x"], "relevant": []}]"#;
    const B: &str = r#"[{"id": 3, "query": "c", "retrieved": ["z"], "relevant": ["z"]},
                        {"id": 2, "query": "b", "retrieved": ["y"], "relevant": ["y"]},
                        {"id": 1, "query": "a", "retrieved": ["y", "x"], "relevant": ["x"]}]"#;

    #[test]
    fn pairs_by_id_and_compares_only_cases_scored_by_both() {
        let (a, b) = (report(A), report(B));
        let (how, pairs) = pair_cases(&a, &b).unwrap();
        assert_eq!(how, Pairing::Id);
        assert_eq!(pairs, vec![(0, 2), (1, 1), (2, 0)]);
        let c = compare_reports(&a, &b, &CompareOptions::default()).unwrap();
        let mrr = c.metrics.iter().find(|m| m.metric == Metric::Mrr).unwrap();
        // Case 3 has `relevant: []` in the run: every retrieval metric excluded there.
        assert_eq!(mrr.cases, 2);
        // run mrr: 1, 1/2; baseline: 1/2, 1 → equal means, delta 0.
        assert_eq!((mrr.value, mrr.baseline), (0.75, 0.75));
        let k = mrr.comparison.unwrap();
        assert_eq!((k.wins, k.ties, k.losses), (1, 0, 1));
        assert_eq!(k.delta, 0.0);
    }

    #[test]
    fn pairs_by_position_without_ids_and_reports_mismatches() {
        let strip = |s: &str| {
            let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
            for c in v.as_array_mut().unwrap() {
                c.as_object_mut().unwrap().remove("id");
            }
            v.to_string()
        };
        let (a, b) = (report(&strip(A)), report(&strip(B)));
        assert_eq!(pair_cases(&a, &b).unwrap().0, Pairing::Index);
        let short = report(r#"[{"query": "a", "retrieved": ["x"]}]"#);
        assert_eq!(
            pair_cases(&a, &short).unwrap_err(),
            PairingError::CountMismatch {
                run: 3,
                baseline: 1
            }
        );
        // Ids only on one side: by position.
        assert_eq!(pair_cases(&report(A), &b).unwrap().0, Pairing::Index);
        // A repeated id.
        let dup = report(
            r#"[{"id": 1, "query": "a", "retrieved": ["x"]}, {"id": 1, "query": "b", "retrieved": ["x"]},
                {"id": 2, "query": "c", "retrieved": ["x"]}]"#,
        );
        assert!(matches!(
            pair_cases(&report(A), &dup),
            Err(PairingError::DuplicateId {
                side: "baseline",
                ..
            })
        ));
    }
}
