//! The typed report of `routeval compare`: several systems scored on the same units with the
//! same measures, each compared with the baseline (the first system) — or every pair — by a
//! paired test, the p-values corrected over the whole table.
//!
//! Front ends (the CLI's `compare`, `rag --baseline`) build [`SystemScores`], call
//! [`compare_systems`] and only render the [`ComparisonReport`]. Its serde form is the
//! documented `--json` shape:
//! `{"measures": [...], "queries": N, "test", "correction", "alpha", "runs": [{"name", "path",
//! "means": {measure: value}, "vs_baseline": {measure: {delta, p_value, p_adjusted,
//! significant, effect_size, ci, wins, ties, losses}}}]}` (`runs[0]`, the baseline, has no
//! `vs_baseline`), plus `"pairs": [{"a", "b", "vs": {measure: {...}}}]` with all pairs. NaN
//! is written as `null`.

use crate::StatsError;
use crate::bootstrap::bootstrap_mean_ci_table;
use crate::multitest::{Correction, adjust};
use crate::paired::{PairedTest, cohens_dz, mean, wins_ties_losses};
use rayon::prelude::*;
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

/// One system's per-unit scores.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemScores {
    /// Display name (a run tag).
    pub name: String,
    /// Where it came from (a file path as given), reported as is.
    pub path: String,
    /// `scores[m][u]`: measure `m` on unit `u`; every system has the same shape.
    pub scores: Vec<Vec<f64>>,
    /// The headline value of each measure, if the caller has its own definition (e.g.
    /// trec_eval's summary line); else the arithmetic mean of the scores.
    pub means: Option<Vec<f64>>,
}

/// Options of [`compare_systems`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// The paired test (default: t-test).
    pub test: PairedTest,
    /// Resamples of the Monte Carlo Fisher test and of the bootstrap test (default 10,000).
    pub iterations: u64,
    /// Seed of every resampling step (default 42, the seed every routeval subcommand uses).
    pub seed: u64,
    /// Correction over all comparisons in the table (default Holm).
    pub correction: Correction,
    /// Family-wise significance level (default 0.05).
    pub alpha: f64,
    /// Level of the paired bootstrap CI of each mean difference; `None` = no intervals
    /// (default 0.95).
    pub ci_level: Option<f64>,
    /// Bootstrap replicates of the CIs (default 1000).
    pub ci_replicates: u64,
    /// Compare every pair of systems, not only each with the baseline.
    pub all_pairs: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            test: PairedTest::T,
            iterations: 10_000,
            seed: 42,
            correction: Correction::Holm,
            alpha: 0.05,
            ci_level: Some(0.95),
            ci_replicates: 1000,
            all_pairs: false,
        }
    }
}

/// One paired comparison (a run against a reference system, on one measure).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    /// Run mean − reference mean (the headline values' difference).
    pub delta: f64,
    /// Raw two-sided p-value of the chosen test.
    pub p_value: f64,
    /// p-value after the correction over the whole table.
    pub p_adjusted: f64,
    /// Rejected at `alpha` after the correction.
    pub significant: bool,
    /// Cohen's d_z of the per-unit differences (`null` when their sd is 0).
    pub effect_size: Option<f64>,
    /// Paired bootstrap percentile CI `[low, high]` of the mean difference (`null` without CIs).
    pub ci: Option<[f64; 2]>,
    /// Units where the run scores higher.
    pub wins: u64,
    /// Units with equal scores.
    pub ties: u64,
    /// Units where the run scores lower.
    pub losses: u64,
    /// Why the test had no evidence behind it ([`Degenerate`](crate::Degenerate): one unit,
    /// zero variance, a NaN/±inf value); then `p_value` is `null` and `significant` false.
    /// Omitted from JSON when the test is not degenerate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
    /// Why the CI must not be read as a confidence statement (fewer than 2 or than
    /// [`MIN_RESAMPLING_UNITS`](crate::MIN_RESAMPLING_UNITS) queries, zero width); JSON
    /// `"ci_degenerate": "reason"`, omitted otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_degenerate: Option<crate::DegenerateInterval>,
}

/// One system in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemSummary {
    /// Display name.
    pub name: String,
    /// Path as given.
    pub path: String,
    /// Headline value per measure (measure order of the report).
    pub means: Vec<f64>,
    /// Comparison with the baseline per measure (`None` for the baseline itself).
    pub vs_baseline: Option<Vec<Comparison>>,
}

