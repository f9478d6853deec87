//! `routeval gqr`: GQR-Bench (guarded query routing) export and scoring.
//!
//! * `routeval gqr export --split SPLIT [--version v1|v2] [-o FILE.jsonl]` writes one
//!   `{"id", "text", "label", "domain", "dataset"}` per line (ids `<split>/<dataset>/<index>`).
//! * `routeval gqr score --predictions FILE.jsonl | --cmd "ROUTER" [--unseen] [--json]` scores
//!   a router: ID accuracy, per-OOD-set accuracy, mean OOD accuracy and the GQR score (or, with
//!   `--unseen`, the GQR-unseen score). Missing sets are listed and the score is then named a
//!   *partial* score.
//!
//! The data comes from a build (`routeval data fetch gqr`, default `<gqr cache>/build`,
//! `--build-dir DIR`) or is built in memory from a local mirror (`--from DIR`).

use crate::common::{CmdResult, EXIT_OK, Failure, display_name, emit, open_input};
use routeval_bench_data::gqr::build::ExportRow;
use routeval_bench_data::gqr::data::GqrData;
use routeval_bench_data::gqr::store::build_dir;
use routeval_bench_data::gqr::{OOD_SETS, UNSEEN_SETS};
use routeval_clients::command::CommandRouter;
use routeval_routing_scores::gqr::run::{
    self, MatchedLabels, Resampling, Row, ScoreInput, ScoreRun,
};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Instant;

mod sweep;

/// `routeval gqr`.
#[derive(Debug, clap::Args)]
pub(crate) struct GqrArgs {
    #[command(subcommand)]
    command: GqrCommand,
}

#[derive(Debug, clap::Subcommand)]
enum GqrCommand {
    /// Write a split as JSONL for a router: {"id", "text", "label", "domain", "dataset"}.
    Export(ExportArgs),
    /// Score a router's predictions (a JSONL file or a persistent command).
    Score(ScoreArgs),
    /// Sweep the out-of-domain threshold of a router emitting probabilities (per threshold
    /// the keys of `gqr score --json`; optional calibration of the threshold).
    Sweep(Box<sweep::SweepArgs>),
}

