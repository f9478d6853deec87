//! `routeval trec`: trec_eval-exact evaluation of a TREC run against qrels.

use crate::common::{self, CmdResult, Failure};
use clap::Args;
use routeval_retrieval_metrics::trec::{self, EvalOptions, MeasureId, MeasureSet, Qrels, spec};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Inputs larger than this get a reading bar (when stderr is a terminal; see
/// [`crate::progress`]).
const PROGRESS_BYTES: u64 = 50 * 1024 * 1024;

/// Options of `routeval trec`; names and meanings follow trec_eval 10.0-rc3.
#[derive(Debug, Args)]
#[command(after_long_help = measures_help())]
pub(crate) struct TrecArgs {
    /// Relevance judgments: lines `qid iter docno rel` (rel an integer; -1 = pooled but unjudged).
    pub(crate) qrels: PathBuf,
    /// Ranked results: lines `qid Q0 docno rank score tag`; `-` reads stdin. The rank column is
    /// ignored: documents are ranked by score, ties by docno descending, as trec_eval does.
    pub(crate) run: PathBuf,
    /// Also print every measure for each query (before the summary), as trec_eval -q.
    #[arg(short = 'q', long = "query-eval", visible_alias = "query_eval_wanted")]
    pub(crate) query: bool,
    /// Measure, measure with parameters (`P.5,10`, `ndcg.1=0,2=3`, `rbp.p=0.8`) or nickname
    /// (`official` = the default set, `all_trec`, `set`). Repeatable; the first parameters given
    /// for a measure win; output order is trec_eval's table order. Also accepted: the printed
    /// form (`P_10`), `@k` forms (`P@10`, `nDCG@10` = ndcg_cut.10, `MRR@10` =
    /// recip_rank_cut.10, `map@100` = map_cut.100, `R@100`) and any letter case; see the list
    /// below and the README's mapping table.
    #[arg(short = 'm', long = "measure", value_name = "MEASURE[.PARAMS]")]
    pub(crate) measures: Vec<String>,
    /// Average over every query in the qrels; queries without results score 0 (trec_eval -c).
    #[arg(
        short = 'c',
        long = "complete",
        visible_alias = "complete_rel_info_wanted"
    )]
    pub(crate) complete: bool,
    /// Minimum qrels value counted as relevant (trec_eval -l; default 1).
    #[arg(
        short = 'l',
        long = "level-for-rel",
        visible_alias = "level_for_rel",
        value_name = "NUM",
        default_value = "1",
        allow_negative_numbers = true,
        value_parser = crate::numarg::rel_level
    )]
    pub(crate) level: i64,
    /// Print no summary (the `all` lines), only per-query values with -q (trec_eval -n).
    #[arg(short = 'n', long = "nosummary")]
    pub(crate) nosummary: bool,
    /// Drop retrieved documents without a judgment before computing anything (trec_eval -J;
    /// easy to misuse: numbers look reasonable but are not comparable).
    #[arg(
        short = 'J',
        long = "judged-docs-only",
        visible_alias = "Judged_docs_only"
    )]
    pub(crate) judged_only: bool,
    /// Number of documents in the collection; only `utility` uses it (trec_eval -N).
    #[arg(
        short = 'N',
        long = "num-docs-in-coll",
        visible_alias = "Number_docs_in_coll",
        value_name = "NUM",
        default_value = "0",
        allow_negative_numbers = true,
        value_parser = crate::numarg::size_or_zero
    )]
    pub(crate) num_docs: i64,
    /// Evaluate only the top NUM documents of each query, after ranking (trec_eval -M).
    #[arg(
        short = 'M',
        long = "max-retrieved-per-topic",
        visible_alias = "Max_retrieved_per_topic",
        value_name = "NUM",
        allow_negative_numbers = true,
        value_parser = max_docs_value
    )]
    pub(crate) max_docs: Option<u64>,
    /// The trec_eval release whose definitions apply where releases differ: 10.0 (10.0-rc3,
    /// the default) or 9.0.8 (what pytrec_eval and `routeval.trec` in Python follow:
    /// `iprec_at_recall`/`11pt_avg` round recall fractions with +0.9 instead of +0.5, scores
    /// are ranked as stored floats, and `unj`/`rbp` do not exist).
    #[arg(long = "trec-eval", value_name = "RELEASE", default_value = "10.0", value_parser = parse_release)]
    pub(crate) trec_eval: trec::eval::TrecEvalVersion,
    /// Print JSON instead: {"all": {measure: value}, "per_query": {qid: {measure: value}}}
    /// (per_query only with -q), full precision, NaN as null.
    #[arg(long)]
    pub(crate) json: bool,
    /// Tie sensitivity: also give each measure's min, max and expected value over every order
    /// of the documents that share a score (trec_eval orders them by docno). Text: one line
    /// per summary value a tie changes, after trec_eval's lines; JSON: a "ties" object.
    /// Measures without an exact range are named on stderr. With -M, a cut through tied
    /// documents judged differently is an error (exit 2).
    #[arg(long)]
    pub(crate) ties: bool,
    /// Write the output to PATH instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub(crate) output: Option<PathBuf>,
    /// stdout format: `text` (trec_eval's lines) or `md` (the report as Markdown).
    #[arg(long, value_enum, default_value = "text", conflicts_with = "json")]
    pub(crate) format: crate::report::TextFormat,
    #[command(flatten)]
    pub(crate) html: crate::report::HtmlArg,
    #[command(flatten)]
    pub(crate) ci: crate::ci::CiArgs,
    /// Seed of the --ci bootstrap (replicate r draws from its own stream of (seed, r), so the
    /// intervals do not depend on the number of threads) [default: 42]. Refused without --ci.
    #[arg(long, value_name = "S")]
    pub(crate) seed: Option<u64>,
    #[command(flatten)]
    pub(crate) gates: crate::gate::GateArgs,
}

