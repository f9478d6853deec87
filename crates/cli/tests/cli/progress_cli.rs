//! Progress bars (issue 13 §5): drawn on stderr only on a terminal. `ROUTEVAL_PROGRESS=always`
//! draws them on a pipe as if it were a terminal; these tests use it to check that each
//! subcommand's bar draws (its stage names and the terminal's line-clearing escape appear on
//! stderr) while stdout stays byte-for-byte what it is without a bar, and that a plain run
//! (stderr a pipe, as under `cargo test`) writes no bar at all.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run routeval in the repository root; `forced` sets `ROUTEVAL_PROGRESS=always`, else the
/// variable is removed (stderr is a pipe: no bar).
fn routeval(args: &[&str], forced: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_routeval"));
    cmd.args(args).current_dir(root());
    if forced {
        cmd.env("ROUTEVAL_PROGRESS", "always");
    } else {
        cmd.env_remove("ROUTEVAL_PROGRESS");
    }
    cmd.output().unwrap()
}

/// The escape sequence indicatif's terminal clears a line with (`\r` + erase line).
const CLEAR_LINE: &str = "\r\x1b[2K";

/// Run `args` with and without a forced bar: both exit as `status`, stdout is identical, the
/// forced stderr shows every one of `stages` and clears its lines, and the plain stderr has
/// no escape sequence and none of `stages`. Returns the forced stderr.
fn check(args: &[&str], status: i32, stages: &[&str]) -> String {
    let plain = routeval(args, false);
    let forced = routeval(args, true);
    let (perr, ferr) = (
        String::from_utf8_lossy(&plain.stderr).into_owned(),
        String::from_utf8_lossy(&forced.stderr).into_owned(),
    );
    assert_eq!(plain.status.code(), Some(status), "{args:?}: {perr}");
    assert_eq!(forced.status.code(), Some(status), "{args:?}: {ferr}");
    assert!(!plain.stdout.is_empty(), "{args:?}: no output");
    assert_eq!(
        plain.stdout, forced.stdout,
        "{args:?}: stdout changed with a bar"
    );
    for s in stages {
        assert!(
            ferr.contains(s),
            "{args:?}: no {s:?} bar on stderr: {ferr:?}"
        );
        assert!(
            !perr.contains(s),
            "{args:?}: a bar without a terminal: {perr:?}"
        );
    }
    assert!(
        ferr.contains(CLEAR_LINE),
        "{args:?}: bar never drawn: {ferr:?}"
    );
    assert!(
        !perr.contains('\x1b'),
        "{args:?}: escapes without a terminal: {perr:?}"
    );
    // The run's own stderr lines survive the bar (printed above it, not overwritten).
    for line in perr.lines() {
        assert!(
            ferr.contains(line),
            "{args:?}: lost stderr line {line:?}: {ferr:?}"
        );
    }
    ferr
}

#[test]
fn trec_draws_parsing_and_evaluation_stages() {
    let qrels = "examples/data/trec/qrels.txt";
    let run = "examples/data/trec/run.txt";
    check(
        &["trec", qrels, run],
        0,
        &["parsing examples/data/trec/run.txt", "evaluating queries"],
    );
    check(
        &["trec", "-q", "--json", qrels, run],
        0,
        &["evaluating queries"],
    );
}

#[test]
fn compare_draws_one_evaluation_per_run() {
    let d = "examples/data/compare";
    let err = check(
        &[
            "compare",
            &format!("{d}/qrels"),
            &format!("{d}/base.run"),
            &format!("{d}/better.run"),
        ],
        0,
        &[
            "parsing examples/data/compare/base.run",
            "parsing examples/data/compare/better.run",
        ],
    );
    assert!(err.matches("evaluating queries").count() >= 2, "{err:?}");
}

#[test]
fn route_and_filter_count_bytes() {
    let data = "examples/data/dsl/outputs.jsonl";
    check(
        &[
            "route",
            "--config",
            "examples/data/dsl/routes.json",
            "--data",
            data,
        ],
        0,
        &["reading examples/data/dsl/outputs.jsonl"],
    );
    let err = check(
        &["filter", data, "--where", r#"{"extra_info.task": "qa"}"#],
        0,
        &["filtering examples/data/dsl/outputs.jsonl"],
    );
    // A bytes bar: its total is the file's size.
    let size = std::fs::metadata(root().join(data)).unwrap().len();
    let kib = format!("/{:.2} KiB", size as f64 / 1024.0);
    assert!(err.contains(&kib), "{kib} not on stderr: {err:?}");
}

#[test]
fn rag_counts_cases() {
    check(
        &["rag", "examples/data/rag/cases.json"],
        0,
        &["scoring cases of examples/data/rag/cases.json"],
    );
}

#[test]
fn crb_command_predictor_counts_rows_and_errors_live() {
    // Every other row is a predictor error: the bar's status counts them as they come.
    let err = check(
        &[
            "crb",
            "eval",
            "--bank",
            "examples/data/crb/bank.jsonl",
            "--predictor",
            "cmd:n=0; while read -r l; do n=$((n+1)); if [ $((n % 2)) = 0 ]; then echo 'error: down'; else echo low; fi; done",
        ],
        0,
        &["cmd:n=0"],
    );
    assert!(err.contains("1 predictor errors"), "{err:?}");
}

#[test]
fn never_hides_bars_even_when_forced_elsewhere() {
    let out = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args([
            "trec",
            "examples/data/trec/qrels.txt",
            "examples/data/trec/run.txt",
        ])
        .current_dir(root())
        .env("ROUTEVAL_PROGRESS", "never")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains('\x1b'));
}
