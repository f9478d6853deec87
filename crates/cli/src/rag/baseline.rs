//! `rag CASES --baseline CASES2`: the options (argparse-style messages) and the rendering of
//! the paired comparison; the numbers come from
//! `routeval_retrieval_metrics::rag::compare::compare_reports`.

use routeval_retrieval_metrics::rag::compare::{RagComparison, compare_reports};
use routeval_retrieval_metrics::rag::{RagReport, py_float_str, py_int_str, pyfmt};
use routeval_stats::{CompareOptions, Correction, PairedTest};
use serde_json::{Value, json};

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

/// A finished comparison and the baseline's path.
pub(super) struct Comparison {
    path: String,
    inner: RagComparison,
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
    pub(super) fn compare(&self, run: &RagReport, base: &RagReport) -> Result<Comparison, String> {
        let inner = compare_reports(run, base, &self.opts)
            .map_err(|e| format!("--baseline {}: {e}", self.path))?;
        Ok(Comparison {
            path: self.path.clone(),
            inner,
        })
    }
}

impl Comparison {
    /// The `"baseline"` member of `--json`: `{"cases_file", ...RagComparison's fields}`.
    pub(super) fn to_json(&self) -> Value {
        let mut v = json!({"cases_file": self.path});
        if let (Value::Object(m), Ok(Value::Object(rest))) =
            (&mut v, serde_json::to_value(&self.inner))
        {
            m.extend(rest);
        }
        v
    }

    /// The report section of the comparison (`--format md`, `--html`): one row per metric
    /// with the same cells as [`render`](Self::render) prints.
    pub(super) fn section(&self) -> routeval_report::Section {
        let c = &self.inner;
        let mut t = routeval_report::Table::new([
            "metric",
            "cases",
            "run",
            "baseline",
            "delta",
            "p",
            "p adj",
            "significant",
            "CI of delta",
            "W/T/L",
        ])
        .caption(self.caption());
        for m in &c.metrics {
            match &m.comparison {
                None => t.row([
                    m.metric.name().to_string(),
                    m.cases.to_string(),
                    "(no case scored by both)".into(),
                ]),
                Some(k) => t.row([
                    m.metric.name().to_string(),
                    m.cases.to_string(),
                    f4(m.value),
                    f4(m.baseline),
                    signed(k.delta),
                    p_text(k.p_value),
                    p_text(k.p_adjusted),
                    if k.significant { "yes" } else { "no" }.to_string(),
                    ci_text(k.ci),
                    format!("{}/{}/{}", k.wins, k.ties, k.losses),
                ]),
            }
        }
        routeval_report::Section::new(format!("vs baseline {}", self.path)).with(t)
    }

    /// What was compared and how (the text block's first line, without the path).
    fn caption(&self) -> String {
        let c = &self.inner;
        let pairing = match c.pairing {
            routeval_retrieval_metrics::rag::compare::Pairing::Id => "by id",
            routeval_retrieval_metrics::rag::compare::Pairing::Index => "by position",
        };
        format!(
            "{} paired cases {pairing}; {} test, {} correction, alpha {}; {} paired bootstrap CI of the mean difference",
            c.cases,
            c.test.name(),
            c.correction.name(),
            c.alpha,
            routeval_views::level_label(c.ci_level.unwrap_or(0.95)),
        )
    }

    /// The text block under the summary: one line per metric.
    pub(super) fn render(&self) -> String {
        let c = &self.inner;
        let p = p_text;
        let pairing = match c.pairing {
            routeval_retrieval_metrics::rag::compare::Pairing::Id => "by id",
            routeval_retrieval_metrics::rag::compare::Pairing::Index => "by position",
        };
        let mut t = format!(
            "vs baseline {} ({} paired cases {pairing}; {} test, {} correction, alpha {}; {} paired bootstrap CI of the mean difference)\n",
            self.path,
            c.cases,
            c.test.name(),
            c.correction.name(),
            c.alpha,
            routeval_views::level_label(c.ci_level.unwrap_or(0.95)),
        );
        t.push_str(&format!(
            "  {:<19} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8}  {:<20} {}\n",
            "metric", "cases", "run", "baseline", "delta", "p", "p adj", "CI of delta", "W/T/L"
        ));
        for m in &c.metrics {
            match &m.comparison {
                None => t.push_str(&format!(
                    "  {:<19} {:>6}  (no case scored by both)\n",
                    m.metric.name(),
                    m.cases
                )),
                Some(k) => {
                    let ci = ci_text(k.ci);
                    t.push_str(&format!(
                        "  {:<19} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8}{} {:<20} {}/{}/{}\n",
                        m.metric.name(),
                        m.cases,
                        f4(m.value),
                        f4(m.baseline),
                        signed(k.delta),
                        p(k.p_value),
                        p(k.p_adjusted),
                        if k.significant { "*" } else { " " },
                        ci,
                        k.wins,
                        k.ties,
                        k.losses
                    ));
                }
            }
        }
        t.push_str("  (* significant after the correction)\n");
        for m in &c.metrics {
            if let Some(k) = &m.comparison {
                if let Some(note) = k.note {
                    t.push_str(&format!("  note: {}: no test ({note})\n", m.metric.name()));
                }
                if let Some(why) = k.ci_degenerate {
                    t.push_str(&format!("  note: {}: CI {why}\n", m.metric.name()));
                }
            }
        }
        t
    }
}

/// A mean with 4 decimals (`n/a`).
fn f4(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        "n/a".into()
    }
}

/// A signed difference with 4 decimals (`n/a`).
fn signed(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.4}")
    } else {
        "n/a".into()
    }
}

/// A p-value with 4 decimals, `<0.0001` below (`n/a`).
fn p_text(x: f64) -> String {
    if !x.is_finite() {
        "n/a".to_string()
    } else if x < 1e-4 {
        "<0.0001".to_string()
    } else {
        format!("{x:.4}")
    }
}

/// A CI as `[low, high]` (`n/a` without finite bounds).
fn ci_text(ci: Option<[f64; 2]>) -> String {
    ci.filter(|x| x[0].is_finite() && x[1].is_finite())
        .map_or("n/a".to_string(), |x| {
            format!("[{}, {}]", signed(x[0]), signed(x[1]))
        })
}
