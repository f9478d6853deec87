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
use routeval_core::gate::NamedMetrics;
use routeval_io::child::LineChild;
use routeval_routing_scores::gqr::report::{
    LatencySummary, ScoreReport, Scored, set_display_name as set_name,
};
use routeval_routing_scores::gqr::{AccuracyStrata, GqrAccumulator, RawLabel, UnseenAccumulator};
use routeval_views::gqr::percent as pct;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::BufRead;
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

fn export(a: ExportArgs) -> CmdResult {
    let version = match (&a.legacy_version, a.data_version) {
        (Some(None), _) => {
            // `--version` with no value: the universal flag.
            println!("routeval-gqr-export {}", env!("CARGO_PKG_VERSION"));
            return Ok(EXIT_OK);
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
    // The OOD and unseen splits are built from whatever sets are present: say which are not.
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

/// Per-text router latencies in milliseconds.
#[derive(Debug, Default)]
struct Latency(Vec<f64>);

impl Latency {
    /// numpy's default ('linear') percentile, `q` in 0..=100.
    fn percentile(&self, q: f64) -> Option<f64> {
        if self.0.is_empty() {
            return None;
        }
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        let pos = q / 100.0 * (v.len() - 1) as f64;
        let lo = pos.floor() as usize;
        let hi = pos.ceil() as usize;
        Some(v[lo] + (v[hi] - v[lo]) * (pos - lo as f64))
    }
}

/// A persistent router process ([`LineChild`]): one JSON string per line in, one label per
/// line out, each answer within `--cmd-timeout`.
struct Router {
    child: Option<LineChild>,
    cmd: String,
    line: u64,
}

impl Router {
    fn spawn(cmd: &str, timeout: f64) -> Result<Router, Failure> {
        let child = LineChild::spawn(cmd, crate::numarg::duration(timeout))
            .map_err(|e| Failure::bad_input(format!("--cmd {cmd:?}: cannot start: {e}")))?;
        Ok(Router {
            child: Some(child),
            cmd: cmd.to_string(),
            line: 0,
        })
    }

    /// Route the text of row `id`.
    fn route(&mut self, text: &str, id: &str) -> Result<RawLabel, Failure> {
        self.line += 1;
        let fail = |what: String| {
            Failure::bad_input(format!(
                "router {:?}: output line {} (row {id}): {what}",
                self.cmd, self.line
            ))
        };
        let msg = serde_json::to_string(text).unwrap_or_default();
        let Some(child) = self.child.as_mut() else {
            return Err(fail("the router was already closed".into()));
        };
        let reply = child.ask(&msg).map_err(|e| fail(e.to_string()))?;
        let t = reply.trim();
        match serde_json::from_str::<Value>(t)
            .ok()
            .and_then(|v| RawLabel::from_json(&v))
        {
            Some(l @ (RawLabel::Int(_) | RawLabel::Float(_))) => Ok(l),
            _ => Err(fail(format!(
                "expected an integer label, got {:?}",
                routeval_io::child::clip(t)
            ))),
        }
    }

    /// Close the router's stdin and check it wrote nothing beyond one line per input; the
    /// router's process group is killed afterwards.
    fn finish(&mut self) -> Result<(), Failure> {
        let Some(child) = self.child.take() else {
            return Ok(());
        };
        let extra = child.finish(std::time::Duration::from_secs(5));
        if extra > 0 {
            return Err(Failure::bad_input(format!(
                "router {:?}: wrote {extra} more non-empty line(s) than the {} inputs: desynchronised (exactly one output line per input line is required)",
                self.cmd, self.line
            )));
        }
        Ok(())
    }
}

fn read_predictions(path: &std::path::Path) -> Result<HashMap<String, (RawLabel, u64)>, Failure> {
    let name = display_name(path);
    let reader = open_input(path)?;
    let mut preds = HashMap::new();
    // Repeated ids: how many, and the first (id, line); the last line of an id wins.
    let mut repeated: (usize, Option<(String, u64)>) = (0, None);
    for (i, line) in reader.split(b'\n').enumerate() {
        let ln = i as u64 + 1;
        let line =
            line.map_err(|e| Failure::bad_input(format!("{name}:{ln}: cannot read: {e}")))?;
        let line = String::from_utf8(line).map_err(|e| {
            Failure::bad_input(format!(
                "{name}:{ln}: invalid UTF-8 at byte {} of the line",
                e.utf8_error().valid_up_to() + 1
            ))
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line)
            .map_err(|e| Failure::bad_input(format!("{name}:{ln}: bad JSON: {e}")))?;
        let id = v.get("id").and_then(Value::as_str).ok_or_else(|| {
            Failure::bad_input(format!("{name}:{ln}: missing string field \"id\""))
        })?;
        let label = v
            .get("label")
            .and_then(RawLabel::from_json)
            .ok_or_else(|| {
                Failure::bad_input(format!(
                    "{name}:{ln}: missing or non-numeric field \"label\""
                ))
            })?;
        if preds.insert(id.to_string(), (label, ln)).is_some() {
            repeated.0 += 1;
            repeated.1.get_or_insert((id.to_string(), ln));
        }
    }
    if let (n, Some((id, ln))) = repeated {
        eprintln!(
            "warning: {name}: {n} repeated id(s), first {id:?} at line {ln}; the last prediction of each id is used"
        );
    }
    Ok(preds)
}

/// The labels of `rows` from a predictions file (`--predictions`, `--baseline`), with the line
/// each came from. Every row needs a prediction (else exit 2 naming the first missing ids);
/// ids outside the scored rows are ignored with one stderr warning (count and first).
fn labels_from_file<'a>(
    p: &std::path::Path,
    rows: impl Iterator<Item = &'a ExportRow>,
    total: usize,
) -> Result<(Vec<RawLabel>, Vec<u64>), Failure> {
    let mut preds = read_predictions(p)?;
    let mut labels = Vec::with_capacity(total);
    let mut lines = Vec::with_capacity(total);
    let mut absent = Vec::new();
    for r in rows {
        match preds.remove(&r.id) {
            Some((l, ln)) => {
                labels.push(l);
                lines.push(ln);
            }
            None => absent.push(r.id.clone()),
        }
    }
    if !absent.is_empty() {
        return Err(Failure::bad_input(format!(
            "{}: no prediction for {} of {total} rows (first: {})",
            display_name(p),
            absent.len(),
            absent
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if !preds.is_empty() {
        let mut extra: Vec<(&String, u64)> = preds.iter().map(|(k, v)| (k, v.1)).collect();
        extra.sort_by_key(|x| x.1);
        eprintln!(
            "warning: {}: {} predictions have ids not in the scored sets and were ignored (first: line {} {:?})",
            display_name(p),
            extra.len(),
            extra[0].1,
            extra[0].0
        );
    }
    Ok((labels, lines))
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

/// `--save-predictions`: one `{"id", "label"}` per line (the `--predictions` format), the
/// labels exactly as the router answered them; written atomically.
fn save_predictions<'a>(
    path: &std::path::Path,
    rows: impl Iterator<Item = &'a ExportRow>,
    labels: &[RawLabel],
) -> Result<(), Failure> {
    let mut out = String::new();
    for (r, l) in rows.zip(labels) {
        let label = match l {
            RawLabel::Int(i) => json!(i),
            RawLabel::Float(x) => json!(x),
            RawLabel::Str(s) => json!(s),
        };
        out.push_str(&json!({"id": r.id, "label": label}).to_string());
        out.push('\n');
    }
    write_file(path, out.as_bytes())
}

/// Write `bytes` to `path` atomically (temporary file + rename); errors name the file.
fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<(), Failure> {
    routeval_bench_data::download::write_atomic(path, bytes)
        .map_err(|e| Failure::bad_input(format!("{}: cannot write: {e}", path.display())))
}

/// `--rows`: one JSON line per scored text, in scoring order (ID rows, then OOD rows):
/// `{"id", "set", "label", "prediction", "correct", "latency_ms"}`; `prediction` is the label
/// under the path's type rules, `latency_ms` null without `--cmd`.
fn write_rows<'a>(
    path: &std::path::Path,
    rows: impl Iterator<Item = &'a ExportRow>,
    preds: &[i64],
    latency_ms: &[f64],
) -> Result<(), Failure> {
    let mut out = String::new();
    for (i, (r, p)) in rows.zip(preds).enumerate() {
        let lat = latency_ms.get(i).map_or(Value::Null, |x| f(*x));
        let line = json!({
            "id": r.id,
            "set": r.dataset,
            "label": r.label,
            "prediction": p,
            "correct": *p == r.label as i64,
            "latency_ms": lat,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    write_file(path, out.as_bytes())
}

fn f(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

impl ScoreArgs {
    /// `--seed`, else the default seed.
    fn seed(&self) -> u64 {
        self.seed.unwrap_or(crate::ci::DEFAULT_SEED)
    }
}

fn score(a: ScoreArgs) -> CmdResult {
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
    let (id_split, expected_id): (&str, Vec<String>) = if a.unseen {
        (
            "unseen_id",
            UNSEEN_SETS.iter().map(|(n, _)| n.to_string()).collect(),
        )
    } else {
        ("id_test", Vec::new())
    };
    let data = Data::load(&a.data, &[id_split, "ood_test"])?;
    let empty = Vec::new();
    let id_rows = data.splits.get(id_split).unwrap_or(&empty);
    let ood_rows = data.splits.get("ood_test").unwrap_or(&empty);
    if id_rows.is_empty() && ood_rows.is_empty() {
        return Err(data
            .split(id_split)
            .err()
            .unwrap_or_else(|| Failure::bad_input("no rows to score")));
    }
    // Which sets are missing.
    let mut missing: Vec<String> = Vec::new();
    if a.unseen {
        for s in &expected_id {
            if !id_rows.iter().any(|r| &r.dataset == s) {
                missing.push(s.clone());
            }
        }
    } else if id_rows.is_empty() {
        missing.push("id_test (law, finance, healthcare)".into());
    }
    for s in OOD_SETS {
        if !ood_rows.iter().any(|r| r.dataset == s) {
            missing.push(s.to_string());
        }
    }
    // Predictions.
    let total = id_rows.len() + ood_rows.len();
    let mut labels: Vec<RawLabel> = Vec::with_capacity(total);
    // Where each label came from: the predictions file's line or the router's output line.
    let mut label_lines: Vec<u64> = Vec::with_capacity(total);
    let mut latency = Latency::default();
    match (&a.predictions, &a.cmd) {
        (Some(p), _) => {
            (labels, label_lines) = labels_from_file(p, id_rows.iter().chain(ood_rows), total)?;
        }
        (None, Some(cmd)) => {
            let mut router = Router::spawn(cmd, a.cmd_timeout)?;
            let bar = crate::progress::bar(
                total as u64,
                "{spinner} routing {pos}/{len} texts [{bar:30}] {per_sec} eta {eta}",
            );
            for r in id_rows.iter().chain(ood_rows) {
                let t0 = Instant::now();
                let l = router.route(&r.text, &r.id)?;
                latency.0.push(t0.elapsed().as_secs_f64() * 1000.0);
                labels.push(l);
                label_lines.push(router.line);
                bar.inc(1);
            }
            bar.finish_and_clear();
            router.finish()?;
            if let Some(path) = &a.save_predictions {
                save_predictions(path, id_rows.iter().chain(ood_rows), &labels)?;
            }
        }
        (None, None) => {
            return Err(Failure::bad_input(
                "give --predictions FILE or --cmd ROUTER",
            ));
        }
    }
    // A label that cannot be scored: FILE:LINE (or the router's output line), problem, row id.
    let label_err = |i: usize, r: &ExportRow, e: routeval_routing_scores::gqr::LabelError| {
        let ln = label_lines.get(i).copied().unwrap_or(0);
        let place = match (&a.predictions, &a.cmd) {
            (Some(p), _) => format!("{}:{ln}", display_name(p)),
            (None, cmd) => format!(
                "router {:?}: output line {ln}",
                cmd.as_deref().unwrap_or_default()
            ),
        };
        Failure::bad_input(format!("{place}: {e} (prediction for {})", r.id))
    };
    let n_id = id_rows.len();
    // Every prediction under the path's type rules (GQR-unseen casts, GQR is strict).
    let mut preds: Vec<i64> = Vec::with_capacity(total);
    for (i, (r, l)) in id_rows.iter().chain(ood_rows).zip(&labels).enumerate() {
        let p = if a.unseen { l.cast() } else { l.strict() };
        preds.push(p.map_err(|e| label_err(i, r, e))?);
    }
    let (id_preds, ood_preds) = preds.split_at(n_id);
    if let Some(path) = &a.rows {
        write_rows(path, id_rows.iter().chain(ood_rows), &preds, &latency.0)?;
    }
    // Resampling strata: the pooled ID set (GQR) or each unseen set, then each OOD set.
    let strata = |preds: &[i64]| {
        AccuracyStrata::new(
            id_rows
                .iter()
                .map(|r| (r.dataset.as_str(), true))
                .chain(ood_rows.iter().map(|r| (r.dataset.as_str(), false)))
                .zip(id_rows.iter().chain(ood_rows).zip(preds))
                .map(|((set, is_id), (r, p))| (set, is_id, *p == r.label as i64)),
            a.unseen,
        )
    };
    let run_strata = strata(&preds);
    let intervals =
        a.ci.ci_level
            .map(|level| run_strata.intervals(level, a.ci.replicates(), a.seed()));
    // --ci: each set's accuracy interval (same replicates), keyed by stratum name.
    let set_cis: Option<Vec<(String, routeval_stats::BootstrapCi)>> =
        a.ci.ci_level
            .map(|level| run_strata.set_intervals(level, a.ci.replicates(), a.seed()));
    let set_ci = |key: &str| {
        set_cis
            .as_ref()
            .and_then(|v| v.iter().find(|(n, _)| n == key))
            .map(|(_, c)| (c.low, c.high))
    };
    // --baseline: the other router's labels on the same rows, under the same type rules.
    let comparison = match &a.baseline {
        None => None,
        Some(bp) => {
            let (blabels, blines) = labels_from_file(bp, id_rows.iter().chain(ood_rows), total)?;
            let mut bpreds: Vec<i64> = Vec::with_capacity(total);
            for ((r, l), ln) in id_rows.iter().chain(ood_rows).zip(&blabels).zip(&blines) {
                let p = if a.unseen { l.cast() } else { l.strict() };
                bpreds.push(p.map_err(|e| {
                    Failure::bad_input(format!(
                        "{}:{ln}: {e} (prediction for {})",
                        display_name(bp),
                        r.id
                    ))
                })?);
            }
            let level = a.ci.ci_level.unwrap_or(0.95);
            let c = run_strata
                .compare(&strata(&bpreds), level, a.ci.replicates(), a.seed())
                .ok_or_else(|| Failure::bad_input("--baseline: the rows differ"))?;
            Some(routeval_routing_scores::gqr::GqrBaseline {
                predictions: display_name(bp),
                level,
                replicates: a.ci.replicates(),
                seed: a.seed(),
                comparison: c,
            })
        }
    };
    // The typed report (routeval_routing_scores::gqr::report): the table and --json render it.
    let rows_in = |rows: &[ExportRow], set: &str| rows.iter().filter(|r| r.dataset == set).count();
    let mut view_sets: Vec<routeval_views::gqr::SetAccuracy> = Vec::new();
    let (scored, gates_on): (Scored, Box<dyn NamedMetrics>) = if a.unseen {
        let mut acc = UnseenAccumulator::default();
        for (r, p) in id_rows.iter().zip(id_preds) {
            acc.add_unseen(&r.dataset, r.label as i64, *p);
        }
        for (r, p) in ood_rows.iter().zip(ood_preds) {
            acc.add_ood(&r.dataset, *p);
        }
        let s = acc.finish();
        for (k, v) in &s.unseen_id_per_dataset {
            view_sets.push(routeval_views::gqr::SetAccuracy {
                name: set_name(k),
                kind: "unseen ID",
                rows: rows_in(id_rows, k),
                accuracy: *v,
                ci: set_ci(k),
            });
        }
        for (k, v) in &s.ood_per_dataset {
            view_sets.push(routeval_views::gqr::SetAccuracy {
                name: set_name(k),
                kind: "OOD",
                rows: rows_in(ood_rows, k),
                accuracy: *v,
                ci: set_ci(k),
            });
        }
        (Scored::Unseen(s.clone()), Box::new(s))
    } else {
        let mut acc = GqrAccumulator::default();
        for (r, p) in id_rows.iter().zip(id_preds) {
            acc.add_id(r.label as i64, *p);
        }
        for (r, p) in ood_rows.iter().zip(ood_preds) {
            acc.add_ood(&r.dataset, *p);
        }
        let s = acc.finish();
        let have_id = !id_rows.is_empty();
        if have_id {
            view_sets.push(routeval_views::gqr::SetAccuracy {
                name: "ID test (pooled)".into(),
                kind: "ID",
                rows: id_rows.len(),
                accuracy: s.id.accuracy,
                ci: set_ci("id_test"),
            });
        }
        for d in &s.ood_per_dataset {
            view_sets.push(routeval_views::gqr::SetAccuracy {
                name: set_name(&d.dataset),
                kind: "OOD",
                rows: rows_in(ood_rows, &d.dataset),
                accuracy: d.eval.accuracy,
                ci: set_ci(&d.dataset),
            });
        }
        (
            Scored::Gqr {
                score: s.clone(),
                have_id,
            },
            Box::new(s),
        )
    };
    let mut score_report = ScoreReport::new(
        scored,
        id_rows.len(),
        ood_rows.len(),
        &missing,
        &data.missing,
    );
    // A gate on a partial score (or on the OOD accuracy of a partial build) says so.
    let gate_notes: Vec<(String, String)> = score_report
        .partial_note()
        .map(|n| {
            [score_report.score_key(), "ood_accuracy"]
                .iter()
                .map(|k| (k.to_string(), n.clone()))
                .collect()
        })
        .unwrap_or_default();
    if !latency.0.is_empty() {
        let p = |q| latency.percentile(q).unwrap_or(f64::NAN);
        score_report.latency_ms = Some(LatencySummary {
            p50: p(50.0),
            p95: p(95.0),
            p99: p(99.0),
            texts: latency.0.len(),
        });
    }
    let view_head = score_report.headline();
    let mut report = score_report.to_json();
    let mut table = score_report.render_text();
    if let Some(iv) = &intervals {
        let mut j = crate::ci::to_json(iv);
        // Each set's accuracy interval (same replicates), by set name.
        if let (Some(o), Some(sets)) = (j.as_object_mut(), &set_cis) {
            let per_set: serde_json::Map<String, Value> = sets
                .iter()
                .map(|(n, c)| {
                    let v = if c.low.is_finite() && c.high.is_finite() {
                        json!([c.low, c.high])
                    } else {
                        Value::Null
                    };
                    (n.clone(), v)
                })
                .collect();
            o.insert("per_set".into(), Value::Object(per_set));
            let degenerate: serde_json::Map<String, Value> = sets
                .iter()
                .filter_map(|(n, c)| c.degenerate().map(|d| (n.clone(), json!(d.reason()))))
                .collect();
            if !degenerate.is_empty() {
                o.insert("per_set_degenerate".into(), Value::Object(degenerate));
            }
        }
        report.insert("ci".into(), j);
        table.push_str(&crate::ci::render_text(iv, pct));
        for (n, c) in set_cis.iter().flatten() {
            if let Some(d) = c.degenerate() {
                table.push_str(&format!("  set {}: CI {d}\n", set_name(n)));
            }
        }
    }
    if let Some(b) = &comparison {
        report.insert(
            "baseline".into(),
            serde_json::to_value(b).unwrap_or_default(),
        );
        table.push_str(&routeval_views::gqr::baseline_text(b));
    }
    report.insert("data".into(), json!(data.origin));
    let md = a.format == crate::report::TextFormat::Md;
    let doc = (md || a.html.html.is_some()).then(|| {
        let view = routeval_views::gqr::ScoreView {
            benchmark: if a.unseen { "GQR-unseen" } else { "GQR-Bench" },
            headline: view_head,
            sets: view_sets,
            gold_pred: id_rows
                .iter()
                .map(|r| r.label as i64)
                .chain(ood_rows.iter().map(|_| 3))
                .zip(preds.iter().copied())
                .collect(),
            latency_ms: &latency.0,
            ci: intervals.as_ref(),
            missing: missing.clone(),
            data: data.origin.clone(),
        };
        let source = match (&a.predictions, &a.cmd) {
            (Some(p), _) => display_name(p),
            (None, Some(c)) => format!("cmd: {c}"),
            _ => String::new(),
        };
        let mut doc = routeval_views::gqr::score_document(&view, &source);
        for (n, c) in set_cis.iter().flatten() {
            if let Some(d) = c.degenerate() {
                doc.notes.push(format!("CI of set {}: {d}", set_name(n)));
            }
        }
        // The same block the table prints under it and --json holds as "baseline".
        if let Some(b) = &comparison {
            doc.sections.push(routeval_views::gqr::baseline_section(b));
        }
        doc
    });
    let stdin_used = crate::report::uses_stdin(inputs.iter().copied());
    if let Some(doc) = &doc {
        crate::report::write_html(&a.html, doc, stdin_used)?;
    }
    let out = if a.json {
        let mut s = serde_json::to_string_pretty(&Value::Object(report)).unwrap_or_default();
        s.push('\n');
        s
    } else if let (true, Some(doc)) = (md, &doc) {
        crate::report::markdown(doc, stdin_used)
    } else {
        table
    };
    emit(a.output.as_ref(), out.as_bytes())?;
    a.gates.apply(&routeval_core::gate::Annotated {
        inner: gates_on.as_ref(),
        notes: gate_notes,
    })
}
