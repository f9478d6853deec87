//! Helpers shared by the data-driven tests.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The golden files of `$ROUTEVAL_SHARED/golden/query-dsl/` whose name ends with `suffix` and
/// passes `keep`, searched recursively (so a `holdout/` folder is picked up), or `None` after
/// printing a skip notice when `ROUTEVAL_SHARED` is unset (a failure under `CI=true`).
pub(crate) fn golden_files(suffix: &str, keep: impl Fn(&str) -> bool) -> Option<Vec<PathBuf>> {
    let dir =
        routeval_core::fixtures::shared_dir("golden query-dsl tests")?.join("golden/query-dsl");
    assert!(dir.is_dir(), "missing golden folder {}", dir.display());
    let mut out = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = entry.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(name) = p.file_name().and_then(|n| n.to_str())
                && name.ends_with(suffix)
                && keep(name)
            {
                out.push(p);
            }
        }
    }
    out.sort();
    assert!(!out.is_empty(), "no *{suffix} files in golden/query-dsl");
    Some(out)
}

/// The JSON records of a JSONL file, split on `\n` only (the corpus escapes U+2028/U+2029),
/// with their 1-based line numbers.
pub(crate) fn read_lines(path: &Path) -> Vec<(usize, Value)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split('\n')
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1));
            (i + 1, v)
        })
        .collect()
}