#[derive(Debug, clap::Args)]
struct DataArgs {
    /// A GQR build directory (default: `<gqr cache>/build`, where `routeval data fetch gqr`
    /// writes it: `$GQR_CACHE_DIR`, else `$ROUTEVAL_CACHE_DIR/gqr`, else `~/.cache/gqr`).
    #[arg(long, value_name = "DIR", conflicts_with = "from")]
    build_dir: Option<PathBuf>,
    /// Build in memory from a local mirror of the sources instead (as `routeval data fetch gqr
    /// --from DIR`).
    #[arg(long, value_name = "DIR")]
    from: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
enum Split {
    /// dev_train then dev_eval (1,000 rows each).
    Dev,
    /// The training split (28,800 rows in v1).
    Train,
    /// The eval split (7,200 rows in v1).
    Eval,
    /// The ID test set (9,000 rows).
    IdTest,
    /// The seven OOD test sets.
    OodTest,
    /// The nine GQR-unseen ID sets.
    UnseenId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Version {
    /// Three ID domains.
    V1,
    /// v1 plus the background class (label 3) in train and eval.
    V2,
}

#[derive(Debug, clap::Args)]
#[command(disable_version_flag = true)]
struct ExportArgs {
    /// Which split.
    #[arg(long, value_enum, required_unless_present = "legacy_version")]
    split: Option<Split>,
    /// Training-data version (test sets are the same in both).
    #[arg(long, value_enum, value_name = "VERSION")]
    data_version: Option<Version>,
    /// `--version` alone prints the binary version (as on every subcommand); `--version v1|v2`
    /// is the old spelling of `--data-version` (deprecated: a note on stderr says so).
    #[arg(long = "version", num_args = 0..=1, value_name = "VERSION", hide = true)]
    legacy_version: Option<Option<String>>,
    /// Write to PATH instead of stdout.
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Also print a JSON summary of what was exported on stdout ({"split", "data_version",
    /// "rows", "files", "output", "data"}); needs -o/--output (stdout then carries the summary,
    /// not the rows).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    data: DataArgs,
}

#[derive(Debug, clap::Args)]
struct ScoreArgs {
    /// Predictions, one {"id", "label"} per line (`-` = stdin).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "cmd",
        conflicts_with = "cmd"
    )]
    predictions: Option<PathBuf>,
    /// A router command (run with `sh -c`), kept running: one JSON string per line in, one
    /// integer label per line out.
    #[arg(long, value_name = "ROUTER")]
    cmd: Option<String>,
    /// With `--cmd`: seconds to wait for each answer before giving up (the router's process
    /// group is then killed and the run fails, exit 2).
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = crate::numarg::timeout_secs, requires = "cmd", allow_hyphen_values = true)]
    cmd_timeout: f64,
    /// With `--cmd`: also write the router's answers to PATH, one {"id", "label"} per line
    /// (the `--predictions` format, so the run can be re-scored or compared later).
    #[arg(long, value_name = "PATH")]
    save_predictions: Option<PathBuf>,
    /// Write one JSON line per scored text to PATH: {"id", "set", "label", "prediction",
    /// "correct", "latency_ms"} (`latency_ms` null with `--predictions`).
    #[arg(long, value_name = "PATH")]
    rows: Option<PathBuf>,
    /// A baseline router's predictions on the same rows (the `--predictions` format, `-` =
    /// stdin): adds a paired comparison — per set the accuracy delta with an exact McNemar
    /// test (Holm-adjusted over the sets), and the ID/OOD accuracy and GQR-score deltas with
    /// paired bootstrap CIs (`--ci` level, default 0.95; `--bootstrap`, `--seed`).
    #[arg(long, value_name = "PREDICTIONS")]
    baseline: Option<PathBuf>,
    /// Score GQR-unseen (the nine unseen ID sets with the OOD sets) instead of GQR.
    #[arg(long)]
    unseen: bool,
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
    #[command(flatten)]
    ci: crate::ci::CiArgs,
    /// Seed of the bootstrap (--ci, --baseline): replicate r draws from its own stream of
    /// (seed, r), so intervals do not depend on the number of threads [default: 42]. Refused
    /// without --ci or --baseline.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    #[command(flatten)]
    gates: crate::gate::GateArgs,
}

/// `routeval gqr export|score|sweep`: dispatch to the subcommand.
pub(crate) fn run(args: GqrArgs) -> CmdResult {
    match args.command {
        GqrCommand::Export(a) => export(a),
        GqrCommand::Score(a) => score(a),
        GqrCommand::Sweep(a) => sweep::sweep(*a),
    }
}

/// The splits of a build, read from disk or built from a mirror
/// (`routeval_bench_data::gqr::data::GqrData`, shared with the Python package).
struct Data(GqrData);

impl std::ops::Deref for Data {
    type Target = GqrData;
    fn deref(&self) -> &GqrData {
        &self.0
    }
}

impl Data {
    fn load(a: &DataArgs, wanted: &[&str]) -> Result<Data, Failure> {
        if let Some(dir) = &a.from {
            match std::fs::metadata(dir) {
                Ok(m) if m.is_dir() => {}
                Ok(m) => {
                    return Err(Failure::bad_input(format!(
                        "--from {}: is {}, not a directory (give the mirror of the sources)",
                        dir.display(),
                        crate::common::file_kind(&m).unwrap_or("a file")
                    )));
                }
                Err(e) => {
                    let what = if e.kind() == std::io::ErrorKind::NotFound {
                        "no such directory".to_string()
                    } else {
                        format!("cannot read: {e}")
                    };
                    return Err(Failure::bad_input(format!(
                        "--from {}: {what} (give the mirror of the sources, as for `cargo xtask build-data gqr --from DIR`)",
                        dir.display()
                    )));
                }
            }
            return Ok(Data(GqrData::from_mirror(dir).map_err(Failure::bad_input)?));
        }
        let dir = match &a.build_dir {
            Some(d) => d.clone(),
            None => build_dir(
                &routeval_bench_data::cache::CacheDirs::from_process()
                    .map_err(Failure::bad_input)?
                    .gqr
                    .path,
            ),
        };
        let data = GqrData::from_build(&dir, wanted).map_err(Failure::bad_input)?;
        for p in &data.inputs {
            crate::output::note_input(p);
        }
        Ok(Data(data))
    }