/// `routeval trec --help` description.
pub(crate) const LONG_ABOUT: &str = "\
Evaluate a TREC run against qrels, exactly as trec_eval 10.0-rc3 does: same measures, same \
ranking (score descending, ties broken by docno descending; the rank column is ignored), same \
options, same output byte for byte (`%-22s\\t%s\\t%6.4f`), much faster.

Without -c, queries are those with both judgments and results. Lines starting with '#' and \
blank lines are ignored; fields may be separated by any whitespace; CRLF is fine.

Errors (missing column, non-numeric score or relevance, NaN score, empty run, a document twice \
in one query's results or judgments) print one line `error: FILE:LINE: problem` and exit 2.

Differences from trec_eval are listed in the README (e.g. garbage numbers are errors instead \
of silently becoming 0).";

fn measures_help() -> String {
    let mut s = String::from(
        "Measures (trec_eval names; `all_trec` = all but dcg, ideal_dcg and recip_rank_cut):\n",
    );
    for id in MeasureId::ALL {
        let _ = writeln!(s, "  {:<22} {}", id.name(), id.explanation());
    }
    s.push_str(
        "\nNicknames: official = runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref \
recip_rank iprec_at_recall P; set = runid num_q num_ret num_rel num_rel_ret utility set_P \
set_recall set_relative_P set_map set_F; all_trec = every measure above except dcg, ideal_dcg \
and recip_rank_cut (a routeval addition).\n\nNames people type (-m NAME@k; k may be a list \
5,10; any letter case):",
    );
    for (typed, measure, source) in spec::CUTOFF_ALIASES {
        let _ = write!(s, "\n  {:<22} {measure}.k ({source})", format!("{typed}@k"));
    }
    s.push_str("\n  NAME@k, NAME_k         NAME.k for any measure with cutoffs (P_10 = P.10)");
    for (typed, measure, source) in spec::PLAIN_ALIASES {
        let _ = write!(s, "\n  {typed:<22} {measure} ({source})");
    }
    s.push_str(
        "\n\nExit status: 0 ok; 2 bad input or usage (one stderr line naming file, line and \
problem).",
    );
    s
}

/// The bytes of a whole input (`-` = stdin): a regular file is memory-mapped
/// ([`common::map_file`]; gzip/zstd content decompressed into memory), anything else
/// (stdin, a FIFO, `<(cmd)`, a file the OS would not map) is read, with a progress bar for
/// large files on a terminal.
///
/// Mapping matters for large runs: reading a 280 MB run into a fresh buffer cost a quarter of
/// the whole evaluation in page faults and zero-filling, and the pages of a map of a file in
/// the page cache are shared with the cache instead of copied (benches/trec.md).
pub(crate) fn read_all(path: &Path) -> Result<common::InputBytes, Failure> {
    if path == Path::new("-") {
        return common::read_input(path).map(common::InputBytes::Decoded);
    }
    let mut f = common::open_file(path)?;
    if let Some(bytes) = common::map_file(&f) {
        return Ok(bytes);
    }
    read_file(&mut f, path).map(common::InputBytes::Decoded)
}

/// Read the open file `f` (named `path`) to its end, decompressing gzip/zstd content.
fn read_file(f: &mut std::fs::File, path: &Path) -> Result<Vec<u8>, Failure> {
    let name = path.display().to_string();
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    if size < PROGRESS_BYTES {
        let mut buf = Vec::with_capacity(size as usize + 1);
        f.read_to_end(&mut buf)
            .map_err(|e| Failure::bad_input(format!("{name}: cannot read: {e}")))?;
        return common::decode_input(buf, path);
    }
    let bar = crate::progress::bar(
        size,
        "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec}",
    );
    bar.set_message(format!("reading {name}"));
    // Read straight into the destination buffer, 8 MB at a time, advancing the bar. One byte
    // more than the size, so that the end of a file that did not grow is seen without
    // enlarging (reallocating and copying) the whole buffer.
    let mut buf = vec![0u8; size as usize + 1];
    let mut filled = 0usize;
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() + (8 << 20), 0);
        }
        let end = (filled + (8 << 20)).min(buf.len());
        let n = f
            .read(&mut buf[filled..end])
            .map_err(|e| Failure::bad_input(format!("{name}: cannot read: {e}")))?;
        if n == 0 {
            break;
        }
        filled += n;
        bar.inc(n as u64);
    }
    buf.truncate(filled);
    bar.finish_and_clear();
    common::decode_input(buf, path)
}

