//! Named confidence intervals of a report's headline numbers (the `--ci` block of `trec`,
//! `rag`, `crb eval` and `gqr score`), and paired deltas against a baseline.
//!
//! Serialized (serde) as the documented JSON block
//! `{"level": 0.95, "replicates": 1000, "seed": S, "units": "...", "intervals": {metric: [lo, hi]}}`
//! with `null` for an interval no replicate could compute, plus
//! `"degenerate": {metric: "degenerate: reason"}` naming every interval that must not be read
//! as a confidence statement ([`BootstrapCi::degenerate`]: fewer than 2 units, zero width,
//! fewer than [`MIN_RESAMPLING_UNITS`](crate::bootstrap::MIN_RESAMPLING_UNITS) units), only
//! when there is one.

use crate::bootstrap::{BootstrapCi, DegenerateInterval, percentile_interval};
use crate::rng::StatsRng;
use rayon::prelude::*;
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

/// Percentile bootstrap intervals of several named statistics from the same resamples.
#[derive(Debug, Clone, PartialEq)]
pub struct Intervals {
    /// Confidence level (fraction).
    pub level: f64,
    /// Bootstrap replicates.
    pub replicates: u64,
    /// Seed of the per-replicate streams.
    pub seed: u64,
    /// What was resampled (e.g. `"queries"`, `"trajectories within benchmarks"`).
    pub units: String,
    /// `(metric name, interval)` in the report's metric order.
    pub intervals: Vec<(String, BootstrapCi)>,
}

impl Intervals {
    /// `(metric, reason)` of every degenerate interval ([`BootstrapCi::degenerate`]), in
    /// metric order: printed with the interval and as the JSON `"degenerate"` object.
    pub fn degenerate(&self) -> Vec<(&str, DegenerateInterval)> {
        self.intervals
            .iter()
            .filter_map(|(n, c)| c.degenerate().map(|d| (n.as_str(), d)))
            .collect()
    }

    /// The interval of `name`, if any.
    pub fn get(&self, name: &str) -> Option<&BootstrapCi> {
        self.intervals
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
    }
}

/// `[lo, hi]`, or `null` when either bound is not a number.
pub(crate) struct Pair(pub(crate) f64, pub(crate) f64);

impl Serialize for Pair {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() && self.1.is_finite() {
            [self.0, self.1].serialize(s)
        } else {
            s.serialize_none()
        }
    }
}

struct DegenerateMap<'a>(&'a [(&'a str, DegenerateInterval)]);

impl Serialize for DegenerateMap<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, d) in self.0 {
            m.serialize_entry(k, d)?;
        }
        m.end()
    }
}

struct Named<'a>(&'a [(String, BootstrapCi)]);

impl Serialize for Named<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, c) in self.0 {
            m.serialize_entry(k, &Pair(c.low, c.high))?;
        }
        m.end()
    }
}

impl Serialize for Intervals {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let degenerate = self.degenerate();
        let mut st = s.serialize_struct("Intervals", 6)?;
        st.serialize_field("level", &self.level)?;
        st.serialize_field("replicates", &self.replicates)?;
        st.serialize_field("seed", &self.seed)?;
        st.serialize_field("units", &self.units)?;
        st.serialize_field("intervals", &Named(&self.intervals))?;
        if !degenerate.is_empty() {
            st.serialize_field("degenerate", &DegenerateMap(&degenerate))?;
        }
        st.end()
    }
}

