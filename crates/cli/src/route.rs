//! `routeval route`: query-routed metrics (flexeval's `QueryRoutedMetric`) over model outputs.
//!
//! `--config` is JSON or Jsonnet (`.jsonnet`/`.libsonnet`, feature `jsonnet`), either the
//! plain form `{"routes": [...], "on_unmatched", "on_missing_key", "extra_info_templates"}`
//! or flexeval's form (`{class_path: 'QueryRoutedMetric', init_args: {...}}`, or a whole
//! EvalSetup whose `init_args.metrics` holds QueryRoutedMetric entries; its
//! `init_args.eval_dataset.init_args.extra_info_templates` are used). `--data` is JSONL of
//! `{"lm_output", "references", "extra_info", ...}`; `where` and `group_by` see `extra_info`
//! (`{}` when absent), after `extra_info_templates` (Jinja2 via minijinja, rendered on
//! `extra_info`, strings overwriting same-named keys). Prints the metrics JSON (Python
//! `json.dump(indent=4)` layout); with `--out DIR` also writes `DIR/metrics.json` and
//! `DIR/outputs.jsonl` (each input record with the prefixed instance-level keys added at the
//! top level, as flexeval's outputs.jsonl).

use crate::common::{Failure, display_name, emit, open_input, read_input};
use crate::progress::Bar;
use routeval_core::Progress;
use routeval_core::progress::Unit;
use routeval_query_dsl::route::config::{ambiguous_route_names, find_routed};
use routeval_query_dsl::route::metrics::BuiltinMetric;
use routeval_query_dsl::route::{OnUnmatched, QueryRoutedMetric, RouteError};
use routeval_query_dsl::to_python_json;
use serde_json::{Map, Value};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// Arguments of `routeval route`.
#[derive(Debug, clap::Args)]
pub(crate) struct RouteArgs {
    /// Routes: JSON or Jsonnet, plain or flexeval form.
    #[arg(long, value_name = "ROUTES.json|.jsonnet")]
    config: PathBuf,
    /// Model outputs, JSONL (`-` = stdin).
    #[arg(long, value_name = "OUTPUTS.jsonl")]
    data: PathBuf,
    /// Also write metrics.json and outputs.jsonl to DIR (created if needed).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print one compact JSON line `{"metrics": {...}, "instances": N, "routing": [{"selected":
    /// {ROUTE: n}, "unmatched": n}, ...]}` (one routing entry per routed metric) instead of the
    /// metrics alone in flexeval's metrics.json layout.
    #[arg(long)]
    json: bool,
    /// Write what would be printed to PATH.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
    /// stdout format: `text` (the metrics in flexeval's metrics.json layout) or `md` (the
    /// report as Markdown).
    #[arg(long, value_enum, default_value = "text", conflicts_with = "json")]
    format: crate::report::TextFormat,
    #[command(flatten)]
    html: crate::report::HtmlArg,
    #[command(flatten)]
    gates: crate::gate::GateArgs,
}

/// Evaluate a Jsonnet program to JSON text (imports resolve relative to `dir`); errors are one
/// line `FILE:LINE: jsonnet error: MESSAGE`.
#[cfg(feature = "jsonnet")]
fn jsonnet_to_json(source: &[u8], name: &str, dir: &Path) -> Result<String, String> {
    routeval_io::jsonnet::to_json(source, name, dir).map_err(|e| e.0)
}

#[cfg(not(feature = "jsonnet"))]
fn jsonnet_to_json(_source: &[u8], name: &str, _dir: &Path) -> Result<String, String> {
    Err(format!(
        "{name}: this routeval was built without the `jsonnet` feature; give a JSON config"
    ))
}

