//! `routeval.compare` native part: `routeval compare` (paired tests, corrected p-values,
//! bootstrap CIs of the differences, the "significantly worse" gate) over
//! `routeval_stats::compare`, for TREC run files and for any per-unit scores.
//!
//! The report is returned as the JSON text `routeval compare --json` prints (same serializer,
//! `ComparisonReport`'s serde form), so the Python side's `to_dict()` equals the CLI's output.

use crate::RoutevalError;
use pyo3::create_exception;
use pyo3::prelude::*;
use routeval_retrieval_metrics::trec::{self, EvalOptions, MeasureSet, Qrels};
use routeval_stats::{
    CompareOptions, ComparisonReport, Correction, FamilyTest, PairedTest, SystemScores,
    compare_systems,
};
use std::path::{Path, PathBuf};

create_exception!(
    _native,
    CompareError,
    RoutevalError,
    "A `routeval compare` error: bad qrels or run, unknown measure or test, options out of range."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CompareError", m.py().get_type::<CompareError>())?;
    m.add_function(wrap_pyfunction!(compare_trec_files, m)?)?;
    m.add_function(wrap_pyfunction!(compare_scores, m)?)?;
    m.add_class::<CompareRender>()?;
    Ok(())
}

/// The typed comparison behind one Python `ComparisonReport`, kept so that its table,
/// Markdown and HTML faces are rendered by `routeval_views` from the same value as
/// `routeval compare`'s (`--format text|md|latex|csv`, `--html`): a note, caveat or block
/// cannot be in one face and not another.
#[pyclass(module = "routeval._native", frozen)]
pub(crate) struct CompareRender {
    report: ComparisonReport,
    systems: Vec<SystemScores>,
    /// The inputs' notes (runs with unjudged queries, judged queries without results).
    input_notes: Vec<String>,
    /// `--ties` objects per run (empty without ties).
    ties: Vec<serde_json::Value>,
    /// The input files (qrels, runs), described in the report's provenance.
    inputs: Vec<PathBuf>,
}

impl CompareRender {
    fn tie_blocks(&self) -> Vec<routeval_views::compare::ExtraBlock> {
        if self.ties.is_empty() {
            Vec::new()
        } else {
            vec![routeval_views::compare::tie_block(&self.report, &self.ties)]
        }
    }

    fn provenance(&self, call: &str) -> routeval_report::Provenance {
        let mut inputs: Vec<routeval_report::InputFile> = self
            .inputs
            .iter()
            .map(|p| {
                let d = routeval_io::provenance::describe_file(p);
                routeval_report::InputFile {
                    path: p.display().to_string(),
                    bytes: d.bytes,
                    blake3: d.blake3,
                }
            })
            .collect();
        inputs.sort_by(|a, b| a.path.cmp(&b.path));
        inputs.dedup_by(|a, b| a.path == b.path);
        routeval_report::Provenance {
            command_line: call.to_string(),
            inputs,
            version: format!("routeval {} (Python package)", env!("CARGO_PKG_VERSION")),
            date: routeval_views::iso8601(routeval_io::provenance::report_epoch_seconds()),
        }
    }

    fn document(&self) -> routeval_report::Document {
        routeval_views::compare::html_document(
            &self.report,
            &self.systems,
            &self.tie_blocks(),
            &self.input_notes,
        )
    }
}

#[pymethods]
impl CompareRender {
    /// The table `routeval compare --format FORMAT` prints (`text`, `md`, `latex`, `csv`).
    fn table(&self, format: &str) -> PyResult<String> {
        use routeval_views::compare::TableFormat;
        let f = match format {
            "text" => TableFormat::Text,
            "md" | "markdown" => TableFormat::Md,
            "latex" => TableFormat::Latex,
            "csv" => TableFormat::Csv,
            other => {
                return Err(err(format!(
                    "unknown table format '{other}' (expected text, md, latex or csv)"
                )));
            }
        };
        routeval_views::compare::render(&self.report, f, &self.tie_blocks()).map_err(err)
    }

    /// The Markdown report (`routeval compare --html`'s document as Markdown), with `call`
    /// as the provenance's command line.
    fn markdown(&self, call: &str) -> String {
        routeval_views::markdown(&self.document(), self.provenance(call))
    }

    /// The self-contained HTML report `routeval compare --html` writes, with `call` as the
    /// provenance's command line.
    fn html(&self, call: &str) -> PyResult<String> {
        routeval_views::html(&self.document(), self.provenance(call)).map_err(err)
    }
}

fn err(e: impl std::fmt::Display) -> PyErr {
    CompareError::new_err(e.to_string())
}

/// The measures `routeval compare` uses when none is given.
const DEFAULT_MEASURES: [&str; 5] = ["map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"];