/// The comparison of system `b` (the run) against system `a` (the reference), per measure.
#[derive(Debug, Clone, PartialEq)]
pub struct PairReport {
    /// Index of the reference system in [`ComparisonReport::runs`].
    pub a: usize,
    /// Index of the compared system.
    pub b: usize,
    /// One comparison per measure.
    pub comparisons: Vec<Comparison>,
}

/// The whole comparison (see the module docs for its JSON form).
#[derive(Debug, Clone, PartialEq)]
pub struct ComparisonReport {
    /// Measure names (JSON keys).
    pub measures: Vec<String>,
    /// Number of paired units (queries).
    pub queries: usize,
    /// The test used.
    pub test: PairedTest,
    /// The correction used.
    pub correction: Correction,
    /// The significance level.
    pub alpha: f64,
    /// Level of the CIs, if any.
    pub ci_level: Option<f64>,
    /// Systems, the baseline first.
    pub runs: Vec<SystemSummary>,
    /// Every pair `(a, b)` with `a < b`, when all pairs were compared.
    pub pairs: Option<Vec<PairReport>>,
}

impl ComparisonReport {
    /// Every comparison of the report (pairs if present, else each run vs the baseline), as
    /// `(reference index, run index, measure index, comparison)`.
    pub fn comparisons(&self) -> Vec<(usize, usize, usize, &Comparison)> {
        let mut out = Vec::new();
        if let Some(pairs) = &self.pairs {
            for p in pairs {
                for (m, c) in p.comparisons.iter().enumerate() {
                    out.push((p.a, p.b, m, c));
                }
            }
        } else {
            for (r, run) in self.runs.iter().enumerate() {
                if let Some(v) = &run.vs_baseline {
                    for (m, c) in v.iter().enumerate() {
                        out.push((0, r, m, c));
                    }
                }
            }
        }
        out
    }

    /// Runs significantly worse than the baseline: `(run index, measure index)`.
    pub fn significantly_worse(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (r, run) in self.runs.iter().enumerate() {
            if let Some(v) = &run.vs_baseline {
                for (m, c) in v.iter().enumerate() {
                    if c.significant && c.delta < 0.0 {
                        out.push((r, m));
                    }
                }
            }
        }
        out
    }
}

/// Serializes `[(key, value)]` as a JSON object in order.
struct OrderedMap<'a, V>(&'a [String], &'a [V]);

impl<V: Serialize> Serialize for OrderedMap<'_, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0.iter().zip(self.1) {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

struct RunJson<'a>(&'a [String], &'a SystemSummary);

impl Serialize for RunJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let run = self.1;
        let n = if run.vs_baseline.is_some() { 4 } else { 3 };
        let mut st = s.serialize_struct("Run", n)?;
        st.serialize_field("name", &run.name)?;
        st.serialize_field("path", &run.path)?;
        st.serialize_field("means", &OrderedMap(self.0, &run.means))?;
        if let Some(v) = &run.vs_baseline {
            st.serialize_field("vs_baseline", &OrderedMap(self.0, v))?;
        }
        st.end()
    }
}

struct PairJson<'a>(&'a ComparisonReport, &'a PairReport);

impl Serialize for PairJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Pair", 3)?;
        st.serialize_field("a", &self.0.runs[self.1.a].name)?;
        st.serialize_field("b", &self.0.runs[self.1.b].name)?;
        st.serialize_field("vs", &OrderedMap(&self.0.measures, &self.1.comparisons))?;
        st.end()
    }
}

impl Serialize for ComparisonReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = if self.pairs.is_some() { 7 } else { 6 };
        let mut st = s.serialize_struct("ComparisonReport", n)?;
        st.serialize_field("measures", &self.measures)?;
        st.serialize_field("queries", &self.queries)?;
        st.serialize_field("test", &self.test)?;
        st.serialize_field("correction", &self.correction)?;
        st.serialize_field("alpha", &self.alpha)?;
        let runs: Vec<RunJson<'_>> = self
            .runs
            .iter()
            .map(|r| RunJson(&self.measures, r))
            .collect();
        st.serialize_field("runs", &runs)?;
        if let Some(pairs) = &self.pairs {
            let pairs: Vec<PairJson<'_>> = pairs.iter().map(|p| PairJson(self, p)).collect();
            st.serialize_field("pairs", &pairs)?;
        }
        st.end()
    }
}

