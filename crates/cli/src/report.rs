//! Reports (issue 13): `--html PATH` and `--format md` on the evaluation subcommands.
//!
//! Each subcommand's typed report (from its library crate) is turned into a
//! [`routeval_report::Document`] by a builder in `report/<subcommand>.rs`; this module adds the
//! run's provenance (command line, input paths, sizes and blake3, version, date: IO at the
//! edge) and writes the result through [`crate::output`] (atomic, never over an input).

pub(crate) mod compare;
pub(crate) mod crb;
pub(crate) mod frontier;
pub(crate) mod gqr;
pub(crate) mod rag;
pub(crate) mod route;
pub(crate) mod trec;

use crate::common::Failure;
use routeval_report::{Document, InputFile, Provenance};
use std::path::{Path, PathBuf};

/// `--html PATH`, shared by every subcommand with a report.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct HtmlArg {
    /// Also write a self-contained HTML report to PATH: plots (inline SVG), the numbers in
    /// tables, the run's provenance; no script, nothing fetched, opens from disk.
    #[arg(long, value_name = "PATH")]
    pub(crate) html: Option<PathBuf>,
}

/// `--format`: the stdout rendering of a subcommand without other formats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TextFormat {
    /// The plain-text table (default).
    #[default]
    Text,
    /// GitHub-flavoured Markdown (for CI logs and pull-request comments).
    Md,
}

/// Shell-quote one argument for the provenance's command line.
fn quote(arg: &str) -> String {
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

/// Seconds since the epoch as ISO 8601 UTC.
fn iso8601(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// The report date: `$SOURCE_DATE_EPOCH` when set (reproducible reports), else now.
fn report_date() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        });
    iso8601(secs)
}

/// Size and blake3 of a file (streamed); `None`s when it cannot be read.
fn describe(path: &str) -> InputFile {
    let hashed = std::fs::File::open(path).and_then(|f| {
        let mut h = blake3::Hasher::new();
        h.update_reader(f)?;
        Ok(h)
    });
    match hashed {
        Ok(h) => InputFile {
            path: path.to_string(),
            bytes: std::fs::metadata(path).ok().map(|m| m.len()),
            blake3: Some(h.finalize().to_hex().to_string()),
        },
        Err(_) => InputFile {
            path: path.to_string(),
            bytes: None,
            blake3: None,
        },
    }
}

/// The provenance of this run: the command line, every input file the run opened (see
/// [`crate::output::noted_inputs`]; stdin as `-`), the version and the date.
/// One report note per degenerate interval of `ci`
/// ([`routeval_stats::BootstrapCi::degenerate`]): `CI of map: degenerate: ...`, so the
/// Markdown/HTML faces say what the text and JSON say.
pub(crate) fn degenerate_notes(ci: Option<&routeval_stats::Intervals>) -> Vec<String> {
    ci.map_or_else(Vec::new, |iv| {
        iv.degenerate()
            .into_iter()
            .map(|(name, d)| format!("CI of {name}: {d}"))
            .collect()
    })
}

/// The provenance block of a report: the command line, the inputs noted so far (sizes and
/// blake3, or a note that stdin was read), the version and the date (IO at the edge).
pub(crate) fn provenance(stdin_used: bool) -> Provenance {
    // The program as its file name (not the path it was run from), then the arguments.
    let args: Vec<String> = std::env::args_os()
        .enumerate()
        .map(|(i, a)| {
            if i == 0 {
                let p = PathBuf::from(&a);
                quote(
                    &p.file_name()
                        .map_or_else(|| a.to_string_lossy(), |n| n.to_string_lossy()),
                )
            } else {
                quote(&a.to_string_lossy())
            }
        })
        .collect();
    let mut inputs: Vec<InputFile> = crate::output::noted_inputs()
        .iter()
        .map(|p| describe(p))
        .collect();
    // Sorted: inputs may be opened concurrently (trec reads qrels and run on two threads).
    inputs.sort_by(|a, b| a.path.cmp(&b.path));
    if stdin_used {
        inputs.push(InputFile {
            path: "-".into(),
            bytes: None,
            blake3: None,
        });
    }
    Provenance {
        command_line: args.join(" "),
        inputs,
        version: format!("routeval {}", env!("CARGO_PKG_VERSION")),
        date: report_date(),
    }
}

/// Whether any of `paths` is stdin.
pub(crate) fn uses_stdin<'a>(paths: impl IntoIterator<Item = &'a Path>) -> bool {
    paths.into_iter().any(|p| p == Path::new("-"))
}

/// Refuse an `--html` target that is an input, before any work is done (exit 2).
pub(crate) fn check_target(html: &HtmlArg) -> Result<(), Failure> {
    match &html.html {
        Some(p) if p == Path::new("-") => Err(Failure::bad_input(
            "--html needs a file path (stdout is for the table or --json)",
        )),
        Some(p) => crate::output::check_not_input(p),
        None => Ok(()),
    }
}

/// [`check_target`], then note every output of the command (`others`: `(flag, path)` such as
/// `("-o", ...)`, then `--html`) with [`crate::output::note_output`]: two that are the same
/// file are refused (exit 2) before any work is done.
pub(crate) fn check_outputs(
    html: &HtmlArg,
    others: &[(&str, Option<&Path>)],
) -> Result<(), Failure> {
    check_target(html)?;
    crate::output::check_outputs(others)?;
    crate::output::check_outputs(&[("--html", html.html.as_deref())])
}

/// Write `doc` (with this run's provenance) as HTML to `--html PATH`, if given.
pub(crate) fn write_html(html: &HtmlArg, doc: &Document, stdin_used: bool) -> Result<(), Failure> {
    let Some(path) = &html.html else {
        return Ok(());
    };
    let mut doc = doc.clone();
    doc.provenance = Some(provenance(stdin_used));
    let text = routeval_report::render_html(&doc)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))?;
    crate::output::write_file(path, text.as_bytes())
}

/// `doc` (with this run's provenance) as Markdown, ending in a newline.
pub(crate) fn markdown(doc: &Document, stdin_used: bool) -> String {
    let mut doc = doc.clone();
    doc.provenance = Some(provenance(stdin_used));
    let mut s = routeval_report::render_markdown(&doc);
    s.push('\n');
    s
}

/// A value as the text tables print it: 4 decimals, `n/a` when not finite.
pub(crate) fn f4(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        "n/a".into()
    }
}

/// A threshold as a plot label, `τ = 0.7` (at most 6 decimals, trailing zeros dropped, so
/// `0.7000000000000001` reads `0.7`; the tables keep the full value).
pub(crate) fn tau_label(t: f64) -> String {
    let s = format!("{t:.6}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    format!("τ = {s}")
}

/// A fraction as a percentage with 2 decimals (`n/a` when not finite).
pub(crate) fn pct(x: f64) -> String {
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
    }

    #[test]
    fn tau_labels_carry_no_float_noise() {
        assert_eq!(tau_label(0.7000000000000001), "τ = 0.7");
        assert_eq!(tau_label(1.0), "τ = 1");
        assert_eq!(tau_label(0.125), "τ = 0.125");
    }

    #[test]
    fn command_line_is_shell_quoted() {
        assert_eq!(quote("run.txt"), "run.txt");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
    }
}