/// Stratified resampling with several statistics from the same resamples: each stratum (a
/// list of unit indices) is resampled with replacement to its own size, independently, and
/// `statistics(indices, out)` writes `k` values for the concatenated draw (stratum by stratum,
/// as [`stratified_bootstrap_replicates`](crate::bootstrap::stratified_bootstrap_replicates)
/// draws them, so the same seed gives the same resamples). Returns the `k` percentile
/// intervals; deterministic for a seed on any number of threads.
pub fn stratified_bootstrap_ci_multi<F>(
    strata: &[Vec<usize>],
    replicates: u64,
    seed: u64,
    level: f64,
    k: usize,
    statistics: F,
) -> Vec<BootstrapCi>
where
    F: Fn(&[usize], &mut [f64]) + Sync,
{
    let total: usize = strata.iter().map(Vec::len).sum();
    let rows: Vec<Vec<f64>> = (0..replicates)
        .into_par_iter()
        .map_init(
            || vec![0usize; total],
            |idx, r| {
                let mut rng = StatsRng::for_replicate(seed, r);
                let mut at = 0;
                for s in strata {
                    for slot in &mut idx[at..at + s.len()] {
                        *slot = s[rng.below(s.len() as u64) as usize];
                    }
                    at += s.len();
                }
                let mut out = vec![f64::NAN; k];
                statistics(idx, &mut out);
                out
            },
        )
        .collect();
    (0..k)
        .map(|j| {
            percentile_interval(rows.iter().map(|row| row[j]).collect(), level).with_units(total)
        })
        .collect()
}

/// One metric of a paired comparison with a baseline: both values, their difference and the
/// paired percentile bootstrap CI of the difference (the same units drawn for both systems).
/// Values in the metric's own units.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricDelta {
    /// Metric name.
    pub metric: String,
    /// The run's value.
    pub value: f64,
    /// The baseline's value.
    pub baseline: f64,
    /// `value - baseline`.
    pub delta: f64,
    /// Paired percentile bootstrap CI of `delta`.
    pub ci: BootstrapCi,
}

fn num_or_null(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl Serialize for MetricDelta {
    /// `{"metric", "value", "baseline", "delta", "ci": [lo, hi]}` (non-finite numbers `null`),
    /// plus `"degenerate": "reason"` when the CI is degenerate.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let degenerate = self.ci.degenerate();
        let mut st = s.serialize_struct("MetricDelta", 6)?;
        st.serialize_field("metric", &self.metric)?;
        st.serialize_field("value", &num_or_null(self.value))?;
        st.serialize_field("baseline", &num_or_null(self.baseline))?;
        st.serialize_field("delta", &num_or_null(self.delta))?;
        st.serialize_field("ci", &Pair(self.ci.low, self.ci.high))?;
        if let Some(d) = degenerate {
            st.serialize_field("degenerate", &d)?;
        }
        st.end()
    }
}

/// An exact McNemar test on paired binary outcomes ([`mcnemar_exact`](crate::mcnemar_exact)).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct McNemar {
    /// Units only the run got right.
    pub b: u64,
    /// Units only the baseline got right.
    pub c: u64,
    /// Two-sided exact p-value, `scipy.stats.binomtest(b, b + c, 0.5)`; 1 without
    /// discordant pairs.
    pub p_value: f64,
}