/// The line of the first `"key":` in a JSON text (for messages about a key).
fn key_line(text: &str, key: &str) -> Option<usize> {
    let quoted = serde_json::to_string(key).ok()?;
    let mut from = 0;
    while let Some(i) = text[from..].find(&quoted) {
        let at = from + i;
        let rest = text[at + quoted.len()..].trim_start();
        if rest.starts_with(':') {
            return Some(text[..at].matches('\n').count() + 1);
        }
        from = at + quoted.len();
    }
    None
}

/// Keys of the plain config form.
const CONFIG_KEYS: [&str; 4] = [
    "routes",
    "on_unmatched",
    "on_missing_key",
    "extra_info_templates",
];

/// Returns the config and, for a JSON config, its text (to name lines in messages).
fn load_config(path: &Path) -> Result<(Value, Option<String>), Failure> {
    let name = display_name(path);
    let bytes = read_input(path)?;
    let is_jsonnet = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e == "jsonnet" || e == "libsonnet");
    let text = if is_jsonnet {
        let dir = path.parent().unwrap_or(Path::new("."));
        jsonnet_to_json(&bytes, &name, dir).map_err(Failure::bad_input)?
    } else {
        String::from_utf8(bytes).map_err(|e| Failure::bad_input(format!("{name}: {e}")))?
    };
    let v = serde_json::from_str(&text).map_err(|e| {
        // A plain JSON config: the line is the file's; after Jsonnet, the generated text's.
        let at = if is_jsonnet {
            name.clone()
        } else {
            format!("{name}:{}", e.line())
        };
        Failure::bad_input(format!("{at}: invalid JSON: {e}"))
    })?;
    Ok((v, (!is_jsonnet).then_some(text)))
}

/// Run `routeval route`.
pub(crate) fn run(args: RouteArgs) -> Result<u8, Failure> {
    let out_files = args
        .out
        .as_ref()
        .map(|d| (d.join("metrics.json"), d.join("outputs.jsonl")));
    crate::report::check_outputs(
        &args.html,
        &[
            ("-o", args.output.as_deref()),
            (
                "--out DIR's metrics.json",
                out_files.as_ref().map(|f| f.0.as_path()),
            ),
            (
                "--out DIR's outputs.jsonl",
                out_files.as_ref().map(|f| f.1.as_path()),
            ),
        ],
    )?;
    let cname = display_name(&args.config);
    let (metrics, templates) = load_metrics(&args.config, &cname)?;
    let (env, template_keys) = template_env(&templates, &cname)?;
    let dname = display_name(&args.data);
    let ctx = RecordContext {
        env: &env,
        template_keys: &template_keys,
        dname: &dname,
    };
    let streamed = stream_data(&args, &ctx, &metrics)?;
    let n_records = streamed.line_of.len();
    let (summary, routing) =
        finish_metrics(&metrics, streamed.accs, &streamed.line_of, &dname, &cname)?;
    let gate_metrics = summary_metrics(&summary);
    let md = args.format == crate::report::TextFormat::Md;
    let report = (args.html.html.is_some() || md)
        .then(|| routeval_views::route::document(&summary, &routing, n_records, &cname, &dname));
    let stdin_used = crate::report::uses_stdin([args.data.as_path()]);
    if let Some(doc) = &report {
        crate::report::write_html(&args.html, doc, stdin_used)?;
    }
    let summary = Value::Object(summary);
    let metrics_json = to_python_json(&summary, Some(4));
    if let Some(dir) = &args.out {
        write_out_dir(dir, &metrics_json, streamed.spool, &metrics)?;
    }
    if args.json {
        let doc = serde_json::json!({
            "metrics": summary,
            "instances": n_records,
            "routing": routing,
        });
        emit(args.output.as_ref(), format!("{doc}\n").as_bytes())?;
    } else if let (true, Some(doc)) = (md, &report) {
        let text = crate::report::markdown(doc, stdin_used);
        emit(args.output.as_ref(), text.as_bytes())?;
    } else {
        emit(args.output.as_ref(), format!("{metrics_json}\n").as_bytes())?;
    }
    args.gates.apply(&gate_metrics)
}

