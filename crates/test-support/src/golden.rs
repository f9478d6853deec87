//! Reading golden files and globbing golden folders, with count guards.
//!
//! Every data-driven test states how many cases it read, so a deleted, emptied or renamed
//! golden file fails instead of passing with nothing checked:
//! * [`Count::Exact`] for a folder or list that is fixed (its generator is done and no case of
//!   it is held back);
//! * [`Count::AtLeast`] for a folder the acceptance run may extend with held-back cases (the
//!   golden READMEs say which): at least the visible number, plus, where a folder mixes kinds,
//!   at least one case of every kind.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// How many cases a data-driven test must have read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Exactly this many (a fixed folder or list).
    Exact(usize),
    /// At least this many (a folder that held-back goldens may extend).
    AtLeast(usize),
}

/// Panic unless `got` cases of `what` satisfy `want`.
#[track_caller]
pub fn assert_count(what: &str, got: usize, want: Count) {
    match want {
        Count::Exact(n) => assert_eq!(
            got, n,
            "count guard: {what}: read {got} case(s), expected exactly {n} (a golden file was deleted, emptied or added?)"
        ),
        Count::AtLeast(n) => assert!(
            got >= n,
            "count guard: {what}: read {got} case(s), expected at least {n} (a golden file was deleted or emptied?)"
        ),
    }
}

/// Read and parse a JSON file (panics naming the path when missing or invalid).
#[track_caller]
pub fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("missing {}: {e}", path.display()));
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{}: invalid JSON: {e}", path.display()))
}

/// The files directly in `dir` whose name ends with `suffix`, sorted (panics when `dir` is
/// missing).
#[track_caller]
pub fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("missing {}: {e}", dir.display()))
        .map(|e| e.expect("read_dir entry").path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(suffix))
        })
        .collect();
    out.sort();
    out
}

/// The subdirectories of `dir`, sorted (panics when `dir` is missing).
#[track_caller]
pub fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("missing {}: {e}", dir.display()))
        .map(|e| e.expect("read_dir entry").path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// The array at `key` of a golden document, panicking with the file's name when it is not
/// one (so a renamed key is not read as "no cases").
#[track_caller]
pub fn array<'a>(doc: &'a Value, key: &str, file: &str) -> &'a [Value] {
    doc.get(key)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{file}: no array {key:?}"))
}

/// Whether routeval's error message `got` names the Python reference's exception `expected`
/// (a golden `{"type", "message"}`, e.g. CommonRouterBench's `expected_error*.json`).
/// routeval's messages add `FILE:LINE` and context, so the reference's message must appear in
/// it, spelled for its type:
/// * `KeyError`: `KeyError: <message>` (routeval names the exception it replaces);
/// * `JSONDecodeError`: "invalid JSON" at the same line and column (serde_json counts the
///   column of the last character read, one less than Python's when it stops early);
/// * anything else: the message's first line verbatim.
pub fn names_reference_error(expected: &Value, got: &str) -> bool {
    let ty = expected["type"].as_str().expect("expected_error.type");
    let msg = expected["message"]
        .as_str()
        .expect("expected_error.message");
    match ty {
        "KeyError" => got.contains(&format!("KeyError: {msg}")),
        "JSONDecodeError" => {
            // Python: "Expecting value: line L column C (char N)", C the offending character;
            // serde_json: "... at line L column S", S the last character it read (C or C-1).
            let col = |text: &str| -> Option<(u64, u64)> {
                let (_, rest) = text.rsplit_once("line ")?;
                let (line, rest) = rest.split_once(" column ")?;
                let col: String = rest.chars().take_while(char::is_ascii_digit).collect();
                Some((line.parse().ok()?, col.parse().ok()?))
            };
            let (pl, pc) = col(msg).expect("JSONDecodeError position");
            got.contains("invalid JSON")
                && col(got).is_some_and(|(gl, gc)| gl == pl && (gc == pc || gc + 1 == pc))
        }
        _ => got.contains(msg.lines().next().unwrap_or(msg)),
    }
}

/// Cases read per kind (usually per golden file name), for folders that held-back goldens may
/// extend: [`Tally::assert_at_least`] checks every kind against its visible count.
#[derive(Debug, Default, Clone)]
pub struct Tally(std::collections::BTreeMap<String, usize>);

impl Tally {
    /// An empty tally.
    pub fn new() -> Self {
        Self::default()
    }

    /// Record `n` cases of `kind`.
    pub fn add(&mut self, kind: &str, n: usize) {
        *self.0.entry(kind.to_string()).or_default() += n;
    }

    /// Cases of `kind` so far.
    pub fn get(&self, kind: &str) -> usize {
        self.0.get(kind).copied().unwrap_or(0)
    }

    /// Panic unless every kind of `want` was read at least its count (and at least once), and
    /// no other kind was read (a new kind needs its own count here).
    #[track_caller]
    pub fn assert_at_least(&self, what: &str, want: &[(&str, usize)]) {
        for (kind, n) in want {
            assert_count(
                &format!("{what}: {kind}"),
                self.get(kind),
                Count::AtLeast((*n).max(1)),
            );
        }
        for kind in self.0.keys() {
            assert!(
                want.iter().any(|(k, _)| k == kind),
                "count guard: {what}: kind {kind:?} has no expected count"
            );
        }
    }
}