impl McNemar {
    /// Count the discordant pairs of `(run correct, baseline correct)` and test them.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (bool, bool)>) -> McNemar {
        let (mut b, mut c) = (0u64, 0u64);
        for p in pairs {
            match p {
                (true, false) => b += 1,
                (false, true) => c += 1,
                _ => {}
            }
        }
        McNemar {
            b,
            c,
            p_value: crate::mcnemar_exact(b, c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_matches_single_statistic_runs() {
        let strata = vec![vec![0, 1, 2, 3], vec![4, 5, 6]];
        let x = [0.1, 0.5, 0.9, 0.3, 2.0, 3.0, 7.0];
        let mean = |idx: &[usize]| idx.iter().map(|&i| x[i]).sum::<f64>() / idx.len() as f64;
        let max = |idx: &[usize]| idx.iter().map(|&i| x[i]).fold(f64::MIN, f64::max);
        let multi = stratified_bootstrap_ci_multi(&strata, 300, 5, 0.9, 2, |idx, out| {
            out[0] = mean(idx);
            out[1] = max(idx);
        });
        let one = crate::bootstrap::stratified_bootstrap_ci(&strata, 300, 5, 0.9, mean);
        let two = crate::bootstrap::stratified_bootstrap_ci(&strata, 300, 5, 0.9, max);
        assert_eq!(multi, vec![one, two]);
    }

    #[test]
    fn thread_count_does_not_matter() {
        let strata = vec![(0..40).collect::<Vec<_>>(), (40..55).collect()];
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    stratified_bootstrap_ci_multi(&strata, 500, 11, 0.95, 1, |idx, out| {
                        out[0] = idx.iter().map(|&i| (i as f64).sqrt()).sum::<f64>();
                    })
                })
        };
        assert_eq!(run(1), run(4));
    }

    #[test]
    fn mcnemar_counts_discordant_pairs() {
        let m = McNemar::from_pairs([(true, false), (true, false), (false, true), (true, true)]);
        assert_eq!((m.b, m.c), (2, 1));
        // binomtest(2, 3, 0.5) = 1.0
        assert_eq!(m.p_value, 1.0);
        let m = McNemar::from_pairs(std::iter::repeat_n((true, false), 10));
        // binomtest(10, 10, 0.5) = 2 * 0.5**10
        assert!((m.p_value - 2.0 / 1024.0).abs() < 1e-15);
    }

    #[test]
    fn serializes_documented_shape() {
        let c = |low, high| BootstrapCi {
            low,
            high,
            level: 0.95,
            replicates: 10,
            nan_replicates: 0,
            units: 40,
        };
        let iv = Intervals {
            level: 0.95,
            replicates: 10,
            seed: 3,
            units: "queries".into(),
            intervals: vec![
                ("map".into(), c(0.1, 0.2)),
                ("P_10".into(), c(f64::NAN, 0.5)),
            ],
        };
        let s = serde_json::to_string(&iv).unwrap();
        assert_eq!(
            s,
            r#"{"level":0.95,"replicates":10,"seed":3,"units":"queries","intervals":{"map":[0.1,0.2],"P_10":null}}"#
        );
    }

    #[test]
    fn degenerate_intervals_are_named() {
        // One unit per stratum: every replicate is the full sample, zero width.
        let strata = vec![vec![0], vec![1], vec![2]];
        let x = [0.0, 1.0, 1.0];
        let ci = stratified_bootstrap_ci_multi(&strata, 200, 1, 0.95, 1, |idx, out| {
            out[0] = idx.iter().map(|&i| x[i]).sum::<f64>() / 3.0;
        })[0];
        assert_eq!(ci.low, ci.high);
        assert_eq!(ci.degenerate(), Some(DegenerateInterval::ZeroWidth));
        // One unit.
        let one = crate::mean_ci(&[0.5], 100, 1, 0.95);
        assert_eq!(
            one.degenerate(),
            Some(DegenerateInterval::FewerThanTwoUnits { units: 1 })
        );
        // Few units, some width.
        let few = crate::mean_ci(&[0.1, 0.9, 0.4], 500, 1, 0.95);
        assert_eq!(
            few.degenerate(),
            Some(DegenerateInterval::FewUnits { units: 3 })
        );
        let many: Vec<f64> = (0..30).map(|i| (i as f64 * 0.7).sin()).collect();
        assert_eq!(crate::mean_ci(&many, 500, 1, 0.95).degenerate(), None);
        let iv = Intervals {
            level: 0.95,
            replicates: 200,
            seed: 1,
            units: "x".into(),
            intervals: vec![
                ("a".into(), ci),
                ("b".into(), crate::mean_ci(&many, 50, 1, 0.9)),
            ],
        };
        let v = serde_json::to_value(&iv).unwrap();
        assert_eq!(
            v["degenerate"],
            serde_json::json!({"a": DegenerateInterval::ZeroWidth.reason()})
        );
    }
}