/// `--trec-eval RELEASE`.
pub(crate) fn parse_release(s: &str) -> Result<trec::eval::TrecEvalVersion, String> {
    trec::eval::TrecEvalVersion::from_name(s)
        .ok_or_else(|| format!("unknown trec_eval release {s:?} (expected 10.0 or 9.0.8)"))
}

/// Measures of `set` that release `v` lacks are refused, naming them.
pub(crate) fn check_release(
    set: &MeasureSet,
    v: trec::eval::TrecEvalVersion,
) -> Result<(), Failure> {
    let missing: Vec<&str> = set
        .measures()
        .iter()
        .filter(|m| !v.has_measure(m.id))
        .map(|m| m.id.name())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Failure::bad_input(format!(
            "trec_eval {} has no measure {} (drop it from -m, or use --trec-eval 10.0)",
            v.name(),
            missing.join(", ")
        )))
    }
}

/// Run `routeval trec`.
pub(crate) fn run(args: TrecArgs) -> CmdResult {
    args.ci.check_used(args.seed.is_some(), false, None)?;
    let measures = MeasureSet::parse(&args.measures).map_err(Failure::from)?;
    check_release(&measures, args.trec_eval)?;
    args.gates.validate(
        &trec::eval::summary_slots(&measures)
            .into_iter()
            .map(|(n, _)| n.to_string())
            .collect::<Vec<_>>(),
    )?;
    let opts = eval_options(&args, measures);
    let qrels_name = common::display_name(&args.qrels);
    let run_name = common::display_name(&args.run);
    if args.qrels == Path::new("-") && args.run == Path::new("-") {
        return Err(Failure::bad_input(
            "QRELS and RUN cannot both be stdin ('-')",
        ));
    }
    crate::report::check_outputs(&args.html, &[("-o", args.output.as_deref())])?;
    // Read the run while the qrels are parsed.
    let (qrels, run_bytes) = std::thread::scope(|s| {
        let run_reader = s.spawn(|| read_all(&args.run));
        let qrels = read_all(&args.qrels).and_then(|b| Ok(Qrels::from_bytes(&b, &qrels_name)?));
        let run = run_reader
            .join()
            .unwrap_or_else(|_| Err(Failure::bad_input("reading the run failed")));
        (qrels, run)
    });
    let qrels = qrels?;
    let run_bytes = run_bytes?;
    let ev = {
        let bar = crate::progress::Bar::new();
        trec::evaluate_bytes_with_progress(&qrels, &run_bytes, &run_name, &opts, &qrels_name, &bar)?
    };
    // A run held in memory (stdin, gzip/zstd) is freed before the outputs are built; a mapped
    // one is left to the kernel at exit, below.
    let run_bytes = matches!(run_bytes, common::InputBytes::Mapped(_)).then_some(run_bytes);
    judged_without_results_note(&ev, args.complete, &qrels_name, &run_name);
    if args.ties {
        tie_notes(&ev, &run_name, args.json || args.nosummary);
    }
    let intervals = args.ci.ci_level.map(|level| {
        ev.intervals(
            level,
            args.ci.replicates(),
            args.seed.unwrap_or(crate::ci::DEFAULT_SEED),
        )
    });
    let report = (args.html.html.is_some() || args.format == crate::report::TextFormat::Md)
        .then(|| routeval_views::trec::document(&ev, &run_name, &qrels_name, intervals.as_ref()));
    let stdin_used = crate::report::uses_stdin([args.qrels.as_path(), args.run.as_path()]);
    if let Some(doc) = &report {
        crate::report::write_html(&args.html, doc, stdin_used)?;
    }
    if args.json && !(report.is_some() && args.format == crate::report::TextFormat::Md) {
        // Streamed: with -q the per-query values of 100k queries are MBs of JSON.
        if args.query
            && let Some((a, b)) = trec::format::qid_key_collision(&ev)
        {
            return Err(Failure::bad_input(format!(
                "{run_name}: query ids '{}' and '{}' are one key in JSON (invalid UTF-8 is \
                 replaced by U+FFFD), so one query's values would hide the other's; the text \
                 output (without --json) prints them apart",
                a.escape_ascii(),
                b.escape_ascii()
            )));
        }
        let ci = intervals.as_ref().map(crate::ci::to_json);
        let mut view = trec::format::JsonView::new(&ev, args.query)
            .with_summary(!args.nosummary)
            .with_ties(args.ties);
        if let Some(ci) = &ci {
            view = view.with_member("ci", ci);
        }
        common::emit_with(args.output.as_ref(), &mut |w| {
            serde_json::to_writer(&mut *w, &view)?;
            w.write_all(b"\n")
        })?;
    } else {
        let out = stdout_bytes(&args, &ev, report.as_ref(), intervals.as_ref(), stdin_used)?;
        common::emit(args.output.as_ref(), &out)?;
    }
    let gated = args.gates.apply(&ev);
    // The process ends with this command: the kernel takes back the judgments (four
    // allocations per query, freed across threads), the results and the mapped run faster
    // than freeing and unmapping them one by one (≈ 2 % of a 100k-query run's CPU).
    std::mem::forget((qrels, run_bytes, ev));
    gated
}