/// The routed metrics of one config, in config order.
type RoutedMetrics = Vec<QueryRoutedMetric<BuiltinMetric>>;

/// The config's routed metrics (unknown top-level keys refused, messages naming the key's
/// line in a JSON config) and its `extra_info_templates`.
fn load_metrics(path: &Path, cname: &str) -> Result<(RoutedMetrics, Map<String, Value>), Failure> {
    let (config, config_text) = load_config(path)?;
    // `FILE:LINE` of a key, when the config is JSON and the key is found.
    let at_key = |key: &str| match config_text.as_deref().and_then(|t| key_line(t, key)) {
        Some(l) => format!("{cname}:{l}"),
        None => cname.to_string(),
    };
    if let (Value::Object(top), Some(_)) = (&config, config.get("routes"))
        && let Some(k) = top.keys().find(|k| !CONFIG_KEYS.contains(&k.as_str()))
    {
        return Err(Failure::bad_input(format!(
            "{}: unknown_key: unknown key {k:?} (expected one of: {})",
            at_key(k),
            CONFIG_KEYS.join(", ")
        )));
    }
    let (routed_cfgs, templates) =
        find_routed(&config).map_err(|e| Failure::bad_input(format!("{cname}: {e}")))?;
    let mut metrics = Vec::new();
    for c in &routed_cfgs {
        let qr = QueryRoutedMetric::from_config(c, BuiltinMetric::from_config).map_err(|e| {
            let at = match &e {
                RouteError::UnknownKey { key, .. } => at_key(key),
                _ => cname.to_string(),
            };
            Failure::bad_input(format!("{at}: {e}"))
        })?;
        ambiguous_route_names(qr.routes().iter().map(|r| r.name.as_str()))
            .map_err(|m| Failure::bad_input(format!("{cname}: {m}")))?;
        metrics.push(qr);
    }
    Ok((metrics, templates))
}

/// The Jinja2 environment of the `extra_info_templates` (minijinja, strict undefined, Python
/// string methods, trailing newlines kept) and the template names in config order.
fn template_env(
    templates: &Map<String, Value>,
    cname: &str,
) -> Result<(minijinja::Environment<'static>, Vec<String>), Failure> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    // Python string/dict methods (`.split()`, `.strip()`, ...) as Jinja2 templates use them.
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    let mut template_keys = Vec::new();
    for (k, t) in templates {
        let Value::String(src) = t else {
            return Err(Failure::bad_input(format!(
                "{cname}: extra_info_templates.{k} must be a string"
            )));
        };
        env.add_template_owned(k.clone(), src.clone())
            .map_err(|e| Failure::bad_input(format!("{cname}: extra_info_templates.{k}: {e}")))?;
        template_keys.push(k.clone());
    }
    Ok((env, template_keys))
}

/// What reading `--data` leaves: one accumulator per routed metric, the line number of each
/// instance and, with `--out`, the spool of the records.
struct Streamed {
    accs: Vec<routeval_query_dsl::route::RoutedAccumulator>,
    line_of: Vec<usize>,
    spool: Option<std::io::BufWriter<std::fs::File>>,
}

