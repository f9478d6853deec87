//! # routeval-stats
//!
//! The statistics behind "is B really better than A?": paired significance tests,
//! multiple-testing corrections, bootstrap confidence intervals and a seedable RNG, each
//! defined as a named reference function (scipy 1.17, statsmodels) and checked against golden
//! vectors generated with them (`tests/fixtures/gen_vectors.py`). Pure: no IO, no clocks;
//! resampling is parallel (rayon) yet depends only on the seed.
//!
//! * [`rng`]: [`StatsRng`], one PCG64 stream per `(seed, replicate)` (SplitMix64-derived).
//! * [`paired`]: [`ttest_rel`], [`wilcoxon`], [`fisher_randomization`] (exact / Monte Carlo),
//!   [`bootstrap_test`], [`cohens_dz`], [`wins_ties_losses`], the [`PairedTest`] selector.
//! * [`binomial`]: [`binom_test_half`] (= `scipy.stats.binomtest(k, n, 0.5)`),
//!   [`mcnemar_exact`].
//! * [`multitest`]: [`adjust`] with [`Correction`] Holm / Bonferroni / none
//!   (= `statsmodels.stats.multitest.multipletests`).
//! * [`bootstrap`]: percentile intervals of any statistic over resampled units
//!   ([`bootstrap_ci`], [`bootstrap_ci_multi`], [`stratified_bootstrap_ci`], [`mean_ci`]).
//! * [`compare`]: the typed report of `routeval compare` (systems × measures, each compared
//!   with a baseline or pairwise, corrected over the whole table).
//! * [`anova`]: many systems at once: [`two_way_anova`] (= statsmodels `anova_lm`), Tukey's HSD
//!   ([`tukey_hsd`]), Carterette's [`randomized_tukey`], [`compact_letters`].
//! * [`range`]: the studentized range distribution ([`studentized_range_sf`]).
//! * [`risk`]: URisk, TRisk and GeoRisk against a baseline ([`urisk_trisk`], [`georisk`]).
//! * [`special`]: incomplete beta, Student's t and normal tails, Binomial(n, ½).
//!
//! ```
//! use routeval_stats::{ttest_rel, differences};
//! let run = [0.5, 0.7, 0.6, 0.9];
//! let base = [0.4, 0.6, 0.6, 0.7];
//! let d = differences(&run, &base).unwrap();
//! let t = ttest_rel(&d);
//! assert!(t.p_value > 0.05 && t.p_value < 0.2);
//! ```

pub mod anova;
pub mod binomial;
pub mod bootstrap;
pub mod compare;
pub mod intervals;
pub mod multitest;
pub mod paired;
pub mod range;
pub mod risk;
pub mod rng;
pub mod special;

pub use anova::{
    TukeyPair, TwoWayAnova, compact_letters, f_sf, randomized_tukey, tukey_hsd, two_way_anova,
};
pub use binomial::{binom_test_half, mcnemar_exact};
pub use bootstrap::{
    BootstrapCi, DegenerateInterval, MIN_RESAMPLING_UNITS, bootstrap_ci, bootstrap_ci_multi,
    bootstrap_mean_ci_table, bootstrap_mean_diff_ci_table, bootstrap_replicates, mean_ci,
    percentile_interval, stratified_bootstrap_ci, stratified_bootstrap_replicates,
};
pub use compare::{
    CompareOptions, Comparison, ComparisonReport, FamilyTest, PairReport, SystemScores,
    SystemSummary, compare_systems,
};
pub use intervals::{Intervals, McNemar, MetricDelta, stratified_bootstrap_ci_multi};
pub use multitest::{Adjusted, Correction, adjust};
pub use paired::{
    Degenerate, PairedTest, Randomization, TTest, Wilcoxon, WilcoxonMethod, WinsTiesLosses,
    bootstrap_test, cohens_dz, degeneracy, differences, fisher_exact, fisher_monte_carlo,
    fisher_randomization, mean, ttest_rel, wilcoxon, wins_ties_losses,
};
pub use range::{StudentizedRange, studentized_range_sf};
pub use risk::{RiskValues, georisk, urisk_trisk};
pub use rng::StatsRng;

/// Errors of the statistics API (bad shapes or names; numbers never error, they give NaN).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// Two paired samples of different lengths.
    #[error("paired samples differ in length ({left} vs {right})")]
    LengthMismatch {
        /// Length of the first sample.
        left: usize,
        /// Length of the second sample.
        right: usize,
    },
    /// An unknown test or correction name.
    #[error("unknown {what} '{name}' (expected one of: {expected})")]
    UnknownName {
        /// What was being named (`test`, `correction`).
        what: &'static str,
        /// The name given.
        name: String,
        /// The accepted names.
        expected: &'static str,
    },
    /// An option out of range (e.g. a confidence level outside (0, 1)).
    #[error("{0}")]
    InvalidOption(String),
}
