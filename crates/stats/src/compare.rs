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
use crate::anova::{TwoWayAnova, compact_letters, randomized_tukey, tukey_hsd, two_way_anova};
use crate::bootstrap::bootstrap_mean_ci_table;
use crate::multitest::{Correction, adjust};
use crate::paired::{PairedTest, cohens_dz, mean, wins_ties_losses};
use crate::range::StudentizedRange;
use crate::risk::{RiskValues, check_alpha, georisk, urisk_trisk};
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

/// A test over every pair of systems at once that controls the family-wise error itself, used
/// instead of a paired test (see [`crate::anova`]). Needs at least 3 systems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyTest {
    /// Tukey's HSD with the two-way ANOVA's MSE ([`tukey_hsd`]).
    Tukey,
    /// Carterette's randomized Tukey HSD ([`randomized_tukey`]), `iterations` permutations.
    RandomizedTukey,
}

impl FamilyTest {
    /// The name on the command line and in JSON (`tukey`, `randomized-tukey`).
    pub fn name(self) -> &'static str {
        match self {
            FamilyTest::Tukey => "tukey",
            FamilyTest::RandomizedTukey => "randomized-tukey",
        }
    }

    /// The family test of that name, if it is one.
    pub fn from_name(s: &str) -> Option<FamilyTest> {
        match s {
            "tukey" => Some(FamilyTest::Tukey),
            "randomized-tukey" => Some(FamilyTest::RandomizedTukey),
            _ => None,
        }
    }
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
    /// A family-wise test over all pairs instead of `test` + `correction` (every pair is then
    /// compared and the p-values are not corrected again).
    pub family: Option<FamilyTest>,
    /// Add the two-way ANOVA of each measure (needs at least 3 systems).
    pub anova: bool,
    /// Loss weights `α` of the risk measures against the baseline (URisk, TRisk, GeoRisk), in
    /// the order given; empty = no risk measures.
    pub risk_alphas: Vec<f64>,
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
            family: None,
            anova: false,
            risk_alphas: Vec::new(),
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
    /// Compact letter display per measure with a family test (systems sharing a letter are
    /// not significantly different; `a` goes to the best mean).
    pub letters: Option<Vec<String>>,
    /// Risk measures per measure, one entry per `α` of [`CompareOptions::risk_alphas`]
    /// (`None` without risk measures).
    pub risk: Option<Vec<Vec<RiskValues>>>,
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
    /// The family-wise test used instead of `test` + `correction`, if any.
    pub family: Option<FamilyTest>,
    /// The two-way ANOVA per measure (with `anova` or a Tukey test).
    pub anova: Option<Vec<TwoWayAnova>>,
    /// Notes about undefined statistics (a residual variance of 0, GeoRisk of an all-zero
    /// table), in every face of the report.
    pub notes: Vec<String>,
}

