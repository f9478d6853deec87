//! `--ci LEVEL --bootstrap N` (and each subcommand's `--seed`): percentile bootstrap
//! confidence intervals on the headline numbers of `trec`, `rag`, `crb eval` and `gqr score`.
//! The intervals are computed by the library crates (typed `routeval_stats::Intervals`);
//! this module is the flags and the text rendering.

use routeval_stats::Intervals;

/// The `--ci`/`--bootstrap` flags, flattened into a subcommand's arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct CiArgs {
    /// Add percentile bootstrap confidence intervals at LEVEL (a fraction in (0, 1), e.g.
    /// 0.95) to every headline number (JSON: a "ci" block). Without it every output is
    /// unchanged.
    #[arg(long = "ci", value_name = "LEVEL", value_parser = parse_level)]
    pub(crate) ci_level: Option<f64>,
    /// Bootstrap replicates of --ci (and of a baseline comparison's intervals).
    #[arg(
        long = "bootstrap",
        value_name = "N",
        default_value_t = 1000,
        value_parser = clap::value_parser!(u64).range(1..=10_000_000)
    )]
    pub(crate) replicates: u64,
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

/// `95%` for 0.95, `99.5%` for 0.995.
pub(crate) fn level_label(level: f64) -> String {
    let p = level * 100.0;
    let s = format!("{p:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

/// The text block printed under a table: a header naming the level, replicates, seed and
/// units, then one `name  [lo, hi]` line per metric (`fmt` formats a bound).
pub(crate) fn render_text(iv: &Intervals, fmt: impl Fn(f64) -> String) -> String {
    let mut s = format!(
        "{} bootstrap confidence intervals ({} replicates over {}, seed {}):\n",
        level_label(iv.level),
        iv.replicates,
        iv.units,
        iv.seed
    );
    for (name, ci) in &iv.intervals {
        let body = if ci.low.is_finite() && ci.high.is_finite() {
            format!("[{}, {}]", fmt(ci.low), fmt(ci.high))
        } else {
            "n/a".to_string()
        };
        s.push_str(&format!("  {name:<30} {body}\n"));
    }
    s
}

/// The JSON value of an intervals block (`{"level", "replicates", "seed", "units",
/// "intervals": {metric: [lo, hi] | null}}`).
pub(crate) fn to_json(iv: &Intervals) -> serde_json::Value {
    serde_json::to_value(iv).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

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
