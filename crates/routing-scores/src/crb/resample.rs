//! `scores_v2` on resampled trajectories: the resampling units behind `crb eval --ci` and
//! `--baseline-predictor` (bootstrap confidence intervals of the headline metrics).
//!
//! The unit is a whole trajectory (all rows sharing an `instance_id`), so a replicate keeps
//! what `scores_v2` measures about trajectories (a trajectory passes only when every step
//! passes). Trajectories are resampled **within their benchmark** (the benchmark of their first
//! row): every replicate has each benchmark's trajectory count, so the benchmark weights
//! (`row_count / total_rows`) stay meaningful. A replicate's metrics are the `scores_v2`
//! definitions ([`ScoresV2`]) on the multiset of trajectories drawn:
//!
//! * `case_pass_rate_percent`, `case_exact_match_percent` = 100 · rows passed (exact) / rows;
//! * `trajectory_pass_rate_percent` = 100 · rows in passed trajectories / rows;
//! * `cost_savings_score_percent` = Σ_b weight_b · 100 · N_b / D_b over benchmarks with
//!   D_b > 0 (NaN when none);
//! * `combined_score_percent` = the mean of the four (NaN when one is NaN).
//!
//! On the identity sample (every trajectory once) the values equal `ScoresV2`'s up to float
//! summation order. Pure: no IO, no randomness (the caller draws the samples).

use super::records::EvalRecord;
use super::scores::ScoresV2;
use super::walk::Step;
use routeval_stats::{McNemar, MetricDelta};

/// One trajectory's contribution to `scores_v2`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrajectoryUnit {
    /// Rows (error rows included).
    pub rows: u64,
    /// Rows with pred ≥ gold.
    pub case_pass: u64,
    /// Rows with pred = gold.
    pub case_exact: u64,
    /// The trajectory passed (no error row, every step pred ≥ gold).
    pub passed: bool,
    /// Per benchmark touched (index into [`ScoresV2Units::benchmarks`]): rows, Σ baseline
    /// cost D (USD) and the trajectory-level numerator N (USD) of its steps.
    pub by_benchmark: Vec<(usize, u64, f64, f64)>,
}

/// The trajectories of one evaluation as resampling units, grouped into strata (benchmarks).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScoresV2Units {
    /// Benchmark names, first-appearance order.
    pub benchmarks: Vec<String>,
    /// One unit per trajectory, in the walk's trajectory order.
    pub units: Vec<TrajectoryUnit>,
    /// Unit indices per stratum (benchmark of the trajectory's first row), same order as
    /// `benchmarks`; empty strata are possible when a benchmark only appears in later rows of
    /// other benchmarks' trajectories.
    pub strata: Vec<Vec<usize>>,
}

/// The five headline metrics of `scores_v2`, in [`ScoresV2::HEADLINE`]
/// (super::scores::ScoresV2::HEADLINE) order (percent).
pub type Headline = [f64; 5];

impl ScoresV2Units {
    /// Build the units from the global walk's steps over every record (`CrbMetrics::steps`);
    /// trajectories and their status are [`walk::group`](super::walk::group)'s, the walk's
    /// own numbering.
    pub fn from_walk(records: &[EvalRecord], steps: &[Step]) -> Self {
        let all: Vec<usize> = (0..records.len()).collect();
        let groups = super::walk::group(records, &all);
        // First-appearance benchmark order over records (as ScoresV2::from_walk).
        let mut benchmarks: Vec<String> = Vec::new();
        let mut bidx: rustc_hash::FxHashMap<&str, usize> = Default::default();
        let mut record_bench = Vec::with_capacity(records.len());
        for r in records {
            let i = *bidx.entry(r.benchmark.as_str()).or_insert_with(|| {
                benchmarks.push(r.benchmark.clone());
                benchmarks.len() - 1
            });
            record_bench.push(i);
        }
        let mut units: Vec<TrajectoryUnit> = groups
            .iter()
            .map(|(rows, st)| {
                let mut u = TrajectoryUnit {
                    rows: rows.len() as u64,
                    passed: st.passed(),
                    ..Default::default()
                };
                for &i in rows {
                    let r = &records[i];
                    u.case_pass += r.is_passed() as u64;
                    u.case_exact += r.is_match() as u64;
                    let b = record_bench[i];
                    match u.by_benchmark.iter_mut().find(|e| e.0 == b) {
                        Some(e) => e.1 += 1,
                        None => u.by_benchmark.push((b, 1, 0.0, 0.0)),
                    }
                }
                u
            })
            .collect();
        for s in steps {
            let b = record_bench[s.record];
            let Some(u) = units.get_mut(s.trajectory) else {
                continue;
            };
            let n = if s.trajectory_passed {
                s.baseline.cost - s.pred.cost
            } else {
                -s.pred.cost
            };
            match u.by_benchmark.iter_mut().find(|e| e.0 == b) {
                Some(e) => {
                    e.2 += s.baseline.cost;
                    e.3 += n;
                }
                None => u.by_benchmark.push((b, 0, s.baseline.cost, n)),
            }
        }
        let mut strata = vec![Vec::new(); benchmarks.len()];
        for (t, (rows, _)) in groups.iter().enumerate() {
            strata[record_bench[rows[0]]].push(t);
        }
        ScoresV2Units {
            benchmarks,
            units,
            strata,
        }
    }