impl ComparisonReport {
    /// The test's name as printed: the family test's, else the paired test's.
    pub fn test_name(&self) -> &'static str {
        self.family.map_or(self.test.name(), FamilyTest::name)
    }

    /// The correction's name as printed: `tukey` for a family test (its p-values are already
    /// family-wise), else the correction's.
    pub fn correction_name(&self) -> &'static str {
        if self.family.is_some() {
            "tukey"
        } else {
            self.correction.name()
        }
    }

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
        let n = 3
            + usize::from(run.vs_baseline.is_some())
            + usize::from(run.letters.is_some())
            + usize::from(run.risk.is_some());
        let mut st = s.serialize_struct("Run", n)?;
        st.serialize_field("name", &run.name)?;
        st.serialize_field("path", &run.path)?;
        st.serialize_field("means", &OrderedMap(self.0, &run.means))?;
        if let Some(v) = &run.vs_baseline {
            st.serialize_field("vs_baseline", &OrderedMap(self.0, v))?;
        }
        if let Some(l) = &run.letters {
            st.serialize_field("letters", &OrderedMap(self.0, l))?;
        }
        if let Some(r) = &run.risk {
            st.serialize_field("risk", &OrderedMap(self.0, r))?;
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
        let n = 6
            + usize::from(self.pairs.is_some())
            + usize::from(self.anova.is_some())
            + usize::from(!self.notes.is_empty());
        let mut st = s.serialize_struct("ComparisonReport", n)?;
        st.serialize_field("measures", &self.measures)?;
        st.serialize_field("queries", &self.queries)?;
        st.serialize_field("test", self.test_name())?;
        st.serialize_field("correction", self.correction_name())?;
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
        if let Some(a) = &self.anova {
            st.serialize_field("anova", &OrderedMap(&self.measures, a))?;
        }
        if !self.notes.is_empty() {
            st.serialize_field("notes", &self.notes)?;
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
    let k = systems.len();
    if (opts.anova || opts.family.is_some()) && k < 3 {
        let what = opts.family.map_or("the ANOVA", |f| {
            if f == FamilyTest::Tukey {
                "Tukey's HSD"
            } else {
                "the randomized Tukey HSD"
            }
        });
        return Err(StatsError::InvalidOption(format!(
            "{what} compares at least 3 runs, got {k}; with two runs use a paired test (t, wilcoxon, fisher, bootstrap)"
        )));
    }
    if (opts.anova || opts.family.is_some()) && n_units < 2 {
        return Err(StatsError::InvalidOption(format!(
            "an analysis of many systems needs at least 2 queries, got {n_units}"
        )));
    }
    if opts.family == Some(FamilyTest::RandomizedTukey)
        && opts.iterations > crate::anova::MAX_ITERATIONS
    {
        return Err(StatsError::InvalidOption(format!(
            "iterations must be in 1..={}, got {}",
            crate::anova::MAX_ITERATIONS,
            opts.iterations
        )));
    }
    for &a in &opts.risk_alphas {
        check_alpha(a)?;
    }
    let all_pairs = opts.all_pairs || opts.family.is_some();
    let pairs: Vec<(usize, usize)> = if all_pairs {
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
    let make_diff = |&(p, m): &(usize, usize)| -> Vec<f64> {
        let (a, b) = pairs[p];
        systems[b].scores[m]
            .iter()
            .zip(&systems[a].scores[m])
            .map(|(x, y)| x - y)
            .collect()
    };
    // A family test over k(k − 1)/2 pairs needs each pair's differences only for its effect
    // size: made per job and dropped, not kept for the whole table.
    let keep_diffs = opts.family.is_none();
    let diffs: Vec<Vec<f64>> = if keep_diffs {
        jobs.iter().map(make_diff).collect()
    } else {
        Vec::new()
    };
    // Per measure, the systems × queries table (for the ANOVA, Tukey and GeoRisk).
    let tables: Vec<Vec<&[f64]>> = (0..n_m)
        .map(|m| systems.iter().map(|s| s.scores[m].as_slice()).collect())
        .collect();
    let mut notes: Vec<String> = Vec::new();
    let anova: Option<Vec<TwoWayAnova>> = if opts.anova || opts.family.is_some() {
        let a = tables
            .iter()
            .map(|t| two_way_anova(t))
            .collect::<Result<Vec<_>, _>>()?;
        for (m, r) in a.iter().enumerate() {
            if r.f.is_none() {
                notes.push(format!(
                    "{}: the residual variance of the two-way ANOVA is 0 (every score is the sum of a system and a query effect), so F{} is undefined",
                    measures[m],
                    if opts.family == Some(FamilyTest::Tukey) { " and Tukey's q" } else { "" }
                ));
            }
        }
        Some(a)
    } else {
        None
    };
    // Family-wise p-values per measure, in `pairs` order (a < b, lexicographic).
    let family_p: Option<Vec<Vec<f64>>> = match (opts.family, &anova) {
        (Some(FamilyTest::Tukey), Some(a)) => {
            let dist =
                StudentizedRange::new(k as u32, a[0].df_residual as f64).ok_or_else(|| {
                    StatsError::InvalidOption("no residual degrees of freedom".into())
                })?;
            let per_m = tables
                .iter()
                .zip(a)
                .map(|(t, an)| {
                    tukey_hsd(t, an, &dist).map(|v| v.iter().map(|p| p.p_value).collect())
                })
                .collect::<Result<Vec<Vec<f64>>, _>>()?;
            Some(per_m)
        }
        (Some(FamilyTest::RandomizedTukey), _) => {
            let r = randomized_tukey(&tables, opts.iterations, opts.seed)?;
            Some(
                r.into_iter()
                    .map(|v| v.iter().map(|p| p.p_value).collect())
                    .collect(),
            )
        }
        _ => None,
    };
    // (p-value, effect size, why a paired test had no evidence).
    let raw: Vec<(f64, Option<f64>, Option<&'static str>)> = jobs
        .par_iter()
        .enumerate()
        .map(|(j, job)| {
            let owned;
            let d: &[f64] = if keep_diffs {
                &diffs[j]
            } else {
                owned = make_diff(job);
                &owned
            };
            let (p, m) = *job;
            match &family_p {
                // The family test's evidence is the whole table (its MSE or permutations),
                // not this pair's differences: no paired-test note.
                Some(fp) => (fp[m][p], cohens_dz(d), None),
                None => (
                    opts.test.p_value(d, opts.iterations, opts.seed),
                    cohens_dz(d),
                    crate::degeneracy(d).map(crate::Degenerate::reason),
                ),
            }
        })
        .collect();
    // CIs of every mean difference from the same resamples (rows = units, columns = jobs).
    let cis: Option<Vec<crate::BootstrapCi>> = opts.ci_level.map(|level| {
        if opts.family.is_some() {
            // Every pair of k systems: resample the systems' columns once and take the
            // pairs' differences (k·m columns instead of k(k − 1)/2·m).
            let cols = k * n_m;
            let mut rows = vec![0.0f64; n_units * cols];
            for (i, s) in systems.iter().enumerate() {
                for (m, col) in s.scores.iter().enumerate() {
                    for (u, v) in col.iter().enumerate() {
                        rows[u * cols + m * k + i] = *v;
                    }
                }
            }
            let pair_cols: Vec<(usize, usize)> = jobs
                .iter()
                .map(|&(p, m)| (m * k + pairs[p].0, m * k + pairs[p].1))
                .collect();
            return crate::bootstrap::bootstrap_mean_diff_ci_table(
                &rows,
                n_units,
                cols,
                &pair_cols,
                opts.ci_replicates,
                opts.seed,
                level,
            );
        }
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
    let adj = if family_p.is_some() {
        // Already family-wise: p_adjusted = p, rejected at alpha (never when undefined).
        crate::multitest::Adjusted {
            p_adjusted: pvals.clone(),
            reject: pvals.iter().map(|&p| p <= opts.alpha).collect(),
        }
    } else {
        adjust(&pvals, opts.alpha, opts.correction)
    };
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
                note: raw[j].2,
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
    // Compact letters per measure with a family test (every pair compared, family-wise).
    let letters: Option<Vec<Vec<String>>> = opts.family.is_some().then(|| {
        (0..n_m)
            .map(|m| {
                let mut order: Vec<usize> = (0..k).collect();
                order.sort_by(|&x, &y| means[y][m].total_cmp(&means[x][m]).then(x.cmp(&y)));
                let sig = |a: usize, b: usize| {
                    let (a, b) = if a < b { (a, b) } else { (b, a) };
                    pairs
                        .iter()
                        .position(|&pr| pr == (a, b))
                        .is_some_and(|p| comparisons[p * n_m + m].significant)
                };
                compact_letters(k, &order, sig)
            })
            .collect()
    });
    // Risk measures per run, measure and alpha.
    let risk: Option<Vec<Vec<Vec<RiskValues>>>> = if opts.risk_alphas.is_empty() {
        None
    } else {
        let mut per_run = vec![vec![Vec::new(); n_m]; k];
        for (m, t) in tables.iter().enumerate() {
            for &alpha in &opts.risk_alphas {
                let g = georisk(t, alpha)?;
                if g.iter().all(Option::is_none) && alpha == opts.risk_alphas[0] {
                    notes.push(format!(
                        "{}: GeoRisk is undefined (every score is 0, or a score is negative)",
                        measures[m]
                    ));
                }
                for (i, run) in per_run.iter_mut().enumerate() {
                    let (urisk, trisk) = if i == 0 {
                        (None, None)
                    } else {
                        let (u, t) = urisk_trisk(t[i], t[0], alpha)?;
                        (Some(u).filter(|v| v.is_finite()), t)
                    };
                    run[m].push(RiskValues {
                        alpha,
                        urisk,
                        trisk,
                        georisk: g[i],
                    });
                }
            }
        }
        Some(per_run)
    };
    let runs = systems
        .iter()
        .enumerate()
        .map(|(i, s)| SystemSummary {
            letters: letters
                .as_ref()
                .map(|l| l.iter().map(|per_m| per_m[i].clone()).collect()),
            risk: risk.as_ref().map(|r| r[i].clone()),
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
        pairs: all_pairs.then_some(pair_reports),
        family: opts.family,
        anova,
        notes,
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
    fn family_tests_anova_and_risk() {
        let measures = vec!["m".to_string()];
        let s: Vec<SystemScores> = (0..4)
            .map(|i| {
                sys(
                    &format!("s{i}"),
                    vec![
                        (0..12)
                            .map(|q| ((q * 7 + i * 3) % 10) as f64 / 10.0 + 0.05 * i as f64)
                            .collect(),
                    ],
                )
            })
            .collect();
        let opts = CompareOptions {
            family: Some(FamilyTest::Tukey),
            anova: true,
            risk_alphas: vec![1.0, 5.0],
            ..Default::default()
        };
        let r = compare_systems(&measures, &s, &opts).unwrap();
        assert_eq!(r.pairs.as_ref().unwrap().len(), 6);
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["test"], "tukey");
        assert_eq!(j["correction"], "tukey");
        let a = &j["anova"]["m"];
        for key in [
            "f",
            "p_value",
            "df_systems",
            "df_queries",
            "df_residual",
            "mse",
            "ss_systems",
            "ss_queries",
            "ss_residual",
        ] {
            assert!(a.get(key).is_some(), "{key}");
        }
        assert_eq!(a["df_residual"], 33);
        for c in r.comparisons() {
            assert_eq!(c.3.p_value, c.3.p_adjusted);
        }
        let risk = &j["runs"][1]["risk"]["m"];
        assert_eq!(risk.as_array().unwrap().len(), 2);
        assert_eq!(risk[1]["alpha"], 5.0);
        assert!(risk[0]["urisk"].is_number());
        assert!(j["runs"][0]["risk"]["m"][0]["urisk"].is_null());
        assert!(j["runs"][0]["letters"]["m"].is_string());
        // Two systems: refused, with the advice.
        let e = compare_systems(&measures, &s[..2], &opts)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at least 3 runs") && e.contains("paired test"),
            "{e}"
        );
        let bad = CompareOptions {
            risk_alphas: vec![-1.0],
            ..Default::default()
        };
        assert!(compare_systems(&measures, &s, &bad).is_err());
    }

    #[test]
    fn georisk_of_an_all_zero_measure_is_null_with_a_note() {
        let measures = vec!["m".to_string()];
        let s: Vec<SystemScores> = (0..3)
            .map(|i| sys(&format!("s{i}"), vec![vec![0.0; 5]]))
            .collect();
        let opts = CompareOptions {
            anova: true,
            risk_alphas: vec![1.0],
            ..Default::default()
        };
        let r = compare_systems(&measures, &s, &opts).unwrap();
        let j = serde_json::to_string(&r).unwrap();
        assert!(!j.contains("NaN"));
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert!(v["runs"][1]["risk"]["m"][0]["georisk"].is_null());
        assert!(v["anova"]["m"]["f"].is_null());
        assert_eq!(v["notes"].as_array().unwrap().len(), 2, "{j}");
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