/// `CompareOptions` from the Python arguments (names as `routeval compare`'s flags).
#[allow(clippy::too_many_arguments)]
fn compare_options(
    test: &str,
    iterations: u64,
    seed: u64,
    correction: Option<&str>,
    alpha: f64,
    ci: Option<f64>,
    bootstrap: u64,
    all_pairs: bool,
    anova: bool,
    risk: Vec<f64>,
) -> PyResult<CompareOptions> {
    let family = FamilyTest::from_name(test);
    let test: PairedTest = if family.is_some() {
        PairedTest::T
    } else {
        test.parse().map_err(|_| {
            err(format!(
                "unknown test '{test}' (expected one of: t, wilcoxon, fisher, bootstrap, tukey, randomized-tukey)"
            ))
        })?
    };
    if let (Some(f), Some(c)) = (family, correction) {
        return Err(err(format!(
            "correction={c:?} does not apply to test={:?}: its p-values already control the family-wise error over every pair",
            f.name()
        )));
    }
    let correction: Correction = correction.unwrap_or("holm").parse().map_err(err)?;
    for &a in &risk {
        routeval_stats::risk::check_alpha(a).map_err(err)?;
    }
    for (name, v) in [("iterations", iterations), ("bootstrap", bootstrap)] {
        if !(1..=MAX_REPLICATES).contains(&v) {
            return Err(err(format!(
                "{name} must be in 1..={MAX_REPLICATES}, got {v}"
            )));
        }
    }
    Ok(CompareOptions {
        test,
        iterations,
        seed,
        correction,
        alpha,
        ci_level: ci,
        ci_replicates: bootstrap,
        all_pairs,
        family,
        anova,
        risk_alphas: risk,
    })
}

/// The most iterations / bootstrap replicates accepted (the CLI's cap, 10^7).
const MAX_REPLICATES: u64 = 10_000_000;

/// Run `f` on its own thread while this thread waits with the GIL released, checking for
/// Python signals every 100 ms, so Ctrl-C interrupts a long comparison (`KeyboardInterrupt`;
/// the abandoned computation finishes on its thread, bounded by the replicate caps).
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    f: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    let (tx, rx) = channel();
    std::thread::Builder::new()
        .name("routeval-compare".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| err(format!("cannot start the comparison thread: {e}")))?;
    // A Mutex makes the receiver shareable with the GIL-free section (Receiver is not Sync).
    let rx = std::sync::Mutex::new(rx);
    loop {
        let got = py.detach(|| match rx.lock() {
            Ok(r) => r.recv_timeout(std::time::Duration::from_millis(100)),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        });
        match got {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(err("the comparison thread stopped without a result"));
            }
        }
    }
}

/// `(report JSON, runs significantly worse than the baseline as (run index, measure index))`.
type ReportOut = (String, Vec<(usize, usize)>);

fn report_out(report: &ComparisonReport) -> PyResult<ReportOut> {
    let json = serde_json::to_string(report).map_err(err)?;
    Ok((json, report.significantly_worse()))
}

