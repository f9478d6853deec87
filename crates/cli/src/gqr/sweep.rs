//! `routeval gqr sweep`: sweep the rejection threshold of a GQR-Bench router that emits
//! probabilities. The sweep itself is `routeval_sweep::gqr::sweep` (shared with the Python
//! package); this adapter reads the data and the scores file and renders the report.

use super::{Data, DataArgs};
use crate::common::{CmdResult, EXIT_OK, Failure, display_name, emit, open_input};
use routeval_frontier::threshold::parse_thresholds;
use routeval_sweep::gqr::{self as engine, GqrSweepOptions};
use std::path::PathBuf;

/// Where to calibrate the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CalibrateOn {
    /// The v1 dev split (dev_train then dev_eval); needs label-3 rows to score OOD.
    Dev,
    /// The v1 eval split: refused (it has no out-of-domain rows).
    Eval,
    /// The v2 eval split: in-domain rows plus the background class (label 3).
    Background,
}

/// `routeval gqr sweep`.
#[derive(Debug, clap::Args)]
pub(crate) struct SweepArgs {
    /// Router probabilities, one `{"id", "probs": [p_law, p_finance, p_healthcare]}` per line
    /// (`-` = stdin), for every scored text (and every calibration text). Each probability must
    /// be a finite number in [0, 1]; vectors not summing to 1 are accepted (noted once).
    #[arg(long, value_name = "FILE")]
    scores: PathBuf,
    /// Thresholds: `A:B:STEP` (inclusive) or a comma list (default: 0, 1 and every distinct
    /// top probability, thinned to at most 1000).
    #[arg(long, value_name = "LIST|A:B:STEP")]
    thresholds: Option<String>,
    /// Sweep GQR-unseen (the nine unseen ID sets with the OOD sets) instead of GQR.
    #[arg(long)]
    unseen: bool,
    /// Choose τ maximising the GQR score on this split and report the test sets at it.
    #[arg(long, value_enum)]
    calibrate_on: Option<CalibrateOn>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write what would be printed to PATH.
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// stdout format: `text` (the table) or `md` (the report as Markdown).
    #[arg(long, value_enum, default_value = "text", conflicts_with = "json")]
    format: crate::report::TextFormat,
    #[command(flatten)]
    html: crate::report::HtmlArg,
    #[command(flatten)]
    data: DataArgs,
}

/// `routeval gqr sweep`: load the splits and score file, run the rejection sweep, print it.
pub(crate) fn sweep(a: SweepArgs) -> CmdResult {
    crate::report::check_outputs(&a.html, &[("-o", a.output.as_deref())])?;
    let thresholds = match &a.thresholds {
        Some(t) => Some(parse_thresholds(t).map_err(Failure::bad_input)?),
        None => None,
    };
    let opts = GqrSweepOptions {
        thresholds,
        unseen: a.unseen,
        calibrate_on: a.calibrate_on.map(|c| match c {
            CalibrateOn::Dev => engine::CalibrateOn::Dev,
            CalibrateOn::Eval => engine::CalibrateOn::Eval,
            CalibrateOn::Background => engine::CalibrateOn::Background,
        }),
    };
    let wanted = opts.wanted_splits().map_err(Failure::bad_input)?;
    let data = Data::load(&a.data, &wanted)?;
    let scores_name = display_name(&a.scores);
    let report = engine::sweep(
        &data,
        open_input(&a.scores)?,
        &scores_name,
        &opts,
        &mut |line| eprintln!("{line}"),
    )
    .map_err(Failure::bad_input)?;
    let md = a.format == crate::report::TextFormat::Md;
    let doc = (md || a.html.html.is_some()).then(|| routeval_views::gqr::sweep_document(&report));
    let stdin_used = crate::report::uses_stdin([a.scores.as_path()]);
    if let Some(doc) = &doc {
        crate::report::write_html(&a.html, doc, stdin_used)?;
    }
    if a.json && !(md && doc.is_some()) {
        // The points move into the value (not copied) and it is written as it is serialized.
        let json = report.into_json();
        crate::common::emit_with(a.output.as_ref(), &mut |w| {
            serde_json::to_writer(&mut *w, &json)?;
            w.write_all(b"\n")
        })?;
        return Ok(EXIT_OK);
    }
    let out = if let (true, Some(doc)) = (md, &doc) {
        crate::report::markdown(doc, stdin_used)
    } else {
        report.render_text()
    };
    emit(a.output.as_ref(), out.as_bytes())?;
    Ok(EXIT_OK)
}