    fn split(&self, name: &str) -> Result<&Vec<ExportRow>, Failure> {
        self.0.split(name).map_err(Failure::bad_input)
    }
}

/// `--data-version`, or the deprecated `--version VERSION` (a stderr note); `None` when
/// `--version` alone asked for the binary's version (printed here).
fn data_version(a: &ExportArgs) -> Result<Option<Version>, Failure> {
    let v = match (&a.legacy_version, a.data_version) {
        (Some(None), _) => {
            // `--version` with no value: the universal flag.
            println!("routeval-gqr-export {}", env!("CARGO_PKG_VERSION"));
            return Ok(None);
        }
        (Some(Some(_)), Some(_)) => {
            return Err(Failure::bad_input(
                "give the data version once: --data-version (--version VERSION is its old spelling)",
            ));
        }
        (Some(Some(v)), None) => {
            let parsed = <Version as clap::ValueEnum>::from_str(v, false).map_err(|_| {
                Failure::bad_input(format!(
                    "invalid value '{v}' for '--data-version <VERSION>' [possible values: v1, v2]"
                ))
            })?;
            eprintln!(
                "warning: `gqr export --version {v}` is deprecated; use `--data-version {v}` \
                 (`--version` alone prints routeval's version)"
            );
            parsed
        }
        (None, v) => v.unwrap_or(Version::V1),
    };
    Ok(Some(v))
}