/// Stream `--data`: each batch of lines is parsed and observed in parallel, then dropped.
/// Only the per-route accumulators (a few values per selected instance), the line number of
/// each instance and, with `--out`, a spool of the records (an anonymous temporary file, read
/// back to write outputs.jsonl) outlive a batch: memory does not grow with the records' size.
fn stream_data(
    args: &RouteArgs,
    ctx: &RecordContext<'_>,
    metrics: &[QueryRoutedMetric<BuiltinMetric>],
) -> Result<Streamed, Failure> {
    let dname = ctx.dname;
    let mut reader = open_input(&args.data)?;
    let mut spool = match &args.out {
        Some(_) => Some(std::io::BufWriter::new(tempfile::tempfile().map_err(
            |e| Failure::bad_input(format!("cannot create a temporary file for --out: {e}")),
        )?)),
        None => None,
    };
    let mut accs: Vec<_> = metrics.iter().map(|m| m.accumulator()).collect();
    let mut line_of: Vec<usize> = Vec::new();
    let mut batch: Vec<(usize, Vec<u8>)> = Vec::new();
    let (mut batch_bytes, mut line_no) = (0usize, 0usize);
    // Streamed (possibly stdin or compressed): the bar counts the bytes evaluated so far.
    let bar = Bar::with_stage(&format!("reading {dname}"), None, Unit::Bytes);
    let mut unreported = 0u64;
    loop {
        let mut buf = Vec::new();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Failure::bad_input(format!("{dname}: cannot read: {e}")))?;
        if n == 0 {
            break;
        }
        unreported += n as u64;
        line_no += 1;
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        batch_bytes += buf.len();
        batch.push((line_no, buf));
        if batch.len() >= BATCH_LINES || batch_bytes >= BATCH_BYTES {
            observe_batch(ctx, metrics, &mut accs, &mut line_of, &mut spool, &batch)?;
            batch.clear();
            batch_bytes = 0;
            bar.advance(std::mem::take(&mut unreported));
        }
    }
    observe_batch(ctx, metrics, &mut accs, &mut line_of, &mut spool, &batch)?;
    bar.advance(unreported);
    Ok(Streamed {
        accs,
        line_of,
        spool,
    })
}

/// Finish every routed metric: the merged summary (a key produced twice is refused) and one
/// `{"selected", "unmatched"}` routing entry per metric; prints the routing lines on stderr.
fn finish_metrics(
    metrics: &[QueryRoutedMetric<BuiltinMetric>],
    accs: Vec<routeval_query_dsl::route::RoutedAccumulator>,
    line_of: &[usize],
    dname: &str,
    cname: &str,
) -> Result<(Map<String, Value>, Vec<Value>), Failure> {
    let n_instances = line_of.len();
    let mut summary = Map::new();
    let mut routing: Vec<Value> = Vec::new();
    // Instance keys of two routed metrics cannot collide unnoticed: every built-in metric's
    // summary key is its instance key (`{route}/exact_match`, ...), and a route that gives an
    // instance a key has that key in its summary too, so such a pair is the summary
    // `key_collision` below.
    for (qr, acc) in metrics.iter().zip(accs) {
        // No per-instance details are held: outputs.jsonl computes them again per record.
        let result = qr
            .finish_with(acc, false)
            .map_err(|e| route_failure(&e, dname, cname, line_of))?;
        let names = qr.routes().iter().map(|r| r.name.as_str());
        let selected: Map<String, Value> = names
            .clone()
            .zip(&result.selected)
            .map(|(r, n)| (r.to_string(), Value::from(*n)))
            .collect();
        routing.push(serde_json::json!({
            "selected": selected,
            "unmatched": result.unmatched.len(),
        }));
        if n_instances == 0 {
            eprintln!("routed 0 instances: the data file has none");
        } else {
            let counts: Vec<String> = names
                .zip(&result.selected)
                .map(|(r, n)| format!("{r}={n}"))
                .collect();
            eprintln!(
                "routed {n_instances} instances: {}; {} matched no route",
                counts.join(", "),
                result.unmatched.len()
            );
        }
        if qr.on_unmatched() == OnUnmatched::Warn && !result.unmatched.is_empty() {
            let first: Vec<usize> = result
                .unmatched
                .iter()
                .take(10)
                .map(|&i| line_of[i])
                .collect();
            eprintln!(
                "warning: {} instance(s) matched no route (lines {first:?}...)",
                result.unmatched.len()
            );
        }
        for (k, v) in result.summary {
            if summary.contains_key(&k) {
                return Err(Failure::bad_input(format!(
                    "{cname}: key_collision: metric key {k:?} produced twice"
                )));
            }
            summary.insert(k, v);
        }
    }
    Ok((summary, routing))
}

