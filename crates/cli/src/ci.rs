//! `--ci LEVEL --bootstrap N` (and each subcommand's `--seed`): percentile bootstrap
//! confidence intervals on the headline numbers of `trec`, `rag`, `crb eval` and `gqr score`.
//! The intervals are computed by the library crates (typed `routeval_stats::Intervals`);
//! this module is the flags (the renderings are `routeval_views::{intervals_text,
//! intervals_json}`).

use crate::common::Failure;

/// The most bootstrap replicates (or Monte Carlo iterations) any subcommand accepts: 10^7.
pub(crate) const MAX_REPLICATES: u64 = 10_000_000;

/// Bootstrap replicates when `--bootstrap` is not given.
pub(crate) const DEFAULT_REPLICATES: u64 = 1000;

/// The one default seed of every resampling step (`--seed` of `trec`, `rag`, `gqr`, `crb`
/// and `compare`).
pub(crate) const DEFAULT_SEED: u64 = 42;

/// The `--ci`/`--bootstrap` flags, flattened into a subcommand's arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct CiArgs {
    /// Add percentile bootstrap confidence intervals at LEVEL (a fraction in (0, 1), e.g.
    /// 0.95) to every headline number (JSON: a "ci" block). Without it every output is
    /// unchanged.
    #[arg(long = "ci", value_name = "LEVEL", value_parser = parse_level)]
    pub(crate) ci_level: Option<f64>,
    /// Bootstrap replicates of --ci (and of a baseline comparison's intervals), 1 to 10^7
    /// [default: 1000]. Refused without --ci (or a baseline), where it would do nothing.
    #[arg(
        long = "bootstrap",
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..=MAX_REPLICATES)
    )]
    pub(crate) bootstrap: Option<u64>,
}

impl CiArgs {
    /// The replicates to draw (`--bootstrap`, else [`DEFAULT_REPLICATES`]).
    pub(crate) fn replicates(&self) -> u64 {
        self.bootstrap.unwrap_or(DEFAULT_REPLICATES)
    }

    /// Refuse `--bootstrap` (and `--seed`, when `seed_given` and the seed drives nothing but
    /// the resampling) without `--ci` or a baseline comparison (`with_baseline`): flags that
    /// would be silently ignored. `baseline_flag` names the subcommand's baseline option.
    pub(crate) fn check_used(
        &self,
        seed_given: bool,
        with_baseline: bool,
        baseline_flag: Option<&str>,
    ) -> Result<(), Failure> {
        if self.ci_level.is_some() || with_baseline {
            return Ok(());
        }
        let flag = match (self.bootstrap.is_some(), seed_given) {
            (true, true) => "--bootstrap and --seed go",
            (true, false) => "--bootstrap goes",
            (false, true) => "--seed goes",
            (false, false) => return Ok(()),
        };
        let with = match baseline_flag {
            Some(b) => format!("--ci LEVEL or {b}"),
            None => "--ci LEVEL".to_string(),
        };
        Err(Failure::bad_input(format!(
            "{flag} with {with} (without it nothing is resampled)"
        )))
    }
}

/// A confidence level: a fraction strictly between 0 and 1.
pub(crate) fn parse_level(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        _ => Err(format!(
            "expected a confidence level strictly between 0 and 1 (e.g. 0.95), got {s:?}"
        )),
    }
}

/// The `--ci` text block under a table (`routeval_views::intervals_text`) and its `--json`
/// value (`routeval_views::intervals_json`).
pub(crate) use routeval_views::{intervals_json as to_json, intervals_text as render_text};

#[cfg(test)]
mod tests {
    use super::*;
    use routeval_views::level_label;

    #[test]
    fn levels() {
        assert_eq!(parse_level("0.95"), Ok(0.95));
        assert!(parse_level("95").is_err());
        assert!(parse_level("0").is_err());
        assert!(parse_level("x").is_err());
        assert_eq!(level_label(0.95), "95%");
        assert_eq!(level_label(0.995), "99.5%");
    }
}