/// The OOD and unseen splits are built from whatever sets are present: one stderr warning
/// per exported split naming the sets that are not.
fn warn_absent_sets(data: &Data, names: &[&str]) {
    for (split, sets, what) in [
        ("ood_test", OOD_SETS.to_vec(), "OOD sets"),
        (
            "unseen_id",
            UNSEEN_SETS.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            "GQR-unseen sets",
        ),
    ] {
        if !names.contains(&split) {
            continue;
        }
        let rows = data.splits.get(split);
        let absent: Vec<&str> = sets
            .iter()
            .copied()
            .filter(|s| !rows.is_some_and(|r| r.iter().any(|x| x.dataset == *s)))
            .collect();
        if !absent.is_empty() {
            eprintln!(
                "gqr export: warning: {} of {} {what} missing: {}",
                absent.len(),
                sets.len(),
                absent
                    .iter()
                    .map(|s| s.trim_end())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}

fn export(a: ExportArgs) -> CmdResult {
    let Some(version) = data_version(&a)? else {
        return Ok(EXIT_OK);
    };
    let Some(split) = a.split else {
        return Err(Failure::bad_input(
            "the following required arguments were not provided: --split <SPLIT>",
        ));
    };
    if a.json && a.output.as_ref().is_none_or(|p| p.as_os_str() == "-") {
        return Err(Failure::bad_input(
            "--json prints a summary of the export on stdout, so the rows need -o/--output PATH",
        ));
    }
    let names: Vec<&str> = match (split, version) {
        (Split::Dev, Version::V1) => vec!["dev_train", "dev_eval"],
        (Split::Dev, Version::V2) => {
            return Err(Failure::bad_input(
                "--split dev has no v2 form (upstream's dev sets are v1)",
            ));
        }
        (Split::Train, Version::V1) => vec!["train"],
        (Split::Train, Version::V2) => vec!["train_v2"],
        (Split::Eval, Version::V1) => vec!["eval"],
        (Split::Eval, Version::V2) => vec!["eval_v2"],
        (Split::IdTest, _) => vec!["id_test"],
        (Split::OodTest, _) => vec!["ood_test"],
        (Split::UnseenId, _) => vec!["unseen_id"],
    };
    let data = Data::load(&a.data, &names)?;
    let mut out = Vec::new();
    let mut n = 0usize;
    for name in &names {
        for r in data.split(name)? {
            out.extend_from_slice(serde_json::to_string(r).unwrap_or_default().as_bytes());
            out.push(b'\n');
            n += 1;
        }
    }
    emit(a.output.as_ref(), &out)?;
    eprintln!("gqr export: {n} rows from {}", data.origin);
    warn_absent_sets(&data, &names);
    if a.json {
        let summary = json!({
            "split": <Split as clap::ValueEnum>::to_possible_value(&split)
                .map(|p| p.get_name().to_string()),
            "data_version": <Version as clap::ValueEnum>::to_possible_value(&version)
                .map(|p| p.get_name().to_string()),
            "files": names,
            "rows": n,
            "output": a.output.as_ref().map(|p| p.display().to_string()),
            "data": data.origin,
        });
        emit(None, format!("{summary}\n").as_bytes())?;
    }
    Ok(EXIT_OK)
}

/// The labels of `rows` from a predictions file (`--predictions`, `--baseline`,
/// `routeval_routing_scores::gqr::run`), with the line each came from. Every row needs a
/// prediction (else exit 2 naming the first missing ids); repeated ids and ids outside the
/// scored rows are one stderr warning each (count and first).
fn labels_from_file(p: &std::path::Path, rows: &[Row<'_>]) -> Result<MatchedLabels, Failure> {
    let name = display_name(p);
    let preds = run::read_predictions(open_input(p)?)
        .map_err(|e| Failure::bad_input(format!("{name}:{}: {e}", e.line())))?;
    if let Some(r) = &preds.repeated {
        eprintln!("warning: {name}: {r}");
    }
    let m = preds
        .labels_for(rows.iter())
        .map_err(|e| Failure::bad_input(format!("{name}: {e}")))?;
    if let Some(u) = &m.unused {
        eprintln!("warning: {name}: {u}");
    }
    Ok(m)
}

/// The input of `path`'s check that it is none of our inputs: `--rows`/`--save-predictions`
/// never overwrite `--predictions`.
fn not_an_input(path: &std::path::Path, inputs: &[&std::path::Path]) -> Result<(), Failure> {
    let same = |a: &std::path::Path, b: &std::path::Path| match (a.canonicalize(), b.canonicalize())
    {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    };
    if inputs.iter().any(|i| same(path, i)) {
        return Err(Failure::bad_input(format!(
            "{}: refusing to overwrite an input file",
            path.display()
        )));
    }
    Ok(())
}

/// Write `bytes` to `path` as every output is written ([`crate::output::write_file`]:
/// atomically, never over an input, a device or FIFO written in place, the temporary file
/// removed on a signal); errors name the file.
fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<(), Failure> {
    crate::output::write_file(path, bytes)
}

impl ScoreArgs {
    /// `--seed`, else the default seed.
    fn seed(&self) -> u64 {
        self.seed.unwrap_or(crate::ci::DEFAULT_SEED)
    }
}

fn score(a: ScoreArgs) -> CmdResult {
    let inputs = check_score_args(&a)?;
    let (id_split, expected_id): (&str, Vec<&str>) = if a.unseen {
        ("unseen_id", UNSEEN_SETS.iter().map(|(n, _)| *n).collect())
    } else {
        ("id_test", Vec::new())
    };
    let data = Data::load(&a.data, &[id_split, "ood_test"])?;
    fn view(rows: Option<&Vec<ExportRow>>) -> Vec<Row<'_>> {
        rows.into_iter()
            .flatten()
            .map(|r| Row {
                id: &r.id,
                text: &r.text,
                set: &r.dataset,
                label: r.label as i64,
            })
            .collect()
    }
    let id_rows = view(data.splits.get(id_split));
    let ood_rows = view(data.splits.get("ood_test"));
    if id_rows.is_empty() && ood_rows.is_empty() {
        return Err(data
            .split(id_split)
            .err()
            .unwrap_or_else(|| Failure::bad_input("no rows to score")));
    }
    let missing = run::missing_sets(a.unseen, &expected_id, &OOD_SETS, &id_rows, &ood_rows);
    let all: Vec<Row<'_>> = id_rows.iter().chain(&ood_rows).copied().collect();
    let (labels, latency) = router_labels(&a, &all)?;
    let preds = run::apply_type_rules(&labels.labels, a.unseen).map_err(|(i, e)| {
        let ln = labels.lines.get(i).copied().unwrap_or(0);
        let place = match (&a.predictions, &a.cmd) {
            (Some(p), _) => format!("{}:{ln}", display_name(p)),
            (None, cmd) => format!(
                "router {:?}: output line {ln}",
                cmd.as_deref().unwrap_or_default()
            ),
        };
        Failure::bad_input(format!("{place}: {e} (prediction for {})", all[i].id))
    })?;
    if let Some(path) = &a.rows {
        write_file(
            path,
            run::rows_jsonl(all.iter(), &preds, &latency).as_bytes(),
        )?;
    }
    let baseline = baseline_preds(&a, &all)?;
    let scored = run::score(ScoreInput {
        id_rows: &id_rows,
        ood_rows: &ood_rows,
        preds: &preds,
        unseen: a.unseen,
        missing: &missing,
        reasons: &data.missing,
        latency_ms: latency,
        data: data.origin.clone(),
        resampling: Resampling {
            level: a.ci.ci_level,
            replicates: a.ci.replicates(),
            seed: a.seed(),
        },
        baseline: baseline.as_ref().map(|(n, p)| (n.clone(), p.as_slice())),
    })
    .map_err(|e| Failure::bad_input(format!("--baseline: {e}")))?;
    render_score(&a, &scored, &inputs)?;
    a.gates.apply(&routeval_core::gate::Annotated {
        inner: scored.gate_metrics(),
        notes: scored.gate_notes(),
    })
}

/// `--baseline`: the other router's name and labels on the same rows, under the same type
/// rules.
fn baseline_preds(a: &ScoreArgs, all: &[Row<'_>]) -> Result<Option<(String, Vec<i64>)>, Failure> {
    let Some(bp) = &a.baseline else {
        return Ok(None);
    };
    let b = labels_from_file(bp, all)?;
    let bpreds = run::apply_type_rules(&b.labels, a.unseen).map_err(|(i, e)| {
        Failure::bad_input(format!(
            "{}:{}: {e} (prediction for {})",
            display_name(bp),
            b.lines[i],
            all[i].id
        ))
    })?;
    Ok(Some((display_name(bp), bpreds)))
}

/// The flag checks of `gqr score` before any data is read; returns the input files.
fn check_score_args(a: &ScoreArgs) -> Result<Vec<&std::path::Path>, Failure> {
    a.ci.check_used(
        a.seed.is_some(),
        a.baseline.is_some(),
        Some("--baseline FILE"),
    )?;
    let inputs: Vec<&std::path::Path> = a
        .predictions
        .iter()
        .chain(&a.baseline)
        .map(PathBuf::as_path)
        .collect();
    let stdin = Some(std::path::Path::new("-"));
    if a.predictions.as_deref() == stdin && a.baseline.as_deref() == stdin {
        return Err(Failure::bad_input(
            "--predictions and --baseline cannot both read stdin",
        ));
    }
    if a.save_predictions.is_some() && a.cmd.is_none() {
        return Err(Failure::bad_input(
            "--save-predictions saves the answers of --cmd ROUTER (with --predictions they are already in a file)",
        ));
    }
    for out in [&a.rows, &a.save_predictions, &a.html.html]
        .into_iter()
        .flatten()
    {
        not_an_input(out, &inputs)?;
    }
    crate::report::check_outputs(
        &a.html,
        &[
            ("-o", a.output.as_deref()),
            ("--rows", a.rows.as_deref()),
            ("--save-predictions", a.save_predictions.as_deref()),
        ],
    )?;
    a.gates.validate(
        &if a.unseen {
            ["unseen_id_accuracy", "ood_accuracy", "gqr_unseen_score"]
        } else {
            ["id_accuracy", "ood_accuracy", "gqr_score"]
        }
        .map(String::from),
    )?;
    Ok(inputs)
}

/// The labels of `rows` from `--predictions FILE` or from `--cmd ROUTER` (timed per text,
/// ms; `--save-predictions` written), with the line each came from.
fn router_labels(a: &ScoreArgs, rows: &[Row<'_>]) -> Result<(MatchedLabels, Vec<f64>), Failure> {
    match (&a.predictions, &a.cmd) {
        (Some(p), _) => Ok((labels_from_file(p, rows)?, Vec::new())),
        (None, Some(cmd)) => {
            let mut router = CommandRouter::spawn(cmd, crate::numarg::duration(a.cmd_timeout))
                .map_err(|e| Failure::bad_input(e.0))?;
            let bar = crate::progress::bar(
                rows.len() as u64,
                "{spinner} routing {pos}/{len} texts [{bar:30}] {per_sec} eta {eta}",
            );
            let mut out = MatchedLabels::default();
            let mut latency = Vec::with_capacity(rows.len());
            for r in rows {
                let t0 = Instant::now();
                let l = router
                    .route(r.text, r.id)
                    .map_err(|e| Failure::bad_input(e.0))?;
                latency.push(t0.elapsed().as_secs_f64() * 1000.0);
                out.labels.push(l);
                out.lines.push(router.line());
                bar.inc(1);
            }
            bar.finish_and_clear();
            router.finish().map_err(|e| Failure::bad_input(e.0))?;
            if let Some(path) = &a.save_predictions {
                write_file(
                    path,
                    run::predictions_jsonl(rows.iter(), &out.labels).as_bytes(),
                )?;
            }
            Ok((out, latency))
        }
        (None, None) => Err(Failure::bad_input(
            "give --predictions FILE or --cmd ROUTER",
        )),
    }
}

/// Print (and write) the faces of one run: the table, `--json`, `--format md`, `--html`
/// (`routeval_views::gqr::{run_text, run_json, run_document}`).
fn render_score(
    a: &ScoreArgs,
    scored: &ScoreRun,
    inputs: &[&std::path::Path],
) -> Result<(), Failure> {
    let md = a.format == crate::report::TextFormat::Md;
    let doc = (md || a.html.html.is_some()).then(|| {
        let source = match (&a.predictions, &a.cmd) {
            (Some(p), _) => display_name(p),
            (None, Some(c)) => format!("cmd: {c}"),
            _ => String::new(),
        };
        routeval_views::gqr::run_document(scored, &source)
    });
    let stdin_used = crate::report::uses_stdin(inputs.iter().copied());
    if let Some(doc) = &doc {
        crate::report::write_html(&a.html, doc, stdin_used)?;
    }
    let out = if a.json {
        let json = Value::Object(routeval_views::gqr::run_json(scored));
        let mut s = serde_json::to_string_pretty(&json).unwrap_or_default();
        s.push('\n');
        s
    } else if let (true, Some(doc)) = (md, &doc) {
        crate::report::markdown(doc, stdin_used)
    } else {
        routeval_views::gqr::run_text(scored)
    };
    emit(a.output.as_ref(), out.as_bytes())
}