    /// The headline metrics of a sample of trajectories: `units` holds indices into
    /// [`units`](Self::units), repeats allowed (a stratified bootstrap draws them within
    /// [`strata`](Self::strata)).
    pub fn headline(&self, units: &[usize]) -> Headline {
        let nb = self.benchmarks.len();
        let (mut rows, mut pass, mut exact, mut passed_rows) = (0u64, 0u64, 0u64, 0u64);
        let mut brows = vec![0u64; nb];
        let mut d = vec![0.0f64; nb];
        let mut n = vec![0.0f64; nb];
        for u in units.iter().filter_map(|&t| self.units.get(t)) {
            rows += u.rows;
            pass += u.case_pass;
            exact += u.case_exact;
            if u.passed {
                passed_rows += u.rows;
            }
            for &(b, r, dd, nn) in &u.by_benchmark {
                brows[b] += r;
                d[b] += dd;
                n[b] += nn;
            }
        }
        let pct = |x: u64| {
            if rows == 0 {
                f64::NAN
            } else {
                100.0 * x as f64 / rows as f64
            }
        };
        let mut wsum = 0.0;
        let mut have = false;
        for b in 0..nb {
            if d[b] > 0.0 {
                wsum += (brows[b] as f64 / rows as f64) * (100.0 * n[b] / d[b]);
                have = true;
            }
        }
        let cost = if rows > 0 && have { wsum } else { f64::NAN };
        let (a, e, t) = (pct(pass), pct(exact), pct(passed_rows));
        let combined = if [a, e, t, cost].iter().any(|x| x.is_nan()) {
            f64::NAN
        } else {
            (a + e + t + cost) / 4.0
        };
        [a, e, t, cost, combined]
    }

    /// The headline metrics of the evaluation itself (every trajectory once).
    pub fn full(&self) -> Headline {
        let all: Vec<usize> = (0..self.units.len()).collect();
        self.headline(&all)
    }

    /// Whether `other` has the same trajectories in the same strata (two predictors on the
    /// same rows), so that one sample of unit indices pairs them.
    pub fn same_units(&self, other: &ScoresV2Units) -> bool {
        self.strata == other.strata
            && self.benchmarks == other.benchmarks
            && self.units.len() == other.units.len()
            && self
                .units
                .iter()
                .zip(&other.units)
                .all(|(a, b)| a.rows == b.rows)
    }
}

impl ScoresV2Units {
    /// Percentile bootstrap confidence intervals of the five headline metrics (`crb eval
    /// --ci`): trajectories resampled with replacement within each benchmark, `replicates`
    /// times (replicate `r` draws from `StatsRng::for_replicate(seed, r)`), each replicate's
    /// metrics recomputed with [`headline`](Self::headline).
    pub fn intervals(&self, level: f64, replicates: u64, seed: u64) -> routeval_stats::Intervals {
        let cis = routeval_stats::stratified_bootstrap_ci_multi(
            &self.strata,
            replicates,
            seed,
            level,
            5,
            |idx, out| out.copy_from_slice(&self.headline(idx)),
        );
        routeval_stats::Intervals {
            level,
            replicates,
            seed,
            units: "trajectories, resampled within each benchmark".into(),
            intervals: ScoresV2::HEADLINE
                .iter()
                .map(|s| s.to_string())
                .zip(cis)
                .collect(),
        }
    }