/// trec_eval's options from the flags (`measures` parsed and checked already).
fn eval_options(args: &TrecArgs, measures: MeasureSet) -> EvalOptions {
    EvalOptions {
        measures,
        version: args.trec_eval,
        relevance_level: args.level,
        complete: args.complete,
        judged_only: args.judged_only,
        max_docs_per_topic: args
            .max_docs
            .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX)),
        num_docs_in_coll: args.num_docs,
        ties: args.ties,
        // --ci resamples queries and reports show distributions: they need the per-query
        // values (printed only with -q).
        per_query: args.query
            || args.ci.ci_level.is_some()
            || args.html.html.is_some()
            || args.format == crate::report::TextFormat::Md,
    }
}

/// The stderr note about judged queries without results (stdout stays trec_eval's; this is
/// the one thing trec_eval does not say).
fn judged_without_results_note(
    ev: &trec::Evaluation,
    complete: bool,
    qrels_name: &str,
    run_name: &str,
) {
    if ev.judged_without_results > 0 {
        let n = ev.judged_without_results;
        let what = if complete {
            format!(
                "with -c they score 0 and are averaged in (num_q = {})",
                ev.num_q
            )
        } else {
            format!(
                "they are left out of the averages (num_q = {}); -c scores them 0 instead",
                ev.num_q
            )
        };
        eprintln!(
            "note: {n} judged quer{} in {qrels_name} had no results in {run_name}: {what}",
            if n == 1 { "y" } else { "ies" }
        );
    }
}

