//! Reports (issue 13): `--html PATH` and `--format md` on the evaluation subcommands.
//!
//! Each subcommand's typed report (from its library crate) is turned into a
//! [`routeval_report::Document`] by `routeval_views::<subcommand>`; this module gathers the
//! run's provenance (command line, input paths, sizes and blake3, version, date: IO at the
//! edge), renders through `routeval_views::{html, markdown}` and writes the result through
//! [`crate::output`] (atomic, never over an input).

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

/// The report date: `$SOURCE_DATE_EPOCH` when set (reproducible reports), else now.
fn report_date() -> String {
    routeval_views::iso8601(routeval_io::provenance::report_epoch_seconds())
}

/// Size and blake3 of a file (streamed); `None`s when it cannot be read.
fn describe(path: &str) -> InputFile {
    let d = routeval_io::provenance::describe_file(Path::new(path));
    InputFile {
        path: path.to_string(),
        bytes: d.bytes,
        blake3: d.blake3,
    }
}

/// The provenance block of a report: the command line, every input file the run opened (see
/// [`crate::output::noted_inputs`]: sizes and blake3; stdin as `-`), the version and the date
/// (IO at the edge).
pub(crate) fn provenance(stdin_used: bool) -> Provenance {
    // The program as its file name (not the path it was run from), then the arguments.
    let args: Vec<String> = std::env::args_os()
        .enumerate()
        .map(|(i, a)| {
            if i == 0 {
                let p = PathBuf::from(&a);
                routeval_views::shell_quote(
                    &p.file_name()
                        .map_or_else(|| a.to_string_lossy(), |n| n.to_string_lossy()),
                )
            } else {
                routeval_views::shell_quote(&a.to_string_lossy())
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
    let text = routeval_views::html(doc, provenance(stdin_used))
        .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))?;
    crate::output::write_file(path, text.as_bytes())
}

/// `doc` (with this run's provenance) as Markdown, ending in a newline.
pub(crate) fn markdown(doc: &Document, stdin_used: bool) -> String {
    routeval_views::markdown(doc, provenance(stdin_used))
}