    /// Paired comparison with a baseline predictor on the same rows: per headline metric
    /// the run's value, the baseline's, the delta (run − baseline) and a paired percentile
    /// bootstrap CI of the delta (the same trajectories drawn for both, within each
    /// benchmark). `None` when the units differ (not the same rows).
    pub fn compare(
        &self,
        baseline: &ScoresV2Units,
        level: f64,
        replicates: u64,
        seed: u64,
    ) -> Option<Vec<MetricDelta>> {
        if !self.same_units(baseline) {
            return None;
        }
        let cis = routeval_stats::stratified_bootstrap_ci_multi(
            &self.strata,
            replicates,
            seed,
            level,
            5,
            |idx, out| {
                let (a, b) = (self.headline(idx), baseline.headline(idx));
                for k in 0..5 {
                    out[k] = a[k] - b[k];
                }
            },
        );
        let (a, b) = (self.full(), baseline.full());
        Some(
            ScoresV2::HEADLINE
                .iter()
                .enumerate()
                .zip(cis)
                .map(|((k, name), ci)| MetricDelta {
                    metric: name.to_string(),
                    value: a[k],
                    baseline: b[k],
                    delta: a[k] - b[k],
                    ci,
                })
                .collect(),
        )
    }
}

/// Exact McNemar test on per-row case pass (pred ≥ gold) of a run and a baseline on the same
/// rows: `b` = rows only the run passes, `c` = rows only the baseline passes, `p_value` =
/// `scipy.stats.binomtest(b, b + c, 0.5)` two-sided. `None` when the row counts differ.
pub fn case_pass_mcnemar(run: &[EvalRecord], baseline: &[EvalRecord]) -> Option<McNemar> {
    if run.len() != baseline.len() {
        return None;
    }
    Some(McNemar::from_pairs(
        run.iter()
            .zip(baseline)
            .map(|(r, s)| (r.is_passed(), s.is_passed())),
    ))
}

/// `crb eval --baseline-predictor SPEC`: the paired comparison of a run with a baseline router
/// on the same rows, with the options that produced it. Its serde form is the `"baseline"`
/// block of `crb eval --json`: `{"predictor", "level", "replicates", "seed", "units",
/// "metrics": [MetricDelta, ...], "case_pass_mcnemar": {"rows", "b", "c", "p_value"}}`
/// (percent and percentage points; a non-finite p-value is `null`).
#[derive(Debug, Clone)]
pub struct BaselineComparison {
    /// The baseline's predictor spec, as given.
    pub predictor: String,
    /// Confidence level of the paired intervals (fraction).
    pub level: f64,
    /// Bootstrap replicates.
    pub replicates: u64,
    /// Seed of the replicate streams.
    pub seed: u64,
    /// The five `scores_v2` headline metrics (percent): run, baseline, delta (percentage
    /// points), paired bootstrap CI of the delta ([`ScoresV2Units::compare`]).
    pub deltas: Vec<MetricDelta>,
    /// Exact McNemar test on per-row case pass (pred ≥ gold), [`case_pass_mcnemar`]: `b` =
    /// rows only the run passes, `c` = rows only the baseline passes.
    pub mcnemar: McNemar,
    /// Rows compared.
    pub rows: u64,
}

impl BaselineComparison {
    /// What the resampling units are (the `"units"` member of the JSON).
    pub const UNITS: &'static str =
        "trajectories, resampled within each benchmark (the same draws for both)";
}

impl serde::Serialize for BaselineComparison {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        /// The `"case_pass_mcnemar"` member.
        struct Mc<'a>(&'a BaselineComparison);
        impl serde::Serialize for Mc<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let m = &self.0.mcnemar;
                let mut st = s.serialize_struct("McNemar", 4)?;
                st.serialize_field("rows", &self.0.rows)?;
                st.serialize_field("b", &m.b)?;
                st.serialize_field("c", &m.c)?;
                st.serialize_field("p_value", &m.p_value.is_finite().then_some(m.p_value))?;
                st.end()
            }
        }
        let mut st = s.serialize_struct("BaselineComparison", 7)?;
        st.serialize_field("predictor", &self.predictor)?;
        st.serialize_field("level", &self.level)?;
        st.serialize_field("replicates", &self.replicates)?;
        st.serialize_field("seed", &self.seed)?;
        st.serialize_field("units", Self::UNITS)?;
        st.serialize_field("metrics", &self.deltas)?;
        st.serialize_field("case_pass_mcnemar", &Mc(self))?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_comparison_serializes_as_the_json_baseline_block() {
        let c = BaselineComparison {
            predictor: "tier:high".into(),
            level: 0.95,
            replicates: 300,
            seed: 5,
            deltas: Vec::new(),
            mcnemar: McNemar {
                b: 0,
                c: 4,
                p_value: f64::NAN,
            },
            rows: 9,
        };
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"predictor":"tier:high","level":0.95,"replicates":300,"seed":5,"units":"trajectories, resampled within each benchmark (the same draws for both)","metrics":[],"case_pass_mcnemar":{"rows":9,"b":0,"c":4,"p_value":null}}"#
        );
    }
}
