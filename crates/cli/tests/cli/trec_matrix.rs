//! `routeval trec` against trec_eval 10.0 itself across its option matrix: every
//! `tests/fixtures/trec_matrix/cases/*/` holds a random collection, the exact trec_eval command
//! line (`cmd`) and trec_eval's stdout (`expected`), made by `tests/fixtures/trec_matrix/gen.py`
//! (see its README). routeval must print the same bytes.
//!
//! Count guard: the folder is ours and fixed (33 cases from `gen.py`'s MATRIX), so exact.

use routeval_test_support::golden::{Count, assert_count, subdirs};
use std::path::PathBuf;
use std::process::Command;

#[test]
fn trec_eval_option_matrix_byte_for_byte() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trec_matrix/cases");
    let dirs = subdirs(&root);
    let mut failures = Vec::new();
    let mut options_seen = std::collections::BTreeSet::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let cmd =
            std::fs::read_to_string(dir.join("cmd")).unwrap_or_else(|e| panic!("{name}/cmd: {e}"));
        let words: Vec<&str> = cmd.split_whitespace().collect();
        assert!(
            words.len() >= 3
                && words[0] == "trec_eval"
                && words[words.len() - 2..] == ["qrels", "run"],
            "{name}/cmd: expected `trec_eval OPTIONS qrels run`, got {cmd:?}"
        );
        let opts = &words[1..words.len() - 2];
        options_seen.extend(
            opts.iter()
                .filter(|w| w.starts_with('-'))
                .map(|w| w.to_string()),
        );
        let expected =
            std::fs::read(dir.join("expected")).unwrap_or_else(|e| panic!("{name}/expected: {e}"));
        assert!(!expected.is_empty(), "{name}/expected is empty");
        let out = Command::new(env!("CARGO_BIN_EXE_routeval"))
            .current_dir(dir)
            .arg("trec")
            .args(opts)
            .args(["qrels", "run"])
            .output()
            .expect("run routeval");
        if !out.status.success() {
            failures.push(format!(
                "{name} ({cmd:?}): exit {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        if out.stdout != expected {
            let got = String::from_utf8_lossy(&out.stdout);
            let want = String::from_utf8_lossy(&expected);
            let first = got
                .lines()
                .zip(want.lines())
                .find(|(a, b)| a != b)
                .map(|(a, b)| {
                    format!("first differing line:\n  routeval:  {a:?}\n  trec_eval: {b:?}")
                })
                .unwrap_or_else(|| {
                    format!(
                        "line counts differ: routeval {}, trec_eval {}",
                        got.lines().count(),
                        want.lines().count()
                    )
                });
            failures.push(format!("{name} ({}): {first}", cmd.trim()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} trec_eval matrix case(s) differ:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
    assert_count("trec_eval matrix cases", dirs.len(), Count::Exact(33));
    for opt in ["-q", "-c", "-J", "-M", "-l", "-n", "-N", "-m"] {
        assert!(options_seen.contains(opt), "no matrix case uses {opt}");
    }
}
