//! routeval's report views (issues 24 and 25): one typed result, rendered by every face.
//!
//! Each module turns a subcommand's typed result (from its library crate) into a
//! [`routeval_report::Document`], the model that `routeval_report` renders as Markdown
//! (`--format md`) and as a self-contained HTML file (`--html PATH`):
//!
//! | module | result | document |
//! |---|---|---|
//! | [`trec`] | `retrieval_metrics::trec::eval::Evaluation` (+ `--ci` intervals) | summary measures, per-measure distributions over queries |
//! | [`rag`] | `retrieval_metrics::rag::RagReport` | metric bars with support, weakest cases, notes |
//! | [`route`] | `route`'s flat summary and routing counts (JSON values) | per-route and per-group bars, routing counts |
//! | [`crb`] | `routing_scores::crb::scores::CrbMetrics`, `sweep::crb::CrbSweepReport` | `crb eval` bars and confusion matrix; `crb sweep` cost–quality curve |
//! | [`gqr`] | [`gqr::ScoreView`], `sweep::gqr::GqrSweepReport` | `gqr score` per-set accuracy, confusion, latency; `gqr sweep` curves |
//! | [`frontier`] | `frontier::points::{FrontierReport, StrongShareReport}` | points and NDCH, or RouteLLM's strong-share curve |
//! | [`compare`] | `stats::ComparisonReport` | the ranx-style table as text, Markdown, LaTeX, CSV ([`compare::render`]) and as a document |
//!
//! The run's provenance (command line, inputs with sizes and blake3, version, date) is
//! gathered at the edge and handed in ([`markdown`], [`html`]); this crate does no IO and reads
//! no clock, so Python and tests build the same bytes as the binary.

pub mod compare;
pub mod crb;
pub mod frontier;
pub mod gqr;
pub mod rag;
pub mod route;
pub mod trec;

use routeval_report::{Document, Provenance, ReportError};

/// One report note per degenerate interval of `ci`
/// ([`routeval_stats::BootstrapCi::degenerate`]): `CI of map: degenerate: ...`, so the
/// Markdown/HTML faces say what the text and JSON say.
pub fn degenerate_notes(ci: Option<&routeval_stats::Intervals>) -> Vec<String> {
    ci.map_or_else(Vec::new, |iv| {
        iv.degenerate()
            .into_iter()
            .map(|(name, d)| format!("CI of {name}: {d}"))
            .collect()
    })
}

/// `doc` with `provenance` as HTML (one self-contained file, [`routeval_report::render_html`]).
/// Errors: [`ReportError`] when a plot cannot be drawn.
pub fn html(doc: &Document, provenance: Provenance) -> Result<String, ReportError> {
    let mut doc = doc.clone();
    doc.provenance = Some(provenance);
    routeval_report::render_html(&doc)
}

/// `doc` with `provenance` as Markdown ([`routeval_report::render_markdown`]), ending in a
/// newline (what `--format md` prints).
pub fn markdown(doc: &Document, provenance: Provenance) -> String {
    let mut doc = doc.clone();
    doc.provenance = Some(provenance);
    let mut s = routeval_report::render_markdown(&doc);
    s.push('\n');
    s
}

/// Shell-quote one argument for the provenance's command line: as is when it is made of
/// `[A-Za-z0-9-_./=:,@%+]` only, else in single quotes (a `'` written `'\''`).
pub fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// Days since 1970-01-01 to a civil date (proleptic Gregorian; H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Seconds since the Unix epoch (UTC, leap seconds ignored) as ISO 8601,
/// `2026-12-01T17:01:01Z`: the provenance's date. Saturates instead of overflowing for
/// seconds beyond any calendar use.
pub fn iso8601(secs: i64) -> String {
    // ±2^52 s is ~140 million years: far past any date, and keeps the arithmetic in range.
    let secs = secs.clamp(-(1 << 52), 1 << 52);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// `n` with the noun in the right number: `1 query`, `0 queries`, `12 queries`.
pub fn queries(n: usize) -> String {
    if n == 1 {
        "1 query".into()
    } else {
        format!("{n} queries")
    }
}

/// A confidence level as a label: `95%` for 0.95, `99.5%` for 0.995 (4 decimals at most,
/// trailing zeros dropped).
pub fn level_label(level: f64) -> String {
    let p = level * 100.0;
    let s = format!("{p:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

/// The text block printed under a table for `--ci`: a header naming the level, replicates,
/// seed and units, then one `name  [lo, hi]` line per metric (`fmt` formats a bound; `n/a`
/// when a bound is not finite), followed by `(degenerate: reason)` for an interval that is no
/// confidence statement ([`routeval_stats::BootstrapCi::degenerate`]). Each line ends in a
/// newline.
pub fn intervals_text(iv: &routeval_stats::Intervals, fmt: impl Fn(f64) -> String) -> String {
    let mut s = format!(
        "{} bootstrap confidence intervals ({} replicates over {}, seed {}):\n",
        level_label(iv.level),
        iv.replicates,
        iv.units,
        iv.seed
    );
    for (name, ci) in &iv.intervals {
        let mut body = if ci.low.is_finite() && ci.high.is_finite() {
            format!("[{}, {}]", fmt(ci.low), fmt(ci.high))
        } else {
            "n/a".to_string()
        };
        if let Some(d) = ci.degenerate() {
            body.push_str(&format!("  ({d})"));
        }
        s.push_str(&format!("  {name:<30} {body}\n"));
    }
    s
}

/// The `--json` value of an intervals block: `{"level", "replicates", "seed", "units",
/// "intervals": {metric: [lo, hi] | null}}` (`null` when it cannot be serialised).
pub fn intervals_json(iv: &routeval_stats::Intervals) -> serde_json::Value {
    serde_json::to_value(iv).unwrap_or(serde_json::Value::Null)
}

/// A value as the text tables print it: 4 decimals, `n/a` when not finite.
pub fn f4(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        "n/a".into()
    }
}

/// A threshold as a plot label, `τ = 0.7` (at most 6 decimals, trailing zeros dropped, so
/// `0.7000000000000001` reads `0.7`; the tables keep the full value).
pub fn tau_label(t: f64) -> String {
    let s = format!("{t:.6}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    format!("τ = {s}")
}

/// A fraction as a percentage with 2 decimals (`n/a` when not finite).
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.2}", x * 100.0)
    } else {
        "n/a".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_iso8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(1_796_140_800 + 3661), "2026-12-01T17:01:01Z");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59Z");
        // Never overflows.
        assert!(iso8601(i64::MAX).ends_with('Z'));
        assert!(iso8601(i64::MIN).ends_with('Z'));
    }

    #[test]
    fn tau_labels_carry_no_float_noise() {
        assert_eq!(tau_label(0.7000000000000001), "τ = 0.7");
        assert_eq!(tau_label(1.0), "τ = 1");
        assert_eq!(tau_label(0.125), "τ = 0.125");
    }

    #[test]
    fn command_line_is_shell_quoted() {
        assert_eq!(shell_quote("run.txt"), "run.txt");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn level_labels() {
        assert_eq!(level_label(0.95), "95%");
        assert_eq!(level_label(0.995), "99.5%");
    }
}