/// `routeval compare QRELS BASELINE RUN...` on plain (uncompressed) files: every run scored
/// with trec_eval 10.0's measures on every judged query (`-c`), compared with the first run
/// (the baseline), or every pair. Returns the `--json` text, the runs significantly worse
/// than the baseline (`--fail-if-worse`'s failures) and the CLI's stderr notes.
#[pyfunction]
#[pyo3(signature = (qrels_path, run_paths, measures=None, relevance_level=1, judged_only=false, num_docs_in_coll=0, max_docs_per_topic=None, test="t", iterations=10_000, seed=42, correction=None, alpha=0.05, ci=Some(0.95), bootstrap=1000, all_pairs=false, anova=false, risk=Vec::new(), names=Vec::new(), ties=false))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn compare_trec_files(
    py: Python<'_>,
    qrels_path: PathBuf,
    run_paths: Vec<PathBuf>,
    measures: Option<Vec<String>>,
    relevance_level: i64,
    judged_only: bool,
    num_docs_in_coll: i64,
    max_docs_per_topic: Option<u64>,
    test: &str,
    iterations: u64,
    seed: u64,
    correction: Option<&str>,
    alpha: f64,
    ci: Option<f64>,
    bootstrap: u64,
    all_pairs: bool,
    anova: bool,
    risk: Vec<f64>,
    names: Vec<(String, String)>,
    ties: bool,
) -> PyResult<(String, Vec<(usize, usize)>, Vec<String>, CompareRender)> {
    let inputs: Vec<PathBuf> = std::iter::once(qrels_path.clone())
        .chain(run_paths.iter().cloned())
        .collect();
    let measure_args: Vec<String> = match measures {
        Some(m) if !m.is_empty() => m,
        _ => DEFAULT_MEASURES.iter().map(|s| s.to_string()).collect(),
    };
    let measures = MeasureSet::parse(&measure_args).map_err(err)?;
    let values = trec::compared::compared_values(&measures).map_err(err)?;
    let copts = compare_options(
        test, iterations, seed, correction, alpha, ci, bootstrap, all_pairs, anova, risk,
    )?;
    let opts = EvalOptions {
        measures,
        relevance_level,
        complete: true,
        judged_only,
        max_docs_per_topic: max_docs_per_topic
            .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX)),
        num_docs_in_coll,
        per_query: true,
        ties,
        ..EvalOptions::default()
    };
    if run_paths.len() < 2 {
        return Err(err(
            "compare needs a baseline run and at least one other run",
        ));
    }
    let result = interruptible(
        py,
        move || -> Result<
            (
                ComparisonReport,
                Vec<String>,
                Vec<serde_json::Value>,
                Vec<SystemScores>,
            ),
            String,
        > {
            let read = |p: &Path| {
                std::fs::read(p).map_err(|e| format!("{}: cannot read: {e}", p.display()))
            };
            let qrels_name = qrels_path.display().to_string();
            let qrels =
                Qrels::from_bytes(&read(&qrels_path)?, &qrels_name).map_err(|e| e.to_string())?;
            let mut systems: Vec<SystemScores> = Vec::with_capacity(run_paths.len());
            let mut tags: Vec<String> = Vec::with_capacity(run_paths.len());
            let mut notes = Vec::new();
            let mut tie_views = Vec::new();
            for path in &run_paths {
                let name = path.display().to_string();
                let ev = trec::evaluate_bytes(&qrels, &read(path)?, &name, &opts, &qrels_name)
                    .map_err(|e| e.to_string())?;
                notes.extend(trec::compared::run_only_note(&name, &ev));
                if ties {
                    // The same object as `routeval compare --ties --json`.
                    tie_views.push(
                        serde_json::to_value(trec::format::TiesView::new(&ev, false))
                            .map_err(|e| e.to_string())?,
                    );
                }
                trec::compared::check_overlap(&name, &ev, qrels.len(), &qrels_name)?;
                notes.extend(trec::compared::missing_results_note(
                    &name,
                    &ev,
                    qrels.len(),
                ));
                let path = path.display().to_string();
                systems.push(trec::compared::system_scores(
                    &ev,
                    &values,
                    qrels.len(),
                    &name,
                    &path,
                )?);
                tags.push(String::from_utf8_lossy(&ev.runid).into_owned());
            }
            // Names as the CLI gives them: run tags, the file stem where tags repeat or are empty.
            trec::compared::name_systems(&mut systems, &tags);
            trec::compared::rename_systems(&mut systems, &names)?;
            let names: Vec<String> = values.iter().map(|v| v.name.clone()).collect();
            let report = compare_systems(&names, &systems, &copts).map_err(|e| e.to_string())?;
            Ok((report, notes, tie_views, systems))
        },
    )?;
    let (report, notes, tie_views, systems) = result.map_err(err)?;
    let (json, worse) = report_out(&report)?;
    let json = if ties {
        let mut v: serde_json::Value = serde_json::from_str(&json).map_err(err)?;
        if let Some(runs) = v.get_mut("runs").and_then(|r| r.as_array_mut()) {
            for (run, t) in runs.iter_mut().zip(&tie_views) {
                if let Some(o) = run.as_object_mut() {
                    o.insert("ties".into(), t.clone());
                }
            }
        }
        v.to_string()
    } else {
        json
    };
    let render = CompareRender {
        report,
        systems,
        input_notes: notes.clone(),
        ties: tie_views,
        inputs,
    };
    Ok((json, worse, notes, render))
}

/// `routeval_stats::compare_systems` on per-unit scores computed elsewhere: `systems` is
/// `[(name, path, scores, means)]`, `scores[m][u]` the value of measure `m` on unit `u` (the
/// same units, in the same order, for every system), `means` the headline value per measure
/// or `None` for the arithmetic mean. The first system is the baseline.
#[pyfunction]
#[pyo3(signature = (measures, systems, test="t", iterations=10_000, seed=42, correction=None, alpha=0.05, ci=Some(0.95), bootstrap=1000, all_pairs=false, anova=false, risk=Vec::new()))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn compare_scores(
    py: Python<'_>,
    measures: Vec<String>,
    systems: Vec<(String, String, Vec<Vec<f64>>, Option<Vec<f64>>)>,
    test: &str,
    iterations: u64,
    seed: u64,
    correction: Option<&str>,
    alpha: f64,
    ci: Option<f64>,
    bootstrap: u64,
    all_pairs: bool,
    anova: bool,
    risk: Vec<f64>,
) -> PyResult<(String, Vec<(usize, usize)>, CompareRender)> {
    let copts = compare_options(
        test, iterations, seed, correction, alpha, ci, bootstrap, all_pairs, anova, risk,
    )?;
    let systems: Vec<SystemScores> = systems
        .into_iter()
        .map(|(name, path, scores, means)| SystemScores {
            name,
            path,
            scores,
            means,
        })
        .collect();
    for s in &systems {
        for (m, col) in s.scores.iter().enumerate() {
            if let Some(u) = col.iter().position(|v| v.is_nan()) {
                return Err(err(format!(
                    "system '{}', measure {}: unit {u} is NaN",
                    s.name,
                    measures.get(m).map_or("?", String::as_str)
                )));
            }
        }
    }
    let (report, systems) = interruptible(py, move || {
        compare_systems(&measures, &systems, &copts).map(|r| (r, systems))
    })?
    .map_err(err)?;
    let (json, worse) = report_out(&report)?;
    let render = CompareRender {
        report,
        systems,
        input_notes: Vec::new(),
        ties: Vec::new(),
        inputs: Vec::new(),
    };
    Ok((json, worse, render))
}