/// `--out DIR`: `metrics.json` and `outputs.jsonl` (each spooled record with every routed
/// metric's instance-level keys added at the top level), both refused before either is
/// written when one of them is an input; each written atomically.
fn write_out_dir(
    dir: &Path,
    metrics_json: &str,
    spool: Option<std::io::BufWriter<std::fs::File>>,
    metrics: &[QueryRoutedMetric<BuiltinMetric>],
) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::bad_input(format!("{}: cannot create: {e}", dir.display())))?;
    let mpath = dir.join("metrics.json");
    let opath = dir.join("outputs.jsonl");
    crate::output::check_not_input(&mpath)?;
    crate::output::check_not_input(&opath)?;
    crate::output::write_file(&mpath, format!("{metrics_json}\n").as_bytes())?;
    let mut w = crate::output::AtomicFile::create(&opath)?;
    let tmp_err = |e: std::io::Error| Failure::bad_input(format!("temporary file for --out: {e}"));
    if let Some(spool) = spool {
        use std::io::Seek;
        let mut f = spool.into_inner().map_err(|e| tmp_err(e.into_error()))?;
        f.rewind().map_err(tmp_err)?;
        let empty = Value::Object(Map::new());
        for line in std::io::BufReader::new(f).lines() {
            let line = line.map_err(tmp_err)?;
            let rec: Value = serde_json::from_str(&line)
                .map_err(|e| Failure::bad_input(format!("temporary file for --out: {e}")))?;
            let info = match rec.get("extra_info") {
                Some(v @ Value::Object(_)) => v,
                _ => &empty,
            };
            let mut d = Map::new();
            for qr in metrics {
                d.extend(qr.instance_details(&rec, info));
            }
            let mut obj = match rec {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            obj.extend(d);
            writeln!(w, "{}", to_python_json(&Value::Object(obj), None)).map_err(|e| {
                Failure::bad_input(format!("{}: cannot write: {e}", opath.display()))
            })?;
        }
    }
    w.commit()?;
    eprintln!("wrote {} and {}", mpath.display(), opath.display());
    Ok(())
}

/// Lines per parallel batch of `route --data`.
const BATCH_LINES: usize = 4096;
/// Bytes per parallel batch of `route --data` (a batch ends at whichever limit comes first).
const BATCH_BYTES: usize = 4 << 20;

/// What turning a data line into an instance needs.
struct RecordContext<'a> {
    env: &'a minijinja::Environment<'a>,
    template_keys: &'a [String],
    dname: &'a str,
}

/// One data line: `None` for a blank line, else the record (with the rendered templates in
/// its `extra_info` when there are templates) and the `extra_info` `where` sees.
fn parse_record(
    ctx: &RecordContext<'_>,
    line_no: usize,
    bytes: &[u8],
) -> Result<Option<(Value, Value)>, Failure> {
    let dname = ctx.dname;
    let line = std::str::from_utf8(bytes).map_err(|e| {
        Failure::bad_input(format!(
            "{dname}:{line_no}: invalid UTF-8 at byte {} of the line",
            e.valid_up_to() + 1
        ))
    })?;
    if line.trim().is_empty() {
        return Ok(None);
    }
    let at = || format!("{dname}:{line_no}");
    let rec: Value = serde_json::from_str(line)
        .map_err(|e| Failure::bad_input(format!("{}: invalid JSON: {e}", at())))?;
    if !rec.is_object() {
        return Err(Failure::bad_input(format!(
            "{}: a record must be a JSON object",
            at()
        )));
    }
    let mut info = match rec.get("extra_info") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(Failure::bad_input(format!(
                "{}: extra_info must be an object, got {other}",
                at()
            )));
        }
    };
    for k in ctx.template_keys {
        let tmpl = ctx
            .env
            .get_template(k)
            .map_err(|e| Failure::bad_input(e.to_string()))?;
        let rendered = tmpl
            .render(minijinja::value::Serde(&info))
            .map_err(|e| Failure::bad_input(format!("{}: extra_info_templates.{k}: {e}", at())))?;
        info.insert(k.clone(), Value::String(rendered));
    }
    let info = Value::Object(info);
    let mut rec = rec;
    if !ctx.template_keys.is_empty() {
        // Like flexeval, the rendered keys become part of the instance's extra_info.
        rec["extra_info"] = info.clone();
    }
    Ok(Some((rec, info)))
}

