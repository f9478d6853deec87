//! The bad-input corpus (issue 10, acceptance): `tests/bad_inputs/<subcommand>/cases.tsv`
//! lists, per bad input, the expected exit status, a text the one stderr line must contain
//! (usually `FILE:LINE`) and the command line. Every input must give clear behaviour: the
//! documented exit status, exactly one stderr line naming the file (and line) and the
//! problem, and no stdout at all. The corpus is written by `bad_inputs/make_corpus.py`.

use std::path::Path;
use std::process::Command;

fn check_subcommand(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/bad_inputs")
        .join(name);
    let table = std::fs::read_to_string(dir.join("cases.tsv")).expect("cases.tsv");
    let mut failures = Vec::new();
    let mut n = 0;
    for row in table.lines().filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = row.split('\t').collect();
        let (file, exit, needle, args) = (cols[0], cols[1], cols[2], &cols[3..]);
        assert!(dir.join(file).exists(), "{name}/{file} missing");
        let exit: i32 = exit.parse().expect("exit status");
        n += 1;
        let out = Command::new(env!("CARGO_BIN_EXE_routeval"))
            .current_dir(&dir)
            .args(args)
            .env_remove("ROUTEVAL_TOKENIZERS")
            .output()
            .expect("run routeval");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut problems = Vec::new();
        if out.status.code() != Some(exit) {
            problems.push(format!("exit {:?} (want {exit})", out.status.code()));
        }
        if !out.stdout.is_empty() {
            problems.push(format!("{} bytes on stdout", out.stdout.len()));
        }
        if lines.len() != 1 {
            problems.push(format!("{} stderr lines", lines.len()));
        }
        if !err.contains(needle) {
            problems.push(format!("stderr lacks {needle:?}"));
        }
        if err.contains("panicked") {
            problems.push("panic".into());
        }
        if !problems.is_empty() {
            failures.push(format!("{name}/{file}: {}: {err:?}", problems.join(", ")));
        }
    }
    assert!(n >= 25, "{name}: only {n} bad inputs");
    assert!(
        failures.is_empty(),
        "{} of {n} bad inputs unclear:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn trec_bad_inputs() {
    check_subcommand("trec");
}

#[test]
fn rag_bad_inputs() {
    check_subcommand("rag");
}

#[test]
fn filter_bad_inputs() {
    check_subcommand("filter");
}

#[test]
fn route_bad_inputs() {
    check_subcommand("route");
}

#[test]
fn crb_bad_inputs() {
    check_subcommand("crb");
}

#[test]
fn gqr_bad_inputs() {
    check_subcommand("gqr");
}