/// What `trec` prints other than JSON (which is streamed): the Markdown report, or
/// trec_eval's text (with the tie ranges and the intervals).
fn stdout_bytes(
    args: &TrecArgs,
    ev: &trec::Evaluation,
    report: Option<&routeval_report::Document>,
    intervals: Option<&routeval_stats::Intervals>,
    stdin_used: bool,
) -> Result<Vec<u8>, Failure> {
    Ok(
        if let (Some(doc), crate::report::TextFormat::Md) = (report, args.format) {
            crate::report::markdown(doc, stdin_used).into_bytes()
        } else {
            let mut t = trec::format::render_text(ev, args.query, !args.nosummary);
            if args.ties && !args.nosummary {
                t.extend_from_slice(&trec::format::render_ties_text(ev));
            }
            if let Some(iv) = intervals {
                t.extend_from_slice(crate::ci::render_text(iv, |x| format!("{x:.4}")).as_bytes());
            }
            t
        },
    )
}

/// `--ties`' stderr notes: the measures given no range, and (text output) that no tie changes
/// any value when no line follows trec_eval's.
fn tie_notes(ev: &trec::Evaluation, run_name: &str, quiet_about_none: bool) {
    let unsupported = trec::format::tie_unsupported(ev);
    if !unsupported.is_empty() {
        eprintln!(
            "note: --ties: no exact range for {} (not reported)",
            unsupported.join(", ")
        );
    }
    if let Some(t) = &ev.ties
        && t.queries_affected == 0
        && !quiet_about_none
    {
        eprintln!("note: --ties: no tie in {run_name} changes any reported measure");
    }
}

/// The `--ties` object of `ev` (summary only), for `compare --ties`.
pub(crate) fn ties_json(ev: &trec::Evaluation) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(trec::format::TiesView::new(ev, false))
        .map_err(|e| Failure::bad_input(format!("cannot encode JSON: {e}")))
}

/// `-M NUM`: 0 to 10^12 documents per query. `-M 0` evaluates no document of any query, as
/// trec_eval 10.0 does (every query keeps its place, with `num_ret` 0 and every measure 0);
/// negative values are refused.
fn max_docs_value(s: &str) -> Result<u64, String> {
    int_in_docs(s).map(|v| v as u64)
}

fn int_in_docs(s: &str) -> Result<i64, String> {
    crate::numarg::int_in(s, 0, 1_000_000_000_000, "the number of documents")
}