/// Compare `systems` (the first is the baseline) on `measures`: per comparison the test's
/// p-value, effect size, CI and win/tie/loss counts; p-values corrected over every comparison
/// (all runs × measures, or all pairs × measures). Errors on fewer than two systems, ragged
/// scores, or options out of range (`alpha`, `ci_level` ∉ (0, 1), zero iterations).
pub fn compare_systems(
    measures: &[String],
    systems: &[SystemScores],
    opts: &CompareOptions,
) -> Result<ComparisonReport, StatsError> {
    if systems.len() < 2 {
        return Err(StatsError::InvalidOption(
            "compare needs a baseline and at least one other system".into(),
        ));
    }
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return Err(StatsError::InvalidOption(format!(
            "alpha must be in (0, 1), got {}",
            opts.alpha
        )));
    }
    if let Some(l) = opts.ci_level
        && !(l > 0.0 && l < 1.0)
    {
        return Err(StatsError::InvalidOption(format!(
            "the CI level must be in (0, 1), got {l}"
        )));
    }
    if opts.iterations == 0 || (opts.ci_level.is_some() && opts.ci_replicates == 0) {
        return Err(StatsError::InvalidOption(
            "iterations and bootstrap replicates must be at least 1".into(),
        ));
    }
    let n_units = systems[0].scores.first().map_or(0, Vec::len);
    for s in systems {
        if s.scores.len() != measures.len() {
            return Err(StatsError::LengthMismatch {
                left: s.scores.len(),
                right: measures.len(),
            });
        }
        for col in &s.scores {
            if col.len() != n_units {
                return Err(StatsError::LengthMismatch {
                    left: col.len(),
                    right: n_units,
                });
            }
        }
        if let Some(m) = &s.means
            && m.len() != measures.len()
        {
            return Err(StatsError::LengthMismatch {
                left: m.len(),
                right: measures.len(),
            });
        }
    }
    let means: Vec<Vec<f64>> = systems
        .iter()
        .map(|s| {
            s.means
                .clone()
                .unwrap_or_else(|| s.scores.iter().map(|c| mean(c)).collect())
        })
        .collect();
    let pairs: Vec<(usize, usize)> = if opts.all_pairs {
        (0..systems.len())
            .flat_map(|a| (a + 1..systems.len()).map(move |b| (a, b)))
            .collect()
    } else {
        (1..systems.len()).map(|b| (0, b)).collect()
    };
    let n_m = measures.len();
    // Flat list of comparisons: (pair index, measure).
    let jobs: Vec<(usize, usize)> = (0..pairs.len())
        .flat_map(|p| (0..n_m).map(move |m| (p, m)))
        .collect();
    let diffs: Vec<Vec<f64>> = jobs
        .iter()
        .map(|&(p, m)| {
            let (a, b) = pairs[p];
            systems[b].scores[m]
                .iter()
                .zip(&systems[a].scores[m])
                .map(|(x, y)| x - y)
                .collect()
        })
        .collect();
    let raw: Vec<(f64, Option<f64>)> = diffs
        .par_iter()
        .map(|d| {
            (
                opts.test.p_value(d, opts.iterations, opts.seed),
                cohens_dz(d),
            )
        })
        .collect();
    // CIs of every mean difference from the same resamples (rows = units, columns = jobs).
    let cis: Option<Vec<crate::BootstrapCi>> = opts.ci_level.map(|level| {
        let k = jobs.len();
        let mut rows = vec![0.0f64; n_units * k];
        for (j, d) in diffs.iter().enumerate() {
            for (u, v) in d.iter().enumerate() {
                rows[u * k + j] = *v;
            }
        }
        // Per-query draw counts, the table read once per block of replicates.
        bootstrap_mean_ci_table(&rows, n_units, k, opts.ci_replicates, opts.seed, level)
    });
    let pvals: Vec<f64> = raw.iter().map(|r| r.0).collect();
    let adj = adjust(&pvals, opts.alpha, opts.correction);
    let comparisons: Vec<Comparison> = jobs
        .iter()
        .enumerate()
        .map(|(j, &(p, m))| {
            let (a, b) = pairs[p];
            let wtl = wins_ties_losses(&systems[b].scores[m], &systems[a].scores[m]);
            Comparison {
                delta: means[b][m] - means[a][m],
                p_value: pvals[j],
                p_adjusted: adj.p_adjusted[j],
                significant: adj.reject[j],
                effect_size: raw[j].1,
                ci: cis.as_ref().map(|c| [c[j].low, c[j].high]),
                wins: wtl.wins,
                ties: wtl.ties,
                losses: wtl.losses,
                note: crate::degeneracy(&diffs[j]).map(crate::Degenerate::reason),
                ci_degenerate: cis.as_ref().and_then(|c| c[j].degenerate()),
            }
        })
        .collect();
    let pair_reports: Vec<PairReport> = pairs
        .iter()
        .enumerate()
        .map(|(p, &(a, b))| PairReport {
            a,
            b,
            comparisons: comparisons[p * n_m..(p + 1) * n_m].to_vec(),
        })
        .collect();
    let runs = systems
        .iter()
        .enumerate()
        .map(|(i, s)| SystemSummary {
            name: s.name.clone(),
            path: s.path.clone(),
            means: means[i].clone(),
            vs_baseline: (i > 0).then(|| {
                pair_reports
                    .iter()
                    .find(|p| p.a == 0 && p.b == i)
                    .map(|p| p.comparisons.clone())
                    .unwrap_or_default()
            }),
        })
        .collect();
    Ok(ComparisonReport {
        measures: measures.to_vec(),
        queries: n_units,
        test: opts.test,
        correction: opts.correction,
        alpha: opts.alpha,
        ci_level: opts.ci_level,
        runs,
        pairs: opts.all_pairs.then_some(pair_reports),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sys(name: &str, cols: Vec<Vec<f64>>) -> SystemScores {
        SystemScores {
            name: name.into(),
            path: format!("{name}.run"),
            scores: cols,
            means: None,
        }
    }

    #[test]
    fn baseline_comparisons_and_shape() {
        let measures = vec!["map".to_string(), "P_10".to_string()];
        let a = sys(
            "a",
            vec![vec![0.1, 0.2, 0.3, 0.4], vec![0.1, 0.1, 0.2, 0.2]],
        );
        let b = sys(
            "b",
            vec![vec![0.2, 0.3, 0.5, 0.4], vec![0.1, 0.1, 0.2, 0.2]],
        );
        let r = compare_systems(&measures, &[a, b], &CompareOptions::default()).unwrap();
        assert_eq!(r.queries, 4);
        let v = r.runs[1].vs_baseline.as_ref().unwrap();
        assert!((v[0].delta - 0.1).abs() < 1e-15);
        assert_eq!((v[0].wins, v[0].ties, v[0].losses), (3, 1, 0));
        // Identical P_10 columns: p = 1, no effect size.
        assert_eq!(v[1].p_value, 1.0);
        assert_eq!(v[1].effect_size, None);
        assert!(r.runs[0].vs_baseline.is_none());
        assert!(r.pairs.is_none());
        assert_eq!(r.comparisons().len(), 2);
    }

    #[test]
    fn rejects_bad_options() {
        let measures = vec!["map".to_string()];
        let a = sys("a", vec![vec![0.1]]);
        let b = sys("b", vec![vec![0.1, 0.2]]);
        assert!(
            compare_systems(
                &measures,
                std::slice::from_ref(&a),
                &CompareOptions::default()
            )
            .is_err()
        );
        assert!(compare_systems(&measures, &[a.clone(), b], &CompareOptions::default()).is_err());
        let opts = CompareOptions {
            alpha: 1.5,
            ..Default::default()
        };
        assert!(compare_systems(&measures, &[a.clone(), a], &opts).is_err());
    }

    #[test]
    fn all_pairs_counts_every_pair() {
        let measures = vec!["m".to_string()];
        let s: Vec<SystemScores> = (0..4)
            .map(|i| sys(&format!("s{i}"), vec![vec![i as f64, 1.0, 2.0 * i as f64]]))
            .collect();
        let opts = CompareOptions {
            all_pairs: true,
            ..Default::default()
        };
        let r = compare_systems(&measures, &s, &opts).unwrap();
        assert_eq!(r.pairs.as_ref().unwrap().len(), 6);
        assert_eq!(r.comparisons().len(), 6);
    }
}
