//! `rag CASES --baseline CASES2`: the options (argparse-style messages); the comparison is the
//! typed `routeval_retrieval_metrics::rag::compare::RagBaseline` (its serde form is `--json`'s
//! `"baseline"`), rendered by `routeval_views::rag::{baseline_text, baseline_section}`.

use routeval_retrieval_metrics::rag::compare::{RagBaseline, compare_reports};
use routeval_retrieval_metrics::rag::{RagReport, py_float_str, py_int_str, pyfmt};
use routeval_stats::{CompareOptions, Correction, PairedTest};

/// The raw `--test/--correction/--alpha/--iterations` values.
pub(super) struct Flags<'a> {
    pub(super) test: Option<&'a str>,
    pub(super) correction: Option<&'a str>,
    pub(super) alpha: Option<&'a str>,
    pub(super) iterations: Option<&'a str>,
}

/// A validated `--baseline` request.
pub(super) struct Request {
    /// The baseline's cases (a path or `-`).
    pub(super) path: String,
    opts: CompareOptions,
}

impl Request {
    /// Validate the flags; `Err` is the argparse-style message (usage error, exit 2).
    /// `ci_level` is `--ci` (default 0.95 for the paired intervals).
    pub(super) fn parse(
        path: &str,
        f: Flags<'_>,
        ci_level: Option<f64>,
        replicates: u64,
        seed: u64,
    ) -> Result<Request, String> {
        let invalid = |flag: &str, v: &str, what: &str| {
            format!(
                "argument --{flag}: invalid value: {} ({what})",
                pyfmt::repr_str(v)
            )
        };
        let test = match f.test {
            None => PairedTest::T,
            Some(v) => v.parse::<PairedTest>().map_err(|_| {
                format!(
                    "argument --test: invalid choice: {} (choose from 't', 'wilcoxon', 'fisher', 'bootstrap')",
                    pyfmt::repr_str(v)
                )
            })?,
        };
        let correction = match f.correction {
            None => Correction::Holm,
            Some(v) => v.parse::<Correction>().map_err(|_| {
                format!(
                    "argument --correction: invalid choice: {} (choose from 'holm', 'bonferroni', 'none')",
                    pyfmt::repr_str(v)
                )
            })?,
        };
        let alpha = match f.alpha {
            None => 0.05,
            Some(v) => match py_float_str(v) {
                Some(a) if a > 0.0 && a < 1.0 => a,
                _ => {
                    return Err(invalid(
                        "alpha",
                        v,
                        "expected a fraction strictly between 0 and 1",
                    ));
                }
            },
        };
        let iterations = match f.iterations {
            None => 10_000,
            Some(v) => match py_int_str(v) {
                Some(n) if (1..=10_000_000).contains(&n) => n as u64,
                _ => {
                    return Err(invalid(
                        "iterations",
                        v,
                        "expected an integer in 1..=10000000",
                    ));
                }
            },
        };
        Ok(Request {
            path: path.to_string(),
            opts: CompareOptions {
                test,
                iterations,
                seed,
                correction,
                alpha,
                ci_level: Some(ci_level.unwrap_or(0.95)),
                ci_replicates: replicates,
                ..CompareOptions::default()
            },
        })
    }

    /// Pair and compare; `Err` is an input error naming the baseline (exit 1).
    pub(super) fn compare(&self, run: &RagReport, base: &RagReport) -> Result<RagBaseline, String> {
        let comparison = compare_reports(run, base, &self.opts)
            .map_err(|e| format!("--baseline {}: {e}", self.path))?;
        Ok(RagBaseline {
            cases_file: self.path.clone(),
            comparison,
        })
    }
}