/// Parse a batch of data lines in parallel, then observe its instances into `accs` (one
/// accumulator per routed metric; sharded over threads, the merge equals one pass). The
/// first bad line (in file order) is the error. With a spool, each record is appended to it
/// as one line (the raw line, or the record with its rendered templates).
fn observe_batch(
    ctx: &RecordContext<'_>,
    metrics: &[QueryRoutedMetric<BuiltinMetric>],
    accs: &mut [routeval_query_dsl::route::RoutedAccumulator],
    line_of: &mut Vec<usize>,
    spool: &mut Option<std::io::BufWriter<std::fs::File>>,
    batch: &[(usize, Vec<u8>)],
) -> Result<(), Failure> {
    use rayon::prelude::*;
    let parsed: Vec<Result<Option<(Value, Value)>, Failure>> = batch
        .par_iter()
        .map(|(line_no, bytes)| parse_record(ctx, *line_no, bytes))
        .collect();
    let mut instances: Vec<(usize, Value, Value)> = Vec::with_capacity(parsed.len());
    for ((line_no, bytes), p) in batch.iter().zip(parsed) {
        let Some((rec, info)) = p? else { continue };
        let index = line_of.len();
        line_of.push(*line_no);
        if let Some(w) = spool.as_mut() {
            let written = if ctx.template_keys.is_empty() {
                w.write_all(bytes)
            } else {
                serde_json::to_writer(&mut *w, &rec).map_err(std::io::Error::from)
            };
            written
                .and_then(|()| w.write_all(b"\n"))
                .map_err(|e| Failure::bad_input(format!("temporary file for --out: {e}")))?;
        }
        instances.push((index, rec, info));
    }
    for (qr, acc) in metrics.iter().zip(accs.iter_mut()) {
        qr.observe_all(acc, &instances);
    }
    Ok(())
}

/// The gate-able metrics of a route summary: every key whose value is a number (or `null`,
/// not computed), nested objects flattened with `.` (e.g. `open/avg_output_length`).
fn summary_metrics(summary: &Map<String, Value>) -> routeval_core::gate::MetricList {
    fn walk(prefix: &str, v: &Value, out: &mut Vec<(String, Option<f64>)>) {
        match v {
            Value::Number(n) => out.push((prefix.to_string(), n.as_f64())),
            Value::Null => out.push((prefix.to_string(), None)),
            Value::Object(m) => {
                for (k, v) in m {
                    walk(&format!("{prefix}.{k}"), v, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (k, v) in summary {
        walk(k, v, &mut out);
    }
    routeval_core::gate::MetricList(out)
}

fn route_failure(e: &RouteError, data: &str, config: &str, line_of: &[usize]) -> Failure {
    if let RouteError::Unmatched { count, first } = e {
        let lines: Vec<usize> = first
            .iter()
            .map(|&i| line_of.get(i).copied().unwrap_or(i + 1))
            .collect();
        return Failure::bad_input(format!(
            "{data}: unmatched: {count} instance(s) matched no route (on_unmatched=error); first lines: {lines:?}"
        ));
    }
    match e.instance_index() {
        Some(i) => Failure::bad_input(format!(
            "{data}:{}: {e}",
            line_of.get(i).copied().unwrap_or(i + 1)
        )),
        None => Failure::bad_input(format!("{config}: {e}")),
    }
}
